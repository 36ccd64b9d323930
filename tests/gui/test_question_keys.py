"""The question dialog and the keyboard: Enter never answers for the person; Ctrl+Enter sends a
typed answer where one button takes the text."""

from __future__ import annotations

import json

from core.events import HumanQuestion
from gui.dialogs.question import QuestionDialog
from gui.qt import Qt


def open_dialog(qtbot, question: HumanQuestion) -> tuple[QuestionDialog, list[tuple]]:
    """The dialog, shown and active (a shortcut reaches only the active window), and its answers."""
    dialog = QuestionDialog(question)
    qtbot.addWidget(dialog)
    answers: list[tuple] = []
    dialog.answered.connect(lambda *answer: answers.append(answer))
    with qtbot.waitActive(dialog):
        dialog.show()
        dialog.activateWindow()
    return dialog, answers


def approval(qid: str, command: str) -> HumanQuestion:
    return HumanQuestion(qid, "approval", "Run shell_run?", ("approve", "deny"),
                         {"tool": "shell_run", "arguments": json.dumps({"command": command})})


def test_the_enter_key_answers_nothing(qtbot):
    dialog, answers = open_dialog(qtbot, approval("q3", "rm -rf build"))

    assert dialog.focusWidget() is dialog.text  # what the person types is the answer's text
    for widget in (dialog.text, dialog.details):
        widget.setFocus()
        qtbot.keyClick(widget, Qt.Key.Key_Return)
    assert answers == []
    qtbot.mouseClick(dialog.buttons["deny"], Qt.MouseButton.LeftButton)
    assert answers == [("q3", "deny", "")]


def test_ctrl_enter_sends_a_typed_answer_to_the_agents_question(qtbot):
    dialog, answers = open_dialog(qtbot, HumanQuestion("q4", "ask_user", "Which database should I use?",
                                                       ("postgres", "sqlite")))

    qtbot.keyClick(dialog.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answers == [] and "Type an answer" in dialog.error.text()  # nothing typed yet
    qtbot.keyClicks(dialog.text, "duckdb")
    qtbot.keyClick(dialog.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answers == [("q4", "duckdb", "")]


def test_tab_leaves_the_answer_box_for_the_buttons(qtbot):
    dialog, _ = open_dialog(qtbot, approval("q5", "make"))
    qtbot.keyClicks(dialog.text, "not now")
    qtbot.keyClick(dialog.text, Qt.Key.Key_Tab)
    assert dialog.text.toPlainText() == "not now"  # no tab character typed
    assert dialog.focusWidget() is dialog.buttons["approve"]


def test_an_ampersand_from_the_agent_shows_and_gives_no_alt_shortcut(qtbot):
    """Qt takes "&" in a button's text as a shortcut mark: `server &` showed as `server _` on the
    card, and an option "Tests & docs" answered to Alt+D."""
    from core.events import ToolCall
    from gui.qt import QKeySequence
    from gui.widgets.tool_card import ToolCard

    card = ToolCard(ToolCall("c1", "shell_run", json.dumps({"command": "python -m http.server 8000 &"})))
    qtbot.addWidget(card)
    assert QKeySequence.mnemonic(card.header.text()).isEmpty()
    assert card.header.text().replace("&&", "&").endswith("http.server 8000 &")
    asked = ToolCard(ToolCall("c2", "human_ask", json.dumps({"question": "Should the count go to **12** or to `20`?"})))
    qtbot.addWidget(asked)
    assert asked.header.text().endswith("human_ask  Should the count go to 12 or to 20?")  # read as the dialog shows it
    question = HumanQuestion("q1", "ask_user", "What next?", ("Tests & docs", "Stop"), {})
    dialog, answers = open_dialog(qtbot, question)
    button = dialog.buttons["Tests & docs"]
    assert QKeySequence.mnemonic(button.text()).isEmpty() and button.text() == "Tests && docs"
    qtbot.keyClick(dialog, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    assert answers == []
    button.click()
    assert answers and answers[0][1] == "Tests & docs"
