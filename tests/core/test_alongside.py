"""Another session at work in the folder a new one starts in: the new agent is told, and so is the
person (in a terminal here; the window's dialog in tests/gui/test_alongside.py)."""

from __future__ import annotations

import asyncio
import sys

import pytest

from core.alongside import alongside_note, alongside_words, at_work_in
from core.events import FilesChangedOutside
from core.render import render
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from core.store import SessionRow
from tests.core.helpers import events_of, make_session, wait_for_question


def asking() -> ScriptedModel:
    return ScriptedModel([reply("", call("human_ask", question="Which parser?")),
                          reply("", call("task_done", summary="ok"))])


def facts_of(model: ScriptedModel) -> str:
    return model.requests[0].messages[0]["content"].split("# This session", 1)[1]


async def test_an_agent_starting_where_another_waits_for_the_person_is_told_of_it(store, data_dir, workdir):
    waiting = make_session(store, data_dir, workdir, asking(), task="Fix the parser")
    waiting.start()
    await wait_for_question(waiting)
    (workdir / "web").mkdir()
    model = ScriptedModel([reply("", call("task_done", summary="ok"))])
    started = make_session(store, data_dir, workdir / "web", model, task="Restyle the page")  # within it
    assert started.state.config.alongside == ("“Fix the parser” (waiting for the person's answer)",)
    assert await started.run() == "done"
    assert ("\n- Other sessions' agents at work in this folder when this session started: “Fix the parser” "
            "(waiting for the person's answer). Files may change under you: read a file again before you edit it, and leave their "
            "changes be\n") in facts_of(model)
    # Ended, a session is at work nowhere; one in another folder was never told of
    elsewhere = make_session(store, data_dir, workdir.parent, ScriptedModel([]), task="Around it")
    assert elsewhere.state.config.alongside == ("“Fix the parser” (waiting for the person's answer)",)  # (its folder holds the work folder)
    apart = workdir.parent / "apart"
    apart.mkdir()
    assert make_session(store, data_dir, apart, ScriptedModel([])).state.config.alongside == ()
    await waiting.close()


async def test_a_session_whose_run_was_interrupted_is_not_at_work(store, data_dir, workdir):
    model = ScriptedModel([reply("", call("shell_run", command="sleep 30")), reply("", call("task_done", summary="ok"))])
    running = make_session(store, data_dir, workdir, model, task="Run the long tests", approval="all")
    running.start()
    while running.state.status != "running" or not model.requests:
        await asyncio.sleep(0.01)
    assert [row.title for row in at_work_in(data_dir, store.sessions(), workdir)] == ["Run the long tests"]
    await running.close()  # as Tripane quitting mid-run: the log still says running, no process runs it
    assert store.find_session(running.id).status == "running"
    assert at_work_in(data_dir, store.sessions(), workdir) == []
    fresh = make_session(store, data_dir, workdir, ScriptedModel([]))
    assert fresh.state.config.alongside == ()
    reopened = Session.open(store, data_dir, running.id, ScriptedModel([]))
    assert reopened.state.config.alongside == ()  # (what it was told at its start stays as it was)


async def test_a_change_another_sessions_agent_may_have_made_is_not_blamed_on_the_person_alone(
        store, data_dir, workdir):
    other = make_session(store, data_dir, workdir, asking(), task="Fix the parser")
    other.start()
    await wait_for_question(other)
    (workdir / "notes.md").write_text("# Notes\n", encoding="utf-8")

    def while_the_model_thinks(request):  # (as the other agent would, once answered)
        (workdir / "notes.md").write_text("# Notes\nthe parser's line\n", encoding="utf-8")
        return reply("", call("file_list", path="."))

    model = ScriptedModel([reply("", call("file_read", path="notes.md")), while_the_model_thinks,
                           reply("", call("task_done", summary="done"))])
    session = make_session(store, data_dir, workdir, model, task="Tidy the notes")
    assert await session.run() == "done"
    [told] = events_of(session, FilesChangedOutside)
    assert told.alongside == ("“Fix the parser” (waiting for the person's answer)",)
    assert ("not by your tools (by the person, the agent of “Fix the parser” (waiting for the person's answer) in "
            "this folder too, or another program): notes.md.") in str(model.requests[2].messages)
    assert "(maybe by the agent of “Fix the parser”" in render(next(r for r in session.records if r.event is told))
    await other.close()


def test_a_session_left_waiting_or_paused_says_since_when():
    def row(status: str, updated: str) -> SessionRow:
        return SessionRow("s", "2026-11-01T09:00:00+00:00", updated, "Fix it", "Fix it", status, "m", "/w")

    assert alongside_words([row("waiting", "2026-11-03T10:00:00.000+00:00"), row("paused", "2026-11-28T08:00:00+00:00"),
                            row("running", "2026-11-01T10:00:00+00:00"), row("waiting", "")], today="2026-11-28") == (
        "“Fix it” (waiting for the person's answer since 2026-11-03)", "“Fix it” (paused by the person)",
        "“Fix it” (running)",  # (a run is at work now, whenever it started)
        "“Fix it” (waiting for the person's answer)")  # (no time known: none said)


def test_the_person_is_told_which_sessions_and_what_to_do():
    assert alongside_note(()) == ""
    one = alongside_note(("“Fix the parser” (running)",))
    assert one == ("“Fix the parser” (running) works in this folder now, and two agents changing the same files "
                   "undo each other's work: another folder (a git worktree, a copy) keeps them apart. Started here, "
                   "its agent is told.")
    many = alongside_note(tuple(f"“T{i}” (paused)" for i in range(5)), started=True)
    assert many.startswith("“T0” (paused), “T1” (paused), “T2” (paused) and 2 more work in this folder now")
    assert many.endswith("this session's agent is told (another folder, a git worktree or a copy, would keep them "
                         "apart).")


@pytest.mark.skipif(sys.platform == "win32", reason="on Windows what a command leaves running is the agent's to stop: "
                                                    "nothing is kept for the person")
async def test_a_new_task_where_a_done_one_left_the_dev_server_running_is_told_to_leave_it_be(store, data_dir,
                                                                                               workdir):
    # "Start the dev server" ended done with it running, for the person to try the page; the next
    # task there ("now make the button blue") started it again, found the port taken, and could stop
    # the one the person had open.
    from core.alongside import folder_notes, served_alongside, served_note
    from tests.core.test_kept_running import COMMAND, serving

    served, _model = serving(store, data_dir, workdir)
    assert await served.run() == "done"
    named = f"`{COMMAND}` (left by “{store.session(served.id).title}”)"
    assert served_alongside(store, data_dir, workdir) == (named,)
    assert folder_notes(store, data_dir, workdir) == (f"{named} runs in this folder for you: started here, its agent "
                                                      "is told to leave it running.")
    model = ScriptedModel([reply("", call("task_done", summary="ok"))])
    (workdir / "web").mkdir()
    follow_up = make_session(store, data_dir, workdir / "web", model, task="Make the button blue")
    assert follow_up.state.config.served == (named,) and follow_up.state.config.alongside == ()
    assert served_note(follow_up.state.config.served, started=True) == (
        f"{named} runs in this folder for you: this session's agent is told to leave it running.")
    assert await follow_up.run() == "done"
    assert (f"\n- Running in this folder for the person, left by other sessions' tasks: {named}. Leave it running: "
            "the person may be using it, it may serve your changes as you make them, and a port it holds is taken\n"
            ) in facts_of(model)
    apart = workdir.parent / "apart"
    apart.mkdir()
    assert served_alongside(store, data_dir, apart) == ()
    assert await served.stop_kept() == [COMMAND]  # stopped: nothing left to tell of
    assert served_alongside(store, data_dir, workdir) == () and folder_notes(store, data_dir, workdir) == ""
