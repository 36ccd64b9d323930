"""The question dialog and the keyboard: Enter never answers for the person; Ctrl+Enter sends a
typed answer where one button takes the text; each button has an Alt key."""

from __future__ import annotations

import json

from core.events import HumanQuestion
from gui.dialogs.question import QuestionDialog
from gui.mnemonics import with_keys
from gui.qt import QApplication, QKeySequence, Qt


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
    assert button.text() == "&Tests && docs"  # its own key is Alt+T, the first letter
    qtbot.keyClick(dialog, Qt.Key.Key_D, Qt.KeyboardModifier.AltModifier)
    assert answers == []
    button.click()
    assert answers and answers[0][1] == "Tests & docs"


def strike(qid: str) -> HumanQuestion:
    return HumanQuestion(qid, "three_strike", "The same error happened 3 times. How should the agent go on?",
                         ("retry_with_hint", "skip_step", "edit_plan", "change_model", "stop"),
                         {"errors": ["ZeroDivisionError"] * 3})


def test_ctrl_enter_sends_a_hint_with_retry_and_a_reason_with_deny(qtbot):
    dialog, answers = open_dialog(qtbot, strike("q6"))
    assert "Ctrl+Enter: Retry with a hint" in dialog.text.placeholderText()
    qtbot.keyClick(dialog.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answers == [] and "Type the hint first" in dialog.error.text()  # a chord by habit answers nothing
    qtbot.keyClicks(dialog.text, "Guard the empty list")
    qtbot.keyClick(dialog.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answers == [("q6", "retry_with_hint", "Guard the empty list")]

    dialog, answers = open_dialog(qtbot, approval("q7", "rm -rf build"))
    qtbot.keyClick(dialog.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answers == [] and "reason for denying" in dialog.error.text()  # never an approval by the chord
    qtbot.keyClicks(dialog.text, "not the build folder")
    qtbot.keyClick(dialog.text, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert answers == [("q7", "deny", "not the build folder")]


def test_alt_and_a_buttons_letter_presses_it_from_the_answer_box(qtbot):
    dialog, answers = open_dialog(qtbot, strike("q8"))
    keys = {option: QKeySequence.mnemonic(button.text()).toString() for option, button in dialog.buttons.items()}
    assert keys == {"retry_with_hint": "Alt+R", "skip_step": "Alt+S", "edit_plan": "Alt+E",
                    "change_model": "Alt+C", "stop": "Alt+T"}  # no two alike
    qtbot.keyClick(dialog.text, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: answers == [("q8", "skip_step", "")])  # (Qt shows the press first)
    assert dialog.text.toPlainText() == ""  # the key typed nothing


def test_keys_are_chosen_from_the_labels_own_letters():
    assert with_keys(["Approve", "Always allow shell_run", "Deny"]) == ["&Approve", "Always allow &shell_run", "&Deny"]
    assert with_keys(["Tests & docs", "Stop"]) == ["&Tests && docs", "&Stop"]
    # a label without a free letter of the keyboard's has no key; one with none free too
    assert with_keys(["用 PostgreSQL", "用 SQLite", "继续"]) == ["用 &PostgreSQL", "用 &SQLite", "继续"]
    assert with_keys(["a", "A", "Send answer"]) == ["&a", "A", "&Send answer"]


def test_alt_and_a_rows_letter_goes_to_the_turns_granted(qtbot):
    dialog, answers = open_dialog(qtbot, HumanQuestion("q9", "danger_turn", "Turn 30: go on?",
                                                       ("continue", "guidance", "stop"), {}))
    assert [button.text() for button in dialog.buttons.values()] == ["&Continue", "&Send guidance", "S&top"]
    qtbot.keyClick(dialog.text, Qt.Key.Key_F, Qt.KeyboardModifier.AltModifier)  # "Continue &for this many more turns"
    assert dialog.focusWidget() is dialog.more_turns
    qtbot.keyClicks(dialog.more_turns, "\b\b25")
    qtbot.keyClick(dialog.more_turns, Qt.Key.Key_C, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: answers == [("q9", "continue", "25 more turns")])


def test_answering_by_a_button_leaves_the_focus_on_the_question_not_on_each_button_in_turn(qtbot):
    dialog, answers = open_dialog(qtbot, approval("q7", "python -m pytest -q"))
    focused = []
    QApplication.instance().focusChanged.connect(lambda _old, new: focused.append(new))
    dialog.buttons["approve"].setFocus()
    qtbot.keyClick(dialog.buttons["approve"], Qt.Key.Key_Space)
    assert answers == [("q7", "approve", "")]
    assert focused[1:] == [dialog.details]  # (a disabled button gave it to the next, which a screen reader said)


def test_a_screen_reader_is_given_the_question_as_its_window_opens(qtbot):
    dialog, _ = open_dialog(qtbot, approval("q8", "rm -rf build"))
    assert "rm -rf build" in dialog.accessibleDescription()
    assert dialog.text.accessibleDescription() == "Ctrl+Enter: Deny"  # the answer box's hint, said too
