"""F1: every command of the window with its keys, found by typing a part of its name and run with
Enter. The list was only to read: a command with no key (Summary…, Copy as Markdown, Spending…)
was in a menu alone, and one with a key was learned here and then run elsewhere."""

from __future__ import annotations

from gui.announcer import Announcer
from gui.keys import on_enter, search_field
from gui.qt import (
    QAction,
    QDialog,
    QDialogButtonBox,
    QEvent,
    QHeaderView,
    QLabel,
    QObject,
    QPalette,
    Qt,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen

TITLE = "Commands and keyboard shortcuts"
# A row: where the command is (its menu, or where its keys work), its name, its keys, and its
# action (None: keys a widget takes itself, which are listed but run from where they work).
Row = tuple[str, str, str, QAction | None]


class CommandsWindow(QDialog):
    def __init__(self, rows: list[Row], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle(f"{TITLE} — Tripane")
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.filter = search_field("Type a part of a command's name or keys; Enter runs the one chosen",
                                   "Find a command")
        self.list = QTreeWidget()
        self.list.setAccessibleName(TITLE)
        self.list.setHeaderLabels(["Command", "Keys"])
        self.list.setRootIsDecorated(False)
        self.list.setUniformRowHeights(True)
        self.list.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.list.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.list.header().setStretchLastSection(False)
        for where, name, keys, action in rows:
            item = QTreeWidgetItem([f"{where} › {name}" if where else name, keys])
            item.setData(0, Qt.ItemDataRole.UserRole, action)
            if action is None:
                item.setToolTip(0, "Keys taken where the line says; nothing to run from here")
            else:  # greyed out as in its menu, and back as the session's state changes
                self._look_as(item, action)
                action.changed.connect(self._show_which_run)  # (a method: let go of when this window goes)
            self.list.addTopLevelItem(item)
        self.note = QLabel("")
        self.note.setObjectName("warning")
        self.note.setWordWrap(True)
        self.note.hide()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.note)
        layout.addWidget(buttons)
        self.filter.textChanged.connect(self._apply_filter)
        on_enter(self.filter, self.run_chosen)
        self.filter.installEventFilter(_ArrowsMoveInList(self))
        self.list.itemActivated.connect(lambda _item, _column: self.run_chosen())
        # The command chosen as the person types or presses Up and Down, said: the keys stay in the
        # search box, and a screen reader says only what has them.
        self.announcer = Announcer(self)
        self.list.currentItemChanged.connect(self._say_chosen)
        self._apply_filter("")
        fit_to_screen(self, 680, 720)

    def rows(self) -> list[QTreeWidgetItem]:
        return [self.list.topLevelItem(index) for index in range(self.list.topLevelItemCount())]

    def shown_rows(self) -> list[QTreeWidgetItem]:
        return [item for item in self.rows() if not item.isHidden()]

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt's name)
        """The other theme (Ctrl+Shift+T while it is open): the rows in its colours, greyed or not."""
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._show_which_run()

    def _show_which_run(self) -> None:
        for item in self.rows():
            if (action := item.data(0, Qt.ItemDataRole.UserRole)) is not None:
                self._look_as(item, action)

    def _look_as(self, item: QTreeWidgetItem, action: QAction) -> None:
        group = QPalette.ColorGroup.Active if action.isEnabled() else QPalette.ColorGroup.Disabled
        for column in (0, 1):
            item.setForeground(column, self.palette().brush(group, QPalette.ColorRole.Text))

    def _apply_filter(self, text: str) -> None:
        """Rows holding every word typed, in any case; the first of them chosen."""
        words = text.casefold().split()
        for item in self.rows():
            seen = f"{item.text(0)} {item.text(1)}".casefold()
            item.setHidden(not all(word in seen for word in words))
        shown = self.shown_rows()
        self.list.setCurrentItem(shown[0] if shown else None)
        self.note.hide()

    def run_chosen(self) -> None:
        """Run the chosen command, the window closed first (what it opens comes to the front). One
        that cannot run now, or keys a widget takes itself, are said so instead."""
        item = self.list.currentItem()
        if item is None or item.isHidden():
            return
        action = item.data(0, Qt.ItemDataRole.UserRole)
        if action is None:
            self._say(f"{item.text(0)}: {item.text(1)} works there, not from this list.")
        elif not action.isEnabled():
            self._say(f"{item.text(0)} cannot be done now (it is greyed out in its menu too).")
        else:
            self.close()
            action.trigger()

    def _say(self, text: str) -> None:
        self.note.setText(text)
        self.note.show()
        self.announcer.say(text)

    def _say_chosen(self, item: QTreeWidgetItem | None, _previous) -> None:
        if not self.filter.hasFocus():  # in the list, the screen reader says the row itself
            return
        if item is None:
            return self.announcer.once_settled("No command matches")
        action = item.data(0, Qt.ItemDataRole.UserRole)
        unable = ", cannot be done now" if action is not None and not action.isEnabled() else ""
        self.announcer.once_settled(f"{item.text(0).replace(' › ', ', ')}{f', {item.text(1)}' if item.text(1) else ''}"
                                    f"{unable}")

    def text(self) -> str:
        """The list as plain text, a row a line (what a screen reader reads of it)."""
        return "\n".join([TITLE, *(f"{item.text(0)}\t{item.text(1)}" for item in self.rows())])


class _ArrowsMoveInList(QObject):
    """Up and Down in the filter choose in the list, as in any search box with its results."""

    def __init__(self, commands: CommandsWindow):
        super().__init__(commands)
        self.commands = commands

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.KeyPress and event.key() in (Qt.Key.Key_Up, Qt.Key.Key_Down):
            shown, current = self.commands.shown_rows(), self.commands.list.currentItem()
            if shown:
                at = shown.index(current) if current in shown else -1
                step = 1 if event.key() == Qt.Key.Key_Down else -1
                self.commands.list.setCurrentItem(shown[max(0, min(len(shown) - 1, at + step))])
            return True
        return False
