"""Text written right to left (Arabic, Hebrew, Persian, Urdu) among the window's English.

Qt lays out each paragraph in the direction of its first strong letter. That is wrong in two
places a person writing right to left meets all the time: a paragraph or list item of theirs that
begins with a Latin name (a file, `sum.py`, "Acme Ltd: …") is laid out left to right, its bullet
on the other side from its neighbours'; and their words inside one of Tripane's English lines
("Question for you: …", a session's row) are reordered with the English around them, so that a
file name at the end of their sentence shows at its start. The first is mended by giving a block
the direction of its prose (code left out) and a list the direction of its first item's; the
second by isolating their words (Unicode's first-strong isolate, which Qt honours), only where
they hold right-to-left letters, so English text is left exactly as it was.
"""

from __future__ import annotations

import re
import unicodedata

from gui.qt import QMimeData, QPlainTextEdit, Qt, QTextBrowser

FSI, PDI = "\u2068", "\u2069"  # first-strong isolate: laid out apart, in its own first letter's direction
# Hebrew to Arabic Extended-A, their presentation forms, and the historic and African scripts that
# are written right to left (Adlam, Mende Kikakui, …).
_RIGHT_TO_LEFT = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc\U00010800-\U00010fff\U0001e800-\U0001efff]")
RTL, LTR = "rtl", "ltr"


def has_right_to_left(text: str) -> bool:
    return _RIGHT_TO_LEFT.search(text) is not None


def first_strong(text: str) -> str | None:
    """The direction of the first letter that has one (RTL or LTR); None when there is none
    (digits, punctuation, symbols only)."""
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind == "L":
            return LTR
        if kind in ("R", "AL"):
            return RTL
    return None


def isolated(text: str) -> str:
    """`text` to set inside a line of other text: laid out in its own direction, not reordered with
    what is around it. Unchanged when it holds no right-to-left letter."""
    return f"{FSI}{text}{PDI}" if has_right_to_left(text) else text


def without_isolates(text: str) -> str:
    """What is copied of a text shown with isolates: they only lay it out here, and pasted into a
    terminal, a file name or code, they would be there unseen."""
    return text.replace(FSI, "").replace(PDI, "") if FSI in text or PDI in text else text


class IsolatesLeftOutOfCopies(QTextBrowser):
    """A view of rendered Markdown (a pane, a question) whose copies leave the isolates out."""

    def createMimeDataFromSelection(self) -> QMimeData:  # noqa: N802 (Qt's name)
        data = super().createMimeDataFromSelection()
        text = data.text()  # (made now from the selection: what is set next stays)
        if text != without_isolates(text):
            html = data.html()
            data.setText(without_isolates(text))
            data.setHtml(without_isolates(html))
        return data


LOOKED_AT_CHARS = 2_000  # for a box's first letter, at each key: a pasted log of figures is not read through


def aligned_to_its_text(editor: QPlainTextEdit) -> None:
    """A plain-text box's lines set on the side its text begins from: the right, once its first
    letter is right-to-left (the first typed, as a browser's box does). Qt's plain-text layout
    sets every line on the left, even one it lays out right to left (its rich one sets each on its
    own side); and it takes one alignment for all, so the first paragraph's decides."""

    def align() -> None:
        document = editor.document()
        block, direction, left = document.firstBlock(), None, LOOKED_AT_CHARS
        while block.isValid() and direction is None and left > 0:
            direction = first_strong(block.text()[:left])
            left -= block.length()
            block = block.next()
        wanted = Qt.AlignmentFlag.AlignRight if direction == RTL else Qt.AlignmentFlag.AlignLeft
        option = document.defaultTextOption()
        if option.alignment() != wanted:  # (setting it lays the text out again)
            option.setAlignment(wanted)
            document.setDefaultTextOption(option)

    editor.textChanged.connect(align)
    align()
