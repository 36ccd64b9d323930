"""The conflict dialog points at what differs: in a long plan a one-line difference is otherwise a search."""

from __future__ import annotations

from gui.dialogs.conflict import ConflictDialog, differing_lines
from gui.qt import QLabel, QPlainTextEdit, Qt


def plan(steps: int, changed: dict[int, str] | None = None) -> str:
    lines = [f"- step {i}: do thing {i}" for i in range(steps)]
    for number, text in (changed or {}).items():
        lines[number] = text
    return "# Plan\n" + "\n".join(lines) + "\n"


def marked(view: QPlainTextEdit) -> list[int]:
    return [mark.cursor.blockNumber() for mark in view.extraSelections()]


def test_the_differing_lines_are_shaded_and_scrolled_into_view(qtbot):
    mine = plan(80, {50: "- step 50: do it MY way"})
    agents = plan(80, {50: "- step 50: done", 51: "- step 51: done"}) + "- step 80: new\n"
    dialog = ConflictDialog("task_plan.md", mine, agents, 4)
    qtbot.addWidget(dialog)
    with qtbot.waitExposed(dialog):
        dialog.show()
    mine_view = dialog.findChild(QPlainTextEdit, "mine")
    agents_view = dialog.findChild(QPlainTextEdit, "agents")

    assert marked(mine_view) == [51, 52]  # block 0 is the heading
    assert marked(agents_view) == [51, 52, 81]
    for view in (mine_view, agents_view):
        assert view.firstVisibleBlock().blockNumber() > 10  # the first difference is on screen
        assert view.textCursor().blockNumber() == 51
    assert "differ in 5 lines" in dialog.findChild(QLabel, "summary").text()


def test_a_version_that_only_adds_lines_has_them_marked_and_the_other_scrolled_to_the_place(qtbot):
    mine = plan(80)
    agents = plan(80, {60: "- step 60: do thing 60\n- step 60b: one more"})
    assert differing_lines(mine, agents) == ([], [62], 62, 62)
    assert differing_lines("same\n", "same\n") == ([], [], 0, 0)

    dialog = ConflictDialog("task_plan.md", mine, agents, 2)
    qtbot.addWidget(dialog)
    with qtbot.waitExposed(dialog):
        dialog.show()
    mine_view = dialog.findChild(QPlainTextEdit, "mine")
    assert marked(mine_view) == [] and mine_view.textCursor().blockNumber() == 62
    assert mine_view.firstVisibleBlock().blockNumber() > 10


def test_the_enter_key_chooses_no_version(qtbot):
    dialog = ConflictDialog("task_plan.md", plan(5, {2: "- mine"}), plan(5, {2: "- the agent's"}), 3)
    qtbot.addWidget(dialog)
    with qtbot.waitExposed(dialog):
        dialog.show()
    for view in dialog.findChildren(QPlainTextEdit):
        view.setFocus()
        qtbot.keyClick(view, Qt.Key.Key_Return)
    assert dialog.isVisible() and dialog.choice == ""
