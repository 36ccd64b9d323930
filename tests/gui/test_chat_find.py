"""Find in the conversation: messages, folded tool results and thinking, and records not shown yet."""

from __future__ import annotations

from core.events import AssistantMessage, Record, ToolCall, ToolResult, UserMessage
from gui.qt import QPoint, Qt, QTextBrowser
from gui.widgets.chat import ChatView
from gui.widgets.chat_find import ConversationFinder
from gui.widgets.chat_items import MessageItem
from gui.widgets.find_bar import FindBar, TextViewFinder
from gui.widgets.tool_card import ToolCard

WAIT = 5000


def session_records(turns: int, failing: int = 0, thinking: int = 0) -> list[Record]:
    """Each turn: the agent's message, a test run and its output; turn `failing`'s run failed with
    an ImportError, turn `thinking`'s message came with thinking."""
    records: list = [UserMessage("Make the tests pass")]
    for turn in range(1, turns + 1):
        failed = turn == failing
        output = (f"run {turn}\n" + "collected 4 items\n" * 3
                  + ("E   ImportError: cannot import name 'zed' from 'lib'\n" if failed else "4 passed\n"))
        records += [AssistantMessage(f"Step {turn}: running the tests.", (ToolCall(f"c{turn}", "shell_run", '{"command": "pytest"}'),),
                                     turn=turn, reasoning="The lighthouse keeper's idea: test first." if turn == thinking else ""),
                    ToolResult(f"c{turn}", "shell_run", not failed, output)]
    return [Record("s", seq, "", event) for seq, event in enumerate(records, 1)]


def chat_with(qtbot, records: list[Record]) -> tuple[ChatView, FindBar]:
    chat = ChatView()
    bar = FindBar("the conversation", finder := ConversationFinder(chat))
    finder.report = bar.show_found
    qtbot.addWidget(chat)
    qtbot.addWidget(bar)
    chat.resize(700, 500)
    chat.show()
    chat.show_records(records)
    qtbot.waitUntil(lambda: not chat.building(), timeout=WAIT)
    bar.show()
    return chat, bar


def in_view(chat: ChatView, label) -> bool:
    top = label.mapTo(chat.widget(), QPoint(0, 0)).y()
    shown = chat.verticalScrollBar().value()
    return top < shown + chat.viewport().height() and top + label.height() > shown


def selected(chat: ChatView) -> list[tuple[str, object]]:
    """The selected text in each label that has one, with the item that holds the label."""
    found = []
    for item in chat.items():
        labels = ([item.details] if isinstance(item, ToolCard) else
                  [*filter(None, (item.reasoning_body,)), *item.settled, item.body] if isinstance(item, MessageItem) else [item])
        found += [(label.selectedText(), item) for label in labels if label.hasSelectedText()]
    return found


def test_enter_goes_from_match_to_match_across_messages_and_folded_results_and_wraps(qtbot):
    chat, bar = chat_with(qtbot, session_records(6, failing=4))
    qtbot.keyClicks(bar, "importerror")  # as typed, any case
    [(text, card)] = selected(chat)
    assert text == "ImportError" and isinstance(card, ToolCard) and card.call.id == "c4"
    assert card.details.isVisible() and bar.property("found") == "yes"  # its folded result unfolded to show it
    qtbot.waitUntil(lambda: in_view(chat, card.details))

    bar.setText("Step ")
    qtbot.keyClick(bar, Qt.Key.Key_Return)
    steps = []
    for _ in range(7):  # six steps, then around to the first again
        [(text, message)] = selected(chat)
        steps.append(message.text.split()[1].rstrip(":"))
        qtbot.keyClick(bar, Qt.Key.Key_Return)
    assert all(int(b) == int(a) % 6 + 1 for a, b in zip(steps, steps[1:])), steps  # down, and around
    [(_, now)] = selected(chat)
    qtbot.keyClick(bar, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClick(bar, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    [(_, back)] = selected(chat)
    order = [item for item in chat.items() if isinstance(item, MessageItem) and item.text.startswith("Step")]
    assert order.index(back) == (order.index(now) - 2) % len(order)  # Shift+Enter goes back, around the start

    assert not bar.missing.isVisible()
    bar.setText("nowhere in this session")
    assert bar.property("found") == "no"
    assert [item for _, item in selected(chat)] == [back]  # what was found stays selected, the view put
    # Said in words at the bar's end, not only by its colour, and typed text does not run under it.
    assert bar.missing.isVisible() and bar.missing.text() == "Not found"
    assert bar.missing.geometry().right() < bar.width() and bar.textMargins().right() >= bar.missing.width()
    bar.setText("Step 2")
    assert not bar.missing.isVisible() and bar.textMargins().right() == 0


def test_a_match_in_folded_thinking_unfolds_it(qtbot):
    chat, bar = chat_with(qtbot, session_records(3, thinking=2))
    message = next(item for item in chat.items() if isinstance(item, MessageItem) and item.reasoning)
    assert not message.reasoning_body.isVisible()
    bar.setText("lighthouse")
    assert message.reasoning_header.isChecked() and message.reasoning_body.isVisible()
    assert selected(chat) == [("lighthouse", message)]


def test_a_text_only_in_records_not_shown_yet_has_them_put_in_and_is_found(qtbot):
    records = session_records(200, failing=3)  # the ImportError is in the 7th of 401 records
    chat, bar = chat_with(qtbot, records)
    assert "c3" not in chat.cards and chat.unshown_count() > 0
    bar.setText("cannot import name")
    qtbot.waitUntil(lambda: bar.property("found") == "yes", timeout=WAIT)
    [(text, card)] = selected(chat)
    assert text == "cannot import name" and card is chat.cards["c3"] and card.header.isChecked()
    # (a card put in is shown once the event loop runs: Qt's layouts show a new child queued)
    qtbot.waitUntil(lambda: card.details.isVisible() and in_view(chat, card.details), timeout=WAIT)
    assert "Step 200" in chat.items()[-2].text  # the end stays as it was

    bar.setText("not in any record")
    assert bar.property("found") == "no"


def test_what_no_item_shows_puts_no_older_records_in(qtbot):
    chat, bar = chat_with(qtbot, session_records(200))
    before = chat.unshown_count()
    bar.setText("c12")  # a call's id, in the log only
    assert bar.property("found") == "no" and chat.unshown_count() == before and not chat.building()


def test_a_text_further_back_than_the_view_keeps_is_said_to_be_in_the_progress_pane(qtbot):
    chat, bar = chat_with(qtbot, session_records(400, failing=3))  # 801 records; the view keeps 600 items
    bar.setText("cannot import name")
    qtbot.waitUntil(lambda: bar.property("found") == "no", timeout=WAIT)
    assert "Progress pane" in bar.toolTip() and selected(chat) == []
    bar.setText("Step 399")
    assert bar.property("found") == "yes" and bar.toolTip() == ""


def test_text_is_found_across_the_markup_it_is_shown_with(qtbot):
    records = [Record("s", 1, "", AssistantMessage("Keep `a < b &amp; c` and take the **next** step."))]
    chat, bar = chat_with(qtbot, records)
    for text in ("a < b &amp; c", "TAKE THE NEXT STEP"):  # in code, escaped in the HTML; across bold; any case
        bar.setText(text)
        assert bar.property("found") == "yes"
        assert [found.lower() for found, _ in selected(chat)] == [text.lower()]
    bar.setText("take the  next")  # two spaces: the message shows one
    assert bar.property("found") == "no"



def test_what_a_search_finds_is_told_in_words_the_line_of_the_match_or_not_found(qtbot):
    """For a screen reader: the bar shows a match only by its colour, and the focus stays in it."""
    chat, bar = chat_with(qtbot, session_records(3, failing=2))
    told: list[str] = []
    bar.told.connect(told.append)
    qtbot.keyClicks(bar, "importerror")
    assert told[-1] == "E ImportError: cannot import name 'zed' from 'lib'"  # (its spaces one)
    qtbot.keyClick(bar, Qt.Key.Key_Return)  # the only match, again (around the end)
    assert told[-1] == "E ImportError: cannot import name 'zed' from 'lib'"  # (its spaces one)
    bar.clear()
    qtbot.keyClicks(bar, "step 3")
    assert told[-1] == "Step 3: running the tests."
    qtbot.keyClicks(bar, "x")
    assert told[-1] == "Not found"


def test_a_pane_search_tells_the_line_of_its_match(qtbot):
    view = QTextBrowser()
    view.setPlainText("# Plan\n- [x] read the code\n- [ ] fix the totals\n")
    bar = FindBar("the plan", TextViewFinder(lambda: view))
    qtbot.addWidget(view)
    qtbot.addWidget(bar)
    told: list[str] = []
    bar.told.connect(told.append)
    qtbot.keyClicks(bar, "totals")
    assert told[-1] == "- [ ] fix the totals"


def test_a_word_is_found_whatever_marks_it_is_written_with(qtbot):
    # The agent wrote the shadda the person does not type, and the accents: matched letter for
    # letter, their own word was not found, in the conversation nor in a pane.
    reply = "قرّب المبالغ إلى سنتين. Le café est prêt. ראשון: שָׁלוֹם"
    message = AssistantMessage(reply)
    chat, bar = chat_with(qtbot, [Record("s", 1, "", UserMessage("قرب المبالغ")), Record("s", 2, "", message)])
    for typed, shown in (("المبالغ إلى", "المبالغ إلى"), ("cafe est pret", "café est prêt"), ("שלום", "שָׁלוֹם")):
        bar.setText(typed)
        assert bar.property("found") == "yes"
        assert [text for text, _ in selected(chat)] == [shown]  # the text as written, its marks selected with it
    bar.setText("قرب")
    assert [text for text, _ in selected(chat)] == ["قرب"]  # the person's own, first from the top
    qtbot.keyClick(bar, Qt.Key.Key_Return)
    assert [text for text, _ in selected(chat)] == ["قرّب"]

    view = QTextBrowser()
    view.setPlainText("# خطة المهمة\n- [x] قرّب المبالغ\n- [ ] Café\n")
    pane = FindBar("the plan", TextViewFinder(lambda: view))
    qtbot.addWidget(view)
    qtbot.addWidget(pane)
    for typed, shown in (("قرب", "قرّب"), ("CAFE", "Café")):
        pane.setText(typed)
        assert pane.property("found") == "yes" and view.textCursor().selectedText() == shown
