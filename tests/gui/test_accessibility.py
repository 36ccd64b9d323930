"""Every control a person can tab to has a name a screen reader can say (Narrator, VoiceOver, Orca)."""

from __future__ import annotations

import re
import time

from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QTabBar

from core.events import ToolCall, ToolResult
from core.memory.working import FINDINGS, PLAN, PROGRESS
from core.scripted import ScriptedModel, call, reply
from core.session import SessionConfig
from core.store import SessionRow
from gui.dialogs.conflict import ConflictDialog
from gui.dialogs.forms import lay_out_browser
from gui.dialogs.pins import PinDialog
from gui.dialogs.reflection import ReflectionDialog
from gui.qt import (
    QAccessible,
    QApplication,
    QDialog,
    QLabel,
    QLineEdit,
    QObject,
    Qt,
    QTextDocumentFragment,
    QVBoxLayout,
    QWidget,
)
from gui.widgets import chat
from gui.widgets.chat_items import MessageItem
from gui.widgets.elided_label import ElidedLabel
from gui.widgets.session_list import SessionList
from gui.widgets.tool_card import ToolCard

WAIT = 15_000


def unnamed(root: QWidget) -> list[str]:
    """The visible controls under root that take the Tab key yet have no name: neither their own,
    nor a button's or label's text, nor a label that names them (a form's label is its field's buddy). A spin
    box's text field is spoken as the spin box."""
    named_by_label = {id(label.buddy()) for label in root.findChildren(QLabel) if label.buddy() is not None}
    missing = []
    for widget in root.findChildren(QWidget):
        if not widget.isVisibleTo(root) or not widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
            continue
        if isinstance(widget.parent(), QAbstractSpinBox):
            widget = widget.parent()
        if widget.accessibleName() or id(widget) in named_by_label:
            continue
        if isinstance(widget, (QAbstractButton, QLabel)) and widget.text():
            continue  # spoken by its text
        if isinstance(widget, QTabBar) and all(widget.tabText(i) for i in range(widget.count())):
            continue  # each tab is spoken by its text
        missing.append(f"{type(widget).__name__} {widget.objectName()!r} in {type(widget.window()).__name__}")
    return missing


def opened_dialogs(window) -> list[QDialog]:
    return [dialog for dialog in window.findChildren(QDialog) if dialog.isVisible()]


def test_the_window_and_its_dialogs_name_every_control(qtbot, make_window, workdir):
    model = ScriptedModel([reply("", call("shell_run", command="echo hi"))])
    window = make_window(model)
    assert unnamed(window) == []
    window.panes[PLAN].set_editing(True)  # the plan's editor, in place of its view
    assert unnamed(window) == []
    window.panes[PLAN].set_editing(False)

    for opening in (window.new_session, window.open_settings, window.open_memory_search):
        opening()
        dialogs = opened_dialogs(window)
        assert dialogs, opening
        for dialog in dialogs:
            assert unnamed(dialog) == [], type(dialog).__name__
            dialog.reject()

    session = window.start_session(SessionConfig(task="Say hi", model="scripted", workdir=workdir, approval="ask"))
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.dialogs.values()), timeout=WAIT)
    question = next(d for d in window.dialogs.values() if d.isVisible())
    assert question.question.reason == "approval" and unnamed(question) == []
    inspector = window.open_inspector()
    for tab in range(inspector.tabs.count()):
        inspector.tabs.setCurrentIndex(tab)
        assert unnamed(inspector) == [], inspector.tabs.tabText(tab)
    inspector.close()

    for dialog in (PinDialog("# Plan\n- keep this line\n", (), window),
                   ConflictDialog(PLAN, "mine\n", "the agent's\n", 3, window),
                   ReflectionDialog("Say hi", "**Achieved.** [Make it a lesson now](tripane-lesson:x:0)", window)):
        dialog.show()
        assert unnamed(dialog) == [], type(dialog).__name__
        dialog.reject()
    session.stop()
    qtbot.waitUntil(lambda: not session.running, timeout=WAIT)


def test_a_tool_card_says_its_state_in_words_and_not_its_seconds(qtbot, monkeypatch):
    card = ToolCard(ToolCall("c1", "shell_run", '{"command": "pytest -q"}'))
    qtbot.addWidget(card)
    card.await_approval(True)
    assert card.header.accessibleName() == "shell_run  pytest -q, waiting for your approval"
    card.await_approval(False)
    card.start(at=time.monotonic() - 75)
    assert "1 min 15 s" in card.header.text()  # shown…
    assert card.header.accessibleName() == "shell_run  pytest -q, running"  # …not said every second
    card.tick()
    assert card.header.accessibleName() == "shell_run  pytest -q, running"
    card.set_result(ToolResult("c1", "shell_run", False, "Command failed with exit code 1."))
    assert card.header.text().startswith("✗") and card.header.accessibleName() == "shell_run  pytest -q, failed"
    done = ToolCard(ToolCall("c2", "file_read", '{"path": "invoice.py"}'))
    qtbot.addWidget(done)
    done.set_result(ToolResult("c2", "file_read", True, "def total(lines): ..."))
    assert done.header.accessibleName() == "file_read  invoice.py, done"


def test_the_session_list_and_the_status_bar_say_words_not_marks(qtbot, make_window, workdir):
    sessions = SessionList()
    qtbot.addWidget(sessions)
    sessions.show_rows([SessionRow("s1", "2026-11-29T14:40:00", "", "Fix the totals", "Fix the totals", "waiting", "m",
                                   "/w/invoices")], current=None)
    item = sessions.list.item(0)
    assert item.text().startswith("? Fix the totals")
    assert item.data(Qt.ItemDataRole.AccessibleTextRole) == "Fix the totals. 2026-11-29 14:40, waiting, invoices"

    label = ElidedLabel("● Waiting for the model · 36 s")
    qtbot.addWidget(label)
    label.show()
    label.resize(60, 20)  # cut on screen, whole to a screen reader
    qtbot.waitUntil(lambda: QLabel.text(label).endswith("…"))
    assert label.accessibleName() == "Waiting for the model, 36 s"


def tab_from(qtbot, window, widget, steps: int, backwards: bool = False) -> list[QWidget]:
    """Where Tab (or Shift+Tab) takes the keyboard from `widget`, step by step."""
    window.activateWindow()
    widget.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is widget)
    reached = []
    for _ in range(steps):
        key = Qt.Key.Key_Backtab if backwards else Qt.Key.Key_Tab
        qtbot.keyClick(QApplication.focusWidget(), key)
        reached.append(QApplication.focusWidget())
    return reached


def test_tab_reads_the_conversation_in_its_order_between_the_list_and_the_message_box(qtbot, make_window, workdir,
                                                                                      monkeypatch):
    model = ScriptedModel([
        reply("I'll read the totals first.", call("file_read", path="invoice.py")),
        reply("Totals are floats.", call("task_done", summary="Found it.")),
    ])
    window = make_window(model)
    session = window.start_session(SessionConfig(task="Fix the totals", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    # (shown: a new page of items is shown by the layout at the next turn of the event loop)
    qtbot.waitUntil(lambda: any(isinstance(item, QLabel) and "Ended" in item.text() and item.isVisible()
                                for item in window.chat.items()), timeout=WAIT)
    reached = tab_from(qtbot, window, window.chat, 9)
    said = [untimed(spoken_of(w)) for w in reached]
    # each message once, named with who wrote it and when; each card by its state (a failed one unfolded),
    # the end, then the message box
    assert said[:3] == ["You, HH:MM: Fix the totals", "Agent, HH:MM: I'll read the totals first.",
                        "file_read  invoice.py, failed"], said
    assert said[3].startswith("Error\nNo such file") and "Error, attempt 1" in said[4], said
    assert said[5:7] == ["Agent, HH:MM: Totals are floats.", "task_done  Found it., done"], said
    assert said[7].startswith("Ended: done") and said[8] == "Message to the agent", said
    assert tab_from(qtbot, window, window.composer, 1, backwards=True) == [reached[7]]  # Shift+Tab: the latest
    monkeypatch.setattr(chat, "CHUNK_RECORDS", 3)  # reopened: the last at once, the rest above, 3 at a time
    window.chat.show_records(window.chat.records())
    qtbot.waitUntil(lambda: not window.chat.building() and all(item.isVisible() for item in window.chat.items()))
    assert [untimed(spoken_of(w)) for w in tab_from(qtbot, window, window.chat, 9)] == said


def untimed(said: str) -> str:
    """A message's time as HH:MM (a run may cross a minute)."""
    return re.sub(r"\b\d\d:\d\d\b", "HH:MM", said)


def spoken_of(widget: QWidget) -> str:
    """What a screen reader names a widget by: its accessible name, else its text (as plain)."""
    if widget.accessibleName():
        return widget.accessibleName()
    text = widget.text() if hasattr(widget, "text") else ""
    return QTextDocumentFragment.fromHtml(text).toPlainText().strip()


def test_a_screen_reader_goes_through_the_window_left_to_right_and_the_panes_top_down(qtbot, make_window):
    window = make_window()

    def parts(splitter) -> list[QObject]:
        shown = QAccessible.queryAccessibleInterface(splitter)
        return [shown.child(i).object() for i in range(shown.childCount()) if shown.child(i).object() is not None
                and shown.child(i).role() != QAccessible.Role.Grip]

    assert parts(window.main_splitter) == [window.sessions, window.chat.parentWidget(), window.right]
    assert parts(window.right) == [window.panes[PLAN], window.panes[FINDINGS], window.panes[PROGRESS]]
    browser, listed, shown = QDialog(window), QLabel("the versions"), QLabel("the one chosen")
    lay_out_browser(browser, [], listed, shown, QLabel(""), [], 200, (600, 400))  # (file history, what changed)
    assert parts(listed.parentWidget()) == [listed, shown]


def test_a_ring_shows_which_item_of_the_conversation_the_keyboard_is_on(qtbot):
    view = QWidget()
    column = QVBoxLayout(view)
    conversation, box = chat.ChatView(), QLineEdit()
    column.addWidget(conversation)
    column.addWidget(box)
    qtbot.addWidget(view)
    view.resize(600, 500)
    view.show()
    qtbot.waitExposed(view)
    messages = [MessageItem("assistant", f"Step {n}: reading the code.", when="14:40") for n in range(3)]
    for message in messages:
        conversation._add(message)
    view.activateWindow()
    qtbot.waitUntil(view.isActiveWindow)
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Backtab)  # Shift+Tab: the latest
    assert conversation.rings.ringed() is messages[2]
    ring = messages[2].findChild(QWidget, "focus_ring")
    assert ring.isVisible() and ring.geometry() == messages[2].rect()
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Backtab)
    assert conversation.rings.ringed() is messages[1] and messages[2].findChild(QWidget, "focus_ring") is None
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)  # out of the conversation
    assert QApplication.focusWidget() is box and conversation.rings.ringed() is None
    qtbot.mouseClick(messages[0].body, Qt.MouseButton.LeftButton)  # a click, to select text: no ring
    assert QApplication.focusWidget() is messages[0].body and conversation.rings.ringed() is None


def test_tab_leaves_a_table_of_figures_for_the_next_control(qtbot, make_window, workdir):
    """A table's own Tab went from cell to cell: the keyboard was held in the context inspector's
    requests and the spending window's tables."""
    window = make_window(ScriptedModel([reply("Done.")]))
    session = window.start_session(SessionConfig(task="Say hi", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    inspector = window.open_inspector()
    spending = window.open_spending()
    for table in (inspector.table, *spending.tables.values()):
        table.parentWidget().parentWidget().setCurrentWidget(table)  # (each on a tab of its window)
        table.window().activateWindow()
        qtbot.waitUntil(table.window().isActiveWindow)
        table.setFocus()
        qtbot.waitUntil(table.hasFocus)
        qtbot.keyClick(table, Qt.Key.Key_Tab)
        assert not table.hasFocus(), table.accessibleName() or table.objectName()
