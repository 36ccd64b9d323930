"""The sessions' copies of their work folders (core/snapshot.py), kept under a budget in all.

Each session that ran a shell command keeps a copy of its work folder from before it: megabytes
for a project, up to 300 MB for a large one, and a person who starts ten sessions a day on one
repository would give gigabytes a month to copies of the same files. So past the budget (Settings,
`copies_mb`) the oldest sessions' copies are removed first, the sessions themselves kept: their
conversation, their files and what the file tools changed stay, and what the changes window can
no longer list it says why. A session open or running is never touched: its copy is in use.
Before that, the copies not in use are packed: the same bytes in a quarter of the disk.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from core.paths import session_dir
from core.snapshot import SNAPSHOT_DIR, WorkFolderSnapshot, size_words
from core.store import SessionRow

log = logging.getLogger(__name__)

RUNNING = "running"  # (a row's live status: run by a process, this one or another)


@dataclass(frozen=True)
class KeptCopy:
    session_id: str
    updated: str  # when the session last changed (the store's, ISO): the oldest go first
    size: int  # bytes

    def snapshot(self, data_dir: Path) -> WorkFolderSnapshot:
        return WorkFolderSnapshot(session_dir(data_dir, self.session_id))


def kept_copies(data_dir: Path, rows: list[SessionRow]) -> list[KeptCopy]:
    """The sessions' copies that are kept, oldest session first. Blocking: it reads every copy's
    size (one stat per git file), so from a worker thread."""
    found = []
    for row in sorted(rows, key=lambda row: row.updated):
        folder = session_dir(data_dir, row.id)
        if (folder / SNAPSHOT_DIR).is_dir():
            found.append(KeptCopy(row.id, row.updated, WorkFolderSnapshot(folder).size()))
    return found


def copies_taken(data_dir: Path) -> tuple[int, int]:
    """How many copies are kept in the data folder, and the bytes they take. Blocking."""
    folders = [folder for folder in (data_dir / "sessions").glob(f"*/{SNAPSHOT_DIR}") if folder.is_dir()]
    return len(folders), sum(WorkFolderSnapshot(folder.parent).size() for folder in folders)


def taken_words(count: int, size: int) -> str:
    """"now 340.2 MB, for 12 sessions"."""
    if not count:
        return "none kept now"
    return f"now {size_words(size)}, for {count:,} session{'s' if count != 1 else ''}"


def keep_under_budget(data_dir: Path, rows: list[SessionRow], budget_mb: int, in_use: Collection[str] = (),
                      today: dt.date | None = None, should_stop: Callable[[], bool] = lambda: False) -> list[str]:
    """Pack the copies not in use (WorkFolderSnapshot.pack), then remove the oldest sessions' until
    all take at most `budget_mb` (0: no budget); the sessions whose copy was removed. `rows` with
    their live status (a session run by another process is "running"); `in_use`: the sessions
    open here; `should_stop`: asked between copies (the app closes). Blocking."""
    running = {row.id for row in rows if row.status == RUNNING}
    for row in rows:
        if should_stop():
            return []
        if row.id in running or row.id in in_use:
            continue
        try:
            WorkFolderSnapshot(session_dir(data_dir, row.id)).pack()
        except OSError as exc:  # (SnapshotFailed: left as it is, and tried again next time)
            log.warning("the copy of session %s's work folder was not packed: %s", row.id, exc)
    if budget_mb <= 0 or should_stop():
        return []
    copies = kept_copies(data_dir, rows)
    total, budget = sum(copy.size for copy in copies), budget_mb * 2**20
    why = (f"the copy of the work folder made before the first command was removed on "
           f"{(today or dt.date.today()).isoformat()}, the oldest sessions' first, to keep such copies under "
           f"{size_words(budget)} in all (Settings → Copies of work folders)")
    removed = []
    for copy in copies:
        if total <= budget or should_stop():
            break
        if copy.session_id in running or copy.session_id in in_use:
            continue
        try:
            copy.snapshot(data_dir).release(why)
        except OSError as exc:  # (a file held open on Windows: tried again next time)
            log.warning("the copy of session %s's work folder was not removed: %s", copy.session_id, exc)
            continue
        total -= copy.size
        removed.append(copy.session_id)
    if removed:
        log.info("removed %d sessions' copies of their work folders; those kept take %s", len(removed),
                 size_words(total))
    return removed
