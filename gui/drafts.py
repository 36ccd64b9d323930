"""Messages half written to the agents, by session. The message box holds the shown session's
draft: one half written to a session waits for it while another is shown, and is not sent there.
Drafts are kept in the settings a moment after typing stops, and when Tripane closes, so that a
restart (or a crash) loses none: a long message to the agent is work."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from gui.qt import QObject, QPlainTextEdit, QSettings, QTextCursor, QTimer

GROUP = "drafts"
TYPING_PAUSE_MS = 1000


def folder_group(data_dir: Path, group: str = GROUP) -> str:
    """The settings group of one data folder's drafts (or of what else `group` keeps by session).
    Windows over other data folders keep theirs in the same settings; within its own group a
    window knows that a draft whose session is gone was deleted (by another window over the
    folder, say), and drops it."""
    return f"{group}/{hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:12]}"


class Drafts(QObject):
    def __init__(self, box: QPlainTextEdit, settings: QSettings, exists: Callable[[str], bool], data_dir: Path):
        """`box`: the message box; `exists`: whether a session is in this window's log, kept in
        `data_dir`."""
        super().__init__(box)
        self.box, self.settings = box, settings
        self.group = folder_group(data_dir)
        self.owner: str | None = None  # the session the box's text is for
        stored = self._stored(self.group)
        self.waiting = {session_id: text for session_id, text in stored.items() if exists(session_id)}
        # Kept before drafts were grouped by data folder, directly under GROUP: this folder's are
        # taken in (and moved to its group at the next save); any other is left be.
        self._ungrouped = {session_id for session_id in self._stored(GROUP) if exists(session_id)}
        self.waiting |= {session_id: text for session_id, text in self._stored(GROUP).items()
                         if session_id in self._ungrouped and session_id not in self.waiting}
        self._saved = set(stored)  # the sessions whose drafts the settings hold for this folder
        self._timer = QTimer(self, singleShot=True, interval=TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.save)
        box.textChanged.connect(self._timer.start)
        if self._saved != set(self.waiting):  # a deleted session's draft, or ungrouped ones, go now
            self.save()

    def take(self, session_id: str) -> None:
        """The box now writes to `session_id`: its draft comes in, the one there waits for its own."""
        if self.owner == session_id:
            return
        if self.owner is not None and self.box.toPlainText().strip():
            self.waiting[self.owner] = self.box.toPlainText()
        self.box.setPlainText(self.waiting.pop(session_id, ""))
        self.box.moveCursor(QTextCursor.MoveOperation.End)
        self.owner = session_id

    def forget(self, session_id: str) -> None:
        """The session is deleted: so is its draft."""
        self.waiting.pop(session_id, None)
        if self.owner == session_id:
            self.box.clear()
            self.owner = None
        self.save()

    def all(self) -> dict[str, str]:
        drafts = dict(self.waiting)
        if self.owner is not None and self.box.toPlainText().strip():
            drafts[self.owner] = self.box.toPlainText()
        return drafts

    def save(self) -> None:
        self._timer.stop()
        drafts = self.all()
        for session_id in self._ungrouped:
            self.settings.remove(f"{GROUP}/{session_id}")
        self._ungrouped = set()
        self.settings.beginGroup(self.group)
        for session_id in self._saved - drafts.keys():  # sent, emptied, or its session deleted
            self.settings.remove(session_id)
        for session_id, text in drafts.items():
            self.settings.setValue(session_id, text)
        self.settings.endGroup()
        self.settings.sync()
        self._saved = set(drafts)

    def _stored(self, group: str) -> dict[str, str]:
        self.settings.beginGroup(group)
        try:
            stored = {key: self.settings.value(key) for key in self.settings.childKeys()}
        finally:
            self.settings.endGroup()
        return {key: value for key, value in stored.items() if isinstance(value, str) and value.strip()}
