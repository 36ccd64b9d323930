"""A data folder an earlier Tripane wrote opens with this one: its database migrated, its session
replayed as it was recorded, and what this version keeps that the earlier did not is said to be
missing, not taken for nothing. The folder is real: tests/data/earlier_c161ab6 (see its README)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from core.changes import changes_line
from core.events import SessionEnded, SessionStarted, ToolResult
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from core.store import Store, StoreError
from tests.support.marks import needs_git

EARLIER = Path(__file__).resolve().parents[1] / "data" / "earlier_c161ab6"
SESSION_ID = "20261128-011418-8637"
RECORDED_IN = "/earlier/work"  # the work folder the earlier version ran in


def earlier_data_folder(tmp_path: Path) -> tuple[Path, Path]:
    """The earlier data folder in `tmp_path/data`, its work folder moved to `tmp_path/work` (as the
    session left it); both paths."""
    data_dir, workdir = tmp_path / "data", tmp_path / "work"
    shutil.copytree(EARLIER, data_dir)
    workdir.mkdir(exist_ok=True)
    (workdir / "hello.py").write_text("print('hello, world')\n")
    with sqlite3.connect(data_dir / "tripane.db") as db:  # (the log names the folder it ran in)
        db.execute("UPDATE events SET data = replace(data, ?, ?)", (RECORDED_IN, workdir.as_posix()))
    db.close()
    return data_dir, workdir


@pytest.fixture
def earlier_store(tmp_path: Path):
    data_dir, workdir = earlier_data_folder(tmp_path)
    store = Store(data_dir / "tripane.db")
    yield store, data_dir, workdir
    store.close()


def test_the_earlier_database_opens_and_its_session_replays_as_recorded(earlier_store):
    store, data_dir, workdir = earlier_store
    [row] = store.sessions()
    assert (row.id, row.status, row.task) == (SESSION_ID, "ended:done", "Write hello.py and test it")
    assert row.workdir == workdir.as_posix()  # (filled in from the log by this version's migration)

    session = Session.open(store, data_dir, SESSION_ID, ScriptedModel([]))
    assert session.state.status == "ended:done" and session.state.turn == 10
    assert isinstance(session.records[-1].event, SessionEnded)
    assert changes_line(session.records) == "Changed in the work folder: hello.py (created); 3 shell commands ran"
    offloaded = data_dir / "sessions" / SESSION_ID / "offload" / "turn0005-call_shell_run.txt"
    assert offloaded.read_text().splitlines()[-3:] == ["3000", "", "[exit code 0]"]


@needs_git
def test_changes_it_kept_no_copy_of_are_said_to_be_missing_not_none(earlier_store):
    store, data_dir, _workdir = earlier_store
    session = Session.open(store, data_dir, SESSION_ID, ScriptedModel([]))
    # The earlier version kept no copy of hello.py, nor of the work folder before the commands:
    # nothing can be listed, and the window and `tripane changes` said nothing had changed.
    assert session.changed_files() == []
    not_listed = session.changes_not_listed()
    assert not_listed.files == ("Not listed: hello.py (created), changed by the agent's file tools as the log says; "
                                "no copy of it was kept, so it cannot be put back from here.")
    assert not_listed.commands == ("What the 3 shell commands changed is not listed: no copy of the work folder was "
                                   "made before them.")
    assert not_listed.text().endswith(" This session was recorded by an earlier version of Tripane, which kept no "
                                      "such copies.")


@needs_git
async def test_going_on_with_it_keeps_this_versions_copies_from_then_on(earlier_store):
    store, data_dir, workdir = earlier_store
    model = ScriptedModel([reply("", call("file_read", path="offload:turn0005-call_shell_run.txt", offset=2990)),
                           reply("", call("file_write", path="notes.md", content="# Notes\n")),
                           reply("", call("shell_run", command="echo more >> notes.md")),
                           reply("", call("task_done", summary="notes written"))])
    session = Session.open(store, data_dir, SESSION_ID, model)
    await session.send("Also write notes.md")
    assert await session.wait() == "done"

    # The new turns are told on from the old ones, in one conversation, its offloaded output read back.
    first = model.requests[0].messages
    assert any("hello.py" in str(message.get("content", "")) for message in first)
    read_back = [r.event for r in session.records if isinstance(r.event, ToolResult) and r.event.name == "file_read"]
    assert read_back[-1].ok and "2999\n3000" in read_back[-1].content
    assert (workdir / "notes.md").read_text() == "# Notes\nmore\n"
    assert [(c.path, c.what()) for c in session.changed_files()] == [("notes.md", "created")]
    # hello.py is still told as missing, with no reason guessed: the session keeps copies now.
    not_listed = session.changes_not_listed()
    assert not_listed.files.startswith("Not listed: hello.py (created)") and not not_listed.earlier


def test_a_database_a_later_version_wrote_opens_and_its_new_sessions_say_to_update(earlier_store, capsys):
    """The person went back to this version after a later one: a column it added is passed over
    (this version's list of sessions raised a TypeError, as Tripane before the work folder's column
    did on this one's database), and a session holding a kind of event this version does not know
    is refused with why and what to do, left as it is."""
    store, data_dir, _workdir = earlier_store
    store.db.execute("ALTER TABLE sessions ADD COLUMN pinned_by TEXT DEFAULT 'someone'")
    store.db.execute("INSERT INTO events (session_id, seq, ts, kind, data) VALUES (?, 46, '2027-01-01T00:00:00', "
                     "'session_archived', '{\"by\": \"person\"}')", [SESSION_ID])
    [row] = store.sessions()
    assert row.id == SESSION_ID and store.find_session("20261128").id == SESSION_ID

    with pytest.raises(StoreError) as refused:
        Session.open(store, data_dir, SESSION_ID, ScriptedModel([]))
    assert str(refused.value) == (
        f"Session {SESSION_ID} was recorded by a later version of Tripane: its event 46 is of a kind this version "
        "does not know ('session_archived'). Update Tripane to open it; the session is left as it is.")
    assert store.read("SELECT COUNT(*) FROM events WHERE session_id = ?", [SESSION_ID]) == [(46,)]

    from core import cli

    assert cli.main(["--data-dir", str(data_dir), "show", SESSION_ID]) == cli.EXIT_USAGE  # (as for any StoreError)
    assert "was recorded by a later version of Tripane" in capsys.readouterr().err


def test_a_session_the_earlier_version_starts_after_this_one_opened_the_database_has_its_folder(earlier_store,
                                                                                                tmp_path):
    """Both versions in use: this one added the work folder's column, then the earlier one started a
    session and wrote its row without it. The list's search by folder and New session's folders
    missed that session; the next open fills it in from the log."""
    store, data_dir, _workdir = earlier_store
    store.db.execute("INSERT INTO sessions (id, created, updated, task, title, status, model) VALUES "
                     "('20261128-012213-f1ad', '2026-11-28T01:22:13', '2026-11-28T01:22:13', 'Read the chunks', "
                     "'Read the chunks', 'waiting', 'openai/trial')")
    store.append("20261128-012213-f1ad", SessionStarted(task="Read the chunks", model="openai/trial",
                                                        workdir=str(tmp_path / "chunks")))
    assert store.session("20261128-012213-f1ad").workdir == ""
    store.close()
    again = Store(data_dir / "tripane.db")
    try:
        assert again.session("20261128-012213-f1ad").workdir == str(tmp_path / "chunks")
        assert again.session(SESSION_ID).workdir == str(tmp_path / "work")  # (the others as they were)
    finally:
        again.close()
