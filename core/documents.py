"""Documents the agent reads as text: PDF, Word (.docx), Excel (.xlsx), PowerPoint (.pptx),
OpenDocument text and spreadsheets (.odt, .ods: LibreOffice's) and Jupyter notebooks (.ipynb).
Papers, datasheets, specifications, requirements and the data beside them come in these; to
Tripane's tools they were binary files, refused, so an agent asked to study one could not.

Each kind's text is made by its own module (core/pdf_text.py, core/office_text.py, core/odf_text.py,
core/jupyter.py, core/packed_text.py), imported at the first document read. A file's text is
extracted once per version of it and kept, so a long one read slice by slice, or searched again,
is not extracted again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from core import big_text
from core.memory.working import atomic_write

HEAD_BYTES = 1024  # what tells a document's kind: a PDF's signature may come after some junk, as the spec allows
PDF_SIGNATURE = b"%PDF-"
ZIP_SIGNATURE = b"PK\x03\x04"
OLE_SIGNATURE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # Office before 2007, and any Office file with a password
TEXT_MAX_CHARS = 4_000_000  # about a million tokens: past any window, and a 2,000-page book's text

# The Office formats by suffix, and by the Content-Type a server sends them with.
OFFICE_SUFFIXES = {".docx": "docx", ".docm": "docx", ".xlsx": "xlsx", ".xlsm": "xlsx", ".pptx": "pptx", ".pptm": "pptx",
                   ".odt": "odt", ".ods": "ods"}
_OFFICE_TYPES = {"wordprocessingml.document": "docx", "spreadsheetml.sheet": "xlsx", "presentationml.presentation": "pptx",
                 "opendocument.text": "odt", "opendocument.spreadsheet": "ods"}
# The parts only one kind of Office file has, for a download with no telling name or type.
_OFFICE_PARTS = {"word/document.xml": "docx", "xl/workbook.xml": "xlsx", "ppt/presentation.xml": "pptx"}
_OLD_OFFICE = (".doc", ".xls", ".ppt")
NOTEBOOK_SUFFIX = ".ipynb"
SEARCHED_SUFFIXES = (".pdf", *OFFICE_SUFFIXES, NOTEBOOK_SUFFIX)


class NoText(Exception):
    """Why a document gives no text to read (said to the agent, or to the person who dropped it)."""


class PicturesOnly(NoText):
    """A PDF whose pages are all pictures (a scan): no text, but pages a model that sees pictures
    can read as such."""

    def __init__(self, message: str, pages: int) -> None:
        super().__init__(message)
        self.pages = pages


@dataclass(frozen=True)
class DocumentText:
    text: str
    what: str  # "a PDF of 36 pages (2 of them pictures only)"
    layout: str  # how its text is laid out: "each page after a [page K of N] line"

    @property
    def about(self) -> str:
        return f"{self.what}, {self.layout}"


def kind_of(head: bytes, name: str, content_type: str = "", whole: bytes | Path | None = None) -> str | None:
    """"pdf", "docx", "xlsx", "pptx", …, "ipynb" for a document the agent reads as text; None for any
    other file. `head` is its first HEAD_BYTES; `name` its file name or address; `whole` (the bytes
    or the file) is looked into when neither name nor type tells an Office file's kind."""
    media = content_type.split(";")[0].strip().lower()
    if (_suffix(name) == NOTEBOOK_SUFFIX or media == "application/x-ipynb+json") and head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{"):
        return "ipynb"  # (first: a notebook's first cell may be about PDFs, and name their signature)
    if kind := packing(head):
        return kind  # (a compressed log: core/packed_text.py)
    if PDF_SIGNATURE in head[:HEAD_BYTES]:
        return "pdf"
    if not head.startswith(ZIP_SIGNATURE):
        return None
    if kind := next((kind for suffix, kind in _OFFICE_TYPES.items() if media.endswith(suffix)), None):
        return kind
    if kind := OFFICE_SUFFIXES.get(_suffix(name)):
        return kind
    return _office_kind_inside(whole) if whole is not None else None


def kind_of_file(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    return kind_of(head, path.name, whole=path)


def old_office_hint(head: bytes, name: str) -> str:
    """What to do with a Word, Excel or PowerPoint file this cannot read: one from before 2007, or
    one with a password (both are OLE containers); "" for any other file."""
    if not head.startswith(OLE_SIGNATURE):
        return ""
    older = " (the format before 2007)" if _suffix(name) in _OLD_OFFICE else ""
    return (f" It is an Office file{older} or one locked with a password: saved as .docx, .xlsx or .pptx without a "
            "password (or as PDF), it can be read.")


def document_text(source: Path | bytes, name: str, kind: str,
                  keep_picture: Callable[[bytes, str], str] | None = None) -> DocumentText:
    """The text of the document at `source` (a file, or a download's bytes) of kind `kind`; `name` is
    how it is named in what is said of it. NoText when it cannot be read or has no text.
    `keep_picture`: keeps a picture in it (a notebook's chart) and says how the text names it."""
    if kind == "ipynb":
        return notebook_text(source, keep_picture)
    if kind in PACKED_KINDS:
        from core.packed_text import packed_text
        return packed_text(source, name, kind)
    if kind in ARCHIVE_KINDS and isinstance(source, Path):
        from core.archives import listing
        return listing(source, name, kind)
    if kind == "pdf":
        from core.pdf_text import pdf_text
        return pdf_text(source, name)
    if kind in ("odt", "ods"):
        from core.odf_text import odf_text
        return odf_text(source, name, kind)
    from core.office_text import office_text
    return office_text(source, name, kind)


def cached_text(path: Path, cache_dir: Path, name: str, kind: str, named: str = "") -> tuple[Path, str]:
    """The file holding the text of the document `path`, and what it is (DocumentText.about): kept
    in `cache_dir`, so that reading it slice by slice extracts it once (a book's takes seconds); a
    new version of the file is read anew. `named`: how the agent names `cache_dir`'s files
    ("offload:documents/"), for the pictures in the document, kept there; "": not kept."""
    stem = cache_stem(path, kind)
    kept, about_file = cache_dir / f"{stem}.txt", cache_dir / f"{stem}.about"
    if kept.is_file():
        try:
            return kept, about_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            pass  # a cache half written by a killed process: extract again
    cache_dir.mkdir(parents=True, exist_ok=True)
    if kind == "pdf":  # (whose pages are drawn as pictures when read)
        from core.pdf_pages import keep_source
        keep_source(cache_dir, stem, path)
    found = document_text(path, name, kind, _picture_keeper(cache_dir, named) if named else None)
    big_text.write(kept, found.text)
    about_file.write_text(found.about, encoding="utf-8")
    return kept, found.about


def cache_stem(path: Path, kind: str) -> str:
    """The name (without its suffix) the text of this version of the document `path` is kept
    under: "pdf-3f2a…"."""
    stat = path.stat()
    version = f"{stat.st_size}|{stat.st_mtime_ns}"
    if kind == "ipynb":  # edited often, the same size (x = 1 → x = 2) within a clock tick of a coarse file system
        version = hashlib.sha1(path.read_bytes()).hexdigest()
    return f"{kind}-{hashlib.sha1(f'{path.resolve()}|{version}'.encode()).hexdigest()[:12]}"


def _picture_keeper(cache_dir: Path, named: str) -> Callable[[bytes, str], str]:
    """Keeps a document's picture in `cache_dir`, named by its contents (a notebook's chart is
    kept once, however many versions of the notebook are read), and says how the agent names it."""
    def keep(data: bytes, suffix: str) -> str:
        kept = cache_dir / f"picture-{hashlib.sha1(data).hexdigest()[:16]}{suffix}"
        if not kept.is_file():
            atomic_write(kept, data)  # (one half written by a killed process would pass for the picture)
        return named + kept.name
    return keep


def notebook_text(source: Path | bytes, keep_picture: Callable[[bytes, str], str] | None) -> DocumentText:
    """A Jupyter notebook's cells as text (core/jupyter.py); a file named .ipynb that is not one
    (its JSON broken by a hand edit) is its text as stored, said so, to be mended as text."""
    from core import jupyter

    text = (source.read_bytes() if isinstance(source, Path) else source).decode("utf-8", errors="replace")
    try:
        notebook = jupyter.parsed(text)
    except jupyter.NotANotebook as why:
        return DocumentText(text, f"a file named .ipynb that is not a notebook Jupyter opens ({why})",
                            "its text as stored")
    return DocumentText(jupyter.notebook_text(notebook, keep_picture=keep_picture), jupyter.described(notebook),
                        jupyter.LAYOUT)


# The line a page's, a slide's, a sheet's or a notebook cell's text comes after in a document's text.
_PLACE_LINE = re.compile(r"\[(page|slide) (\d+) of \d+|\[sheet \d+ of \d+: (.+), [\d,]+ rows? × \d+ columns?\]$"
                         r"|# ?%% \[(cell) (\d+)")


class Places:
    """Where the lines of a document's text are, read in order: "(page 3) ", "(slide 2) ",
    "(sheet Q3, row 17) ", "(cell 4) ". A search's match says it: what a finding cites."""

    def __init__(self) -> None:
        self.place, self.sheet, self.sheet_line = "", "", 0

    def of(self, number: int, line: str) -> str:
        """The place of line `number` (counting from 1) whose text is `line`."""
        if marker := _PLACE_LINE.match(line):
            kind, count, sheet, cell, cell_count = marker.groups()
            kind, count = (kind, count) if kind else (cell, cell_count)
            self.place, self.sheet, self.sheet_line = (f"({kind} {count}) ", "", 0) if kind else ("", sheet, number)
            return self.place
        if self.sheet:
            return f"(sheet {self.sheet}, row {number - self.sheet_line}) "
        return self.place


ARCHIVE_KINDS = ("zip", "tar")  # read as the list of their files (core/archives.py), each file by its path in one
DOCUMENTS_FOLDER = "documents"  # of the session's offload/: documents' text, their pictures, fetched PDFs
ARCHIVE_MEMBER_PREFIX = "member-"  # of a file unpacked from an archive into offload/documents/: the project's
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tgz", ".tbz2", ".txz", ".tar.gz", ".tar.bz2", ".tar.xz", ".jar", ".whl")
PACKED_KINDS = ("gz", "bz2", "xz")  # compressed text: unpacked when read or searched by its path, not in a folder's search


# By their first bytes: each format's own signature, long enough not to be a text's first letters.
_PACKED_SIGNATURES = {b"\x1f\x8b\x08": "gz", b"\xfd7zXZ\x00": "xz"}


def packing(head: bytes) -> str | None:
    """"gz", "bz2" or "xz" for a compressed file's first bytes; None for any other."""
    if head.startswith(b"BZh") and head[3:4].isdigit() and head[4:10] == b"1AY&SY":  # (its first block's header)
        return "bz2"
    return next((kind for signature, kind in _PACKED_SIGNATURES.items() if head.startswith(signature)), None)


def _suffix(name: str) -> str:
    last = name.split("?")[0].split("#")[0].rsplit("/", 1)[-1]
    return ("." + last.rsplit(".", 1)[1].lower()) if "." in last else ""


def _office_kind_inside(whole: bytes | Path) -> str | None:
    import zipfile
    from io import BytesIO

    try:
        with zipfile.ZipFile(BytesIO(whole) if isinstance(whole, bytes) else whole) as archive:
            names = set(archive.namelist())
            # An OpenDocument file says what it is in its first part.
            media = archive.read("mimetype")[:100].decode("ascii", "replace").strip() if "mimetype" in names else ""
    except (zipfile.BadZipFile, OSError, ValueError):
        return None
    if media:
        return next((kind for suffix, kind in _OFFICE_TYPES.items() if media.endswith(suffix)), None)
    return next((kind for part, kind in _OFFICE_PARTS.items() if part in names), None)
