"""A word-wrapped rich-text label that lays its text out once per width, not once per question.

QLabel answers each size question by laying its whole document out again, and once more to put
back the width it had: its minimum size at width 0 (one word per line), its size hint at a guessed
width, then its height for the real width, asked again by every layout pass above it. Re-rendering
a streamed 400-word reply took 17 ms (11 ms with this label), and the window stalled for over 50 ms
when a turn ended.
Here the height for a width is kept until the text, font or style changes, and the hints reuse it:
a label inside a box layout is sized by its height for width, never by its hints.
"""

from __future__ import annotations

from collections.abc import Callable

from gui.announcer import html_said, spoken
from gui.bidi import without_isolates
from gui.qt import (
    QApplication,
    QEvent,
    QFocusEvent,
    QKeyEvent,
    QKeySequence,
    QLabel,
    QResizeEvent,
    QSize,
    QSizePolicy,
    Qt,
    QWidget,
)

# What changes how the text lays out (text changes go through setText).
_RELAYOUT_EVENTS = (QEvent.Type.FontChange, QEvent.Type.StyleChange, QEvent.Type.ContentsRectChange)


class WrappedLabel(QLabel):
    def __init__(self, html: str = "", parent: QWidget | None = None):
        super().__init__(parent)
        self._heights: dict[int, int] = {}
        self._plainly = False
        self.on_focus: Callable[[], None] | None = None  # called as it gets the focus, before it is told
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setWordWrap(True)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.setText(html)

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._heights.clear()
        super().setText(text)
        if self._plainly:
            self._name_plainly()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        if event.matches(QKeySequence.StandardKey.Copy) and self.hasSelectedText():
            QApplication.clipboard().setText(without_isolates(self.selectedText()))
            event.accept()
            return
        super().keyPressEvent(event)

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802 (Qt's name)
        if self.on_focus is not None:
            self.on_focus()
        super().focusInEvent(event)

    def speak_plainly(self) -> None:
        """A screen reader names it by its text without the marks before its kind of line (■ Ended,
        ⚠ Error, ↳ You answered): a conversation's notice."""
        self._plainly = True
        self._name_plainly()

    def _name_plainly(self) -> None:
        self.setAccessibleName(spoken(html_said(self.text())))

    def heightForWidth(self, width: int) -> int:  # noqa: N802
        height = self._heights.get(width)
        if height is None:
            height = self._heights[width] = super().heightForWidth(width)
        return height

    def sizeHint(self) -> QSize:  # noqa: N802
        width = max(1, self.width())
        return QSize(width, self.heightForWidth(width))

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(0, self.fontMetrics().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        # The size hint is the height at the current width: a new width is a new hint, and the
        # layout keeps the old one until told. A label's first width is told at once. Later ones
        # (the window or a splitter resized) wait for rewrap(): laying out every label's text at a
        # new width costs about 0.7 ms each, so the conversation does it for what is on screen
        # first and for the rest a page at a time (_Page).
        if event.size().width() != event.oldSize().width() and event.oldSize().width() <= 0:
            self.updateGeometry()

    def rewrap(self) -> None:
        """Let the layout ask again for the height at the current width."""
        self.updateGeometry()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        if event.type() in _RELAYOUT_EVENTS:
            self._heights.clear()
        super().changeEvent(event)
