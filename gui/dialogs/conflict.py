"""When the agent wrote a file while the person was editing it: both versions, side by side.

Nothing is lost silently: the person keeps theirs (saved over the agent's newer version), takes the
agent's (their edit is dropped, by their choice), or merges by hand in the editor.
"""

from __future__ import annotations

import difflib

from gui.qt import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen

KEEP_MINE, TAKE_AGENTS, MERGE = "keep_mine", "take_agents", "merge"


class ConflictDialog(QDialog):
    def __init__(self, file_name: str, mine: str, agents: str, agents_version: int, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("conflict")
        self.setWindowTitle(f"{file_name} changed while you edited it — Tripane")
        self.choice = ""
        layout = QVBoxLayout(self)
        changed = sum(1 for line in difflib.ndiff(agents.splitlines(), mine.splitlines()) if line[:1] in "+-")
        layout.addWidget(QLabel(f"The agent saved version {agents_version} of {file_name} after you started "
                                f"editing. The two versions differ in {changed} line(s). Choose which to keep."))
        sides = QHBoxLayout()
        for title, text, name in (("Your edit", mine, "mine"), (f"The agent's version {agents_version}", agents, "agents")):
            column = QVBoxLayout()
            heading = QLabel(f"<b>{title}</b>")
            column.addWidget(heading)
            view = QPlainTextEdit(text)
            view.setObjectName(name)
            view.setAccessibleName(title)
            view.setReadOnly(True)
            column.addWidget(view)
            sides.addLayout(column)
        layout.addLayout(sides, 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for label, choice in (("Keep mine", KEEP_MINE), ("Take the agent's", TAKE_AGENTS), ("Merge by hand", MERGE)):
            button = QPushButton(label)
            button.setObjectName(choice)
            button.clicked.connect(lambda _=False, c=choice: self._choose(c))
            buttons.addWidget(button)
        layout.addLayout(buttons)
        fit_to_screen(self, 900, 520)

    def _choose(self, choice: str) -> None:
        self.choice = choice
        self.accept()


def merge_text(mine: str, agents: str) -> str:
    """Both versions in one text: shared lines once, differing runs between conflict markers."""
    mine_lines, agents_lines = mine.splitlines(), agents.splitlines()
    merged: list[str] = []
    for tag, a1, a2, b1, b2 in difflib.SequenceMatcher(a=mine_lines, b=agents_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            merged.extend(mine_lines[a1:a2])
            continue
        merged.append("<<<<<<< your edit")
        merged.extend(mine_lines[a1:a2])
        merged.append("=======")
        merged.extend(agents_lines[b1:b2])
        merged.append(">>>>>>> the agent's version")
    return "\n".join(merged) + ("\n" if mine.endswith("\n") or agents.endswith("\n") else "")
