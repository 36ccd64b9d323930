"""Choose the plan lines the agent must keep verbatim."""

from __future__ import annotations

from core.memory.working import pin_key
from gui.qt import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QListWidget,
    QListWidgetItem,
    Qt,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen


class PinDialog(QDialog):
    def __init__(self, plan: str, pinned: tuple[str, ...], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("pins")
        self.setWindowTitle("Pin plan lines — Tripane")
        layout = QVBoxLayout(self)
        explained = QLabel("Checked lines are pinned: the agent cannot remove or rewrite them.")
        layout.addWidget(explained)
        self.lines = QListWidget()
        self.lines.setAccessibleName("Plan lines to pin")
        self.lines.setAccessibleDescription(explained.text())
        seen, keys = set(), {pin_key(line) for line in pinned}
        for line in plan.splitlines():
            stripped = line.strip()
            if not stripped or stripped in seen:
                continue
            seen.add(stripped)
            item = QListWidgetItem(stripped)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if pin_key(stripped) in keys else Qt.CheckState.Unchecked)
            self.lines.addItem(item)
        layout.addWidget(self.lines, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        fit_to_screen(self, 560, 480)

    def chosen(self) -> list[str]:
        return [self.lines.item(i).text() for i in range(self.lines.count())
                if self.lines.item(i).checkState() == Qt.CheckState.Checked]
