"""What can still be read of a damaged database, put into the new one that takes its place.

A damaged page loses the rows on it, not the whole log: the sessions whose events are readable
reopen where they were (those that lost some of their events may lack those steps), instead of the
person starting with an empty list after setting the damaged file aside (core/store.py
readable_rows reads them).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from core.agent.state import SessionState
from core.events import EventDecodeError, Record, decode
from core.store import (
    DamagedDatabase,
    SessionRow,
    Store,
    StoreError,
    readable_rows,
    session_title,
    set_aside,
)
from core.text import counted

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Salvaged:
    sessions: int = 0  # sessions put into the new database
    events: int = 0  # their events
    incomplete: bool = False  # rows could not be read, or sessions not rebuilt from what was

    def words(self) -> str:
        """What was read back, for the person."""
        if not self.sessions:
            return "nothing could be read back from it"
        said = (f"{counted(self.sessions, 'session')} ({counted(self.events, 'event')}) "
                f"{'were' if self.sessions != 1 else 'was'} read back from it")
        return said + ("; the rest could not be read, so some sessions may lack steps or be missing"
                       if self.incomplete else "")


def set_aside_if_damaged(database: Path) -> str:
    """`tripane doctor --set-aside-damaged`: a database that cannot be opened for its damage, or
    that SQLite's full check finds damaged, set aside and read back; what was done, in words."""
    if not database.exists():
        return f"{database} does not exist yet: nothing to set aside"
    try:
        store = Store(database)
    except DamagedDatabase:
        pass
    else:
        try:
            problems = store.integrity_problems()
        finally:
            store.close()
        if not problems:
            return f"{database} is intact: nothing was set aside"
    aside = set_aside(database)
    return f"{database} was damaged: it was set aside as {aside.name}, and {read_back(aside, database).words()}"


def read_back(aside: Path, database: Path) -> Salvaged:
    """A new database at `database`, with what the damaged one, set aside as `aside`, still holds."""
    store = Store(database)
    try:
        return salvage(aside, store)
    finally:
        store.close()


def salvage(damaged: Path, into: Store) -> Salvaged:
    """Put the sessions still readable in `damaged` (set aside: core/store.py set_aside) into the
    new database `into`, their events as they were recorded, numbers and stamps and all."""
    rows, events, lost = readable_rows(damaged)
    listed = {row[0]: row for row in rows if all(isinstance(value, str) for value in row)}
    logs: dict[str, dict[int, tuple[str, str, str]]] = defaultdict(dict)
    for session_id, seq, ts, kind, data in events:
        if isinstance(session_id, str) and isinstance(seq, int) and all(isinstance(v, str) for v in (ts, kind, data)):
            logs[session_id].setdefault(seq, (ts, kind, data))
    sessions, restored, incomplete = 0, 0, lost or len(listed) > len(logs)
    for session_id, log_rows in logs.items():
        records = _decoded(session_id, log_rows)
        state = SessionState(session_id)
        for record in records:
            state.apply(record)
        incomplete = incomplete or len(records) < len(log_rows)
        if state.config is None:  # its start is lost: it could not be opened
            incomplete = True
            continue
        kept = listed.get(session_id)
        row = SessionRow(session_id, kept[1] if kept else records[0].ts, kept[2] if kept else records[-1].ts,
                         state.config.task, kept[4] if kept else session_title(state.config.task),
                         state.status, state.model, str(state.workdir))
        try:
            into.restore_session(row, records)
        except StoreError as exc:
            log.warning("session %s could not be restored from the damaged database: %s", session_id, exc)
            incomplete = True
            continue
        sessions, restored = sessions + 1, restored + len(records)
    return Salvaged(sessions, restored, incomplete)


def _decoded(session_id: str, rows: dict[int, tuple[str, str, str]]) -> list[Record]:
    records = []
    for seq in sorted(rows):
        ts, kind, data = rows[seq]
        try:
            records.append(Record(session_id, seq, ts, decode(kind, data)))
        except EventDecodeError:  # scribbled over: left out, or the session could not be opened at all
            continue
    return records
