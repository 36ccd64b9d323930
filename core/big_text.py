"""Very large texts (a command's 64 MB log) worked on in slices, on a worker thread.

CPython holds the GIL for the whole of one `bytes.decode`, `str.encode` or `str.count`: 40 ms for
64 MB, during which the event loop, and with it the window, cannot run even though the work is on
another thread. Done a slice at a time, the loop gets its turn between slices.
"""

from __future__ import annotations

import codecs
import hashlib
from collections.abc import Callable
from pathlib import Path

SLICE = 1 << 20  # characters or bytes: about a millisecond of work


def decode_utf8(data: bytes) -> str:
    """`data.decode("utf-8")`, raising UnicodeDecodeError the same way, a slice at a time."""
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    parts = [decoder.decode(data[start:start + SLICE]) for start in range(0, len(data), SLICE)]
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


def sha256_hex(text: str) -> str:
    """The SHA-256 of the text's UTF-8 (lone surrogates passed through), as `text.encode` would give."""
    digest = hashlib.sha256()
    for start in range(0, len(text), SLICE):
        digest.update(text[start:start + SLICE].encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def count(text: str, sub: str) -> int:
    """`text.count(sub)` for a one-character `sub` (no occurrence can straddle two slices)."""
    return sum(text.count(sub, start, start + SLICE) for start in range(0, len(text), SLICE))


def by_lines(text: str, work: Callable[[str], str]) -> str:
    """`work(text)`, for a `work` that acts within lines (a line's escapes, a secret, a character),
    done a slice of whole lines at a time."""
    if len(text) <= SLICE:
        return work(text)
    parts, start, changed = [], 0, False
    while start < len(text):
        end = text.find("\n", start + SLICE)  # never inside a line: a secret could be cut in two
        end = len(text) if end < 0 else end + 1
        part = text[start:end]
        done = work(part)
        changed = changed or done is not part
        parts.append(done)
        start = end
    # Unchanged (the usual case), the text is not put together again: joining 64 MB is one long
    # hold of the GIL.
    return "".join(parts) if changed else text


def write(path: Path, text: str) -> None:
    """`path.write_text(text, encoding="utf-8")`, a slice at a time. A write that fails midway (a
    full disk) leaves no file: a cut-off copy would pass for the whole."""
    try:
        with open(path, "w", encoding="utf-8") as fh:
            for start in range(0, len(text), SLICE):
                fh.write(text[start:start + SLICE])
    except BaseException:
        path.unlink(missing_ok=True)
        raise
