"""Edits of the plan and findings not saved yet, by session and file. An edit open in its pane
waits for its session while another is shown, and through a restart, as a message half written to
the agent does (gui/drafts.py): an edit of the plan is the person's work, and switching sessions or
closing Tripane dropped it without a word. Each keeps the version it was begun on, so that saving
it later still shows both versions where the agent wrote the file meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gui.drafts import TYPING_PAUSE_MS, folder_group
from gui.qt import QObject, QSettings, QTimer

GROUP = "pane_edits"


class PaneEdits(QObject):
    def __init__(self, settings: QSettings, exists: Callable[[str], bool], data_dir: Path,
                 open_now: Callable[[], dict[tuple[str, str], tuple[str, int]]], parent: QObject | None = None):
        """`exists`: whether a session is in this window's log (a deleted one's edit is dropped);
        `open_now`: the edits open in the panes, kept a moment after typing stops (a crash loses
        none) and as Tripane closes."""
        super().__init__(parent)
        self.settings, self.open_now = settings, open_now
        self._timer = QTimer(self, singleShot=True, interval=TYPING_PAUSE_MS)
        self._timer.timeout.connect(self.save)
        self.group = folder_group(data_dir, GROUP)
        self.waiting: dict[tuple[str, str], tuple[str, int]] = {}
        self.settings.beginGroup(self.group)
        try:
            for key in self.settings.childKeys():
                session_id, _, name = key.partition("|")
                value = self.settings.value(key)
                version, _, text = value.partition("\n") if isinstance(value, str) else ("", "", "")
                if exists(session_id) and name and version.isdigit():
                    self.waiting[session_id, name] = text, int(version)
        finally:
            self.settings.endGroup()

    def keep(self, session_id: str, name: str, text: str, base_version: int) -> None:
        self.waiting[session_id, name] = text, base_version

    def take(self, session_id: str, name: str) -> tuple[str, int] | None:
        """The edit of the session's file waiting to be taken up again (the text, its version)."""
        return self.waiting.pop((session_id, name), None)

    def forget(self, session_id: str) -> None:
        """The session is deleted: so are its edits."""
        for key in [key for key in self.waiting if key[0] == session_id]:
            del self.waiting[key]
        self.save()

    def changed(self) -> None:
        """An edit was typed in, opened or closed (saved, cancelled): kept once typing pauses."""
        self._timer.start()

    def save(self) -> None:
        """Keep the waiting edits, and those open in the panes, in the settings."""
        self._timer.stop()
        edits = {**self.waiting, **self.open_now()}
        self.settings.remove(self.group)
        self.settings.beginGroup(self.group)
        for (session_id, name), (text, version) in edits.items():
            self.settings.setValue(f"{session_id}|{name}", f"{version}\n{text}")
        self.settings.endGroup()
        self.settings.sync()
