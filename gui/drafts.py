"""Messages half written to the agents, by session. The message box holds the shown session's
draft: one half written to a session waits for it while another is shown, and is not sent there.
Drafts are kept in the settings a moment after typing stops, and when Tripane closes, so that a
restart (or a crash) loses none: a long message to the agent is work."""

from __future__ import annotations

from collections.abc import Callable

from gui.qt import QObject, QPlainTextEdit, QSettings, QTextCursor, QTimer

GROUP = "drafts"
TYPING_PAUSE_MS = 1000


class Drafts(QObject):
    def __init__(self, box: QPlainTextEdit, settings: QSettings, exists: Callable[[str], bool]):
        """`box`: the message box; `exists`: whether a session is in this window's log (the drafts
        of others, another data folder's or of sessions deleted by the command line, are left be)."""
        super().__init__(box)
        self.box, self.settings = box, settings
        self.owner: str | None = None  # the session the box's text is for
        # Only this data folder's sessions: a window over another data folder keeps its drafts in
        # the same settings.
        self.waiting = {session_id: text for session_id, text in self._stored().items() if exists(session_id)}
        self._saved = set(self.waiting)  # the sessions whose drafts the settings hold for this window
        self._timer = QTimer(self, singleShot=True, interval=TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.save)
        box.textChanged.connect(self._timer.start)

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
        self.settings.beginGroup(GROUP)
        for session_id in self._saved - drafts.keys():  # sent, emptied, or its session deleted
            self.settings.remove(session_id)
        for session_id, text in drafts.items():
            self.settings.setValue(session_id, text)
        self.settings.endGroup()
        self.settings.sync()
        self._saved = set(drafts)

    def _stored(self) -> dict[str, str]:
        self.settings.beginGroup(GROUP)
        try:
            stored = {key: self.settings.value(key) for key in self.settings.childKeys()}
        finally:
            self.settings.endGroup()
        return {key: value for key, value in stored.items() if isinstance(value, str) and value.strip()}
