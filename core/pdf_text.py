"""The text of a PDF, page by page, for the agent to read: a paper, a datasheet, a manual, a
specification. A PDF was a binary file to Tripane, refused by file_read and web_fetch alike, so an
agent asked to study one could not; research runs on PDFs.

The text is pypdf's extraction (pure Python; AES-encrypted files through `cryptography`): what a
PDF's fonts say their glyphs are, in reading order as well as the page's layout allows. A scanned
page has no text, only a picture of it, and is said so rather than shown empty.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from core import big_text

PDF_SIGNATURE = b"%PDF-"
SIGNATURE_WITHIN = 1024  # bytes: readers take a header after some junk (a mail's, a server's), as the spec allows
TEXT_MAX_CHARS = 4_000_000  # about a million tokens: far past any window, and a 2,000-page book's text
PAGE_LINE = re.compile(r"\[page (\d+) of \d+")  # the line each page's text comes after
_CUT = "[the rest of the PDF's text is not read: {chars:,} characters of it already, {pages:,} pages of {total:,}]"


class NoText(Exception):
    """Why a PDF gives no text to read (said to the agent, or to the person who dropped it)."""


@dataclass(frozen=True)
class PdfText:
    text: str  # each page under a "[page K of N]" line
    pages: int
    pictured_pages: int  # pages with no text: scans, or pictures alone
    pages_read: int  # fewer than `pages` when the text ran past TEXT_MAX_CHARS

    def summary(self) -> str:
        """What the text is of, for a header: "a PDF of 36 pages (2 of them pictures only)"."""
        pictured = f" ({self.pictured_pages:,} of them pictures only)" if self.pictured_pages else ""
        cut = f", text of the first {self.pages_read:,}" if self.pages_read < self.pages else ""
        return f"a PDF of {self.pages:,} page{'s' * (self.pages != 1)}{pictured}{cut}"


def looks_like_pdf(head: bytes) -> bool:
    """Whether bytes starting a file or a download are a PDF's (its signature near the start)."""
    return PDF_SIGNATURE in head[:SIGNATURE_WITHIN]


def is_pdf_file(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return looks_like_pdf(fh.read(SIGNATURE_WITHIN))
    except OSError:
        return False


def page_count(source: Path | bytes, name: str) -> int:
    """How many pages the PDF has (quick: no page is read), or NoText saying why it cannot be read."""
    return len(_opened(source, name).pages)


def pdf_text(source: Path | bytes, name: str) -> PdfText:
    """The text of the PDF at `source` (a file, or a download's bytes); `name` is how it is named in
    what is said of it. NoText when it cannot be read or has no text at all."""
    reader = _opened(source, name)
    total = len(reader.pages)
    if not total:
        raise NoText(f"{name} is a PDF with no pages.")
    parts: list[str] = []
    chars = pictured = read = 0
    for number, page in enumerate(reader.pages, start=1):
        if chars > TEXT_MAX_CHARS:
            parts.append(_CUT.format(chars=chars, pages=read, total=total))
            break
        text = _page_text(page)
        read += 1
        if text is None:
            parts.append(f"[page {number} of {total}: its text could not be read]")
        elif not text.strip():
            pictured += 1
            parts.append(f"[page {number} of {total}: no text, a picture only (a scan, a figure)]")
        else:
            parts.append(f"[page {number} of {total}]\n{text.strip()}")
            chars += len(text)
    if pictured == total:
        raise NoText(f"{name} has no text, only pictures of its {total:,} page{'s' * (total != 1)} (a scan, most "
                     "likely): its words cannot be read as text. A version with text, or one run through OCR "
                     "(ocrmypdf, a scanner's software), can be.")
    return PdfText("\n\n".join(parts) + "\n", total, pictured, read)


def cached_text(path: Path, cache_dir: Path, name: str) -> tuple[Path, PdfText]:
    """The text of the PDF file `path`, kept in `cache_dir` as a text file so that reading it slice
    by slice extracts it once (a book's takes seconds); a new version of the file is read anew."""
    stat = path.stat()
    key = hashlib.sha1(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:12]
    kept = cache_dir / f"pdf-{key}.txt"
    facts = cache_dir / f"pdf-{key}.pages"
    if kept.is_file() and facts.is_file():
        try:
            pages, pictured, read = (int(n) for n in facts.read_text("ascii").split())
            return kept, PdfText("", pages, pictured, read)  # (the text is in the file)
        except (OSError, ValueError):
            pass  # a cache half written by a killed process: extract again
    found = pdf_text(path, name)
    cache_dir.mkdir(parents=True, exist_ok=True)
    big_text.write(kept, found.text)
    facts.write_text(f"{found.pages} {found.pictured_pages} {found.pages_read}\n", "ascii")
    return kept, found


def _opened(source: Path | bytes, name: str):
    from io import BytesIO

    import pypdf  # imported at first use: most sessions read no PDF (and Tripane starts faster)
    from pypdf.errors import (
        DependencyError,
        FileNotDecryptedError,
        PdfReadError,
        WrongPasswordError,
    )

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings of a PDF's small flaws are not the person's
    try:
        reader = pypdf.PdfReader(BytesIO(source) if isinstance(source, bytes) else source)
        if reader.is_encrypted:
            reader.decrypt("")  # (a file locked against editing or printing opens without a password)
        reader.pages[0] if len(reader.pages) else None  # (a page tree that cannot be walked fails here)
    except (FileNotDecryptedError, WrongPasswordError):
        raise NoText(f"{name} is a PDF locked with a password; its text cannot be read without it (a copy "
                     "saved without the password can be).") from None
    except DependencyError as exc:
        raise NoText(f"{name} is an encrypted PDF this installation cannot open ({exc}).") from None
    except PdfReadError as exc:
        raise NoText(f"{name} is not a PDF that can be read ({exc}).") from None
    except Exception as exc:  # noqa: BLE001 (a damaged file fails pypdf in many ways; each says the same)
        raise NoText(f"{name} is a damaged PDF ({type(exc).__name__}: {exc}).") from None
    return reader


def _page_text(page) -> str | None:
    """A page's text; None if its content cannot be read (the other pages still are)."""
    try:
        return page.extract_text() or ""
    except Exception:  # noqa: BLE001 (a damaged page's content stream fails in many ways)
        return None
