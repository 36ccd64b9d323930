"""The sessions' copies of their work folders are kept under a budget: the oldest removed first,
never one in use, and the session then says why what its commands changed is not listed."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import replace

import pytest

from core.copies import keep_under_budget, kept_copies
from core.run_lock import live_status
from core.session import CannotRun
from core.snapshot import SNAPSHOT_DIR, WorkFolderSnapshot
from tests.core.test_snapshot import CRLF, run_with_commands
from tests.support.marks import needs_git

pytestmark = needs_git

TODAY = dt.date(2026, 11, 27)


async def three_sessions(store, data_dir, workdir):
    """Three sessions whose copies take about 0.4 MB each (a file that does not compress)."""
    sessions = []
    for n in range(3):
        folder = workdir / f"project{n}"
        folder.mkdir()
        (folder / "blob.bin").write_bytes(os.urandom(400 * 1024))
        session, _model = await run_with_commands(store, data_dir, folder)
        sessions.append(session)
    return sessions


async def test_past_the_budget_the_oldest_copies_go_first_and_the_session_says_why(store, data_dir, workdir):
    oldest, middle, newest = await three_sessions(store, data_dir, workdir)
    rows = live_status(data_dir, store.sessions())
    sizes = {copy.session_id: copy.size for copy in kept_copies(data_dir, rows)}
    assert set(sizes) == {oldest.id, middle.id, newest.id} and all(size > 400 * 1024 for size in sizes.values())
    assert sum(sizes.values()) > 2**20  # over a budget of 1 MB, by one copy

    assert keep_under_budget(data_dir, rows, 0, today=TODAY) == []  # no cap
    assert keep_under_budget(data_dir, rows, 1, today=TODAY) == [oldest.id]
    assert not (oldest.dir / SNAPSHOT_DIR).exists() and (middle.dir / SNAPSHOT_DIR).is_dir()
    assert keep_under_budget(data_dir, rows, 1, today=TODAY) == []  # under it now

    # The session stays, what its file tools changed too; its commands' changes are said to be gone.
    assert [(c.path, c.what()) for c in oldest.changed_files()] == [("calc.py", "changed")]
    assert oldest.changes_not_listed().commands == (
        "What shell commands changed is not listed: the copy of the work folder made before the first command was "
        "removed on 2026-11-27, the oldest sessions' first, to keep such copies under 1.0 MB in all (Settings → "
        "Copies of work folders).")
    with pytest.raises(CannotRun, match="config.ini was not put back: config.ini was not changed by the agent's file"):
        oldest.put_back(["config.ini"])
    # Were the session to go on, its next command runs as one with no copy: nothing copied again.
    copy = WorkFolderSnapshot(oldest.dir)
    folder = workdir / "project0"
    copy.take(folder)
    copy.mark(folder)
    assert not copy.taken and copy.command_changes(folder, "c9") is None


async def test_a_copy_in_use_here_or_by_a_running_process_is_never_removed(store, data_dir, workdir):
    oldest, middle, newest = await three_sessions(store, data_dir, workdir)
    rows = [replace(row, status="running") if row.id == middle.id else row for row in store.sessions()]
    assert keep_under_budget(data_dir, rows, 1, in_use={oldest.id}, today=TODAY) == [newest.id]
    assert (oldest.dir / SNAPSHOT_DIR).is_dir() and (middle.dir / SNAPSHOT_DIR).is_dir()
    assert not (newest.dir / SNAPSHOT_DIR).exists()


async def test_a_copy_not_in_use_is_packed_and_reads_the_same(store, data_dir, workdir, monkeypatch):
    import core.snapshot as snapshot_module

    monkeypatch.setattr(snapshot_module, "PACK_LOOSE_OBJECTS", 4)  # (the project has a few files)
    idle, in_use, _newest = await three_sessions(store, data_dir, workdir)
    loose = lambda session: sum(1 for _ in (session.dir / SNAPSHOT_DIR / "objects").glob("[0-9a-f][0-9a-f]/*"))  # noqa: E731
    before = {path: idle.changed_file_diff(change) for change in idle.changed_files() for path in [change.path]}
    assert loose(idle) >= 4 and loose(in_use) >= 4
    assert keep_under_budget(data_dir, store.sessions(), 0, in_use={in_use.id}) == []  # no cap: packed only
    assert loose(idle) < 4 and loose(in_use) >= 4
    assert {change.path: idle.changed_file_diff(change) for change in idle.changed_files()} == before
    idle.put_back(["config.ini", "made.txt"])  # from the packed copy, byte for byte
    assert (workdir / "project0" / "config.ini").read_bytes() == CRLF and not (workdir / "project0" / "made.txt").exists()
