"""Each message's header says when it was written."""

from __future__ import annotations

from datetime import date, datetime, timezone

from core.events import AssistantMessage, Record, UserMessage
from gui.widgets.chat import ChatView
from gui.widgets.chat_items import MessageItem, stamp


def test_the_time_and_for_an_earlier_day_the_day_too():
    moment = datetime(2026, 11, 26, 9, 5, tzinfo=timezone.utc)
    local = moment.astimezone()
    assert stamp(moment.isoformat(), today=local.date()) == f"{local:%H:%M}"
    assert stamp(moment.isoformat(), today=date(2026, 12, 1)) == f"{local:%Y-%m-%d %H:%M}"
    assert stamp("") == "" and stamp("not a time") == ""


def test_each_message_header_says_its_time(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    written = "2026-11-26T09:05:00.000+00:00"
    chat.show_records([Record("s", 1, written, UserMessage("Go")),
                       Record("s", 2, "", AssistantMessage("On it."))])  # a record without a stamp says none
    qtbot.waitUntil(lambda: not chat.building())
    you, agent = [item for item in chat.items() if isinstance(item, MessageItem)]
    assert you.when == stamp(written) != "" and agent.when == ""
    before = stamp(datetime.now(timezone.utc).isoformat())
    chat.stream("Streaming now")  # a reply as it comes: the time it began
    assert chat.items()[-1].when in (before, stamp(datetime.now(timezone.utc).isoformat()))
