"""The text of a compressed file (app.log.2.gz, export.csv.xz): rotated logs and exported data come
gzip-, bzip2- or xz-compressed, and to the file tools they were binary files, refused; reading one
took a command the person had to approve.

Read through core/documents.py as a document is: unpacked once per version, kept in the session's
offload/documents/, read slice by slice and searched by its path. A folder's search passes over
them (unpacking every rotated log to look in each would take minutes).
"""

from __future__ import annotations

import bz2
import gzip
import lzma
from io import BytesIO
from pathlib import Path

from core import big_text
from core.documents import DocumentText, NoText

_OPENERS = {"gz": lambda raw: gzip.GzipFile(fileobj=raw), "bz2": bz2.BZ2File, "xz": lzma.LZMAFile}  # (each on a file object)
_NAMES = {"gz": "gzip", "bz2": "bzip2", "xz": "xz"}
UNPACKED_MAX_BYTES = 128 * 2**20  # of its text, read: a day's log; more is cut, and said


def packed_text(source: Path | bytes, name: str, kind: str) -> DocumentText:
    """The text the compressed file holds, its first UNPACKED_MAX_BYTES. NoText when it cannot be
    unpacked, or holds no text (an archive, a binary file)."""
    label = _NAMES[kind]
    article = "an" if kind == "xz" else "a"
    try:
        with open(source, "rb") if isinstance(source, Path) else BytesIO(source) as raw, \
                _OPENERS[kind](raw) as unpacked:
            data = unpacked.read(UNPACKED_MAX_BYTES + 1)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise NoText(f"{name} is {article} {label}-compressed file that cannot be unpacked ({exc}): damaged or cut short.") \
            from None
    cut = len(data) > UNPACKED_MAX_BYTES
    data = data[:UNPACKED_MAX_BYTES]
    if data[257:262] == b"ustar":
        raise NoText(f"{name} is a compressed tar archive: list what it holds with a command (tar tf {name}) and "
                     "unpack the files you need into the work folder.")
    if b"\x00" in data[:8192]:
        raise NoText(f"{name} is {label}-compressed, and what it holds is not text.")
    try:
        text = big_text.decode_utf8(data)
        encoding = ""
    except UnicodeDecodeError:
        text, encoding = data.decode("utf-8", errors="replace"), "; not UTF-8: its other characters show as �"
    if cut:
        text = text[:text.rfind("\n") + 1] or text  # (whole lines only)
    size = f"its first {UNPACKED_MAX_BYTES // 2**20} MB unpacked" if cut else f"{len(data):,} bytes unpacked"
    return DocumentText(text, f"{article} {label}-compressed file ({size}){encoding}", "its text as unpacked")
