"""The work folder's files the agent read or wrote, as they were then: what it knows of them.

A whole-file rewrite of one that changed since is refused (core/tools/files.py): it would lose
what changed. While the work folder has no copy to compare with (before the first command, or
without git; core/snapshot.py), those that changed are also told to the agent at its next step,
once, as changed outside its tools; a command's changes to them are its own, and are not.

Each file is recorded with the result of the tool that read or wrote it (ToolResult.seen), so
a reopened session knows them again.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from core.events import (
    ChangedFiles,
    FilesChangedOutside,
    FileSeen,
    FilesPutBack,
    Record,
    ToolResult,
)

Stat = tuple[int, int] | None  # (mtime_ns, size); None: the file is gone


class SeenFiles:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self._seen: dict[str, tuple[int, int]] = {}  # path → as the agent last read or wrote it
        # path → as it was when its change was told to the agent, or put down to a command: a
        # change is told once, and the agent still has to read the file again to rewrite it.
        self._known: dict[str, Stat] = {}

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
        return FileSeen(path, *now)

    def knows(self, path: str) -> bool:
        """Whether the agent read or wrote `path` (relative to the work folder, with "/")."""
        return path in self._seen

    def changed_since_seen(self, target: Path) -> bool:
        """Whether `target` changed since the agent last read or wrote it (a file it never did: no;
        one gone: no, as a write makes it anew and loses nothing)."""
        path = self._within(target)
        if path is None:
            return False
        known = self._seen.get(path)
        now = _stat(target)
        return known is not None and now is not None and now != known

    def news(self) -> FilesChangedOutside | None:
        """The files that changed since the agent read or wrote them, not yet told: each told once.
        None when none did. Blocking (a stat of each file seen)."""
        news = self.settle()
        return None if news is None else FilesChangedOutside(changed=news.changed, deleted=news.deleted)

    def settle(self, paths: Iterable[str] | None = None) -> ChangedFiles | None:
        """What changed of the files seen (or of `paths` among them) is known already, not news to
        tell: a command's doing, or files the person put back (the agent is told of those).
        Returns the files whose change was not known before (None: none)."""
        wanted = None if paths is None else set(paths)
        changed, deleted = [], []
        for path, now in self._differing():
            if (wanted is None or path in wanted) and (path not in self._known or self._known[path] != now):
                self._known[path] = now
                (deleted if now is None else changed).append(path)
        return ChangedFiles(changed=tuple(changed), deleted=tuple(deleted)) if changed or deleted else None

    def _know(self, path: str, stat: tuple[int, int]) -> None:
        """The agent read or wrote `path`, so found: whatever changed before is old news."""
        self._seen[path] = stat
        self._known.pop(path, None)

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


def _ns(stamp: str) -> int | None:
    """A record's time stamp in nanoseconds since the epoch, as a file's modification time is."""
    try:
        return int(datetime.fromisoformat(stamp).timestamp() * 1_000_000_000)
    except ValueError:
        return None
