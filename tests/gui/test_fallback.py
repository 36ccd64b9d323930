"""A question with a fallback in the real window: its dialog says what the agent does without an
answer and after how long; when the wait runs out the dialog goes and the conversation says so.
The wait is a setting the command line shares. The agent's question reads as the Markdown it wrote."""

from __future__ import annotations

import re

import pytest

from core.agent import loop as agent_loop
from core.scripted import ScriptedModel, call, reply
from gui.qt import QLabel
from gui.widgets.wrapped_label import WrappedLabel
from tests.gui.test_window import start, wait_for_dialog

WAIT = 20_000
FALLBACK = "keep the ISO date format."


def asking() -> ScriptedModel:
    return ScriptedModel([reply("", call("human_ask", "ask", question="Which date format?", options=["ISO", "US"],
                                         fallback=FALLBACK)),
                          reply("", call("task_done", summary="report written"))])


def test_the_dialog_says_what_happens_without_an_answer_and_goes_when_the_wait_runs_out(
        qtbot, make_window, workdir, monkeypatch):
    window = make_window(asking())
    monkeypatch.setattr(agent_loop, "MINUTE_S", 1.0)  # long enough to look at the dialog
    session = start(window, workdir, answer_wait_min=1)
    dialog = wait_for_dialog(qtbot, window, "ask_user")
    shown = dialog.details.toPlainText()
    assert "If you do not answer: keep the ISO date format. The agent goes on with it after 1 minute" in shown
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert session.state.status == "ended:done" and not window.dialogs  # the dialog was taken away
    notices = [label.text() for label in window.chat.findChildren(WrappedLabel) if "No answer" in label.text()]
    assert len(notices) == 1  # its mark may be drawn as a stand-in (gui/glyphs.py)
    assert notices[0].endswith(" No answer within 1 minute: the agent goes on with its fallback — "
                               "keep the ISO date format.")


@pytest.mark.parametrize("wait", [0, 25])
def test_the_wait_is_a_setting_the_command_line_shares(qtbot, make_window, wait):
    from core.user_settings import read_settings

    window = make_window()
    dialog = window.open_settings()
    assert dialog.answer_wait.value() == 0 and dialog.answer_wait.text() == "never: wait for me"
    dialog.answer_wait.setValue(wait)
    dialog._accept()
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT)
    assert window.prefs.answer_wait_min == wait
    assert read_settings(window.settings.shared_file)["answer_wait_min"] == wait


def test_the_agents_question_reads_as_its_markdown_renders(qtbot, make_window, workdir):
    question = "Should I also change `average()` the same way? It is **not** in the task.\n\n- yes\n- no"
    window = make_window(ScriptedModel([reply("", call("human_ask", "ask", question=question, options=["yes", "no"],
                                                                 fallback="leave `average()` as it is")),
                                        reply("", call("task_done", summary="left it"))]))
    start(window, workdir)
    dialog = wait_for_dialog(qtbot, window, "ask_user")

    shown = dialog.details.toPlainText()
    assert "change average() the same way? It is not in the task." in shown  # no Markdown marks left
    assert "If you do not answer: leave average() as it is." in shown
    html = dialog.details.toHtml()
    assert re.search(r"<span style=\"[^\"]*font-family:'monospace'[^\"]*\">average\(\)</span>", html)
    assert re.search(r"<span style=\"[^\"]*font-weight:700[^\"]*\">not</span>", html)
    notice = next(label.text() for label in window.chat.findChildren(QLabel) if "Question for you" in label.text())
    assert "<code>average()</code>" in notice and "<strong>not</strong>" in notice
    dialog.choose("no")
