"""A session as one zip: its three files, offloaded outputs, compaction summaries, event log and
a Markdown transcript.

For sharing a run, attaching it to a bug report, or keeping it after deleting the session. The
event log is JSON Lines, one event per line, in the same shape as `tripane show --json`; the
transcript is what `tripane show --markdown` prints (core/transcript.py).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from core.events import Record, to_data
from core.paths import RUN_LOCK, session_dir
from core.store import Store
from core.transcript import transcript


def record_json(record: Record) -> str:
    return json.dumps({"session": record.session_id, "seq": record.seq, "ts": record.ts,
                       "kind": record.event.kind, "data": to_data(record.event)}, ensure_ascii=False)


def export_session(store: Store, data_dir: Path, session_id: str, target: Path) -> Path:
    row = store.find_session(session_id)
    return write_export(store.records(row.id), session_dir(data_dir, row.id), row.id, target, row.title)


def write_export(records: list[Record], folder: Path, session_id: str, target: Path, title: str = "") -> Path:
    """Write the zip (replacing `target` only once it is complete) and return its path. File work
    only, so the window runs it in a worker thread with the records it already holds."""
    target = Path(target)
    partial = target.with_name(target.name + ".partial")
    with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{session_id}/events.jsonl", "".join(record_json(r) + "\n" for r in records))
        archive.writestr(f"{session_id}/transcript.md", transcript(records, title or session_id))
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.name.endswith(".tmp") and path.name != RUN_LOCK:
                    archive.write(path, f"{session_id}/{path.relative_to(folder).as_posix()}")
    partial.replace(target)
    return target
