"""What a tool may touch: the workdir, the session's offload folder, the working and long-term memory."""

from __future__ import annotations

import asyncio
import logging
import os
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from core import offload
from core.context.project import folder_instructions
from core.diffs import diff_told
from core.events import AGENT_FILES_NAMED, COMMAND_DIFF_HEAD, Event, FileSeen
from core.memory.working import FILES, WorkingMemory
from core.paths import within
from core.text import os_path
from core.tools.registry import ToolError

if TYPE_CHECKING:
    from core.memory.longterm import LongTermMemory
    from core.originals import Originals
    from core.snapshot import WorkFolderSnapshot
    from core.tools.seen import SeenFiles

log = logging.getLogger(__name__)

OFFLOAD_SCHEME = "offload:"
# Tools that end early when the person stops the call (not the run): a command that hangs; a
# research that goes on too long (its helper reports what it found so far).
STOPPABLE_TOOLS = frozenset({"shell_run", "delegate_research"})
MAX_PATH_CHARS = 1024
SESSION_SCHEME = "session:"  # the three working-memory files, to read (they change through their own tools)


@dataclass
class ToolContext:
    workdir: Path
    session_dir: Path
    memory: WorkingMemory
    # Events a tool produced (file changes); the loop records them after the tool returns.
    events: list[Event] = field(default_factory=list)
    # Events about what the tool's run did (what a command changed): recorded after its result.
    told_after: list[Event] = field(default_factory=list)
    # The plan version the agent last saw, recited in the request that led to this call.
    plan_version_seen: int = 0
    # Long-term memory shared by the sessions of this data folder (None: not available).
    long_memory: LongTermMemory | None = None
    session_id: str = ""
    # The most a tool should return; longer outputs are offloaded by the loop. file_read stays
    # under it, since the file it reads is already the full copy to come back to.
    output_chars: int = 4000
    # Told what a running tool prints, as it prints it (a view shows it live; None: nobody watches).
    on_output: Callable[[str], None] | None = None
    # Told the process id of a command as it starts (on POSIX, its process group's too): should
    # Tripane die before the command ends, a resume can tell whether it still runs.
    on_started: Callable[[int], None] | None = None
    # Told when a command returned but left processes of its group running (a dev server).
    on_left_running: Callable[[], None] | None = None
    # Whether what a command leaves running is kept for the person when the task ends done (a
    # window, which they can stop it from), rather than stopped with the run (a terminal's run).
    keeps_left_running: bool = False
    # Set when the person stops this call alone: a tool of STOPPABLE_TOOLS ends early and says so.
    stop_requested: asyncio.Event | None = None
    # Whether a fetched page's address is noted in findings.md: not for the person's own question
    # to a helper, of which nothing reaches the agent.
    notes_sources: bool = True
    # Where the files the agent changes are kept as they were before (None: not kept).
    originals: Originals | None = None
    # The copy of the work folder made before the session's first command (None: not made).
    snapshot: WorkFolderSnapshot | None = None
    call_id: str = ""  # the call the tool runs for
    # The work folder's files the agent read or wrote, as they were then, shared by the session's
    # calls: a rewrite of one that changed since is refused (None: not checked).
    seen: SeenFiles | None = None
    file_seen: FileSeen | None = None  # the file this call read or wrote, as it left it
    # The instructions of folders within the work folder (packages/web/AGENTS.md) told to the agent
    # since the session's last compaction (None: none are told, as to a research helper).
    instructions_told: set[str] | None = None
    # Files a process the commands left running changes at every step (a server's log): a command
    # is not said to have changed them.
    changing_on_their_own: frozenset[str] = frozenset()
    # Tripane's data folder, which the work folder may hold (a home folder does): not written by
    # the file tools (None: not checked).
    data_dir: Path | None = None
    # Whether the session's model sees pictures: file_read shows it a picture file, as a picture.
    sees_pictures: bool = False
    # Pictures the call opened for the model, kept in the session folder (core/pictures.py): they
    # follow its result in the conversation.
    pictures: list[str] = field(default_factory=list)
    # Whether the model has this picture (its path in the session folder) in view already.
    picture_in_view: Callable[[str], bool] = lambda picture: False

    def saw(self, target: Path) -> None:
        """The agent read or wrote `target` (a path `resolve` gave): as it is now, it is what it knows."""
        if self.seen is not None:
            self.file_seen = self.seen.saw(target) or self.file_seen

    def changed_since_seen(self, target: Path) -> bool:
        """Whether `target` changed since the agent last read or wrote it (a file it never did: no)."""
        return self.seen is not None and self.seen.changed_since_seen(target)

    @property
    def work_folder_copy_due(self) -> bool:
        """Whether before_command will copy the work folder (the session's first command)."""
        return self.snapshot is not None and self.snapshot.due

    def before_command(self) -> None:
        """Before a shell command: the work folder copied (the first time) and marked as it is,
        to tell what the command changes. Blocking. A failure is logged, and the command runs."""
        if self.snapshot is None:
            return
        try:
            self.snapshot.take(self.workdir)
            self.snapshot.mark(self.workdir)
        except OSError as exc:  # (SnapshotFailed too)
            log.warning("the work folder was not copied or marked before a command: %s", exc)

    def after_command(self) -> str:
        """After a shell command: what it changed in the work folder, as an event to record
        (CommandChangedFiles), and the line that ends its output for the agent ("" when it
        changed nothing). Without a copy, the files the agent read or wrote that it changed are
        named: the agent's reading of them is stale. Blocking."""
        diffs: dict[str, list[str]] = {}  # how the files the agent knew changed: it sees what it did
        if self.snapshot is None or not self.snapshot.taken:
            named = self.seen.settle(diffs=diffs) if self.seen is not None else None
            return "" if named is None else \
                f"\n[files you read or wrote that this command changed: {named.words(AGENT_FILES_NAMED)}]" + \
                _how_they_changed(diff_told(diffs, named.changed))
        try:
            changed = self.snapshot.command_changes(self.workdir, self.call_id)
        except OSError as exc:  # (SnapshotFailed too)
            log.warning("what a command changed was not found: %s", exc)
            return ""
        if changed is not None and self.changing_on_their_own:
            changed = changed.without(set(self.changing_on_their_own))
        try:
            if changed is not None:
                self.told_after.append(changed)
                if self.seen is not None and (known := self.seen.among(changed.changed)):
                    diffs = self.snapshot.diffs_since_mark(self.workdir, known)
            self.snapshot.mark(self.workdir)  # as the command left it: what changes next is not its
        except OSError as exc:
            log.warning("the work folder was not marked after a command: %s", exc)
        return "" if changed is None else "\n" + changed.for_the_agent() + \
            _how_they_changed(diff_told(diffs, changed.changed))

    def folder_instructions(self, target: Path, listed: bool = False) -> str:
        """For a file tool's output: the instructions of the folders holding `target` (a path
        `resolve` gave; `listed`: a folder, listed, whose own count too) that the agent has not
        been told yet ("" when none)."""
        if self.instructions_told is None:
            return ""
        return folder_instructions(self.workdir.resolve(), target if listed else target.parent,
                                   self.instructions_told, None if listed else target)

    def keep_original(self, target: Path) -> None:
        """Before a file tool writes `target` (a path `resolve` gave): keep it as it is, the first
        time in the session. A copy that cannot be made is logged, and the write goes on: the
        agent's work does not hang on the person's undo."""
        if self.originals is None:
            return
        try:
            self.originals.keep(target.relative_to(self.workdir.resolve()).as_posix(), target, self.call_id)
        except (OSError, ValueError) as exc:
            log.warning("the original of %s was not kept: %s", target, exc)

    @property
    def offload_dir(self) -> Path:
        return offload.folder_of(self.session_dir)

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """A path the agent named, confined to the workdir; to read, also `offload:NAME` (a saved
        large output) and `session:task_plan.md|findings.md|progress.md` (the working memory)."""
        scheme = next((s for s in (OFFLOAD_SCHEME, SESSION_SCHEME) if path.startswith(s)), None)
        if scheme and write:
            how = ("use plan_update or findings_add; progress.md is written by Tripane" if scheme == SESSION_SCHEME
                   else "saved outputs are kept as they were")
            raise ToolError(f"Refused: {path!r} can be read, not written ({how}).")
        if scheme == OFFLOAD_SCHEME:
            return confine(self.offload_dir, path[len(scheme):], "the offload folder")
        if scheme == SESSION_SCHEME:
            name = path[len(scheme):]
            if name not in FILES:
                raise ToolError(f"Unknown session file {name!r}: the session files are {', '.join(FILES)}.")
            return self.memory.path(name)
        target = confine(self.workdir, path, "the workdir")
        if write and self.data_dir is not None and within(target, self.data_dir) is not None \
                and within(self.workdir, self.data_dir) is None:
            raise ToolError(f"Refused: {path!r} is in Tripane's own data folder ({self.data_dir}), which the work folder "
                            "holds: its database and the sessions' files are Tripane's to write (the plan and "
                            "findings through plan_update and findings_add). Work on the project's files.")
        return target

    def found_elsewhere(self, path: str) -> str:
        """For a path not found in the work folder: where what it names is, when it is a saved
        output or a working-memory file named as if the work folder held it. The chat and the
        terminal show an offloaded output as "offload/NAME", and an agent gave that path back."""
        parts = PurePosixPath(path.strip().replace("\\", "/")).parts
        if len(parts) == 2 and parts[0] == "offload" and (self.offload_dir / parts[1]).is_file():
            return f' It is a saved output: read it as file_read(path="{OFFLOAD_SCHEME}{parts[1]}").'
        if len(parts) == 1 and parts[0] in FILES:
            return f' The session\'s own {parts[0]} is read as file_read(path="{SESSION_SCHEME}{parts[0]}").'
        return ""

    def resolve_folder(self, path: str) -> Path:
        """A folder to walk, named as `resolve` takes it."""
        target = self.resolve(path)
        if target.is_file():
            raise ToolError(f"{path!r} is a file, not a folder: read it with file_read, or give its folder.")
        if not target.is_dir():
            raise ToolError(f"No such folder: {path!r}.")
        return target


def _how_they_changed(diff: str) -> str:
    """What ends a command's output after the files it changed: the diff of those the agent knew."""
    return f"\n{COMMAND_DIFF_HEAD}\n{diff}" if diff else ""


def _as_meant(root: Path, path: str) -> Path:
    """`path` as written, or, when no such file exists, the file it means as the disk spells it.
    (Only unusual paths cost a look at the disk.)"""
    candidate = Path(path)
    if os.name != "nt" and "\\x" in path and not (root / candidate).exists():
        candidate = Path(os_path(path))  # a name file_list showed with its non-UTF-8 bytes as \xNN
    if not path.isascii() and not (root / candidate).exists():
        # A file from a Mac keeps "é" as e + accent (NFD), a model writes one character (NFC), and
        # Linux and Windows take them for different names.
        for form in ("NFC", "NFD"):
            other = Path(unicodedata.normalize(form, str(candidate)))
            if (root / other).exists():
                candidate = other
                break
    if os.sep == "/" and "\\" in path and not (root / candidate).exists():
        # A Windows-style path (src\app.py), where "\" is no separator: the file it means, and for
        # a new file, that file in its folder rather than a name with backslashes in it.
        candidate = Path(str(candidate).replace("\\", "/"))
    return candidate


def confine(root: Path, path: str, what: str) -> Path:
    if not path or "\x00" in path:
        raise ToolError("A non-empty path without NUL characters is required.")
    if "\n" in path or "\r" in path or len(path) > MAX_PATH_CHARS:
        raise ToolError(f"Not a path: {path[:80]!r}… has a line break or is over {MAX_PATH_CHARS} characters. "
                        "Pass the file's path alone.")
    if os.sep == "/" and len(path) > 2 and path[1] == ":" and path[0].isalpha() and path[2] in "\\/":
        raise ToolError(f"{path!r} is a Windows path, and this computer is not Windows. Use a path relative to "
                        f"{what}.")
    root = root.resolve()
    candidate = _as_meant(root, path)
    target = (candidate if candidate.is_absolute() else root / candidate).resolve()
    # resolve() follows symlinks, so a link that points outside is caught here too.
    if target != root and not target.is_relative_to(root):
        written = candidate if candidate.is_absolute() else root / candidate
        if os.path.normpath(written) == str(root) or Path(os.path.normpath(written)).is_relative_to(root):
            # A relative path told to be relative: the agent gave one, and tried it again.
            raise ToolError(f"Refused: {path!r} is a link in {what} that leads outside it, to {target}. "
                            f"Only what is inside {what} ({root}) can be used.")
        raise ToolError(
            f"Refused: {path!r} is outside {what} ({root}). Use a path relative to {what}."
        )
    return target
