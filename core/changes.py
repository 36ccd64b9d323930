"""What the agent changed in the work folder, told when a run ends.

After a long run the person's first question is "what did it touch?". The file tools leave a
trail in the event log: each successful file_write or file_edit names its path, and file_write's
result says whether the file was created or replaced. Shell commands can change files too: each
command's CommandChangedFiles names what it changed (found against the work folder as it was just
before it, core/snapshot.py), and the line says how many ran (failed ones too).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import PurePath

from core.agent.rules import error_type
from core.events import (
    AssistantMessage,
    CommandChangedFiles,
    ErrorRecorded,
    FilesChangedOutside,
    FilesPutBack,
    Record,
    SessionStarted,
    ToolResult,
    WorkdirMoved,
)
from core.paths import common_folder, folder_of
from core.text import counted

FILE_TOOLS = ("file_write", "file_edit")
SHELL_TOOL = "shell_run"
# A failed command that ran all the same (its exit code, a time-out, the person's Stop, a crash in
# the middle) may have changed files; a refused one (denied, not allowed, malformed) did not run.
RAN_AND_FAILED = ("error", "interrupted")
LISTED = 12  # files named in the summary; the rest are counted
BY_A_COMMAND = "by a command"  # the end of how a command changed a file ("created by a command")


@dataclass
class ChangeTally:
    """Fed every record in order (live or replayed); says what changed so far."""
    _pending: dict[str, tuple[str, str]] = field(default_factory=dict)  # call id → (tool, path)
    # path → created | edited | replaced, or changed | created | deleted "by a command"
    changed: dict[str, str] = field(default_factory=dict)
    shell_commands: int = 0
    unnamed: int = 0  # files commands changed beyond those their events name
    unnamed_within: list[str] = field(default_factory=list)  # the folders those are in (as events say)
    workdir: str = ""  # a path the agent gave in full is told relative to it, as a put-back names it
    named_by_commands: set[str] = field(default_factory=set)  # every file a CommandChangedFiles names
    # Files the agent changed and that were changed outside its tools since (FilesChangedOutside):
    # putting them back loses that change too, likely the person's.
    changed_since: set[str] = field(default_factory=set)
    # path → what first changed it among the records fed: "tool" (a file tool's write), "command"
    # (named by a CommandChangedFiles) or "put back" (the person's put-back); for going back
    # (core/branch.py), which tallies the records after the point.
    first_changed_by: dict[str, str] = field(default_factory=dict)

    def add(self, record: Record) -> None:
        event = record.event
        if isinstance(event, SessionStarted):
            self.workdir = str(event.workdir)
        elif isinstance(event, WorkdirMoved):
            self.workdir = event.workdir
        elif isinstance(event, FilesPutBack):  # as before the session: no change of the agent's is left
            for path in (*event.paths, *event.removed):
                self.first_changed_by.setdefault(path, "put back")
                self.changed.pop(path, None)
                self.changed_since.discard(path)
        elif isinstance(event, CommandChangedFiles):
            self._by_command(event)
            self.named_by_commands |= event.paths()
            for path in event.paths():
                self.first_changed_by.setdefault(path, "command")
            self.changed_since -= event.paths()
        elif isinstance(event, FilesChangedOutside):
            self.changed_since |= event.paths() & self.changed.keys()
        elif isinstance(event, AssistantMessage):
            for call in event.tool_calls:
                if call.name in FILE_TOOLS and (path := relative(path_of(call.arguments), self.workdir)):
                    self._pending[call.id] = (call.name, path)
        elif isinstance(event, ToolResult):
            if event.name == SHELL_TOOL and event.ok:
                self.shell_commands += 1
            pending = self._pending.pop(event.call_id, None)
            if pending is not None and event.ok:
                tool, path = pending
                self.changed[path] = _how(tool, event.content, self.changed.get(path))
                self.first_changed_by.setdefault(path, "tool")
                self.changed_since.discard(path)
        elif isinstance(event, ErrorRecorded) and event.tool == SHELL_TOOL:
            if error_type(event.signature) in RAN_AND_FAILED:
                self.shell_commands += 1

    def _by_command(self, event: CommandChangedFiles) -> None:
        """A file tool's word on a file stands (it says more); a file created in the session and
        deleted by a command is no change at all."""
        for path in event.changed:
            self.changed.setdefault(path, "changed by a command")
        for path in event.created:
            before = self.changed.get(path)
            self.changed[path] = "changed by a command" if before == "deleted by a command" else \
                before or "created by a command"
        for path in event.deleted:
            if self.changed.get(path, "").startswith("created"):
                del self.changed[path]
            else:
                self.changed[path] = "deleted by a command"
        self.unnamed += event.more
        if event.more:
            self.unnamed_within.append(event.within)

    def summary(self) -> str:
        """e.g. "calc.py (edited), tests/test_calc.py (created); 3 shell commands ran"; "" if none.
        (What a command changed is named when the work folder was copied; without a copy it is not
        known, so a run of commands alone says no more than that they ran.)"""
        parts = []
        if self.changed:
            parts.append(self._files())
        if self.shell_commands:  # (what they changed is found in the work folder: core/work_changes.py)
            if not parts:  # ("Changed in the work folder: 3 shell commands ran" said a change no one found)
                parts.append("no file by its file tools")
            parts.append("1 shell command ran" if self.shell_commands == 1 else
                         f"{self.shell_commands} shell commands ran")
        return "; ".join(parts)

    def _files(self) -> str:
        """The files named, the file tools' first: those the agent meant to change. When commands
        changed more than can be named (a formatter run over a package), they are counted with the
        folder they are in: 600 of their names hid the one file the agent edited."""
        by_tools = [f"{path} ({how})" for path, how in self.changed.items() if not how.endswith(BY_A_COMMAND)]
        by_commands = [path for path, how in self.changed.items() if how.endswith(BY_A_COMMAND)]
        if len(by_tools) + len(by_commands) <= LISTED:
            named = by_tools + [f"{path} ({self.changed[path]})" for path in by_commands]
            return ", ".join(named) + (f" and {self.unnamed:,} more" if self.unnamed else "")
        text = ", ".join(by_tools[:LISTED]) + (f" and {len(by_tools) - LISTED:,} more" if len(by_tools) > LISTED else "")
        if by_commands or self.unnamed:
            count = len(by_commands) + self.unnamed
            under = common_folder([*map(folder_of, by_commands), *self.unnamed_within])
            by_them = f"{counted(count, 'file')} changed by commands" + (f" in {under}/" if under else "")
            text = f"{text}, {by_them}" if text else by_them
        return text


def may_have_changed_files(event) -> bool:
    """Whether an event may have changed the work folder's files: a file tool's write, any shell
    command (a failed one may have run), a put-back."""
    if isinstance(event, ToolResult):
        return event.name == SHELL_TOOL or (event.name in FILE_TOOLS and event.ok)
    return isinstance(event, FilesPutBack)


def path_of(arguments: str) -> str:
    """The `path` argument of a file tool's call, as a path ("" when there is none)."""
    try:
        path = json.loads(arguments).get("path")
    except (ValueError, AttributeError):  # malformed arguments: the call failed anyway
        return ""
    return str(PurePath(path.strip())) if isinstance(path, str) and path.strip() else ""


def relative(path: str, workdir: str) -> str:
    """A path the agent gave, as Tripane names it (core/originals.py): relative to the work folder
    when it is inside it, with / between its parts."""
    if not path:
        return ""
    given = PurePath(path)
    if given.is_absolute():
        try:
            given = given.relative_to(workdir)
        except ValueError:
            pass
    return given.as_posix()


def _how(tool: str, result: str, before: str | None) -> str:
    if before == "created":  # created in this session, whatever came after
        return "created"
    if tool == "file_write":
        return "created" if result.startswith("Created") else "replaced"
    return before if before == "replaced" else "edited"


def changes_line(records: Iterable[Record]) -> str:
    """The sentence for a session's records, or "" when its file tools changed nothing."""
    tally = ChangeTally()
    for record in records:
        tally.add(record)
    summary = tally.summary()
    return f"Changed in the work folder: {summary}" if summary else ""
