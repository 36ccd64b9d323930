"""What the agent changed in the work folder, all of it: the files its file tools kept as they were
before the session (core/originals.py), and the files that differ from the copy made before its
first shell command (core/snapshot.py). A file the file tools kept is told by them (their copy is
older, and exact); the copy tells the rest."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from core.originals import Change, Originals, bytes_now, diff_lines
from core.snapshot import Held, WorkFolderSnapshot

log = logging.getLogger(__name__)

NESTED_NAMED = 5  # git repositories within the work folder, named where it says their files are not listed


def counted(changes: list[Change]) -> str:
    """"3 files changed by the agent, 1 not by it"."""
    outside = sum(1 for change in changes if change.outside)
    agents = len(changes) - outside
    return (f"{agents:,} file{'s' if agents != 1 else ''} changed by the agent"
            + (f", {outside:,} not by it" if outside else ""))


class WorkChanges:
    """A session's changes to its work folder (`session_dir`: the session's folder)."""

    def __init__(self, session_dir: Path):
        self.originals = Originals(session_dir)
        self.snapshot = WorkFolderSnapshot(session_dir)
        self._by_commands: set[str] | None = None  # the paths the copy lists, once read
        self._held: dict[str, Held] = {}  # how the copy holds the files to put back (read_ahead)

    def changes(self, workdir: Path, by_commands: set[str] | None = None,
                changed_since: set[str] = frozenset()) -> list[Change]:
        """The file tools' files in the order they were first changed, then the commands' by path.
        `by_commands`: the files the commands' records name (CommandChangedFiles); another file
        that differs from the copy is marked as changed outside the agent's work (None: not known).
        `changed_since`: files the agent changed, and that were changed outside its tools since.
        OriginalsUnreadable when the file tools' list cannot be read; SnapshotFailed when git
        cannot read the copy."""
        kept = self.originals.changes(workdir)
        by_tools = {change.path for change in kept}
        found = [change for change in self.snapshot.changes(workdir) if change.path not in by_tools]
        if by_commands is not None:
            found = [replace(change, outside=change.now != "as before" and change.path not in by_commands)
                     for change in found]
        return [replace(change, then_outside=True) if change.path in changed_since and not change.outside else change
                for change in kept + found]

    def diff(self, workdir: Path, change: Change) -> list[str]:
        """What was done to the file: before (the session, or the first command) against now."""
        if not change.by_command:
            return self.originals.diff(workdir, change)
        return diff_lines(change, self.snapshot.before(workdir, change.path), bytes_now(workdir, change.path))

    def put_back(self, workdir: Path, path: str) -> Change:
        """`path` as it was: from the file tools' copy when they kept it, else from the copy made
        before the first command."""
        if self.originals.kept(path) or not self.snapshot.taken:
            return self.originals.put_back(workdir, path)  # (ValueError for a file neither knows)
        if self._by_commands is None:  # (read once for a batch: git looks at the whole folder)
            self._by_commands = {change.path for change in self.snapshot.changes(workdir)}
        if path not in self._by_commands:  # (an ignored file is not in the copy: it would be deleted)
            raise ValueError(f"{path} is not one of the files the agent changed")
        return self.snapshot.put_back(workdir, path, self._held.get(path))

    def read_ahead(self, workdir: Path, paths: list[str]) -> None:
        """Before putting back many files, the copy's of them read at once (a few runs of git, not
        two for each file)."""
        if self.snapshot.taken:
            from_copy = [path for path in paths if not self.originals.kept(path)]
            self._held = self.snapshot.held_many(workdir, from_copy) if len(from_copy) > 1 else {}

    def mark_put_back(self, workdir: Path, paths: list[str]) -> None:
        """Files put back are the agent's news already (FilesPutBack): not changes outside it to
        tell again at its next step. A failure is logged (the agent is then told twice)."""
        try:
            self.snapshot.mark(workdir, paths)
        except OSError as exc:
            log.warning("the files put back were not marked in the copy: %s", exc)

    def about_commands(self, copying: bool = True) -> str:
        """One sentence on what shell commands changed: listed too, not kept (and why), or none ran.
        `copying`: the session copies the work folder before its first command (SessionStarted)."""
        if self.snapshot.taken:
            nested = self.snapshot.nested
            within = (f", nor those in the git repositories within it ({', '.join(nested[:NESTED_NAMED])}"
                      f"{f' and {len(nested) - NESTED_NAMED:,} more' if len(nested) > NESTED_NAMED else ''}), "
                      "which git does not copy" if nested else "")
            return ("Files changed by shell commands (or outside Tripane) since the agent's first command are listed "
                    f"too, against a copy of the work folder made before it ({self.snapshot.size_words()} in the "
                    f"session's folder); files its .gitignore leaves out are not{within}.")
        if why := self.snapshot.why_not:
            return f"What shell commands changed is not listed: {why}."
        if not copying:
            return ("What shell commands changed is not listed: this session does not copy the work folder before "
                    "them (Settings → Copy the work folder).")
        return "No shell command has run in this session."


def chosen_paths(given: list[str], changes: list[Change]) -> list[str]:
    """The files `given` names, of those `changes` lists: each a file as listed, or a folder ("."
    for the work folder) standing for its files not already as before. A formatter's 600 files
    are put back from the command line by their folder, not by 600 names. A name that is neither
    is kept, for put_back to refuse."""
    chosen: list[str] = []
    for path in given:
        folder = path.replace("\\", "/").strip("/")
        inside = [c.path for c in changes if c.now != "as before" and c.kept
                  and (folder in ("", ".") or c.path.startswith(folder + "/"))]
        if any(c.path == path for c in changes) or not inside:
            chosen.append(path)
        else:
            chosen.extend(inside)
    return list(dict.fromkeys(chosen))

