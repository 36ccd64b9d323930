"""A PDF's page drawn as a picture, for a model that sees pictures: a scan's pages, which have no
text to read, and the figures, charts and tables of a paper, whose text reads as scattered labels.

Drawn by PDFium (pypdfium2: Chrome's PDF engine, with its library in the wheel) when the agent
reads the page's picture, never before: a 300-page scan is not drawn for the one page it needs.
The picture is a PNG made here with zlib, so no imaging library comes with it.
"""

from __future__ import annotations

import hashlib
import re
import struct
import zlib
from pathlib import Path

from core.memory.working import atomic_write
from core.pictures import LARGEST_PICTURE_BYTES, LONGEST_SIDE

# How a page's picture is named in the session's offload/documents/ ("pdf-KEY-page-3.png"), beside
# the PDF's text (pdf-KEY.txt) and the path of the PDF it was made from (pdf-KEY.source).
PAGE_NAME = re.compile(r"^(?P<stem>pdf-[0-9a-f]{12})-page-(?P<page>\d+)\.png$")
SOURCE_SUFFIX = ".source"


class NotDrawn(Exception):
    """Why a page's picture could not be made (said to the agent)."""


def page_name(stem: str, page: int | str) -> str:
    return f"{stem}-page-{page}.png"


def keep_source(folder: Path, stem: str, source: Path) -> None:
    """Notes that the pages of `stem` are drawn from the PDF `source`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{stem}{SOURCE_SUFFIX}").write_text(str(source.resolve()), encoding="utf-8")


def kept_download(folder: Path, data: bytes) -> str:
    """A PDF fetched from the web kept in `folder` to draw its pages from; its stem."""
    stem = f"pdf-{hashlib.sha1(data).hexdigest()[:12]}"
    kept = folder / f"{stem}.pdf"
    if not kept.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(kept, data)
    keep_source(folder, stem, kept)
    return stem


def seen_note(named: str) -> str:
    """What a PDF read's header says of its pages' pictures; `named`: how page {K}'s is named."""
    return f"; page K seen as a picture (a figure, a table, a scan): file_read(\"{named.format(K='K')}\")"


def scan_seen(name: str, pages: int, named: str) -> str:
    """What a model that sees pictures is told of a scan it read (no text, its pages pictures):
    not a failure, which it was, counted towards 3-Strike, its card red."""
    return (f"[{name}: a PDF of {pages:,} page{'s' * (pages != 1)} with no text, only pictures (a scan, most likely). "
            f"Your model sees pictures: read its pages as such, page 1 with file_read(\"{named.format(K=1)}\")"
            + (f", up to page {pages:,} ({named.format(K=pages)})" if pages > 1 else "") + ".]")


def drawn_page(folder: Path, name: str) -> Path | None:
    """The picture `name` in `folder` (offload/documents/), drawn now from its PDF if it is a page's
    not drawn yet; None when `name` is not a page's picture. NotDrawn when it cannot be made."""
    named = PAGE_NAME.match(name)
    if not named:
        return None
    target = folder / name
    if target.is_file():
        return target
    try:
        source = Path((folder / (named["stem"] + SOURCE_SUFFIX)).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        raise NotDrawn(f"No PDF was read as {named['stem']}: read the PDF first; its header names its pages' "
                       "pictures.") from None
    atomic_write(target, page_png(source, int(named["page"])))  # (a half-written page would pass for it)
    return target


def page_png(source: Path, page: int) -> bytes:
    """Page `page` (from 1) of the PDF `source` as a PNG at most LONGEST_SIDE pixels on its longer
    side (about 140 dots an inch for a letter page: its small print reads)."""
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(source)
    except (pdfium.PdfiumError, OSError) as exc:
        raise NotDrawn(f"{source.name} could not be opened to draw its page ({exc}).") from None
    try:
        if not 1 <= page <= len(document):
            raise NotDrawn(f"{source.name} has {len(document):,} page{'s' * (len(document) != 1)}; there is no "
                           f"page {page}.")
        sheet = document[page - 1]
        longest = max(sheet.get_size()) or 1
        scale = LONGEST_SIDE / longest
        while True:
            bitmap = sheet.render(scale=scale, rev_byteorder=True)  # (RGB, as PNG has it)
            data = png(bitmap.width, bitmap.height, bitmap.stride, bytes(bitmap.buffer), bitmap.n_channels)
            if len(data) <= LARGEST_PICTURE_BYTES * 3 // 4 or scale < 0.3:  # (sent as base64, a third larger)
                return data
            scale *= 0.7  # a page of photographs: smaller, as providers take no more
    finally:
        document.close()


def png(width: int, height: int, stride: int, pixels: bytes, channels: int) -> bytes:
    """An 8-bit RGB (3 channels) or RGBA (4) PNG of rows of `stride` bytes."""
    kind = {3: 2, 4: 6}[channels]
    row = width * channels
    raw = b"".join(b"\x00" + pixels[top:top + row] for top in range(0, height * stride, stride))

    def chunk(tag: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))

    header = struct.pack(">IIBBBBB", width, height, 8, kind, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
