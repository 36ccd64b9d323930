"""Markdown → HTML for the chat and the three panes (markdown-it-py, CommonMark + tables).

Raw HTML in the source is not passed through: what the agent writes (and web pages it quotes) is
shown as text, never as markup. Task-list boxes become ☐ / ☑ so a plan reads like a checklist.
"""

from __future__ import annotations

import re
from functools import cache

_TASK_BOX = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)\[([ xX])\]", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->\n?", re.DOTALL)  # notes to the agent in the templates, not for display
# Qt scales <h1>…<h6> by a size adjustment that no style overrides (an h1 is 18 pt in a 10 pt
# pane); headings become bold paragraphs of a size that suits a narrow pane.
_HEADING = re.compile(r"<(/?)h([1-6])>")
_HEADING_STYLE = {"1": "font-size:13pt", "2": "font-size:11.5pt", "3": "font-size:10.5pt"}
TAIL_CHARS = 48_000  # longer files show their end; rendering all of a 1 MB log would freeze the window


@cache
def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable("table")


def _boxes(text: str) -> str:
    return _TASK_BOX.sub(lambda m: m.group(1) + ("☑" if m.group(2) in "xX" else "☐"), text)


def to_html(text: str) -> str:
    html = _parser().render(_boxes(_COMMENT.sub("", text)))
    return _HEADING.sub(_heading_as_paragraph, html)


def _heading_as_paragraph(match: re.Match) -> str:
    if match.group(1):
        return "</p>"
    style = _HEADING_STYLE.get(match.group(2), "font-size:10pt")
    return f'<p style="{style}; font-weight:600; margin-top:8px; margin-bottom:3px">'


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


STYLE = """
body { font-size: 10pt; }
h1 { font-size: 14pt; margin: 4px 0; }
h2 { font-size: 12pt; margin: 8px 0 4px 0; }
h3 { font-size: 11pt; margin: 6px 0 2px 0; }
code, pre { font-family: monospace; }
pre { padding: 4px; white-space: pre-wrap; }  /* long lines wrap in a narrow pane */
table { border-collapse: collapse; }
td, th { padding: 2px 6px; border: 1px solid #888; }
"""
