"""Ctrl+wheel makes the window's text larger or smaller, as in a browser or an editor: a step of
View → Larger / Smaller text per notch of the wheel (a touchpad's small turns add up to one).

Without it, Ctrl+wheel over a pane zoomed that pane's text alone (Qt's own, for a read-only text),
forgotten at the next start and undone by the next change of text size; over the conversation or
the sessions list it scrolled.
"""

from __future__ import annotations

from collections.abc import Callable

from gui.qt import QEvent, QObject, Qt

NOTCH = 120  # a wheel's notch, in eighths of a degree (Qt's angleDelta)


class ZoomWheel(QObject):
    def __init__(self, step: Callable[[int], None], parent: QObject | None = None):
        """`step(1)` one step larger, `step(-1)` smaller."""
        super().__init__(parent)
        self._step = step
        self._turned = 0  # of a notch, not yet a step

    def watch(self, *widgets) -> None:
        for widget in widgets:
            widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() != QEvent.Type.Wheel or not event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            return False
        self._turned += event.angleDelta().y()
        while abs(self._turned) >= NOTCH:
            direction = 1 if self._turned > 0 else -1
            self._turned -= direction * NOTCH
            self._step(direction)
        return True
