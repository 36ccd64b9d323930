"""The sessions in the data folder, newest first, with a search box and their state."""

from __future__ import annotations

import re
from collections.abc import Collection

from core.events import ended_word
from core.store import SessionRow
from core.text import one_line
from gui.announcer import spoken
from gui.bidi import isolated
from gui.keys import gives_window_keys, keeps_escape
from gui.qt import (
    QAbstractItemView,
    QEvent,
    QHBoxLayout,
    QItemSelectionModel,
    QKeyEvent,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    Qt,
    QVBoxLayout,
    QWidget,
    Signal,
)
from gui.session_search import MIN_CHARS, long_enough
from gui.widgets.snug_button import SnugButton
from gui.widgets.whole_lines import WholeLines

MARKS = {"waiting": "?", "paused": "‖", "running": "●", "ended:branched": "↶"}


def row_text(row: SessionRow, drafted: bool = False, serving: bool = False) -> str:
    """`drafted`: a message half written to it waits in the message box for it; `serving`: what
    its agent left running (a dev server) runs on for the person. Last, the name of its work folder
    (the project: what tells apart sessions of several), which a narrow list cuts first."""
    status = ended_word(row.status)
    mark = MARKS.get(row.status, "■" if row.status.startswith("ended") else "○")
    folder = re.split(r"[\\/]", row.workdir.rstrip("\\/"))[-1]  # (a Windows path, in a session imported here)
    when = row.created[:16].replace("T", " ")
    return (f"{mark} {isolated(row.title)}\n    {when} · {status}" + (" · ✎ draft" if drafted else "")
            + (" · ▸ left running" if serving else "") + (f" · {folder}" if folder else ""))


class SessionSearch(QLineEdit):
    """The sessions' search box, worked from the keyboard as a quick-open: Down goes into the
    matches, Enter opens the chosen one (the first, if none is) and Esc clears the search, then
    goes back to the message box — never stopping the shown session's run, as Esc elsewhere in the
    window does."""
    moved_down = Signal()
    chosen = Signal()
    left = Signal()

    def event(self, event: QEvent) -> bool:
        return True if keeps_escape(event) or gives_window_keys(self, event) else super().event(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt's name
        key = event.key()
        if key == Qt.Key.Key_Escape and self.text():
            self.clear()
        elif key == Qt.Key.Key_Escape:  # an empty search: back to the message box
            self.left.emit()
        elif key == Qt.Key.Key_Down:
            self.moved_down.emit()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.chosen.emit()
        else:
            super().keyPressEvent(event)


class SessionList(QWidget):
    session_selected = Signal(str)
    session_chosen = Signal(str)  # Enter in the search: opened, and the person goes on to it
    search_left = Signal()  # Esc in an empty search
    new_requested = Signal()
    rename_requested = Signal(str)
    delete_requested = Signal()  # of the sessions chosen (chosen_ids)
    search_changed = Signal(str)
    # How many sessions the search shows, in words, as it changes: said by a screen reader (the focus
    # is in the search box, the count under it).
    found_told = Signal(str)

    def __init__(self):
        super().__init__()
        self.setObjectName("session_list")
        self.search = SessionSearch()
        self.search.setAccessibleName("Search sessions")
        self.search.setToolTip("Down: into the matches · Enter: open the chosen one (else the first) · Esc: clear")
        self.search.setPlaceholderText("Search sessions (Ctrl+K)")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self.search_changed)
        # What the search found: how many of the sessions, or none (an empty list said nothing, and
        # whether the conversations were still being searched).
        self.found = QLabel()
        self.found.setObjectName("muted")  # (grey, as the theme has it)
        self.found.setWordWrap(True)
        self.found.setVisible(False)
        self.list = QListWidget()
        self.list.setAccessibleName("Sessions")
        self.list.setItemDelegate(WholeLines(self.list))  # (a line in Chinese is taller)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        # Shift- and Ctrl-click select several, for Delete: a long-time user's hundreds of old
        # sessions went one confirmation each. The current one is still the one shown.
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.itemSelectionChanged.connect(self._enable_row_buttons)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.currentItemChanged.connect(self._on_list_current_item_changed)
        self.search.moved_down.connect(self._into_the_list)
        self.search.chosen.connect(self._choose)
        self.search.left.connect(self.search_left)
        new, rename, delete = SnugButton("New"), SnugButton("Rename"), SnugButton("Delete")
        self.row_buttons = (rename, delete)  # for the selected session: off while none is
        new.setToolTip("New session (Ctrl+N)")
        rename.setToolTip("Rename the session (F2)")
        delete.setToolTip("Delete the selected sessions (Delete; Shift- or Ctrl-click selects several)")
        new.clicked.connect(self.new_requested)
        rename.clicked.connect(lambda: self.current_id() and self.rename_requested.emit(self.current_id()))
        delete.clicked.connect(lambda: self.chosen_ids() and self.delete_requested.emit())
        buttons = QHBoxLayout()
        for button in (new, rename, delete):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.search)
        layout.addWidget(self.found)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)

    def show_rows(self, rows: list[SessionRow], current: str | None, mentioning: Collection[str] = (),
                  drafted: Collection[str] = (), serving: Collection[str] = ()) -> None:
        """`mentioning`: the sessions whose conversation holds the text searched for; `drafted`:
        those a message half written to waits for; `serving`: those with a server left running
        for the person.

        The same sessions in the same order (a run's events change their state) are updated in
        place: rebuilt, the list lost the person's Shift-click anchor mid-selection. The person's
        selection is kept, unless the window moved to another session (a new one, Ctrl+PgDown):
        then it is that one alone."""
        current = current or ""
        moved = current != self.current_id()
        self.list.blockSignals(True)
        if [row.id for row in rows] != self.ids():
            selected = {item.data(Qt.ItemDataRole.UserRole) for item in self.list.selectedItems()}
            self.list.clear()
            for row in rows:
                item = QListWidgetItem()
                item.setData(Qt.ItemDataRole.UserRole, row.id)
                self.list.addItem(item)
                item.setSelected(row.id in selected and not moved)
        for index, row in enumerate(rows):
            inside = row.id in mentioning
            item = self.list.item(index)
            item.setText(row_text(row, row.id in drafted, row.id in serving) + ("\n    said in its conversation" if inside else ""))
            item.setData(Qt.ItemDataRole.AccessibleTextRole, spoken(item.text()))
            item.setToolTip(f"{row.task[:500]}\n\nWork folder: {row.workdir}\nModel: {row.model}"
                            + ("\n\nWhat its agent left running (a dev server) runs on for you: Stop it on the "
                               "command's card, or quit Tripane." if row.id in serving else "")
                            + ("\n\nIts conversation holds the text searched for: opened, it shows where." if inside else ""))
            if row.id == current and (moved or self.list.currentItem() is None):
                self.list.setCurrentItem(item, QItemSelectionModel.SelectionFlag.ClearAndSelect if moved
                                         else QItemSelectionModel.SelectionFlag.NoUpdate)
        if moved and current not in self.ids():  # none shown, or one the search leaves out
            self.list.selectionModel().clearCurrentIndex()
            self.list.clearSelection()
        self.list.blockSignals(False)
        self._enable_row_buttons()

    def show_found(self, search: str, shown: int, total: int, searching: bool) -> None:
        """Under the search: how many of the `total` sessions it shows, and whether what their
        conversations say is still being searched (`searching`)."""
        search = search.strip()
        if not search:
            text = ""
        elif shown:
            text = f"{shown:,} of {total:,} sessions" + (" · searching their conversations…" if searching else "")
        elif searching:
            text = "No title matches · searching what the conversations say…"
        else:
            text = (f"No session matches “{isolated(one_line(search, 40))}”."
                    + ("" if long_enough(search) else f" Conversations are searched from {MIN_CHARS} characters."))
        if text and text != self.found.text():
            self.found_told.emit(spoken(text))
        self.found.setText(text)
        self.found.setVisible(bool(text))
        self.search.setAccessibleDescription(text)

    def _into_the_list(self) -> None:
        if self.list.count():
            self.list.setFocus()
            if self.list.currentItem() is None:
                self.go_to_row(0)

    def _choose(self) -> None:
        if not self.list.count():
            return
        if self.list.currentItem() is None:
            self.go_to_row(0)  # (opens it)
        self.session_chosen.emit(self.current_id())

    def _enable_row_buttons(self) -> None:
        rename, delete = self.row_buttons
        chosen = len(self.chosen_ids())
        rename.setEnabled(chosen == 1)  # (of the current one)
        delete.setEnabled(chosen > 0)

    def chosen_ids(self) -> list[str]:
        """The sessions Delete acts on, in the list's order: those selected, else the current one."""
        selected = [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())
                    if self.list.item(i).isSelected()]
        current = self.current_id()
        return selected or ([current] if current else [])

    def go_to_row(self, row: int) -> None:
        """Make row `row` the current one (which shows it), and the only one selected."""
        self.list.setCurrentRow(row, QItemSelectionModel.SelectionFlag.ClearAndSelect)

    def current_id(self) -> str:
        item = self.list.currentItem()
        return item.data(Qt.ItemDataRole.UserRole) if item is not None else ""

    def ids(self) -> list[str]:
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    def _on_list_current_item_changed(self, current: QListWidgetItem | None, _previous) -> None:
        self._enable_row_buttons()
        if current is not None:
            self.session_selected.emit(current.data(Qt.ItemDataRole.UserRole))
