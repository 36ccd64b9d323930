"""Working memory: the three Markdown files of a session.

Every write is atomic (temp file, fsync, os.replace) and versioned; appends are plain appends. A
write based on a version that is no longer current is refused with the current text, so neither the
agent nor the person ever overwrites the other silently. Lines the person pinned cannot be removed
by the agent. Edits made outside Tripane are noticed by comparing the disk with what Tripane last
wrote.
"""

from __future__ import annotations

import codecs
import difflib
import hashlib
import locale
import logging
import os
import re
import stat
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from string import Template

from core.events import FileChanged
from core.offload import task_brief
from core.paths import resource_text

log = logging.getLogger(__name__)
PLAN, FINDINGS, PROGRESS = "task_plan.md", "findings.md", "progress.md"
FILES = (PLAN, FINDINGS, PROGRESS)


class WriteRefused(Exception):
    """A write that would lose someone's work. Carries the text the writer must start from."""

    def __init__(self, message: str, current_text: str, current_version: int):
        super().__init__(message)
        self.current_text = current_text
        self.current_version = current_version


class _Known:
    """What Tripane last wrote to a file. Appends update it in place, without re-reading the file."""

    def __init__(self, text: str = "", version: int = 0):
        self.version = version
        self.stat: tuple[int, int] = (0, 0)  # (mtime_ns, size) right after our last write or read
        self.reset(text)

    def reset(self, text: str) -> None:
        data = text.encode("utf-8")
        self._parts = [text]
        self._hash = hashlib.sha256(data)
        self.size = len(data)
        self.lines = text.count("\n")

    def extend(self, addition: str) -> None:
        data = addition.encode("utf-8")
        self._parts.append(addition)
        self._hash.update(data)
        self.size += len(data)
        self.lines += addition.count("\n")

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0]

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    @property
    def text_known(self) -> bool:
        """Whether the text is known, not only its hash (see _FixedHash)."""
        return not isinstance(self._hash, _FixedHash)

    def ends_with_newline(self) -> bool:
        last = next((part for part in reversed(self._parts) if part), "")
        return last.endswith("\n")


_CHECKBOX = re.compile(r"^((?:[-*+]|\d+[.)])\s*)\[[ xX~-]\]")


def current_step(plan: str) -> str:
    """The first unchecked step of the plan: what the agent was working on."""
    for line in plan.splitlines():
        if re.match(r"^\s*(\d+\.|[-*])\s*\[ \]", line):
            return line.strip()
    return ""


def pin_key(line: str) -> str:
    """What of a pinned line must stay: its words, not whether its step is ticked off. The person
    pins a step so that it stays in the plan; the agent marking it done ("- [x]") is its work."""
    return _CHECKBOX.sub(r"\1[ ]", line.strip())


@dataclass
class WorkingMemory:
    folder: Path
    _known: dict[str, _Known] = field(default_factory=dict)
    pins: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unreadable: dict[str, str] = field(default_factory=dict)  # changed outside, not readable now: why

    def path(self, name: str) -> Path:
        if name not in FILES:
            raise ValueError(f"{name!r} is not one of the working-memory files {FILES}")
        return self.folder / name

    # --- lifecycle -------------------------------------------------------------------------------

    def create(self, *, title: str, task: str, names: tuple[str, ...] = FILES) -> list[FileChanged]:
        """Write the three files (or `names` of them) from the templates (version 1 each)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        values = {"title": title, "task": task_brief(task)}  # recited at every step: a long one in brief
        changes = []
        for name in names:
            text = Template(resource_text("templates", name)).safe_substitute(values)
            changes.append(self._commit(name, text, author="core"))
        return changes

    def restore(self, name: str, *, version: int, sha256: str, size: int) -> None:
        """Take over the last state the event log knows.

        If the file is longer than the log says and its first `size` bytes are what the log knows,
        the rest was appended by a process that died before logging it (possibly torn mid-write):
        it is cut off, so the file again matches the log. Any other difference is left for
        check_external to report as an outside edit.
        """
        path = self.path(name)
        known = _Known(version=version)
        if path.exists():
            data = path.read_bytes()
            if len(data) > size and hashlib.sha256(data[:size]).hexdigest() == sha256:
                with open(path, "r+b") as fh:
                    fh.truncate(size)
                    os.fsync(fh.fileno())
                data = data[:size]
            if hashlib.sha256(data).hexdigest() == sha256:
                known.reset(data.decode("utf-8", errors="replace"))
                known.stat = _stat(path)
            else:
                # Unknown text: diffs are made against nothing, and check_external reports the file.
                known._hash = _FixedHash(sha256)
        self._known[name] = known

    # --- reading ---------------------------------------------------------------------------------

    def read(self, name: str) -> tuple[str, int]:
        known = self._known[name]
        return known.text, known.version

    def version(self, name: str) -> int:
        return self._known[name].version

    def outside_edits_pending(self) -> bool:
        """Whether a file differs on disk from how Tripane last left it (a stat each, nothing read):
        cheap enough to ask every second or two, so a file edited in another editor is taken in
        (check_external) while the agent waits or has finished, not only at its next step."""
        for name in FILES:
            known = self._known.get(name)
            try:
                if known is not None and _stat(self.path(name)) != known.stat:
                    return True
            except FileNotFoundError:
                if known is not None and known.text_known:
                    return True  # deleted: written back (check_external)
        return False

    def check_external(self, names: tuple[str, ...] = FILES, author: str = "external") -> list[FileChanged]:
        """Changes made to the files by anything other than Tripane since it last wrote them
        (by `author`: the person's own, when they edited the file in their editor at Tripane's asking).
        A file that cannot be read now (another program holds it mid-save) is in `unreadable`, with
        why, and is looked at again the next time."""
        changes = []
        for name in names:
            try:
                change = self._outside_change(name, author)
            except OSError as exc:
                why = exc.strerror or str(exc)  # ("Permission denied": the file is named beside it)
                if self.unreadable.get(name) != why:  # (said once, not at every look)
                    log.warning("%s changed outside Tripane and cannot be read now: %s", self.path(name), exc)
                self.unreadable[name] = why
                continue
            self.unreadable.pop(name, None)
            if change is not None:
                changes.append(change)
        return changes

    def _outside_change(self, name: str, author: str) -> FileChanged | None:
        known = self._known.get(name)
        path = self.path(name)
        if known is None:
            return None
        if not path.exists():
            self._write_back(name, known)
            return None
        if _stat(path) == known.stat:
            return None
        seen = _stat(path)
        data = path.read_bytes()
        disk = _as_tripane_writes(data)
        if disk.encode("utf-8") != data and _stat(path) == seen:
            # Saved by an editor on Windows (CRLF, a byte order mark, UTF-16): the file goes back
            # to the form Tripane writes, or every line would be a change in the diff, and the
            # appends after it would mix line ends and no longer match the log.
            atomic_write(path, disk)
        if _sha(disk) == known.sha256:
            known.stat = _stat(path)
            return None
        return self._record(name, disk, author=author, stat=_stat(path))

    def _write_back(self, name: str, known: _Known) -> None:
        """A file deleted outside Tripane (a file manager's clean-up, an editor's failed save) is
        written back as Tripane last knew it: it is the agent's memory, and an append to nothing
        would start a file that no longer matches the log. Its versions stay in the history."""
        if not known.text_known:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path(name), known.text)
        known.stat = _stat(self.path(name))
        log.warning("%s was deleted outside Tripane; written back as version %d", self.path(name), known.version)

    # --- writing ---------------------------------------------------------------------------------

    def write(self, name: str, text: str, *, base_version: int, author: str) -> FileChanged:
        """Replace a file, refusing a stale base version or (for the agent) a removed pinned line."""
        known = self._known[name]
        if base_version != known.version:
            raise WriteRefused(
                f"{name} changed since version {base_version} (now version {known.version}, "
                "probably edited by the person). Your write was not applied. Start again from the "
                "current text below and keep its changes.",
                known.text,
                known.version,
            )
        if author == "agent":
            self._check_pins(name, text)
        return self._commit(name, text, author=author)

    def append(self, name: str, text: str, *, author: str) -> FileChanged:
        """Add to the end of a file: a plain append, so its cost does not grow with the file.

        Appends commute, so they need no base version. A crash mid-append is repaired on reopen
        (see restore), because the log only knows the file up to its last logged size.

        Not synced to the disk: the append is in the system's hands before its event is logged, so
        a crash of the process loses nothing, and a power cut may lose the last appends as it may
        the log's last commits (the store's synchronous = NORMAL); restore then reports the file as
        changed outside Tripane. A sync here ran on the thread that runs the window, and under other
        writes (the database's checkpoint) took up to 33 ms.
        """
        known = self._known[name]
        separator = "" if known.size == 0 or known.ends_with_newline() else "\n"
        addition = separator + text if text.endswith("\n") else separator + text + "\n"
        path = self.path(name)
        with open(path, "ab") as fh:
            fh.write(addition.encode("utf-8"))
        diff = _append_diff(name, known.lines, addition)
        known.extend(addition)
        known.version += 1
        known.stat = _stat(path)
        return FileChanged(file=name, author=author, version=known.version, diff=diff,
                           sha256=known.sha256, size=known.size)

    def set_pins(self, name: str, lines: tuple[str, ...]) -> None:
        self.pins[name] = tuple(line.strip() for line in lines if line.strip())

    def _check_pins(self, name: str, text: str) -> None:
        present = {pin_key(line) for line in text.splitlines()}
        missing = [line for line in self.pins.get(name, ()) if pin_key(line) not in present]
        if missing:
            known = self._known[name]
            listed = "\n".join(f"  {line}" for line in missing)
            raise WriteRefused(
                f"{name}: the person pinned these lines and they must stay as written (a step may be ticked off):\n"
                f"{listed}\nYour write was not applied. Keep the pinned lines and write again.",
                known.text,
                known.version,
            )

    def _commit(self, name: str, text: str, *, author: str) -> FileChanged:
        path = self.path(name)
        atomic_write(path, text)
        return self._record(name, text, author=author, stat=_stat(path))

    def _record(self, name: str, text: str, *, author: str, stat: tuple[int, int]) -> FileChanged:
        known = self._known.setdefault(name, _Known())
        diff = unified_diff(name, known.text, text)
        known.reset(text)
        known.version += 1
        known.stat = stat
        return FileChanged(file=name, author=author, version=known.version, diff=diff,
                           sha256=known.sha256, size=known.size)


class _FixedHash:
    """Stands in for the hash of a text we no longer have (the file changed while we were away)."""

    def __init__(self, hexdigest: str):
        self._hex = hexdigest

    def hexdigest(self) -> str:
        return self._hex

    def update(self, data: bytes) -> None:
        raise AssertionError("a file with unknown text is re-read before it is appended to")


def unified_diff(name: str, old: str, new: str) -> str:
    lines = difflib.unified_diff(_lines(old), _lines(new), f"a/{name}", f"b/{name}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def _lines(text: str) -> list[str]:
    """The text's lines with their newlines, split at "\n" only (not at the other characters
    str.splitlines takes for line ends, such as a lone carriage return or U+2028): the diff then
    gives back the exact text (core/memory/history.py)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _append_diff(name: str, old_lines: int, appended: str) -> str:
    # Built directly: difflib over a megabyte-long progress.md on every append would cost far more.
    start = old_lines + 1
    added = _lines(appended)
    body = "".join(f"+{line}" if line.endswith("\n") else f"+{line}\n" for line in added)
    return f"--- a/{name}\n+++ b/{name}\n@@ -{start - 1},0 +{start},{len(added)} @@\n{body}"


REPLACE_TRIES = 10  # about a second in all


def atomic_write(path: Path, text: str | bytes) -> None:
    """Write so that a crash leaves either the old file or the new one, never half of either.
    Text is written as UTF-8; bytes as they are (a file in another encoding).

    A failed write (a full disk, say) leaves the old file and no temporary file beside it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = text if isinstance(text, bytes) else text.encode("utf-8")
    try:  # (Windows has a read-only flag only, and no file is renamed over a read-only one there)
        mode = stat.S_IMODE(os.stat(path).st_mode) if os.name == "posix" else None
    except OSError:  # (a new file: the system's default)
        mode = None
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:  # the new file in the old one's place keeps its permissions (a script, executable)
            os.chmod(tmp, mode)
        _replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if sys.platform != "win32":  # make the rename itself durable
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _replace(source: Path, target: Path) -> None:
    """os.replace, tried again for a moment while another program holds the target: on Windows an
    editor, a virus scanner or the search indexer opening the file makes the rename fail with
    PermissionError (a sharing violation) until it lets go."""
    for attempt in range(REPLACE_TRIES):
        try:
            os.replace(source, target)
            return
        except PermissionError:
            if attempt == REPLACE_TRIES - 1:
                raise
            time.sleep(0.02 * (attempt + 1))


def _as_tripane_writes(data: bytes) -> str:
    """A working-memory file's text as Tripane writes it: UTF-8 without a byte order mark, LF line ends."""
    if data[:2] in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
        text = data.decode("utf-16", errors="replace")
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:  # saved as "ANSI" by an editor on Windows: the system's code page
            text = data.decode(locale.getencoding(), errors="replace")
        text = text.removeprefix("\ufeff")
    return text.replace("\r\n", "\n")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return (st.st_mtime_ns, st.st_size)
