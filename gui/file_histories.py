"""The window's file history dialogs (gui/dialogs/file_history.py): one per session and file, kept
up to date as the file changes, and a version taken back into the pane's editor."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.session import EDITABLE_FILES
from gui.dialogs.file_history import FileHistoryDialog
from gui.qt import QMessageBox, Qt

if TYPE_CHECKING:
    from gui.window import MainWindow


class FileHistories:
    def __init__(self, window: MainWindow):
        self.window = window
        self.open: dict[tuple[str, str], FileHistoryDialog] = {}  # by session id and file name

    def show(self, name: str | None = None, version: int | None = None) -> FileHistoryDialog | None:
        """The history of `name` (by default, of the pane that has the focus, or the plan) of the
        session shown, at `version` (by default the newest)."""
        window = self.window
        session = window.session
        if session is None:
            return None
        if name is None:
            pane = window.focused_pane()
            name = pane.name if pane is not None else next(iter(window.panes))
        dialog = self.open.get((session.id, name))
        if dialog is None:
            pane = window.panes[name]
            dialog = FileHistoryDialog(window.keeper, window.workspace.store, session.id,
                                       window.workspace.title(session.id), name, pane.title_text,
                                       restorable=name in EDITABLE_FILES, parent=window)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            dialog.restore_requested.connect(self.restore)
            dialog.destroyed.connect(lambda _=None, key=(session.id, name): self.open.pop(key, None))
            self.open[(session.id, name)] = dialog
        if version is not None:
            dialog.want(version)
        dialog.reload()
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        dialog.list.setFocus()  # Up and Down go through the versions
        return dialog

    def file_changed(self, session_id: str, name: str) -> None:
        dialog = self.open.get((session_id, name))
        if dialog is not None:
            dialog.reload()

    def forget(self, session_id: str) -> None:
        """The session is deleted: its histories close."""
        for key in [key for key in self.open if key[0] == session_id]:
            self.open.pop(key).close()

    def restore(self, session_id: str, name: str, version: int, text: str) -> None:
        """Put an earlier version in the pane's editor, to be saved (and so sent to the agent) or not."""
        window = self.window
        session = window.session
        if session is None or session.id != session_id:
            window.tell(f"This history is of “{window.workspace.title(session_id)}”: open that session to "
                        "restore one of its versions.")
            return
        pane = window.panes[name]
        if pane.editing and pane.editor.toPlainText() != session.read_file(name)[0]:
            box = QMessageBox(QMessageBox.Icon.Question, "Restore a version",
                              f"Your edit of {name} is not saved. Replace it with v{version}?",
                              QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, window)
            box.setDefaultButton(QMessageBox.StandardButton.Cancel)
            box.finished.connect(lambda result: result == QMessageBox.StandardButton.Yes
                                 and self._into_editor(session_id, name, version, text))
            box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            box.open()
            return
        self._into_editor(session_id, name, version, text)

    def _into_editor(self, session_id: str, name: str, version: int, text: str) -> None:
        window = self.window
        session = window.session
        if session is None or session.id != session_id:
            return
        pane = window.panes[name]
        if not pane.editing:
            pane.set_editing(True)
        pane.continue_from(text, session.read_file(name)[1])
        pane.notice.setText(f"v{version} is in the editor. Save (Ctrl+S) sends it to the agent as your edit; "
                            "Cancel leaves the file as it is.")
        pane.notice.setVisible(True)
        dialog = self.open.get((session_id, name))
        if dialog is not None:
            dialog.close()
        window.activateWindow()
        pane.editor.setFocus()
