"""The window's own commands from Tripane's other windows: with a question in front, Ctrl+N, Ctrl+K
or Ctrl+Q did nothing, and the person had to click the main window first."""

from __future__ import annotations

from core.scripted import ScriptedModel, call, reply
from gui.dialogs.new_session import NewSessionDialog
from gui.qt import Qt, qt_alive
from tests.gui.test_window import WAIT, start, wait_for_dialog

CTRL = Qt.KeyboardModifier.ControlModifier


def a_question_in_front(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("human_ask", question="Also update the docs?",
                                                       options=["yes", "no"]))]))
    start(window, workdir, task="Fix the parser")
    dialog = wait_for_dialog(qtbot, window, "ask_user")
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT)
    return window, dialog


def test_a_new_session_from_the_question_window(qtbot, make_window, workdir):
    window, dialog = a_question_in_front(qtbot, make_window, workdir)
    qtbot.keyClick(dialog, Qt.Key.Key_N, CTRL)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(NewSessionDialog)), timeout=WAIT)


def test_finding_a_session_from_the_question_window_goes_to_the_list(qtbot, make_window, workdir):
    window, dialog = a_question_in_front(qtbot, make_window, workdir)
    qtbot.keyClick(dialog, Qt.Key.Key_K, CTRL)
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
    qtbot.waitUntil(window.sessions.search.hasFocus, timeout=WAIT)



def test_ctrl_k_in_the_answer_box_finds_a_session_and_leaves_the_answer_be(qtbot, make_window, workdir, monkeypatch):
    """With Linux's key bindings, Ctrl+K in the answer box deleted the rest of the line."""
    from gui.qt import QPlainTextEdit
    from tests.gui.test_composer import linux_editing_keys

    monkeypatch.setattr(QPlainTextEdit, "event", linux_editing_keys(QPlainTextEdit.event))
    window, dialog = a_question_in_front(qtbot, make_window, workdir)
    dialog.text.setPlainText("Yes, and the changelog")
    dialog.text.moveCursor(dialog.text.textCursor().MoveOperation.Start)
    dialog.text.setFocus()
    qtbot.keyClick(dialog.text, Qt.Key.Key_K, CTRL)
    qtbot.waitUntil(window.sessions.search.hasFocus, timeout=WAIT)
    assert dialog.text.toPlainText() == "Yes, and the changelog"


def test_ctrl_k_in_the_other_windows_fields_finds_a_session_and_leaves_what_was_typed(qtbot, make_window, workdir,
                                                                                     monkeypatch):
    """With Linux's key bindings, Ctrl+K in the memory search's box, the changes window's filter or
    F1's deleted the rest of the line."""
    from gui.qt import QLineEdit
    from tests.gui.test_composer import linux_editing_keys

    monkeypatch.setattr(QLineEdit, "event", linux_editing_keys(QLineEdit.event))
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    session = start(window, workdir, task="Fix the parser")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    fields = (window.open_memory_search().query, window.show_work_changes().filter, window.show_shortcuts().filter)
    try:
        for field in fields:
            field.window().activateWindow()
            qtbot.waitUntil(field.window().isActiveWindow, timeout=WAIT)
            field.setText("parser error")
            field.setCursorPosition(0)
            field.setFocus()
            qtbot.keyClick(field, Qt.Key.Key_K, CTRL)
            qtbot.waitUntil(window.sessions.search.hasFocus, timeout=WAIT)
            assert field.text() == "parser error"
    finally:  # (a QLineEdit left focused when the patched event() is put back crashes Qt, a failure with it)
        for field in fields:
            if qt_alive(field):
                field.window().close()
