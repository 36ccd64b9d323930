"""A long streamed reply: its finished blocks are rendered once, apart, and read as the whole does."""

from __future__ import annotations

import re

from gui.markdown import closing_fence, finished_blocks_end, to_html
from gui.qt import QTextDocument
from gui.widgets.chat import ChatView
from gui.widgets.chat_items import SETTLE_CHARS

PARAGRAPH = ("The parser reads each token and the **buffer** keeps the index of what was seen so far; "
             "the cache holds recent lookups for the `retry` handler. ") * 3
FENCED = "```python\ndef f():\n\n    return 1\n\n\n# still code\n```"
BLOCKS = ["## What I found", PARAGRAPH, "1. first step\n2. second step", PARAGRAPH, FENCED,
          "- a point\n\n  its detail", PARAGRAPH, "| a | b |\n|---|---|\n| 1 | 2 |", PARAGRAPH,
          "> a quote\n> on two lines", PARAGRAPH, "3. third step", PARAGRAPH]
REPLY = "\n\n".join(BLOCKS * 3)  # about 11,000 characters


def plain(html: str) -> str:
    document = QTextDocument()
    document.setHtml(html)
    return re.sub(r"\s+", " ", document.toPlainText()).strip()


def test_finished_blocks_end_before_a_new_block_outside_code_and_comments():
    text = "one\n\n```\ncode\n\nstill code\n```\n\n- item\n\n  its detail\n\n<!-- a note\n\nstill note -->\n\nnow"
    end, fence = finished_blocks_end(text)
    assert text[end:] == "now" and fence == ""
    assert finished_blocks_end("one paragraph still being") == (0, "")
    assert finished_blocks_end("one\n\n```\nx\n\ny") == (len("one\n\n"), "")  # before the open fence
    assert finished_blocks_end("one\n\n    indented code\n\n    more") == (0, "")  # no new block follows


def test_a_long_code_block_is_cut_at_a_blank_line_and_reopened():
    text = "```python\ndef f():\n    return 1\n\ndef g():\n    return 2\n\ndef h("
    end, fence = finished_blocks_end(text)
    assert text[end:] == "def h(" and fence == "```python\n"
    first, rest = text[:end] + closing_fence(fence), fence + text[end:]
    assert plain(to_html(first)) + " " + plain(to_html(rest)) == plain(to_html(text))


def test_a_long_reply_streams_in_finished_blocks_and_ends_as_one_message(qtbot):
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.resize(600, 500)
    chat.show()
    assert len(REPLY) > 3 * SETTLE_CHARS
    for start in range(0, len(REPLY), 40):  # deltas as a provider streams them; rendered as it goes
        chat.stream(REPLY[start:start + 40])
        chat._render_live()
    live = chat._live
    assert len(live.settled) >= 2
    assert len(REPLY) - live._settled_chars < 2 * SETTLE_CHARS  # only the last part is rendered again
    parts = [label.text() for label in live.settled] + [live.body.text()]
    assert plain("".join(parts)) == plain(to_html(REPLY))  # the same text, code blocks whole
    assert sum(part.count("<pre") for part in parts) == to_html(REPLY).count("<pre") == 3  # short code stays whole

    chat._finish_live(REPLY)
    assert live.settled == [] and plain(live.body.text()) == plain(to_html(REPLY))  # selectable at one go


def test_a_long_code_block_streams_in_parts(qtbot):
    code = "Here is the module:\n\n```python\n" + "".join(
        f"def function_{i}(argument):\n    return compute(argument, {i})\n\n" for i in range(200)) + "```\n"
    chat = ChatView()
    qtbot.addWidget(chat)
    chat.show()
    for start in range(0, len(code), 60):
        chat.stream(code[start:start + 60])
        chat._render_live()
    live = chat._live
    assert len(code) - live._settled_chars < 2 * SETTLE_CHARS
    parts = [label.text() for label in live.settled] + [live.body.text()]
    assert plain("".join(parts)) == plain(to_html(code))
