"""Windows and dialogs stay within the screen, their buttons in reach, whatever they show.

The offscreen screen is 800 × 800: smaller than the window's default size, and about what a laptop
at 150 % scaling offers a dialog once the text is made larger.
"""

from __future__ import annotations

import json

from core.events import HumanQuestion
from core.scripted import ScriptedModel, call, reply
from core.session import SessionConfig
from gui.dialogs.question import QuestionDialog
from gui.dialogs.settings import SettingsDialog
from gui.qt import QDialogButtonBox, QLabel, QPushButton, QSettings, QWidget
from gui.screen_fit import fit_to_screen, screen_room
from gui.settings import AppSettings, Preferences
from gui.widgets.status import STATE_TEXT, SessionStatusBar

WAIT = 15_000


def assert_fits(dialog: QWidget) -> None:
    room = screen_room(dialog)
    assert dialog.width() <= room.width() and dialog.height() <= room.height(), (dialog.size(), room)
    for button in dialog.findChildren(QPushButton):
        if button.isVisibleTo(dialog):
            corner = button.mapTo(dialog, button.rect().bottomRight())
            assert dialog.rect().contains(corner), button.text()


def test_the_window_opens_no_taller_than_the_screen(make_window):
    window = make_window()
    assert window.height() <= screen_room(window).height()


def test_the_first_run_settings_fit_the_screen_with_larger_text(qtbot, make_window, tmp_path, actual_size_after):
    fresh = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    fresh.save(Preferences(model="", text_scale=1.5))
    window = make_window(settings_=fresh)
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(SettingsDialog)), timeout=WAIT)
    dialog = next(d for d in window.findChildren(SettingsDialog) if d.isVisible())

    assert_fits(dialog)
    save = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Save)
    assert save.isVisible()
    pages = [dialog.pages.tabText(i).replace("&", "") for i in range(dialog.pages.count())]
    assert pages == ["Model", "Supervision", "Web search", "Tool servers", "Application"]


def test_approving_a_whole_file_keeps_the_buttons_on_screen(qtbot, make_window, workdir):
    content = "".join(f"line {i}: value = compute({i})\n" for i in range(300))
    model = ScriptedModel([  # a heredoc: how agents often write a file through the shell
        reply("", call("shell_run", command=f"cat > big.py <<'EOF'\n{content}EOF")),
        reply("", call("task_done", summary="not written")),
    ])
    window = make_window(model)
    session = window.start_session(SessionConfig(task="Write big.py", model="scripted", workdir=workdir,
                                                 approval="ask"))
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.dialogs.values()), timeout=WAIT)
    dialog = next(d for d in window.dialogs.values() if d.isVisible())

    assert_fits(dialog)
    assert "line 299: value = compute(299)" in dialog.details.toPlainText()  # all of it, by scrolling
    assert dialog.details.verticalScrollBar().maximum() > 0
    dialog.buttons["deny"].click()
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    assert not (workdir / "big.py").exists()


def test_an_error_with_no_place_to_break_does_not_widen_the_dialog(qtbot, make_window):
    window = make_window()
    question = HumanQuestion("q1", "three_strike", "The same error three times.", ("retry_with_hint", "stop"), {
        "step": "Read the data", "errors": ["FileNotFoundError: /data/" + "x" * 350] * 3,
        "reboot": {"goal": "Read the data", "tried": "opening " + "y" * 300},
    })
    dialog = QuestionDialog(question, "A session", window)
    qtbot.addWidget(dialog)
    with qtbot.waitExposed(dialog):
        dialog.show()

    assert_fits(dialog)
    assert dialog.details.horizontalScrollBar().maximum() == 0  # wrapped, not scrolled sideways
    assert "x" * 350 in dialog.details.toPlainText().replace("\n", "")


def test_a_command_to_approve_is_shown_as_the_agent_sent_it(qtbot):
    command = "grep -n '<b>' page.html && echo \"a & b\""
    question = HumanQuestion("q2", "approval", "Run shell_run?", ("approve", "deny"),
                             {"tool": "shell_run", "arguments": json.dumps({"command": command})})
    dialog = QuestionDialog(question)
    qtbot.addWidget(dialog)
    assert f"command: {command}" in dialog.details.toPlainText()



def test_a_reboot_answered_in_free_text_and_the_failing_step_read_plainly(qtbot):
    from core.agent.loop import parse_reboot
    reboot = parse_reboot("I kept reading a file that is not there; I should list the folder first.")
    question = HumanQuestion("q3", "three_strike", "The same error three times.", ("retry_with_hint", "stop"),
                             {"step": "1. [ ] Read the relevant files in `src/`",
                              "errors": ["No such file: 'missing.py'"] * 3, "reboot": reboot})
    dialog = QuestionDialog(question)
    qtbot.addWidget(dialog)
    shown = dialog.details.toPlainText()
    assert "Its answer" in shown and "I should list the folder first" in shown
    assert "text" not in shown.split()  # not the parser's key
    assert "Failing step: Read the relevant files in src/\n" in shown  # not the plan's "1. [ ]", nor its backticks


def test_the_errors_of_three_strike_show_what_broke_once_not_a_warning_three_times(qtbot):
    from tests.core.agent.test_loop import FAILED_RUN
    question = HumanQuestion("q4", "three_strike", "The same error three times.", ("retry_with_hint", "stop"),
                             {"step": "Run the tests", "errors": [FAILED_RUN.replace("0.02", t) for t in "123"]})
    dialog = QuestionDialog(question)
    qtbot.addWidget(dialog)
    shown = dialog.details.toPlainText()
    assert shown.count("3 times, the latest:") == 1 and shown.count("ValueError: invalid literal") == 2
    assert "1 failed in 3s" in shown and "PytestDeprecationWarning" not in shown
    assert "Command failed with exit code 1.\n…\n" in shown  # one error's lines, each on its own


# A 1280 × 800 laptop screen at 150 % scaling: what Qt lays the window out in.
LAPTOP_AT_150 = 1280 * 2 // 3


def test_the_window_fits_a_laptop_at_150_percent_with_every_button_readable(qtbot, make_window):
    window = make_window()
    window.status.model.setText("Model: openrouter/anthropic/claude-sonnet-4.5-on-a-long-deployment-name")
    window.status.state.setText(STATE_TEXT["interrupted"][0])
    assert window.minimumSizeHint().width() <= LAPTOP_AT_150

    window.resize(window.minimumSizeHint().width(), 600)
    qtbot.waitUntil(lambda: window.width() == window.minimumSizeHint().width(), timeout=WAIT)
    shown = [b for b in window.findChildren(QPushButton) if b.isVisibleTo(window) and b.text()]
    assert {"Send", "Resume", "Rename", "Pin…", "Save"} <= {b.text() for b in shown}
    for button in shown:  # the whole label, not an elided or clipped one
        assert button.width() >= button.fontMetrics().horizontalAdvance(button.text()) + 12, button.text()
        corner = button.mapTo(window, button.rect().bottomRight())
        assert window.rect().contains(corner), button.text()


def test_a_new_width_wraps_the_conversation_anew(qtbot, make_window):
    window = make_window()
    placeholder = window.chat.items()[0]  # "No session is open", three paragraphs

    def wrapped_to_its_width() -> bool:  # every line shown, and no blank space below them
        return placeholder.width() > 0 and placeholder.height() == placeholder.heightForWidth(placeholder.width())

    window.main_splitter.setSizes([0, 800, 0])  # as wide as the other two columns let it be
    qtbot.waitUntil(wrapped_to_its_width, timeout=WAIT)
    wide_width, wide_height = placeholder.width(), placeholder.height()

    window.main_splitter.setSizes([300, 200, 300])  # the splitter dragged, or the window narrowed
    qtbot.waitUntil(lambda: placeholder.width() < wide_width - 50, timeout=WAIT)
    qtbot.waitUntil(wrapped_to_its_width, timeout=WAIT)
    assert placeholder.height() > wide_height
    assert placeholder.geometry().bottom() < placeholder.parentWidget().height()

    window.main_splitter.setSizes([0, 800, 0])
    qtbot.waitUntil(lambda: placeholder.width() == wide_width, timeout=WAIT)
    qtbot.waitUntil(wrapped_to_its_width, timeout=WAIT)
    assert placeholder.height() == wide_height


def test_the_status_bar_gives_way_and_shows_the_whole_text_on_hover(qtbot):
    bar = SessionStatusBar()
    qtbot.addWidget(bar)
    model = "Model: openrouter/anthropic/claude-sonnet-4.5-on-a-long-deployment-name"
    bar.model.setText(model)
    bar.state.setText(STATE_TEXT["interrupted"][0])  # the longest state
    bar.resize(sum(label.sizeHint().width() + 20 for label in bar.findChildren(QLabel)), 30)
    with qtbot.waitExposed(bar):
        bar.show()
    qtbot.waitUntil(lambda: QLabel.text(bar.state) == STATE_TEXT["interrupted"][0], timeout=WAIT)
    assert QLabel.text(bar.model) == model and bar.model.toolTip() == ""  # room for all of it

    assert bar.minimumSizeHint().width() < LAPTOP_AT_150 // 2
    bar.resize(bar.minimumSizeHint().width(), bar.height())
    qtbot.waitUntil(lambda: QLabel.text(bar.model).endswith("…"), timeout=WAIT)
    shown = QLabel.text(bar.model)
    assert len(shown) > 1 and model.startswith(shown[:-1])
    assert bar.model.text() == model and bar.model.toolTip() == model  # the whole of it, on hover
    assert QLabel.text(bar.state).endswith("…") and bar.state.toolTip() == STATE_TEXT["interrupted"][0]


def test_the_runs_state_gives_way_last_in_a_narrow_window_or_large_text(qtbot):
    bar = SessionStatusBar()
    qtbot.addWidget(bar)
    bar.model.setText("Model: openrouter/anthropic/claude-sonnet-4.5")
    bar.reuse.setText("Cache reuse: 98%")
    bar.cost.setText("Cost: $0.0421")
    bar.memory.setText("Memory: 12 lessons, 3 skills")
    bar.state.setText("■ Ended: done")
    with qtbot.waitExposed(bar):
        bar.show()
    bar.resize(bar.minimumSizeHint().width(), bar.height())
    qtbot.waitUntil(lambda: QLabel.text(bar.model).endswith("…") and QLabel.text(bar.memory).endswith("…"),
                    timeout=WAIT)
    assert QLabel.text(bar.state) == "■ Ended: done"  # not "■ En…": ended, or waiting for you?
    bar.state.setText(STATE_TEXT["elsewhere_waiting"][0])
    bar.resize(bar.minimumSizeHint().width(), bar.height())
    qtbot.waitUntil(lambda: QLabel.text(bar.state).startswith("? Waiting for an answer"), timeout=WAIT)


def test_the_shortcut_list_fits_the_screen_with_larger_text(qtbot, make_window, actual_size_after):
    window = make_window()
    for _ in range(4):  # 175 %: on the 800 px offscreen screen, what 125 % is at 150 % scaling
        window.change_text_size(1)
    listing = window.show_shortcuts()
    with qtbot.waitExposed(listing):
        pass
    assert_fits(listing)
    assert "Commands and keyboard shortcuts" in listing.text() and "F1" in listing.text()


def test_the_turn_thresholds_plan_status_reads_as_the_plans_markdown(qtbot):
    question = HumanQuestion("q4", "danger_turn", "Turn 30: go on?", ("continue", "stop"),
                             {"status": ["- Phase: 2", "- Progress: fixing `parse_date`, **tests** next"]})
    dialog = QuestionDialog(question)
    qtbot.addWidget(dialog)
    assert "Progress: fixing parse_date, tests next" in dialog.details.toPlainText()


def test_a_dialog_qt_grew_for_a_line_shrinks_back_when_the_line_goes(qtbot):
    """Qt grows a window to its layout's new minimum by itself (a note shown); the window then
    spread its rows over the note's room once it went, as if the person had made it taller."""
    from gui.qt import QDialog, QVBoxLayout
    from gui.screen_fit import fit_to_screen, grow_with_content

    dialog = QDialog()
    qtbot.addWidget(dialog)
    layout = QVBoxLayout(dialog)
    for row in range(5):
        layout.addWidget(QPushButton(f"Row {row}"))
    note = QLabel("A note\nof three\nlines")
    layout.addWidget(note)
    note.setVisible(False)
    fit_to_screen(dialog, 400, 100)
    grow_with_content(dialog)
    with qtbot.waitExposed(dialog):
        dialog.show()
    without_note = dialog.height()
    note.setVisible(True)
    qtbot.waitUntil(lambda: dialog.height() > without_note)
    note.setVisible(False)
    qtbot.waitUntil(lambda: dialog.height() == without_note)


def test_a_window_asks_for_room_in_proportion_to_the_text_size(qtbot, actual_size_after):
    from gui.qt import QApplication
    from gui.text_size import apply_text_size

    window = QWidget()
    qtbot.addWidget(window)
    fit_to_screen(window, 300, 200)
    assert (window.width(), window.height()) == (300, 200)
    apply_text_size(QApplication.instance(), 1.5)  # at 200 %, the commands window cut each command's name
    fit_to_screen(window, 300, 200)
    assert abs(window.width() - 450) <= 3 and abs(window.height() - 300) <= 2
    fit_to_screen(window, 5_000, 200)  # and never more than its screen has
    assert window.width() <= screen_room(window).width()


def test_a_questions_window_is_wider_with_larger_text(qtbot, actual_size_after):
    from gui.qt import QApplication
    from gui.text_size import apply_text_size

    def opened() -> QuestionDialog:
        question = HumanQuestion("q5", "human_ask", "Should totals round half up or half to even? " * 4,
                                 ("Half up", "Half to even"), {})
        dialog = QuestionDialog(question)
        qtbot.addWidget(dialog)
        return dialog

    at_actual_size = opened().minimumWidth()
    apply_text_size(QApplication.instance(), 1.5)  # at 200 % the question ran down a narrow column
    wider = opened()
    assert wider.minimumWidth() >= min(1.4 * at_actual_size, screen_room(wider).width() - 20)
    assert wider.minimumWidth() <= screen_room(wider).width()
