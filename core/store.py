"""The event log: the only module that opens SQLite.

One database per data folder holds every session's append-only events. WAL lets readers (the GUI,
`tripane show`) run beside the single writer; `busy_timeout` makes a second writer wait instead of
failing. A file that is not a Tripane database is refused and never written to.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator
from contextlib import closing
from dataclasses import asdict, dataclass
from dataclasses import fields as dataclass_fields
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

from core.events import (
    SAID_FIELDS,
    Event,
    EventDecodeError,
    Record,
    UnknownEventKind,
    decode,
    encode,
    ended_word,
)
from core.imports import without
from core.search_marks import search_folded, search_pattern, without_marks
from core.text import one_line

# sqlite-utils imports NumPy, when installed, to give NumPy numbers column types. Nothing goes
# through it as NumPy (memory's vectors are stored as bytes), and NumPy's import was a tenth of the
# window's start; long-term memory loads it after the first frame.
with without("numpy"):
    import sqlite_utils
    from sqlite_utils import Migrations

log = logging.getLogger(__name__)

# PRAGMA application_id marks the file as ours ("TRIP"), so a foreign SQLite file is recognised.
APPLICATION_ID = 0x54524950
SQLITE_HEADER = b"SQLite format 3\x00"
TITLE_CHARS = 80  # of a session's title: the list, the three files, a question's heading
BUSY_TIMEOUT_MS = 5000
# The writer's connection does not checkpoint: copying the WAL into the database and syncing it
# took up to 25 ms, inside whichever append came after every 4 MB, on the thread that runs the
# window. A worker thread does it after this many bytes of events (about SQLite's own 1,000 pages).
CHECKPOINT_BYTES = 1_000_000
AUTO_VACUUM_NONE, AUTO_VACUUM_INCREMENTAL = 0, 2  # PRAGMA auto_vacuum's values
AUTO_VACUUM_MAX_BYTES = 64 * 1024 * 1024  # a database up to this is made to give room back (VACUUM) at opening
# The writer starts the WAL over only if, when it next writes, every frame has been copied: passes
# are repeated (a short one each, for what came during the last) until one finds nothing new.
CHECKPOINT_PASSES = 20

migrations = Migrations("tripane")


@migrations()
def create_tables(db: sqlite_utils.Database) -> None:
    db["sessions"].create(
        {"id": str, "created": str, "updated": str, "task": str, "title": str, "status": str, "model": str},
        pk="id",
    )
    db["events"].create(
        {"session_id": str, "seq": int, "ts": str, "kind": str, "data": str},
        pk=("session_id", "seq"),
        foreign_keys=[("session_id", "sessions", "id")],
    )


@migrations()
def add_session_workdir(db: sqlite_utils.Database) -> None:
    """The session's work folder, in its row: a session is found by its project's folder in the
    list's search, without its log replayed. Sessions from before: from their log, once."""
    db["sessions"].add_column("workdir", str, not_null_default="")
    _fill_workdirs(db)


def _fill_workdirs(db: sqlite_utils.Database, where: str = "") -> None:
    """The sessions' work folders from their logs (the last place a session started or moved to)."""
    db.execute("UPDATE sessions SET workdir = COALESCE((SELECT json_extract(data, '$.workdir') FROM events "
               "WHERE events.session_id = sessions.id AND kind IN ('session_started', 'workdir_moved') "
               f"AND json_valid(data) ORDER BY seq DESC LIMIT 1), ''){where}")


class StoreError(Exception):
    """The database cannot be used; the message says why and what to do."""

    def __init__(self, what: str, advice: str = ""):
        self.what = what  # the problem alone: the window offers its own ways on, not command-line flags
        super().__init__(f"{what} {advice}" if advice else what)


class DamagedDatabase(StoreError):
    """The file is not a readable SQLite database (damaged, or something else under that name):
    it can be set aside whole and a new database started in its place."""

    def __init__(self, path: Path, what: str):
        self.path = path
        super().__init__(what, "It was left untouched. `tripane doctor --set-aside-damaged` sets it aside and reads "
                               "back the sessions it still holds into a new one; or choose another data folder "
                               "with --data-dir.")


class SessionIdTaken(StoreError):
    """A session of this id exists: another was created in the same second with the same random part."""


class DiskFull(StoreError):
    """The disk (or the quota) holding Tripane's data is full. What was saved before stays; what
    happened after could not be written, so the run stops there, as a crash would, and resumes
    once there is room."""

    def __init__(self, folder: Path | None):
        self.folder = folder
        free = _free_space(folder) if folder else ""
        where = f"The disk holding {folder}" if folder else "The disk"
        super().__init__(
            f"{where} ran out of room{f' ({free} free now)' if free else ''}: Tripane "
            "could not save what happened next, so the run stopped there. Everything saved before is kept.",
            "Free some space, then resume the session.",
        )


_SQLITE_FULL = 13
_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}  # Windows' disk-full errors map to ENOSPC


def as_disk_full(exc: BaseException, folder: Path | None) -> DiskFull | None:
    """`exc` as a DiskFull when a full disk is what it says (a file write that found no room,
    SQLite's "database or disk is full", or either wrapped by us); else None. It names the folder
    of the file that could not be written, else `folder`."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:  # follow `raise … from` down to the cause
        seen.add(id(exc))
        if isinstance(exc, DiskFull):
            return exc
        if isinstance(exc, OSError) and exc.errno in _FULL_ERRNOS:
            return DiskFull(Path(os.fsdecode(exc.filename)).parent if exc.filename else folder)
        # Any SQLite binding's error (the standard module's, pysqlite3's): by its code, else its text.
        code = getattr(exc, "sqlite_errorcode", None)
        if (code & 0xFF == _SQLITE_FULL) if isinstance(code, int) else "database or disk is full" in str(exc):
            return DiskFull(folder)
        exc = exc.__cause__
    return None


def _free_space(folder: Path) -> str:
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return ""
    if free < 2**20:
        return ""  # "0.0 MB free" says nothing "ran out of room" does not
    return f"{free / 2**20:.1f} MB" if free < 2**30 else f"{free / 2**30:.1f} GB"


# SQLite's primary result codes for a file that is not (or no longer) a database. A database that
# is only busy or locked says SQLITE_BUSY / SQLITE_LOCKED, and must never be set aside for it.
_DAMAGE_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB


def is_damage(exc: sqlite3.DatabaseError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in _DAMAGE_CODES
    return not isinstance(exc, sqlite3.OperationalError)  # no code given: busy and locked are operational


def damage_found(database: Path, exc: sqlite3.DatabaseError) -> str:
    """The damage SQLite's own check finds in a database that failed to open otherwise than by
    saying it is damaged ("": none). A damaged page can read as no rows, and what fails is then
    what follows: the record of the schema's migrations read as empty, creating the tables again
    failed with 'table "sessions" already exists'. Only on such a failure, as the check reads the
    whole file; never for a database that is busy or locked, which is whole."""
    if getattr(exc, "sqlite_errorcode", 0) & 0xFF in _BUSY_CODES:
        return ""
    try:
        with closing(_read_only(database)) as conn:
            verdict = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
    except sqlite3.DatabaseError as error:
        return str(error) if is_damage(error) else ""
    return "" if verdict == "ok" else f"SQLite's check: {one_line(verdict.removeprefix('*** in database main ***'), 200)}"


_BUSY_CODES = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED


def _read_only(database: Path) -> sqlite3.Connection:
    """A connection that can only read: a damaged file is looked at, never written to."""
    return sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True, timeout=1)


# Of a damaged database, rows are read a chunk of rowids at a time, and a chunk that fails row by
# row, so one bad page costs only its own rows.
SALVAGE_CHUNK = 500
# Where a table's last rowid cannot be read, reading stops after this many empty chunks in a row.
EMPTY_CHUNKS_AT_THE_END = 20
ROWS_PER_PAGE_AT_MOST = 1000  # (a row takes a few bytes at least, a page 4 KB)
SESSION_COLUMNS = ("id", "created", "updated", "task", "title", "status", "model")
EVENT_COLUMNS = ("session_id", "seq", "ts", "kind", "data")


def readable_rows(damaged: Path) -> tuple[list[tuple], list[tuple], bool]:
    """What a damaged database still holds (core/salvage.py puts it into a new one): its sessions'
    rows (SESSION_COLUMNS) and its events' (EVENT_COLUMNS) that can be read, and whether some could
    not be. Values are as read: a scribbled page may give any."""
    try:
        conn = _read_only(damaged)
    except sqlite3.DatabaseError:
        return [], [], True
    with closing(conn):
        rows, rows_lost = _readable(conn, "sessions", SESSION_COLUMNS)
        events, events_lost = _readable(conn, "events", EVENT_COLUMNS)
    return rows, events, rows_lost or events_lost


def _readable(conn: sqlite3.Connection, table: str, columns: tuple[str, ...]) -> tuple[list[tuple], bool]:
    """The rows of `table` that can be read, and whether some could not."""
    select = f"SELECT {', '.join(columns)} FROM {table} WHERE rowid >= ? AND rowid < ?"
    try:
        conn.execute(select, (0, 0)).fetchall()
    except sqlite3.DatabaseError:  # the table itself is gone from the schema
        return [], True
    try:
        top: int | None = conn.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0
        if top > conn.execute("PRAGMA page_count").fetchone()[0] * ROWS_PER_PAGE_AT_MOST:
            top = None  # read from a scribbled page: no bound to read up to
    except sqlite3.DatabaseError:
        top = None
    found: list[tuple] = []
    lost, start, empty_run = top is None, 1, 0
    while start <= top if top is not None else empty_run < EMPTY_CHUNKS_AT_THE_END:
        try:
            chunk = conn.execute(select, (start, start + SALVAGE_CHUNK)).fetchall()
        except sqlite3.DatabaseError:
            lost, chunk = True, []
            for rowid in range(start, start + SALVAGE_CHUNK):
                try:
                    chunk += conn.execute(select, (rowid, rowid + 1)).fetchall()
                except sqlite3.DatabaseError:
                    continue
        found += chunk
        empty_run = 0 if chunk else empty_run + 1
        start += SALVAGE_CHUNK
    return found, lost


def set_aside(database: Path) -> Path:
    """Rename a database that cannot be opened, with its write-ahead log and shared-memory file,
    to a name that says so and when; nothing is deleted, and a new database can start in its
    place. The log goes first: left behind beside a new database, SQLite could replay it there.
    Returns the new name of the database."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    target = database.with_name(f"{database.name}.damaged-{stamp}")
    count = 1
    while target.exists():
        count += 1
        target = database.with_name(f"{database.name}.damaged-{stamp}-{count}")
    for suffix in ("-wal", "-shm"):
        sibling = database.with_name(database.name + suffix)
        if sibling.exists():
            sibling.rename(target.with_name(target.name + suffix))
    database.rename(target)
    log.warning("set aside %s as %s", database, target.name)
    return target


@dataclass(frozen=True)
class SessionRow:
    id: str
    created: str
    updated: str
    task: str
    title: str
    status: str
    model: str
    workdir: str = ""  # where it works now (moved: its new place)


_ROW_FIELDS = frozenset(field.name for field in dataclass_fields(SessionRow))


def session_row(row: dict[str, Any]) -> SessionRow:
    """A row of the sessions table, with the columns this version knows: a later version's column
    (the person went back to this one) is passed over, not a TypeError that kept the window from
    opening, as Tripane before the work folder's column did."""
    return SessionRow(**{name: value for name, value in row.items() if name in _ROW_FIELDS})


def rows_matching(rows: list[SessionRow], search: str, mentioning: Collection[str] = ()) -> list[SessionRow]:
    """The sessions whose task, title, id, model or work folder holds `search`, those whose state
    it names ("waiting", "running", "ended", "failed", …), and those `mentioning` it in their
    conversation (Store.sessions_mentioning); all of them for no search."""
    needle = search_folded(search.strip())  # (in any case, whatever its marks: core/search_marks.py)
    if not needle:
        return rows
    return [r for r in rows if needle in search_folded(r.task) or needle in search_folded(r.title) or needle in r.id
            or needle in r.model.lower() or needle in search_folded(r.workdir) or needle in r.status.split(":")
            or needle == ended_word(r.status)
            or r.id in mentioning]


def session_title(task: str) -> str:
    """A session's title (in the list, atop its three files and its questions): its task's first
    line, cut between words with an ellipsis when it is long (never "… Tests in t")."""
    return one_line(task.strip().splitlines()[0], TITLE_CHARS) if task.strip() else "Untitled"


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


class Store:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._check_header()
        conn = None
        try:
            # Autocommit: every statement commits unless db.atomic() groups it (sqlite-utils 4 model).
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None
            )
            self.db = sqlite_utils.Database(conn, execute_plugins=False)
            self._check_identity()
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            self.db.enable_wal()
            # NORMAL under WAL: a power cut may lose the last commits, a crash of the process never.
            self.db.execute("PRAGMA synchronous = NORMAL")
            self.db.execute("PRAGMA wal_autocheckpoint = 0")  # see CHECKPOINT_BYTES
            self.db.execute("PRAGMA foreign_keys = ON")
            migrations.apply(self.db)
            self._fill_missing_workdirs()
            self._give_back_freed_pages()
        except BaseException as exc:
            if conn is not None:
                conn.close()  # a refused file is not held open: on Windows it could not be set aside
            if not isinstance(exc, sqlite3.DatabaseError):
                raise
            found = "" if is_damage(exc) else damage_found(self.path, exc)
            if found or is_damage(exc):
                raise DamagedDatabase(self.path, f"{self.path} is damaged or not a Tripane database "
                                                 f"({found or exc}).") from exc
            raise StoreError(f"{self.path} cannot be opened ({exc}).", "It was left untouched; close what else "
                             "has it open, or choose another data folder with --data-dir.") from exc
        self._checkpoints = _Checkpoints(self.path)

    def _fill_missing_workdirs(self) -> None:
        """Sessions an earlier version created after this one added the work folder's column: it
        wrote their rows without it, and the list's search by folder, and the folders New session
        offers, missed them. Read only when there are such rows: most opens write nothing."""
        if self.db.execute("SELECT 1 FROM sessions WHERE workdir = '' LIMIT 1").fetchone():
            _fill_workdirs(self.db, " WHERE workdir = ''")

    def _give_back_freed_pages(self) -> None:
        """A database an earlier version made keeps the room of deleted sessions for ever: set to
        give it back, which SQLite does by rewriting the file (VACUUM), once. Only while that is
        quick (up to AUTO_VACUUM_MAX_BYTES, a fraction of a second); a larger one stays as it is.
        Another Tripane writing meanwhile: tried again at the next opening."""
        if self.db.execute("PRAGMA auto_vacuum").fetchone()[0] != AUTO_VACUUM_NONE:
            return
        if self.path.stat().st_size > AUTO_VACUUM_MAX_BYTES:
            return
        self.db.execute("PRAGMA busy_timeout = 200")  # (not the start's 5 s, for what can wait)
        try:
            self.db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            self.db.execute("VACUUM")
        except sqlite3.OperationalError as exc:  # (busy: another process writes now; a full disk)
            log.info("the room of deleted sessions in %s is not given back yet: %s", self.path, exc)
        finally:
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")

    def _check_header(self) -> None:
        if not self.path.exists() or self.path.stat().st_size == 0:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            return
        with self.path.open("rb") as fh:
            header = fh.read(len(SQLITE_HEADER))
        if header != SQLITE_HEADER:
            raise DamagedDatabase(self.path, f"{self.path} is not an SQLite database, so it is not Tripane's.")

    def _check_identity(self) -> None:
        app_id = self.db.execute("PRAGMA application_id").fetchone()[0]
        if app_id == APPLICATION_ID:
            return
        if app_id == 0 and not self.db.table_names():
            self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            # Pages freed by deleting sessions are given back to the disk (delete_session); set
            # before the first table, as SQLite requires.
            self.db.execute("PRAGMA auto_vacuum = INCREMENTAL")
            return
        raise StoreError(f"{self.path} belongs to another application (it has tables but no Tripane mark).",
                         "It was left untouched; choose another data folder with --data-dir.")

    def close(self) -> None:
        self._checkpoints.wait()
        self.db.close()

    def integrity_problems(self) -> list[str]:
        """SQLite's own full check of the file: [] when it is sound."""
        rows = [row[0] for row in self.db.execute("PRAGMA integrity_check").fetchall()]
        return [] if rows == ["ok"] else rows

    # --- sessions --------------------------------------------------------------------------------

    def create_session(self, session_id: str, *, task: str, model: str, created: str = "") -> None:
        """`created`: when it started, for a session recorded elsewhere (an imported export); now by default."""
        stamp = now_iso()
        try:
            with self._guard():
                self.db["sessions"].insert(
                    {"id": session_id, "created": created or stamp, "updated": stamp, "task": task,
                     "title": session_title(task),
                     "status": "new", "model": model}
                )
        except sqlite3.IntegrityError as exc:
            raise SessionIdTaken(f"a session {session_id} exists already in {self.path}") from exc

    def update_session(self, session_id: str, **fields: Any) -> None:
        with self._guard():
            self.db["sessions"].update(session_id, {**fields, "updated": now_iso()})

    def session(self, session_id: str) -> SessionRow:
        with self._guard():
            rows = list(self.db.query("SELECT * FROM sessions WHERE id = ?", [session_id]))
        if not rows:
            raise StoreError(f"no session {session_id!r} in {self.path}")
        return session_row(rows[0])

    def sessions(self) -> list[SessionRow]:
        with self._guard():
            return [session_row(row) for row in self.db.query("SELECT * FROM sessions ORDER BY created DESC")]

    def session_ids(self, status: str) -> list[str]:
        with self._guard():
            return [row["id"] for row in self.db.query("SELECT id FROM sessions WHERE status = ?", [status])]

    def servers_used(self, session_ids: Collection[str]) -> dict[str, tuple[str, str]]:
        """Each session's model as it stands, with the server it goes to ("": the provider's own),
        from its start and the person's changes of model."""
        if not session_ids:
            return {}
        marks = ", ".join("?" * len(session_ids))
        rows = self.read(f"SELECT session_id, json_extract(data, '$.model'), json_extract(data, '$.api_base') "
                         f"FROM events WHERE session_id IN ({marks}) AND kind IN ('session_started', 'model_changed') "
                         "AND json_valid(data) ORDER BY session_id, seq", list(session_ids))
        return {session_id: (str(model or ""), str(api_base or "")) for session_id, model, api_base in rows}

    def sessions_following(self, skill: str) -> set[str]:
        """The sessions whose recall at task start gave the agent this skill (MemoryRecalled)."""
        rows = self.read("SELECT DISTINCT session_id FROM events WHERE kind = 'memory_recalled' AND json_valid(data) "
                         "AND EXISTS (SELECT 1 FROM json_each(data, '$.skills') WHERE value = ?)", [skill])
        return {row[0] for row in rows}

    def writes_seen(self) -> tuple[int, int]:
        """Changes whenever the database is written, by this connection (its total changes) or by
        any other, in this process or another (SQLite's data_version); two integers, no table read."""
        with self._guard():
            conn = self.db.conn
            return next(iter(conn.execute("PRAGMA data_version")))[0], conn.total_changes

    def sessions_signature(self) -> tuple:
        """Changes whenever a session is created, deleted, renamed or changes state, by any process."""
        with self._guard():
            return tuple(next(iter(self.db.execute("SELECT COUNT(*), MAX(updated) FROM sessions"))))

    def find_session(self, prefix: str) -> SessionRow:
        """A session by its id or an unambiguous prefix of it, as typed on a command line."""
        with self._guard():
            rows = list(self.db.query("SELECT * FROM sessions WHERE id LIKE ? || '%'", [prefix]))
        if len(rows) != 1:
            what = "no session matches" if not rows else f"{len(rows)} sessions match"
            raise StoreError(f"{what} {prefix!r}" + (" (give more of the id: tripane sessions lists them)" if rows else ""))
        return session_row(rows[0])

    def delete_session(self, session_id: str) -> None:
        with self._guard(), self.db.atomic():
            self.db.execute("DELETE FROM events WHERE session_id = ?", [session_id])
            self.db.execute("DELETE FROM sessions WHERE id = ?", [session_id])
        # The room its events took is given back to the disk (a person deleting sessions may be short
        # of it): the freed pages leave the file at the next checkpoint, started now.
        with self._guard():
            if self.db.execute("PRAGMA auto_vacuum").fetchone()[0] == AUTO_VACUUM_INCREMENTAL:
                # (run to its end by executescript: Python's execute would free one page only)
                self.db.conn.executescript("PRAGMA incremental_vacuum;")
        self._checkpoints.wrote(CHECKPOINT_BYTES)

    # --- events ----------------------------------------------------------------------------------

    def append(self, session_id: str, event: Event) -> Record:
        """Append one event; its sequence number is assigned inside the same statement."""
        ts = now_iso()
        data = encode(event)
        with self._guard():
            seq = self.db.execute(
                "INSERT INTO events (session_id, seq, ts, kind, data) "
                "SELECT ?, COALESCE(MAX(seq), 0) + 1, ?, ?, ? FROM events WHERE session_id = ? "
                "RETURNING seq",
                [session_id, ts, event.kind, data, session_id],
            ).fetchone()[0]
        self._checkpoints.wrote(len(data))
        return Record(session_id, seq, ts, event)

    def add_recorded(self, session_id: str, records: list[tuple[str, Event]]) -> None:
        """Put in a session's events as another data folder recorded them, stamps and all (an
        imported export), in one transaction: all of them or, on any failure, none."""
        with self._guard(), self.db.atomic():
            self.db.conn.executemany(
                "INSERT INTO events (session_id, seq, ts, kind, data) VALUES (?, ?, ?, ?, ?)",
                [(session_id, seq, ts, event.kind, encode(event)) for seq, (ts, event) in enumerate(records, 1)])

    def restore_session(self, row: SessionRow, records: list[Record]) -> None:
        """Put in a session as a damaged database still held it (core/salvage.py): its row, and its
        events with their own numbers, which other events refer to, in one transaction."""
        with self._guard(), self.db.atomic():
            self.db["sessions"].insert(asdict(row), ignore=True)
            self.db.conn.executemany(
                "INSERT OR IGNORE INTO events (session_id, seq, ts, kind, data) VALUES (?, ?, ?, ?, ?)",
                [(row.id, record.seq, record.ts, record.event.kind, encode(record.event)) for record in records])

    def records(self, session_id: str, after_seq: int = 0) -> list[Record]:
        return list(self.iter_records(session_id, after_seq))

    def iter_records(self, session_id: str, after_seq: int = 0) -> Iterator[Record]:
        with self._guard():
            rows = self.db.execute(_EVENTS_QUERY, [session_id, after_seq]).fetchall()
        return _decoded(session_id, rows)

    def read_records(self, session_id: str) -> list[Record]:
        """The session's records, read apart (see `read`): a worker thread loads a long log."""
        return list(_decoded(session_id, self.read(_EVENTS_QUERY, [session_id, 0])))

    def records_of_kind(self, session_id: str, kind: str) -> list[Record]:
        """The session's records of one kind of event, read apart (see `read`)."""
        return list(_decoded(session_id, self.read(
            "SELECT seq, ts, kind, data FROM events WHERE session_id = ? AND kind = ? ORDER BY seq", [session_id, kind])))

    def sessions_mentioning(self, text: str) -> set[str]:
        """The sessions whose conversation holds `text`, in any case and whatever its marks
        (core/search_marks.py): a message, a thought, a call's arguments, a tool's output, a
        question, an error, a summary. Not the events' field names, which every session has. Read
        apart, for a worker thread."""
        functions: dict[str, Callable[[Any], Any]] = {}

        def holds(value: str, needle: str) -> tuple[str, list[str]]:
            """SQL true where `value` holds `needle`, and its parameters. Where the needle is ASCII
            letters without its marks ("cafe", "café"), an ASCII value is looked at with SQLite's
            own LIKE (any case, and fast); any other value (one more byte long than it is
            characters: it holds other letters, "Café"), with the pattern."""
            name = f"holds_{len(functions)}"
            pattern = search_pattern(needle)
            functions[name] = lambda found: isinstance(found, str) and pattern.search(found) is not None
            wide = f"length(CAST({value} AS BLOB)) > length({value}) AND {name}({value})"
            if not (bare := without_marks(needle)).isascii():
                return wide, []
            escaped = bare.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            return f"({value} LIKE ? ESCAPE '\\' OR ({wide}))", [f"%{escaped}%"]
        # The raw text first, as the events store it (quotes escaped; twice in a call's arguments,
        # JSON within JSON): it passes over nearly every row before any of them is parsed.
        once = json.dumps(text, ensure_ascii=False)[1:-1]
        twice = json.dumps(once, ensure_ascii=False)[1:-1]
        first = [holds("data", once), holds("data", twice)]
        # A call's arguments are JSON text themselves: the text is looked for in them as written there too.
        then = [holds(value, text) for value in _CONVERSATION_VALUES] + [holds(_CALL_ARGUMENTS, once)]
        query = (f"SELECT DISTINCT session_id FROM events WHERE ({' OR '.join(sql for sql, _ in first)}) "
                 f"AND json_valid(data) AND ({' OR '.join(sql for sql, _ in then)})")
        rows = self.read(query, [parameter for _, parameters in first + then for parameter in parameters],
                         functions=functions)
        return {row[0] for row in rows}

    def read(self, query: str, parameters: list[Any], functions: dict[str, Callable[[Any], Any]] | None = None,
             ) -> list[tuple]:
        """The rows of a query, read through a connection of its own so that a worker thread can
        read while this store's connection goes on serving the window: under WAL a reader runs
        beside the writer and sees every committed event. `functions`: of one argument, by name."""
        with self._guard():
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000)
            try:
                for name, function in (functions or {}).items():
                    conn.create_function(name, 1, function, deterministic=True)
                return conn.execute(query, parameters).fetchall()
            finally:
                conn.close()

    def _guard(self) -> _Guard:
        return _Guard(self.path)


# What a conversation says, in its events (core/events.py): what sessions_mentioning searches.
_CALL_ARGUMENTS = "(SELECT group_concat(json_extract(value, '$.arguments'), ' ') FROM json_each(data, '$.tool_calls'))"
# (Not the task: the sessions list has it, and matches it as it matches the title.)
_CONVERSATION_VALUES = tuple(f"json_extract(data, '$.{name}')" for name in SAID_FIELDS) + (
    _CALL_ARGUMENTS,)
_EVENTS_QUERY = "SELECT seq, ts, kind, data FROM events WHERE session_id = ? AND seq > ? ORDER BY seq"


def _decoded(session_id: str, rows: list[tuple[int, str, str, str]]) -> Iterator[Record]:
    for seq, ts, kind, data in rows:
        try:
            yield Record(session_id, seq, ts, decode(kind, data))
        except UnknownEventKind as exc:  # (the person went back to an earlier version)
            raise StoreError(f"Session {session_id} was recorded by a later version of Tripane: its event {seq} is of a "
                             f"kind this version does not know ({kind!r}).",
                             "Update Tripane to open it; the session is left as it is.") from exc
        except EventDecodeError as exc:
            raise StoreError(f"event {seq} of session {session_id} is unreadable: {exc}") from exc


class _Checkpoints:
    """Copies the WAL into the database on a worker thread, with a connection of its own, once
    CHECKPOINT_BYTES have been written since the last time. PASSIVE: it never waits for the writer
    or a reader, nor makes them wait; what it cannot copy yet goes at the next one."""

    def __init__(self, path: Path):
        self.path = path
        self.written = 0
        self._worker: threading.Thread | None = None
        self._closing = False

    def wrote(self, size: int) -> None:
        self.written += size
        if self.written >= CHECKPOINT_BYTES and not (self._worker and self._worker.is_alive()):
            self.written = 0
            self._worker = threading.Thread(target=self._checkpoint, name="sqlite-checkpoint", daemon=True)
            self._worker.start()

    def wait(self) -> None:
        """Let the running checkpoint end after its current pass (the store is closing)."""
        self._closing = True
        if self._worker is not None:
            self._worker.join()

    def _checkpoint(self) -> None:
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000)
            try:
                last = None
                for _ in range(CHECKPOINT_PASSES):
                    if self._closing:
                        break
                    _busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    if frames == copied == last:
                        break
                    last = frames if frames == copied else None
                    time.sleep(0.01)
            finally:
                conn.close()
        except sqlite3.Error as exc:  # nothing is lost: the WAL keeps the events until a later one
            log.warning("checkpointing %s failed: %s", self.path, exc)


class _Guard:
    """Turns SQLite's low-level errors into a StoreError that names the file."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: Any) -> bool:
        if isinstance(exc, sqlite3.DatabaseError) and not isinstance(exc, sqlite3.IntegrityError):
            if full := as_disk_full(exc, self.path.parent):
                raise full from exc
            raise StoreError(f"database error in {self.path}: {exc}") from exc
        return False


# --- derived indexes (long-term memory) ------------------------------------------------------------


def _sqlite_module() -> Any:
    """pysqlite3 where it is installed (its SQLite can load extensions), else the standard module."""
    try:
        from pysqlite3 import dbapi2  # Linux wheels: pysqlite3-binary

        return dbapi2
    except ImportError:
        return sqlite3


def connect_index(path: Path) -> tuple[Any, tuple[type[Exception], ...], str | None]:
    """A connection for a rebuildable index, with sqlite-vec loaded when this Python allows it.

    Returns the connection, the exception classes its errors belong to, and None when sqlite-vec is
    loaded, or else the reason it is not (the caller must take its exact fallback and say so).
    """
    module = _sqlite_module()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = module.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False, isolation_level=None)
    errors = (module.DatabaseError, sqlite3.DatabaseError)
    if not hasattr(conn, "enable_load_extension"):
        return conn, errors, "this Python's SQLite cannot load extensions, so sqlite-vec cannot be used"
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        try:
            sqlite_vec.load(conn)
        finally:
            conn.enable_load_extension(False)
    except ImportError:
        return conn, errors, "sqlite-vec is not installed"
    except Exception as exc:  # an SQLite built without extension support, a blocked library…
        return conn, errors, f"sqlite-vec failed to load ({exc})"
    return conn, errors, None


T = TypeVar("T")


def with_own_store(database: Path, work: Callable[..., T], *args: Any) -> T:
    """`work(store, *args)` through a connection of its own to `database`, for a worker thread
    (the window's own connection serves the window meanwhile)."""
    store = Store(database)
    try:
        return work(store, *args)
    finally:
        store.close()
