"""Project instructions: the AGENTS.md (or CLAUDE.md) a project keeps for coding agents.

Read once, when a session starts, and kept in its first event: the prefix they join stays
byte-stable for the whole session even if the file changes, and a reopened session sees what the
agent saw. A long file is cut (the agent can read the rest with file_read).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Sequence
from pathlib import Path

from core.events import Compaction, Record, ToolResult

log = logging.getLogger(__name__)

# The first one found is used. AGENTS.md is the convention shared by most coding agents.
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 8_000  # about 2,000 tokens: a fifth of the fixed zone at most


def read_project_instructions(workdir: Path) -> tuple[str, str]:
    """(file name, text) of the workdir's instructions for agents; ("", "") when there are none."""
    return _read_instructions(workdir, "", MAX_INSTRUCTION_CHARS)


def _read_instructions(folder: Path, shown_in: str, limit: int) -> tuple[str, str]:
    """(file name, text, cut at `limit` characters) of a folder's instructions for agents; `shown_in`:
    the folder as the agent names it ("" for the work folder), for the note on a file cut short."""
    for name in INSTRUCTION_FILES:
        path = folder / name
        if not path.is_file():
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(limit * 4 + 1)  # a UTF-8 character is at most 4 bytes
        except OSError as exc:
            log.warning("project instructions %s not read: %s", path, exc)
            return "", ""
        if b"\x00" in data:
            log.warning("project instructions %s ignored: a binary file", path)
            return "", ""
        text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").strip()
        if len(text) > limit or path.stat().st_size > len(data):
            cut = text[:limit].rsplit("\n", 1)[0]
            next_line = cut.count("\n") + 2
            text = (f"{cut}\n[… {name} is longer; the rest is not shown here. Read it with "
                    f"file_read(path=\"{shown_in}{name}\", offset={next_line}).]")
        return name, text
    return "", ""


# The folders within the work folder that keep instructions of their own, named in the session's
# facts from the start: a command run in one (`cd packages/web && npm install`, against its "use
# pnpm, never npm") reads no file there, and so was never told them.
MAX_INSTRUCTION_FILES_NAMED = 12
INSTRUCTIONS_LOOK_S = 0.5  # looked for at most this long, at the session's start (a large tree: cut short)


def instruction_files_within(workdir: Path, data_dir: Path | None = None) -> tuple[str, ...]:
    """The instructions files of the folders within `workdir` ("packages/web/AGENTS.md"), the
    nearest first, passing over what file_list passes over (node_modules, .gitignore's); the
    work folder's own is not one of them. Blocking: a walk of the tree, cut at INSTRUCTIONS_LOOK_S."""
    from core.tools.skipped import Skipper  # (the tools import this module)

    root = workdir.resolve()
    skipper = Skipper(root, data_dir=data_dir)
    skipper.start(root)
    found: list[str] = []
    deadline = time.monotonic() + INSTRUCTIONS_LOOK_S
    try:
        for folder, dirs, files in os.walk(root):
            dirs[:] = skipper.folders_to_walk(Path(folder), dirs)
            if folder != str(root) and (name := next((n for n in INSTRUCTION_FILES if n in files), None)):
                found.append(Path(os.path.relpath(folder, root), name).as_posix())
            if len(found) > MAX_INSTRUCTION_FILES_NAMED or time.monotonic() > deadline:
                break
    except OSError as exc:  # (a folder that cannot be read: what was found stands)
        log.warning("folders' instructions not looked for in all of %s: %s", root, exc)
    return tuple(sorted(found, key=lambda path: (path.count("/"), path)))


# Instructions a folder within the work folder keeps for its own files: a monorepo's packages each
# have theirs (packages/web/AGENTS.md), as coding agents expect. Told to the agent, after what a
# file tool did, the first time it lists the folder or reads or writes a file in it (again after a
# compaction, which may have summarized them away).
TELLING_TOOLS = ("file_read", "file_write", "file_edit", "file_list")  # the file tools whose output tells them
MAX_FOLDER_INSTRUCTION_CHARS = 1_500  # each: it shares the output's room with what the tool read
FOLDER_NOTE_START = "[Instructions for the files in "
_FOLDER_NOTE = re.compile(r"^\[Instructions for the files in .+?/, from (.+?); follow them there:$", re.MULTILINE)


def folder_instructions(workdir: Path, within_folder: Path, told: set[str], target: Path | None = None) -> str:
    """The instructions of `within_folder` and the folders above it, below the work folder's own,
    that `told` does not name yet, as notes to end a tool's output (nearest last); `told` gains
    them. `target`: the file the tool read or wrote (its own instructions file adds no note)."""
    try:
        within = within_folder.relative_to(workdir)
    except ValueError:  # (outside the work folder: the agent's session files, an offload)
        return ""
    notes, folder, shown = [], workdir, ""
    for part in within.parts:
        folder, shown = folder / part, f"{shown}{part}/"
        name, text = _read_instructions(folder, shown, MAX_FOLDER_INSTRUCTION_CHARS)
        if name and f"{shown}{name}" not in told and folder / name != target:  # (read itself: no note)
            told.add(f"{shown}{name}")
            notes.append(f"\n\n{FOLDER_NOTE_START}{shown}, from {shown}{name}; follow them there:\n{text}\n[end of "
                         f"{shown}{name}]")
    return "".join(notes)


def instructions_told_since_compaction(records: Sequence[Record]) -> set[str]:
    """The folders' instruction files the agent was told, as the log says, in what it still reads
    whole: after the range the last compaction summarized (whose summary may not have kept them)."""
    compacted = next((r.event.last_seq for r in reversed(records) if isinstance(r.event, Compaction)), 0)
    told: set[str] = set()
    for record in reversed(records):
        if record.seq <= compacted:
            break
        event = record.event
        if isinstance(event, ToolResult) and event.name in TELLING_TOOLS and FOLDER_NOTE_START in event.content:
            told.update(_FOLDER_NOTE.findall(event.content))
    return told
