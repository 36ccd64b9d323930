"""Session → Summary: the session at a glance (core/summary.py), as `tripane show --summary` prints it."""

from __future__ import annotations

from gui.bidi import IsolatesLeftOutOfCopies, isolated
from gui.qt import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget
from gui.screen_fit import fit_to_screen
from gui.widgets.chat_items import escape_html


def rows_html(rows: list[tuple[str, str]]) -> str:
    cells = "".join(f'<tr><td style="padding: 3px 12px 3px 0; white-space: nowrap"><b>{escape_html(what)}</b></td>'
                    f'<td style="padding: 3px 0">{escape_html(value)}</td></tr>' for what, value in rows)
    return f"<table>{cells}</table>"


class SessionTextDialog(QDialog):
    """A session's title over a text to read about it, and a Close button (more buttons may join it)."""

    def __init__(self, what: str, title: str, html: str, accessible_name: str, size: tuple[int, int],
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"{what} — {isolated(title)}")
        heading = QLabel(f"<b>{escape_html(title)}</b>")
        heading.setWordWrap(True)
        self.text = IsolatesLeftOutOfCopies()  # (a reflection's Markdown: gui/bidi.py)
        self.text.setAccessibleName(accessible_name)
        self.text.setOpenExternalLinks(False)
        self.text.setHtml(html)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.buttons)
        fit_to_screen(self, *size)


class SummaryDialog(SessionTextDialog):
    def __init__(self, title: str, rows: list[tuple[str, str]], parent: QWidget | None = None):
        super().__init__("Summary", title, rows_html(rows), "The session at a glance", (640, 420), parent)
        self.setObjectName("session_summary")
        self.table = self.text
