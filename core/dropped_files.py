"""A file the person drops on the message box from outside the work folder, as the message carries
it: its text. The agent reads nothing outside the work folder, so the path alone (a log from the
Downloads folder, a spec from another project) gave it only a refusal when it tried to read it. A
long one goes as a long paste does: its start and end in the conversation, the whole in a file the
agent reads (core/offload.py)."""

from __future__ import annotations

from pathlib import Path

from core.documents import (
    HEAD_BYTES,
    PACKED_KINDS,
    NoText,
    PicturesOnly,
    document_text,
    kind_of_file,
    old_office_hint,
)
from core.pdf_text import page_count
from core.text import fenced
from core.tools.shell import decode_output, is_binary_output

DROPPED_TEXT_MAX = 1_000_000  # bytes: a log, a CSV, a spec; more would freeze the message box a moment
# A document's text is made as it is dropped, the window waiting: a PDF's pages about 11 ms each, a
# workbook's cells about 7 µs each, some 150,000 to a megabyte (benchmarks/documents.py): at most
# about a second. Word's and PowerPoint's files are mostly their pictures, as notebooks are their
# charts' (the text leaves them out); their text is quick.
DROPPED_PDF_PAGES_MAX = 100
DROPPED_DOCUMENT_BYTES = {"docx": 20_000_000, "odt": 20_000_000, "pptx": 50_000_000, "xlsx": 1_000_000,
                          "ods": 1_000_000, "ipynb": 20_000_000,
                          # (a compressed log: its text, unpacked, must fit a message too)
                          "gz": DROPPED_TEXT_MAX, "bz2": DROPPED_TEXT_MAX, "xz": DROPPED_TEXT_MAX}


class NotCarried(Exception):
    """Why a dropped file's text is not put in the message. `givable`: whether a copy of it can go
    instead (core/given_files.py): not for a folder, or a file that cannot be read."""

    def __init__(self, message: str, givable: bool = True) -> None:
        super().__init__(message)
        self.givable = givable


class Scanned(NotCarried):
    """A scan dropped: no text to carry, its pages drawn as pictures (PNGs) to go with the message
    instead, as a screenshot goes, for a model that sees pictures."""

    def __init__(self, message: str, pages: list[bytes]) -> None:
        super().__init__(message)
        self.pages = pages


DROPPED_SCAN_PAGES_MAX = 5  # a scanned letter, an invoice, a form: each page about 1,600 tokens a request


def dropped_text(path: Path) -> str:
    """The text of the dropped file `path` (of a PDF, its pages' text), or NotCarried saying why not."""
    try:
        if not path.is_file():
            raise NotCarried(f"{path.name} is not a file", givable=False)
        _not_carried_archive(path)  # (before a .tar.gz is taken for a compressed log)
        if kind := kind_of_file(path):
            return _document_text(path, kind)
        with open(path, "rb") as fh:  # (an old .doc or .xls is said so before its size is)
            if hint := old_office_hint(fh.read(HEAD_BYTES), path.name):
                raise NotCarried(f"{path.name} is not text.{hint.rstrip('.')}")
        size = path.stat().st_size
        if size > DROPPED_TEXT_MAX:
            raise NotCarried(f"{path.name} is {size:,} bytes, more than a message carries ({DROPPED_TEXT_MAX:,}): "
                             "copy it into the work folder, where the agent can read it")
        data = path.read_bytes()
    except OSError as exc:
        raise NotCarried(f"{path.name} could not be read ({exc.strerror or exc})", givable=False) from exc
    if is_binary_output(data):
        raise NotCarried(f"{path.name} is not text: copy it into the work folder if the agent should have it")
    return decode_output(data)


def _not_carried_archive(path: Path) -> None:
    """A zip or tar dropped: NotCarried, saying where the agent reads the files in it."""
    from core.archives import archive_kind

    if kind := archive_kind(path):
        raise NotCarried(f"{path.name} is a {kind} archive: copy it into the work folder, where the agent reads the "
                         "files in it")


def _document_text(path: Path, kind: str) -> str:
    """A dropped document's text (a PDF's, a Word document's, …), read as it is dropped: a paper's or
    a report's, not a book's or a database export's, which wait for the agent in the work folder."""
    try:
        if kind == "pdf" and (pages := page_count(path, path.name)) > DROPPED_PDF_PAGES_MAX:
            raise NotCarried(f"{path.name} is a PDF of {pages:,} pages, more than a message carries "
                             f"({DROPPED_PDF_PAGES_MAX}): copy it into the work folder, where the agent reads it "
                             "page by page")
        if kind != "pdf" and (size := path.stat().st_size) > DROPPED_DOCUMENT_BYTES[kind]:
            raise NotCarried(f"{path.name} is {size:,} bytes, more than a message carries "
                             f"({DROPPED_DOCUMENT_BYTES[kind]:,}): copy it into the work folder, where the agent reads "
                             "it part by part")
        text = document_text(path, path.name, kind).text
        if kind in PACKED_KINDS and len(text) > DROPPED_TEXT_MAX:
            raise NotCarried(f"{path.name} unpacks to {len(text):,} characters, more than a message carries "
                             f"({DROPPED_TEXT_MAX:,}): copy it into the work folder, where the agent can read it")
        return text
    except PicturesOnly as scan:
        if scan.pages > DROPPED_SCAN_PAGES_MAX:
            raise NotCarried(f"{path.name} is a scan of {scan.pages:,} pages, no text and more pages than a message "
                             f"carries as pictures ({DROPPED_SCAN_PAGES_MAX}): copy it into the work folder, where the "
                             "agent can see its pages one by one") from None
        from core.pdf_pages import NotDrawn, page_png

        try:
            drawn = [page_png(path, page) for page in range(1, scan.pages + 1)]
        except NotDrawn as why:
            raise NotCarried(str(why).rstrip(".")) from None
        went = "its page went as a picture" if scan.pages == 1 else f"its {scan.pages:,} pages went as pictures"
        raise Scanned(f"{path.name} is a scan with no text: {went}", drawn) from None
    except NoText as why:
        raise NotCarried(str(why).rstrip(".")) from None


def as_carried(path: Path, text: str) -> str:
    """The dropped file in the message: its path, then its text fenced (with more backticks than
    any run of them in it, so a Markdown file's own code blocks stay inside)."""
    return f"`{path}`:\n{fenced(text)}\n"
