"""Where the person types a message to the agent."""

from __future__ import annotations

from collections.abc import Callable

from gui.keys import gives_window_keys, keeps_escape
from gui.qt import (
    QEvent,
    QKeyEvent,
    Qt,
    QTextCursor,
)
from gui.widgets.pictures import PictureBox


class Composer(PictureBox):
    """Esc stops the run from anywhere in the window, but not from a message half written: a person
    reaching for Esc mid-sentence (out of another program's habit, to close a completion) would
    abort the run they are writing to. With the box empty, Esc stops the run as anywhere else.

    Up in the empty box brings back the messages sent to the session, newest first, as a shell
    does its commands (to send one again, or mend it); Down goes the other way, to the empty box.

    Files dropped (or pasted from a file manager) are written as their paths, relative to the work
    folder where they are in it: as the agent's tools take them. Pictures (a screenshot copied, an
    image file dropped) are given to go with the message (pictures_given), not written. A file from
    outside the work folder is written with its text (see PictureBox.write_paths)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: Callable[[], list[str]] = list  # the shown session's messages, oldest first
        self._recalled: tuple[int, str] | None = None  # how far back the box shows, and what

    def event(self, event: QEvent) -> bool:
        return ((bool(self.toPlainText()) and keeps_escape(event)) or gives_window_keys(self, event)
                or super().event(event))

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        plain = event.modifiers() in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
        cursor = self.textCursor()
        if plain and event.key() == Qt.Key.Key_Up and cursor.blockNumber() == 0 and self._recall(1):
            return
        if (plain and event.key() == Qt.Key.Key_Down and cursor.blockNumber() == self.blockCount() - 1
                and self._recall(-1)):
            return
        super().keyPressEvent(event)

    def _recall(self, step: int) -> bool:
        """Show the message `step` further back (1) or forward (-1); False when the box holds the
        person's own text, or there is nothing there, so the key moves the cursor as usual."""
        text = self.toPlainText()
        back = 0
        if self._recalled is not None and self._recalled[1] == text:
            back = self._recalled[0]
        elif text:
            return False
        messages = self.sent()
        back += step
        if back > len(messages) or back < 0 or (back == 0 and not text):
            return False
        shown = messages[-back] if back else ""
        self.setPlainText(shown)
        self.moveCursor(QTextCursor.MoveOperation.End)
        self._recalled = (back, shown) if back else None
        return True
