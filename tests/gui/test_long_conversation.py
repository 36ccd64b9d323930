"""A long session opens on its last part; earlier parts come on request, the view staying put."""

from __future__ import annotations

from core.events import AssistantMessage, Record, ToolCall, ToolResult
from gui.widgets.chat import FIRST_RECORDS, MAX_ITEMS, ChatView, MessageItem, ToolCard


def long_session(turns: int) -> list[Record]:
    records, seq = [], 0
    for turn in range(1, turns + 1):
        for event in (AssistantMessage(f"Step {turn}: reading the next module.",
                                       (ToolCall(f"c{turn}", "file_read", '{"path": "a.py"}'),), turn=turn),
                      ToolResult(f"c{turn}", "file_read", True, f"def f{turn}(): return {turn}\n" * 5)):
            seq += 1
            records.append(Record("s", seq, "", event))
    return records


def step_numbers(chat: ChatView) -> list[int]:
    return [int(item.text.split()[1].rstrip(":")) for item in chat.items() if isinstance(item, MessageItem)]


def test_a_long_session_shows_its_end_then_earlier_parts_on_request(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.resize(600, 500)
    chat.show()
    records = long_session(2_000)  # 4,000 records
    chat.show_records(records)

    shown = step_numbers(chat)
    assert shown[-1] == 2_000 and len(shown) == FIRST_RECORDS // 2  # the end, not hundreds of widgets
    assert chat.earlier.isVisible() and "Show earlier (3,700 events not shown)" == chat.earlier.text()
    assert all(isinstance(item, ToolCard) and item.status == "ok" for item in chat.items()[1::2])
    qtbot.waitUntil(lambda: chat.verticalScrollBar().value() == chat.verticalScrollBar().maximum())

    chat.verticalScrollBar().setValue(0)  # the person scrolled up to the top, to the button
    first_seen = chat.items()[0]
    qtbot.mouseClick(chat.earlier, qtbot_left())
    assert len(step_numbers(chat)) == FIRST_RECORDS and step_numbers(chat)[-1] == 2_000
    # The step that was at the top is still at the top of the view; the earlier ones are above it.
    at_top = next(item for item in chat.items() if isinstance(item, MessageItem) and item.text == first_seen.text)
    qtbot.waitUntil(lambda: abs(at_top.y() - chat.verticalScrollBar().value()) < 30)

    for _ in range(3):  # up to MAX_ITEMS items; older ones are not built at all
        if chat.earlier.isEnabled():
            qtbot.mouseClick(chat.earlier, qtbot_left())
    assert len(chat.items()) <= MAX_ITEMS
    assert not chat.earlier.isEnabled() and "in progress.md" in chat.earlier.text()


def test_a_short_session_has_no_earlier_button(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show_records(long_session(10))
    assert not chat.earlier.isVisibleTo(chat) and step_numbers(chat) == list(range(1, 11))


def qtbot_left():
    from gui.qt import Qt

    return Qt.MouseButton.LeftButton
