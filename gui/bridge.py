"""The core → GUI bridge: a session's notices become Qt signals.

The core calls subscribers synchronously on the asyncio loop, which qasync runs on the Qt thread,
so the signals are emitted on the right thread. Slots connected here must stay cheap; anything slow
is deferred with a timer or run in the background (gui/tasks.py).
"""

from __future__ import annotations

from core.events import Record
from core.journal import Notice, StatusChanged, TextDelta, ToolOutput
from core.session import Session
from gui.qt import QObject, Signal


class SessionBridge(QObject):
    record_added = Signal(object)  # core.events.Record
    text_streamed = Signal(str)  # a piece of the reply being written
    reasoning_streamed = Signal(str)  # a piece of a reasoning model's thinking before it
    activity_changed = Signal(str, str)  # activity (thinking, retrying, running_tool, …), its detail
    tool_output = Signal(str, str)  # a tool's call id, and what it printed ("" when it starts)

    def __init__(self, session: Session, parent: QObject | None = None):
        super().__init__(parent)
        self.session = session
        self._unsubscribe = session.subscribe(self._on_notice)

    def _on_notice(self, notice: Notice) -> None:
        if isinstance(notice, Record):
            self.record_added.emit(notice)
        elif isinstance(notice, TextDelta):
            (self.reasoning_streamed if notice.reasoning else self.text_streamed).emit(notice.text)
        elif isinstance(notice, StatusChanged):
            self.activity_changed.emit(notice.activity, notice.detail)
        elif isinstance(notice, ToolOutput):
            self.tool_output.emit(notice.call_id, notice.text)

    def detach(self) -> None:
        self._unsubscribe()
