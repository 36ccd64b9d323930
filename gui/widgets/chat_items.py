"""The conversation's text items: a message rendered from Markdown, and what its parts share with
the tool cards (labels that wrap, escaped text, the right-click copy menu)."""

from __future__ import annotations

from collections.abc import Callable

from gui.markdown import closing_fence, finished_blocks_end, to_html
from gui.qt import (
    QApplication,
    QContextMenuEvent,
    QFrame,
    QLayout,
    QMenu,
    QSizePolicy,
    Qt,
    QVBoxLayout,
    QWidget,
)
from gui.widgets.wrapped_label import WrappedLabel

SETTLE_CHARS = 2000  # a streamed reply's part rendered at each update before its finished blocks are set apart


def rich_label(html: str, object_name: str) -> WrappedLabel:
    label = WrappedLabel(html)
    label.setObjectName(object_name)
    label.setOpenExternalLinks(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
    return label


def escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


# Preformatted text (tool output, code blocks) wraps its long lines: one long line must not make
# the whole conversation wider than its pane.
PRE = '<pre style="white-space: pre-wrap">'
# A label takes no style sheet for its HTML (the panes' documents do): a table gets its rules here,
# or its cells run together.
TABLE = '<table border="1" cellspacing="0" cellpadding="4" style="border-collapse: collapse">'


def wrapping(html: str) -> str:
    return html.replace("<pre>", PRE).replace("<table>", TABLE)


def fit_width(widget: QWidget) -> None:
    """Let the pane's width, not the item's longest line, decide how wide an item is (a word
    longer than the pane is cut at its edge rather than widening every item)."""
    widget.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Minimum)
    layout = widget.layout()
    if layout is not None:
        layout.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)


class MessageItem(QFrame):
    def __init__(self, role: str, text: str):
        super().__init__()
        self.setObjectName(f"message_{role}")
        self.role = role
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        who = {"user": "You", "assistant": "Agent"}.get(role, role)
        layout.addWidget(rich_label(f"<b>{who}</b>", "who"))
        self.body = self._body_label(to_html(text))
        layout.addWidget(self.body)
        self.text = text
        self.settled: list[WrappedLabel] = []  # a streamed reply's finished blocks, above the body
        self._settled_chars = 0
        self._reopened = ""  # the code fence the body's part reopens (a long code block was cut)

    def set_text(self, text: str) -> None:
        """The whole text, in one label (a finished message can be selected at one go)."""
        for label in self.settled:
            self.layout().removeWidget(label)
            label.deleteLater()
        self.settled, self._settled_chars, self._reopened = [], 0, ""
        self.text = text
        self.body.setText(wrapping(to_html(text)))

    def stream_text(self, text: str) -> None:
        """A reply still being written (it only grows). Rendering all of it at each update took
        50 ms at 3,000 words, every 80 ms: its finished blocks go into labels of their own, each
        rendered once, and only the rest is rendered again."""
        self.text = text
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

    def selected_text(self) -> str:
        return "\n".join(label.selectedText() for label in (*self.settled, self.body) if label.hasSelectedText())

    def context_menu(self) -> QMenu:
        """Copy what is selected, or the whole message as the Markdown it was written in (code
        blocks and all, ready to paste into an editor or an issue)."""
        return copy_menu(self, self.selected_text(), [("Copy message as &Markdown", self.copy_markdown)])

    def copy_markdown(self) -> None:
        QApplication.clipboard().setText(self.text)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:  # noqa: N802 - Qt's name
        self.context_menu().popup(event.globalPos())


def copy_menu(owner: QWidget, selected: str, copies: list[tuple[str, Callable[[], None] | None]]) -> QMenu:
    """A chat item's right-click menu: Copy (the selection), then what the item offers to copy
    whole (None: not yet there). Each is a bound method, not a lambda holding the item: a
    connection keeps its callable alive, and with it the item."""
    menu = QMenu(owner)
    menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    copy = menu.addAction("&Copy", lambda: QApplication.clipboard().setText(selected))
    copy.setEnabled(bool(selected))
    for text, do in copies:
        action = menu.addAction(text)
        if do is None:
            action.setEnabled(False)
        else:
            action.triggered.connect(do)
    return menu
