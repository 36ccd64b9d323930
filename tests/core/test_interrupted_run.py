"""A run that stopped with nobody stopping it (Tripane closed, killed or crashed mid-run) says so
where it goes on: in the conversation, progress.md and the CLI's lines; a run that starts, ends,
pauses or waits as it should says nothing of the kind."""

from __future__ import annotations

import asyncio
import os
import sys
import time

import pytest

from core.events import BackgroundStopped, SessionResumed
from core.memory.working import PROGRESS
from core.render import render
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from tests.core.helpers import events_of, make_session, wait_for_question
from tests.support.processes import kept_as_left_running, stand_in, standing_in


class Hanging(ScriptedModel):
    """A model still thinking when Tripane goes."""

    async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
        self.requests.append(request)
        await asyncio.Event().wait()


def finishing() -> ScriptedModel:
    return ScriptedModel([reply("", call("task_done", summary="listed"))])


async def left_mid_step(store, data_dir, workdir) -> Session:
    """A session whose model was still thinking when Tripane went: nothing more is recorded."""
    hanging = Hanging([])
    session = make_session(store, data_dir, workdir, hanging)
    session.start()
    async def asked() -> None:
        while not hanging.requests:
            await asyncio.sleep(0.01)
    await asyncio.wait_for(asked(), 5)
    await session.close()  # as a killed process
    return session


async def left_mid_command(store, data_dir, workdir, call_id: str, printing: str = "", before=()) -> Session:
    """A session Tripane quit while its command `call_id` ran, once the command had printed
    `printing` (or, printing nothing, had started), after the replies `before`. A quit ends the
    command, as a kill would not."""
    code = f"print({printing!r}, flush=True); " if printing else ""
    command = f'"{sys.executable}" -c "import time; {code}time.sleep(60)"'
    session = make_session(store, data_dir, workdir, ScriptedModel([*before, reply("", call("shell_run", call_id,
                                                                                            command=command))]),
                           approval="all")
    session.start()
    kept = session.dir / "running" / (f"{call_id}.txt" if printing else f"{call_id}.pid")

    async def there() -> None:
        while not (kept.exists() and printing in kept.read_text(encoding="utf-8")):
            await asyncio.sleep(0.02)
    await asyncio.wait_for(there(), 10)
    await session.close()
    return session


async def test_a_run_left_mid_step_says_where_it_was_interrupted_when_it_goes_on(store, data_dir, workdir):
    session = await left_mid_step(store, data_dir, workdir)
    last = session.records[-1]

    reopened = Session.open(store, data_dir, session.id, finishing())
    assert reopened.state.status == "running"  # as the log left it
    await reopened.send("Go on.")
    assert await asyncio.wait_for(reopened.wait(), 10) == "done"

    [resumed] = events_of(reopened, SessionResumed)
    assert resumed.interrupted_at == last.ts
    assert render(next(r for r in reopened.records if r.event is resumed)).startswith(
        "  ▶ resumed after an interruption: Tripane closed or was stopped mid-run")
    progress_text = reopened.read_file(PROGRESS)[0]
    assert "▶ Run resumed after an interruption" in progress_text
    assert "may have been cut short" in progress_text

    # Paused and resumed in this process now: a plain resume, once.
    reopened.pause()
    await reopened.send("One more thing.")
    await asyncio.sleep(0.05)
    reopened.resume()
    await asyncio.wait_for(reopened.wait(), 10)
    assert [e.interrupted_at == "" for e in events_of(reopened, SessionResumed)] == [False, True]


async def test_a_run_that_starts_ends_or_waits_as_it_should_is_not_said_to_be_interrupted(store, data_dir, workdir):
    session = make_session(store, data_dir, workdir, finishing())
    assert await session.run() == "done"  # a new session's first run
    reopened = Session.open(store, data_dir, session.id, finishing())
    await reopened.send("And once more.")  # an ended run, reopened and started again by a message
    assert await asyncio.wait_for(reopened.wait(), 10) == "done"
    assert events_of(reopened, SessionResumed) == []

    asking = ScriptedModel([reply("", call("shell_run", command="echo hi")), reply("", call("task_done", summary="ok"))])
    waiting = make_session(store, data_dir, workdir, asking, approval="ask")
    waiting.start()
    question = await wait_for_question(waiting)
    await waiting.close()  # Tripane closed while it waited for the person: nothing was cut short
    reopened = Session.open(store, data_dir, waiting.id, asking)
    await reopened.approve(question.qid, approved=True)
    assert await asyncio.wait_for(reopened.run(), 10) == "done"
    assert events_of(reopened, SessionResumed) == []


async def test_a_session_no_run_drives_is_stopped_where_it_is_without_a_run(store, data_dir, workdir):
    from core.events import SessionEnded, ToolResult

    session = await left_mid_step(store, data_dir, workdir)
    model = finishing()
    reopened = Session.open(store, data_dir, session.id, model)
    assert reopened.stop_unrun()
    assert reopened.state.status == "ended:aborted" and model.requests == []  # no step taken to stop it
    assert [e.summary for e in events_of(reopened, SessionEnded)] == ["Stopped by the person."]
    assert events_of(reopened, SessionResumed) == []  # it was not resumed
    assert "Session ended: stopped" in reopened.read_file(PROGRESS)[0]
    assert not reopened.stop_unrun()  # ended already

    asking = ScriptedModel([reply("", call("shell_run", "c1", command="echo hi"))])
    waiting = make_session(store, data_dir, workdir, asking, approval="ask")
    waiting.start()
    await wait_for_question(waiting)
    await waiting.close()  # closed while it waited for an approval: the title counted it ever after
    reopened = Session.open(store, data_dir, waiting.id, finishing())
    assert reopened.state.open_question is not None
    assert reopened.stop_unrun()
    assert reopened.state.open_question is None and reopened.state.status == "ended:aborted"
    [closed] = [e for e in events_of(reopened, ToolResult) if e.call_id == "c1"]
    assert not closed.ok and "Stopped by the person" in closed.content


async def test_a_command_left_running_tells_what_it_had_printed_whether_resumed_or_ended_unrun(store, data_dir,
                                                                                                 workdir):

    from core.events import ToolResult

    session = await left_mid_command(store, data_dir, workdir, "m1", printing="migrated 3 of 5")
    reopened = Session.open(store, data_dir, session.id, finishing())
    assert reopened.stop_unrun()  # the person ends it without running it
    [result] = events_of(reopened, ToolResult)
    assert result.content == ("Stopped by the person before this call finished.\n\n"
                              "What it had printed by then (the end):\nmigrated 3 of 5")
    assert not (session.dir / "running" / "m1.txt").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
def test_a_commands_group_counts_as_running_until_its_processes_end_not_until_they_are_reaped(tmp_path):
    """A killed command's processes stay zombies until reaped (in a container, perhaps never): at the
    person's Stop, its killed group read as still running. Nor is a group given the id since its."""
    import signal

    from core.agent.running_calls import RunningCall, still_running

    sleeper = stand_in()
    try:
        RunningCall(tmp_path, "c1").started(sleeper.pid)
        assert still_running(tmp_path, "c1") == sleeper.pid
        # The same id kept an hour before: a group of that id now is another's, given the id since.
        kept = tmp_path / "running" / "c1.pid"
        os.utime(kept, (time.time() - 3600, time.time() - 3600))
        assert still_running(tmp_path, "c1") is None
        os.utime(kept)
        os.killpg(sleeper.pid, signal.SIGKILL)
        while not _is_zombie(sleeper.pid):
            time.sleep(0.01)
        assert still_running(tmp_path, "c1") is None  # ended, though not yet reaped
    finally:
        sleeper.kill()
        sleeper.wait()
    assert still_running(tmp_path, "c1") is None


def _is_zombie(pid: int) -> bool:
    from core.processes import processes

    return any(p.pid == pid and p.ended for p in processes() or ())


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
async def test_a_command_that_outlived_tripane_is_said_to_run_on_when_the_run_goes_on(store, data_dir, workdir):

    from core.agent.running_calls import RunningCall
    from core.events import ToolResult

    session = await left_mid_command(store, data_dir, workdir, "m1")  # a kill would have left the command running:
    migration = stand_in()
    try:
        RunningCall(session.dir, "m1").started(migration.pid)
        reopened = Session.open(store, data_dir, session.id, finishing())
        await reopened.send("Go on.")
        assert await asyncio.wait_for(reopened.wait(), 10) == "done"
    finally:
        migration.kill()
        migration.wait()
    [result] = events_of(reopened, ToolResult)[:1]
    assert result.content.endswith(
        f"so its effect is unknown. Check the current state before you repeat it. It is still running, as process "
        f"group {migration.pid}, though what it prints no longer reaches you: do not start it again; wait for what it "
        f"writes, or stop it first with kill -- -{migration.pid}.")


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
async def test_tripane_show_says_what_a_session_stopped_mid_run_left_unfinished(store, data_dir, workdir, capsys):
    """It printed the call and nothing after: neither that the run had stopped, nor how far the
    command had got, nor that it still ran; the window's card says all three."""

    from core.agent.running_calls import RunningCall

    session = await left_mid_command(store, data_dir, workdir, "b1", printing="step 4 of 9")  # a kill would have
    with standing_in() as build:
        RunningCall(session.dir, "b1").started(build.pid)
        shown = await shown_by_tripane_show(data_dir, session.id, capsys)
    assert (f"  … shell_run unfinished: the run stopped; its command still runs without Tripane, as process group "
            f"{build.pid} (kill -- -{build.pid})\n  │ step 4 of 9\n"
            f"○ interrupted mid-run: tripane resume {session.id} goes on from here\n") in shown


async def left_a_server_running(store, data_dir, workdir):
    """A session Tripane quit mid-command, whose earlier command "s1" (`echo serving on 8000`) had
    left a server running that the quit did not stop (as a kill leaves it: a process in a group of
    its own stands for it). The session, and the server's process, for the caller to kill."""
    session = await left_mid_command(store, data_dir, workdir, "b1",
                                     before=[reply("", call("shell_run", "s1", command="echo serving on 8000"))])
    server = stand_in()
    kept_as_left_running(session.dir, "s1", server)
    return session, server


async def shown_by_tripane_show(data_dir, session_id: str, capsys) -> str:
    """What `tripane show SESSION` prints (run on a thread: it opens the store on its own)."""
    from core.cli import main

    capsys.readouterr()
    assert await asyncio.to_thread(main, ["--data-dir", str(data_dir), "show", session_id]) == 0
    return capsys.readouterr().out


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
async def test_tripane_show_says_what_a_command_left_running_still_runs(store, data_dir, workdir, capsys):
    """A dev server the agent started, which a killed Tripane's run never stopped: the window's
    card of its command says so; so does `tripane show`."""
    session, server = await left_a_server_running(store, data_dir, workdir)
    try:
        shown = await shown_by_tripane_show(data_dir, session.id, capsys)
    finally:
        server.kill()
        server.wait()
    assert (f"  ⚠ what `echo serving on 8000` left running still runs without Tripane, as process group {server.pid} "
            f"(kill -- -{server.pid}); resuming or ending the session stops it\n"
            f"○ interrupted mid-run: tripane resume {session.id} goes on from here\n") in shown


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups to ask")
async def test_the_agent_is_told_that_the_server_it_left_running_was_stopped_at_the_resume(store, data_dir, workdir):
    """Told that a server runs until the run ends, the agent resumed after a kill found it gone
    (stopped at the resume, as that run's end would have), and nothing said why."""
    session, server = await left_a_server_running(store, data_dir, workdir)
    try:
        model = finishing()
        reopened = Session.open(store, data_dir, session.id, model)
        await reopened.send("Go on.")
        assert await asyncio.wait_for(reopened.wait(), 10) == "done"
        assert server.wait(timeout=10) == -9
    finally:
        server.kill()
        server.wait()
    [stopped] = events_of(reopened, BackgroundStopped)
    assert stopped == BackgroundStopped(("echo serving on 8000",), interrupted=True)
    told = [m["content"] for m in model.requests[0].messages if m["role"] == "user"]
    assert ("[Tripane stopped mid-run, and this run goes on from there. What your commands had left running in the "
            "background was stopped now, as the end of that run would have stopped it: what `echo serving on 8000` "
            "started. Start it again if you still need it.]") in told
    assert render(next(r for r in reopened.records if r.event is stopped)) == (
        "  ⏹ stopped what `echo serving on 8000` had left running in the background, as the run went on after the "
        "interruption")
