"""View → Spending: what the models cost over all sessions, by day, by model and by session
(`tripane spending` prints the same). Read from the log on a worker thread; a session's row opens
that session."""

from __future__ import annotations

from core.spending import REVIEW, Spending, Spent, dearest, money, since_days
from core.text import counted
from gui.dialogs.forms import figures_table
from gui.qt import (
    QComboBox,
    QDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    Qt,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
    Signal,
)
from gui.screen_fit import fit_to_screen

PERIODS = (("Today", 1), ("The last 7 days", 7), ("The last 30 days", 30), ("The whole log", 0))
DEFAULT_PERIOD = 2
COLUMNS = ("Cost", "Tokens", "Requests", "From cache")


class SpendingDialog(QDialog):
    period_changed = Signal(int)  # days (0: the whole log)
    session_chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Spending")
        self.setObjectName("spending")
        self.period = QComboBox()
        self.period.setAccessibleName("Period")
        for label, days in PERIODS:
            self.period.addItem(label, days)
        self.period.setCurrentIndex(DEFAULT_PERIOD)
        self.period.currentIndexChanged.connect(lambda _i: self.period_changed.emit(self.days()))
        self.summary = QLabel("Reading the log…")
        self.summary.setObjectName("spending_summary")
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.tables = {name: self._table(first) for name, first in
                       (("day", "Day"), ("model", "Model"), ("session", "Session"))}
        self.tables["session"].cellActivated.connect(self._open_session)
        self.tables["session"].setToolTip("Double-click (or Enter) to open the session")
        tabs = QTabWidget()
        for name, title in (("day", "By day"), ("model", "By model"), ("session", "By session")):
            tabs.addTab(self.tables[name], title)
        self.tabs = tabs
        self.note = QLabel("")
        self.note.setObjectName("spending_note")
        self.note.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(QLabel("Period:"))
        top.addWidget(self.period)
        top.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.summary)
        layout.addWidget(tabs, 1)
        layout.addWidget(self.note)
        fit_to_screen(self, 760, 480)

    def days(self) -> int:
        return int(self.period.currentData())

    @staticmethod
    def _table(first: str) -> QTableWidget:
        table = figures_table([first, *COLUMNS])
        table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, 1 + len(COLUMNS)):
            table.horizontalHeader().setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        return table

    def show_spending(self, spent: Spending) -> None:
        if spent.since != since_days(self.days()):  # read for a period chosen before this one
            return
        period = self.period.currentText().lower()
        total = spent.total
        if not total.requests:
            self.summary.setText(f"No model requests in {period}.")
        else:
            self.summary.setText(f"<b>{money(total.cost_usd)}</b> in {period}: {total.tokens:,} tokens in "
                                 f"{counted(total.requests, 'request')}, over {spent.over()}.")
        self._fill("day", [(day.isoformat(), s, None) for day, s in spent.days_newest_first()])
        self._fill("model", [(model, s, None) for model, s in dearest(spent.by_model)])
        self._fill("session", [(spent.titles.get(sid, sid), s, None if sid.startswith(REVIEW) else sid)  # no session to open
                               for sid, s in dearest(spent.by_session)])
        unpriced = spent.unpriced()
        self.note.setText(f"$0: litellm has no price for {', '.join(unpriced)} (a local server, or one its provider "
                          "gives free)." if unpriced else "")
        self.note.setVisible(bool(unpriced))

    def show_failure(self, error: BaseException) -> None:
        self.summary.setText(f"The log could not be read: {error}")

    def _fill(self, name: str, rows: list[tuple[str, Spent, str | None]]) -> None:
        table = self.tables[name]
        table.setRowCount(len(rows))
        for row, (key, spent, session_id) in enumerate(rows):
            cached = f"{spent.cached_tokens / spent.prompt_tokens:.0%}" if spent.prompt_tokens else ""
            cells = (key, money(spent.cost_usd), f"{spent.tokens:,}", f"{spent.requests:,}", cached)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if session_id is not None:
                    item.setData(Qt.ItemDataRole.UserRole, session_id)
                    item.setToolTip(f"{key}\n{session_id}")
                table.setItem(row, column, item)

    def _open_session(self, row: int, _column: int) -> None:
        item = self.tables["session"].item(row, 0)
        if item is not None and item.data(Qt.ItemDataRole.UserRole):
            self.session_chosen.emit(item.data(Qt.ItemDataRole.UserRole))


