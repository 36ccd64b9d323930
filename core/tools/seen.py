"""The work folder's files the agent read or wrote, as they were then: what it knows of them.

A whole-file rewrite of one that changed since is refused (core/tools/files.py): it would lose
what changed. While the work folder has no copy to compare with (before the first command, or
without git; core/snapshot.py), those that changed are also told to the agent at its next step,
once, as changed outside its tools, with how they changed where their bytes were kept (small files,
in memory); a command's changes to them are its own, and are not.

Each file is recorded with the result of the tool that read or wrote it (ToolResult.seen), so
a reopened session knows them again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from core.diffs import TOLD_DIFF_CONTEXT, bytes_diff_lines
from core.events import (
    ChangedFiles,
    FilesChangedOutside,
    FileSeen,
    FilesPutBack,
    Record,
    ToolResult,
)

Stat = tuple[int, int] | None  # (mtime_ns, size); None: the file is gone
# Without a copy of the work folder to diff against, the bytes of the files the agent read or wrote
# are kept in memory, so that a change is told with its diff (core/diffs.py): those of a file up to
# KEPT_FILE_BYTES, and up to KEPT_BYTES in all, the files seen longest ago let go first.
KEPT_FILE_BYTES = 256 * 1024
KEPT_BYTES = 16 * 1024 * 1024


class SeenFiles:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._seen: dict[str, tuple[int, int]] = {}  # path → as the agent last read or wrote it
        # path → as it was when its change was told to the agent, or put down to a command: a
        # change is told once, and the agent still has to read the file again to rewrite it.
        self._known: dict[str, Stat] = {}
        self._kept: dict[str, bytes] = {}  # path → its bytes as last seen or told (in the order kept)
        self._kept_bytes = 0

    @classmethod
    def from_records(cls, workdir: Path, records: Iterable[Record]) -> SeenFiles:
        """The files a session's tools read or wrote, from its log. What changed before the last
        record of the work folder (a tool's result, a change told, a put-back) is taken as told
        or as a command's doing; what changed after (while the session was closed, or while the
        model thought before it was) is told at the next step. (Not its last record of all: the
        person's message that reopens it comes after their edits.)"""
        seen = cls(workdir)
        last = None
        for record in records:
            if isinstance(record.event, (ToolResult, FilesChangedOutside, FilesPutBack)):
                last = record
            if isinstance(record.event, ToolResult) and record.event.seen is not None:
                file = record.event.seen
                seen._know(file.path, (file.mtime_ns, file.size))
        if last is not None:
            closed_at = _ns(last.ts)
            for path, now in seen._differing():
                if now is None or closed_at is None or now[0] <= closed_at:
                    seen._known[path] = now
        return seen

    def saw(self, target: Path) -> FileSeen | None:
        """The agent read or wrote `target` (a path ToolContext.resolve gave): as it is now, it is
        what it knows; returned to be recorded. None for a file outside the work folder."""
        path, now = self._within(target), _stat(target)
        if path is None or now is None:
            return None
        self._know(path, now)
        self._keep(path, _small_file(target, now))
        return FileSeen(path, *now)

    def among(self, paths: Iterable[str]) -> list[str]:
        """Those of `paths` (relative to the work folder, with "/") the agent read or wrote."""
        return [path for path in paths if path in self._seen]

    def changed_since_seen(self, target: Path) -> bool:
        """Whether `target` changed since the agent last read or wrote it (a file it never did: no;
        one gone: no, as a write makes it anew and loses nothing)."""
        path = self._within(target)
        if path is None:
            return False
        known = self._seen.get(path)
        now = _stat(target)
        return known is not None and now is not None and now != known

    def news(self, diffs: dict[str, list[str]] | None = None) -> FilesChangedOutside | None:
        """The files that changed since the agent read or wrote them, not yet told: each told once.
        None when none did. `diffs` gets how each changed one differs from what the agent knew of
        it (unified diff lines), where its bytes were kept. Blocking (a stat of each file seen)."""
        news = self.settle(diffs=diffs)
        return None if news is None else FilesChangedOutside(changed=news.changed, deleted=news.deleted)

    def settle(self, paths: Iterable[str] | None = None,
               diffs: dict[str, list[str]] | None = None) -> ChangedFiles | None:
        """What changed of the files seen (or of `paths` among them) is known already, not news to
        tell: a command's doing, or files the person put back (the agent is told of those).
        Returns the files whose change was not known before (None: none); `diffs`: see news."""
        wanted = None if paths is None else set(paths)
        changed, deleted = [], []
        root = self.workdir.resolve()
        now_kept: dict[str, bytes | None] = {}  # (kept once all are diffed: keeping lets others go)
        for path, now in self._differing():
            if (wanted is None or path in wanted) and (path not in self._known or self._known[path] != now):
                self._known[path] = now
                (deleted if now is None else changed).append(path)
                data = now_kept[path] = None if now is None else _small_file(root / path, now)
                if diffs is not None and data is not None and (before := self._kept.get(path)) is not None:
                    if lines := bytes_diff_lines(before, data, context=TOLD_DIFF_CONTEXT, name=path):
                        diffs[path] = lines
        for path, data in now_kept.items():
            self._keep(path, data)  # what a later change is told against
        return ChangedFiles(changed=tuple(changed), deleted=tuple(deleted)) if changed or deleted else None

    def _know(self, path: str, stat: tuple[int, int]) -> None:
        """The agent read or wrote `path`, so found: whatever changed before is old news."""
        self._seen[path] = stat
        self._known.pop(path, None)

    def _keep(self, path: str, data: bytes | None) -> None:
        """`path`'s bytes as the agent now knows them (None: none to keep); the oldest kept let go
        past KEPT_BYTES."""
        self._kept_bytes -= len(self._kept.pop(path, b""))
        if data is None:
            return
        self._kept[path] = data
        self._kept_bytes += len(data)
        while self._kept_bytes > KEPT_BYTES:
            self._kept_bytes -= len(self._kept.pop(next(iter(self._kept))))

    def _within(self, target: Path) -> str | None:
        """`target` relative to the work folder, with "/" (None: outside it)."""
        try:
            return target.relative_to(self.workdir.resolve()).as_posix()
        except ValueError:
            return None

    def _differing(self) -> list[tuple[str, Stat]]:
        """(path, as it is now) for each file seen that changed since, in the order of the paths."""
        root = self.workdir.resolve()
        found = []
        for path in sorted(self._seen):
            now = _stat(root / path)
            if now != self._seen[path]:
                found.append((path, now))
        return found


def _stat(target: Path) -> Stat:
    try:
        found = os.stat(target)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


def _small_file(target: Path, stat: tuple[int, int]) -> bytes | None:
    """The file's bytes when it is small enough to keep (None: larger, or unreadable now)."""
    if stat[1] > KEPT_FILE_BYTES:
        return None
    try:
        with open(target, "rb") as fh:
            data = fh.read(KEPT_FILE_BYTES + 1)
    except OSError:
        return None
    return data if len(data) <= KEPT_FILE_BYTES else None  # (grown since its size was taken)


def _ns(stamp: str) -> int | None:
    """A record's time stamp in nanoseconds since the epoch, as a file's modification time is."""
    try:
        return int(datetime.fromisoformat(stamp).timestamp() * 1_000_000_000)
    except ValueError:
        return None
