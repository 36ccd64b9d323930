"""What the agent changed in the work folder (Session → What the agent changed…, or the link at a
run's end): each file its file tools wrote or edited, what it did to it, and a way to put files
back as they were before the session (core/originals.py). The agent reads what was put back at
its next step.

Files are read and diffed on a worker thread: one may be large."""

from __future__ import annotations

import itertools
import time
from pathlib import Path, PurePosixPath

from core import pictures
from core.originals import Change, OriginalsUnreadable
from core.paths import named_files
from core.session import CannotRun, Restored, Session
from core.text import counted
from core.work_changes import NotListed, counted_changes
from gui.bidi import isolated
from gui.desktop_open import open_file
from gui.dialogs.forms import lay_out_browser, open_once, save_file_dialog
from gui.keys import on_enter, search_field
from gui.qt import (
    QAbstractItemView,
    QAction,
    QApplication,
    QDialog,
    QDialogButtonBox,
    QEvent,
    QImage,
    QItemSelectionModel,
    QKeySequence,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMessageBox,
    QPushButton,
    Qt,
    QTextBrowser,
    QTextDocument,
    QUrl,
    QVBoxLayout,
    QWidget,
)
from gui.tasks import TaskKeeper
from gui.theme import restyle
from gui.widgets.chat_items import escape_html
from gui.widgets.path_rows import SEPARATOR, PathRows
from gui.widgets.tool_card import diff_html

_PICTURE_NAMES = itertools.count(1)

INTRO = ("The files the agent wrote, edited, or changed with shell commands in this session, and what was done to "
         "each (Enter, or a double-click, opens one). Put one back and it is as it was before the session; a file "
         "the agent created is removed. The agent reads what you put back at its next step.")
# Files named in each line of the question whether to put them back; the rest are counted: all 600
# a formatter changed, named, made it taller than the screen, its buttons below the bottom edge.
NAMED = 8
# The list is read again when the window is back in front, at most this often (git looks at the
# whole work folder; a save dialog closing puts it in front too).
REREAD_GAP_S = 2.0


class PutBackDialog(QDialog):
    """Whether to put the chosen files back, what that loses, and why (for the agent)."""

    def __init__(self, chosen: list[Change], parent: QWidget):
        super().__init__(parent)
        one = len(chosen) == 1
        self.setWindowTitle("Put the file back?" if one else "Put files back?")
        self.setObjectName("put_back")
        groups = [  # (the files a command changed are told by the copy made before the first command)
            ("Put back as before the session", [c.path for c in chosen if c.existed and not c.by_command]),
            ("Put back as before the agent's first command", [c.path for c in chosen if c.existed and c.by_command]),
            ("Remove (the agent created {})", [c.path for c in chosen if not c.existed and not c.by_command]),
            ("Remove (created since the agent's first command, by a command or outside Tripane)",
             [c.path for c in chosen if not c.existed and c.by_command]),
        ]
        lines = [f"{what.format('it' if len(paths) == 1 else 'them')}: {named_files(paths, NAMED)}"
                 for what, paths in groups if paths]
        if outside := [c.path for c in chosen if c.outside]:  # (likely the person's own work)
            lines.append(f"\nNot changed by the agent (by you, or another program): {named_files(outside, NAMED)}")
        if since := [c.path for c in chosen if c.then_outside]:
            lines.append(f"\nChanged since the agent did, by you or another program: {named_files(since, NAMED)}")
        self.said = QLabel("\n".join(lines) + f"\n\nWhat changed in {'it' if one else 'them'} since is lost, your own "
                           "edits too.")
        self.said.setWordWrap(True)
        self.why = QLineEdit()
        self.why.setPlaceholderText("Why (optional): the agent reads it, and does not redo what you undid")
        self.why.setAccessibleName("Why the files are put back")
        buttons = QDialogButtonBox()
        buttons.addButton("Put back", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.said)
        layout.addWidget(self.why)
        layout.addWidget(buttons)
        self.resize(560, self.sizeHint().height())


def row(change: Change) -> str:
    return f"{change.path}{SEPARATOR}{change.what()}"


class WorkChangesDialog(QDialog):
    def __init__(self, keeper: TaskKeeper, session: Session, title: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.keeper, self.session = keeper, session
        self.changes: list[Change] = []
        # The button waits until the files are back and the list says how they stand: read again,
        # seconds in a large folder, the list meanwhile said the files were still changed.
        self.putting_back = False
        self._diff_of: tuple[str, str] | None = None  # the file and its state the diff shown is of
        self._read_at = 0.0  # when the files were last read (time.monotonic)
        self.setWindowTitle(f"What the agent changed — {isolated(title)}")
        self.setObjectName("work_changes")
        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        self.summary = QLabel("Reading the work folder…")
        self.summary.setObjectName("changes_summary")
        self.summary.setWordWrap(True)
        self.list = QListWidget()
        self.list.setAccessibleName("Files the agent changed")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.list.setSpacing(2)
        # A long path loses its middle, not the file's name and what was done to it: the list
        # scrolled sideways, the names cut off at its edge.
        self.list.setItemDelegate(PathRows(self.list))
        self.list.currentItemChanged.connect(lambda _now, _before: self._show_chosen())
        self.list.itemSelectionChanged.connect(self._update_buttons)
        self.diff = QTextBrowser()
        self.diff.setAccessibleName("What the agent changed in the file")
        self.note = QLabel("")
        self.note.setObjectName("error")
        self.note.setWordWrap(True)
        self.put_back_button = QPushButton("Put back as before…")
        self.put_back_button.setToolTip("The chosen files as they were before the session (Ctrl+click chooses more)")
        self.put_back_button.clicked.connect(self._put_back_chosen)
        # Most often the agent's whole work is wanted, to review or apply elsewhere: the button
        # says how many files it takes, as the first file is chosen when the window opens.
        self.patch_button = QPushButton()
        self.patch_button.setToolTip("The chosen files' changes as one patch file in git's format, to review or to apply "
                                     "elsewhere with git apply (Ctrl+S; Ctrl+A chooses all)")
        self.patch_button.clicked.connect(self.choose_patch_file)
        save = QAction("Save as patch…", self)
        save.setShortcut(QKeySequence(QKeySequence.StandardKey.Save))
        save.triggered.connect(self.choose_patch_file)
        self.addAction(save)
        # To paste in a review, a pull request's comment or a chat (right-click the list).
        self.copy_patch_action = QAction("Copy as patch", self.list)
        self.copy_patch_action.triggered.connect(self.copy_patch)
        put_back = QAction("Put back as before…", self.list)
        put_back.triggered.connect(self._put_back_chosen)
        # To look closer, or finish the agent's edit by hand, in the person's own editor (or Enter,
        # or a double-click): the window showed the diff, and nothing opened the file itself.
        self.open_action = QAction("Open the file", self.list)
        self.open_action.triggered.connect(self.open_chosen)
        self.list.itemDoubleClicked.connect(lambda _item: self.open_chosen())
        on_enter(self.list, self.open_chosen)
        self.list.addActions([self.open_action, self.copy_patch_action, save, put_back])
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        # A formatter's 600 files all begin litellm/llms/: typing a name's start finds none of them.
        self.filter = search_field("Filter by a part of the path (Ctrl+F)", "Filter the files by path")
        self.filter.textChanged.connect(lambda _text: self._apply_filter())
        on_enter(self.filter, self._go_to_list)  # (from the filter, on to the files it leaves)
        find = QAction(self)
        find.setShortcut(QKeySequence(QKeySequence.StandardKey.Find))
        find.triggered.connect(lambda: self.filter.setFocus())
        self.addAction(find)
        left = QWidget()
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.filter)
        column.addWidget(self.list, 1)
        lay_out_browser(self, [intro, self.summary], left, self.diff, self.note,
                        [self.patch_button, self.put_back_button], 320, (980, 600))
        self._update_buttons()

    def _apply_filter(self) -> None:
        """Only the files whose path holds the filter's text are shown, and can be chosen (Ctrl+A
        then chooses the files of one folder, to put back)."""
        wanted = self.filter.text().strip().casefold()
        for row in range(self.list.count()):
            item = self.list.item(row)
            hidden = bool(wanted) and wanted not in str(item.data(Qt.ItemDataRole.UserRole)).casefold()
            item.setHidden(hidden)
            if hidden:
                item.setSelected(False)
        current = self.list.currentItem()
        if current is not None and current.isHidden():  # the diff beside follows the list: a file shown
            if (shown := self._first_shown()) is not None:
                self.list.setCurrentItem(shown, QItemSelectionModel.SelectionFlag.NoUpdate)
        self._update_buttons()

    def _go_to_list(self) -> None:
        """From the filter, to the first file it leaves."""
        shown = self._first_shown()
        if shown is not None and (self.list.currentItem() is None or self.list.currentItem().isHidden()):
            self.list.setCurrentItem(shown)
        self.list.setFocus()

    def _first_shown(self) -> QListWidgetItem | None:
        """The first file the filter leaves in the list."""
        return next((self.list.item(row) for row in range(self.list.count()) if not self.list.item(row).isHidden()),
                    None)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if (event.type() == QEvent.Type.ActivationChange and self.isActiveWindow() and not self.putting_back
                and time.monotonic() - self._read_at > REREAD_GAP_S):
            # Back from an editor where the person undid a file: the list said it was still changed.
            self.reload()

    def reload(self) -> None:
        """The files and how each stands, read again (opened, back from another window, or files
        were put back)."""
        self._read_at = time.monotonic()
        self.keeper.in_thread(lambda: (self.session.changed_files(), self.session.changes_not_listed()),
                              name="work changes", owner=self, on_success=lambda found: self.show_changes(*found),
                              on_failure=self._failed)

    def show_changes(self, changes: list[Change], not_listed: NotListed = NotListed()) -> None:
        """The list anew, the person's choice and the file they look at kept (a reload comes as the
        run writes more files, or after a put-back)."""
        chosen = {item.data(Qt.ItemDataRole.UserRole) for item in self.list.selectedItems()}
        looked_at = self.list.currentItem().data(Qt.ItemDataRole.UserRole) if self.list.currentItem() else None
        self.changes = changes
        self.putting_back = False
        self.list.blockSignals(True)
        self.list.clear()
        for change in changes:
            item = QListWidgetItem(row(change))
            item.setData(Qt.ItemDataRole.UserRole, change.path)
            item.setToolTip(row(change))
            self.list.addItem(item)
            item.setSelected(change.path in chosen)
            if change.path == looked_at:
                self.list.setCurrentItem(item, QItemSelectionModel.SelectionFlag.NoUpdate)
        self.list.blockSignals(False)
        self._apply_filter()
        waiting = sum(1 for change in changes if change.now != "as before")
        self.summary.setText(
            " ".join(part for part in (
                ("" if not_listed.files else "The agent has changed no file in this session.") if not changes
                else counted_changes(changes)
                + (f"; {len(changes) - waiting:,} of them as before now" if waiting < len(changes) else "")
                + ". Choose one to see what was done to it.", not_listed.text()) if part))
        if changes and self.list.currentRow() < 0:
            self.list.setCurrentRow(0)
        self._show_chosen()
        self._update_buttons()

    def _chosen_changes(self) -> list[Change]:
        chosen = {item.data(Qt.ItemDataRole.UserRole) for item in self.list.selectedItems() if not item.isHidden()}
        return [change for change in self.changes if change.path in chosen]

    def _update_buttons(self) -> None:
        patchable = self._patchable()
        self.copy_patch_action.setEnabled(bool(patchable))
        self.put_back_button.setEnabled(not self.putting_back and any(change.kept for change in patchable))
        self.patch_button.setText(f"Save patch of {counted(len(patchable), 'file')}…" if patchable else "Save as patch…")
        self.patch_button.setEnabled(bool(patchable))

    def open_chosen(self) -> QMessageBox | None:
        """The file shown, in the application the desktop opens it with (a deleted one is said)."""
        item = self.list.currentItem()
        if item is None:
            return None
        path = Path(self.session.state.workdir) / str(item.data(Qt.ItemDataRole.UserRole))
        if not path.is_file():
            self._say(f"{path.name} is not in the work folder now: there is nothing to open.", error=True)
            return None
        self._say("")
        return open_file(path, self)

    def _patchable(self) -> list[Change]:
        """The chosen files a patch has something of: not as they were before."""
        return [change for change in self._chosen_changes() if change.now != "as before"]

    def choose_patch_file(self) -> QDialog | None:
        """Where to save the chosen files' changes as a patch (not in the work folder, where it
        would be one more change)."""
        chosen = self._patchable()
        if not chosen:
            return None
        return save_file_dialog(self, "Save the changes as a patch", Path.home() / f"tripane-{self.session.id}.patch",
                                "Patches (*.patch *.diff)", lambda path: self.save_patch(chosen, path))

    def copy_patch(self) -> None:
        """The chosen files' changes as a patch, on the clipboard (as text: bytes that are not
        UTF-8 are replaced, which the saved file keeps)."""
        chosen = self._patchable()
        if not chosen:
            return
        self._say(f"Copying the patch of {counted(len(chosen), 'file')}…")

        def copied(patch: bytes) -> None:
            QApplication.clipboard().setText(patch.decode("utf-8", "replace"))
            self._say(f"Copied the patch of {counted(len(chosen), 'file')}.")

        self.keeper.in_thread(lambda: self.session.changes_patch(chosen), name="patch", owner=self,
                              on_success=copied,
                              on_failure=lambda error: self._say(f"The patch was not copied: {error}", error=True))

    def save_patch(self, chosen: list[Change], target: Path) -> None:
        """The patch made and written on a worker thread (git reads the files commands changed)."""
        self._say(f"Writing the patch of {counted(len(chosen), 'file')}…")

        def write() -> None:
            target.write_bytes(self.session.changes_patch(chosen))

        self.keeper.in_thread(write, name="patch", owner=self, on_success=lambda _none: self._say(
            f"Saved the patch in {target}; its first lines say where to apply it (git apply)."),
            on_failure=lambda error: self._say(f"The patch was not saved: {error}", error=True))

    def _say(self, text: str, error: bool = False) -> None:
        """A line under the list: what was done, or in red what went wrong."""
        self.note.setText(text)
        self.note.setObjectName("error" if error else "said")
        restyle(self.note)

    def _show_chosen(self) -> None:
        item = self.list.currentItem()
        change = next((c for c in self.changes if item is not None and c.path == item.data(Qt.ItemDataRole.UserRole)),
                      None)
        if change is None:
            self.diff.setHtml("")
            self._diff_of = None
            return
        if self._diff_of is not None and self._diff_of != (change.path, change.what()):
            # (in a large folder its diff takes seconds: the old one, under a heading it no longer
            # matched, said the file was still changed after it was put back)
            self.diff.setHtml(f"<b>{escape_html(change.path)}</b> — {escape_html(change.what())}<p>Reading…</p>")
        self.keeper.in_thread(lambda: self._read_change(change), name="work diff",
                              owner=self, on_success=lambda read: self._show_diff(change, *read),
                              on_failure=self._failed)

    def _read_change(self, change: Change) -> tuple[list[str], tuple[bytes | None, bytes | None] | None]:
        """(On a worker thread.) The file's diff lines; and, of a picture (a chart the agent drew
        again, a screenshot), the picture before and now, to be seen: its diff only gave sizes."""
        if PurePosixPath(change.path).suffix.lower() in pictures.KINDS:
            return [], self.session.changed_file_sides(change)  # (shown instead of the diff: its sizes)
        return self.session.changed_file_diff(change), None

    def _show_diff(self, change: Change, lines: list[str],
                   sides: tuple[bytes | None, bytes | None] | None = None) -> None:
        current = self.list.currentItem()
        if current is None or current.data(Qt.ItemDataRole.UserRole) != change.path:
            return  # another file was chosen meanwhile
        shown = self._pictures_html(sides) if sides else diff_html(lines)
        self.diff.setHtml(f"<b>{escape_html(change.path)}</b> — {escape_html(change.what())}{shown}")
        self._diff_of = (change.path, change.what())

    def _pictures_html(self, sides: tuple[bytes | None, bytes | None]) -> str:
        """The picture before and now, side by side, each scaled to fit its half of the pane."""
        cells = []
        width = max(120, (self.diff.viewport().width() - 40) // 2)
        for label, data in zip(("Before", "Now"), sides):
            image = QImage.fromData(data) if data else QImage()
            if image.isNull():
                said = "none (created by the agent)" if label == "Before" else "none (deleted)"
                cells.append(f"<td valign='top'>{label}: <i>{said if data is None else 'not a picture Qt reads'}</i></td>")
                continue
            size = f"{image.width():,} × {image.height():,}, {len(data or b''):,} bytes"
            if image.width() > width:
                image = image.scaledToWidth(width, Qt.TransformationMode.SmoothTransformation)
            name = f"tripane-change-{next(_PICTURE_NAMES)}.png"  # (a new name each time: the document keeps its resources)
            self.diff.document().addResource(QTextDocument.ResourceType.ImageResource, QUrl(name), image)
            cells.append(f"<td valign='top'>{label} ({size})<br><img src='{name}'></td>")
        return "<table cellspacing='8'><tr>" + "".join(cells) + "</tr></table>"

    def _put_back_chosen(self) -> PutBackDialog | None:
        """Ask before putting the chosen files back, and why (the agent reads it)."""
        chosen = [c for c in self._chosen_changes() if c.now != "as before" and c.kept]
        if not chosen:
            return None
        confirm = PutBackDialog(chosen, self)
        confirm.accepted.connect(lambda: self.put_back([c.path for c in chosen], confirm.why.text()))
        open_once(confirm)  # (not exec: a nested event loop under qasync)
        return confirm

    def put_back(self, paths: list[str], reason: str = "") -> None:
        """Put the files back (the person confirmed) and show how they stand now. On a worker
        thread: git reads each file a command changed from the copy, and 600 of them held the
        window still for seconds, the list saying they were still changed."""
        try:
            self.session.check_put_back()
        except CannotRun as exc:
            self._say(str(exc), error=True)
            return
        self._say("")
        self.putting_back = True
        self._update_buttons()
        self.summary.setText(f"Putting back {len(paths):,} file{'s' * (len(paths) != 1)}…")
        self.keeper.in_thread(lambda: self.session.restore(paths), name="put back", owner=self,
                              on_success=lambda done: self._restored(done, reason), on_failure=self._not_restored)

    def _restored(self, done: Restored, reason: str) -> None:
        try:
            self.session.record_put_back(done, reason)
        except CannotRun as exc:
            self._say(str(exc), error=True)
        back = len(done.restored) + len(done.removed)
        self.summary.setText(f"Put back {back:,} file{'s' * (back != 1)}; reading the work folder again…")
        self.reload()

    def _not_restored(self, error: BaseException) -> None:
        self._say(str(error) if isinstance(error, (CannotRun, OSError)) else
                  f"The files could not be put back: {error}", error=True)
        self.reload()

    def _failed(self, error: BaseException) -> None:
        self.putting_back = False
        self._update_buttons()
        self.summary.setText(str(error) if isinstance(error, (OriginalsUnreadable, CannotRun, OSError)) else
                             f"The changes could not be read: {error}")

