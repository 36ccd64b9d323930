"""A long session opens on its last part; earlier parts come on request, the view staying put."""

from __future__ import annotations

import pytest

from core.events import AssistantMessage, Record, ToolCall, ToolResult
from gui.qt import QApplication, QPoint
from gui.theme import apply_theme
from gui.widgets.chat import (
    CHUNK_RECORDS,
    FIRST_RECORDS,
    MAX_ITEMS,
    ChatView,
)
from gui.widgets.chat_items import MessageItem
from gui.widgets.tool_card import ToolCard


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
    assert step_numbers(chat)[-1] == 2_000 and len(chat.items()) <= CHUNK_RECORDS  # the end first
    assert all(card.status == "ok" for card in chat.items() if isinstance(card, ToolCard))
    qtbot.waitUntil(lambda: not chat.building())  # older records go in above, a chunk at a time

    shown = step_numbers(chat)
    assert shown[-1] == 2_000 and len(shown) == FIRST_RECORDS // 2  # the end, not hundreds of widgets
    assert chat.earlier.isVisible() and "Show earlier (3,700 events not shown)" == chat.earlier.text()
    assert all(isinstance(item, ToolCard) and item.status == "ok" for item in chat.items()[1::2])
    qtbot.waitUntil(lambda: chat.verticalScrollBar().value() == chat.verticalScrollBar().maximum())

    bar = chat.verticalScrollBar()
    settle(qtbot, chat)
    bar.setValue(0)  # the person scrolled up to the top, to the button
    first_seen = chat.items()[0]
    where = top(chat, first_seen) - bar.value()  # in the view
    qtbot.mouseClick(chat.earlier, qtbot_left())
    qtbot.waitUntil(lambda: not chat.building())
    assert len(step_numbers(chat)) == FIRST_RECORDS and step_numbers(chat)[-1] == 2_000
    assert step_numbers(chat) == list(range(2_001 - FIRST_RECORDS, 2_001))  # no gaps, in order
    # The step that was at the top is still where it was in the view; the earlier ones are above it.
    qtbot.waitUntil(lambda: abs(top(chat, first_seen) - bar.value() - where) < 5)
    assert top(chat, first_seen) > 10 * where

    for _ in range(3):  # up to MAX_ITEMS items; older ones are not built at all
        if chat.earlier.isEnabled():
            settle(qtbot, chat)
            bar.setValue(0)
            first_seen = next(item for item in chat.items() if isinstance(item, MessageItem))
            where = top(chat, first_seen) - bar.value()
            qtbot.mouseClick(chat.earlier, qtbot_left())
            qtbot.waitUntil(lambda: not chat.building())
            qtbot.waitUntil(lambda: abs(top(chat, first_seen) - bar.value() - where) < 5)  # even as the button goes off
    assert len(chat.items()) <= MAX_ITEMS
    assert not chat.earlier.isEnabled() and "in progress.md" in chat.earlier.text()
    assert chat.hasFocus()  # not handed on by the button as it went off, to an item the view would jump to


@pytest.fixture
def themed():
    """The window's style sheet, as every window has it; the one before is put back after."""
    app = QApplication.instance()
    before = app.styleSheet()
    apply_theme(app, "light")
    yield
    app.setStyleSheet(before)


@pytest.mark.parametrize("turns", [12, 2_000])
def test_the_conversation_ends_at_its_last_item_where_the_view_follows(qtbot, themed, turns):
    chat = shown_chat(qtbot, long_session(turns), width=600)
    last = chat.items()[-1]
    blank_below = chat.widget().height() - (top(chat, last) + last.height())
    assert blank_below <= 12  # the container's margin, not the wrapped text's guessed heights
    bar = chat.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert top(chat, last) + last.height() - bar.value() <= chat.viewport().height()  # the last item is in view


def test_items_keep_their_room_when_a_card_opens_or_the_width_changes(qtbot, themed):
    chat = shown_chat(qtbot, long_session(30))

    def overlapping() -> list[tuple[int, int]]:
        items = chat.items()
        spans = [(top(chat, item), top(chat, item) + item.height()) for item in items]
        return [(a, b) for a, b in zip(spans, spans[1:]) if a[1] > b[0]]

    card = next(item for item in chat.items() if isinstance(item, ToolCard))
    below = chat.items()[chat.items().index(card) + 1]
    before = top(chat, below)
    qtbot.mouseClick(card.header, qtbot_left())  # its arguments and result unfold
    qtbot.waitUntil(lambda: top(chat, below) >= before + card.details.height() > before)
    assert not overlapping() and card.details.isVisible()

    message = next(item for item in chat.items() if isinstance(item, MessageItem))
    one_line = message.height()
    message.set_text(" ".join(["a long line that wraps"] * 15))
    qtbot.waitUntil(lambda: message.height() > one_line and not overlapping())
    settle(qtbot, chat)
    wide = message.height()
    chat.resize(300, 500)  # the window made narrower: the text wraps on more lines
    qtbot.waitUntil(lambda: message.height() > wide and not overlapping())
    last = chat.items()[-1]
    qtbot.waitUntil(lambda: chat.widget().height() - (top(chat, last) + last.height()) <= 12)


def test_a_card_unfolded_above_the_end_leaves_the_view_where_the_person_put_it(qtbot, themed):
    chat = shown_chat(qtbot, long_session(30))
    bar = chat.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() > 0)  # it opened on its end, following

    bar.setValue(0)  # the person scrolls up to the start
    card = next(item for item in chat.items() if isinstance(item, ToolCard))
    height = chat.widget().height()
    qtbot.mouseClick(card.header, qtbot_left())
    qtbot.waitUntil(lambda: chat.widget().height() > height)  # it unfolded: the content grew
    settle(qtbot, chat)
    assert bar.value() == 0  # not pulled down to the end

    bar.setValue(bar.maximum())  # back at the end, the view follows again
    chat.add_record(Record("s", 999, "", AssistantMessage("One more step.", turn=31)))
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() and top(chat, chat.items()[-1]) <= bar.value() + 500)


def test_a_short_session_has_no_earlier_button(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show_records(long_session(10))
    assert not chat.earlier.isVisibleTo(chat)  # not even while the older half is on its way
    qtbot.waitUntil(lambda: not chat.building())
    assert not chat.earlier.isVisibleTo(chat) and step_numbers(chat) == list(range(1, 11))


def shown_chat(qtbot, records: list[Record], width: int = 700) -> ChatView:
    """A conversation on screen with `records` shown, its layout settled."""
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.resize(width, 500)
    chat.show()
    chat.show_records(records)
    qtbot.waitUntil(lambda: not chat.building())
    settle(qtbot, chat)
    return chat


def top(chat: ChatView, item) -> int:
    """Where the item starts in the conversation (items sit in pages of the conversation)."""
    return item.mapTo(chat.widget(), QPoint(0, 0)).y()


def settle(qtbot, chat: ChatView) -> None:
    """Wait for the layout to stop changing: word-wrapped items take a few passes to find their
    heights, and the person clicks long after they have."""
    heights: list[int] = []

    def still() -> bool:
        heights.append(chat.widget().height())
        return len(heights) > 3 and len(set(heights[-3:])) == 1

    qtbot.waitUntil(still)


def qtbot_left():
    from gui.qt import Qt

    return Qt.MouseButton.LeftButton


def test_a_narrower_view_wraps_what_is_shown_at_once_and_the_rest_soon(qtbot):
    from gui.widgets.wrapped_label import WrappedLabel

    chat = ChatView()
    qtbot.addWidget(chat)
    chat.resize(700, 500)
    with qtbot.waitExposed(chat):
        chat.show()
    words = "The parser reads each token and the buffer keeps the index of what it saw. " * 6
    chat.show_records([Record("s", i + 1, "", AssistantMessage(f"{words}{i}", (), turn=i)) for i in range(120)],
                      count=120)
    bar = chat.verticalScrollBar()

    def wrapped(label: WrappedLabel) -> bool:
        return label.height() == label.heightForWidth(label.width())

    labels = lambda: [label for label in chat.widget().findChildren(WrappedLabel) if label.isVisibleTo(chat)]  # noqa: E731
    qtbot.waitUntil(lambda: len(labels()) == 240, timeout=10_000)  # who and what, for each message
    qtbot.waitUntil(lambda: all(wrapped(label) for label in labels()) and bar.value() == bar.maximum(), timeout=10_000)

    chat.resize(420, 500)  # the window or a splitter made the conversation narrower
    # What is on screen wraps first, the pages off screen one per turn of the event loop; all of
    # them end wrapped to the new width, nothing cut, and the view still follows the end.
    qtbot.waitUntil(lambda: all(wrapped(label) for label in labels()), timeout=10_000)
    qtbot.waitUntil(lambda: bar.value() == bar.maximum(), timeout=10_000)


def test_latest_takes_a_person_reading_further_up_back_to_the_end_and_follows_it(qtbot, themed):
    from gui.qt import Qt

    chat = shown_chat(qtbot, long_session(40), width=600)
    bar = chat.verticalScrollBar()
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())
    assert not chat.latest.isVisible()  # at the end: nothing to go back to

    chat.setFocus()
    qtbot.keyClick(chat, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)  # up to the start to read
    assert bar.value() == 0 and chat.latest.isVisible()
    corner = chat.latest.geometry()
    assert chat.viewport().geometry().contains(corner)  # over the view, in its lower right corner
    assert corner.bottom() > chat.viewport().geometry().center().y() and corner.right() > chat.width() // 2
    chat.add_record(Record("s", 999, "", AssistantMessage("Step 41: one more.", turn=41)))
    assert bar.value() == 0  # what the person reads stays in view as the conversation grows
    assert chat.latest.text() == "Latest (1 new)"

    qtbot.mouseClick(chat.latest, qtbot_left())
    qtbot.waitUntil(lambda: bar.value() == bar.maximum() and not chat.latest.isVisible())
    qtbot.keyClick(chat, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    assert chat.latest.text() == "Latest"  # what came was seen
    qtbot.keyClick(chat, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    chat.add_record(Record("s", 1000, "", AssistantMessage("Step 42: and another.", turn=42)))
    qtbot.waitUntil(lambda: bar.value() == bar.maximum())  # followed again
    qtbot.keyClick(chat, Qt.Key.Key_Home, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(chat, Qt.Key.Key_End, Qt.KeyboardModifier.ControlModifier)
    assert bar.value() == bar.maximum() and not chat.latest.isVisible()


def test_a_command_card_rebuilt_from_the_log_says_what_the_command_changed(qtbot):
    from core.events import CommandChangedFiles

    chat = ChatView()
    qtbot.addWidget(chat)
    command = ToolCall("c1", "shell_run", '{"command": "ruff format ."}')
    records = [Record("s", 1, "", AssistantMessage("Formatting.", (command,), turn=1)),
               Record("s", 2, "", ToolResult("c1", "shell_run", True, "2 files reformatted")),
               Record("s", 3, "", CommandChangedFiles(call_id="c1", changed=("a.py", "b.py")))]
    chat.show_records(records)
    qtbot.waitUntil(lambda: not chat.building())
    [card] = [item for item in chat.items() if isinstance(item, ToolCard)]
    assert card.header.text().endswith("· changed 2 files") and "a.py, b.py" in card.details.text()
