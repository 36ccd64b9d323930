"""A killed app, started again, shows the session and its pending question; the answer continues it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from core.events import ToolResult
from core.scripted import ScriptedModel, call, reply
from gui.qt import QLabel
from tests.support.processes import kept_as_left_running, stand_in

ROOT = Path(__file__).resolve().parents[2]


def killed_at_its_question(tmp_path, settings, workdir, *question: str) -> str:
    """Run the app in a process until the agent's question is on screen, then kill it; the session's id."""
    settings.q.sync()
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.gui.app_until_question", str(tmp_path / "data"), settings.q.fileName(),
         str(workdir), *question],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    try:
        line = child.stdout.readline()
        assert line.startswith("QUESTION "), child.stderr.read() if child.poll() is not None else line
        session_id = line.split()[1]
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        child.stderr.close()
    settings.q.sync()  # what the killed app wrote there
    return session_id


def test_a_killed_and_restarted_app_shows_the_session_and_its_pending_question(qtbot, make_window, settings,
                                                                              tmp_path, workdir):
    session_id = killed_at_its_question(tmp_path, settings, workdir)
    model = ScriptedModel([reply("", call("task_done", summary="PostgreSQL it is"))])
    window = make_window(model)
    assert window.sessions.ids() == [session_id]
    assert window.sessions.list.item(0).text().startswith("?")  # marked as waiting for the person
    # Opened on the session it showed when it was killed, with its question, and no click.
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.dialogs.values()), timeout=10_000)
    assert window.session.id == session_id
    dialog = next(iter(window.dialogs.values()))
    assert dialog.question.question == "Which database should I use?"
    assert set(dialog.buttons) == {"sqlite", "postgres", "answer"}

    qtbot.mouseClick(dialog.buttons["postgres"], qtbot_left())
    session = window.session
    qtbot.waitUntil(lambda: session.state.ended, timeout=15_000)
    assert session.state.status == "ended:done"
    answer = next(r.event for r in session.records if isinstance(r.event, ToolResult) and r.event.name == "human_ask")
    assert "postgres" in answer.content


def test_a_command_approved_after_the_restart_runs(qtbot, make_window, settings, tmp_path, workdir):
    killed_at_its_question(tmp_path, settings, workdir, "approval")
    window = make_window(ScriptedModel([reply("", call("task_done", summary="ran it"))]))
    window.sessions.go_to_row(0)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.dialogs.values()), timeout=10_000)
    dialog = next(iter(window.dialogs.values()))
    assert dialog.question.reason == "approval"

    qtbot.mouseClick(dialog.buttons["approve"], qtbot_left())
    session = window.session
    qtbot.waitUntil(lambda: session.state.ended, timeout=15_000)
    ran = next(r.event for r in session.records if isinstance(r.event, ToolResult) and r.event.name == "shell_run")
    assert ran.ok and (workdir / "ran.txt").read_text(encoding="utf-8") == "ran\n"  # once: it never began before


def reopened_on(qtbot, make_window, folder, model):
    """Tripane opened again (on the session it showed, whose folder is `folder`), with `model`."""
    again = make_window(model)
    qtbot.waitUntil(lambda: again.session is not None and again.session.dir == folder, timeout=10_000)
    return again


def qtbot_left():
    from gui.qt import Qt

    return Qt.MouseButton.LeftButton


def test_a_session_left_mid_run_is_shown_interrupted_and_resume_continues_it(qtbot, make_window, workdir):
    import asyncio

    from core.session import SessionConfig

    class Hanging(ScriptedModel):  # the model is still thinking when the window closes
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            self.requests.append(request)
            await asyncio.Event().wait()

    hanging = Hanging([])
    window = make_window(hanging)
    session = window.start_session(SessionConfig(task="List the files", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: bool(hanging.requests), timeout=10_000)
    assert window.sessions.list.item(0).text().startswith("●")
    window.close_now()  # as Quit does once the person confirms, or a logout
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=10_000)

    again = make_window(ScriptedModel([reply("", call("task_done", summary="listed"))]))
    row = again.sessions.list.item(0).text()
    assert row.startswith("○") and row.endswith(f"· interrupted · {workdir.name}"), row  # its project last
    qtbot.waitUntil(lambda: again.session is not None and again.session.id == session.id, timeout=10_000)
    assert again.status.state.text().startswith("○ Interrupted mid-run")
    assert again.resume_button.isEnabled()
    qtbot.mouseClick(again.resume_button, qtbot_left())
    qtbot.waitUntil(lambda: again.session.state.ended, timeout=15_000)
    assert again.session.state.status == "ended:done"
    said = [label.text() for label in again.chat.findChildren(QLabel) if "interruption" in label.text()]
    assert len(said) == 1 and said[0].startswith("▶ Resumed after an interruption: Tripane closed or was stopped "
                                                 "mid-run (its last record: "), said
    qtbot.waitUntil(lambda: again.sessions.list.item(0).text().startswith("■"), timeout=10_000)


def test_a_command_left_running_by_a_quit_reads_unfinished_until_resume_tells_the_agent(qtbot, make_window,
                                                                                        workdir):
    from core.session import SessionConfig

    command = f'"{sys.executable}" -c "import time; print(\'built\', 7 * 1, \'of 9\', flush=True); time.sleep(60)"'
    window = make_window(ScriptedModel([reply("", call("shell_run", "c1", command=command))]))
    session = window.start_session(SessionConfig(task="Count", model="scripted", workdir=workdir, approval="all"))
    qtbot.waitUntil(lambda: "c1" in window.chat.cards and "built 7 of 9" in window.chat.cards["c1"].details.text(),
                    timeout=10_000)
    window.close_now()  # Quit, confirmed while the command runs
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=10_000)

    again = make_window(ScriptedModel([reply("", call("task_done", summary="counted"))]))
    qtbot.waitUntil(lambda: again.session is not None and again.session.id == session.id, timeout=10_000)
    card = again.chat.cards["c1"]  # not "…" as if it still ran: nothing runs it any more
    assert card.status == "running" and card.header.text().endswith("· unfinished: the run stopped")
    # What the closed window had shown of it, shown again: how far it got, before Resume is chosen.
    assert "What it had printed when the run stopped" in card.details.text() and "built 7 of 9" in card.details.text()
    assert card.header.isChecked()  # unfolded, as it was while it ran
    qtbot.mouseClick(again.resume_button, qtbot_left())
    qtbot.waitUntil(lambda: again.session.state.ended, timeout=15_000)
    assert card.status == "error" and "unfinished" not in card.header.text()
    assert "its effect is unknown" in card.details.text()  # what the agent was told
    from core.events import ToolResult
    told = next(r.event for r in again.session.records if isinstance(r.event, ToolResult))
    assert told.content.endswith("Check the current state before you repeat it.\n\n"
                                 "What it had printed by then (the end):\nbuilt 7 of 9")  # how far it got
    assert not (session.dir / "running").exists() or not any((session.dir / "running").iterdir())


def outlived_by_its_command(qtbot, make_window, workdir) -> tuple[Path, subprocess.Popen]:
    """A session whose command "c1" runs on after Tripane went, as a killed one leaves it (a quit
    ends the command: one started in its place, in a group of its own, stands for it). Its folder,
    and the command's process, for the caller to kill."""
    from core.agent.running_calls import RunningCall
    from core.session import SessionConfig

    command = f'"{sys.executable}" -c "import time; time.sleep(60)"'  # prints nothing
    window = make_window(ScriptedModel([reply("", call("shell_run", "c1", command=command))]))
    session = window.start_session(SessionConfig(task="Migrate", model="scripted", workdir=workdir, approval="all"))
    qtbot.waitUntil(lambda: (session.dir / "running" / "c1.pid").exists(), timeout=10_000)
    window.close_now()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=10_000)
    command = stand_in()
    RunningCall(session.dir, "c1").started(command.pid)
    return session.dir, command


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
def test_a_command_that_outlived_a_killed_tripane_is_said_to_run_on_in_its_card_until_it_ends(
        qtbot, make_window, workdir, monkeypatch):
    from gui.widgets import tool_card

    folder, migration = outlived_by_its_command(qtbot, make_window, workdir)
    try:
        monkeypatch.setattr(tool_card, "RUNS_ON_CHECK_MS", 50)
        again = reopened_on(qtbot, make_window, folder, ScriptedModel([reply("", call("task_done", summary="waited"))]))
        card = again.chat.cards["c1"]
        assert card.header.text().endswith("· unfinished: the run stopped; the command still runs")
        assert card.header.isChecked()  # open on it: the person must not start it again by mistake
        assert (f"Its command still runs, without Tripane, as process group {migration.pid}" in card.details.text()
                and f"kill -- -{migration.pid}" in card.details.text())
    finally:
        migration.kill()
        migration.wait()
    qtbot.waitUntil(lambda: card.header.text().endswith("; the command ended since"), timeout=10_000)
    assert "has ended since: how it ended is not known" in card.details.text()
    assert not card.stop_button.isVisible()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
def test_a_command_that_outlived_a_killed_tripane_is_stopped_from_its_card(qtbot, make_window, workdir):
    """The card said how to stop it in a terminal (kill -- -N); a running command's card has a button."""
    folder, migration = outlived_by_its_command(qtbot, make_window, workdir)
    try:
        again = reopened_on(qtbot, make_window, folder, ScriptedModel([]))
        card = again.chat.cards["c1"]
        # (visible once the window has laid the conversation out: on a loaded machine, not at once)
        qtbot.waitUntil(lambda: card.stop_button.isVisible(), timeout=10_000)
        assert card.stop_button.text() == "Stop it"
        qtbot.mouseClick(card.stop_button, qtbot_left())
        assert migration.wait(timeout=10) == -signal.SIGKILL
        assert card.header.text().endswith("· unfinished: the run stopped; you stopped the command")
        assert "until you stopped it" in card.details.text() and not card.stop_button.isVisible()
    finally:
        migration.kill()
        migration.wait()


def left_a_server_running(qtbot, make_window, workdir) -> tuple[Path, subprocess.Popen]:
    """A session whose command "s1" returned, leaving a dev server that a killed Tripane never
    stopped (a quit stops it: one started in its place, in a group of its own, stands for it),
    and that stopped mid-run in "c2". Its folder, and the server's process, for the caller to kill."""
    from core.session import SessionConfig

    window = make_window(ScriptedModel([
        reply("", call("shell_run", "s1", command="echo serving")),
        reply("", call("shell_run", "c2", command=f'"{sys.executable}" -c "import time; time.sleep(60)"'))]))
    session = window.start_session(SessionConfig(task="Serve", model="scripted", workdir=workdir, approval="all"))
    qtbot.waitUntil(lambda: (session.dir / "running" / "c2.pid").exists(), timeout=10_000)
    window.close_now()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=10_000)
    server = stand_in()
    kept_as_left_running(session.dir, "s1", server)
    return session.dir, server


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
def test_a_server_a_killed_tripane_left_running_is_said_on_its_commands_card_and_stopped_there(
        qtbot, make_window, workdir):
    # Reopened, nothing said the dev server still ran: a new session's agent found its port taken.
    folder, server = left_a_server_running(qtbot, make_window, workdir)
    try:
        again = reopened_on(qtbot, make_window, folder, ScriptedModel([]))
        card = again.chat.cards["s1"]
        assert card.status == "ok" and card.header.text().endswith("· still runs in the background")
        assert (f"It left processes running in the background (process group {server.pid}). Tripane stopped before "
                "the run's end, which would have stopped them, so they run on without it." in card.details.text()
                and f"kill -- -{server.pid}" in card.details.text())
        # (visible once the window has laid the conversation out: on a loaded machine, not at once)
        qtbot.waitUntil(lambda: card.stop_button.isVisible(), timeout=10_000)
        assert card.stop_button.text() == "Stop it"
        assert str(server.pid) in card.stop_button.toolTip()
        qtbot.mouseClick(card.stop_button, qtbot_left())
        assert server.wait(timeout=10) == -signal.SIGKILL
        assert card.header.text().endswith("· you stopped what it left running")
        assert "until you stopped it" in card.details.text() and not card.stop_button.isVisible()
        assert not list((folder / "running").glob("left-running-*"))  # the resume has nothing left to stop
    finally:
        server.kill()
        server.wait()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
def test_what_a_command_left_running_reads_stopped_once_the_resume_has_stopped_it(qtbot, make_window, workdir,
                                                                                  monkeypatch):
    from gui.widgets import tool_card

    folder, server = left_a_server_running(qtbot, make_window, workdir)
    try:
        monkeypatch.setattr(tool_card, "RUNS_ON_CHECK_MS", 50)
        again = reopened_on(qtbot, make_window, folder, ScriptedModel([reply("", call("task_done", summary="served"))]))
        card = again.chat.cards["s1"]
        assert card.header.text().endswith("· still runs in the background")
        qtbot.mouseClick(again.resume_button, qtbot_left())
        qtbot.waitUntil(lambda: server.poll() is not None, timeout=10_000)  # as the killed run's end would have
        assert server.returncode == -signal.SIGKILL
        qtbot.waitUntil(lambda: again.session.state.ended, timeout=10_000)
        qtbot.waitUntil(lambda: card.header.text().endswith("· what it left running has stopped"), timeout=10_000)
        assert "and has stopped since" in card.details.text() and not card.stop_button.isVisible()
        from tests.gui.test_supporting_screens import chat_says

        assert ("Stopped what `echo serving` had left running in the background, as the run went on after the "
                "interruption") in chat_says(again)  # (after ⏹, or ■ where the font has no ⏹)
        assert again.chat.cards["c2"].status == "error"  # the unfinished call: its card is its own
        assert "what it left running" not in again.chat.cards["c2"].header.text()
    finally:
        server.kill()
        server.wait()


def test_a_session_left_waiting_by_a_quit_is_ended_by_stop_without_running_it(qtbot, make_window, workdir):
    from core.session import SessionConfig
    from gui.qt import QMessageBox

    window = make_window(ScriptedModel([reply("", call("shell_run", "c1", command="echo hi"))]))
    session = window.start_session(SessionConfig(task="Say hi", model="scripted", workdir=workdir, approval="ask"))
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.dialogs.values()), timeout=10_000)
    window.close_now()  # Quit while it waits for the approval
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=10_000)

    model = ScriptedModel([])  # it is not run to be ended: nothing is asked of the model
    again = make_window(model)
    qtbot.waitUntil(lambda: again.session is not None and again.session.id == session.id, timeout=10_000)
    for dialog in again.dialogs.values():
        dialog.close()  # the person does not answer: they want it over with
    assert again.windowTitle().startswith("(1 waiting for you)")
    assert again.stop_button.isEnabled() and not again.actions_by_name["stop"].isEnabled()  # (Esc stops runs)
    assert again.actions_by_name["end_session"].isEnabled()  # Session → End the session…, as the button

    def asked() -> QMessageBox | None:
        return next((box for box in again.findChildren(QMessageBox) if box.isVisible()), None)

    qtbot.mouseClick(again.stop_button, qtbot_left())
    qtbot.waitUntil(lambda: asked() is not None, timeout=10_000)
    assert "is not running: it waits for your answer. End it where it is?" in asked().text()
    qtbot.mouseClick(asked().button(QMessageBox.StandardButton.Yes), qtbot_left())
    qtbot.waitUntil(lambda: again.session.state.ended, timeout=10_000)
    assert again.session.state.status == "ended:aborted" and model.requests == []
    assert not again.windowTitle().startswith("(1 waiting")
    assert again.sessions.list.item(0).text().startswith("■")
    assert not again.stop_button.isEnabled() and not again.actions_by_name["end_session"].isEnabled()
    assert again.chat.cards["c1"].status == "error"  # the call it left open, closed as stopped
