"""Find in the conversation (Ctrl+F with the focus in it or in the message box): an error message,
a command, a file name, wherever the agent or the person wrote it.

Matches are searched in what each item shows: a message's text, a tool card's arguments and result
(as much of it as the card shows), a notice; a folded card or thinking is unfolded to show its
match. A session opens on its last records only: a search that finds nothing further up, where
older records hold the text, has them put in first and goes on there.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html import unescape

from core.events import SAID_FIELDS, AssistantMessage, Record, ToolResult
from core.search_marks import search_folded, search_pattern
from gui.qt import QLabel, QPoint, QTextDocument, QTimer, QWidget, qt_alive
from gui.widgets.chat import ChatView
from gui.widgets.chat_items import MessageItem
from gui.widgets.tool_card import ToolCard

TOO_FAR_BACK = ("Found only in events older than the conversation can show: the Progress pane's find looks "
               "for it there, and `tripane show` lists every event.")
LOADING_POLL_MS = 20  # while older records go in (a chunk per turn of the event loop)


@dataclass
class Spot:
    """A label that may hold a match, and how to show it when it is folded away."""

    label: QLabel
    unfold: Callable[[], None] | None = None
    folded_text: str | None = None  # the thinking, rendered only once unfolded: its own text meanwhile

    def text(self) -> str:
        """What the label shows (or will), as QLabel.setSelection counts positions."""
        return self.folded_text if self.folded_text is not None else shown_text(self.label)

    def may_hold(self, needle: str) -> bool:
        """False when the label surely does not show `needle` (folded for a search, spaces single):
        read from its HTML, far quicker than laying it out as a document, which only the labels
        that may hold a match need."""
        if self.folded_text is not None:
            return needle in " ".join(search_folded(self.folded_text).split())
        return needle in rough_text(self.label)


def per_text(label: QLabel, name: str, make: Callable[[str], str]) -> str:
    """`make` of the label's HTML, kept on the label under `name` until its text changes: a search
    goes over every label at each key typed."""
    html = label.text()
    cached = getattr(label, name, None)
    if cached is None or cached[0] != html:
        cached = (html, make(html))
        setattr(label, name, cached)
    return cached[1]


def plain_text(html: str) -> str:
    document = QTextDocument()
    document.setHtml(html)
    return document.toPlainText()


def shown_text(label: QLabel) -> str:
    """A rich-text label's text as the positions of QLabel.setSelection count it."""
    return per_text(label, "_shown_text", plain_text)


TAG = re.compile(r"<[^>]*>")


def rough_text(label: QLabel) -> str:
    """A label's text near enough to rule a needle out: its HTML without tags, entities read, folded
    for a search (core/search_marks.py), every run of white space one space (as `needle` is). Text
    the label shows is in it, with at most some spaces fewer (where blocks meet), so it misses no
    match."""
    return per_text(label, "_rough_text", lambda html: " ".join(search_folded(unescape(TAG.sub("", html))).split()))


def spots(chat: ChatView) -> Iterator[Spot]:
    for item in chat.items():
        if isinstance(item, MessageItem):
            header, body = item.reasoning_header, item.reasoning_body
            if header is not None and body is not None and item.reasoning:
                yield Spot(body, None if header.isChecked() else (lambda h=header: h.setChecked(True)),
                           None if body.isVisible() else item.reasoning)
            for label in (*item.settled, item.body):
                yield Spot(label)
        elif isinstance(item, ToolCard):
            yield Spot(item.details, None if item.header.isChecked() else (lambda h=item.header: h.setChecked(True)))
        elif isinstance(item, QLabel):  # a notice
            yield Spot(item)


# The events' fields the conversation shows: what they say, the task atop it, each call's arguments.
SHOWN_FIELDS = ("task", *SAID_FIELDS, "arguments")


def event_text(event: object) -> str:
    """What an event's items show, roughly, folded for a search (in any case, whatever its marks):
    not its ids, model names or other fields a search for them would find in every record."""
    def values(value: object) -> Iterator[str]:
        for field in dataclasses.fields(value):
            inner = getattr(value, field.name)
            if field.name in SHOWN_FIELDS and isinstance(inner, str):
                yield inner
            elif field.name == "tool_calls":
                for call in inner:
                    yield from values(call)
    return search_folded("\n".join(values(event)))


def shown_by(records: list[Record], index: int) -> int:
    """The record whose item shows the record at `index`: a tool's result is in the card built
    for the message that made the call."""
    event = records[index].event
    if isinstance(event, ToolResult):
        for earlier in range(index - 1, -1, -1):
            message = records[earlier].event
            if isinstance(message, AssistantMessage) and any(call.id == event.call_id for call in message.tool_calls):
                return earlier
    return index


class ConversationFinder:
    """The conversation's side of its find bar (gui/widgets/find_bar.FindBar)."""

    def __init__(self, chat: ChatView):
        self.chat = chat
        # The bar's show_found: what a search that had older records put in found, once they are.
        self.report: Callable[[bool | None, str], None] = lambda found, why="": None
        # Told the text found only in records older than the view keeps (the window looks for it in
        # the Progress pane, which has every step).
        self.too_far_back: Callable[[str], None] = lambda text: None
        self._at: tuple[QLabel, int] | None = None  # the label and position of the match selected
        self._pending = 0  # a search waiting for older records to go in: its number (a newer one cancels it)
        self._texts: dict[int, str] = {}  # the records' event_text, by number, for one session
        self._texts_of = ""  # that session

    def view(self) -> QWidget:
        return self.chat

    def find(self, text: str, backward: bool, from_match_start: bool, load_earlier: bool = True) -> bool | None:
        self._pending += 1
        if self.chat.building():  # a session just shown: its records go in a chunk at a time
            self._once_built(lambda: self.report(self.find(text, backward, from_match_start, load_earlier)))
            return None
        pattern = search_pattern(text)  # (in any case, whatever its marks: "قرب" finds "قرّب")
        needle = " ".join(search_folded(text).split())
        places = list(spots(self.chat))
        known: dict[int, list[int]] = {}

        def starts(number: int) -> list[int]:
            """Where the text is in the label `number` (laid out only if it may be there at all)."""
            if number not in known:
                spot = places[number]
                known[number] = [m.start() for m in pattern.finditer(spot.text())] if spot.may_hold(needle) else []
            return known[number]

        here = self._here(places)
        if here is None:  # the first search: from the top of what is in view, down
            top = self.chat.verticalScrollBar().value()
            here = (next((n for n, spot in enumerate(places) if self._top_of(spot.label) >= top), 0), -1)
            backward, from_match_start = False, True
        number, at = here
        count = len(places)
        if backward:
            same = [start for start in starts(number) if start < at] if number < count else []
            choice = (number, same[-1]) if same else next(
                ((n, found[-1]) for n in range(min(number, count) - 1, -1, -1) if (found := starts(n))), None)
        else:
            same = [start for start in starts(number) if start > at or (from_match_start and start == at)] \
                if number < count else []
            choice = (number, same[0]) if same else next(
                ((n, found[0]) for n in range(number + 1, count) if (found := starts(n))), None)
        if choice is None:
            around = range(count - 1, -1, -1) if backward else range(count)  # from the end (or the start)
            wrapped = next(((n, found[-1] if backward else found[0]) for n in around if (found := starts(n))), None)
            if load_earlier and (backward or wrapped is None) and self._put_in_earlier(text, backward, from_match_start):
                return None  # told once they are in (self.report)
            if wrapped is None:
                return False
            choice = wrapped  # around the end (or the start)
        number, start = choice
        self._select(places[number], start, starts(number).index(start), pattern)
        return True

    def match_line(self) -> str:
        if self._at is None or not qt_alive(self._at[0]):
            return ""
        label, start = self._at
        text = shown_text(label)
        return text[text.rfind("\n", 0, start) + 1:].split("\n", 1)[0]

    def _here(self, places: list[Spot]) -> tuple[int, int] | None:
        """The selected match's place in the conversation: its label's number among `places`, and
        its position in the label."""
        if self._at is not None and qt_alive(self._at[0]):
            label, start = self._at
            number = next((i for i, spot in enumerate(places) if spot.label is label), None)
            if number is not None:
                return number, start
        self._at = None
        return None

    def _top_of(self, label: QLabel) -> int:
        return label.mapTo(self.chat.widget(), QPoint(0, 0)).y()

    # --- showing a match ------------------------------------------------------------------------

    def _select(self, spot: Spot, start: int, ordinal: int, pattern: re.Pattern[str]) -> None:
        if self._at is not None and qt_alive(self._at[0]) and self._at[0] is not spot.label:
            self._at[0].setSelection(0, 0)
        if spot.unfold is not None:
            spot.unfold()
            # Now rendered: the match is found again, as the same occurrence, in what it shows.
            occurrences = list(pattern.finditer(shown_text(spot.label)))
            if occurrences:
                start = occurrences[min(ordinal, len(occurrences) - 1)].start()
        found = pattern.match(shown_text(spot.label), start)  # (as long as the text's own marks make it)
        spot.label.setSelection(start, found.end() - start if found else 0)
        self._at = (spot.label, start)
        # Unfolding moves what is below: the view is scrolled once the layout has settled.
        QTimer.singleShot(0, lambda label=spot.label, start=start: self._scroll_to(label, start))

    def _scroll_to(self, label: QLabel, start: int) -> None:
        if not qt_alive(label):
            return
        document = QTextDocument()
        document.setDefaultFont(label.font())
        document.setHtml(label.text())
        document.setTextWidth(max(1, label.contentsRect().width()))
        block = document.findBlock(start)
        line = block.layout().lineForTextPosition(start - block.position()) if block.isValid() else None
        y = document.documentLayout().blockBoundingRect(block).top() if block.isValid() else 0
        if line is not None and line.isValid():
            y += line.y()
        where = label.mapTo(self.chat.widget(), QPoint(0, int(y)))
        self.chat.bring_into_view(where.y(), self.chat.viewport().height() // 3)

    # --- older records --------------------------------------------------------------------------

    def _put_in_earlier(self, text: str, backward: bool, from_match_start: bool) -> bool:
        """Have the nearest older record that holds `text` put in, and search again once it is.
        True: what that search finds is told through self.report."""
        needle, records = search_folded(text), self.chat.records()
        index = next((i for i in reversed(range(self.chat.unshown_count())) if needle in self._text_of(records[i])), None)
        if index is None:
            return False
        index = shown_by(records, index)
        pending = self._pending
        if not self.chat.show_from(index):  # the view holds as many items as it keeps
            QTimer.singleShot(0, lambda: pending == self._pending and self._beyond(text))
            return True

        def when_in() -> None:
            if not self.chat.shows(index):  # the view holds as many items as it keeps
                self._beyond(text)
            else:
                self.report(self.find(text, backward, from_match_start, load_earlier=False))
        self._once_built(when_in)
        return True

    def _beyond(self, text: str) -> None:
        self.report(False, TOO_FAR_BACK)
        self.too_far_back(text)

    def _once_built(self, then: Callable[[], None]) -> None:
        """`then`, once the records on their way are in, unless the person searched again meanwhile."""
        pending = self._pending

        def when_built() -> None:
            if pending != self._pending:  # the person typed on, or searched again
                return
            if self.chat.building():
                QTimer.singleShot(LOADING_POLL_MS, when_built)
            else:
                then()
        QTimer.singleShot(0, when_built)

    def _text_of(self, record: Record) -> str:
        if record.session_id != self._texts_of:
            self._texts, self._texts_of = {}, record.session_id
        text = self._texts.get(record.seq)
        if text is None:
            text = self._texts[record.seq] = event_text(record.event)
        return text
