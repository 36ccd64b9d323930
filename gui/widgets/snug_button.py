"""A push button that may shrink to its text when the window is narrow.

Fusion gives every labelled button a minimum width of 80 px. With ten such buttons in rows across
the three columns, the main window could not be narrower than 932 px: more than a 1280 × 800
screen at 150 % scaling offers (853 logical px), so its right edge was cut off. The button still
asks for its usual size (sizeHint) and gets it when there is room.
"""

from __future__ import annotations

from gui.qt import QPushButton, QSize, QSizePolicy, QStyle, QStyleOptionButton


class SnugButton(QPushButton):
    def __init__(self, text: str = "", parent=None):
        super().__init__(text, parent)
        # A button's policy is Minimum: its size hint would be its least width, whatever the hint.
        self.setSizePolicy(QSizePolicy.Policy.Preferred, self.sizePolicy().verticalPolicy())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        hint = super().minimumSizeHint()
        option = QStyleOptionButton()
        self.initStyleOption(option)
        style = self.style()
        chrome = 2 * (style.pixelMetric(QStyle.PixelMetric.PM_ButtonMargin, option, self)
                      + style.pixelMetric(QStyle.PixelMetric.PM_DefaultFrameWidth, option, self))
        metrics = self.fontMetrics()
        # An em of air besides the frame and margins, so the text never touches the edge.
        snug = metrics.horizontalAdvance(self.text()) + chrome + metrics.horizontalAdvance("M")
        return QSize(min(hint.width(), snug), hint.height())
