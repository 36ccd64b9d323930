"""Text shown as written on a button.

Qt reads "&" in a button's text as the mark of its keyboard shortcut: it hides the "&" and
underlines the next character, so an agent's `python -m http.server 8000 &` showed on its card as
`8000 _`, and an option "Tests & docs" gave the dialog an Alt+D nobody chose. "&&" shows one "&".
"""

from __future__ import annotations


def as_written(text: str) -> str:
    """`text` for a button's label, its ampersands shown rather than taken as shortcut marks."""
    return text.replace("&", "&&")
