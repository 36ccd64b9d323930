"""The core → GUI bridge: a session's notices become Qt signals.

The core calls subscribers synchronously on the asyncio loop, which qasync runs on the Qt thread,
so the signals are emitted on the right thread. Slots connected here must stay cheap; anything slow
is deferred with a timer or run in the background (gui/tasks.py).
"""

from __future__ import annotations

import time

from core.events import AssistantMessage, Record, SessionEnded, ToolResult
from core.journal import (
    CallsWritten,
    CallWriting,
    Notice,
    StatusChanged,
    TextDelta,
    ToolOutput,
)
from core.session import Session
from gui.qt import QObject, Signal
from gui.widgets.tool_card import LIVE_KEEP_CHARS


class SessionBridge(QObject):
    record_added = Signal(object)  # core.events.Record
    text_streamed = Signal(str)  # a piece of the reply being written
    reasoning_streamed = Signal(str)  # a piece of a reasoning model's thinking before it
    activity_changed = Signal(str, str)  # activity (thinking, retrying, running_tool, …), its detail
    tool_output = Signal(str, str)  # a tool's call id, and what it printed ("" when it starts)

    def __init__(self, session: Session, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        # What a session shown later needs to look as it would had it been shown all along: what
        # it is doing now, the reply it is writing, and the end of what its running calls printed so far.
        self.activity, self.detail = "idle", ""
        self.output: dict[str, str] = {}  # by call id, while the call runs
        self.thinking, self.writing = "", ""  # the reply being streamed, until it is recorded
        self.call = CallsWritten()  # …and the call it writes
        self.since = time.monotonic()  # when it began what it does now
        self._unsubscribe = session.subscribe(self._on_notice)

    def _on_notice(self, notice: Notice) -> None:
        if isinstance(notice, Record):
            if isinstance(notice.event, ToolResult):
                self.output.pop(notice.event.call_id, None)
            elif isinstance(notice.event, (AssistantMessage, SessionEnded)):
                self.thinking, self.writing, self.call = "", "", CallsWritten()
            self.record_added.emit(notice)
        elif isinstance(notice, TextDelta) and notice.reasoning:
            self.thinking += notice.text
            self.reasoning_streamed.emit(notice.text)
        elif isinstance(notice, TextDelta):
            self.writing += notice.text
            self.text_streamed.emit(notice.text)
        elif isinstance(notice, CallWriting):
            self.call.add(notice)
        elif isinstance(notice, StatusChanged):
            if notice.activity == "retrying":  # the reply streams anew
                self.thinking, self.writing, self.call = "", "", CallsWritten()
            self.activity, self.detail = notice.activity, notice.detail
            self.since = time.monotonic()
            self.activity_changed.emit(notice.activity, notice.detail)
        elif isinstance(notice, ToolOutput):
            if notice.text:  # (as much as its card keeps)
                kept = self.output.get(notice.call_id, "") + notice.text
                self.output[notice.call_id] = kept[-LIVE_KEEP_CHARS:]
            self.tool_output.emit(notice.call_id, notice.text)

    def detach(self) -> None:
        self._unsubscribe()
