"""The conversation: messages rendered as Markdown, tool calls as collapsible cards, notices inline.

Built from records, so a reopened session and a live one look the same. A streaming reply is
re-rendered at most every 80 ms, however fast the deltas come.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from core.agent.options import (
    UNANSWERED,
    option_label,
    reason_label,
    typed_answer,
    unanswered_note,
)
from core.agent.rules import failure_notice
from core.agent.running_calls import left_running_by_call
from core.changes import ChangeTally
from core.context.compaction import summary_failure
from core.events import (
    AssistantMessage,
    BackgroundKept,
    BackgroundStopped,
    CommandChangedFiles,
    Compaction,
    Danger,
    ErrorDiagnosed,
    ErrorRecorded,
    Event,
    FileChanged,
    FilesChangedOutside,
    FilesPutBack,
    HumanAnswer,
    HumanQuestion,
    MemoryRecalled,
    ModelChanged,
    PinsChanged,
    Record,
    ReflectionWritten,
    ResearchStep,
    ServerToolsListed,
    SessionBranched,
    SessionEnded,
    SessionPaused,
    SessionResumed,
    SessionStarted,
    ToolResult,
    UserMessage,
    WindowLearned,
    WorkdirMoved,
    ended_word,
)
from core.memory.variants import LEARNED
from core.offload import shown_task
from core.reasoning import thinking_hidden
from core.render import (
    aside_note,
    background_kept_note,
    background_stopped_note,
    branched_note,
    changed_outside_note,
    compaction_sizes,
    describe_danger,
    describe_edit,
    diagnosis_note,
    flush_note,
    model_change_note,
    pins_note,
    put_back_note,
    recall_note,
    reflection_note,
    research_done_note,
    resumed_note,
    servers_note,
    workdir_note,
)
from core.text import capitalized
from gui.bidi import isolated
from gui.desktop_open import open_web_link
from gui.markdown import displayable, inline_html, linked
from gui.qt import (
    QEvent,
    QKeyEvent,
    QLabel,
    QLayout,
    QPushButton,
    QResizeEvent,
    QScrollArea,
    QSizePolicy,
    Qt,
    QTimer,
    QToolButton,
    QUrl,
    QVBoxLayout,
    QWidget,
    Signal,
    qt_alive,
)
from gui.widgets.chat_items import (
    MessageItem,
    escape_html,
    fit_width,
    now_stamp,
    rich_label,
    stamp,
    tab_parts,
    with_lines,
)
from gui.widgets.focus_ring import FocusRings
from gui.widgets.pictures import PicturesShown
from gui.widgets.tool_card import ToolCard
from gui.widgets.wrapped_label import WrappedLabel

HISTORY_LINK = "tripane-history:"
REFLECTION_LINK = "tripane-reflection:"
LEARNED_LINK = "tripane-learned:"  # View → What the agent learned (a variant that waits for the person)
CHANGES_LINK = "tripane-changes:"  # what the agent changed in the work folder
ASIDE_LINK = "tripane-asked:"  # then the id of a question the person asked a helper
MAX_ITEMS = 600  # older items are dropped from the view (they stay in the log and in progress.md)
# A session opens on its last records only (one item, message or tool card, per record or fewer);
# earlier ones come on request, twice as many each time, up to MAX_ITEMS.
FIRST_RECORDS = 300
# Items are built this many records at a time, the newest first, older ones put above them on the
# following turns of the event loop: building and laying out 300 records at once froze the window
# for 0.85 s under the style sheet. A chunk's cost is the stall (about 6 ms a record); the total is
# the same whatever the size.
CHUNK_RECORDS = 6
# Live items go into the last page until it holds this many: a page lays out all its items again
# when one of them changes (a streamed reply growing), so it stays small.
PAGE_ITEMS = 12
ITEM_SPACING = 6
# What the person can do after a run that did not finish its task: a message continues it.
AFTER_ENDING = {
    "error": "Once the cause is fixed (a missing or refused API key, or a model the provider does not know: "
             "Session → Change model, Ctrl+Shift+L, takes the key, another model or the server's new address; a "
             "local server: start it), "
             "Resume (Ctrl+R) tries the failed step again, or send a message: the agent continues from here.",
    "aborted": "Send a message to continue from here.",
}




class _Page(QWidget):
    """A run of consecutive items that sets its own height from its width.

    Left to the column's layout, a height that depends on the width is worked out in two passes
    (sizes first, then heights for the width), and every item of every page was moved and resized
    twice whenever anything changed in the column: 70 ms for each chunk of older items put in above
    300 items. With a fixed height per page, the column only moves pages; a page lays out its own
    items again when they change or the width does, and takes the height they then need."""

    def __init__(self, rewrap_later: Callable[[_Page], None]) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(ITEM_SPACING)
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setFixedHeight(1)
        self._rewrap_later = rewrap_later

    def rewrap(self) -> None:
        """Its text wrapped anew at the page's width; the page then fits the height it needs."""
        layout = self.layout()
        if not layout.isEnabled():  # set aside off screen: its items take the page's width now
            layout.setEnabled(True)
            layout.invalidate()
            layout.activate()
        for label in self.findChildren(WrappedLabel):
            label.rewrap()

    def set_aside(self) -> None:
        """Leave its items as they are until rewrap(): the page is off screen and about to get a
        new width."""
        self.layout().setEnabled(False)
        self._rewrap_later(self)

    def _fit(self) -> None:
        layout = self.layout()
        height = (layout.totalHeightForWidth(self.width()) if layout.hasHeightForWidth()
                  else layout.totalSizeHint().height())
        if max(1, height) != self.height():
            self.setFixedHeight(max(1, height))

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt's name)
        return False  # its fixed height is what the column needs to know

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        # An item came, went, or changed its size (a card unfolded, text streamed in, its text
        # wrapped anew): the page's layout asks to be done again.
        if event.type() == QEvent.Type.LayoutRequest:
            self._fit()
        elif (event.type() == QEvent.Type.Resize and event.oldSize().width() > 0
              and event.size().width() != event.oldSize().width() and self.layout().isEnabled()):
            self.rewrap()  # a new width on screen: the text wraps anew at once (off screen: set_aside)
        return handled


class ChatView(QScrollArea):
    tool_stop_requested = Signal(str)  # a call's id: the person stops that command alone
    left_stopped = Signal(str)  # a call's id: the person stopped what its command left running
    history_requested = Signal(str, int)  # a file's history, at a version (an edit's notice links it)
    reflection_requested = Signal(str)  # a kept reflection, by its path in memory/ (its notice links it)
    learned_requested = Signal()  # what the agent learned (a reflection's notice links it when a variant waits)
    changes_requested = Signal()  # the ending notice's link: what the agent changed in the work folder
    # Before an event of the session, by its seq: one of the agent's steps, or one of the person's
    # messages (a new session from there, core/branch.py).
    go_back_requested = Signal(int)
    aside_requested = Signal(str)  # a helper's answer to the person, by the question's id (its notice links it)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("chat")
        self.setAccessibleName("Conversation")
        self.folder: Path | None = None  # the shown session's
        self.workdir: Callable[[], Path | None] = lambda: None  # its work folder, as it is now
        # The pictures (paths) the session's model was refused, and whether it was refused every one
        # (then shown none): marked under each (Session.pictures_refused).
        self._refused: tuple[frozenset[str], bool] = (frozenset(), False)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        container = QWidget()
        outer = QVBoxLayout(container)
        outer.setContentsMargins(6, 6, 6, 6)
        outer.setSpacing(6)
        self.earlier = QPushButton("")
        self.earlier.setObjectName("earlier")
        self.earlier.setVisible(False)
        self.earlier.clicked.connect(self.show_earlier)
        outer.addWidget(self.earlier, 0, Qt.AlignmentFlag.AlignHCenter)
        # Pages of items (see _Page), then a stretch that keeps them at the top.
        self._layout = QVBoxLayout()
        self._layout.setSpacing(ITEM_SPACING)
        self._layout.addStretch(1)
        outer.addLayout(self._layout, 1)
        self.setWidget(container)
        self._records: list[Record] = []
        self._shown_from = 0  # the first record built
        self._wanted_from = 0  # the first record to build: older chunks are built up to it
        self._results: dict[str, ToolResult] = {}  # by call id: a card built after its result's record
        self._command_changes: dict[str, CommandChangedFiles] = {}  # by call id, as _results
        self._repeated: set[str] = set()  # call ids of failures that happened before (_tally)
        self._last_failed = ""
        self._approvals: dict[str, str] = {}  # approval questions not answered yet: qid → call id
        # The questions, by qid: what an "always" allowed, the fallback an unanswered one went on with.
        self._questions: dict[str, HumanQuestion] = {}
        self._asked: dict[str, str] = {}  # what the person asked a helper, by the question's id
        self._running: dict[str, float] = {}  # calls seen starting: id → when (time.monotonic)
        # By record index: what a SessionEnded notice tells, and whether the file tools changed files.
        self._ended_changes: dict[int, tuple[str, bool]] = {}
        # A session ended by a reply without a call has that reply as its summary: its notice
        # points to the answer above rather than repeat it, flattened (by the SessionEnded's seq).
        self._ends_on_answer: set[int] = set()
        self._last_answer = ""
        self._build_more = QTimer(self, singleShot=True, interval=0)
        self._build_more.timeout.connect(self._build_older)
        self._keep_from_bottom: int | None = None  # while older items go in above: the view stays put
        self._keeping = QTimer(self, singleShot=True, interval=1000)
        self._keeping.timeout.connect(self._stop_keeping)
        self._to_rewrap: dict[_Page, None] = {}  # pages off screen given a new width, text not wrapped anew yet
        self._rewrap_timer = QTimer(self, singleShot=True, interval=0)
        self._rewrap_timer.timeout.connect(self._rewrap_next)
        self.cards: dict[str, ToolCard] = {}
        self.changes = ChangeTally()  # what the file tools changed, told when the session ends
        self._live: MessageItem | None = None
        self._live_text = ""
        self._live_reasoning = ""
        self._render_timer = QTimer(self, singleShot=True, interval=80)
        self._render_held = False  # a render of the reply being streamed waits for the window to be shown
        self._render_timer.timeout.connect(self._render_live)
        self._clock = QTimer(self, interval=1000)  # the running tool's card counts the seconds
        self._clock.timeout.connect(self._tick_running)
        self.verticalScrollBar().rangeChanged.connect(self._on_range_changed)
        # Whether the view keeps to the end as the conversation grows: as the person left it. Set
        # on every scroll, not only when an item is added: a card unfolded after scrolling up
        # through an ended session must not pull the view back down to the end.
        self.verticalScrollBar().valueChanged.connect(self._on_scrolled)
        self._follow = True
        # Over the view's lower right corner while the person reads further up: back to the end.
        self.latest = QToolButton(self)
        self.latest.setObjectName("to_latest")
        self.latest.setText("Latest")
        self.latest.setArrowType(Qt.ArrowType.DownArrow)
        self.latest.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.latest.setToolTip("Back to the end of the conversation, following it as it grows (Ctrl+End)")
        self.latest.setCursor(Qt.CursorShape.PointingHandCursor)
        self.latest.setVisible(False)
        self.latest.clicked.connect(self.to_latest)
        self._unseen = 0  # items added below while the person read further up
        self.rings = FocusRings(self, self.item_holding)

    def item_holding(self, widget: QWidget) -> QWidget | None:
        """The conversation's item `widget` is, or is in; None: it is not in this conversation."""
        if not self.isAncestorOf(widget):  # (another window's)
            return None
        while widget is not None:
            parent = widget.parentWidget()
            if isinstance(parent, _Page):
                return widget
            widget = parent
        return None

    # --- building -------------------------------------------------------------------------------

    def clear(self) -> None:
        self._build_more.stop()
        self._clock.stop()
        self._rewrap_timer.stop()
        self._to_rewrap.clear()
        self._records, self._shown_from, self._wanted_from = [], 0, 0
        self._results, self._ended_changes, self._command_changes = {}, {}, {}
        self._repeated, self._last_failed = set(), ""
        self._ends_on_answer, self._last_answer = set(), ""
        self._kept: set[str] = set()  # calls whose command left what runs on for the person
        # What commands left running after their run, by call (see show_left_running); None: not
        # looked at since the conversation was shown (it runs: its end looks).
        self._left: dict[str, int] | None = None
        self._kept_notices: list[tuple[QLabel, BackgroundKept]] = []  # each with what it says runs on
        self._approvals, self._questions, self._asked = {}, {}, {}
        self._running = {}
        self._refused = (frozenset(), False)
        self.earlier.setVisible(False)
        while self._layout.count() > 1:
            self._layout.takeAt(0).widget().deleteLater()
        self.cards.clear()
        self.changes = ChangeTally()
        self._live = None
        self._live_text = ""
        self._live_reasoning = ""
        self._render_held = False
        self._unseen = 0

    def show_placeholder(self, html: str) -> None:
        """What the conversation area says while no session is shown."""
        self.clear()
        label = rich_label(html, "placeholder")
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._add(label)

    def rerender(self) -> None:
        """Render the messages again (after a text size change: their headings' sizes are in
        the HTML)."""
        for item in self.items():
            if isinstance(item, MessageItem):
                item.set_text(item.text)

    def items(self) -> list[QWidget]:
        return [layout.itemAt(i).widget() for layout in self._pages() for i in range(layout.count())]

    def _pages(self) -> list[QVBoxLayout]:
        return [self._layout.itemAt(i).widget().layout() for i in range(self._layout.count() - 1)]

    def _new_page(self, position: int) -> QVBoxLayout:
        page = _Page(self._rewrap_later)
        self._layout.insertWidget(position, page)
        return page.layout()

    def _add(self, widget: QWidget, into: QVBoxLayout | None = None) -> None:
        """Put an item in: at the end of the conversation (live), or at the end of `into`, a page
        of older items being built."""
        fit_width(widget)
        if isinstance(widget, WrappedLabel):
            widget.speak_plainly()
        if into is not None:
            into.addWidget(widget)
            return
        self._keep_from_bottom = None
        self._follow = self._at_bottom()
        if not self._follow:  # the person reads further up: Latest counts what came meanwhile
            self._unseen += 1
            self._show_latest()
        pages = self._pages()
        last = pages[-1] if pages and pages[-1].count() < PAGE_ITEMS else self._new_page(len(pages))
        last.addWidget(widget)
        self._chain([widget])
        self._drop_oldest(len(self.items()) - MAX_ITEMS)

    def _chain(self, items: list[QWidget]) -> None:
        """Put the parts of `items` that Tab reaches in the window's Tab order where the items are
        shown: after those of the items above, so before the message box. Qt adds a widget at the
        end of its window's order: Tab reached the conversation after the three panes, and
        Shift+Tab from the message box went past it, where a screen reader's user looks for the
        reply just come."""
        shown = self.items()
        before = shown[:shown.index(items[0])] if items[0] in shown else shown
        anchor = next((parts[-1] for item in reversed(before) if (parts := tab_parts(item))), self.earlier)
        for item in items:
            for part in tab_parts(item):
                QWidget.setTabOrder(anchor, part)
                anchor = part

    def _drop_oldest(self, count: int) -> None:
        for _ in range(max(0, count)):
            first = self._pages()[0]
            old = first.takeAt(0).widget()
            if isinstance(old, ToolCard):
                self.cards.pop(old.call.id, None)
            old.deleteLater()
            if first.count() == 0:
                self._layout.takeAt(0).widget().deleteLater()

    def _history_link(self, href: str) -> None:
        name, _, version = href.removeprefix(HISTORY_LINK).rpartition(":")
        if version.isdigit():
            self.history_requested.emit(name, int(version))

    def _reflection_link(self, href: str) -> None:
        if href.startswith(LEARNED_LINK):
            self.learned_requested.emit()
        else:
            self.reflection_requested.emit(href.removeprefix(REFLECTION_LINK))

    def _aside_link(self, href: str) -> None:
        self.aside_requested.emit(href.removeprefix(ASIDE_LINK))

    def _aside_notice(self, event: ResearchStep, into: QVBoxLayout | None) -> None:
        """A question the person asked a helper has its answer: a link opens it."""
        said = escape_html(aside_note(event, self._asked.get(event.call_id, "")))
        label = rich_label(displayable(f"⌕ {said} — "
                                       f'<a href="{ASIDE_LINK}{escape_html(event.call_id)}">read the answer</a>'),
                           "notice")
        label.setOpenExternalLinks(False)
        label.linkActivated.connect(self._aside_link)
        self._add(label, into)

    def _notice(self, text: str, kind: str = "notice", into: QVBoxLayout | None = None) -> None:
        self._add(rich_label(displayable(text), kind), into)

    def show_records(self, records: list[Record], count: int = FIRST_RECORDS, folder: Path | None = None) -> None:
        """Show the last `count` records of `records` (the session's own list: it grows as the run
        goes on): the newest at once, older ones a chunk at a time on the next turns of the loop.
        `folder`: the session's, where the outputs its cards link to are."""
        self.clear()
        self.folder = folder
        self._records = records
        for index, record in enumerate(records):  # the tally goes through them all, shown or not
            self._tally(record)
            if isinstance(record.event, SessionEnded):
                self._ended_changes[index] = (self.changes.summary(), bool(self.changes.changed))
        self._shown_from = len(records)
        self._wanted_from = max(0, len(records) - count)
        self._follow, self._keep_from_bottom = True, None
        self._build_older()

    def show_earlier(self) -> None:
        """Twice as many records, put in above the ones shown, the view staying on what it showed."""
        self._wanted_from = max(0, self._shown_from - (len(self._records) - self._shown_from))
        self._build_older()

    def records(self) -> list[Record]:
        return self._records

    def unshown_count(self) -> int:
        """How many of the first records are neither shown nor on their way."""
        return self._wanted_from

    def shows(self, index: int) -> bool:
        """Whether the record at `index` is put in (its items may have been dropped since, as the
        conversation grew past MAX_ITEMS)."""
        return index >= self._shown_from

    def show_from(self, index: int) -> bool:
        """Put in the records from `index` on, above those shown (a search found its text there);
        False when the view already holds all the items it keeps, or they are on their way."""
        if index >= self._wanted_from or len(self.items()) >= MAX_ITEMS:
            return False
        self._wanted_from = index
        self._build_older()
        return True

    def building(self) -> bool:
        """Older records are still being put in."""
        return self._build_more.isActive()

    def _build_older(self) -> None:
        if self._shown_from > self._wanted_from and len(self.items()) < MAX_ITEMS:
            start = max(self._wanted_from, self._shown_from - CHUNK_RECORDS)
            if self.items():  # what is in view stays in view while items go in above it
                bar = self.verticalScrollBar()
                self._keep_from_bottom = bar.maximum() - bar.value()
                self._keeping.start()
            page = self._new_page(0)
            for index in range(start, self._shown_from):
                self._build(self._records[index], page, index)
            if page.count() == 0:  # records that show nothing (file changes)
                self._layout.takeAt(0).widget().deleteLater()
            else:
                self._chain([page.itemAt(i).widget() for i in range(page.count())])
            self._shown_from = start
            if self._shown_from > self._wanted_from and len(self.items()) < MAX_ITEMS:
                self._build_more.start()
        full = len(self.items()) >= MAX_ITEMS
        hidden = self._shown_from if full else self._wanted_from  # not counting those on their way
        self.earlier.setVisible(hidden > 0)
        # Kept enabled while chunks go in, and its focus given to the view before it is disabled: a
        # disabled button passes its focus on to the next item, and the scroll area scrolls to it.
        if full and self.earlier.hasFocus():
            self.setFocus()
        self.earlier.setEnabled(not full)
        self.earlier.setText(f"{hidden:,} earlier events are in progress.md and the session's log" if full else
                             f"Show earlier ({hidden:,} events not shown)")

    def _stop_keeping(self) -> None:
        self._keep_from_bottom = None

    def event(self, event: QEvent) -> bool:
        # A new width is coming: the pages off screen are set aside before it reaches them. Qt
        # lays a word-wrapped label's text out again whenever its width changes, on screen or not
        # (200 ms at each step of a window drag over 300 messages), and a page's layout acts on
        # the page's resize before the page, or any filter, hears of it.
        if (event.type() == QEvent.Type.Resize and event.oldSize().width() > 0
                and event.size().width() != event.oldSize().width()):
            top = self.verticalScrollBar().value()
            bottom = top + self.viewport().height()
            for layout in self._pages():
                page = layout.parentWidget()
                if layout.isEnabled() and (page.y() + page.height() < top or page.y() > bottom):
                    page.set_aside()
        return super().event(event)

    def _rewrap_later(self, page: _Page) -> None:
        self._to_rewrap[page] = None
        self._rewrap_timer.start()

    def _rewrap_next(self) -> None:
        """One page off screen wraps its text anew per turn of the event loop (about 15 ms), so a
        window dragged wider over a long conversation does not freeze. The pages below the view go
        first: they move nothing on screen. Then those above, nearest first, with the view kept
        where it is as they grow or shrink."""
        pages = [page for page in self._to_rewrap if qt_alive(page)]  # a page may be gone (clear, drop)
        self._to_rewrap.clear()
        if not pages:
            return
        bar = self.verticalScrollBar()
        below = [page for page in pages if page.y() >= bar.value()]
        page = min(below, key=lambda p: p.y()) if below else max(pages, key=lambda p: p.y())
        pages.remove(page)
        self._to_rewrap = dict.fromkeys(pages)
        if not below and not self._follow:
            self._keep_from_bottom = bar.maximum() - bar.value()
            self._keeping.start()
        page.rewrap()
        if pages:
            self._rewrap_timer.start()

    def add_record(self, record: Record) -> None:
        """A record that just happened: its item goes at the end."""
        self._tally(record)
        self._build(record)

    def _tally(self, record: Record) -> None:
        """What the conversation keeps of each record, shown or not: a card may be in a chunk not
        built yet, and gets its result, the files its command changed, and whether its failure was
        one that happened before (folded: the first one shows it, the error line says which try)."""
        event = record.event
        self.changes.add(record)
        self._note_approval(event)
        if isinstance(event, ToolResult):
            self._results[event.call_id] = event
            if not event.ok:
                self._last_failed = event.call_id
        elif isinstance(event, CommandChangedFiles):
            self._command_changes[event.call_id] = event
        elif isinstance(event, ErrorRecorded) and event.counts and event.attempt > 1 and self._last_failed:
            self._repeated.add(self._last_failed)
        elif isinstance(event, AssistantMessage):
            self._last_answer = event.text.strip()
        elif isinstance(event, SessionEnded) and event.summary.strip() and event.summary.strip() == self._last_answer:
            self._ends_on_answer.add(record.seq)
        elif isinstance(event, BackgroundKept):
            self._kept.update(event.call_ids)

    def _persons(self, text: str, pictures: tuple[str, ...], record: Record) -> MessageItem:
        """A message of the person's (the task too), with the pictures they showed with it."""
        item = MessageItem("user", text, when=stamp(record.ts))
        if pictures and self.folder is not None:
            item.show_pictures([self.folder / picture for picture in pictures])
        return item

    def mark_refused_pictures(self, refused: frozenset[str], every: bool) -> None:
        """Mark the pictures the session's model was not shown: those its provider `refused`, or
        `every` one (it refused all it was shown)."""
        if (refused, every) == self._refused:
            return
        self._refused = (refused, every)
        self._mark_refused()

    def _mark_refused(self) -> None:
        refused, every = self._refused
        for shown in self.findChildren(PicturesShown):
            shown.mark_refused(lambda path: every or str(path) in refused)

    def _build(self, record: Record, into: QVBoxLayout | None = None, index: int = -1) -> None:
        """The record's items: at the end of the conversation (live), or of `into`, a page of
        records from the log (`index`: the record's place in it)."""
        self._build_items(record, into, index)
        if getattr(record.event, "pictures", ()) and any(self._refused):
            self._mark_refused()

    def _build_items(self, record: Record, into: QVBoxLayout | None = None, index: int = -1) -> None:
        event = record.event
        match event:
            case SessionStarted():  # what the person asked, at the top, as any message of theirs
                self._add(self._persons(shown_task(event.task), event.pictures, record), into)
            case UserMessage():
                item = self._persons(event.text, event.pictures, record)
                item.go_back = partial(self.go_back_requested.emit, record.seq)
                self._add(item, into)
            case AssistantMessage():
                hidden = thinking_hidden(event.reasoning, event.thinking_blocks)
                said: MessageItem | None = None
                if into is None:
                    said = self._finish_live(event.text, event.reasoning, hidden)
                elif event.text or event.reasoning or hidden:
                    said = MessageItem("assistant", event.text, event.reasoning, hidden, stamp(record.ts))
                    self._add(said, into)
                going_back = partial(self.go_back_requested.emit, record.seq)
                if said is not None:
                    said.go_back = going_back
                for call in event.tool_calls:
                    card = ToolCard(call, self.folder, self.workdir)
                    card.go_back = going_back
                    card.stop_requested.connect(self.tool_stop_requested)
                    card.left_stopped.connect(self.left_stopped)
                    card.left_ended.connect(self._say_kept_ended)
                    self.cards[call.id] = card
                    if into is not None and call.id in self._results:
                        card.set_result(self._results[call.id], repeated=call.id in self._repeated)
                        if call.id in self._command_changes:
                            card.set_changed_files(self._command_changes[call.id])
                    elif call.id in self._approvals.values():
                        card.await_approval(True)
                    elif call.id in self._running and call.id not in self._results:
                        self.tool_output(call.id, "")  # shown again while it runs
                    if self._left and call.id in self._left:
                        card.left_running(self._left[call.id], kept=call.id in self._kept)
                    self._add(card, into)
            case ToolResult():
                card = self.cards.get(event.call_id)
                if card is not None and into is None:
                    card.set_result(event)
                    self._chain([card])  # (the pictures it showed the agent)
            case CommandChangedFiles():
                card = self.cards.get(event.call_id)
                if card is not None and into is None:
                    card.set_changed_files(event)
            case ErrorRecorded():
                if into is None and (card := self.cards.get(self._last_failed)) is not None \
                        and self._last_failed in self._repeated:
                    card.fold_repeated()
                self._notice(f"⚠ Error, attempt {event.attempt}: "
                             f"{escape_html(failure_notice(event.tool, event.message))}", "error", into)
            case ErrorDiagnosed():
                self._notice(f"🩺 {escape_html(capitalized(diagnosis_note(event)))}",
                             "notice" if event.text else "error", into)
            case HumanQuestion():
                # The agent's own question in the Markdown it wrote (`average()` as code), as its
                # dialog shows it; Tripane's (an approval, 3-Strike's errors) as plain text.
                asked = inline_html(event.question) if event.reason == "ask_user" else escape_html(event.question)
                self._notice(f"<b>? Question for you</b> ({escape_html(reason_label(event.reason))}): {isolated(asked)}",
                             "question", into)
            case HumanAnswer() if event.choice in UNANSWERED:
                self._notice(escape_html(unanswered_note(self._questions.get(event.qid), event)),
                             "answer", into)
            case HumanAnswer():
                question = self._questions.get(event.qid)
                detail = f" — {isolated(with_lines(event.text))}" if event.text else ""
                # Typed (for a question with options too, beside them): a log pasted keeps its lines.
                if question is not None and typed_answer(question, event.choice):
                    said = f"<br>{isolated(with_lines(event.choice))}"
                else:  # a choice among the question's options
                    said = f"<b>{isolated(escape_html(option_label(event.choice, question)))}</b>"
                self._notice(f"↳ You answered {said}{detail}", "answer", into)
            case FileChanged() if event.tells_the_agent:
                said = escape_html(describe_edit(event))
                version = f"version {event.version}"  # a link to the file's history, at this version
                label = rich_label(displayable("✎ " + said.replace(
                    version, f'<a href="{HISTORY_LINK}{event.file}:{event.version}">{version}</a>', 1)), "notice")
                label.setOpenExternalLinks(False)
                label.linkActivated.connect(self._history_link)
                self._add(label, into)
            case PinsChanged():
                self._notice(f"📌 {escape_html(capitalized(pins_note(event)))}", into=into)
            case Danger():
                self._notice(f"⚠ {escape_html(describe_danger(event))}", "error", into)
            case MemoryRecalled() if event.text:
                self._notice(f"🧠 Long-term memory recalled for this task{escape_html(recall_note(event, ': '))} "
                             "(appended to the context)", into=into)
            case Compaction():
                self._notice(f"⇊ Context compacted ({compaction_sizes(event)}){escape_html(flush_note(event))}; "
                             "the summary is in compaction/summaries.jsonl",
                             "error" if summary_failure(event.summary) else "notice", into=into)
            case WindowLearned():
                self._notice(
                    f"⇲ The provider refused a request over the model's window: {event.window:,} tokens, "
                    f"not the {event.assumed:,} assumed. The context is budgeted for {event.window:,} "
                    "from now on; for new sessions with this model, set Context window in Settings "
                    "(Ctrl+,).", "error", into)
            case ModelChanged():
                self._notice(f"⇄ {escape_html(capitalized(model_change_note(event)))}, from the next request on", into=into)
            case ServerToolsListed():
                self._notice(f"🔌 {escape_html(capitalized(servers_note(event)))}", "error" if event.failed else "notice",
                             into)
            case WorkdirMoved():
                self._notice(f"↦ {escape_html(capitalized(workdir_note(event)))}", into=into)
            case FilesPutBack():
                self._notice(f"↶ {escape_html(capitalized(put_back_note(event)))}", into=into)
            case SessionBranched():
                self._notice(f"↶ {escape_html(capitalized(branched_note(event)))}. Tell the agent what to do "
                             "from here: it goes on once you send it.", into=into)
            case FilesChangedOutside():
                said = escape_html(capitalized(changed_outside_note(event)))
                label = rich_label(displayable(f"⟳ {said}"), "notice")
                if event.diff:  # what the agent was told changed: shown on pointing at the line
                    label.setToolTip(f"<pre>{escape_html(event.diff)}</pre>")
                self._add(label, into)
            case ReflectionWritten():
                said = escape_html(capitalized(reflection_note(event))).replace(
                    LEARNED, f'<a href="{LEARNED_LINK}">{LEARNED}</a>', 1)
                label = rich_label(displayable("✦ " + said.replace(
                    "Reflection", f'<a href="{REFLECTION_LINK}{escape_html(event.path)}">Reflection</a>', 1)),
                    "error" if event.error else "notice")
                label.setOpenExternalLinks(False)
                label.linkActivated.connect(self._reflection_link)
                self._add(label, into)
            case ResearchStep() if event.question:  # its first step: the person's question, aside
                self._asked[event.call_id] = event.question
                if event.final:
                    self._aside_notice(event, into)
            case ResearchStep() if event.final and event.for_person:
                self._aside_notice(event, into)
            case ResearchStep() if event.final:  # its reads are in the delegate call's card
                self._notice(f"⌕ {escape_html(capitalized(research_done_note(event)))}", into=into)

            case SessionPaused():
                self._notice("‖ Paused", into=into)
            case SessionResumed() if event.interrupted_at:
                self._notice(f"▶ {escape_html(capitalized(resumed_note(event)))}", into=into)
            case SessionResumed():
                self._notice("▶ Resumed", into=into)
            case BackgroundStopped():  # (a dev server the person may have been looking at)
                self._notice(f"⏹ {escape_html(capitalized(background_stopped_note(event)))}", into=into)
            case BackgroundKept():
                label = rich_label("", "notice")
                label.setOpenExternalLinks(False)
                label.linkActivated.connect(lambda _href, calls=event.call_ids: self._stop_left(calls))
                self._kept_notices.append((label, event))
                self._say_kept(label, event)
                self._add(label, into)
            case SessionEnded():
                changed, files = ((self.changes.summary(), bool(self.changes.changed)) if into is None
                                  else self._ended_changes.get(index, ("", False)))
                link = f' — <a href="{CHANGES_LINK}">see what, save it as a patch, or put files back</a>' if files else ""
                changed = f"<br>Changed in the work folder: {escape_html(changed)}{link}" if changed else ""
                after = f"<br><i>{AFTER_ENDING[event.status]}</i>" if event.status in AFTER_ENDING else ""
                summary = "the answer above" if record.seq in self._ends_on_answer else isolated(linked(event.summary))
                label = rich_label(displayable(f"■ <b>Ended: {ended_word(event.status)}</b> — {summary}"
                                               f"{changed}{after}"), "ended")
                label.setOpenExternalLinks(False)
                label.linkActivated.connect(self._ended_link)
                self._add(label, into)

    def _ended_link(self, href: str) -> None:
        """The ending line's links: what changed, or an address the summary gives (a dev server's)."""
        if href == CHANGES_LINK:
            self.changes_requested.emit()
        else:
            open_web_link(QUrl(href))

    # --- streaming ------------------------------------------------------------------------------

    def stream(self, text: str) -> None:
        self._live_item()
        self._live_text += text
        self._render_soon()

    def stream_reasoning(self, text: str) -> None:
        """A piece of a reasoning model's thinking: its header counts it as it comes."""
        self._live_item()
        self._live_reasoning += text
        self._render_soon()

    def _render_soon(self) -> None:
        if not self._render_timer.isActive() and not self._render_held:
            self._render_timer.start()

    def shown_again(self) -> None:
        """The window is no longer minimized: what streamed meanwhile is drawn now."""
        if self._render_held:
            self._render_held = False
            self._render_live()

    def _live_item(self) -> MessageItem:
        if self._live is None:
            self._live = MessageItem("assistant", "", when=now_stamp())
            self._live_text = self._live_reasoning = ""
            self._add(self._live)
        return self._live

    def _render_live(self) -> None:
        if self._live is not None and self.window().isMinimized():
            # No one sees it: laying the reply out again at each render, all of it, cost a tenth of
            # a core at 50 tokens a second (a run left to itself, the window minimized). It is
            # drawn when the window is shown again, or whole when it has been written.
            self._render_held = True
        elif self._live is not None:
            self._follow = self._at_bottom()
            if self._live_reasoning:
                self._live.set_reasoning(self._live_reasoning, live=True)
            if self._live_text or self._live.text:
                self._live.stream_text(self._live_text)

    def discard_live(self) -> None:
        """Drop the reply being streamed (its call failed and is being tried again)."""
        self._finish_live("")

    def _finish_live(self, final_text: str, reasoning: str = "", hidden: bool = False) -> MessageItem | None:
        """`hidden`: the reply's thinking is there but encrypted (core/reasoning.thinking_hidden).
        Returns the reply's item (None: a reply of calls alone)."""
        self._render_timer.stop()
        self._render_held = False
        finished = None
        if self._live is not None:
            if final_text or reasoning or hidden:
                # the thinking first: the text's label is shown only if there is text or no thinking
                self._live.set_reasoning(reasoning, hidden=hidden)
                self._live.set_text(final_text)
                self._chain([self._live])  # (its thinking's header, made as it streamed)
                finished = self._live
            else:
                self._live.parentWidget().layout().removeWidget(self._live)
                self._live.deleteLater()
        elif final_text or reasoning or hidden:
            finished = MessageItem("assistant", final_text, reasoning, hidden, now_stamp())
            self._add(finished)
        self._live = None
        self._live_text = ""
        self._live_reasoning = ""
        return finished

    def _note_approval(self, event: Event) -> None:
        """Which calls wait for the person's approval: their cards say so until the answer."""
        if isinstance(event, HumanQuestion):
            self._questions[event.qid] = event
        if isinstance(event, HumanQuestion) and event.reason == "approval":
            self._approvals[event.qid] = call_id = str(event.context.get("call_id", ""))
            waiting = True
        elif isinstance(event, HumanAnswer) and event.qid in self._approvals:
            call_id, waiting = self._approvals.pop(event.qid), False
        else:
            return
        if call_id in self.cards:
            self.cards[call_id].await_approval(waiting)

    # --- running tools --------------------------------------------------------------------------

    def tool_output(self, call_id: str, text: str, started: float | None = None) -> None:
        """A tool began to run (no text; `started`: when, if not now) or printed more: its card
        says so, now or when it is built."""
        self._running.setdefault(call_id, time.monotonic() if started is None else started)
        card = self.cards.get(call_id)
        if card is None:
            return
        if text:
            card.add_output(text)
        else:
            card.start(self._running[call_id])
        if card.started and not self._clock.isActive():
            self._clock.start()

    def run_stopped(self) -> None:
        """The run ended: a card still running was left unfinished by it (see ToolCard.run_stopped),
        and one whose command left a server running says so: kept for the person as the task
        ended, or never stopped by a killed Tripane."""
        self._running.clear()
        for card in self.cards.values():
            card.run_stopped()
        self.show_left_running()

    def show_left_running(self) -> None:
        """The cards of commands that left something running after their run ended say so, with
        Stop it: as the run ends, and when the session is shown again."""
        self._left = left_running_by_call(self.folder) if self.folder is not None else {}
        for call_id, group in self._left.items():  # (a card built later, of an older chunk, when it is)
            if (card := self.cards.get(call_id)) is not None:
                card.left_running(group, kept=call_id in self._kept)
        for label, event in self._kept_notices:
            self._say_kept(label, event)

    def left_running_cards(self) -> list[ToolCard]:
        """The cards whose command left something running that still runs after its run (kept for
        the person, or never stopped by a killed Tripane), each with its Stop it."""
        return [card for card in self.cards.values() if card.runs_on_after_its_run]

    def _say_kept(self, label: QLabel, event: BackgroundKept) -> None:
        """A kept notice, with its link to stop what runs on while it may run; once nothing it
        names runs (stopped here, by itself, or at a quit), it says so instead."""
        runs = self._left is None or any(call_id in self._left for call_id in event.call_ids)
        label.setText(displayable(f"⏵ {escape_html(capitalized(background_kept_note(event)))} — "
                                  + ('<a href="stop">stop it now</a>' if runs else "it has stopped since")))

    def _say_kept_ended(self, call_id: str) -> None:
        if self._left is not None:
            self._left.pop(call_id, None)
        for label, event in self._kept_notices:
            if call_id in event.call_ids:
                self._say_kept(label, event)

    def stop_all_left(self) -> int:
        """Session → Stop what the agent left running: as each card's Stop it (the keyboard's way);
        how many there were."""
        cards = self.left_running_cards()
        self._stop_left(tuple(card.call.id for card in cards))
        return len(cards)

    def _stop_left(self, call_ids: tuple[str, ...]) -> None:
        """The kept notice's link: what those calls' commands left running, stopped as their cards'
        Stop it stops it; the first card is brought into view, where it says so (clicked again,
        the link had seemed to do nothing)."""
        cards = [self.cards[call_id] for call_id in call_ids if call_id in self.cards]
        for card in cards:
            card.request_stop()
        if cards:
            self.ensureWidgetVisible(cards[0])

    def _tick_running(self) -> None:
        running = [card for card in self.cards.values() if card.started and card.status == "running"]
        for card in running:
            card.tick()
        if not running:
            self._clock.stop()

    # --- scrolling ------------------------------------------------------------------------------

    def _at_bottom(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 24

    def _on_scrolled(self, value: int) -> None:
        if self._keep_from_bottom is not None and value != self.verticalScrollBar().maximum() - self._keep_from_bottom:
            self._keep_from_bottom = None  # the person scrolled while older items went in: their place wins
        self._follow = self._at_bottom()
        self._show_latest()

    def _on_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._keep_from_bottom is not None:
            self.verticalScrollBar().setValue(maximum - self._keep_from_bottom)
        elif self._follow:
            self.verticalScrollBar().setValue(maximum)
        self._show_latest()

    def bring_into_view(self, y: int, margin: int) -> None:
        """Show the conversation's point `y` (in its widget), `margin` below and above it, and stay
        there: a match found near the end was scrolled past, to the end, as the card it unfolded
        grew and the view, still following the conversation, went on to its end."""
        self._keep_from_bottom = None
        self.ensureVisible(0, y, 0, margin)
        self._follow = False
        self._show_latest()

    def to_latest(self) -> None:
        """To the end of the conversation, and following it from there."""
        self._keep_from_bottom = None
        self._follow = True
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def _show_latest(self) -> None:
        away = not self._at_bottom()
        if not away:
            self._unseen = 0
        self.latest.setText(f"Latest ({self._unseen} new)" if self._unseen else "Latest")
        if away:
            self._place_latest()
        self.latest.setVisible(away)

    def _place_latest(self) -> None:
        view, size = self.viewport().geometry(), self.latest.sizeHint()
        self.latest.setGeometry(view.right() - size.width() - 12, view.bottom() - size.height() - 10,
                                size.width(), size.height())
        self.latest.raise_()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._place_latest()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        """Ctrl+Home / Ctrl+End: the start of what is shown, or the end (and follow it)."""
        if event.modifiers() == Qt.KeyboardModifier.ControlModifier and event.key() == Qt.Key.Key_End:
            self.to_latest()
        elif event.modifiers() == Qt.KeyboardModifier.ControlModifier and event.key() == Qt.Key.Key_Home:
            self.verticalScrollBar().setValue(0)
        else:
            super().keyPressEvent(event)
