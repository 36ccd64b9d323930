"""A session another Tripane runs — here `tripane resume` in a terminal, a real process — shows live
in the window, which does not drive it meanwhile and takes it back when that run ends."""

from __future__ import annotations

from core.events import ToolResult, UserMessage
from core.scripted import ScriptedModel, call, reply
from core.session import SessionConfig
from tests.core.test_cli import finish, tripane
from tests.support.openai_server import ScriptedServer, Turn, positional, tool

WAIT = 30_000  # ms; the terminal's process imports litellm before its first request


def test_a_run_in_a_terminal_shows_live_and_the_window_waits_for_it(qtbot, make_window, workdir, tmp_path):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="first pass"))))
    script = positional([
        Turn(tool_calls=(tool("task_done", summary="unused: the window's run is scripted in-process"),)),
        Turn(text="Listing.", tool_calls=(tool("file_list", "t1"),), delay_s=4),  # the terminal's run, slow
        Turn(tool_calls=(tool("task_done", "t2", summary="tests counted"),)),
    ])
    with ScriptedServer(script) as server:
        session = window.start_session(SessionConfig(task="Count the files", model="openai/scripted",
                                                     api_base=server.url, workdir=workdir))
        qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
        assert window.send_button.isEnabled()

        terminal = tripane("resume", session.id, "--message", "Now count the tests.", data_dir=tmp_path / "data",
                           env={"OPENAI_API_KEY": "sk-test"})
        try:
            qtbot.waitUntil(lambda: window.status.state.text() == "● Running in another Tripane", timeout=WAIT)
            assert any(isinstance(r.event, UserMessage) and r.event.text == "Now count the tests."
                       for r in session.records)  # followed from the database, shown in the chat
            assert not window.send_button.isEnabled() and not window.composer.isEnabled()
            assert window.composer.placeholderText().startswith("Another Tripane runs this session")
            assert window.composer.accessibleDescription() == window.composer.placeholderText()  # (said too)
            assert not window.resume_button.isEnabled()
            # The list follows too: the terminal's run changed the session's state in the database.
            qtbot.waitUntil(lambda: window.sessions.list.currentItem().text().startswith("● "), timeout=WAIT)
            code, _, err = finish(terminal)
        finally:
            if terminal.poll() is None:
                terminal.kill()
        assert code == 0, err
    qtbot.waitUntil(lambda: session.state.status == "ended:done" and window.send_button.isEnabled(), timeout=WAIT)
    assert [r.event.name for r in session.records if isinstance(r.event, ToolResult)][-2:] == ["file_list", "task_done"]
    assert window.status.state.text() == "■ Ended: done"
    assert window.composer.placeholderText().startswith("Message the agent")
    assert window.composer.accessibleDescription() == window.composer.placeholderText()


def test_a_question_asked_in_a_terminal_is_answered_there_and_asked_here_once_that_run_stops(
        qtbot, make_window, workdir, tmp_path):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="first pass"))))
    script = positional([
        Turn(tool_calls=(tool("task_done", summary="unused: the window's run is scripted in-process"),)),
        Turn(tool_calls=(tool("human_ask", "t1", question="Which license?", options=["MIT", "GPL"],
                              fallback="MIT"),)),
    ])
    with ScriptedServer(script) as server:
        # A question with a fallback keeps a terminal with nobody at it waiting (for its minutes).
        session = window.start_session(SessionConfig(task="Add a license", model="openai/scripted",
                                                     api_base=server.url, workdir=workdir, answer_wait_min=5))
        qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
        terminal = tripane("resume", session.id, "--message", "Now the license.", data_dir=tmp_path / "data",
                           env={"OPENAI_API_KEY": "sk-test"})
        try:
            qtbot.waitUntil(lambda: window.status.state.text() == "? Waiting for an answer in another Tripane",
                            timeout=WAIT)
            # Not a dialog this window could not record the answer of: the terminal asks it.
            assert not any(dialog.isVisible() for dialog in window.dialogs.values())
            window.show_open_question()  # Ctrl+Shift+A
            assert "answer its question there" in window.statusBar().currentMessage()
        finally:
            terminal.kill()
            terminal.wait(timeout=30)
    # That run gone, the question still open: asked here now.
    qtbot.waitUntil(lambda: any(dialog.isVisible() for dialog in window.dialogs.values()), timeout=WAIT)
    assert next(iter(window.dialogs.values())).question.question == "Which license?"
