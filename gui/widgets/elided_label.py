"""A one-line label that shows as much of its text as fits and ends it with "…".

A QLabel is never narrower than its text, and a window is never narrower than its status bar: a
long model name, or "Interrupted mid-run: Resume (Ctrl+R) continues it", made the main window
wider than a laptop screen at 150 % scaling. This label asks for its whole text's width when there
is room and takes less when there is not. text() answers the whole text; while it is cut, the
tooltip shows it whole, above the label's own tooltip if it has one.
"""

from __future__ import annotations

from gui.announcer import spoken
from gui.qt import QEvent, QLabel, QResizeEvent, QSize, Qt, QWidget

MIN_CHARS = 4  # kept before the "…" at the least width: enough to tell labels apart


class ElidedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None, least_chars: int = MIN_CHARS):
        """`least_chars`: how much of the text is kept at the least width (a label that matters
        more keeps more: its neighbours give way first)."""
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._full, self._tip = "", ""
        self._least_chars = least_chars
        self.setText(text)

    def text(self) -> str:
        return self._full

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._full = text
        # A screen reader says the whole text, not what fits ("● Waiting for t…"), nor its marks.
        self.setAccessibleName(spoken(text))
        self._show_what_fits()
        self.updateGeometry()

    def setToolTip(self, tip: str) -> None:  # noqa: N802
        self._tip = tip
        self._show_what_fits()

    def sizeHint(self) -> QSize:  # noqa: N802
        return QSize(self._width_for(self._full), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        least = self._full if len(self._full) <= self._least_chars else self._full[:self._least_chars] + "…"
        return QSize(self._width_for(least), super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._show_what_fits()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._show_what_fits()
            self.updateGeometry()

    def _chrome(self) -> int:
        margins = self.contentsMargins()
        return margins.left() + margins.right() + 2 * self.margin()

    def _width_for(self, text: str) -> int:
        # One pixel of slack: the advance is rounded, and a width one short elides the last letter.
        return self.fontMetrics().horizontalAdvance(text) + self._chrome() + 1

    def _show_what_fits(self) -> None:
        room = self.width() - self._chrome()
        shown = self._full if self._width_for(self._full) <= self.width() else self.fontMetrics().elidedText(
            self._full, Qt.TextElideMode.ElideRight, room)
        super().setText(shown)
        cut = shown != self._full
        super().setToolTip(f"{self._full}\n{self._tip}".strip() if cut else self._tip)
