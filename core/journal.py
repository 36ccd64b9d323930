"""Records events: store them, fold them into the session's state and history, tell subscribers.

This is the one path by which anything happens to a session, so the live view, the database and a
replay after a crash can never disagree.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from core.agent.state import SessionState
from core.context.history import History
from core.events import Event, Record, framed_as
from core.store import Store

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TextDelta:
    """A piece of a streaming reply. Shown live, never stored: the full reply is an event."""

    session_id: str
    text: str
    reasoning: bool = False  # a piece of the model's thinking, not of its answer


@dataclass(frozen=True)
class CallWriting:
    """A piece of a tool call's arguments, as the model writes them (a long file_write's content
    takes a slow model minutes). Only its size is told; the call is an event once whole."""

    session_id: str
    name: str
    chars: int


@dataclass
class CallsWritten:
    """The tool call a streaming reply is writing, and how much of its arguments has come."""

    name: str = ""
    chars: int = 0

    def add(self, piece: CallWriting) -> None:
        if piece.name != self.name:
            self.name, self.chars = piece.name, 0
        self.chars += piece.chars


@dataclass(frozen=True)
class StatusChanged:
    """Something a view shows changed without a stored event (e.g. a model call started)."""

    session_id: str
    activity: str  # thinking | retrying | running_tool | compacting | idle
    # What a person should know about it (retrying: why, and when; running_tool: which; thinking
    # after a retry made at once: why it was made)
    detail: str = ""


@dataclass(frozen=True)
class ToolOutput:
    """A tool started (text empty) or printed more while it runs: a command's output, shown live
    so a person can watch a long test run. Never stored: the tool's result is the event."""

    session_id: str
    call_id: str
    text: str = ""


Notice = Record | TextDelta | CallWriting | StatusChanged | ToolOutput
Subscriber = Callable[[Notice], Any]


class Journal:
    def __init__(self, store: Store, session_id: str, info_tools: frozenset[str]):
        self.store = store
        self.session_id = session_id
        self.state = SessionState(session_id, info_tools=info_tools)
        self.history = History()
        self.records: list[Record] = []
        self._subscribers: list[Subscriber] = []

    def replay(self) -> None:
        """Fold what the log holds after the records already folded (all of it, the first time)."""
        after = self.records[-1].seq if self.records else 0
        self.fold(self.store.iter_records(self.session_id, after_seq=after))

    def fold(self, records: Iterable[Record]) -> None:
        """Take in records read beforehand (Store.read_records on a worker thread) without telling
        anyone: the session is being opened, nobody subscribes yet."""
        records = list(records)
        if not self.records:  # a session begun from another's point frames what it took over as that one did
            self.history.framed_as = framed_as(records)
        for record in records:
            self._fold(record)

    def catch_up(self) -> list[Record]:
        """Fold and announce what another process recorded since this journal last looked (the
        session was run by `tripane resume` while the window showed it)."""
        after = self.records[-1].seq if self.records else 0
        news = list(self.store.iter_records(self.session_id, after_seq=after))
        for record in news:
            self._fold(record)
            self.notify(record)
        return news

    def record(self, event: Event) -> Record:
        before = self._listed()
        record = self.store.append(self.session_id, event)
        self._fold(record)
        changed = {name: value for name, value in self._listed().items() if value != before[name]}
        if changed:
            self.store.update_session(self.session_id, **changed)
        self.notify(record)
        return record

    def _listed(self) -> dict[str, str]:
        """What the session's row keeps of its state: the session list (and `tripane list`) shows
        these, and searches the work folder, without replaying the log."""
        state = self.state
        return {"status": state.status, "model": state.model,
                "workdir": str(state.workdir) if state.config is not None else ""}

    def _fold(self, record: Record) -> None:
        self.records.append(record)
        self.state.apply(record)
        self.history.apply(record)

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber) if subscriber in self._subscribers else None

    def notify(self, notice: Notice) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(notice)
            except Exception:  # a broken view must not stop the agent
                log.exception("event subscriber failed")
