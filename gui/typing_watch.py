"""Whether the person is typing in the main window just now: a message, an edit of the plan, a search.

A question opened as a window of its own takes the keyboard, under any window manager that gives a
new window the focus: a message being typed to the agent went on in the question's answer box, and
the Ctrl+Enter that was to send the message sent it as the answer, to another session perhaps. So a
question that comes while the person types waits for a pause (gui/window.py).
"""

from __future__ import annotations

import time

from gui.qt import QEvent, QObject, Qt, QWidget

TYPING_PAUSE_S = 1.5  # no key this long: the person has stopped typing, for now
# A key pressed with these is a shortcut (Ctrl+Shift+A asks for the question), not typing.
SHORTCUT_MODIFIERS = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier | Qt.KeyboardModifier.MetaModifier


class TypingWatch(QObject):
    """Notes when a key that types something was pressed in the fields it watches. (Watched field
    by field: a filter on the whole application, in Python, slowed every event of it.)"""

    def __init__(self, parent: QObject):
        super().__init__(parent)
        self._last = float("-inf")

    def watch(self, *fields: QWidget) -> None:
        for field in fields:
            field.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.KeyPress and event.text() and not event.modifiers() & SHORTCUT_MODIFIERS:
            self._last = time.monotonic()
        return False

    def typing(self) -> bool:
        """Whether a key was typed in the window within the last TYPING_PAUSE_S."""
        return time.monotonic() - self._last < TYPING_PAUSE_S
