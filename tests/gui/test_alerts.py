"""The person looking elsewhere is told when a run needs them or ends; the person looking is not; and
quitting while the agent works asks first."""

from __future__ import annotations

import sys

import pytest

from core.llm import ModelError
from core.scripted import ScriptedModel, call, reply
from gui.qt import QMessageBox, Qt
from tests.gui.test_window import start, wait_for_dialog

WAIT = 20_000


def watch(window) -> list[tuple[str, str]]:
    seen: list[tuple[str, str]] = []
    window.attention_requested.connect(lambda title, message: seen.append((title, message)))
    return seen


def test_a_run_that_ends_in_the_background_is_announced(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="hello.txt written"))]))
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)  # the person is in another app
    seen = watch(window)
    session = start(window, workdir, task="Write hello.txt")
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert seen == [("Task done", "Write hello.txt: hello.txt written")]


def test_a_failed_run_is_announced_with_the_providers_reason(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([ModelError("auth", "the API key was refused")]))
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)
    seen = watch(window)
    session = start(window, workdir, task="Summarise the repo")
    qtbot.waitUntil(lambda: session.state.ended and bool(seen), timeout=WAIT)
    title, message = seen[-1]
    assert title == "Run failed" and message.startswith("Summarise the repo: ") and "API key was refused" in message


def test_a_question_is_announced_with_what_it_asks(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([reply("", call("human_ask", question="Which file?", options=["a", "b"]))]))
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)
    seen = watch(window)
    start(window, workdir, task="Pick a file")
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT)
    assert seen[0][0] == "Tripane needs you" and "Which file?" in seen[0][1]


def test_nothing_is_announced_to_a_person_watching_the_window(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    monkeypatch.setattr(window, "isActiveWindow", lambda: True)
    seen = watch(window)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.wait(200)
    assert seen == []


def start_working(qtbot, make_window, workdir):
    """A window whose agent is at work: a long shell command (a test suite, say) is running."""
    slow = f'"{sys.executable}" -c "import time; time.sleep(60)"'
    model = ScriptedModel([reply("", call("shell_run", command=slow))])
    window = make_window(model)
    session = start(window, workdir, approval="all")
    qtbot.waitUntil(lambda: len(model.requests) == 1 and session.state.status == "running", timeout=WAIT)
    return window, session


def quit_box(window) -> QMessageBox | None:
    return next((box for box in window.findChildren(QMessageBox)
                 if box.isVisible() and box.windowTitle() == "Quit Tripane?"), None)


def test_a_run_of_another_session_that_ends_is_said_in_the_status_bar(qtbot, make_window, workdir, monkeypatch):
    waits = f'"{sys.executable}" -c "import pathlib, time; [time.sleep(0.05) for _ in range(600) if not pathlib.Path(\'go\').exists()]"'
    model = ScriptedModel([reply("", call("shell_run", command=waits)),
                           reply("", call("task_done", summary="nothing to do")),
                           reply("", call("task_done", summary="the files listed"))])
    window = make_window(model)
    monkeypatch.setattr(window, "isActiveWindow", lambda: True)  # the person works in the window
    seen = watch(window)
    first = start(window, workdir, task="List the files", approval="all")
    qtbot.waitUntil(lambda: bool(first.running_tools()), timeout=WAIT)
    second = start(window, workdir, task="Another task")  # shown instead
    qtbot.waitUntil(lambda: second.state.ended, timeout=WAIT)
    (workdir / "go").write_text("", encoding="utf-8")
    qtbot.waitUntil(lambda: first.state.ended, timeout=WAIT)
    assert window.session is second and seen == []  # no tray, no flashing: the person is here
    assert window.statusBar().currentMessage() == "Task done — List the files: the files listed"


def test_quitting_while_the_agent_works_asks_first_and_cancel_keeps_it_working(qtbot, make_window, workdir):
    window, session = start_working(qtbot, make_window, workdir)

    window.close()

    qtbot.waitUntil(lambda: quit_box(window) is not None, timeout=WAIT)
    assert "A run is in progress" in quit_box(window).text()
    quit_box(window).button(QMessageBox.StandardButton.Cancel).click()
    qtbot.wait(200)
    assert window.isVisible() and not window._shut_down and session.running

    window.close()
    qtbot.waitUntil(lambda: quit_box(window) is not None, timeout=WAIT)
    quit_button = next(b for b in quit_box(window).buttons() if b.text() == "Quit")
    quit_button.click()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)
    assert not session.running  # stopped where it was; Resume continues it after a restart


def test_a_logout_closes_without_the_quit_question(qtbot, make_window, workdir):
    window, session = start_working(qtbot, make_window, workdir)

    window.desktop_session_ending()  # what the desktop's session manager asks for at logout
    window.close()

    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)
    assert quit_box(window) is None and not session.running


def test_quitting_with_nothing_at_work_asks_nothing(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    session = start(window, workdir)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    window.close()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)
    assert quit_box(window) is None


def test_the_title_says_how_many_sessions_wait_and_the_list_finds_them(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([reply("", call("human_ask", question="Which file?", options=["a", "b"])),
                                        reply("", call("task_done", summary="picked"))]))
    session = start(window, workdir, task="Pick a file")
    dialog = wait_for_dialog(qtbot, window, "ask_user")
    qtbot.waitUntil(lambda: window.windowTitle() == "(1 waiting for you) Pick a file — Tripane", timeout=WAIT)
    window.sessions.search.setText("waiting")  # a state is searched for by its name
    assert window.sessions.ids() == [session.id]
    window.sessions.search.setText("ended")
    assert window.sessions.ids() == []
    qtbot.mouseClick(dialog.buttons["a"], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    qtbot.waitUntil(lambda: window.windowTitle() == "Pick a file — Tripane", timeout=WAIT)
    assert window.sessions.ids() == [session.id]  # ended: done


@pytest.mark.qt_log_ignore("systemTrayWindowChanged")  # a tray icon on the offscreen platform, which has no tray
def test_a_click_on_the_trays_message_shows_the_session_it_is_about(qtbot, make_window, workdir, tmp_path, monkeypatch):
    from gui.qt import QSystemTrayIcon
    from tests.gui.test_opening import recorded_earlier, shown_now

    earlier = recorded_earlier(tmp_path / "data", workdir, "Port the parser", turns=2)
    window = make_window(ScriptedModel([reply("", call("human_ask", question="Which file?", options=["a", "b"]))]))
    monkeypatch.setattr(QSystemTrayIcon, "isSystemTrayAvailable", staticmethod(lambda: True))
    monkeypatch.setattr(window, "isActiveWindow", lambda: False)
    session = start(window, workdir, task="Pick a file")
    qtbot.waitUntil(lambda: window._tray is not None and window._alerted_session == session.id, timeout=WAIT)
    window.show_session(earlier)  # the person looks at another session meanwhile
    qtbot.waitUntil(lambda: shown_now(window) == earlier, timeout=WAIT)
    window._tray.messageClicked.emit()
    qtbot.waitUntil(lambda: shown_now(window) == session.id, timeout=WAIT)
