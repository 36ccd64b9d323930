"""A text box whose hint (its placeholder text) a screen reader says too, and whose height is
counted in lines of its text.

Qt gives a one-line field's placeholder to a screen reader as its description, but not a text box's:
Orca said "Message to the agent" with nothing of Ctrl+Enter, and a question's answer box without
"Ctrl+Enter: Deny". Here the hint is the box's description as well, unless it has one of its own.
A height in pixels stayed as it was at 200 % text: the message box showed two lines, its hint cut.
"""

from __future__ import annotations

import math

from gui.bidi import aligned_to_its_text
from gui.qt import QEvent, QPlainTextEdit


class HintedText(QPlainTextEdit):
    _lines = 0.0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        aligned_to_its_text(self)  # (a message typed in Arabic or Hebrew is set on the right)

    def show_lines(self, lines: float) -> None:
        """As tall as `lines` lines of its text, at any text size."""
        self._lines = lines
        self._fit_lines()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange and self._lines:
            self._fit_lines()

    def _fit_lines(self) -> None:
        margins = self.contentsMargins()
        text = self.fontMetrics().lineSpacing() * self._lines + 2 * self.document().documentMargin()
        self.setFixedHeight(math.ceil(text) + margins.top() + margins.bottom())

    def setPlaceholderText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        if self.accessibleDescription() in ("", self.placeholderText()):
            self.setAccessibleDescription(text)
        changed = text != self.placeholderText()
        super().setPlaceholderText(text)
        if changed and self.document().isEmpty():
            # Qt repaints only when the hint comes or goes, not when another takes its place: the box
            # kept saying "Tell the agent what to do from here" after the run had begun.
            self.viewport().update()
