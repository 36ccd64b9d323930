"""The work folder's files as they were before the agent first changed them in a session: what
it changed can be seen, and a file put back as the person had it.

file_write and file_edit keep a file's bytes (or that there was no such file) the first time
either changes it in a session, before they write; later changes to it keep nothing more, so
what comes back is the file from before the session, whatever the agent did to it since. The
copies live in the session's folder (originals/), listed in originals/index.json, which is
written before the tool's own write: a process killed in between loses nothing. What shell
commands change is found against a copy of the work folder made before the first of them
(core/snapshot.py); core/work_changes.py puts the two together.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import zlib
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from core.diffs import bytes_diff_lines
from core.memory.working import atomic_write
from core.store import now_iso
from core.tools.context import confine

ORIGINALS_DIR = "originals"
INDEX_NAME = "index.json"
STEPS_NAME = "steps.jsonl"  # the file before each write (keep_step)
STEPS_SIZE_NAME = "steps.size"  # what the copies of those take, in bytes
STEP_COPY_PREFIX = "sha256-"  # its bytes' copy, by their hash (the first copies are numbered: 00001)
# What those copies may take in one session: past it, a write's file is not kept (said when going back).
STEPS_KEPT_MAX = 1024**3
STEPS_FULL = "the session's copies of files before each write had reached 1 GB"
STEP_COMPRESSION = 6  # zlib's level: source text takes a quarter of its size, in a millisecond per 100 KB
# A file larger than this is not copied (a data file the agent rewrote): its change is listed,
# and it cannot be put back from here.
MAX_KEPT_BYTES = 20 * 1024 * 1024

log = logging.getLogger(__name__)


class OriginalsUnreadable(ValueError):
    """originals/index.json cannot be read: what was kept is not known."""


@dataclass(frozen=True)
class Change:
    """One file the agent wrote or edited in the session, against what it was before."""

    path: str  # relative to the work folder, with "/"
    existed: bool  # False: the agent created it
    kept: bool  # the file from before can be put back (a file that did not exist always can)
    now: str  # "changed", "as before" (put back, or changed back), "gone" (deleted since)
    # Found against the copy of the work folder made before the first command (core/snapshot.py),
    # not kept by a file tool: a command changed it (or something outside Tripane did).
    by_command: bool = False
    # Of those: no command's record names it (CommandChangedFiles), so the person or another
    # program changed it, not the agent.
    outside: bool = False
    # The agent changed it, and it was changed outside its tools since (FilesChangedOutside): a
    # put-back loses that change too.
    then_outside: bool = False

    def what(self) -> str:
        """In a few words, for a list."""
        said = self._what()
        return f"{said}, then not by the agent" if self.then_outside and self.now != "as before" else said

    def _what(self) -> str:
        if self.by_command:
            if self.now == "as before":
                return "as before the first command" if self.existed else "removed again"
            how = {"gone": "deleted"}.get(self.now, "changed" if self.existed else "created")
            return f"{how}, not by the agent" if self.outside else f"{how} by a command"
        if self.now == "as before":
            return "as before the session" if self.existed else "removed again"
        if not self.existed:
            return "created" if self.now == "changed" else "created, deleted since"
        if self.now == "gone":
            return "deleted since"
        return "changed" if self.kept else f"changed (too large to keep, over {MAX_KEPT_BYTES // 2**20} MB)"


def diff_lines(change: Change, before: bytes | None, now: bytes | None) -> list[str]:
    """What the agent's changes did to the file, as unified diff lines (before → now, no file
    names); a binary or very large file as one line saying its sizes."""
    if not change.kept:
        return [f"(the file from before was too large to keep; it has {len(now or b''):,} bytes now)"]
    return bytes_diff_lines(before, now, name=change.path) or ["(no difference: the file is as it was before the session)"]


def bytes_now(workdir: Path, path: str) -> bytes | None:
    """The work folder's `path` as it is now; None when there is no such file."""
    target = workdir / path
    return target.read_bytes() if target.is_file() else None


def write_back(workdir: Path, path: str, data: bytes | None, link_to: str | None = None,
               executable: bool | None = None) -> None:
    """The work folder's `path` as `data` (None: no such file), or a symbolic link to `link_to`;
    `executable`: whether it may be run (None: as it is now; on Windows no file says so).
    The path itself: were it a link now, the link is what is replaced or removed, never the file it
    points to (a link a command made to the person's file would have had that file deleted). Its
    folder is confined to the work folder."""
    where = PurePosixPath(path)
    target = confine(workdir, str(where.parent), "the work folder") / where.name
    if target.is_dir() and not target.is_symlink():
        raise ValueError(f"{path} is a folder now")
    if data is None or link_to is not None:
        target.unlink(missing_ok=True)  # (a link: the link)
        if link_to is not None:
            os.symlink(link_to, target)
    else:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data)  # (its rename replaces a link that is there, not what it points to)
        if executable is not None and os.name == "posix":
            mode = stat.S_IMODE(target.stat().st_mode)
            os.chmod(target, mode | (mode & 0o444) >> 2 if executable else mode & ~0o111)  # (x where it is readable)


class Originals:
    """A session's copies of the files its agent changed, in `session_dir`/originals."""

    def __init__(self, session_dir: Path):
        self.dir = session_dir / ORIGINALS_DIR

    def keep(self, path: str, target: Path, call_id: str = "") -> None:
        """Keep `target` (the work folder's `path`) as it is now, unless this session kept it already;
        and, each time, as it was before this write (keep_step) by the call `call_id`."""
        self.keep_step(path, target, call_id)
        index = self._index()
        if path in index:
            return
        entry: dict[str, object] = {"existed": target.is_file()}
        self.dir.mkdir(parents=True, exist_ok=True)
        if entry["existed"]:
            size = target.stat().st_size
            if size > MAX_KEPT_BYTES:
                entry["too_large"] = size
            else:
                number = len(index) + 1
                while (self.dir / f"{number:05d}").exists():  # (a session gone back in keeps fewer listed)
                    number += 1
                entry["copy"] = copy = f"{number:05d}"
                atomic_write(self.dir / copy, target.read_bytes())
        index[path] = entry
        atomic_write(self.dir / INDEX_NAME, json.dumps(index, indent=1, ensure_ascii=False))

    def keep_step(self, path: str, target: Path, call_id: str = "") -> None:
        """`target` as it is just before a file tool writes it, with the time (steps.jsonl): what
        it was at any earlier point of the session, for going back there (core/branch.py). Its
        bytes are kept once whatever number of writes found them so (by their SHA-256)."""
        entry: dict[str, object] = {"at": now_iso(), "path": path, "call": call_id}
        self.dir.mkdir(parents=True, exist_ok=True)
        if target.is_file():
            size = target.stat().st_size
            if size > MAX_KEPT_BYTES:
                entry["too_large"] = size
            else:
                data = target.read_bytes()
                name = f"{STEP_COPY_PREFIX}{hashlib.sha256(data).hexdigest()}.z"
                if (self.dir / name).exists():
                    entry["copy"] = name
                elif (kept := self._steps_kept_bytes()) < STEPS_KEPT_MAX:  # (compressed: a file rewritten at each step is kept each time)
                    packed = zlib.compress(data, STEP_COMPRESSION)
                    atomic_write(self.dir / name, packed)
                    atomic_write(self.dir / STEPS_SIZE_NAME, str(kept + len(packed)))
                    entry["copy"] = name
                else:  # a large file rewritten at every step would fill the disk: said, at going back
                    entry["not_kept"] = STEPS_FULL
        with open(self.dir / STEPS_NAME, "a", encoding="utf-8") as steps:
            steps.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def before_first_write_after(self, path: str, stamp: str, calls: Collection[str]) -> tuple[bool, bytes | None]:
        """What `path` was just before the file tools' first write of it after `stamp` by one of
        `calls` (those made after the point: a stamp is to the millisecond, and a quick write may
        share it): (True, its bytes; None when there was no such file), or (False, None) when no
        such write was kept (none, or one in a session from before the steps were). ValueError:
        too large to have been kept."""
        try:
            lines = (self.dir / STEPS_NAME).read_text(encoding="utf-8").splitlines()
        except OSError:
            return False, None
        for line in lines:
            try:
                step = json.loads(line)
                if step["path"] != path or str(step["at"]) < stamp or step.get("call") not in calls:
                    continue
            except (ValueError, KeyError, TypeError):  # a line cut short by a killed process
                continue
            if "too_large" in step:
                raise ValueError(f"{path} was too large to keep ({step['too_large']:,} bytes) then")
            if "not_kept" in step:
                raise ValueError(f"{path} was not kept then: {step['not_kept']}")
            return True, zlib.decompress((self.dir / step["copy"]).read_bytes()) if "copy" in step else None
        return False, None

    def _steps_kept_bytes(self) -> int:
        """What the copies keep_step made take, as counted as they were made (STEPS_SIZE_NAME)."""
        try:
            return int((self.dir / STEPS_SIZE_NAME).read_text(encoding="ascii"))
        except (OSError, ValueError):
            return 0

    @property
    def any_kept(self) -> bool:
        """Whether the file tools kept any file in this session (written before their first change)."""
        return (self.dir / INDEX_NAME).exists()

    def kept(self, path: str) -> bool:
        """Whether the file tools changed `path` in this session (kept, or listed as too large)."""
        return path in self._index()

    def changes(self, workdir: Path) -> list[Change]:
        """The files kept, in the order the agent first changed them, and how each stands now."""
        return [self._change(workdir, path, entry) for path, entry in self._index().items()]

    def before(self, path: str) -> bytes | None:
        """The file's bytes from before the session; None when there was no such file. ValueError
        when it was not kept (too large, or never changed by the agent)."""
        entry = self._index().get(path)
        if entry is None:
            raise ValueError(f"{path} was not changed by the agent's file tools in this session")
        if not entry.get("existed"):
            return None
        if "copy" not in entry:
            raise ValueError(f"{path} was too large to keep ({entry.get('too_large', 0):,} bytes): it cannot be "
                             "put back from here")
        return (self.dir / str(entry["copy"])).read_bytes()

    def diff(self, workdir: Path, change: Change) -> list[str]:
        """diff_lines for one of changes(): what the file was against what it is now."""
        return diff_lines(change, self.before(change.path) if change.kept else None, bytes_now(workdir, change.path))

    def put_back(self, workdir: Path, path: str) -> Change:
        """The work folder's `path` as it was before the session: its old bytes written back, or
        the file removed when the agent created it. Returns how it stands now."""
        write_back(workdir, path, self.before(path))
        return self._change(workdir, path, self._index()[path])

    def _change(self, workdir: Path, path: str, entry: dict) -> Change:
        existed, kept = bool(entry.get("existed")), not entry.get("existed") or "copy" in entry
        target = workdir / path
        if not target.is_file():
            now = "gone" if existed else "as before"
        elif not existed or not kept:
            now = "changed"
        else:
            same = target.stat().st_size == (self.dir / entry["copy"]).stat().st_size and \
                target.read_bytes() == (self.dir / entry["copy"]).read_bytes()
            now = "as before" if same else "changed"
        return Change(path, existed, kept, now)

    def _index(self) -> dict[str, dict]:
        try:
            index = json.loads((self.dir / INDEX_NAME).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise OriginalsUnreadable(f"{self.dir / INDEX_NAME} cannot be read ({exc}): the files from before "
                                      "the session are in that folder, by number") from exc
        if not isinstance(index, dict):
            raise OriginalsUnreadable(f"{self.dir / INDEX_NAME} is not a list of kept files")
        return index
