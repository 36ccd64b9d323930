"""The question dialog and the keyboard: Enter never answers for the person; Ctrl+Enter sends a
typed answer where one button takes the text."""

from __future__ import annotations

import json

from core.events import HumanQuestion
from gui.dialogs.question import QuestionDialog
from gui.qt import Qt


def test_the_enter_key_answers_nothing(qtbot):
    question = HumanQuestion("q3", "approval", "Run shell_run?", ("approve", "deny"),
                             {"tool": "shell_run", "arguments": json.dumps({"command": "rm -rf build"})})
    dialog = QuestionDialog(question)
    qtbot.addWidget(dialog)
    with qtbot.waitExposed(dialog):
        dialog.show()
    answers = []
    dialog.answered.connect(lambda *answer: answers.append(answer))

    assert dialog.focusWidget() is dialog.text  # what the person types is the answer's text
    for widget in (dialog.text, dialog.details):
        widget.setFocus()
        qtbot.keyClick(widget, Qt.Key.Key_Return)
    assert answers == []
    qtbot.mouseClick(dialog.buttons["deny"], Qt.MouseButton.LeftButton)
    assert answers == [("q3", "deny", "")]


def test_ctrl_enter_sends_a_typed_answer_to_the_agents_question(qtbot):
    question = HumanQuestion("q4", "ask_user", "Which database should I use?", ("postgres", "sqlite"))
    dialog = QuestionDialog(question)
    qtbot.addWidget(dialog)
    answers = []
    dialog.answered.connect(lambda *answer: answers.append(answer))
    with qtbot.waitActive(dialog):  # a shortcut reaches only the active window
        dialog.show()
        dialog.activateWindow()

    qtbot.keyClick(dialog.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answers == [] and "Type an answer" in dialog.error.text()  # nothing typed yet
    qtbot.keyClicks(dialog.text, "duckdb")
    qtbot.keyClick(dialog.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answers == [("q4", "duckdb", "")]
