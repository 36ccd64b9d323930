"""The text of a PDF, page by page (see core/documents.py): a paper, a datasheet, a manual.

The text is pypdf's extraction (pure Python; AES-encrypted files through `cryptography`): what a
PDF's fonts say their glyphs are, in reading order as well as the page's layout allows. A scanned
page has no text, only a picture of it, and is said so rather than shown empty.
"""

from __future__ import annotations

import logging
import unicodedata
from pathlib import Path

from core import documents
from core.documents import DocumentText, NoText, PicturesOnly
from core.text import counted

_CUT = "[the rest of the PDF's text is not read: {chars:,} characters of it already, {pages:,} pages of {total:,}]"


def page_count(source: Path | bytes, name: str) -> int:
    """How many pages the PDF has (quick: no page is read), or NoText saying why it cannot be read."""
    return len(_opened(source, name).pages)


def pdf_text(source: Path | bytes, name: str) -> DocumentText:
    """The text of the PDF at `source` (a file, or a download's bytes); `name` is how it is named in
    what is said of it. NoText when it cannot be read or has no text at all."""
    reader = _opened(source, name)
    total = len(reader.pages)
    if not total:
        raise NoText(f"{name} is a PDF with no pages.")
    parts: list[str] = []
    chars = pictured = read = 0
    for number, page in enumerate(reader.pages, start=1):
        if chars > documents.TEXT_MAX_CHARS:
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
        raise PicturesOnly(f"{name} has no text, only pictures of its {counted(total, 'page')} (a scan, most "
                           "likely): its words cannot be read as text. A version with text, or one run through OCR "
                           "(ocrmypdf, a scanner's software), can be.", total)
    shown = f" ({pictured:,} of them pictures only)" if pictured else ""
    cut = f", text of the first {read:,}" if read < total else ""
    return DocumentText("\n\n".join(parts) + "\n", f"a PDF of {counted(total, 'page')}{shown}{cut}",
                        "each page after a [page K of N] line")


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
        return as_written(page.extract_text() or "")
    except Exception:  # noqa: BLE001 (a damaged page's content stream fails in many ways)
        return None


# Characters a PDF's fonts map glyphs to that are not the ones the words are written with: the
# Kangxi radicals and their supplement, which many CJK fonts name for the ideographs they look like
# (the radical U+2F42 for "文" U+6587: a search for 中文 found nothing), and the Latin ligatures typesetters
# use ("ﬁ" in "ﬁnd"). Each is replaced by what Unicode says it stands for (NFKC), and no other
# character is touched (NFKC on the whole would turn "x²" into "x2" and "，" into ",").
_AS_WRITTEN = {code: unicodedata.normalize("NFKC", chr(code))
               for span in ((0x2E80, 0x2EFF), (0x2F00, 0x2FDF), (0xFB00, 0xFB06))
               for code in range(*span) if unicodedata.normalize("NFKC", chr(code)) != chr(code)}


def as_written(text: str) -> str:
    """A page's extracted text with its characters as written (see _AS_WRITTEN), and the tabs some
    writers (Qt's) put between words as spaces, each line's trailing ones dropped."""
    lines = text.translate(_AS_WRITTEN).replace("\t", " ").split("\n")
    return "\n".join(line.rstrip() for line in lines)
