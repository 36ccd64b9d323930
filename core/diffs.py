"""Diffs of a file's bytes, and the diffs the agent is told of files it knew that changed: by a
command it ran, or outside its tools (the person's editor, another program)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

MAX_DIFF_BYTES = 2 * 1024 * 1024  # of each side; a larger file is told by its size
# The diffs the agent is told: lines around each change, and at most this many lines in all (a
# person's fix of a line or two is the usual case; a file rewritten by a program is better read
# than diffed).
TOLD_DIFF_CONTEXT = 2
TOLD_DIFF_LINES = 80
DIFFED_FILES = 10  # of those a command or the person changed: more would not fit in the lines told


def bytes_diff_lines(before: bytes | None, now: bytes | None, context: int = 3, name: str = "") -> list[str]:
    """Unified diff lines of two versions of a file (no file names; None: no such file); a binary
    or very large file as one line saying its sizes; [] when they do not differ. A Jupyter notebook
    (`name` says it is one) is diffed as the text file_read shows of it, its cells and outputs: its
    JSON's diff is mostly quoting, run times and pictures' base64."""
    sides = [b"" if data is None else data for data in (before, now)]
    if name.lower().endswith(".ipynb") and (texts := _notebook_texts(sides)):
        return list(difflib.unified_diff(*texts, lineterm="", n=context))[2:]
    if any(len(data) > MAX_DIFF_BYTES or b"\0" in data[:8192] for data in sides):
        return [f"(a binary or very large file: {len(sides[0]):,} bytes before, {len(sides[1]):,} now)"]
    texts = [data.decode("utf-8", errors="replace").splitlines() for data in sides]
    return list(difflib.unified_diff(*texts, lineterm="", n=context))[2:]  # no ---/+++


def _notebook_texts(sides: list[bytes]) -> list[list[str]] | None:
    """The lines of each side's notebook as read (an empty side: none); None when a side is not a
    notebook (its JSON broken: diffed as text) or is too large to parse here."""
    # (imported at the first notebook diffed: not at the window's start)
    from core import jupyter

    if any(len(data) > jupyter.MAX_DIFFED_BYTES for data in sides):
        return None
    try:
        return [jupyter.notebook_text(jupyter.parsed(data.decode("utf-8"))).splitlines() if data else []
                for data in sides]
    except (jupyter.NotANotebook, UnicodeDecodeError):
        return None


def diff_told(diffs: dict[str, list[str]], paths: Iterable[str]) -> str:
    """The diffs of `paths` (diff lines by path), each under its file's name, as the agent is told
    them: at most TOLD_DIFF_LINES lines, then how many more (the files can be read)."""
    lines = [line for path in paths if path in diffs for line in (f"--- {path}", *diffs[path])]
    if len(lines) > TOLD_DIFF_LINES:
        lines = [*lines[:TOLD_DIFF_LINES], f"… {len(lines) - TOLD_DIFF_LINES:,} more lines (read the files)"]
    return "\n".join(lines)
