"""A dev server the agent started, left running for the person when the task ends done in a
window: the person asked for a server to try, and the agent finished by saying where it is. Before,
it was stopped as the run ended, and the page the agent pointed to was gone."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import pytest

from core.agent.loop import LoopSettings
from core.agent.running_calls import left_running_by_call, stop_left_running
from core.events import (
    BackgroundKept,
    BackgroundStopped,
    FilesChangedOutside,
    SessionEnded,
    ToolResult,
)
from core.render import render
from core.scripted import ScriptedModel, call, reply
from core.session import delete_session
from tests.core.helpers import events_of, make_session, wait_for_question
from tests.core.test_interrupted_run import shown_by_tripane_show
from tests.core.tools.test_shell_and_web import BEATING, still_beating
from tests.support.processes import kept_as_left_running, standing_in

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="on Windows what a command leaves running is the "
                                                                "agent's to stop: Tripane neither stops nor keeps it")

IN_A_WINDOW = LoopSettings(keeps_left_running=True)
COMMAND = f'"{sys.executable}" serve.py'


def serving(store, data_dir, workdir, *then, settings=IN_A_WINDOW):
    (workdir / "serve.py").write_text(BEATING, encoding="utf-8")
    model = ScriptedModel([reply("Starting it.", call("shell_run", call_id="serve", command=COMMAND)),
                           reply("", call("task_done", summary="It serves the page.")), *then])
    return make_session(store, data_dir, workdir, model, approval="all", settings=settings), model


async def test_a_server_runs_on_for_the_person_when_the_task_is_done(store, data_dir, workdir):
    session, model = serving(store, data_dir, workdir, reply("", call("task_done", summary="Looked again.")))
    assert await session.run() == "done"
    assert await still_beating(workdir)  # the page the agent pointed to is there
    result = events_of(session, ToolResult)[0].content
    assert "unless the task is done with it running: then it is left running for the person" in result
    [kept] = [record for record in session.records if isinstance(record.event, BackgroundKept)]
    ended = next(record for record in session.records if isinstance(record.event, SessionEnded))
    assert kept.event == BackgroundKept((COMMAND,), ("serve",)) and kept.seq > ended.seq
    assert not events_of(session, BackgroundStopped)
    assert render(kept).startswith(f"  ⏵ what `{COMMAND}` left running in the background keeps running for you now the "
                                     "task is done, until you stop it or quit Tripane")
    assert (f"⏵ Left running for the person as the task ended: what commands had started in the background\n"
            f"- `{COMMAND}`\n") in (session.dir / "progress.md").read_text(encoding="utf-8")
    assert session.kept_running() == [COMMAND]
    assert "serve" in left_running_by_call(session.dir)  # its card offers to stop it; a killed Tripane's next too

    # The session goes on: the agent is told the server runs, and the next run's end leaves it be.
    await session.send("Does it still serve?")
    assert await session.run() == "done"
    told = [m["content"] for m in model.requests[-1].messages if m["role"] == "user"]
    assert any(text.startswith("[Your task ended with what your commands had left running in the background still "
                               f"running: what `{COMMAND}` started. It runs on for the person") for text in told)
    assert await still_beating(workdir)
    assert len(events_of(session, BackgroundKept)) == 1  # (said once)
    # The log it writes is not blamed on the person alone.
    [outside] = [event for event in events_of(session, FilesChangedOutside) if "beat" in event.changed]
    assert outside.by() == "the person, another program, or a process your commands left running"

    # Tripane quits: it goes, and the agent, should the session go on another day, knows.
    assert await session.stop_kept() == [COMMAND]
    assert not await still_beating(workdir)
    assert events_of(session, BackgroundStopped) == [BackgroundStopped((COMMAND,), by="quit")]
    assert session.kept_running() == [] and left_running_by_call(session.dir) == {}
    assert not any((session.dir / "running").iterdir())
    assert "⏹ Stopped as Tripane quit" in (session.dir / "progress.md").read_text(encoding="utf-8")
    assert await session.stop_kept() == []  # nothing twice


async def test_a_terminals_run_stops_it_as_before(store, data_dir, workdir):
    session, _ = serving(store, data_dir, workdir, settings=LoopSettings())
    assert await session.run() == "done"
    assert not await still_beating(workdir)
    assert events_of(session, BackgroundStopped) == [BackgroundStopped((COMMAND,))]
    assert not events_of(session, BackgroundKept) and session.kept_running() == []
    assert "It is stopped when this run ends (to let the person try it, ask them, with human_ask, while it runs)" \
        in events_of(session, ToolResult)[0].content


async def test_a_task_that_did_not_end_done_stops_it(store, data_dir, workdir):
    """A failed or stopped run's server is debris, not what the person asked for."""
    (workdir / "serve.py").write_text(BEATING, encoding="utf-8")
    model = ScriptedModel([reply("", call("shell_run", call_id="serve", command=COMMAND)),
                           reply("", call("human_ask", question="Go on?", options=["yes"]))])
    session = make_session(store, data_dir, workdir, model, approval="all", settings=IN_A_WINDOW)
    session.start()
    await wait_for_question(session, timeout=30)
    session.stop()
    assert await session.wait() == "aborted"
    assert not await still_beating(workdir)
    assert events_of(session, BackgroundStopped) == [BackgroundStopped((COMMAND,))]
    assert not events_of(session, BackgroundKept)


async def test_the_person_stops_it_from_its_card_and_the_agent_is_told(store, data_dir, workdir):
    session, model = serving(store, data_dir, workdir, reply("", call("task_done", summary="Noted.")))
    assert await session.run() == "done"
    assert stop_left_running(session.dir, "serve")  # what the card's Stop it does
    await session.left_running_stopped("serve")
    assert not await still_beating(workdir)
    assert events_of(session, BackgroundStopped) == [BackgroundStopped((COMMAND,), by="person")]
    assert session.kept_running() == []
    await session.send("I stopped it.")
    assert await session.run() == "done"
    told = [m["content"] for m in model.requests[-1].messages if m["role"] == "user"]
    assert (f"[The person stopped what your commands had left running in the background: what `{COMMAND}` started. "
            "Start it again if you still need it.]") in told
    assert await session.stop_kept() == []  # (gone already: not said again at the quit)


async def test_what_a_killed_tripane_kept_for_the_person_stops_at_the_next_quit(store, data_dir, workdir, capsys):
    session, _ = serving(store, data_dir, workdir, settings=LoopSettings())
    assert await session.run() == "done"
    with standing_in() as process:  # a server kept by a Tripane killed after the task's end
        kept_as_left_running(session.dir, "serve", process)
        session.journal.record(BackgroundKept((COMMAND,), ("serve",)))
        assert session.kept_running() == [COMMAND]  # the quit question names it
        shown = await shown_by_tripane_show(data_dir, session.id, capsys)  # and so does the terminal
        assert (f"  ⚠ what `{COMMAND}` left running still runs, as process group {process.pid} (kill -- "
                f"-{process.pid})\n") in shown
        assert await session.stop_kept() == [COMMAND]
        assert process.wait(timeout=10) is not None


async def test_deleting_a_session_stops_what_runs_on_for_it(store, data_dir, workdir):
    session, _ = serving(store, data_dir, workdir, settings=LoopSettings())
    assert await session.run() == "done"
    with standing_in() as process:
        kept_as_left_running(session.dir, "serve", process)
        delete_session(store, data_dir, session.id)
        assert process.wait(timeout=10) is not None  # not left with nothing to say it runs


async def test_a_server_that_ended_by_itself_is_not_said_to_run_on(store, data_dir, workdir):
    session, _ = serving(store, data_dir, workdir)
    assert await session.run() == "done"
    [group] = left_running_by_call(session.dir).values()
    os.killpg(group, signal.SIGKILL)  # (it crashed, or the person stopped it in a terminal)
    for _ in range(100):
        if not session.kept_running():
            break
        await asyncio.sleep(0.05)
    assert session.kept_running() == []  # not in the quit question
    assert await session.stop_kept() == []  # nor said to be stopped
