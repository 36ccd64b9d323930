"""file_search: the lines of the workdir's text files that contain a text, like grep.

Without it the agent finds where a name is used by reading files one by one (each read stays in its
context) or with shell_run's grep, which asks the person to approve every search.
"""

from __future__ import annotations

import codecs
import fnmatch
import io
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from core import big_text
from core.documents import (
    ARCHIVE_SUFFIXES,
    SEARCHED_SUFFIXES,
    NoText,
    Places,
    kind_of_file,
)
from core.paths import common_folder, folder_of
from core.text import counted
from core.tools.context import ToolContext
from core.tools.files import (
    BINARY_PROBE_BYTES,
    DOCUMENTS_FOLDER,
    archive_folder,
    archived_file,
    document_text_file,
    is_binary,
    text_codec,
    walk_files,
)
from core.tools.files import archive_kind_of as archive_kind
from core.tools.registry import ToolError
from core.tools.skipped import Skipper

if TYPE_CHECKING:
    from core.archives import Member

MAX_FILE_BYTES = 2_000_000  # larger files are logs or data, not source: skipped in a folder's search, and said so
MAX_FILES = 20_000  # a search stops after this many files (a vendored tree, a dataset)
MAX_LINE_CHARS = 200  # of a matching line, shown (minified code has lines of megabytes)
MATCH_LEAD_CHARS = 60  # of a long line, shown before its match
SUMMARY_ROOM = 1000  # of the output, kept for the closing lines (where the matches not shown are, what was skipped)
MAX_NAMED_SKIPS = 3
MAX_FOLDERS_NAMED = 5  # where the matches the output had no room for are, most first
MAX_KEPT_MATCHES = 1_000  # of a file's matching lines, kept to show (more would not fit the output): the rest counted
MAX_NAMED_FILE_BYTES = 4_000_000_000  # a file searched by its path, whatever its size up to this
PACKED_SUFFIXES = (".gz", ".bz2", ".xz")
SEARCH_UNPACK_BYTES = 1024 * 2**20  # of an archive's files, unpacked by one search (a dataset's tar: name a folder of it)


def file_search(ctx: ToolContext, query: str, path: str = ".", pattern: str = "*", regex: bool = False,
                ignore_case: bool = False, encoding: str = "") -> str:
    """Find the lines of the workdir's text files that contain a text, as grep does.

    Use it to find where a name is defined or used, where a message comes from, or which files
    mention a topic, instead of reading files one by one. Each result line is `path:LINE: text`,
    so you can read around it with file_read(path, offset=LINE). Hidden folders (.git, .venv),
    dependency and cache folders (node_modules, virtual environments), what .gitignore excludes,
    binary files and files over 2 MB are skipped (named at the end: give one as the path to
    search it; a file's path searches that file alone, whatever its size: a long log, a saved
    output `offload:NAME`; a zip or tar archive's path, its files). PDF, Word, Excel and
    PowerPoint files and Jupyter notebooks are searched in their text, LINE as file_read reads it,
    with the match's page (slide, sheet and row, cell). The output stops at about 4,000 characters and then says how many matches are
    left and in which folders: narrow the path, the pattern or the text. Counts as a reading
    action for the 2-Action Rule. Files that are not UTF-8 are named at the end: search them
    again with their encoding to match their non-ASCII text.

    Args:
        query: The text to find (a Python regular expression when regex is true).
        path: Folder relative to the workdir to search under, or one file to search.
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
    workdir = ctx.workdir.resolve()
    named = ctx.resolve(path)
    archived = None  # (an archive, or a folder in one: the files under it)
    not_searched: list[str] = []  # the archive's files not searched, each with why
    try:
        named = archived_file(ctx, named, path) or named  # (a file in an archive, bundle.zip/logs/app.log)
    except ToolError:
        if not (archived := archive_folder(ctx, path)):  # (not a file in it: a folder, or neither, said)
            raise
    if archived or (named.is_file() and archive_kind(named)):
        archived = archived or archive_folder(ctx, path)
        files = _archive_files(ctx, archived, pattern, path.replace("\\", "/").rstrip("/"), not_searched)
        base, size_cap, skipper = path.replace("\\", "/").rstrip("/"), MAX_NAMED_FILE_BYTES, None
        where = f"in the archive {path!r}" + (f" in files matching {pattern!r}" if pattern != "*" else "")
    elif named.is_file():  # one file, by its path: searched whatever its size (a long log, a saved output)
        if (size := named.stat().st_size) > MAX_NAMED_FILE_BYTES:
            raise ToolError(f"{path!r} is {size:,} bytes, more than file_search reads ({MAX_NAMED_FILE_BYTES:,}): search "
                            "it with a command (grep).")
        files, base, size_cap, where = iter([(path, named)]), ".", MAX_NAMED_FILE_BYTES, f"in {path!r}"
        skipper = None
    else:
        root = ctx.resolve_folder(path)
        if not _inside(root, workdir):
            raise ToolError(f"file_search searches the workdir, or one file by its path; read {path!r} with file_read.")
        base = root.relative_to(workdir).as_posix()
        skipper = Skipper(workdir, data_dir=ctx.data_dir)
        files, size_cap = walk_files(root, pattern, skipper), MAX_FILE_BYTES
        where = f"under {path!r}" + (f" in files matching {pattern!r}" if pattern != "*" else "")
    room = ctx.output_chars - SUMMARY_ROOM
    lines: list[str] = []
    used = files_seen = files_matched = files_shown = 0
    too_big: list[str] = []
    misread: list[str] = []  # files the codec cannot read: their other characters were searched as �
    textless: list[str] = []  # documents with no text to search: scans, or locked with a password
    packed: list[str] = []  # compressed files (app.log.2.gz), searched when named, not unpacked all
    archives: list[str] = []  # zips and tars, searched when named
    stopped = ""
    full_up = False  # the output is full: the rest of the matches are counted, by file
    not_shown: dict[str, int] = {}  # file → its matching lines past the output's room
    for name, full in files:
        files_seen += 1
        if files_seen > MAX_FILES:
            stopped = f"stopped after {MAX_FILES:,} files"
            break
        if skipper and not _inside(full, workdir):  # a link to a file elsewhere: not the agent's to read
            continue
        shown = name if base == "." else f"{base}/{name}"
        try:
            if not encoding and (full is named or name.lower().endswith(SEARCHED_SUFFIXES)
                                 or (archived and name.lower().endswith(PACKED_SUFFIXES))) \
                    and (kind := kind_of_file(full)):
                try:  # (its text, extracted once and kept: LINE as file_read numbers it)
                    full, document = document_text_file(ctx, full, shown, kind)[0], True
                except NoText:
                    textless.append(shown)
                    continue
            elif not wide and is_binary(full):
                if full is named:
                    raise ToolError(f"{path!r} is a binary file: file_search searches text.")
                if name.lower().endswith(ARCHIVE_SUFFIXES):  # (a bundle of logs: its files searched when named)
                    archives.append(shown)
                elif name.lower().endswith(PACKED_SUFFIXES):  # (a rotated log: unpacked when named)
                    packed.append(shown)
                continue
            else:
                document = False
            if full.stat().st_size > size_cap:
                too_big.append(shown)
                continue
            found = _matching_lines(full, matcher, codec, literal=not regex, document=document)
        except OSError:  # unreadable (permissions, a file removed meanwhile): not a result
            continue
        if wide and not found.readable:
            continue
        if not found.readable:
            misread.append(shown)
        if found.lines:
            files_matched += 1
        for index, (number, text) in enumerate(found.lines):
            line = f"{shown}:{number}: {text}\n"
            if full_up or used + len(line) > room:
                full_up = True
                not_shown[shown] = found.count - index
                break
            lines.append(line)
            used += len(line)
            files_shown += index == 0
    skipped = skipper.note("searched") if skipper else ""
    if full_up:
        stopped = ("stopped at the output limit" + _where_the_rest_are(not_shown)
                   + (f"; the search {stopped}" if stopped else ""))
    return "".join(lines) + _summary(query, where, len(lines), files_shown, stopped, too_big) + \
        _misread_note(misread, codec) + (f"\n[documents with no text to search (scans, or locked with a password): "
                                         f"{_named(textless)}]" if textless else "") + \
        (f"\n[compressed files passed over: {_named(packed)}; search one by naming it as the path]" if packed else "") + \
        (f"\n[archives passed over: {_named(archives)}; search one by naming it as the path]" if archives else "") + \
        (f"\n[files of the archive not searched: {_named(not_searched)}]" if not_searched else "") + \
        (f"\n{skipped}" if skipped else "")


def _archive_files(ctx: ToolContext, archived: tuple[Path, str, list[Member]], pattern: str, named: str,
                   not_searched: list[str]) -> Iterator[tuple[str, Path]]:
    """The files of an archive (or of a folder in one) whose names match `pattern`, unpacked, as
    (their path from the archive's, `named`, full path): binary ones are passed over unpacked (a
    core dump in a support bundle), the others until SEARCH_UNPACK_BYTES. What is not searched is
    added to `not_searched`, each with why."""
    from core.archives import MEMBER_MAX_BYTES, NotInArchive, first_bytes, member_files

    archive, prefix, entries = archived
    kind = archive_kind(archive) or ""
    wanted = [entry for entry in entries if fnmatch.fnmatch(entry.name.rsplit("/", 1)[-1], pattern)]
    searched = []
    for entry in wanted:
        why = ("locked with a password" if entry.locked
               else f"over {MEMBER_MAX_BYTES // 2**20} MB unpacked" if entry.size > MEMBER_MAX_BYTES
               else "an archive: search it by naming it as the path" if entry.name.lower().endswith(ARCHIVE_SUFFIXES)
               else "")
        if why:
            not_searched.append(f"{named}/{entry.name} ({why})")
        else:
            searched.append(entry)
    try:
        texts = [entry for entry, head in first_bytes(archive, kind, prefix, searched, BINARY_PROBE_BYTES)
                 if head is None or b"\x00" not in head
                 or entry.name.lower().endswith((*SEARCHED_SUFFIXES, *PACKED_SUFFIXES))]
    except NotInArchive as why:
        raise ToolError(str(why)) from None
    unpacked = 0
    for index, entry in enumerate(texts):
        unpacked += entry.size
        if unpacked > SEARCH_UNPACK_BYTES:
            not_searched.extend(f"{named}/{rest.name} (past the {SEARCH_UNPACK_BYTES // 2**20} MB a search unpacks: "
                                "name its folder or it)" for rest in texts[index:])
            texts = texts[:index]
            break
    try:
        for entry, kept, why in member_files(archive, kind, ctx.offload_dir / DOCUMENTS_FOLDER, prefix, texts):
            if kept is None:
                not_searched.append(f"{named}/{entry.name} ({why.rstrip('.')})")
            else:
                yield entry.name, kept
    except NotInArchive as why:
        raise ToolError(str(why)) from None


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


class Matches(NamedTuple):
    lines: list[tuple[int, str]]  # (LINE, its text), the first MAX_KEPT_MATCHES of them
    count: int  # of all the file's matching lines
    readable: bool  # whether the codec read all of the file


def _matching_lines(full: Path, matcher: re.Pattern[str], codec: str, literal: bool,
                    document: bool = False) -> Matches:
    """The matching lines of a file, read a slice at a time (a 1 GB log named by its path is not
    held whole), and whether `codec` read all of it. Of a document's text, each line says its
    place (a PDF's page, a workbook's sheet and row, a notebook's cell): what a finding cites."""
    found: list[tuple[int, str]] = []
    count = number = 0
    readable = True
    places = Places() if document else None
    for block, whole in _blocks(full, codec):
        readable = readable and whole
        if literal and places is None and not matcher.search(block):  # most slices: one scan, no lines (a
            number += _line_count(block)                                # one-line text is found in the whole
            continue                                                    # only where a line has it)
        # Lines end where file_read's do (\n, \r\n or \r; not str.splitlines' form feeds and
        # separators), so a result's LINE is the offset to read it at.
        for number, line in enumerate(io.StringIO(block, newline=""), start=number + 1):
            line = line.rstrip("\r\n")
            place = places.of(number, line) if places else ""
            if match := matcher.search(line):
                count += 1
                if len(found) < MAX_KEPT_MATCHES:
                    found.append((number, place + _around(line, match)))
    return Matches(found, count, readable)


def _blocks(full: Path, codec: str) -> Iterator[tuple[str, bool]]:
    """The file's text in slices of whole lines, each with whether it decoded without error (after
    an error, the rest is read with its undecodable bytes as �). A file of the size a search of a
    folder reads is one slice, decoded whole."""
    if full.stat().st_size <= MAX_FILE_BYTES:
        data = full.read_bytes()
        try:
            yield data.decode(codec), True
        except UnicodeError:
            yield data.decode(codec, errors="replace"), False
        return
    decoder = codecs.getincrementaldecoder(codec)("strict")
    whole = True
    pending: list[str] = []  # the text after the last line break read: a line still going on
    with open(full, "rb") as fh:
        while True:
            data = fh.read(big_text.SLICE)
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeError:  # (UTF-16 without a byte order mark raises the base class)
                whole = False
                decoder = codecs.getincrementaldecoder(codec)("replace")
                text = decoder.decode(data, final=not data)
            if not data:
                if rest := "".join(pending) + text:
                    yield rest, whole
                return
            cut = text.rfind("\n") + 1
            if not cut:
                pending.append(text)
                continue
            yield "".join(pending) + text[:cut], whole
            pending = [text[cut:]]


def _line_count(block: str) -> int:
    return block.count("\n") + block.count("\r") - block.count("\r\n")


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


def _summary(query: str, where: str, shown: int, files: int, stopped: str, too_big: list[str]) -> str:
    if stopped and not shown:
        said = f"[no lines containing {query!r} {where} in the first {MAX_FILES:,} files; {stopped}: narrow the path or pattern]"
    elif stopped:
        said = f"[{counted(shown, 'matching line')} shown from {counted(files, 'file')}; {stopped}: narrow the path, pattern or text]"
    elif shown:
        said = f"[{counted(shown, 'matching line')} in {counted(files, 'file')} {where}]"
    else:
        said = f"[no lines containing {query!r} {where}]"
    if too_big:
        said += (f"\n[skipped, over {MAX_FILE_BYTES // 1_000_000} MB: {_named(too_big)}; search one by naming it "
                 "as the path]")
    return said


def _inside(full: Path, workdir: Path) -> bool:
    try:
        return full.resolve().is_relative_to(workdir)
    except OSError:
        return False
