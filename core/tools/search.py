"""file_search: the lines of the workdir's text files that contain a text, like grep.

Without it the agent finds where a name is used by reading files one by one (each read stays in its
context) or with shell_run's grep, which asks the person to approve every search.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.tools.context import ToolContext
from core.tools.files import is_binary, walk_files
from core.tools.registry import ToolError

MAX_FILE_BYTES = 2_000_000  # larger files are logs or data, not source: skipped, and said so
MAX_FILES = 20_000  # a search stops after this many files (a vendored tree, a dataset)
MAX_LINE_CHARS = 200  # of a matching line, shown (minified code has lines of megabytes)
SUMMARY_ROOM = 300  # of the output, kept for the closing summary line
MAX_NAMED_SKIPS = 3


def file_search(ctx: ToolContext, query: str, path: str = ".", pattern: str = "*", regex: bool = False,
                ignore_case: bool = False) -> str:
    """Find the lines of the workdir's text files that contain a text, as grep does.

    Use it to find where a name is defined or used, where a message comes from, or which files
    mention a topic, instead of reading files one by one. Each result line is `path:LINE: text`,
    so you can read around it with file_read(path, offset=LINE). Hidden folders (.git, .venv),
    binary files and files over 2 MB are skipped. The output stops at about 4,000 characters:
    narrow the path, the pattern or the text when it says it stopped. Counts as a reading action
    for the 2-Action Rule.

    Args:
        query: The text to find (a Python regular expression when regex is true).
        path: Folder relative to the workdir to search under.
        pattern: Shell-style filter on file names, for example `*.py`.
        regex: Treat the query as a regular expression.
        ignore_case: Match letters regardless of case.
    """
    if not query:
        raise ToolError("Give a non-empty text to search for.")
    if "\n" in query:
        raise ToolError("The text to search for must fit on one line: lines are searched one by one.")
    try:
        matcher = re.compile(query if regex else re.escape(query), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"Not a valid regular expression: {exc}. Pass regex=false to search for the text as written.") from exc
    root = ctx.resolve_folder(path)
    workdir = ctx.workdir.resolve()
    if not _inside(root, workdir):
        raise ToolError(f"file_search searches the workdir; read {path!r} with file_read.")
    base = root.relative_to(workdir).as_posix()
    room = ctx.output_chars - SUMMARY_ROOM
    lines: list[str] = []
    used = files_seen = files_matched = 0
    too_big: list[str] = []
    stopped = ""
    for name, full in walk_files(root, pattern):
        files_seen += 1
        if files_seen > MAX_FILES:
            stopped = f"stopped after {MAX_FILES:,} files"
            break
        if not _inside(full, workdir):  # a link to a file elsewhere: not the agent's to read
            continue
        shown = name if base == "." else f"{base}/{name}"
        try:
            if is_binary(full):
                continue
            if full.stat().st_size > MAX_FILE_BYTES:
                too_big.append(shown)
                continue
            found = _matching_lines(full, matcher)
        except OSError:  # unreadable (permissions, a file removed meanwhile): not a result
            continue
        if found:
            files_matched += 1
        for number, text in found:
            line = f"{shown}:{number}: {text}\n"
            if used + len(line) > room:
                stopped = "stopped at the output limit"
                break
            lines.append(line)
            used += len(line)
        if stopped:
            break
    return "".join(lines) + _summary(query, path, pattern, len(lines), files_matched, stopped, too_big)


def _matching_lines(full: Path, matcher: re.Pattern[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    with open(full, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            if matcher.search(line):
                text = line.rstrip("\r\n")
                if len(text) > MAX_LINE_CHARS:
                    text = text[:MAX_LINE_CHARS] + "…"
                found.append((number, text))
    return found


def _summary(query: str, path: str, pattern: str, shown: int, files: int, stopped: str, too_big: list[str]) -> str:
    where = f"under {path!r}" + (f" in files matching {pattern!r}" if pattern != "*" else "")
    if stopped and not shown:
        said = f"[no lines containing {query!r} {where} in the first {MAX_FILES:,} files; {stopped}: narrow the path or pattern]"
    elif stopped:
        said = f"[{shown} matching lines shown from {files} files; {stopped}: narrow the path, pattern or text]"
    elif shown:
        said = f"[{shown} matching lines in {files} files {where}]"
    else:
        said = f"[no lines containing {query!r} {where}]"
    if too_big:
        named = ", ".join(too_big[:MAX_NAMED_SKIPS]) + (f" and {len(too_big) - MAX_NAMED_SKIPS} more" if len(too_big) > MAX_NAMED_SKIPS else "")
        said += f"\n[skipped, over {MAX_FILE_BYTES // 1_000_000} MB: {named}; read them with file_read]"
    return said


def _inside(full: Path, workdir: Path) -> bool:
    try:
        return full.resolve().is_relative_to(workdir)
    except OSError:
        return False
