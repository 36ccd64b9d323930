"""Session → Summary: the session at a glance (core/summary.py), as `tripane show --summary` prints it."""

from __future__ import annotations

from gui.qt import QDialog, QDialogButtonBox, QLabel, QTextBrowser, QVBoxLayout, QWidget
from gui.screen_fit import fit_to_screen
from gui.widgets.chat_items import escape_html


def rows_html(rows: list[tuple[str, str]]) -> str:
    cells = "".join(f'<tr><td style="padding: 3px 12px 3px 0; white-space: nowrap"><b>{escape_html(what)}</b></td>'
                    f'<td style="padding: 3px 0">{escape_html(value)}</td></tr>' for what, value in rows)
    return f"<table>{cells}</table>"


class SummaryDialog(QDialog):
    def __init__(self, title: str, rows: list[tuple[str, str]], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"Summary — {title}")
        self.setObjectName("session_summary")
        heading = QLabel(f"<b>{escape_html(title)}</b>")
        heading.setWordWrap(True)
        self.table = QTextBrowser()
        self.table.setAccessibleName("The session at a glance")
        self.table.setHtml(rows_html(rows))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        fit_to_screen(self, 640, 420)
