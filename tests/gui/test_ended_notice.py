"""The notices of the conversation: how a session ended, without repeating the answer just above
it; the person's answer to a question, a typed one with its lines."""

from __future__ import annotations

from core.events import (
    AssistantMessage,
    HumanAnswer,
    HumanQuestion,
    Record,
    SessionEnded,
    UserMessage,
)
from gui.widgets.chat import ChatView

ANSWER = "## Review of `mod.py`\n\n- Every helper has a docstring.\n\n```python\ndef scaled(x):\n    return x\n```"


def ended_text(chat: ChatView) -> str:
    [notice] = [item for item in chat.items() if item.objectName() == "ended"]
    return notice.text()


def test_a_session_ended_by_its_answer_points_to_it_instead_of_repeating_it(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    records = [Record("s", 1, "", UserMessage("Review mod.py")), Record("s", 2, "", AssistantMessage(ANSWER)),
               Record("s", 3, "", SessionEnded("done", ANSWER))]
    chat.show_records(records)  # from the log
    qtbot.waitUntil(lambda: not chat.building())
    assert "the answer above" in ended_text(chat) and "Review of" not in ended_text(chat)

    chat.clear()  # live: the reply streamed, then its records come
    chat.stream(ANSWER)
    for record in records[1:]:
        chat.add_record(record)
    assert "the answer above" in ended_text(chat) and "docstring" not in ended_text(chat)


def test_a_summary_of_its_own_is_told(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show_records([Record("s", 1, "", AssistantMessage("Step 3.")),
                       Record("s", 2, "", SessionEnded("done", "All 150 steps done."))])
    qtbot.waitUntil(lambda: not chat.building())
    assert "All 150 steps done." in ended_text(chat) and "answer above" not in ended_text(chat)


def test_a_typed_answer_keeps_its_lines_and_a_chosen_one_reads_as_its_button(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show_records([
        Record("s", 1, "", HumanQuestion(qid="q1", reason="ask_user", question="What does the log say?")),
        Record("s", 2, "", HumanAnswer(qid="q1", choice="12:00 worker 1: reset\n12:00 worker 2: <reset>")),
        Record("s", 3, "", HumanQuestion(qid="q2", reason="ask_user", question="Go on?", options=("yes", "no"))),
        Record("s", 4, "", HumanAnswer(qid="q2", choice="yes", text="but slowly\nand carefully")),
        # Typed beside the options (Send answer): a workbook's rows pasted ran together on one bold line.
        Record("s", 5, "", HumanQuestion(qid="q3", reason="ask_user", question="Figures?", options=("I'll send them",))),
        Record("s", 6, "", HumanAnswer(qid="q3", choice="Here:\nRegion,Revenue\nEU,1200")),
    ])
    qtbot.waitUntil(lambda: not chat.building())
    typed, chosen, typed_beside = [item.text() for item in chat.items() if item.objectName() == "answer"]
    assert typed == "↳ You answered <br>12:00 worker 1: reset<br>12:00 worker 2: &lt;reset&gt;"
    assert chosen == "↳ You answered <b>yes</b> — but slowly<br>and carefully"
    assert typed_beside == "↳ You answered <br>Here:<br>Region,Revenue<br>EU,1200"
