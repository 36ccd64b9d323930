"""Markdown → HTML for the chat and the three panes (markdown-it-py, CommonMark + tables).

Raw HTML in the source is not passed through: what the agent writes (and web pages it quotes) is
shown as text, never as markup. Task-list boxes become ☐ / ☑ so a plan reads like a checklist.
"""

from __future__ import annotations

import logging
import re
from functools import cache

from core.imports import HEAVY_IMPORTS
from core.memory.working import pin_key
from gui.bidi import FSI, LTR, PDI, first_strong, has_right_to_left

log = logging.getLogger(__name__)

_TASK_BOX = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)\[([ xX])\]", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)  # notes to the agent in the templates, not for display
# Qt scales <h1>…<h6> by a size adjustment that no style overrides (an h1 is 18 pt in a 10 pt
# pane); headings become bold paragraphs of a size that suits a narrow pane.
_HEADING = re.compile(r"<(/?)h([1-6])((?: [^>]*)?)>")
_HEADING_SCALE = {"1": 1.3, "2": 1.15, "3": 1.05}  # of the text size; h4–h6 are bold text
_text_pt = 10.0  # the window's text size (gui/text_size.py sets it); headings are sized from it
_stand_ins: dict[int, str] = {}  # markers no font here draws → plain symbols (gui/glyphs.py)
TAIL_CHARS = 48_000  # longer files show their end; rendering all of a 1 MB log would freeze the window
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@cache
def _parser():
    with HEAVY_IMPORTS:  # the first call may come from a worker thread (a pane's render, the warm-up)
        from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark", {"html": False, "linkify": True, "breaks": True}).enable(["table", "linkify"])
    if parser.linkify is None:  # (an install from before linkify-it-py was a dependency: bare addresses stay text)
        log.warning("addresses are not made links: linkify-it-py is not installed (pip install -e . brings it)")
        parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable("table")
        parser.core.ruler.push("directions", _directions)
        return parser
    parser.core.ruler.push("directions", _directions)
    # An address with its scheme only (http://, https://, mailto:): fuzzy links took file names for
    # web sites ("app.py": .py is Paraguay's domain) and "v1.2" for an address.
    parser.linkify.set({"fuzzy_link": False, "fuzzy_email": False, "fuzzy_ip": False})
    return parser


def linked(text: str) -> str:
    """Plain text as HTML, the addresses in it links (as the Markdown's are): a task's summary
    ("served at http://localhost:8766/") in the line that ends a run."""
    found = (_parser().linkify.match(text) if _parser().linkify is not None else None) or []
    parts, at = [], 0
    for link in found:
        href = escape_html(link.url).replace('"', "&quot;")
        parts += [escape_html(text[at:link.index]), f'<a href="{href}">{escape_html(link.text)}</a>']
        at = link.last_index
    return "".join(parts) + escape_html(text[at:])


def escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def warm_up() -> None:
    """Import markdown-it and build the parser (about 0.1 s), on a worker thread after the first
    frame, rather than on the Qt thread when the first session is shown."""
    _parser()


def _boxes(text: str) -> str:
    return _TASK_BOX.sub(lambda m: m.group(1) + ("☑" if m.group(2) in "xX" else "☐"), text)


def set_text_size(points: float) -> None:
    """The text size headings are scaled from. Rendering runs in worker threads too; they read
    one float, set on the Qt thread before the views render again."""
    global _text_pt
    _text_pt = points


def set_stand_ins(table: dict[int, str]) -> None:
    """Set once on the Qt thread, before anything renders; worker threads only read it."""
    global _stand_ins
    _stand_ins = table


def displayable(text: str) -> str:
    """The text with each marker this machine cannot draw replaced by its stand-in."""
    return text.translate(_stand_ins) if _stand_ins else text


PIN_SHOWN = " 📌"


def pins_marked(text: str, pins: tuple[str, ...]) -> str:
    """The plan with a pin after each line the person pinned (a ticked-off pinned step too), so
    that what the agent must keep is seen where it is; not inside a fenced block, which shows its
    lines as they are."""
    if not pins:
        return text
    keys = {pin_key(line) for line in pins}
    lines, fenced = text.splitlines(keepends=True), False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and line.strip() and pin_key(line) in keys:
            body = line.rstrip("\r\n")
            lines[i] = body + PIN_SHOWN + line[len(body):]
    return "".join(lines)


def to_html(text: str) -> str:
    source = _boxes(_COMMENT.sub("", displayable(text)))
    right_to_left = has_right_to_left(source)
    html = _parser().render(source, {"right_to_left": right_to_left})  # (for _directions)
    if right_to_left:  # (code reads left to right, whatever its comments are written in)
        html = html.replace("<pre>", f'<pre dir="{LTR}">')
    return _HEADING.sub(_heading_as_paragraph, html)


_LISTS = {"bullet_list_open": "bullet_list_close", "ordered_list_open": "ordered_list_close"}
_BLOCKS = ("paragraph_open", "heading_open", "th_open", "td_open")


def _directions(state) -> None:
    """Each block's direction, set (`dir`) when the text holds right-to-left letters: a block's
    is that of its prose, code and bare addresses left out ("`sum.py` يجمع المبالغ" is Arabic);
    a list's, that of its first item with any, for all its items (an item that begins "Acme Ltd:"
    keeps its bullet where its neighbours' are); one without a letter takes the text's. Text with
    none (English, Chinese) is left to Qt, unchanged. See gui/bidi.py."""
    tokens = state.tokens
    if not state.env.get("right_to_left"):  # (to_html looked; a phrase rendered inline has no blocks)
        return
    overall = next((found for token in tokens if token.type == "inline" and (found := _first_prose(token.children or ()))), LTR)
    lists: list[str] = []  # the direction of each list the token is in
    for index, token in enumerate(tokens):
        if token.type in _LISTS:
            end = next((i for i in range(index + 1, len(tokens))
                        if tokens[i].type == _LISTS[token.type] and tokens[i].level == token.level), len(tokens))
            inside = (_first_prose(t.children or ()) for t in tokens[index + 1:end] if t.type == "inline")
            lists.append(next((found for found in inside if found), overall))
            token.attrSet("dir", lists[-1])
        elif token.type in _LISTS.values():
            lists.pop()
        elif token.type == "list_item_open":
            token.attrSet("dir", lists[-1])
        elif token.type in _BLOCKS and index + 1 < len(tokens):
            direction = lists[-1] if lists and token.type == "paragraph_open" else \
                _first_prose(tokens[index + 1].children or ()) or overall
            token.attrSet("dir", direction)
            _isolate_value(tokens[index + 1], direction)


def _first_prose(children) -> str | None:
    """The direction of the first letter of inline tokens' words, code and addresses skipped."""
    in_address = False
    for child in children:
        if child.type == "link_open":
            in_address = child.markup in ("linkify", "autolink")
        elif child.type == "link_close":
            in_address = False
        elif child.type == "text" and not in_address and (found := first_strong(child.content)):
            return found
    return None


_LABEL_END = re.compile(r":\s+")
LABEL_CHARS = 40  # a label is a few words ("Task", "**Goal**"); a longer text before a colon is a sentence


def _isolate_value(inline, direction: str) -> None:
    """A line that names a value written the other way ("Task: اجمع … في ملف invoices.csv", as the
    three files' own lines are) has the value laid out apart, in its own direction: in the line's,
    a Latin name at its end shows at its start."""
    from markdown_it.token import Token  # (loaded with the parser, which runs this)

    children = inline.children or []
    for index, child in enumerate(children):
        if child.type in ("softbreak", "hardbreak", "code_inline", "link_open"):
            return
        if child.type != "text" or not (colon := _LABEL_END.search(child.content)):
            continue
        label = "".join(c.content for c in children[:index]) + child.content[:colon.start()]
        value = [Token("text", "", 0, content=child.content[colon.end():]), *children[index + 1:]]
        if len(label) <= LABEL_CHARS and first_strong(label) == direction \
                and _first_prose(value) not in (None, direction):
            child.content = child.content[:colon.end()] + FSI + child.content[colon.end():]
            children.append(Token("text", "", 0, content=PDI))
        return


def inline_html(text: str) -> str:
    """A phrase's Markdown (`code`, **bold**) as HTML to set inside a sentence: no paragraph."""
    return _parser().renderInline(displayable(text))


def _heading_as_paragraph(match: re.Match) -> str:
    if match.group(1):
        return "</p>"
    size = round(_text_pt * _HEADING_SCALE.get(match.group(2), 1.0), 1)
    return f'<p{match.group(3)} style="font-size:{size}pt; font-weight:600; margin-top:8px; margin-bottom:3px">'


def finished_blocks_end(text: str) -> tuple[int, str]:
    """Where the finished blocks of a Markdown text still being written end, and the code fence
    that the rest continues ("" if none).

    The end is just after the last blank line, outside a code fence and a comment, that a new
    unindented block follows. The two parts rendered apart read as the whole rendered at once; a
    list split there is two lists, numbered on. With no such line, a long code block is cut at
    its last blank line: the first part gets the fence closed, the rest opened again. (0, "") when
    neither is there yet."""
    end, inside_end, inside_fence = 0, 0, ""
    offset, fence, fence_line = 0, "", ""
    blank_at: int | None = None  # just after the last blank line seen outside a fence
    for line in text.splitlines(keepends=True):
        marker = _FENCE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence) \
                    and not line[marker.end():].strip():
                fence = ""
            elif not line.strip():
                inside_end, inside_fence = offset + len(line), fence_line
        elif not line.strip():
            blank_at = offset + len(line)
        else:
            if blank_at is not None and not line[0].isspace() \
                    and text.count("<!--", 0, blank_at) == text.count("-->", 0, blank_at):
                end = blank_at
            blank_at = None
            if marker:
                fence, fence_line = marker.group(1), line if line.endswith("\n") else line + "\n"
        offset += len(line)
    if end:
        return end, ""
    return (inside_end, inside_fence) if inside_end else (0, "")


def closing_fence(fence_line: str) -> str:
    """The line that closes the code fence `fence_line` opened."""
    marker = _FENCE.match(fence_line)
    return marker.group(1) + "\n" if marker else ""


def tail_of(text: str, limit: int = TAIL_CHARS) -> tuple[str, bool]:
    """The end of a long file, cut at a heading or blank line so the Markdown still parses."""
    if len(text) <= limit:
        return text, False
    cut = len(text) - limit
    for marker in ("\n## ", "\n### ", "\n\n"):
        found = text.find(marker, cut)
        if found != -1 and found - cut < limit // 4:
            return text[found + 1:], True
    return text[cut:], True


def render_file(text: str) -> str:
    """HTML for a pane; a long file shows its last part with a note saying so."""
    shown, cut = tail_of(text)
    html = to_html(shown)
    if cut:
        html = (f"<p><i>Showing the last {len(shown) // 1000:,} KB of {len(text) // 1000:,} KB. "
                "Open the file to see all of it.</i></p>") + html
    return html


def changed_fraction(old: str, new: str) -> float | None:
    """Where, as a fraction of the new text, the first difference lies (None: no change)."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    index = 0
    step = 4096
    while index < limit and old[index:index + step] == new[index:index + step]:
        index += step
    while index < limit and old[index] == new[index]:
        index += 1
    return index / max(1, len(new))


# No font size here: the panes' text is the window's font, the size the person chose.
STYLE = """
code, pre { font-family: monospace; }
pre { padding: 4px; white-space: pre-wrap; }  /* long lines wrap in a narrow pane */
table { border-collapse: collapse; }
td, th { padding: 2px 6px; border: 1px solid #888; }
"""
