"""When the agent (or another editor) wrote a file while the person was editing it: both versions,
side by side.

Nothing is lost silently: the person keeps theirs (saved over the newer version), takes the newer
one (their edit is dropped, by their choice), or merges by hand in the editor.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

from core.text import counted
from gui.qt import (
    QColor,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPalette,
    QPlainTextEdit,
    QPushButton,
    QTextCursor,
    QTextEdit,
    QTextFormat,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen

KEEP_MINE, TAKE_AGENTS, MERGE = "keep_mine", "take_agents", "merge"


class Writer(NamedTuple):
    """Who saved the newer version, as the dialog names them: in its sentence, its column, its button."""
    saved: str  # "{saved} version N of FILE after you started editing"
    version: str  # the column's title, before " version N"
    take: str  # the button that takes that version


WRITERS = {
    "agent": Writer("The agent saved", "The agent's", "Take the agent's"),
    # another editor (VS Code, vim) saved the file in the session's folder
    "external": Writer("Another program (an editor outside Tripane) saved", "Saved outside Tripane,",
                       "Take that version"),
}
SOMEONE = Writer("Tripane saved", "The newer", "Take the newer")


def writer(author: str) -> Writer:
    """Who saved a version (a FileChanged's author), as the person reads it."""
    return WRITERS.get(author, SOMEONE)


class ConflictDialog(QDialog):
    def __init__(self, file_name: str, mine: str, agents: str, agents_version: int, parent: QWidget | None = None,
                 author: str = "agent"):
        super().__init__(parent)
        self.setObjectName("conflict")
        self.setWindowTitle(f"{file_name} changed while you edited it — Tripane")
        self.choice = ""
        saver = writer(author)
        layout = QVBoxLayout(self)
        differences = differing_lines(mine, agents)
        changed = len(differences.mine) + len(differences.agents)
        summary = QLabel(f"{saver.saved} version {agents_version} of {file_name} after you started editing. "
                         f"The two versions differ in {counted(changed, 'line')}, shaded below. Choose which to keep.")
        summary.setObjectName("summary")
        summary.setWordWrap(True)
        layout.addWidget(summary)
        sides = QHBoxLayout()
        for title, text, name, lines, first in (
                ("Your edit", mine, "mine", differences.mine, differences.first_mine),
                (f"{saver.version} version {agents_version}", agents, "agents", differences.agents, differences.first_agents)):
            column = QVBoxLayout()
            heading = QLabel(f"<b>{title}</b>")
            column.addWidget(heading)
            view = QPlainTextEdit(text)
            view.setObjectName(name)
            view.setAccessibleName(title)
            view.setReadOnly(True)
            mark_lines(view, lines, first)
            column.addWidget(view)
            sides.addLayout(column)
        layout.addLayout(sides, 1)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for label, choice in (("Keep mine", KEEP_MINE), (saver.take, TAKE_AGENTS), ("Merge by hand", MERGE)):
            button = QPushButton(label)
            button.setAutoDefault(False)  # a choice that drops a version takes a click, not a stray Enter
            button.setObjectName(choice)
            button.clicked.connect(lambda _=False, c=choice: self._choose(c))
            buttons.addWidget(button)
        layout.addLayout(buttons)
        fit_to_screen(self, 900, 520)

    def _choose(self, choice: str) -> None:
        self.choice = choice
        self.accept()


def _line_opcodes(mine_lines: list[str], agents_lines: list[str]) -> list[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(a=mine_lines, b=agents_lines, autojunk=False).get_opcodes()


class Differences(NamedTuple):
    """The numbers (from 0) of the lines each version has that the other does not, and where each
    version's first difference is (a line the other version added is "before" a line of this one)."""
    mine: list[int]
    agents: list[int]
    first_mine: int
    first_agents: int


def differing_lines(mine: str, agents: str) -> Differences:
    mine_lines, agents_lines = mine.splitlines(), agents.splitlines()
    ours: list[int] = []
    theirs: list[int] = []
    firsts: list[tuple[int, int]] = []
    for tag, a1, a2, b1, b2 in _line_opcodes(mine_lines, agents_lines):
        if tag != "equal":
            ours.extend(range(a1, a2))
            theirs.extend(range(b1, b2))
            firsts.append((a1, b1))
    first_mine, first_agents = firsts[0] if firsts else (0, 0)
    return Differences(ours, theirs, first_mine, first_agents)


def mark_lines(view: QPlainTextEdit, lines: list[int], first: int) -> None:
    """Shade the given lines across the view's width, and scroll the first difference into the
    middle: in a long plan, a one-line difference is otherwise a search."""
    shade = QColor(view.palette().color(QPalette.ColorRole.Highlight))
    shade.setAlpha(60)  # light enough to read through, in either theme
    marks = []
    for number in lines:
        mark = QTextEdit.ExtraSelection()
        mark.format.setBackground(shade)
        mark.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
        mark.cursor = QTextCursor(view.document().findBlockByNumber(number))
        marks.append(mark)
    view.setExtraSelections(marks)
    block = view.document().findBlockByNumber(min(first, view.document().blockCount() - 1))
    view.setTextCursor(QTextCursor(block))
    view.centerCursor()


def merge_text(mine: str, agents: str) -> str:
    """Both versions in one text: shared lines once, differing runs between conflict markers."""
    mine_lines, agents_lines = mine.splitlines(), agents.splitlines()
    merged: list[str] = []
    for tag, a1, a2, b1, b2 in _line_opcodes(mine_lines, agents_lines):
        if tag == "equal":
            merged.extend(mine_lines[a1:a2])
            continue
        merged.append("<<<<<<< your edit")
        merged.extend(mine_lines[a1:a2])
        merged.append("=======")
        merged.extend(agents_lines[b1:b2])
        merged.append(">>>>>>> the agent's version")
    return "\n".join(merged) + ("\n" if mine.endswith("\n") or agents.endswith("\n") else "")
