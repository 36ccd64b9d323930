"""file_search: the lines of the workdir's text files that contain a text, like grep.

Without it the agent finds where a name is used by reading files one by one (each read stays in its
context) or with shell_run's grep, which asks the person to approve every search.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from pathlib import Path

from core.documents import SEARCHED_SUFFIXES, NoText, Places, kind_of_file
from core.paths import common_folder, folder_of
from core.text import counted
from core.tools.context import ToolContext
from core.tools.files import document_text_file, is_binary, text_codec, walk_files
from core.tools.registry import ToolError
from core.tools.skipped import Skipper

MAX_FILE_BYTES = 2_000_000  # larger files are logs or data, not source: skipped, and said so
MAX_FILES = 20_000  # a search stops after this many files (a vendored tree, a dataset)
MAX_LINE_CHARS = 200  # of a matching line, shown (minified code has lines of megabytes)
MATCH_LEAD_CHARS = 60  # of a long line, shown before its match
SUMMARY_ROOM = 1000  # of the output, kept for the closing lines (where the matches not shown are, what was skipped)
MAX_NAMED_SKIPS = 3
MAX_FOLDERS_NAMED = 5  # where the matches the output had no room for are, most first


def file_search(ctx: ToolContext, query: str, path: str = ".", pattern: str = "*", regex: bool = False,
                ignore_case: bool = False, encoding: str = "") -> str:
    """Find the lines of the workdir's text files that contain a text, as grep does.

    Use it to find where a name is defined or used, where a message comes from, or which files
    mention a topic, instead of reading files one by one. Each result line is `path:LINE: text`,
    so you can read around it with file_read(path, offset=LINE). Hidden folders (.git, .venv),
    dependency and cache folders (node_modules, virtual environments), what .gitignore excludes,
    binary files and files over 2 MB are skipped (folders named at the end: give one as the path
    to search it); PDF, Word, Excel and PowerPoint files and Jupyter notebooks are searched in
    their text, LINE as file_read reads it, with the match's page (slide, sheet and row, cell). The output stops at about
    4,000 characters and then says how many matches are left and in which folders: narrow the
    path, the pattern or the text. Counts as a reading action
    for the 2-Action Rule. Files that are not UTF-8 are named at the end: search them again
    with their encoding to match their non-ASCII text.

    Args:
        query: The text to find (a Python regular expression when regex is true).
        path: Folder relative to the workdir to search under.
        pattern: Shell-style filter on file names, for example `*.py`.
        regex: Treat the query as a regular expression.
        ignore_case: Match letters regardless of case.
        encoding: The files' text encoding when it is not UTF-8 (gbk, cp1252, …); empty for UTF-8.
    """
    if not query:
        raise ToolError("Give a non-empty text to search for.")
    if "\n" in query:
        raise ToolError("The text to search for must fit on one line: lines are searched one by one.")
    try:
        matcher = re.compile(query if regex else re.escape(query), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"Not a valid regular expression: {exc}. Pass regex=false to search for the text as written.") from exc
    codec = text_codec(encoding)
    # UTF-16 and UTF-32 text is full of NUL bytes, so binary files are told apart by not decoding.
    wide = codec.startswith(("utf-16", "utf-32"))
    root = ctx.resolve_folder(path)
    workdir = ctx.workdir.resolve()
    if not _inside(root, workdir):
        raise ToolError(f"file_search searches the workdir; read {path!r} with file_read.")
    base = root.relative_to(workdir).as_posix()
    room = ctx.output_chars - SUMMARY_ROOM
    lines: list[str] = []
    used = files_seen = files_matched = files_shown = 0
    too_big: list[str] = []
    misread: list[str] = []  # files the codec cannot read: their other characters were searched as �
    textless: list[str] = []  # documents with no text to search: scans, or locked with a password
    stopped = ""
    full_up = False  # the output is full: the rest of the matches are counted, by file
    not_shown: dict[str, int] = {}  # file → its matching lines past the output's room
    skipper = Skipper(workdir, data_dir=ctx.data_dir)
    for name, full in walk_files(root, pattern, skipper):
        files_seen += 1
        if files_seen > MAX_FILES:
            stopped = f"stopped after {MAX_FILES:,} files"
            break
        if not _inside(full, workdir):  # a link to a file elsewhere: not the agent's to read
            continue
        shown = name if base == "." else f"{base}/{name}"
        try:
            if not encoding and name.lower().endswith(SEARCHED_SUFFIXES) and (kind := kind_of_file(full)):
                try:  # (its text, extracted once and kept: LINE as file_read numbers it)
                    full, document = document_text_file(ctx, full, shown, kind)[0], True
                except NoText:
                    textless.append(shown)
                    continue
            elif not wide and is_binary(full):
                continue
            else:
                document = False
            if full.stat().st_size > MAX_FILE_BYTES:
                too_big.append(shown)
                continue
            found, readable = _matching_lines(full, matcher, codec, literal=not regex, document=document)
        except OSError:  # unreadable (permissions, a file removed meanwhile): not a result
            continue
        if wide and not readable:
            continue
        if not readable:
            misread.append(shown)
        if found:
            files_matched += 1
        for index, (number, text) in enumerate(found):
            line = f"{shown}:{number}: {text}\n"
            if full_up or used + len(line) > room:
                full_up = True
                not_shown[shown] = len(found) - index
                break
            lines.append(line)
            used += len(line)
            files_shown += index == 0
    skipped = skipper.note("searched")
    if full_up:
        stopped = ("stopped at the output limit" + _where_the_rest_are(not_shown)
                   + (f"; the search {stopped}" if stopped else ""))
    return "".join(lines) + _summary(query, path, pattern, len(lines), files_shown, stopped, too_big) + \
        _misread_note(misread, codec) + (f"\n[documents with no text to search (scans, or locked with a password): "
                                         f"{_named(textless)}]" if textless else "") + \
        (f"\n{skipped}" if skipped else "")


def _where_the_rest_are(not_shown: dict[str, int]) -> str:
    """How many matching lines the output had no room for, and the folders most of them are in
    (one level below the folder they all share): where to narrow the search to. Before, the agent
    saw the first 40 of 3,000 and nothing of where the rest were."""
    lines = sum(not_shown.values())
    within = common_folder(folder_of(path) for path in not_shown)
    by_folder: Counter[str] = Counter()
    for path, count in not_shown.items():
        below = path[len(within) + 1:] if within else path
        head, _, rest = below.partition("/")
        by_folder[(f"{within}/" if within else "") + (f"{head}/" if rest else head)] += count
    most = ", ".join(f"{folder} ({count:,})" for folder, count in by_folder.most_common(MAX_FOLDERS_NAMED))
    more = len(by_folder) - MAX_FOLDERS_NAMED
    return (f"; {counted(lines, 'more matching line')} in {counted(len(not_shown), 'file')}, most in {most}"
            + (f" and {more:,} more places" if more > 0 else ""))


def _matching_lines(full: Path, matcher: re.Pattern[str], codec: str, literal: bool,
                    document: bool = False) -> tuple[list[tuple[int, str]], bool]:
    """The matching lines of a file, and whether `codec` read all of it (the file is at most
    MAX_FILE_BYTES, so it is read whole). Of a document's text, each line says its place (a PDF's
    page, a workbook's sheet and row): what a finding cites."""
    data = full.read_bytes()
    try:
        text, readable = data.decode(codec), True
    except UnicodeDecodeError:
        text, readable = data.decode(codec, errors="replace"), False
    found: list[tuple[int, str]] = []
    if literal and not matcher.search(text):  # most files: one scan, no lines (a one-line text
        return found, readable                # is found in the whole only where a line has it)
    # Lines end where file_read's do (\n, \r\n or \r; not str.splitlines' form feeds and
    # separators), so a result's LINE is the offset to read it at.
    places = Places() if document else None
    for number, line in enumerate(io.StringIO(text, newline=""), start=1):
        line = line.rstrip("\r\n")
        place = places.of(number, line) if places else ""
        if match := matcher.search(line):
            found.append((number, place + _around(line, match)))
    return found, readable


def _around(line: str, match: re.Match[str]) -> str:
    """The line, or of a long one (minified code) MAX_LINE_CHARS around its first match: its start
    alone left out a match 5,000 characters in, the one thing searched for."""
    if len(line) <= MAX_LINE_CHARS:
        return line
    start = max(0, min(match.start() - MATCH_LEAD_CHARS, len(line) - MAX_LINE_CHARS))
    end = start + MAX_LINE_CHARS
    return ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")


def _misread_note(misread: list[str], codec: str) -> str:
    if not misread:
        return ""
    hint = 'search them with their encoding (encoding="gbk", "cp1252", …)' if codec == "utf-8" else \
        "they are in another encoding"
    return f"\n[not {codec}, so searched with their other characters as �: {_named(misread)}; {hint}]"


def _named(paths: list[str]) -> str:
    more = len(paths) - MAX_NAMED_SKIPS
    return ", ".join(paths[:MAX_NAMED_SKIPS]) + (f" and {more} more" if more > 0 else "")


def _summary(query: str, path: str, pattern: str, shown: int, files: int, stopped: str, too_big: list[str]) -> str:
    where = f"under {path!r}" + (f" in files matching {pattern!r}" if pattern != "*" else "")
    if stopped and not shown:
        said = f"[no lines containing {query!r} {where} in the first {MAX_FILES:,} files; {stopped}: narrow the path or pattern]"
    elif stopped:
        said = f"[{counted(shown, 'matching line')} shown from {counted(files, 'file')}; {stopped}: narrow the path, pattern or text]"
    elif shown:
        said = f"[{counted(shown, 'matching line')} in {counted(files, 'file')} {where}]"
    else:
        said = f"[no lines containing {query!r} {where}]"
    if too_big:
        said += f"\n[skipped, over {MAX_FILE_BYTES // 1_000_000} MB: {_named(too_big)}; read them with file_read]"
    return said


def _inside(full: Path, workdir: Path) -> bool:
    try:
        return full.resolve().is_relative_to(workdir)
    except OSError:
        return False
