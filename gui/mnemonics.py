"""Text shown as written on a button, and the Alt+letter keys that press a row of buttons.

Qt reads "&" in a button's text as the mark of its keyboard shortcut: it hides the "&" and
underlines the next character, so an agent's `python -m http.server 8000 &` showed on its card as
`8000 _`, and an option "Tests & docs" gave the dialog an Alt+D nobody chose. "&&" shows one "&".
"""

from __future__ import annotations

import re


def as_written(text: str) -> str:
    """`text` for a button's label, its ampersands shown rather than taken as shortcut marks."""
    return text.replace("&", "&&")


def with_keys(labels: list[str], taken: str = "") -> list[str]:
    """`labels` for a row of buttons, each shown as written with one letter marked as its Alt key,
    no two alike (nor any of `taken`): a word's first letter where one is free ("Retry with a hint"
    → Alt+R, then "Skip the step" → Alt+S, "Stop" → Alt+T). A label with no free letter or digit of
    the keyboard's (an option written in Chinese) gets none; Tab still reaches its button."""
    used = set(taken.lower())
    keyed = []
    for label in labels:
        at = _free_key(label, used)
        if at is None:
            keyed.append(as_written(label))
            continue
        used.add(label[at].lower())
        keyed.append(f"{as_written(label[:at])}&{as_written(label[at:])}")
    return keyed


_WORD_STARTS = re.compile(r"(?<![A-Za-z0-9])[A-Za-z0-9]")


def _free_key(label: str, used: set[str]) -> int | None:
    """Where in `label` its key is: the first free word start, else the first free letter."""
    starts = [match.start() for match in _WORD_STARTS.finditer(label)]
    rest = [i for i, char in enumerate(label) if char.isascii() and char.isalnum() and i not in starts]
    return next((i for i in starts + rest if label[i].lower() not in used), None)
