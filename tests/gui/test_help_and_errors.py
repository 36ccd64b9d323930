"""The Help menu, the folder actions, and errors nobody caught: logged and told, never silent."""

from __future__ import annotations

import logging

import pytest

from core import __version__
from core.logs import log_path, start_logging, stop_logging
from core.scripted import ScriptedModel, call, reply
from gui.dialogs.reading import ReadingWindow
from gui.qt import QMessageBox, QTimer
from gui.unexpected import catch_unexpected
from tests.gui.test_window import start

WAIT = 20_000


def boxes(window, title: str | None = None) -> list[QMessageBox]:
    return [box for box in window.findChildren(QMessageBox)
            if box.isVisible() and (title is None or box.windowTitle() == title)]


@pytest.fixture
def logged(tmp_path):
    path = start_logging(tmp_path / "data")
    yield path
    stop_logging()


@pytest.mark.qt_no_exception_capture
def test_an_error_in_a_slot_is_logged_and_told_once_a_minute(qtbot, make_window, running_loop, logged):
    window = make_window()
    undo = catch_unexpected(window, running_loop)
    try:
        def broken_button():
            raise ValueError("the pane lost its file")
        QTimer.singleShot(0, broken_button)
        qtbot.waitUntil(lambda: any("the pane lost its file" in box.text() for box in boxes(window)), timeout=WAIT)
        told = boxes(window)[0].text()
        assert "Nothing was lost" in told and str(log_path(window.workspace.data_dir)) in told

        QTimer.singleShot(0, broken_button)  # again at once: logged, not told twice
        qtbot.waitUntil(lambda: logged.read_text(encoding="utf-8").count("the pane lost its file") >= 2, timeout=WAIT)
        assert len(boxes(window)) == 1
    finally:
        undo()
    text = logged.read_text(encoding="utf-8")
    assert "Traceback" in text and "broken_button" in text


def test_an_error_in_a_loop_callback_is_logged_and_told(qtbot, make_window, running_loop, logged):
    window = make_window()
    undo = catch_unexpected(window, running_loop)
    try:
        running_loop.call_soon(lambda: {}["missing session"])
        qtbot.waitUntil(lambda: any("missing session" in box.text() for box in boxes(window)), timeout=WAIT)
    finally:
        undo()
    assert "KeyError" in logged.read_text(encoding="utf-8")


def test_the_shortcuts_are_listed_from_the_menus(qtbot, make_window):
    window = make_window()
    window.actions_by_name["shortcuts"].trigger()
    window.actions_by_name["shortcuts"].trigger()  # F1 twice: still one list
    shown = [w for w in window.findChildren(ReadingWindow) if w.isVisible()]
    assert len(shown) == 1 and shown[0].windowTitle() == "Keyboard shortcuts"
    text = shown[0].text()
    for action in ("Send message", "Compact context now", "Keyboard shortcuts", "Open session folder"):
        assert action in text
    assert "Ctrl+Return" in text or "Ctrl+Enter" in text or "⌘" in text
    assert "F1" in text
    # Keys the widgets take themselves are listed too: the conversation's, the message box's.
    assert "Ctrl+Home / Ctrl+End" in text and "The messages you sent (in the empty message box)" in text
    assert "A question window's button, a dialog's field (its letter underlined" in text and "Alt+letter" in text


def test_about_names_the_version_and_where_things_are(qtbot, make_window, tmp_path):
    window = make_window()
    window.actions_by_name["about"].trigger()
    text = boxes(window, "About Tripane")[0].text()
    assert __version__ in text and str(tmp_path / "data") in text and "tripane.log" in text


def test_the_session_and_working_folders_open_and_say_where_they_are_when_nothing_can(
        qtbot, make_window, workdir, monkeypatch):
    from gui import desktop_open

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    assert not window.actions_by_name["session_folder"].isEnabled()  # no session shown yet
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    window.actions_by_name["session_folder"].trigger()
    window.actions_by_name["working_folder"].trigger()
    assert opened == [str(session.dir), str(workdir)]
    assert (session.dir / "task_plan.md").exists()

    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: False)
    window.actions_by_name["session_folder"].trigger()
    assert any(str(session.dir) in box.text() for box in boxes(window))


def test_the_log_folder_opens_from_the_help_menu(qtbot, make_window, tmp_path, monkeypatch, logged):
    from gui import desktop_open

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    window = make_window()
    logging.getLogger("gui").warning("something to find")
    window.actions_by_name["log_folder"].trigger()
    assert opened == [str(logged.parent)]
    assert "something to find" in logged.read_text(encoding="utf-8")
