"""A window of text to read (the keyboard shortcuts): as large as its text up to the screen's
room, scrolling beyond. A message box grows with its text and has no scroll bar: at larger text on a
laptop screen, the shortcut list ran past the bottom of the screen, its Close button with it."""

from __future__ import annotations

from gui.qt import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    Qt,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen


class ReadingWindow(QDialog):
    def __init__(self, title: str, html: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.view = QTextBrowser()
        self.view.setAccessibleName(title)
        self.view.setOpenExternalLinks(True)
        self.view.setFrameShape(QFrame.Shape.NoFrame)
        self.view.setHtml(html)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view, 1)
        layout.addWidget(buttons)
        document = self.view.document()
        document.setTextWidth(document.idealWidth())
        margins = layout.contentsMargins()
        chrome_w = margins.left() + margins.right() + 2 * self.view.frameWidth() + 24  # a scroll bar's room
        chrome_h = margins.top() + margins.bottom() + layout.spacing() + buttons.sizeHint().height() + 8
        fit_to_screen(self, int(document.idealWidth()) + chrome_w, int(document.size().height()) + chrome_h)

    def text(self) -> str:
        return self.view.toPlainText()
