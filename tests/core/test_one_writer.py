"""One process drives a session at a time (the window, `tripane run`, `tripane resume`); another
process refuses to write to it meanwhile, and takes in what was written before it writes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from core.memory.working import FINDINGS, PLAN, WriteRefused
from core.paths import RUN_LOCK
from core.run_lock import live_status
from core.scripted import ScriptedModel, call, reply
from core.session import Session, SessionBusy
from tests.core.helpers import make_session, wait_for_question

HOLD = ("import sys, time\nfrom filelock import FileLock\nlock = FileLock(sys.argv[1])\nlock.acquire()\n"
        "print('held', flush=True)\ntime.sleep(120)\n")


async def test_a_session_another_process_runs_refuses_every_write_and_loses_nothing(store, data_dir, workdir):
    model = ScriptedModel([reply("", call("human_ask", question="Which license?", options=["MIT", "GPL"]))],
                          default=reply("", call("task_done", summary="licensed")))
    session = make_session(store, data_dir, workdir, model)
    session.start()
    question = await wait_for_question(session)
    await session.close()  # as when the window closes with the question open
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(session.dir / RUN_LOCK)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"  # another Tripane runs it now
        before = len(store.records(session.id))
        with pytest.raises(SessionBusy, match="being run by another Tripane"):
            await session.answer(question.qid, "MIT")
        with pytest.raises(SessionBusy):
            await session.send("Use MIT.")
        with pytest.raises(SessionBusy):
            session.resume()
        with pytest.raises(SessionBusy):
            session.edit_file(PLAN, "# Plan\n", session.state.files[PLAN].version)
        with pytest.raises(SessionBusy):
            session.pin(PLAN, ["## Goal"])
        # The running process writes the files: opening the session meanwhile does not take its
        # write (not yet recorded) for an edit made outside Tripane.
        session.file_path(FINDINGS).write_text("# Findings\n- being written by the other run\n", encoding="utf-8")
        Session.open(store, data_dir, session.id, model)
        assert len(store.records(session.id)) == before and not session.running
    finally:
        other.kill()  # it dies holding the lock: the system frees it
        other.wait()
    await session.answer(question.qid, "MIT")
    session.start()
    assert await session.wait() == "done"
    # Once this process runs it, the change on disk is taken in, once, as an edit from outside.
    outside = [r.event for r in store.records(session.id) if getattr(r.event, "author", "") == "external"]
    assert [e.file for e in outside] == [FINDINGS]


async def test_what_another_process_wrote_is_taken_in_before_this_one_writes(store, data_dir, workdir):
    session = make_session(store, data_dir, workdir, ScriptedModel([], default=reply("", call("task_done", summary="a"))))
    assert await session.run() == "done"
    window_model = ScriptedModel([], default=reply("", call("task_done", summary="c")))
    window = Session.open(store, data_dir, session.id, window_model)  # showing the session
    told = []
    window.subscribe(told.append)

    terminal = Session.open(store, data_dir, session.id, ScriptedModel(
        [reply("", call("findings_add", title="Changelog", body="Kept in CHANGES.md"))],
        default=reply("", call("task_done", summary="b"))))
    await terminal.send("Also note where the changelog is.")
    assert await terminal.wait() == "done"
    findings = terminal.state.files[FINDINGS].version

    await window.send("Now the README.")  # the window's view was stale: it catches up first
    assert await window.wait() == "done"
    stored = store.records(session.id)
    assert [r.seq for r in window.records] == [r.seq for r in stored]  # nothing missed, nothing twice
    assert window.journal.history.messages == Session.open(store, data_dir, session.id, window_model).journal.history.messages
    assert "Also note where the changelog is." in json.dumps(window_model.requests[0].messages)
    assert any(getattr(n, "seq", None) == stored[-1].seq for n in told)  # and the views were told
    # The files' versions came along: an edit from the old version is refused, from the new one taken.
    with pytest.raises(WriteRefused):
        window.edit_file(FINDINGS, "# Findings\n", findings - 1)
    assert window.edit_file(FINDINGS, "# Findings\n", findings).version == findings + 1


class Hanging(ScriptedModel):
    """A model that never answers: the session stays mid-run until it is closed."""

    async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
        self.requests.append(request)
        await asyncio.Event().wait()


async def test_a_run_nobody_drives_any_more_is_listed_as_interrupted(store, data_dir, workdir):
    model = Hanging([])
    session = make_session(store, data_dir, workdir, model)
    session.start()
    while not model.requests:
        await asyncio.sleep(0.01)

    def listed() -> str:
        return next(row.status for row in live_status(data_dir, store.sessions()) if row.id == session.id)

    assert listed() == "running"  # this process runs it
    await session.close()  # the window closes mid-run
    assert store.session(session.id).status == "running" and listed() == "interrupted"
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(session.dir / RUN_LOCK)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        assert listed() == "running"  # another process runs it
    finally:
        other.kill()
        other.wait()
    assert listed() == "interrupted"
