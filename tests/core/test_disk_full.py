"""A full disk: the run stops where it was and says so, nothing saved is lost, and once there is
room the run goes on from the log, as after a crash.

The disk filling is SQLite's own: a page limit on the connection (PRAGMA max_page_count) makes it
answer SQLITE_FULL, "database or disk is full", exactly as a full disk does."""

from __future__ import annotations

import errno
import hashlib
import sqlite3

import pytest

from core import big_text
from core.events import SessionEnded, ToolResult
from core.memory.working import PROGRESS
from core.scripted import ScriptedModel, call, reply
from core.store import DiskFull, as_disk_full
from tests.core.helpers import events_of, make_session

NO_LIMIT = 1_073_741_823  # SQLite's default max_page_count


def fill_disk(store) -> None:
    """From now on the database has no room for one more page."""
    pages = store.db.execute("PRAGMA page_count").fetchone()[0]
    store.db.execute(f"PRAGMA max_page_count = {pages}")


def make_room(store) -> None:
    store.db.execute(f"PRAGMA max_page_count = {NO_LIMIT}")


def test_the_store_says_which_disk_ran_out_of_room(store, data_dir):
    store.create_session("s1", task="t", model="m")
    fill_disk(store)
    with pytest.raises(DiskFull, match=r"The disk holding .* ran out of room") as raised:
        store.create_session("s2", task="x" * 20_000, model="m")
    assert raised.value.folder == store.path.parent
    assert "Free some space" in str(raised.value)
    make_room(store)
    assert [row.id for row in store.sessions()] == ["s1"]  # the refused write left nothing behind


async def test_a_run_stops_where_the_disk_filled_and_goes_on_from_there_once_there_is_room(store, data_dir, workdir):
    (workdir / "notes.txt").write_text("the answer is 42\n", encoding="utf-8")

    def fills_the_disk(request):
        fill_disk(store)
        return reply("Reading the notes. " + "Long thoughts. " * 2000, call("file_read", "r1", path="notes.txt"))

    model = ScriptedModel([reply("", call("findings_add", title="start", body="begun")), fills_the_disk,
                           reply("Reading them again.", call("file_read", "r2", path="notes.txt")),
                           reply("Done.", call("task_done", summary="read the notes"))])
    session = make_session(store, data_dir, workdir, model)
    with pytest.raises(DiskFull, match="ran out of room"):
        await session.run()

    # What this process holds is what the log holds: nothing half-recorded, the files as logged.
    logged = list(store.read_records(session.id))
    assert [r.seq for r in logged] == [r.seq for r in session.records]
    assert not session.state.ended and not session.running
    progress_file = session.memory.path(PROGRESS).read_bytes()
    assert hashlib.sha256(progress_file).hexdigest() == session.state.files[PROGRESS].sha256

    make_room(store)
    assert await session.run() == "done"
    assert events_of(session, SessionEnded)[-1].status == "done"
    assert any(r.ok and "the answer is 42" in r.content for r in events_of(session, ToolResult))
    # The reply the disk could not take is not in the log; the model was asked again from before it.
    assert "Long thoughts" not in str(model.requests[-1].messages)


def test_a_full_disk_is_recognised_under_every_name_it_goes_by(tmp_path):
    written = tmp_path / "offload" / "turn0001.txt"
    no_room = OSError(errno.ENOSPC, "No space left on device", str(written))
    assert as_disk_full(no_room, None).folder == written.parent  # the folder of the file that did not fit
    sqlite_full = sqlite3.OperationalError("database or disk is full")
    assert as_disk_full(sqlite_full, tmp_path).folder == tmp_path
    try:
        try:
            raise no_room
        except OSError as cause:
            raise RuntimeError("writing the offload failed") from cause
    except RuntimeError as wrapped:
        assert as_disk_full(wrapped, tmp_path) is not None  # found under what wrapped it
    assert as_disk_full(OSError(errno.EACCES, "Permission denied"), tmp_path) is None
    assert as_disk_full(sqlite3.OperationalError("database is locked"), tmp_path) is None


def test_a_big_write_that_fails_midway_leaves_no_cut_off_file(tmp_path):
    target = tmp_path / "out.txt"
    text = "fine line\n" * (big_text.SLICE // 5) + "\udcff cannot be written"  # fails in a later slice
    with pytest.raises(UnicodeEncodeError):
        big_text.write(target, text)
    assert not target.exists()


def test_the_command_line_says_which_disk_is_full_and_exits_1_not_2(monkeypatch, capsys, tmp_path):
    from core import cli

    memory_file = tmp_path / "memory" / "MEMORY.md"

    async def no_room(args):  # long-term memory's first write, as on a full disk
        raise OSError(errno.ENOSPC, "No space left on device", str(memory_file))

    monkeypatch.setattr(cli, "_dispatch", no_room)
    assert cli.main(["--data-dir", str(tmp_path), "resume", "20260101-000000-abcd"]) == cli.EXIT_FAILED
    err = capsys.readouterr().err
    assert f"The disk holding {memory_file.parent} ran out of room" in err and "Traceback" not in err


async def test_an_approved_command_whose_end_found_no_room_is_not_run_again_by_the_next_run(store, data_dir, workdir):
    import asyncio
    import sys

    from tests.core.helpers import wait_for_question

    # Its output (3,000 characters, 9,000 bytes) needs pages of its own, and there are none.
    command = f'echo run >> runs.txt; "{sys.executable}" -c "import time; time.sleep(0.3); print(3000 * chr(0x4e2d))"'
    model = ScriptedModel([reply("", call("shell_run", "c1", command=command))],
                          default=reply("", call("task_done", summary="checked")))
    session = make_session(store, data_dir, workdir, model, approval="ask")
    session.start()
    question = await wait_for_question(session)
    await session.answer(question.qid, "approve")
    while not session.running_tools():
        await asyncio.sleep(0.01)
    fill_disk(store)
    with pytest.raises(DiskFull):
        await session.wait()
    assert "c1" in session.state.pending_calls  # its end is not in the log

    make_room(store)
    session.resume()  # in this process, which saw the approval given and acted on
    assert await session.wait() == "done"
    assert (workdir / "runs.txt").read_text().count("run") == 1  # not run a second time
    interrupted = [r for r in events_of(session, ToolResult) if r.call_id == "c1"]
    assert [r.ok for r in interrupted] == [False]
    assert "Tripane stopped while this call was in progress" in interrupted[0].content


def test_output_that_cannot_be_kept_while_a_command_runs_costs_the_command_nothing(tmp_path, monkeypatch, caplog):
    from pathlib import Path

    from core.agent.running_calls import RunningCall, left_unfinished

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    printed = RunningCall(tmp_path, "call/1")
    printed.add("step 1\n")
    assert left_unfinished(tmp_path, "call/1") == ("step 1\n", None)  # (a name safe on every system)
    monkeypatch.setattr(Path, "write_text", full)
    for line in ("step 2\n", "step 3\n"):
        printed.add(line)  # no error reaches the command; said once in the log
    assert [r.message for r in caplog.records].count(
        "what call_1 prints cannot be kept while it runs: [Errno 28] No space left on device") == 1
    assert printed.tail == "step 1\nstep 2\nstep 3\n"


def test_kept_output_that_cannot_be_removed_is_left_and_the_call_goes_on(tmp_path, monkeypatch, caplog):
    """On Windows a virus scanner may hold the file open: unlinking it raises PermissionError."""
    from pathlib import Path

    from core.agent.running_calls import RunningCall, left_unfinished

    printed = RunningCall(tmp_path, "c1")
    printed.add("step 1\n")

    def held(self, missing_ok=False):
        raise PermissionError(13, "The process cannot access the file because it is being used by another process")

    monkeypatch.setattr(Path, "unlink", held)
    printed.discard()
    assert left_unfinished(tmp_path, "c1") == ("step 1\n", None)
    assert sum("cannot be removed" in r.message for r in caplog.records) == 3  # (at the resume: .txt and .pid)
