"""Delegated research in the real window: the call's card shows the helper's reads as they come,
its Stop research button makes the helper report what it has, and the conversation says what the
research took."""

from __future__ import annotations

import asyncio

from core.scripted import ScriptedModel, call, reply
from gui.dialogs.question import HELPER_TEXT_PROMPT
from gui.qt import QLabel, Qt
from gui.widgets.wrapped_label import WrappedLabel
from tests.core.agent.test_research import helpers_turn
from tests.gui.test_supporting_screens import chat_says
from tests.gui.test_window import start, wait_for_dialog

WAIT = 20_000


class HeldHelper(ScriptedModel):
    """The agent delegates; the helper searches, then its second request waits for `gate`."""

    def __init__(self):
        super().__init__([reply("", call("delegate_research", "d1", question="Where is main defined?")),
                          reply("", call("file_search", "h1", query="def main"), prompt_tokens=1500),
                          reply("", call("file_list", "h2"), prompt_tokens=1700),
                          reply("", call("task_done", summary="ok"))],
                         side_replies=[reply("main is defined in app.py:1.", prompt_tokens=1800)])
        self.gate = asyncio.Event()
        self.held = False

    async def complete(self, request, *args, **kwargs):
        if helpers_turn(request) and sum(helpers_turn(r) for r in self.requests) == 1:
            self.held = True
            await self.gate.wait()
        return await super().complete(request, *args, **kwargs)


def test_the_person_stops_a_research_from_its_card_and_gets_what_was_found(qtbot, make_window, workdir):
    (workdir / "app.py").write_text("def main():\n    pass\n", encoding="utf-8")
    model = HeldHelper()
    window = make_window(model)
    session = start(window, workdir)
    qtbot.waitUntil(lambda: model.held, timeout=WAIT)  # its second request is on its way
    shown = window.chat.cards["d1"].details.text()  # the first read, shown live
    assert "The helper's reads so far" in shown and "file_search query=def main" in shown
    card = window.chat.cards["d1"]
    assert card.status == "running" and card.stop_button.text() == "Stop research"
    assert "&Stop this research" in [action.text() for action in card.context_menu().actions()]

    qtbot.mouseClick(card.stop_button, Qt.MouseButton.LeftButton)
    model.gate.set()
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert session.state.status == "ended:done" and card.status == "ok"
    shown = card.details.text()
    assert "main is defined in app.py:1." in shown
    assert "reported early: the person asked you to stop researching" in shown
    notices = [label.text() for label in window.chat.findChildren(WrappedLabel) if "Research helper" in label.text()]
    assert notices == ["⌕ Research helper wrote its report after 3 steps (5,007 tokens)"]


def test_a_helpers_fetch_asks_the_person_and_stopping_the_research_withdraws_the_question(
        qtbot, make_window, workdir):
    model = ScriptedModel([reply("", call("delegate_research", "d1", question="What do the release notes say?")),
                           reply("", call("web_fetch", "w1", url="http://127.0.0.1:9/notes")),
                           reply("The notes were not read.", prompt_tokens=900),
                           reply("", call("task_done", summary="ok"))])
    window = make_window(model)
    session = start(window, workdir, approval="ask")
    dialog = wait_for_dialog(qtbot, window, "approval")
    assert "A research helper asks" in dialog.details.toPlainText()
    assert "http://127.0.0.1:9/notes" in dialog.details.toPlainText()
    assert any(label.text() == HELPER_TEXT_PROMPT for label in dialog.findChildren(QLabel))
    card = window.chat.cards["d1"]
    assert card.header.text().endswith("· waiting for your approval")

    qid = dialog.question.qid
    qtbot.mouseClick(card.stop_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    assert qid not in window.dialogs  # the dialog was taken away: nothing is left to answer
    assert session.state.status == "ended:done" and card.status == "ok"
    assert "↩ Question withdrawn: the research helper that asked was stopped" in chat_says(window)
