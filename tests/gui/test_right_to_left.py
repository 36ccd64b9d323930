"""A person who writes right to left (Arabic, Hebrew, Persian): their words, and the agent's
replies and files in their language, are laid out as they read them, among Tripane's English."""

from __future__ import annotations

from core.store import SessionRow
from gui.markdown import to_html
from gui.qt import Qt, QTextCursor, QTextDocument, QTextLayout, QTextOption
from gui.widgets.chat_items import MessageItem
from gui.widgets.file_pane import PaneEditor
from gui.widgets.hinted_text import HintedText
from gui.widgets.session_list import row_text

REPLY = """قرأت الملف `invoices.csv`. فيه **ثلاثة** عملاء:

- شركة النور: المجموع 450.25
- مؤسسة الأمل: المجموع 800.50
- Acme Ltd: لا فواتير هذا الشهر

`sum.py` يجمع المبالغ.

```python
# تعليق بالعربية
totals = {}
```
"""


class Blocks:
    """The blocks of rendered HTML, laid out 800 px wide; `shown[start]`: the one whose text
    begins with `start`."""

    def __init__(self, html: str):
        self.document = QTextDocument()
        self.document.setHtml(html)
        self.document.setTextWidth(800)

    def __getitem__(self, start: str):
        block = self.document.begin()
        while block.isValid():
            if block.text().startswith(start):
                self.document.documentLayout().blockBoundingRect(block)  # (lays it out)
                return block
            block = block.next()
        raise KeyError(start)


def x_of(block, text: str, word: str) -> float:
    """Where the middle of `word` is drawn, from the block's left."""
    return block.layout().lineAt(0).cursorToX(text.index(word) + len(word) // 2)[0]


def test_an_arabic_reply_s_list_keeps_its_items_on_one_side_and_its_code_left_to_right(qtbot):
    item = MessageItem("assistant", REPLY)
    qtbot.addWidget(item)
    shown = Blocks(item.body.text())
    rtl, ltr = Qt.LayoutDirection.RightToLeft, Qt.LayoutDirection.LeftToRight
    # Qt takes a block's direction from its first letter: the item that begins with a company's
    # Latin name, and the sentence that begins with a file's, were laid out left to right.
    assert shown["Acme Ltd: لا "].textDirection() == rtl
    assert shown["شركة النور: ا"].textDirection() == rtl
    assert shown["sum.py يجمع "].textDirection() == rtl
    assert shown["قرأت الملف in"].textDirection() == rtl
    assert shown["# تعليق بالعر"].textDirection() == ltr  # (code, whatever its comment is written in)


def test_text_with_no_right_to_left_letter_is_rendered_as_it_was():
    for text in ("Read `sum.py`: it adds the totals.\n\n- Acme Ltd: none\n- Task: more", "读取 `sum.py`。\n\n- 任务：汇总"):
        html = to_html(text)
        assert "dir=" not in html and "\u2068" not in html


def test_a_line_that_names_a_value_written_the_other_way_shows_the_value_whole():
    # The files' own lines ("Task: …", "- Progress: …"): the file name ending the Arabic sentence
    # showed at its start, on the right, reordered with the English label.
    text = "Task: اجمع الفواتير في ملف invoices.csv"
    shown = Blocks(to_html(text))  # (held: its blocks are the document's)
    block = shown["Task: "]
    said = block.text()
    assert block.textDirection() == Qt.LayoutDirection.LeftToRight
    assert x_of(block, said, "Task") < x_of(block, said, "invoices") < x_of(block, said, "اجمع")
    # A label written right to left, its value in English: the same, the other way.
    shown = Blocks(to_html("الهدف: Build the `sum.py` tool"))
    block = shown["الهدف"]
    assert block.textDirection() == Qt.LayoutDirection.RightToLeft
    assert x_of(block, block.text(), "Build") < x_of(block, block.text(), "tool") < x_of(block, block.text(), "الهدف")


def test_a_session_s_row_reads_left_to_right_around_an_arabic_title():
    row = SessionRow(id="20261130-010742-7d3a", title="اجمع الفواتير في ملف invoices.csv", task="", model="m",
                     workdir="/home/sara/work", status="waiting", created="2026-11-30T01:07:42",
                     updated="2026-11-30T01:07:42")
    # Laid out as the list draws a row: its lines one paragraph, in the window's direction.
    text = row_text(row).replace("\n", "\u2028")
    layout = QTextLayout(text)
    option = QTextOption()
    option.setTextDirection(Qt.LayoutDirection.LeftToRight)
    layout.setTextOption(option)
    layout.beginLayout()
    while (line := layout.createLine()).isValid():
        line.setLineWidth(2000)
    layout.endLayout()

    def x(word: str) -> float:
        at = text.index(word) + len(word) // 2
        return next(layout.lineAt(i).cursorToX(at)[0] for i in range(layout.lineCount())
                    if layout.lineAt(i).textStart() <= at < layout.lineAt(i).textStart() + layout.lineAt(i).textLength())

    # Its second line in Tripane's order: when, then how it stands, then the folder. The Arabic
    # letters before the date made its numbers Arabic ones (Unicode's rule W2): it read
    # "01:07 30-11-2026".
    assert x("2026") < x("11-30") < x("01:07") < x("waiting") < x("work")
    assert x("invoices") < x("اجمع")  # and the title read right to left


def test_a_message_typed_in_arabic_is_set_on_the_right_and_english_on_the_left(qtbot):
    for box in (HintedText(), PaneEditor()):
        qtbot.addWidget(box)
        box.resize(400, 120)
        box.show()
        box.setPlainText("مرحبا")
        # Where the text begins: its right end when it is set on the right (Qt's plain-text
        # layout set it on the left, a short line's start near the middle of the left half).
        assert box.cursorRect(QTextCursor(box.document())).x() > 300
        box.setPlainText("Hello")
        assert box.cursorRect(QTextCursor(box.document())).x() < 100


def test_what_is_copied_leaves_out_the_isolates_that_lay_the_words_out(qtbot):
    # Invisible, they came along into a terminal, a file name or code the text was pasted into.
    from gui.qt import QApplication
    from gui.widgets.file_pane import FilePane
    from gui.widgets.wrapped_label import WrappedLabel

    written = "Task: اجمع الفواتير في ملف invoices.csv"
    html = to_html(written)
    assert "\u2068" in html
    label = WrappedLabel(html)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    qtbot.addWidget(label)
    label.show()
    label.setSelection(0, len(written) + 2)  # (the isolates count as characters)
    assert "\u2068" in label.selectedText()
    qtbot.keyClick(label, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.clipboard().text() == written

    QApplication.clipboard().clear()
    pane = FilePane("findings.md", "Findings", keeper=None)
    qtbot.addWidget(pane)
    pane.viewer.setHtml(html)
    pane.viewer.selectAll()
    pane.viewer.copy()
    assert QApplication.clipboard().text().rstrip() == written  # (the paragraph's end is a space)


def test_a_tool_s_output_in_arabic_reads_left_to_right_as_a_terminal_shows_it(qtbot):
    from core.events import AssistantMessage, Record, ToolCall, ToolResult
    from gui.widgets.chat import ChatView

    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show_records([Record("s", 1, "", AssistantMessage("", (ToolCall("c1", "file_read", '{"path": "a.csv"}'),))),
                       Record("s", 2, "", ToolResult("c1", "file_read", True, "العميل,المبلغ\nشركة النور,150.25\n"))])
    qtbot.waitUntil(lambda: not chat.building(), timeout=5000)
    card = chat.cards["c1"]
    card.header.setChecked(True)
    shown = Blocks(card.details.text())
    assert shown["العميل,المبلغ"].textDirection() == Qt.LayoutDirection.LeftToRight
    assert shown["شركة النور,150.25"].textDirection() == Qt.LayoutDirection.LeftToRight


def test_the_agent_s_question_and_the_answer_keep_their_order_in_tripane_s_lines(qtbot):
    # "? Question for you (the agent asks): هل أحفظ النتيجة في totals.csv؟": the file name that ends
    # the Arabic question showed at its start, reordered with the English around it.
    from core.events import HumanAnswer, HumanQuestion, Record
    from gui.qt import QLabel
    from gui.widgets.chat import ChatView

    question = "هل أحفظ النتيجة في totals.csv؟"
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show_records([Record("s", 1, "", HumanQuestion("q1", "ask_user", question, ("نعم", "لا"))),
                       Record("s", 2, "", HumanAnswer("q1", "نعم", text="واحفظ نسخة في backup.csv"))])
    qtbot.waitUntil(lambda: not chat.building(), timeout=5000)
    lines = [item for item in chat.items() if isinstance(item, QLabel)]
    asked, answered = (Blocks(label.text()) for label in lines[:2])
    block = asked["? Question for you"]
    said = block.text()
    assert x_of(block, said, "Question") < x_of(block, said, "totals") < x_of(block, said, "أحفظ")
    block = answered["↳ You answered"]
    said = block.text()
    assert x_of(block, said, "answered") < x_of(block, said, "backup") < x_of(block, said, "واحفظ")
