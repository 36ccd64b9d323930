"""What a running command has printed, kept on disk while it runs.

The live output went only to the window. A Tripane killed mid-command (a crash, a forced quit, the
computer's restart) reopened with the call's effect unknown and nothing to judge it by, so the
agent ran a ten-minute build again from the start to see how far it had got. Its latest lines are
now in the session's running/ folder until the call ends, and told with the interruption.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

log = logging.getLogger(__name__)

TAIL_CHARS = 4000  # the end of the output: where a build or a test run says how far it got


def _path(session_dir: Path, call_id: str) -> Path:
    return session_dir / "running" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', call_id)[:100]}.txt"


class PrintedSoFar:
    """The latest output of one running call, written over at each pass of the live output."""

    def __init__(self, session_dir: Path, call_id: str):
        self.path = _path(session_dir, call_id)
        self.tail = ""
        self.failed = False

    def add(self, text: str) -> None:
        self.tail = (self.tail + text)[-TAIL_CHARS:]
        if self.failed:
            return
        try:
            self.path.parent.mkdir(exist_ok=True)
            self.path.write_text(self.tail, encoding="utf-8", errors="replace")
        except OSError as exc:  # (a full disk): the command runs on; only this aid is lost
            self.failed = True
            log.warning("the output of %s cannot be kept while it runs: %s", self.path.stem, exc)

    def discard(self) -> None:
        """The call ended: its result holds its output."""
        if self.tail:
            _remove(self.path)


def kept_output(session_dir: Path, call_id: str) -> str:
    """The latest output of a call that Tripane stopped in the middle of ("" if none was kept)."""
    try:
        return _path(session_dir, call_id).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def printed_before_stop(session_dir: Path, call_id: str) -> str:
    """kept_output, for the agent, which is told it once: the file it was in is removed."""
    text = kept_output(session_dir, call_id)
    _remove(_path(session_dir, call_id))
    return text


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:  # (Windows: a virus scanner holding it open) left; it is a few KB
        log.warning("%s cannot be removed: %s", path, exc)
