"""Settings' list of the commands allowed in work folders ("Always allow this command in this
folder"), where the person takes one back. Removals take effect when the settings are saved."""

from __future__ import annotations

from core.folder_approvals import FolderApprovals, describe
from gui.qt import (
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    Qt,
    QVBoxLayout,
    QWidget,
)
from gui.widgets.whole_lines import WholeLines


class AllowedCommands(QWidget):
    def __init__(self, approvals: FolderApprovals, parent: QWidget | None = None):
        super().__init__(parent)
        self.approvals = approvals
        self.removed: list[tuple[str, str]] = []  # (folder, approval key), revoked on apply()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.list = QListWidget()
        self.list.setObjectName("allowed_commands")
        self.list.setItemDelegate(WholeLines(self.list))  # (a line in Chinese is taller)
        self.list.setAccessibleName("Commands allowed without asking")
        for folder, keys in sorted(approvals.everything().items()):
            for key in keys:
                # The folder on a line of its own: after a long command it was out of sight.
                item = QListWidgetItem(f"{describe(key)}\n    in {folder}")
                item.setData(Qt.ItemDataRole.UserRole, (folder, key))
                item.setToolTip(f"{describe(key)}\nin {folder}")
                self.list.addItem(item)
        self.list.setMaximumHeight(110)
        self.remove = QPushButton("&Remove")
        self.remove.setEnabled(False)
        self.remove.clicked.connect(self._remove_selected)
        self.list.currentItemChanged.connect(lambda item, _old: self.remove.setEnabled(item is not None))
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(self.remove)
        self.none = QLabel("None yet")
        self.none.setObjectName("muted")
        self.none.setToolTip("“Always allow this command in this folder”, in an approval, adds one.")
        layout.addWidget(self.list)
        layout.addLayout(row)
        layout.addWidget(self.none)
        listed = self.list.count() > 0
        self.list.setVisible(listed)
        self.remove.setVisible(listed)
        self.none.setVisible(not listed)

    def _remove_selected(self) -> None:
        item = self.list.currentItem()
        if item is not None:
            self.removed.append(item.data(Qt.ItemDataRole.UserRole))
            self.list.takeItem(self.list.row(item))
            self.remove.setEnabled(self.list.currentItem() is not None)

    def apply(self) -> None:
        for folder, key in self.removed:
            self.approvals.revoke(folder, key)
        self.removed.clear()
