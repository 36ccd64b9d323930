"""A session as one zip: its three files, offloaded outputs, compaction summaries, the pictures
shown to its agent, the files its agent changed as they were before (originals/), event log and a
Markdown transcript.

For sharing a run, attaching it to a bug report, or keeping it after deleting the session. The
event log is JSON Lines, one event per line, in the same shape as `tripane show --json`; the
transcript is what `tripane show --markdown` prints (core/transcript.py).
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path, PurePosixPath

from core.agent.state import SessionState
from core.documents import ARCHIVE_MEMBER_PREFIX, DOCUMENTS_FOLDER
from core.events import (
    Event,
    EventDecodeError,
    Record,
    ReflectionWritten,
    SessionStarted,
    UnknownEventKind,
    decode,
    to_data,
)
from core.given_files import GIVEN_FOLDER
from core.offload import OFFLOAD_FOLDER
from core.paths import RUN_LOCK, remove_folder, session_dir
from core.snapshot import NOT_EXPORTED as SNAPSHOT_NOT_EXPORTED
from core.snapshot import NOTE_NAME as SNAPSHOT_NOTE
from core.snapshot import SNAPSHOT_DIR
from core.store import Store, StoreError, with_own_store
from core.transcript import transcript


def record_json(record: Record) -> str:
    return json.dumps({"session": record.session_id, "seq": record.seq, "ts": record.ts,
                       "kind": record.event.kind, "data": to_data(record.event)}, ensure_ascii=False)


def export_session(store: Store, data_dir: Path, session_id: str, target: Path) -> Path:
    row = store.find_session(session_id)
    return write_export(store.records(row.id), session_dir(data_dir, row.id), row.id, target, row.title,
                        data_dir / MEMORY)


def write_export(records: list[Record], folder: Path, session_id: str, target: Path, title: str = "",
                 memory: Path | None = None) -> Path:
    """Write the zip (replacing `target` only once it is complete) and return its path. File work
    only, so the window runs it in a worker thread with the records it already holds. `memory`:
    the data folder's long-term memory, whose reports of the reflections on this session go too."""
    target = Path(target)
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{session_id}/events.jsonl", "".join(record_json(r) + "\n" for r in records))
        archive.writestr(f"{session_id}/transcript.md", transcript(records, title or session_id))
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                # The copy of the work folder made before the first command is not sent: it is all of
                # the person's project, not the session's (originals/ holds what the file tools changed).
                if path.relative_to(folder).parts[0] in (SNAPSHOT_DIR, SNAPSHOT_NOTE):
                    continue
                # Nor the files the agent's tools unpacked from an archive of the work folder (a
                # customer's support bundle): the project's, not the session's; what it read of
                # them is in the events.
                if path.name.startswith(ARCHIVE_MEMBER_PREFIX) and path.parent.name == DOCUMENTS_FOLDER:
                    continue
                # Nor the copies of the files the person gave from outside the work folder (a
                # customer's bundle, a database): theirs, not the run's, and often large.
                if path.relative_to(folder).parts[:2] == (OFFLOAD_FOLDER, GIVEN_FOLDER):
                    continue
                if path.is_file() and not path.name.endswith(".tmp") and path.name != RUN_LOCK:
                    archive.write(path, f"{session_id}/{path.relative_to(folder).as_posix()}")
            if (folder / SNAPSHOT_NOTE).is_file():  # (the copy's place says why it is not there)
                archive.writestr(f"{session_id}/{SNAPSHOT_NOTE}", json.dumps({"not_kept": SNAPSHOT_NOT_EXPORTED}))
        for report in _reflection_reports(records, memory):
            archive.write(report, f"{session_id}/{MEMORY}/{REFLECTIONS}/{report.name}")
    partial.replace(target)
    return target


def _reflection_reports(records: list[Record], memory: Path | None) -> list[Path]:
    if memory is None:
        return []
    paths = (memory / r.event.path for r in records if isinstance(r.event, ReflectionWritten))
    return [path for path in paths if path.parent.name == REFLECTIONS and path.is_file()]


# --- import ----------------------------------------------------------------------------------------

SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # a folder name on every system
MAX_UNPACKED_BYTES = 8 * 1024**3  # what an export may unpack to: more is not an export of ours
NOT_FILES = ("events.jsonl", "transcript.md")  # in an export, beside the session's own files
# The data folder's long-term memory, and the folder of its reflections' reports (core/memory/: not
# imported here, as it brings NumPy to a command that needs none).
MEMORY, REFLECTIONS = "memory", "reflections"


class ImportRefused(ValueError):
    """The file is not a Tripane export, or its session is in this data folder already."""


def import_session(store: Store, data_dir: Path, source: Path) -> str:
    """Put a session exported elsewhere (`tripane export`) into this data folder, to read it, or go
    on with it: its events as they were recorded, stamps and all, and its files. All of it or,
    on any failure, nothing. Returns its id."""
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ImportRefused(f"{source} cannot be read as a zip file ({exc}).") from exc
    with archive:
        logs = [name for name in archive.namelist() if name.count("/") == 1 and name.endswith("/events.jsonl")]
        session_id = logs[0].split("/")[0] if len(logs) == 1 else ""
        if not SESSION_ID.fullmatch(session_id):
            raise ImportRefused(f"{source} is not a Tripane export: it holds no session's events.jsonl "
                                "(`tripane export` and Session → Export make one).")
        if sum(info.file_size for info in archive.infolist()) > MAX_UNPACKED_BYTES:
            raise ImportRefused(f"{source} would unpack to more than {MAX_UNPACKED_BYTES // 1024**3} GB: not an export.")
        records = _recorded(archive.read(logs[0]).decode("utf-8", errors="replace"), session_id)
        try:
            store.session(session_id)
        except StoreError:
            pass
        else:
            raise ImportRefused(f"Session {session_id} is in this data folder already.")
        state = SessionState(session_id)
        for seq, (ts, event) in enumerate(records, 1):
            state.apply(Record(session_id, seq, ts, event))
        assert state.config is not None  # _recorded made sure it starts so
        folder = session_dir(data_dir, session_id)
        # Listed when it started, among the others by their start, not as begun at its import.
        store.create_session(session_id, task=state.config.task, model=state.model, created=records[0][0])
        reports: list[Path] = []
        try:
            store.update_session(session_id, status=state.status, workdir=str(state.workdir))
            store.add_recorded(session_id, records)
            _unpack(archive, session_id, folder, data_dir / MEMORY, reports)
        except BaseException:
            store.delete_session(session_id)
            remove_folder(folder)
            for report in reports:
                report.unlink(missing_ok=True)
            raise
    return session_id


def import_with_own_store(database: Path, data_dir: Path, source: Path) -> str:
    """import_session through a connection of its own, for a worker thread."""
    return with_own_store(database, import_session, data_dir, source)


def _recorded(text: str, session_id: str) -> list[tuple[str, Event]]:
    """The events of an export's events.jsonl, each with its stamp; ImportRefused naming the line
    that is not one."""
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if entry["session"] != session_id:
                raise ValueError(f"it is of session {entry['session']!r}")
            records.append((str(entry["ts"]), decode(entry["kind"], json.dumps(entry["data"]))))
        except UnknownEventKind as exc:
            raise ImportRefused(f"Line {number} of {session_id}/events.jsonl is of a kind of event this version does not "
                                f"know ({entry['kind']!r}): a later version of Tripane exported this session. Update "
                                "Tripane to import it.") from exc
        except (ValueError, KeyError, TypeError, EventDecodeError) as exc:
            raise ImportRefused(f"Line {number} of {session_id}/events.jsonl is not an event of this session "
                                f"({exc}): the export is damaged, or not Tripane's.") from exc
    if not records or not isinstance(records[0][1], SessionStarted):
        raise ImportRefused(f"{session_id}/events.jsonl does not start with the session's start: not a whole export.")
    return records


def _unpack(archive: zipfile.ZipFile, session_id: str, folder: Path, memory: Path, written: list[Path]) -> None:
    """The session's files (its three files, offload/, compaction/, pictures/, originals/), and nothing outside its folder;
    the reports of the reflections on it into long-term memory's reflections/, beside those of this
    data folder's sessions (never over one)."""
    folder.mkdir(parents=True, exist_ok=True)
    report_name = re.compile(re.escape(session_id) + r"-\d+(?:\.unreadable\.txt|\.yaml)")
    for info in archive.infolist():
        path = PurePosixPath(info.filename)
        if info.is_dir() or path.parts[:1] != (session_id,) or len(path.parts) < 2:
            continue
        inside = PurePosixPath(*path.parts[1:])
        if inside.parts[:2] == (MEMORY, REFLECTIONS):
            report = memory / REFLECTIONS / inside.name
            if len(inside.parts) == 3 and report_name.fullmatch(inside.name) and _unpack_file(
                    archive, info, report, replace=False):
                written.append(report)  # (taken back if the import fails)
            continue
        # ".." climbs out; so would a backslash or a drive on Windows, where they separate and root paths.
        if str(inside) in NOT_FILES or any(part == ".." or "\\" in part or ":" in part for part in inside.parts):
            continue
        _unpack_file(archive, info, folder.joinpath(*inside.parts))


def _unpack_file(archive: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, replace: bool = True) -> bool:
    """One file of the archive at `target`; False when it is there already and not to be replaced."""
    if not replace and target.exists():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    with archive.open(info) as packed, open(target, "wb") as unpacked:
        shutil.copyfileobj(packed, unpacked)
    return True
