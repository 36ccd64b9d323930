"""The versions of a working-memory file, from the event log.

Every write of task_plan.md, findings.md or progress.md is logged as a `file_changed` event with
its unified diff and the SHA-256 of the text it made. Replaying the diffs from nothing rebuilds any
version, and the hash says whether the rebuilt text is the one that was written: what cannot be
rebuilt exactly (a diff that does not apply, the log damaged by hand) is said to be so, never shown
as if it were.

Two things the diffs do not carry are recovered on the way. A text that did not end with a newline
is diffed as if it did (working.unified_diff), so a version is checked both ways. And an append to
such a text begins with the newline that ends its last line (working._append_diff writes it as an
empty added line), which is then not a line of its own.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from dataclasses import dataclass

from core.events import EventDecodeError, FileChanged, decode
from core.store import Store

# Who wrote a version, as the person reads it (the history dialog, `tripane history`).
AUTHORS = {"core": "Tripane", "agent": "Agent", "user": "You", "external": "Outside Tripane"}
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class FileVersion:
    version: int
    author: str  # agent | user | external | core
    ts: str  # when it was written (ISO 8601, UTC)
    diff: str
    sha256: str

    @property
    def who(self) -> str:
        return AUTHORS.get(self.author, self.author)

    @property
    def changes(self) -> list[str]:
        """The diff's lines from its first hunk on: what this version changed."""
        return _body(self.diff)

    @property
    def added(self) -> int:
        return line_counts(self.diff)[0]

    @property
    def removed(self) -> int:
        return line_counts(self.diff)[1]


_VERSIONS_QUERY = ("SELECT ts, data FROM events WHERE session_id = ? AND kind = 'file_changed' "
                   "AND json_valid(data) AND json_extract(data, '$.file') = ? ORDER BY seq")


def file_versions(store: Store, session_id: str, name: str) -> list[FileVersion]:
    """The versions of one of a session's files, oldest first. Read apart (Store.read): for a
    worker thread, as progress.md may have thousands."""
    versions = []
    for ts, data in store.read(_VERSIONS_QUERY, [session_id, name]):
        try:
            change = decode(FileChanged.kind, data)
        except EventDecodeError:  # a row damaged by hand: passed over, and the hashes say what it breaks
            continue
        versions.append(as_version(ts, change))
    return versions


def as_version(ts: str, change: FileChanged) -> FileVersion:
    return FileVersion(version=change.version, author=change.author, ts=ts, diff=change.diff, sha256=change.sha256)


class Unrebuildable(Exception):
    """A version whose text the log cannot give back exactly."""


def text_at(versions: list[FileVersion], version: int) -> str:
    """The text of the file as `version` left it. Raises Unrebuildable (saying why) when the diffs
    do not rebuild the text that version's hash names."""
    wanted = next((v for v in versions if v.version == version), None)
    if wanted is None:
        raise Unrebuildable(f"the log has no version {version}")
    lines: list[str] = []
    open_end = False  # the text's last line has no newline (its diffs wrote one all the same)
    known = True  # `lines` is the exact text of the version replayed last
    for step in versions:
        if step.version > version:
            break
        if known and _appends_at(step.diff, len(lines) - open_end):
            _append(lines, step.diff, open_end)
            open_end = False  # an append always ends with a newline
            continue
        # A rewrite: its result is checked against its hash, so that one that does not apply to
        # what went before (a file changed while Tripane was away is diffed against nothing) is
        # tried from nothing before the history is said to be broken.
        for base in ([*lines], []) if known else ([],):
            try:
                result = _applied(base, step.diff)
            except Unrebuildable:
                continue
            ending = _matches(result, step.sha256)
            if ending is not None:
                lines, open_end, known = result, ending, True
                break
        else:
            known = False
    if not known:
        raise Unrebuildable(f"version {version} cannot be rebuilt from the log: an earlier diff does not "
                            "give the text its hash names")
    text = "".join(lines)
    text = text[:-1] if open_end and text.endswith("\n") else text
    if _sha(text) != wanted.sha256:
        raise Unrebuildable(f"version {version} cannot be rebuilt from the log: the diffs do not give the text "
                            "its hash names")
    return text


@dataclass(frozen=True)
class Rebuilt:
    """A version's text, and what changed in the file since (the diff of it against the newest
    version's text; None when the newest cannot be rebuilt, `why_not` says why)."""
    text: str
    since: list[str] | None
    why_not: str = ""


def rebuilt(versions: list[FileVersion], version: int) -> Rebuilt:
    """The text `version` left and the changes since then. Raises Unrebuildable for the former."""
    text = text_at(versions, version)
    if version == versions[-1].version:
        return Rebuilt(text, [])
    try:
        newest = text_at(versions, versions[-1].version)
    except Unrebuildable as exc:
        return Rebuilt(text, None, str(exc))
    lines = difflib.unified_diff(text.split("\n"), newest.split("\n"), lineterm="", n=2)
    return Rebuilt(text, list(lines)[2:])  # (not the file names)


def _matches(lines: list[str], sha256: str) -> bool | None:
    """Whether these lines are the hashed text with its last newline (False), without it (True:
    the text had none), or neither (None)."""
    text = "".join(lines)
    if _sha(text) == sha256:
        return False
    if text.endswith("\n") and _sha(text[:-1]) == sha256:
        return True
    return None


def _appends_at(diff: str, line_count: int) -> bool:
    """Whether the diff only adds lines after the text's last one (`line_count` newlines): an
    append. (A diff of the whole text against nothing also only adds, at the top.)"""
    body = _body(diff)
    if not body or not all(line.startswith("+") for line in body[1:]):
        return False
    match = _HUNK.match(body[0])
    return bool(match) and match.group(2) == "0" and int(match.group(1)) == line_count


def _append(lines: list[str], diff: str, open_end: bool) -> None:
    added = [line[1:] + "\n" for line in _body(diff) if line.startswith("+")]
    if open_end and added and added[0] == "\n":
        added = added[1:]  # the newline that ended the last line, not a line of its own
    lines.extend(added)


def line_counts(diff: str) -> tuple[int, int]:
    """The lines a unified diff adds and removes (a line such as "---", a Markdown rule, counts)."""
    body = _body(diff)
    return sum(1 for line in body if line.startswith("+")), sum(1 for line in body if line.startswith("-"))


def _body(diff: str) -> list[str]:
    """The diff's lines from its first hunk on (after the file names), split at newlines only: a line's carriage return
    (a file edited on Windows) is part of it."""
    lines = diff.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first_hunk = next((at for at, line in enumerate(lines) if line.startswith("@@")), len(lines))
    return lines[first_hunk:]  # (a removed line may start with "---": a Markdown rule)


def _applied(old: list[str], diff: str) -> list[str]:
    """`old` (lines with their newlines) with the diff's hunks applied; every context and removed
    line must be where the hunk says, or Unrebuildable."""
    result: list[str] = []
    at = 0  # the next line of `old` not yet taken
    for line in _body(diff):
        if line.startswith("@@"):
            match = _HUNK.match(line)
            if not match:
                raise Unrebuildable(f"a hunk header cannot be read: {line!r}")
            start, count = int(match.group(1)), int(match.group(2) or "1")
            start = start - 1 if count else start  # a hunk that removes nothing names the line before
            if start < at or start > len(old):
                raise Unrebuildable("a hunk lies outside the text")
            result.extend(old[at:start])
            at = start
        elif line.startswith("+"):
            result.append(line[1:] + "\n")
        elif line.startswith((" ", "-")) or line == "":
            expected = line[1:] + "\n"
            if at >= len(old) or _unended(old[at]) != expected:
                raise Unrebuildable("a line of the diff is not in the text where it says")
            if not line.startswith("-"):
                result.append(old[at])
            at += 1
        elif line.startswith("\\"):  # "\ No newline at end of file": not written by Tripane, harmless
            continue
    result.extend(old[at:])
    return result


def _unended(line: str) -> str:
    return line if line.endswith("\n") else line + "\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
