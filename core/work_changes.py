"""What the agent changed in the work folder, all of it: the files its file tools kept as they were
before the session (core/originals.py), and the files that differ from the copy made before its
first shell command (core/snapshot.py). A file the file tools kept is told by them (their copy is
older, and exact); the copy tells the rest."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from core.originals import Change, Originals, bytes_now, diff_lines
from core.patches import FILE_MODE, file_patch, path_in_repository, repository_top
from core.paths import named_files
from core.snapshot import (
    EXECUTABLE_MODE,
    GITLINK_MODE,
    LINK_MODE,
    Held,
    WorkFolderSnapshot,
)
from core.text import counted

log = logging.getLogger(__name__)

NESTED_NAMED = 5  # git repositories within the work folder, named where it says their files are not listed
LEFT_OUT_NAMED = 10  # files left out of a patch, named at its top; the rest are counted
UNKEPT_NAMED = 5  # files the log names as changed by the file tools with no copy kept, named
# Why a session's changes have no copy: Tripane kept copies of the files the file tools change
# (core/originals.py), and of the work folder before the first command (core/snapshot.py), only
# from some version on; a session recorded before opens as it was, with nothing to compare.
EARLIER_VERSION = "This session was recorded by an earlier version of Tripane, which kept no such copies."


@dataclass(frozen=True)
class NotListed:
    """Why what a session changed is not all in its list of changes, in sentences ("": nothing to say)."""

    files: str = ""  # the file tools' changes the log names, of which no copy was kept
    commands: str = ""  # what shell commands changed: listed too, not kept (and why), or none ran
    earlier: bool = False  # for either, because an earlier version recorded the session

    def text(self) -> str:
        return " ".join(part for part in (self.files, self.commands, EARLIER_VERSION if self.earlier else "") if part)


def counted_changes(changes: list[Change]) -> str:
    """"3 files changed by the agent, 1 not by it"."""
    outside = sum(1 for change in changes if change.outside)
    agents = len(changes) - outside
    return (f"{agents:,} file{'s' if agents != 1 else ''} changed by the agent"
            + (f", {outside:,} not by it" if outside else ""))


@dataclass
class Patch:
    """Changes to the work folder as one patch in git's format (core/patches.py)."""

    parts: list[bytes] = field(default_factory=list)  # each file's part
    files: list[str] = field(default_factory=list)  # the files in it, by their names in it
    left_out: list[str] = field(default_factory=list)  # files that could not go in, each with why

    @property
    def binary(self) -> bool:
        """Whether a file goes whole, as git's binary patch (which `patch` cannot apply)."""
        return any(b"\nGIT binary patch\n" in part for part in self.parts)

    def file(self, heading: str, workdir: Path) -> bytes:
        """The patch file: `heading` (what it is, one line), where and how to apply it, what was left
        out, then the files' parts (git and `patch` pass over the words before the first)."""
        files = counted(len(self.files), "file")
        how = "git apply FILE" if self.binary else "git apply FILE, or patch -p1 < FILE"
        top = repository_top(workdir)
        where = f"at the top of a copy of {top}" if top else f"in a copy of {workdir}"
        lines = [heading, f"{files}. To apply it {where}: {how}"]
        if self.left_out:
            lines.append(f"Not in it: {named_files(self.left_out, LEFT_OUT_NAMED)}.")
        return ("\n".join(lines) + "\n\n").encode("utf-8", "surrogateescape") + b"".join(self.parts)


def mode_now(target: Path) -> str:
    """git's mode of a work folder file as it is: EXECUTABLE_MODE when it may be run."""
    return EXECUTABLE_MODE if os.name == "posix" and os.stat(target).st_mode & 0o100 else FILE_MODE


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

    def sides(self, workdir: Path, change: Change) -> tuple[bytes | None, bytes | None]:
        """The file before (the session, or the first command; None: it did not exist, or was too
        large to keep) and now (None: gone)."""
        if change.by_command:
            before = self.snapshot.before(workdir, change.path)
        else:
            before = self.originals.before(change.path) if change.kept else None
        return before, bytes_now(workdir, change.path)

    def patch(self, workdir: Path, changes: list[Change]) -> Patch:
        """`changes` (of changes()) as one patch, before → now, named as `git diff` would name them
        (from the top of the git repository the work folder is in). A file with nothing to compare
        is left out, and said: its copy too large to keep, or a symbolic link (a patch of its
        target's name would write a file). SnapshotFailed when git cannot read the copy."""
        wanted = [change for change in changes if change.now != "as before"]
        from_copy = [change.path for change in wanted if change.by_command and change.kept]
        held = self.snapshot.held_many(workdir, from_copy) if from_copy else {}
        patch = Patch()
        for change in wanted:
            target = workdir / change.path
            mode, before = held.get(change.path, (None, None)) if change.by_command else (None, None)
            if not change.kept:
                patch.left_out.append(f"{change.path} (the file from before was too large to keep)")
            elif target.is_symlink() or mode == LINK_MODE:
                patch.left_out.append(f"{change.path} (a symbolic link)")
            elif mode == GITLINK_MODE:
                patch.left_out.append(f"{change.path} (a git repository of its own)")
            else:
                if not change.by_command:
                    before = self.originals.before(change.path)
                now = bytes_now(workdir, change.path)
                new_mode = mode_now(target) if now is not None else FILE_MODE
                old_mode = mode if mode is not None and os.name == "posix" else new_mode  # (Windows keeps no x bit)
                name = path_in_repository(workdir, change.path)
                if part := file_patch(name, before, now, old_mode, new_mode):
                    patch.parts.append(part)
                    patch.files.append(name)
        return patch

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

    def not_listed(self, by_tools: dict[str, str], copying: bool = True, commands_ran: int = 0) -> NotListed:
        """What changes() cannot list, and why. `by_tools`: the files the log says the file tools
        changed (path → how, ChangeTally); `copying`: the session copies the work folder before its
        first command (SessionStarted); `commands_ran`: how many the log says ran. The changes
        window said "The agent has changed no file in this session" of a session from before the
        copies, whose end said "hello.py (created); 3 shell commands ran". OriginalsUnreadable."""
        unkept = [path for path in by_tools if not self.originals.kept(path)]
        files = ""
        if unkept:
            named = named_files([f"{path} ({by_tools[path]})" for path in unkept], UNKEPT_NAMED)
            files = (f"Not listed: {named}, changed by the agent's file tools as the log says; no copy of "
                     f"{'it' if len(unkept) == 1 else 'them'} was kept, so {'it' if len(unkept) == 1 else 'they'} "
                     "cannot be put back from here.")
        commands, no_copy = self._about_commands(copying, commands_ran)
        return NotListed(files, commands, earlier=(bool(unkept) and not self.originals.any_kept) or no_copy)

    def _about_commands(self, copying: bool, commands_ran: int) -> tuple[str, bool]:
        """One sentence on what shell commands changed, and whether no copy was ever attempted."""
        if self.snapshot.taken:
            nested = self.snapshot.nested
            within = (f", nor those in the git repositories within it ({', '.join(nested[:NESTED_NAMED])}"
                      f"{f' and {len(nested) - NESTED_NAMED:,} more' if len(nested) > NESTED_NAMED else ''}), "
                      "which git does not copy" if nested else "")
            return ("Files changed by shell commands (or outside Tripane) since the agent's first command are listed "
                    f"too, against a copy of the work folder made before it ({self.snapshot.size_words()} in the "
                    f"session's folder); files its .gitignore leaves out are not{within}."), False
        if why := self.snapshot.why_not:
            return f"What shell commands changed is not listed: {why}.", False
        if not copying:
            return ("What shell commands changed is not listed: this session does not copy the work folder before "
                    "them (Settings → Copy the work folder)."), False
        if commands_ran and self.snapshot.due:  # (the copy is made, or found impossible, before the first)
            return (f"What {'the shell command' if commands_ran == 1 else f'the {commands_ran:,} shell commands'} "
                    "changed is not listed: no copy of the work folder was made before them."), True
        return "No shell command has run in this session.", False


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

