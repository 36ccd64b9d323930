"""Which process runs a session: the one holding its run lock.

The event log says what a session was doing when it was last written; only the lock says whether
a process is still doing it. A session logged as running whose lock nobody holds was interrupted:
Tripane closed, or the process was killed, mid-run. It is shown so, and Resume continues it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from filelock import FileLock, Timeout

from core.paths import RUN_LOCK, session_dir
from core.store import SessionRow

# A window checks whether another process runs the session it shows by taking the lock for an
# instant; a process starting a run waits this long rather than mistake that check for a run.
LOCK_WAIT_S = 0.25
INTERRUPTED = "interrupted"


def run_lock(data_dir: Path, session_id: str) -> FileLock:
    return FileLock(str(session_dir(data_dir, session_id) / RUN_LOCK), timeout=0, thread_local=False)


def lock_taken(lock: FileLock) -> bool:
    """Whether someone else holds the lock: it is taken for an instant, and let go, if it is free.
    A lock object of another process, or another one of this process, counts as someone else."""
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release(force=True)
    return False


def run_by_nobody(data_dir: Path, session_id: str) -> bool:
    if not session_dir(data_dir, session_id).is_dir():  # deleted meanwhile: nothing to say
        return False
    return not lock_taken(run_lock(data_dir, session_id))


def live_status(data_dir: Path, rows: list[SessionRow]) -> list[SessionRow]:
    """The rows, with "running" made "interrupted" where no process runs the session."""
    return [replace(row, status=INTERRUPTED) if row.status == "running" and run_by_nobody(data_dir, row.id) else row
            for row in rows]
