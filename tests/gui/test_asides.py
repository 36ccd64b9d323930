"""Session → Ask a helper… in the real window: the person's own question, answered by a research
helper while the agent waits for them; the answer in the dialog, its notice in the conversation
opening it again, and nothing of it in the agent's context."""

from __future__ import annotations

from core.events import ResearchStep
from core.scripted import call, reply
from gui.dialogs.ask_helper import AskHelperDialog
from gui.widgets.chat import ASIDE_LINK
from gui.widgets.wrapped_label import WrappedLabel
from tests.core.agent.test_research import helpers_turn, routed
from tests.core.helpers import events_of
from tests.gui.test_window import start, wait_for_dialog

WAIT = 20_000
QUESTION = "Which file holds the totals?"


def test_the_person_asks_a_helper_while_the_agent_waits_and_reads_the_answer_again_later(
        qtbot, make_window, workdir):
    (workdir / "billing.py").write_text("def price_total(lines):\n    return sum(lines)\n", encoding="utf-8")
    model = routed([reply("", call("human_ask", "ask", question="Shall I go on?")),
                    reply("", call("task_done", summary="ok"))],
                   [reply("", call("file_search", "h1", query="price_total"), prompt_tokens=600),
                    reply("**billing.py** holds them: `price_total` at line 1.", prompt_tokens=700)])
    window = make_window(model)
    session = start(window, workdir)
    question = wait_for_dialog(qtbot, window, "ask_user")
    action = window.actions_by_name["ask_helper"]
    assert action.isEnabled() and action.text() == "As&k a helper…"

    action.trigger()
    dialog, = [d for d in window.findChildren(AskHelperDialog) if d.isVisible()]
    assert dialog.windowTitle().startswith("Ask a helper — ")
    dialog.question.setPlainText(QUESTION)
    dialog.ask_button.click()
    qtbot.waitUntil(lambda: not dialog.working, timeout=WAIT)
    assert "billing.py holds them" in dialog.answer.toPlainText()
    assert dialog.status.text() == "You asked a helper: it answered after 2 steps, 1,312 tokens"
    first = events_of(session, ResearchStep)[0]
    assert first.for_person and first.question == QUESTION

    notices = [label for label in window.chat.findChildren(WrappedLabel) if ASIDE_LINK in label.text()]
    assert len(notices) == 1 and notices[0].text().startswith(
        f"⌕ You asked a helper “{QUESTION}”: it answered after 2 steps, 1,312 tokens — <a href")
    dialog.answer.clear()
    dialog.close()
    notices[0].linkActivated.emit(f"{ASIDE_LINK}{first.call_id}")
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    assert "billing.py holds them" in dialog.answer.toPlainText() and dialog.question.toPlainText() == QUESTION

    question.text.setPlainText("yes")  # the agent's own question is still open: answered now
    question.choose("answer")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    agent_requests = [r for r in model.requests if not helpers_turn(r)]
    assert not any(QUESTION in str(m.get("content")) for r in agent_requests for m in r.messages)


def test_an_empty_question_is_not_sent(qtbot, make_window, workdir):
    window = make_window(routed([reply("", call("task_done", summary="ok"))], [reply("never")]))
    start(window, workdir)
    dialog = window.asides.open()
    dialog.ask()
    assert dialog.error.isVisible() and dialog.error.text() == "Type a question first." and not dialog.working
