"""Markdown → chunks for the index: one per heading section, long sections in overlapping windows.

About 400 tokens a chunk with 80 of overlap (seed 002): small enough that a hit points at one
thing, large enough to carry its context. Token counts are estimated from words (≈ 4/3 tokens a
word) because the index must not depend on the chat model's tokenizer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.text import CJK, words_and_characters

CHUNK_TOKENS = 400
OVERLAP_TOKENS = 80
_HEADING = re.compile(r"^#{1,6}\s+\S")
_UNIT = re.compile(f"[{CJK}]|[^\\s{CJK}]+")


@dataclass(frozen=True)
class Chunk:
    heading: str
    text: str  # what is searched and embedded; later windows of a section repeat its heading
    start_line: int  # 1-based, inclusive
    end_line: int


def estimate_tokens(text: str) -> int:
    """About 4/3 tokens a word, and one a Chinese or Japanese character (written without spaces,
    a whole paragraph of them was one word, and never cut into chunks)."""
    words, characters = words_and_characters(text)
    return (words * 4 + 2) // 3 + characters


def chunk_markdown(text: str, max_tokens: int = CHUNK_TOKENS, overlap: int = OVERLAP_TOKENS, *,
                   items: bool = False) -> list[Chunk]:
    """Chunks of `text`. With `items`, each list item is its own chunk (MEMORY.md: one fact each,
    so a hit names one fact and a fact's vector is not averaged with its neighbours')."""
    chunks: list[Chunk] = []
    for heading, lines in _sections(text.splitlines()):
        if items and heading:
            chunks.extend(_items(heading, lines))
        else:
            chunks.extend(_windows(heading, lines, max_tokens, overlap))
    return chunks


def _items(heading: str, lines: list[tuple[int, str]]) -> list[Chunk]:
    groups: list[list[tuple[int, str]]] = []
    for number, line in lines[1:]:  # the first line is the heading
        if re.match(r"^[-*+] ", line):
            groups.append([])
        elif not line.startswith((" ", "\t")) or not groups:
            continue  # prose between items (a file's introduction) describes the file, not a fact
        if line.strip():
            groups[-1].append((number, line))
    return [Chunk(heading, "\n".join(line for _, line in group), group[0][0], group[-1][0])
            for group in groups if group]


def _sections(lines: list[str]) -> list[tuple[str, list[tuple[int, str]]]]:
    sections: list[tuple[str, list[tuple[int, str]]]] = [("", [])]
    for number, line in enumerate(lines, 1):
        if _HEADING.match(line):
            sections.append((line.lstrip("#").strip(), []))
        sections[-1][1].append((number, line))
    return [(h, body) for h, body in sections if any(line.strip() for _, line in body)]


def _windows(heading: str, lines: list[tuple[int, str]], max_tokens: int, overlap: int) -> list[Chunk]:
    pieces = [piece for number, line in lines for piece in _split_long(number, line, max_tokens)]
    chunks: list[Chunk] = []
    start = 0
    while start < len(pieces):
        end, tokens = start, 0
        while end < len(pieces) and (end == start or tokens + pieces[end][2] <= max_tokens):
            tokens += pieces[end][2]
            end += 1
        body = "\n".join(p[1] for p in pieces[start:end]).strip()
        if start > 0 and heading and not body.startswith("#"):
            body = f"{'#' * 2} {heading}\n{body}"
        if body and not (end - start == 1 and _HEADING.match(body)):  # a heading alone says nothing
            chunks.append(Chunk(heading, body, pieces[start][0], pieces[end - 1][0]))
        if end >= len(pieces):
            break
        # Step back over the last pieces until about `overlap` tokens repeat in the next window.
        back, kept = end, 0
        while back - 1 > start and kept + pieces[back - 1][2] <= overlap:
            back -= 1
            kept += pieces[back][2]
        start = back
    return chunks


def _split_long(number: int, line: str, max_tokens: int) -> list[tuple[int, str, int]]:
    tokens = estimate_tokens(line)
    if tokens <= max_tokens // 2:
        return [(number, line, tokens)]
    units = list(_UNIT.finditer(line))  # its words, and each Chinese or Japanese character
    step = max(1, (max_tokens // 2) * 3 // 4)
    parts = (line[group[0].start():group[-1].end()] for group in (units[i:i + step] for i in range(0, len(units), step)))
    return [(number, part, estimate_tokens(part)) for part in parts]
