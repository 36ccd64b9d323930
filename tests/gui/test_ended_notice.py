"""The notice a session ends with says how it ended, without repeating the answer just above it."""

from __future__ import annotations

from core.events import AssistantMessage, Record, SessionEnded, UserMessage
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
