"""The Help menu, the folder actions, and errors nobody caught: logged and told, never silent."""

from __future__ import annotations

import logging

import pytest

from core import __version__
from core.logs import log_path, start_logging, stop_logging
from core.scripted import ScriptedModel, call, reply
from gui.dialogs.commands import CommandsWindow
from gui.dialogs.summary import SummaryDialog
from gui.qt import QMessageBox, Qt, QTimer, qt_alive
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
    shown = [w for w in window.findChildren(CommandsWindow) if w.isVisible()]
    assert len(shown) == 1 and shown[0].windowTitle() == "Commands and keyboard shortcuts — Tripane"
    text = shown[0].text()
    for action in ("Session › Send message", "Session › Compact context now", "Help › Commands and keyboard shortcuts",
                   "Session › Open session folder", "Session › Summary…"):  # (one with no key too)
        assert action in text
    assert "Ctrl+Return" in text or "Ctrl+Enter" in text or "⌘" in text
    assert "F1" in text
    # Keys the widgets take themselves are listed too: the conversation's, the message box's.
    assert "Ctrl+Home / Ctrl+End" in text and "\nThe messages you sent (in the empty message box)\t" in text
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


def test_a_command_is_found_by_typing_and_run_with_enter_from_f1(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    session = start(window, workdir, task="Fix the parser")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    listing = window.show_shortcuts()
    qtbot.waitUntil(listing.filter.hasFocus, timeout=WAIT)  # typing finds a command at once

    def shown() -> list[str]:
        return [item.text(0) for item in listing.shown_rows()]

    qtbot.keyClicks(listing.filter, "copy mark")  # every word, in any case, anywhere in the row
    assert shown() == ["Session › Copy as Markdown"]
    listing.filter.clear()
    qtbot.keyClicks(listing.filter, "summ")
    assert shown() == ["Session › Summary…"] and listing.list.currentItem().text(0) == "Session › Summary…"
    qtbot.keyClick(listing.filter, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not listing.isVisible() if qt_alive(listing) else True, timeout=WAIT)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(SummaryDialog)), timeout=WAIT)

    listing = window.show_shortcuts()
    qtbot.keyClicks(listing.filter, "session")
    assert len(shown()) > 2
    qtbot.keyClick(listing.filter, Qt.Key.Key_Down)
    assert listing.list.currentItem().text(0) == shown()[1]  # Down in the box chooses in the list
    listing.filter.setText("Resume")  # greyed out: the session has ended done
    assert not window.actions_by_name["resume"].isEnabled()
    qtbot.keyClick(listing.filter, Qt.Key.Key_Return)
    assert listing.isVisible() and listing.note.text() == (
        "Session › Resume cannot be done now (it is greyed out in its menu too).")
    listing.filter.setText("messages you sent")  # keys a widget takes: listed, run where they work
    qtbot.keyClick(listing.filter, Qt.Key.Key_Return)
    assert listing.isVisible() and listing.note.text() == (
        "The messages you sent (in the empty message box): Up / Down works there, not from this list.")
    listing.filter.setText("no such command at all")
    assert shown() == [] and listing.note.isHidden()
    qtbot.keyClick(listing.filter, Qt.Key.Key_Return)  # nothing chosen: nothing happens
    assert listing.isVisible()


def test_the_commands_that_cannot_run_now_are_greyed_out_as_the_session_goes(qtbot, make_window, workdir):
    from tests.gui.test_window import start_paused

    _model, window, session = start_paused(qtbot, make_window, workdir)
    listing = window.show_shortcuts()
    resume = next(item for item in listing.rows() if item.text(0) == "Session › Resume")
    disabled = listing.palette().brush(listing.palette().ColorGroup.Disabled, listing.palette().ColorRole.Text)
    assert window.actions_by_name["resume"].isEnabled() and resume.foreground(0) != disabled
    window.resume()
    qtbot.waitUntil(lambda: not window.actions_by_name["resume"].isEnabled(), timeout=WAIT)
    assert resume.foreground(0) == disabled
    window.toggle_theme()  # the other theme's grey, while the list is open
    try:
        dark = listing.palette().brush(listing.palette().ColorGroup.Disabled, listing.palette().ColorRole.Text)
        assert dark != disabled and resume.foreground(0) == dark
    finally:
        window.toggle_theme()
    listing.close()
    window.stop()
    qtbot.waitUntil(lambda: not session.running, timeout=WAIT)  # (the list gone: its rows are let go of)


def test_the_command_chosen_as_one_types_is_said(qtbot, make_window, screen_reader):
    """The keys stay in the search box, where a screen reader says only what is typed."""
    window = make_window()
    window.activateWindow()
    window.actions_by_name["shortcuts"].trigger()
    commands = next(w for w in window.findChildren(CommandsWindow) if w.isVisible())
    qtbot.waitUntil(commands.isActiveWindow)
    said: list[str] = []
    commands.announcer.said.connect(said.append)
    qtbot.keyClicks(commands.filter, "file history")
    qtbot.waitUntil(lambda: bool(said))
    assert said[-1].startswith("Session, File history…, ") and said[-1].endswith(", cannot be done now")  # no session
    qtbot.keyClicks(commands.filter, " zzz")
    qtbot.waitUntil(lambda: said[-1] == "No command matches")
