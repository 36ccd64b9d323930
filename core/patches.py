"""What the agent changed, as one patch file in git's format: to review it elsewhere, attach it to
a pull request, or apply it to another clone (`git apply`, `patch -p1`).

Built from the bytes before and now of each file (core/work_changes.py), not by running git: the
file tools' copies are not in a repository, and git may be missing. A text file's diff keeps its
bytes as they are (CRLF, another encoding); a binary file, or one too large to diff, goes as git's
binary patch (the whole file, compressed), which `git apply` takes and `patch` does not.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import zlib
from pathlib import Path

from core.diffs import MAX_DIFF_BYTES

NO_NEWLINE = b"\\ No newline at end of file\n"
FILE_MODE = "100644"  # git's mode of a file (EXECUTABLE_MODE: of one that may be run)
ZERO_ID = "0" * 40
BINARY_LINE_BYTES = 52  # git's base85 lines each carry up to 52 bytes, their count as one letter


def repository_top(folder: Path) -> Path | None:
    """The top of the git repository `folder` is in (itself or a folder above), or None. Found by
    its .git (a folder, or a worktree's file), without running git."""
    for place in (folder, *folder.parents):
        if (place / ".git").exists():
            return place
    return None


def path_in_repository(workdir: Path, path: str) -> str:
    """A work folder file's path as `git diff` names it: from the repository's top when the work
    folder is within one (`git apply` run in a subfolder takes paths from the top, and skipped a
    patch of sub/app.py written as app.py), else from the work folder."""
    top = repository_top(workdir)
    if top is None or top == workdir:
        return path
    return f"{workdir.relative_to(top).as_posix()}/{path}"


def file_patch(path: str, before: bytes | None, now: bytes | None, old_mode: str = FILE_MODE,
               new_mode: str = FILE_MODE) -> bytes:
    """One file's part of a patch: `before` → `now` (None: no such file), and its mode (git's:
    FILE_MODE or EXECUTABLE_MODE) before and now. b"" when nothing changed."""
    if before == now and (before is None or old_mode == new_mode):
        return b""
    a, b = _quoted(f"a/{path}"), _quoted(f"b/{path}")
    head = [b"diff --git " + a + b" " + b]
    if before is None:
        head.append(f"new file mode {new_mode}".encode())
    elif now is None:
        head.append(f"deleted file mode {old_mode}".encode())
    elif old_mode != new_mode:  # (a script made runnable: chmod +x)
        head += [f"old mode {old_mode}".encode(), f"new mode {new_mode}".encode()]
    if before == now:
        return b"\n".join(head) + b"\n"
    head.append(f"index {_object_id(before)}..{_object_id(now)}".encode())
    if _binary(before) or _binary(now):
        return b"\n".join(head) + b"\n" + _binary_patch(before, now)
    names = [b"--- " + (b"/dev/null" if before is None else a) + _tab_after(path),
             b"+++ " + (b"/dev/null" if now is None else b) + _tab_after(path)]
    return b"\n".join(head + names) + b"\n" + _hunks(before or b"", now or b"")


def _hunks(before: bytes, now: bytes) -> bytes:
    """The unified diff's hunks, byte for byte; a last line without its newline is marked as git
    marks it (else applying the patch would add one)."""
    lines = difflib.diff_bytes(difflib.unified_diff, _lines(before), _lines(now), lineterm=b"\n", n=3)
    out = []
    for line in list(lines)[2:]:  # (the ---/+++ lines: written above, with git's names)
        out.append(line if line.endswith(b"\n") else line + b"\n" + NO_NEWLINE)
    return b"".join(out)


def _lines(data: bytes) -> list[bytes]:
    """The lines as git counts them, each with its newline: ended by \n alone (splitlines also
    ends one at a lone \r, a progress bar's, and the patch then marked it as the file's end)."""
    parts = data.split(b"\n")
    return [part + b"\n" for part in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def _binary(data: bytes | None) -> bool:
    """Diffed as git diffs a binary file: a NUL in its first 8 KB (git's own test), or, here, too
    large for a line diff to be quick."""
    return data is not None and (b"\0" in data[:8192] or len(data) > MAX_DIFF_BYTES)


def _binary_patch(before: bytes | None, now: bytes | None) -> bytes:
    """git's "GIT binary patch": the new file whole, then the old one (for `git apply -R`)."""
    return b"GIT binary patch\n" + _literal(now or b"") + b"\n" + _literal(before or b"") + b"\n"


def _literal(data: bytes) -> bytes:
    """One `literal` hunk: the data deflated, in lines of base85 (git's alphabet is Python's b85)."""
    packed = zlib.compress(data, 9)
    out = [f"literal {len(data)}\n".encode()]
    for start in range(0, len(packed), BINARY_LINE_BYTES):
        chunk = packed[start:start + BINARY_LINE_BYTES]
        count = chr(ord("A") + len(chunk) - 1) if len(chunk) <= 26 else chr(ord("a") + len(chunk) - 27)
        out.append(count.encode() + base64.b85encode(chunk, pad=True) + b"\n")
    return b"".join(out)


def _object_id(data: bytes | None) -> str:
    """git's id of a file with these bytes (its blob's SHA-1); zeros for no file. `git apply` needs
    both for a binary patch, and checks the file it patches against the first."""
    if data is None:
        return ZERO_ID
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _quoted(name: str) -> bytes:
    """A path as git writes it in a patch: in double quotes, with C escapes, when it holds a
    quote, a backslash or a control character (else a newline in a name would end the line)."""
    if not any(ch in name for ch in '"\\') and all(ord(ch) >= 0x20 and ch != "\x7f" for ch in name):
        return name.encode("utf-8", "surrogateescape")
    escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}
    body = "".join(escapes.get(ch, f"\\{ord(ch):03o}" if ord(ch) < 0x20 or ch == "\x7f" else ch) for ch in name)
    return f'"{body}"'.encode("utf-8", "surrogateescape")


def _tab_after(path: str) -> bytes:
    """git ends a ---/+++ name that holds a space with a tab, which tells where the name ends."""
    return b"\t" if " " in path else b""
