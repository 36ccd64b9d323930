"""The history of a session's file (click its version in the pane's header, or Ctrl+Shift+H): every
version of the plan, findings or progress, who wrote it and when, what it changed, and the whole text
it left, rebuilt from the log (core/memory/history.py). An earlier plan or findings can be taken
back: its text goes into the pane's editor, where Save sends it to the agent as the person's edit.

The log is read, and a version rebuilt, on a worker thread: progress.md may have thousands."""

from __future__ import annotations

import re

from core.memory.history import (
    FileVersion,
    Rebuilt,
    Unrebuildable,
    file_versions,
    rebuilt,
)
from core.store import Store
from gui.announcer import spoken
from gui.bidi import isolated
from gui.dialogs.forms import lay_out_browser
from gui.keys import on_enter
from gui.qt import (
    QDialog,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    Qt,
    QTabWidget,
    QTextBrowser,
    QWidget,
    Signal,
)
from gui.tasks import TaskKeeper
from gui.widgets.chat_items import escape_html, stamp
from gui.widgets.tool_card import diff_html

MAX_SHOWN_DIFF_LINES = 3000  # a rewrite of a long log: its start (the whole text is on the other tab)


def version_row(version: FileVersion) -> str:
    """A version as the list shows it: v12 · Agent · 14:03 · +3 −1."""
    counted = "created" if version.version == 1 else f"+{version.added} −{version.removed}"
    return f"v{version.version}  ·  {version.who}  ·  {stamp(version.ts)}  ·  {counted}"


def listed(store: Store, session_id: str, name: str) -> tuple[list[FileVersion], list[str]]:
    """A file's versions and the list's row for each: both made on the worker thread."""
    versions = file_versions(store, session_id, name)
    return versions, [version_row(version) for version in versions]


class FileHistoryDialog(QDialog):
    restore_requested = Signal(str, str, int, str)  # session id, file name, version, its text

    def __init__(self, keeper: TaskKeeper, store: Store, session_id: str, session_title: str, name: str,
                 title: str, restorable: bool, parent: QWidget | None = None):
        super().__init__(parent)
        self.keeper, self.store = keeper, store
        self.session_id, self.name = session_id, name
        self.versions: list[FileVersion] = []
        self._texts: dict[int, Rebuilt] = {}  # versions rebuilt so far
        self._reading = self._stale = False
        self._wanted: int | None = None  # the version to choose once the versions are read
        self.setWindowTitle(f"History of {title} — {isolated(session_title)}")
        self.setObjectName("file_history")
        self.summary = QLabel("Reading the log…")
        self.summary.setObjectName("history_summary")
        self.summary.setWordWrap(True)
        self.list = QListWidget()
        self.list.setAccessibleName(f"Versions of {name}")
        self.list.setSpacing(2)
        self.list.setUniformItemSizes(True)
        self.list.currentItemChanged.connect(lambda _now, _before: self._show_chosen())
        on_enter(self.list, lambda: None)  # (the dialog's default button put the version in the editor)
        self.changes = QTextBrowser()
        self.changes.setAccessibleName("What the version changed")
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName("The text the version left")
        self.since = QTextBrowser()
        self.since.setAccessibleName("What changed in the file since the version")
        self.tabs = QTabWidget()
        self.tabs.addTab(self.changes, "Changes")
        self.tabs.addTab(self.text, "Whole text")
        self.tabs.addTab(self.since, "Since")
        self.note = QLabel("")
        self.note.setObjectName("history_note")
        self.note.setWordWrap(True)
        self.restore = QPushButton("Restore this version")
        self.restore.setToolTip("Put this version's text in the editor: Save (Ctrl+S) sends it to the agent as your edit")
        self.restore.setVisible(restorable)
        self.restore.setEnabled(False)
        self.restore.clicked.connect(self._restore)
        lay_out_browser(self, [self.summary], self.list, self.tabs, self.note, [self.restore], 300, (960, 600))

    # --- reading --------------------------------------------------------------------------------

    def reload(self) -> None:
        """Read the file's versions from the log again (the file changed, or the dialog opened).
        One read at a time: changes that come in during one (a run appending to progress.md) are
        read once it is done."""
        self._stale = True
        if not self._reading:
            self._read()

    def _read(self) -> None:
        self._stale, self._reading = False, True
        self.keeper.in_thread(listed, self.store, self.session_id, self.name, name="file history",
                              owner=self, on_success=self._read_done, on_failure=self._failed)

    def _read_done(self, listed: tuple[list[FileVersion], list[str]]) -> None:
        self._reading = False
        self.show_versions(listed)
        if self._stale:
            self._read()

    def show_versions(self, listed: tuple[list[FileVersion], list[str]]) -> None:
        """The versions (oldest first) and their rows (listed): as a run goes on, only the new
        versions are added to the list (progress.md may have thousands)."""
        versions, rows = listed
        chosen = self.chosen_version()
        newest_was_chosen = chosen is None or bool(self.versions) and chosen == self.versions[-1].version
        known = len(self.versions)
        grows = 0 < known <= len(versions) and versions[known - 1] == self.versions[-1]
        self.versions = versions
        if not grows:
            self._texts = {}
        by_user = sum(1 for version in versions if version.author == "user")
        self.summary.setText(
            f"{self.name}: {len(versions):,} version{'s' if len(versions) != 1 else ''}"
            + (f", {by_user:,} of them your edits" if by_user else "")
            + ". Choose one to see what it changed, the whole text it left, and what changed since.")
        self.list.blockSignals(True)
        if not grows:
            self.list.clear()
            known = 0
        for version, row in zip(versions[known:], rows[known:]):  # newest first, on top
            item = QListWidgetItem(row)
            item.setData(Qt.ItemDataRole.UserRole, version.version)
            # "version 3, the agent, 14:02, edited", not "v3 middle dot …"
            item.setData(Qt.ItemDataRole.AccessibleTextRole, spoken(re.sub(r"^v(\d+)", r"version \1", row)))
            self.list.insertItem(0, item)
        self.list.blockSignals(False)
        # The newest stays chosen as versions come in, unless the person is reading an older one.
        wanted = versions[-1].version if versions and newest_was_chosen else chosen
        if self._wanted is not None:
            wanted, self._wanted = self._wanted, None
        if wanted != chosen or not grows:
            self.choose(wanted)

    def want(self, version: int) -> None:
        """Choose `version`: now if it is listed, else once the versions are read."""
        if any(item_version == version for item_version in self._listed_versions()):
            self.choose(version)
        else:
            self._wanted = version

    def _listed_versions(self) -> list[int]:
        return [self.list.item(row).data(Qt.ItemDataRole.UserRole) for row in range(self.list.count())]

    def choose(self, version: int | None) -> None:
        for row, listed_version in enumerate(self._listed_versions()):
            if listed_version == version:
                self.list.setCurrentRow(row)
                return
        if self.list.count():
            self.list.setCurrentRow(0)

    def chosen_version(self) -> int | None:
        item = self.list.currentItem()
        return None if item is None else item.data(Qt.ItemDataRole.UserRole)

    def _failed(self, error: BaseException) -> None:
        self._reading = False
        self.summary.setText(f"The history could not be read: {error}")

    # --- showing a version ----------------------------------------------------------------------

    def _show_chosen(self) -> None:
        number = self.chosen_version()
        version = next((v for v in self.versions if v.version == number), None)
        self.restore.setEnabled(False)
        if version is None:
            for view in (self.changes, self.text, self.since):
                view.clear()
            return
        self.changes.setHtml(diff_html(version.changes, MAX_SHOWN_DIFF_LINES) if version.changes
                             else "<p>(no change to the text)</p>")
        self.tabs.setTabText(1, f"Whole text at v{number}")
        self.tabs.setTabText(2, f"Since v{number}")
        if number in self._texts:
            self._show_text(number, self._texts[number])
            return
        self.text.setPlainText("")
        self.since.clear()
        self.note.setText(f"Rebuilding v{number} from the log…")
        versions = self.versions
        self.keeper.in_thread(rebuilt, versions, number, name="rebuild a file version", owner=self,
                              on_success=lambda result: self._rebuilt(versions, number, result),
                              on_failure=lambda error: self._not_rebuilt(versions, number, error))

    def _rebuilt(self, versions: list[FileVersion], number: int, result: Rebuilt) -> None:
        if versions is not self.versions:  # read again meanwhile
            return
        self._texts[number] = result
        if self.chosen_version() == number:
            self._show_text(number, result)

    def _show_text(self, number: int, result: Rebuilt) -> None:
        self.text.setPlainText(result.text)
        newest = bool(self.versions) and number == self.versions[-1].version
        if newest:
            self.since.setHtml("<p>This is the newest version: nothing changed since.</p>")
        elif result.since is None:
            self.since.setHtml(f"<p>What changed since is not shown: {escape_html(result.why_not)}.</p>")
        else:
            self.since.setHtml(diff_html(result.since, MAX_SHOWN_DIFF_LINES) if result.since
                               else "<p>The file is the same again now.</p>")
        self.note.setText("This is the file as it is now." if newest else "")
        self.restore.setEnabled(not newest)

    def _not_rebuilt(self, versions: list[FileVersion], number: int, error: BaseException) -> None:
        if versions is not self.versions or self.chosen_version() != number:
            return
        why = str(error) if isinstance(error, Unrebuildable) else f"reading it failed: {error}"
        self.text.setPlainText("")
        self.since.clear()
        self.note.setText(f"The whole text of v{number} is not shown: {why}. What it changed is.")

    def _restore(self) -> None:
        number = self.chosen_version()
        if number in self._texts:
            self.restore_requested.emit(self.session_id, self.name, number, self._texts[number].text)
