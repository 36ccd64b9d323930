"""File tools, confined to the workdir the person chose."""

from __future__ import annotations

import codecs
import fnmatch
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from core import pictures
from core.documents import (
    DOCUMENTS_FOLDER,
    HEAD_BYTES,
    NOTEBOOK_SUFFIX,
    PACKED_KINDS,
    NoText,
    PicturesOnly,
    cache_stem,
    cached_text,
    kind_of_file,
    old_office_hint,
)
from core.memory.working import atomic_write
from core.text import shown_text
from core.tools.context import OFFLOAD_SCHEME, ToolContext
from core.tools.overview import fitted_listing
from core.tools.picture_result import refused, show_picture
from core.tools.registry import ToolError
from core.tools.skipped import Skipper

if TYPE_CHECKING:
    from core.archives import Member

BINARY_PROBE_BYTES = 8192
LIST_NOTE_ROOM = 600  # of a list's output, kept for the note of what it passed over
MAX_WRITE_CHARS = 5_000_000
MAX_EDIT_BYTES = 50_000_000  # a file larger is data (a dump, a log), not text to edit in memory
READ_HEADER_ROOM = 300  # of a read's output, kept for its header line


def file_read(ctx: ToolContext, path: str, offset: int = 1, limit: int = 400, encoding: str = "") -> str:
    """Read lines of a text file in the workdir, a saved large output, or a working-memory file.

    Use it before you change a file; to read any part of a large output that was saved to
    `offload:NAME` (the notice in the output names it); and to re-read your working memory in
    full with `session:task_plan.md`, `session:findings.md` or `session:progress.md` (after a
    compaction, or when the recitation's focus is not enough). The result starts with a header
    line `[path: lines A-B of N; continue with offset=…]`; the lines follow exactly as stored, so
    you can copy text from them into file_edit. One read returns at most about 4,000 characters
    of whole lines (fewer than `limit` when the lines are long): read a long file slice by slice,
    and only the slices you need, since what you read stays in your context. A PDF, Word, Excel
    or PowerPoint file is read as its text (the header says how it is laid out); a Jupyter
    notebook as its cells, each after a `# %% [cell K: …]` line, outputs on `#> ` lines (a
    chart's picture is a file to read); a zip or tar archive as the list of its files, each read by
    its path in it (`bundle.zip/logs/app.log`). Binary files are
    refused, but a picture (PNG, JPEG, GIF, WebP) is shown to you as one, when your model sees
    pictures. A file that is not UTF-8 is said so in the header, its other characters shown as �:
    read it again with its encoding (older Chinese projects: gbk; Windows files: cp1252).

    Args:
        path: File path relative to the workdir, `offload:NAME` for a saved large output, or `session:findings.md` (also task_plan.md, progress.md).
        offset: First line to return, counting from 1.
        limit: Maximum number of lines to return.
        encoding: The file's text encoding when it is not UTF-8 (gbk, cp1252, shift_jis, utf-16, …); empty for UTF-8.
    """
    named = _page_drawn(ctx, ctx.resolve(path))
    target = archived_file(ctx, named, path) or existing_file(named, path, ctx.found_elsewhere)
    if offset < 1 or limit < 1:
        raise ToolError("offset and limit must be at least 1.")
    codec = text_codec(encoding)
    if not encoding and target.suffix.lower() in pictures.KINDS and is_binary(target):
        return _picture(ctx, target, path)
    text_of, note = target, ""  # (a PDF, a Word document, … is read as its text, kept in a file)
    document = kind_of_file(target) if not encoding else None
    # An archive is looked for only where no document is (an Office file is a zip; a .tar.gz, gzip).
    if not encoding and document in (None, *PACKED_KINDS) and (kind := archive_kind_of(target)):
        try:
            text_of, about = document_text_file(ctx, target, path, kind)
        except NoText as why:
            raise ToolError(str(why)) from None
        note = f"; {about}"
    elif kind := document:
        text_of, note = _document_text_file(ctx, target, path, kind)
        if text_of is None:  # (a scan, for a model that sees its pages instead)
            return note
    elif not encoding and is_binary(target):
        raise ToolError(f"{path!r} is a binary file ({target.stat().st_size:,} bytes); only text files can be "
                        f"read.{_utf16_hint(target)}{old_office_hint(_head(target), path)}"
                        f"{data_file_hint(_head(target), path)}")
    instructions = ctx.folder_instructions(named if target is not named else target)  # (within the read's room)
    room = ctx.output_chars - len(instructions)
    try:
        total, lines, cut_note = _read_lines(text_of, codec, "strict", offset, limit, room)
    except UnicodeDecodeError:
        if encoding:
            raise ToolError(f"{path!r} is not {codec} (line {_first_bad_line(target, codec)}); read it with its "
                            "own encoding.") from None
        total, lines, cut_note = _read_lines(target, codec, "replace", offset, limit, room)
        note = (f"; not UTF-8 from line {_first_bad_line(target, codec)}: its other characters show as �, "
                "so read it with its encoding")
    if total and offset > total:
        raise ToolError(f"{path!r} has {total} lines; offset {offset} is past the end.")
    last = offset + len(lines) - 1
    more = f"; continue with offset={last + 1}" if last < total else ""
    shown = f"; encoding {codec}" if encoding else ""
    header = (f"[{path}: lines {offset}-{last} of {total}{more}{cut_note}{shown}{note}]\n" if total
              else f"[{path}: empty file{note}]\n")
    if target is named:  # (a file in an archive is the archive's: never written)
        ctx.saw(target)
    read = "".join(lines)
    return header + read + (instructions[1:] if read.endswith("\n") else instructions)  # (one blank line before)


def _document_text_file(ctx: ToolContext, target: Path, path: str, kind: str) -> tuple[Path | None, str]:
    """The file holding the text of the document `target` (extracted at its first read), and what
    the read's header says of it: of a PDF, to a model that sees pictures, how to see its pages.
    (None, what to say) for a scan such a model reads as pictures."""
    # (imported at the first document read: not at the window's start)
    from core.pdf_pages import scan_seen, seen_note

    pages = page_pictures_named(cache_stem(target, kind)) if kind == "pdf" and ctx.sees_pictures else ""
    try:
        text_file, about = document_text_file(ctx, target, path, kind)
    except PicturesOnly as scan:
        if pages:
            return None, scan_seen(path, scan.pages, pages)
        raise ToolError(str(scan)) from None
    except NoText as why:
        raise ToolError(str(why)) from None
    if kind == "ipynb":
        from core import jupyter

        about += jupyter.EDITED_AS_READ if about.endswith(jupyter.LAYOUT) else ""
    return text_file, f"; the text of {about}" + (seen_note(pages) if pages else "")


def page_pictures_named(stem: str) -> str:
    """How the agent names the picture of a PDF's page {K}, the PDF's text kept as `stem`."""
    from core.pdf_pages import page_name

    return f"{OFFLOAD_SCHEME}{DOCUMENTS_FOLDER}/{page_name(stem, '{K}')}"


def _page_drawn(ctx: ToolContext, target: Path) -> Path:
    """`target`; a PDF page's picture named in a read's header (offload:documents/pdf-…-page-K.png)
    is drawn first, at its first read."""
    if target.exists() or target.parent != ctx.offload_dir / DOCUMENTS_FOLDER:
        return target
    from core.pdf_pages import NotDrawn, drawn_page

    try:
        return drawn_page(target.parent, target.name) or target
    except NotDrawn as why:
        raise ToolError(str(why)) from None


def document_text_file(ctx: ToolContext, target: Path, path: str, kind: str) -> tuple[Path, str]:
    """The text of a document the agent reads or searches (an archive's list of files too), kept in
    the session's offload/documents/ with the pictures in it (a notebook's charts), which the text
    names for file_read."""
    return cached_text(target, ctx.offload_dir / DOCUMENTS_FOLDER, path, kind,
                       named=f"{OFFLOAD_SCHEME}{DOCUMENTS_FOLDER}/")


def archived_file(ctx: ToolContext, target: Path, path: str) -> Path | None:
    """For a path that names a file in an archive (`bundle.zip/logs/app.log`), that file, unpacked
    into the session's offload/documents/; None for any other path."""
    from core.archives import NotInArchive, archive_kind, found_in_archive, member_file

    if target.exists() or not (inside := found_in_archive(target, _archive_root(ctx, target))):
        return None
    archive, member = inside
    try:
        return member_file(archive, archive_kind(archive) or "", member, ctx.offload_dir / DOCUMENTS_FOLDER,
                           _archive_named(path, member, archive))
    except NotInArchive as why:
        raise ToolError(str(why)) from None


def _archive_root(ctx: ToolContext, target: Path) -> Path:
    """The folder an archive `target` is in may be in: the offload folder for an `offload:` path
    (an archive web_fetch kept), else the work folder."""
    offload = ctx.offload_dir.resolve()
    return offload if target.is_relative_to(offload) else ctx.workdir.resolve()


def _archive_named(path: str, within: str, archive: Path) -> str:
    """How the agent named the archive in `path`, which names `within` in it (what is said of the
    archive's files names it so)."""
    named = path.replace("\\", "/").rstrip("/")
    if not within:
        return named
    return named[:-len(within) - 1] if named.endswith("/" + within) else archive.name


def in_archive_refused(ctx: ToolContext, target: Path, path: str) -> None:
    """A file tool that would write into an archive (`bundle.zip/config.yml`) is refused, and says
    how to change the file."""
    from core.archives import found_in_archive

    if not target.exists() and (inside := found_in_archive(target, ctx.workdir.resolve())):
        raise ToolError(f"Not changed: {path!r} is in the archive {inside[0].name}, whose files are read, not changed. "
                        "Unpack it with a command (unzip, tar x) into the work folder and change the file there.")


def _head(target: Path) -> bytes:
    with open(target, "rb") as fh:
        return fh.read(HEAD_BYTES)


def _read_lines(target: Path, codec: str, errors: str, offset: int, limit: int,
                output_chars: int) -> tuple[int, list[str], str]:
    """(the file's line count, the lines of the slice, a note on a line cut short)."""
    lines: list[str] = []
    total = used = 0
    room = output_chars - READ_HEADER_ROOM
    full = False  # the slice has as much as one read returns; go on counting the file's lines
    cut_note = ""
    with open(target, encoding=codec, errors=errors, newline="") as fh:
        for total, line in enumerate(fh, start=1):
            if full or not offset <= total < offset + limit:
                continue
            if lines and used + len(line) > room:
                full = True
                continue
            if len(line) > room:  # a single line longer than a read: its start only
                line = line[:room] + "\n"
                cut_note = (f" (line {total} is longer; only its first {room:,} characters are shown: file_search "
                            "shows the text around a match further in)")
            lines.append(line)
            used += len(line)
    return total, lines, cut_note


def file_write(ctx: ToolContext, path: str, content: str, encoding: str = "") -> str:
    """Create or replace a text file in the workdir.

    The content replaces the whole file, so use it for new files or for a complete rewrite you
    have just read; for a change inside an existing file, file_edit is safer and cheaper. Missing
    folders are created. The write is atomic: a failure leaves the old file as it was. The result
    says whether the file was created or replaced and how many characters it now has. A file that
    is not UTF-8 is replaced only when you name the encoding to write (its own, or utf-8 to convert
    it): what a UTF-8 read showed of it is not its text. Write a Jupyter notebook (.ipynb) as its
    cells, a `# %%` line before each code cell and `# %% [markdown]` before each Markdown cell:
    Tripane writes the notebook's JSON.

    Args:
        path: File path relative to the workdir; missing folders are created.
        content: The complete new content of the file.
        encoding: The encoding to write when it is not UTF-8 (gbk, cp1252, …); empty for UTF-8.
    """
    if len(content) > MAX_WRITE_CHARS:
        raise ToolError(f"Content too large ({len(content):,} characters; limit {MAX_WRITE_CHARS:,}).")
    codec = text_codec(encoding)
    target = ctx.resolve(path, write=True)
    if target.is_dir():
        raise ToolError(f"{path!r} is a folder.")
    in_archive_refused(ctx, target, path)
    existed = target.exists()
    kept = before = ""
    if existed:  # read before anything is written: a file that is not UTF-8 is refused here, untouched
        existing_file(target, path)
        if ctx.changed_since_seen(target):
            raise ToolError(rewrite_refused(path, "changed since you last read or wrote it (by a command, the person, "
                                                  "or another program)"))
        # With an encoding named, the agent replaces the file knowingly: its old text only tells
        # the line endings, and a file in another encoding (being converted) has none to keep.
        before = ("" if target.stat().st_size > MAX_EDIT_BYTES  # (replaced whole: its line ends are not looked for)
                  else target.read_bytes().decode(codec, errors="replace") if encoding
                  else _read_existing(target, path, None))
    what = ""  # what the file is, when it says more than its length: a notebook's cells
    if not encoding and target.suffix.lower() == NOTEBOOK_SUFFIX:
        content, what = _notebook_written(content, before, path)
    if existed:
        if "\r\n" not in content and _uses_crlf(before):
            content, kept = _with_crlf(content), "; its CRLF line endings kept"
        if before.startswith(BOM) and not content.startswith(BOM):  # (an editor on Windows wrote it so)
            content, kept = BOM + content, kept + "; its byte order mark kept"
    data = _encoded(content, codec, path)
    ctx.keep_original(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(target, data)
    ctx.saw(target)
    shown = f", {codec}" if encoding else ""
    return (f"{'Replaced' if existed else 'Created'} {path} ({len(content):,} characters{shown}{kept})"
            + (f": {what}." if what else ".") + ctx.folder_instructions(target))


def _notebook_written(content: str, before: str, path: str) -> tuple[str, str]:
    """A notebook's JSON for the content given (its cells as text, or JSON), and what it is."""
    from core import jupyter

    try:
        return jupyter.for_writing(content, before or None)
    except jupyter.NotANotebook as why:
        raise ToolError(f"Not written: {path} would not open in Jupyter: {why}. Write its cells as text instead: a "
                        "`# %%` line before each code cell, `# %% [markdown]` before each Markdown cell.") from None


def rewrite_refused(path: str, how: str) -> str:
    """Why a whole-file rewrite was refused: the file `how` changed since the agent knew it."""
    return (f"Not written: {path} {how}, and this rewrite would lose that change. Read it again, then change it "
            "(file_edit keeps what it does not replace).")


BOM = "\ufeff"  # a UTF-8 file's first character, when the program that wrote it marked it so


def file_edit(ctx: ToolContext, path: str, old: str, new: str, encoding: str = "") -> str:
    """Replace one exact occurrence of a text in a file of the workdir.

    Copy `old` from a recent file_read, with its exact whitespace and enough surrounding lines to
    make it unique: an edit that finds the text 0 or several times is refused and changes nothing.
    To change several places, make several edits. To delete text, pass an empty `new`. A file that
    is not UTF-8 is edited in its own encoding, named in `encoding`; it stays in it. A Jupyter
    notebook is edited as file_read shows its cells (not its outputs): a `# %%` line in `new`
    starts a new cell (`# %% [markdown]` a Markdown one), and a cell left empty is removed.

    Args:
        path: File path relative to the workdir.
        old: The exact text to replace; it must occur exactly once.
        new: The replacement text.
        encoding: The file's text encoding when it is not UTF-8 (gbk, cp1252, …); empty for UTF-8.
    """
    codec = text_codec(encoding)
    target = ctx.resolve(path, write=True)
    in_archive_refused(ctx, target, path)
    target = existing_file(target, path)
    text = _read_existing(target, path, codec if encoding else None)
    if not encoding and target.suffix.lower() == NOTEBOOK_SUFFIX and (cells := _notebook_edited(text, old, new, path)):
        changed, said = cells
        ctx.keep_original(target)
        atomic_write(target, changed.encode("utf-8"))
        ctx.saw(target)
        return f"Edited {path}: {said}." + ctx.folder_instructions(target)
    if _uses_crlf(text):  # a model writes "\n" between the lines it copies from a CRLF file
        old, new = _with_crlf(old), _with_crlf(new)
    count = text.count(old) if old else 0
    if count != 1:
        # No tool name before it: the failure line the person reads already begins "file_edit failed:".
        if count == 0:
            raise ToolError(f"The text to replace was not found in {path!r}; it must occur exactly once. "
                            "Read the lines again with file_read and copy them as they are.")
        raise ToolError(f"The text to replace was found {count:,} times in {path!r}; it must occur exactly "
                        "once. Include more of the lines around it, so that it is found only where you mean.")
    edited = text.replace(old, new, 1)
    if not encoding and target.suffix.lower() == NOTEBOOK_SUFFIX:
        _still_a_notebook(text, edited, path)
    data = _encoded(edited, codec, path)
    ctx.keep_original(target)
    atomic_write(target, data)
    ctx.saw(target)
    return f"Edited {path}: replaced {len(old):,} characters with {len(new):,}." + ctx.folder_instructions(target)


def _notebook_edited(text: str, old: str, new: str, path: str) -> tuple[str, str] | None:
    """A notebook's JSON with `old` replaced by `new` in its cells (as file_read shows them), and
    what changed; None when it is edited as its text: its JSON is broken (the edit mends it), or
    `old` was copied from its JSON (as `cat` shows it)."""
    from core import jupyter

    try:
        changed, said = jupyter.edited(text, old.replace("\r\n", "\n"), new.replace("\r\n", "\n"))
    except jupyter.NotANotebook:
        return None
    except jupyter.Misses as miss:
        if miss.in_outputs:
            raise ToolError(f"The text to replace is in an output of {path!r} (a `#> ` line), which running the "
                            "notebook writes: edit its cells, as file_read shows them without the `#> ` lines.") from None
        if miss.count == 0 and old and text.count(old) == 1:
            return None
        if miss.count == 0:
            raise ToolError(f"The text to replace was not found in the cells of {path!r}; it must occur exactly once. "
                            "Read the cells again with file_read and copy their lines as they are (a `# %% [cell K: …]` "
                            "line too, to add a cell after another).") from None
        raise ToolError(f"The text to replace was found {miss.count:,} times in the cells of {path!r}; it must occur "
                        "exactly once. Include more of the lines around it, or the cell's `# %% [cell K: …]` line.") \
            from None
    if _uses_crlf(text):
        changed = _with_crlf(changed)
    run = f"; run it again to refresh them: `{jupyter.RUN_IT} {path}`" if any("outputs" in line for line in said) else ""
    return changed, ("; ".join(said) or "its cells are as they were") + run


def _still_a_notebook(before: str, after: str, path: str) -> None:
    """An edit of a notebook's JSON that breaks it is refused (Jupyter would not open it); one of a
    notebook already broken is its mending, and is made."""
    from core import jupyter

    try:
        jupyter.parsed(before)
    except jupyter.NotANotebook:
        return
    try:
        jupyter.parsed(after)
    except jupyter.NotANotebook as why:
        raise ToolError(f"Not edited: {path} would not open in Jupyter after this edit ({why}). Edit its cells as "
                        "file_read shows them, not its JSON.") from None


def existing_file(target: Path, path: str, elsewhere: Callable[[str], str] | None = None) -> Path:
    """`target` if it is a regular file. A named pipe or a device is refused: opening a pipe waits
    for a writer that may never come, and the tool would hang the run. `elsewhere`: where a file
    not found may be instead (ToolContext.found_elsewhere), said with the refusal."""
    if target.is_file():
        return target
    if target.exists():
        raise ToolError(f"{path!r} is not a regular file (a folder, a named pipe or a device); only files can be "
                        "read or changed.")
    raise ToolError(f"No such file: {path!r}." + (elsewhere(path) if elsewhere else ""))


def text_codec(encoding: str) -> str:
    """The codec an `encoding` argument names (empty: UTF-8)."""
    if not encoding.strip():
        return "utf-8"
    try:
        return codecs.lookup(encoding.strip()).name
    except LookupError:
        raise ToolError(f"Unknown encoding {encoding!r}: use a name such as utf-8, gbk, gb18030, big5, "
                        "shift_jis, cp1252, latin-1 or utf-16.") from None


def _read_existing(target: Path, path: str, codec: str | None) -> str:
    """A file's text before it is changed, in `codec`, or in UTF-8 if none was named. Never with
    replacement characters: written back, they would replace the characters they stand for."""
    if (size := target.stat().st_size) > MAX_EDIT_BYTES:  # (read whole, a 2 GB dump took gigabytes of memory)
        raise ToolError(f"{path!r} is too large to change as text ({size:,} bytes; at most {MAX_EDIT_BYTES:,}), so "
                        "it was not changed. Change it with a command (sed, a script) if it must be.")
    data = target.read_bytes()
    try:
        return data.decode(codec or "utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        if codec is None:
            raise ToolError(f"{path!r} is not UTF-8 (line {line}), so it was not changed. Name its encoding "
                            "(encoding=\"gbk\", \"cp1252\", …) to change it in that encoding, or encoding=\"utf-8\" "
                            "with file_write to convert it; unsure, ask the person.") from None
        raise ToolError(f"{path!r} is not {codec} (line {line}), so it was not changed; name its "
                        "encoding.") from None


def _encoded(text: str, codec: str, path: str) -> bytes:
    try:
        return text.encode(codec)
    except UnicodeEncodeError as exc:
        raise ToolError(f"{path!r} was not changed: {codec} has no {exc.object[exc.start:exc.end]!r}. Write "
                        f"the text without it, or the file in utf-8.") from None


def _first_bad_line(target: Path, codec: str) -> int:
    """The line of the first bytes `codec` cannot read, read in slices (the file may be large)."""
    decoder = codecs.getincrementaldecoder(codec)()
    line = 1
    with open(target, "rb") as fh:
        while chunk := fh.read(1 << 16):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                return line + chunk[:max(exc.start, 0)].count(b"\n")
            line += chunk.count(b"\n")
    return line


# Data files an analysis meets, by their first bytes (or name): how to read one, since file_read
# cannot. The agent was told "binary" and nothing of what the file was.
_DATA_FILES = (
    (b"SQLite format 3\x00", "", "a SQLite database: query it in a command (`sqlite3 {path} '.tables'`, or Python's "
                                  "sqlite3 module)"),
    (b"PAR1", "", "a Parquet table: read it in a command (`python -c \"import pandas as pd; "
                  "print(pd.read_parquet('{path}').head())\"`, with pyarrow)"),
    (b"ARROW1", "", "an Arrow (Feather) table: read it in a command with pandas.read_feather or pyarrow"),
    (b"\x89HDF\r\n\x1a\n", "", "an HDF5 file: read it in a command with h5py or pandas.read_hdf"),
    (b"\x93NUMPY", "", "a NumPy array: read it in a command with numpy.load"),
    (b"PK\x03\x04", ".npz", "NumPy arrays: read them in a command with numpy.load"),
    (b"\x80", (".pkl", ".pickle"), "a Python pickle: loading one runs the code it holds, so load only one from a "
                                    "source you trust, in a command"),
    # Archives and compression the file tools do not unpack (zip, tar, gzip, bzip2 and xz they do).
    (b"7z\xbc\xaf\x27\x1c", "", "a 7-Zip archive: list it with a command (`7z l {path}`) and unpack what you need "
                                "into the work folder (`7z x`)"),
    (b"Rar!\x1a\x07", "", "a RAR archive: list it with a command (`unrar l {path}`, or `7z l`) and unpack what you "
                        "need into the work folder"),
    (b"\x28\xb5\x2f\xfd", "", "zstd-compressed: unpack it with a command (`zstd -d {path}`, or `tar --zstd -xf` for "
                              "a .tar.zst) into the work folder"),
)


def data_file_hint(head: bytes, path: str) -> str:
    """What a binary data file is and how to read it (" It is a Parquet table: …"), or ""."""
    for signature, suffix, what in _DATA_FILES:
        if head.startswith(signature) and path.lower().endswith(suffix):
            return f" It is {what.format(path=path)}."
    return ""


def _utf16_hint(target: Path) -> str:
    with open(target, "rb") as fh:
        head = fh.read(2)
    if head in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        return " It starts as UTF-16 text does (as PowerShell writes files): read it with encoding=\"utf-16\"."
    return ""


def _uses_crlf(text: str) -> bool:
    """Most of the file's line breaks are Windows' CRLF (as git's autocrlf checks files out there).
    An edit or a rewrite keeps them, as an editor does: turning every line ending of a file into LF
    would make its whole text a change."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf * 2 >= text.count("\n")


def _with_crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def file_list(ctx: ToolContext, path: str = ".", pattern: str = "*") -> str:
    """List the files under a folder of the workdir, recursively.

    Use it to find your way in an unfamiliar project before reading files. Hidden folders (names
    starting with a dot), dependency and cache folders (node_modules, virtual environments) and
    what .gitignore excludes are passed over (named at the end: give such a folder as the path to
    list it), and entries are sorted. A list too long to show whole shows the folders deeper down
    as one line each with the number of files in it: give one as the path to list it. A zip or tar
    archive is listed as a folder. Counts as a reading action for the 2-Action Rule.

    Args:
        path: Folder relative to the workdir.
        pattern: Shell-style filter on file names, for example `*.py`.
    """
    where = f"under {path!r}" + (f" matching {pattern!r}" if pattern != "*" else "")
    if archived := archive_folder(ctx, path):  # (a zip, a tar, or a folder in one: its files)
        names: Iterable[str] = sorted((entry.name for entry in archived[2] if fnmatch.fnmatch(entry.name.rsplit("/", 1)[-1], pattern)),
                                      key=lambda name: (name.split("/")[:-1], name))
        listed = fitted_listing(names, ctx.output_chars - LIST_NOTE_ROOM, where)
        return listed or f"[no files {where}]"
    root = ctx.resolve_folder(path)
    skipper = Skipper(ctx.workdir.resolve(), data_dir=ctx.data_dir)
    names = (name for name, _ in walk_files(root, pattern, skipper))
    instructions = ctx.folder_instructions(root, listed=True)
    listed = fitted_listing(names, ctx.output_chars - LIST_NOTE_ROOM - len(instructions), where)
    if not listed:
        listed = f"[no files {where}]" if pattern != "*" else f"[no files under {path!r}]"
    return "\n".join([listed, note] if (note := skipper.note("listed")) else [listed]) + instructions


def archive_folder(ctx: ToolContext, path: str) -> tuple[Path, str, list[Member]] | None:
    """For an archive's path, or a folder's in one (`bundle.zip/logs`): the archive holding the
    files, the folder's path in it ("logs/"), and the files under it, named from there; None for
    any other path."""
    from core.archives import NotInArchive, archive_kind, files_under, found_in_archive

    target = ctx.resolve(path)
    if target.is_file() and (kind := archive_kind(target)):
        archive, folder = target, ""
    elif not target.exists() and (inside := found_in_archive(target, _archive_root(ctx, target))):
        archive, folder = inside
        kind = archive_kind(archive) or ""
    else:
        return None
    try:
        return files_under(archive, kind, folder, ctx.offload_dir / DOCUMENTS_FOLDER, _archive_named(path, folder, archive))
    except NotInArchive as why:
        raise ToolError(str(why)) from None


def walk_files(root: Path, pattern: str, skipper: Skipper) -> Iterator[tuple[str, Path]]:
    """The files under `root` whose names match `pattern`, as (path relative to root with "/",
    full path), sorted folder by folder. Hidden folders (.git, .venv, …), dependency and cache
    folders and what .gitignore excludes are passed over (`skipper` says which it passed over). A
    name's bytes that are not UTF-8 show as `\\xNN`, which the tools read back (core.text.os_path)."""
    skipper.start(root)
    for folder, dirs, files in os.walk(root):
        dirs[:] = skipper.folders_to_walk(Path(folder), dirs)
        rel = os.path.relpath(folder, root)
        for name in sorted(files):
            # Regular files only: a named pipe in the tree would block the first read of it.
            if (fnmatch.fnmatch(name, pattern) and os.path.isfile(os.path.join(folder, name))
                    and not skipper.file_ignored(Path(folder) / name)):
                shown = shown_text(os.path.normpath(os.path.join(rel, name)).replace(os.sep, "/"))
                yield shown, Path(folder) / name


def _picture(ctx: ToolContext, target: Path, path: str) -> str:
    """A picture file read: shown to a model that sees pictures, after the results of its turn."""
    if why := refused(repr(path), target.stat().st_size, ctx.sees_pictures):  # (not read whole to be refused)
        raise ToolError(why)
    return show_picture(ctx, target.read_bytes(), target.suffix, path, repr(path))


def archive_kind_of(target: Path) -> str | None:
    """"zip" or "tar" for an archive, read as its files' list (core/archives.py, imported at the
    first file read: not at the window's start)."""
    from core.archives import archive_kind

    return archive_kind(target)


def is_binary(target: Path) -> bool:
    """A NUL byte near the start: no text encoding the agent reads has one."""
    with open(target, "rb") as fh:
        return b"\x00" in fh.read(BINARY_PROBE_BYTES)
