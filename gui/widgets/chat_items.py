"""The conversation's text items: a message rendered from Markdown, and what its parts share with
the tool cards (labels that wrap, escaped text, the right-click copy menu)."""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from pathlib import Path

from core.text import word_count
from gui.announcer import html_said
from gui.bidi import without_isolates
from gui.markdown import closing_fence, escape_html, finished_blocks_end, to_html
from gui.qt import (
    QApplication,
    QContextMenuEvent,
    QFrame,
    QLayout,
    QMenu,
    QSizePolicy,
    Qt,
    QToolButton,
    QVBoxLayout,
    QWidget,
)
from gui.theme import coloured
from gui.widgets.menu_style import spaced
from gui.widgets.pictures import PicturesShown
from gui.widgets.wrapped_label import WrappedLabel

# What a fold of thinking holds when the provider encrypted it (core/reasoning.thinking_hidden).
HIDDEN_THINKING = ("The provider's safety systems encrypted this thinking: it cannot be read here. It goes back "
                   "to the model as it came, as the provider requires.")
SETTLE_CHARS = 2000  # a streamed reply's part rendered at each update before its finished blocks are set apart


def rich_label(html: str, object_name: str) -> WrappedLabel:
    label = WrappedLabel(html)
    label.setObjectName(object_name)
    label.setOpenExternalLinks(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    return label


def with_lines(text: str) -> str:
    """Plain text in a rich label, its line breaks kept (HTML would run its lines together)."""
    return escape_html(text.strip("\n")).replace("\n", "<br>")


# Preformatted text (tool output, code blocks) wraps its long lines: one long line must not make
# the whole conversation wider than its pane. It reads left to right, as a terminal and an editor
# show it, a line that begins with a word written right to left too (gui/bidi.py).
PRE = '<pre dir="ltr" style="white-space: pre-wrap">'
# A label takes no style sheet for its HTML (the panes' documents do): a table gets its rules here,
# or its cells run together.
TABLE = '<table border="1" cellspacing="0" cellpadding="4" style="border-collapse: collapse">'


def wrapping(html: str) -> str:
    return _PRE_TAG.sub(PRE, html).replace("<table>", TABLE)


_PRE_TAG = re.compile(r'<pre(?: dir="ltr")?>')  # (a code block in a right-to-left text is set left to right)


def fit_width(widget: QWidget) -> None:
    """Let the pane's width, not the item's longest line, decide how wide an item is (a word
    longer than the pane is cut at its edge rather than widening every item)."""
    widget.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
    layout = widget.layout()
    if layout is not None:
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)


def stamp(ts: str, today: datetime.date | None = None) -> str:
    """When a record was written, as a message's header says it: the time, and the day too when
    it was not today (local time)."""
    if not ts:
        return ""
    try:
        moment = datetime.datetime.fromisoformat(ts).astimezone()
    except ValueError:
        return ""
    return f"{moment:%H:%M}" if moment.date() == (today or datetime.date.today()) else f"{moment:%Y-%m-%d %H:%M}"


def now_stamp() -> str:
    return stamp(datetime.datetime.now(datetime.timezone.utc).isoformat())


class MessageItem(QFrame):
    def __init__(self, role: str, text: str, reasoning: str = "", hidden_thinking: bool = False, when: str = ""):
        """`when`: the time its header says (stamp)."""
        super().__init__()
        self.setObjectName(f"message_{role}")
        self.role = role
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        who = {"user": "You", "assistant": "Agent"}.get(role, role)
        self.when = when
        time = f'&nbsp;&nbsp;<span style="font-weight: normal">{coloured("time", escape_html(when))}</span>' if when else ""
        header = rich_label(f"<b>{who}</b>{time}", "who")
        header.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # Tab goes to what was said; who and when describe it
        layout.addWidget(header)
        self.body = self._body_label(to_html(text))
        self.who = f"{who}, {when}" if when else who
        self.body.on_focus = self._name_body
        layout.addWidget(self.body)
        self.text = text
        # Going back to before this message or step (a new session from there: core/branch.py);
        # None where there is no such point (the task, a reply still being written).
        self.go_back: Callable[[], None] | None = None
        self.settled: list[WrappedLabel] = []  # a streamed reply's finished blocks, above the body
        self.pictures: list[Path] = []  # those the person showed with it
        self._settled_chars = 0
        self._reopened = ""  # the code fence the body's part reopens (a long code block was cut)
        # A reasoning model's thinking: folded under a header that counts it, above the answer.
        self.reasoning = ""
        self.reasoning_header: QToolButton | None = None
        self.reasoning_body: WrappedLabel | None = None
        if reasoning or hidden_thinking:
            self.set_reasoning(reasoning, hidden=hidden_thinking)
            self.body.setVisible(bool(text))  # only thinking, no answer: no empty line for it

    def show_pictures(self, files: list[Path]) -> None:
        """The pictures the message came with, under its text; a click opens one full size."""
        self.pictures = files
        self.layout().addWidget(PicturesShown(files))
        self.body.setVisible(bool(self.text))  # a picture alone: no empty line above it

    def set_reasoning(self, text: str, *, live: bool = False, hidden: bool = False) -> None:
        """The model's thinking so far (`live`: it is still thinking), or all of it; `hidden`:
        there was thinking, but the provider encrypted it."""
        hidden = hidden and not text
        text = HIDDEN_THINKING if hidden else text
        if self.reasoning_header is None:
            if not text:
                return
            self.reasoning_header = QToolButton()
            self.reasoning_header.setObjectName("reasoning_header")
            self.reasoning_header.setCheckable(True)
            self.reasoning_header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            self.reasoning_header.setArrowType(Qt.ArrowType.RightArrow)
            self.reasoning_header.setToolTip("What the model thought before it answered (sent back to it only where the "
                                             "provider requires it: Claude, DeepSeek)")
            self.reasoning_header.toggled.connect(self._show_reasoning)
            fit_width(self.reasoning_header)
            self.reasoning_body = rich_label("", "reasoning")
            self.reasoning_body.setVisible(False)
            self.layout().insertWidget(1, self.reasoning_header)
            self.layout().insertWidget(2, self.reasoning_body)
        self.reasoning = text
        self.reasoning_header.setVisible(bool(text))
        words = word_count(text)
        counted = "hidden by the provider" if hidden else f"{words:,} word{'s' * (words != 1)}"
        self.reasoning_header.setText(f"{'Thinking…' if live else 'Thought'} ({counted})")
        if self.reasoning_header.isChecked():
            self._show_reasoning(True)

    def _show_reasoning(self, shown: bool) -> None:
        """Rendered when unfolded, not at every piece: a long thinking is thousands of words."""
        assert self.reasoning_header is not None and self.reasoning_body is not None
        self.reasoning_header.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        if shown:
            self.reasoning_body.setText(f'<div style="white-space: pre-wrap">{escape_html(self.reasoning)}</div>')
        self.reasoning_body.setVisible(shown)

    def set_text(self, text: str) -> None:
        """The whole text, in one label (a finished message can be selected at one go)."""
        for label in self.settled:
            self.layout().removeWidget(label)
            label.deleteLater()
        self.settled, self._settled_chars, self._reopened = [], 0, ""
        self.text = text
        self.body.setText(wrapping(to_html(text)))
        self.body.setVisible(bool(text) or not self.reasoning)

    def stream_text(self, text: str) -> None:
        """A reply still being written (it only grows). Rendering all of it at each update took
        50 ms at 3,000 words, every 80 ms: its finished blocks go into labels of their own, each
        rendered once, and only the rest is rendered again."""
        self.text = text
        self.body.setVisible(True)
        rest = self._reopened + text[self._settled_chars:]
        end, fence = finished_blocks_end(rest) if len(rest) >= SETTLE_CHARS else (0, "")
        if end:
            label = self._body_label(to_html(rest[:end] + closing_fence(fence)))
            self.layout().insertWidget(self.layout().indexOf(self.body), label)
            self.settled.append(label)
            self._settled_chars += end - len(self._reopened)
            self._reopened = fence  # a long code block goes on in the rest
            rest = fence + rest[end:]
        self.body.setText(wrapping(to_html(rest)))

    @staticmethod
    def _body_label(html: str) -> WrappedLabel:
        label = rich_label(wrapping(html), "body")
        label.setContextMenuPolicy(Qt.ContextMenuPolicy.NoContextMenu)  # the message's menu, below
        return label

    def _name_body(self) -> None:
        """The text is named with who wrote it and when, for a screen reader, as it gets the focus
        (before the screen reader asks its name): Orca says no description of a label, and a name
        made at every change of a streamed reply would cost a second rendering of it."""
        self.body.setAccessibleName(f"{self.who}: {html_said(self.body.text())}")

    def tab_parts(self) -> list[QWidget]:
        """What Tab reaches in it, in the order shown (its thinking's header was made after its text)."""
        parts = [self.reasoning_header, self.reasoning_body, *self.settled, self.body,
                 *self.findChildren(PicturesShown)]
        return [part for widget in parts if widget is not None for part in tab_stops(widget)]

    def selected_text(self) -> str:
        return "\n".join(label.selectedText() for label in (*self.settled, self.body) if label.hasSelectedText())

    def context_menu(self) -> QMenu:
        """Copy what is selected, or the whole message as the Markdown it was written in (code
        blocks and all, ready to paste into an editor or an issue)."""
        menu = copy_menu(self, self.selected_text(), [("Copy message as &Markdown", self.copy_markdown)])
        offer_going_back(menu, self.go_back, GO_BACK_BEFORE_MESSAGE if self.role == "user" else GO_BACK_BEFORE_STEP)
        return menu

    def copy_markdown(self) -> None:
        """The text as written, and its pictures as Markdown images of their files."""
        shown = "".join(f"\n\n![{path.name}]({path.as_uri()})" for path in self.pictures)
        QApplication.clipboard().setText(self.text + shown if self.text else shown.lstrip("\n"))

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt's name
        self.context_menu().popup(event.globalPos())


def tab_stops(widget: QWidget) -> list[QWidget]:
    """The widget and those in it that Tab reaches (hidden ones too: they are reached once shown)."""
    return [part for part in (widget, *widget.findChildren(QWidget)) if part.focusPolicy() & Qt.FocusPolicy.TabFocus]


def tab_parts(item: QWidget) -> list[QWidget]:
    """What Tab reaches in a conversation's item, in the order shown."""
    ordered = getattr(item, "tab_parts", None)
    return ordered() if ordered is not None else tab_stops(item)


GO_BACK_BEFORE_MESSAGE = "Go &back to before this message…"
GO_BACK_BEFORE_STEP = "Go &back to before this step…"


def offer_going_back(menu: QMenu, go_back: Callable[[], None] | None, words: str) -> None:
    """The menu's last entry: a new session from before this message or step (when it is one)."""
    if go_back is not None:
        menu.addSeparator()
        menu.addAction(words).triggered.connect(go_back)


def copy_menu(owner: QWidget, selected: str, copies: list[tuple[str, Callable[[], None] | None]]) -> QMenu:
    """A chat item's right-click menu: Copy (the selection), then what the item offers to copy
    whole (None: not yet there). Each is a bound method, not a lambda holding the item: a
    connection keeps its callable alive, and with it the item."""
    menu = spaced(QMenu(owner))
    menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    copy = menu.addAction("&Copy", lambda: QApplication.clipboard().setText(without_isolates(selected)))
    copy.setEnabled(bool(selected))
    for text, do in copies:
        action = menu.addAction(text)
        if do is None:
            action.setEnabled(False)
        else:
            action.triggered.connect(do)
    return menu
