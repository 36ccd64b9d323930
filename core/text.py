"""Short text for one line: a notice, a card's title, a warning in the tail."""

from __future__ import annotations


def one_line(text: str, limit: int) -> str:
    """`text` with its whitespace collapsed, cut to at most `limit` characters with an ellipsis.

    The cut falls between words when a word boundary is near, so a reader never meets half a word
    ("… Risks & Mitigation. Sen") and takes it for the whole message."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    boundary = cut.rfind(" ")
    if flat[limit - 1] != " " and boundary >= limit * 2 // 3:  # the cut falls inside a word
        cut = cut[:boundary]
    return cut.rstrip(" ,;:.") + "…"  # "Mitigation…", not "Mitigation.…"
