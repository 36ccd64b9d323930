"""Text helpers: short text for one line (a notice, a card's title, a warning in the tail), and
text that UTF-8 can store whatever file names it carries."""

from __future__ import annotations

import re
from datetime import datetime


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
    return cut.rstrip(" ,;:.，、；：。") + "…"  # "Mitigation…", not "Mitigation.…" (nor "解析器，…")


def local_time(ts: str) -> str:
    """A record's time stamp (ISO, UTC) as this computer's clock read then: 2026-11-27 06:15:41."""
    try:
        return datetime.fromisoformat(ts).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return ts


# Linux allows any bytes in a file name, and Python keeps those that are not UTF-8 as lone
# surrogates (U+DC80–U+DCFF). No UTF-8 text can hold them: SQLite, progress.md and the provider's
# request all refused a file list with such a name, and the run died.
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def storable(text: str) -> bool:
    """Whether `text` can be written as UTF-8: it holds no lone surrogate (see shown_text)."""
    return text.isascii() or not _SURROGATE.search(text)


def shown_text(text: str) -> str:
    """`text` storable as UTF-8: a byte of a file name that is not UTF-8 is written `\\xNN`, as
    Python writes it (which `os_path` reads back), and any other lone surrogate becomes U+FFFD."""
    if storable(text):
        return text
    return _SURROGATE.sub(_escape_surrogate, text)


def _escape_surrogate(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def os_path(shown: str) -> str:
    """The file name `shown_text` showed as `shown`: `\\xNN` (NN 80–FF) back to the byte."""
    return _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), shown)


def counted(count: int, word: str) -> str:
    """"1 request", "2 requests": a count with its noun (one that takes an s)."""
    return f"{count:,} {word}{'s' * (count != 1)}"


def capitalized(text: str) -> str:
    """The text with its first letter a capital, the rest as it is (a note that opens a sentence)."""
    return text[:1].upper() + text[1:]


def sentence(text: str) -> str:
    """The text ending as a sentence does (a person's words, with Tripane's after them)."""
    text = text.rstrip()
    return text if not text or text.endswith((".", "!", "?", "…", "。", "！", "？")) else text + "."


def how_long(seconds: float) -> str:
    """A span of time as said to a person: "40 s", "12 min", "2 h 05 min"."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes = round(whole / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def money(cost: float) -> str:
    """A cost as people read it: cents for what is over a dollar, more digits for small sums, and
    a sum too small for those digits as under their least ("$0.0000" would read as free)."""
    if 0 < cost < 0.00005:
        return "<$0.0001"
    return f"${cost:,.2f}" if cost >= 1 else f"${cost:.4f}"


# Chinese and Japanese are written without spaces between words: split on spaces, or taken as \w
# runs, a whole clause is one "word". Where words are counted or compared, each of their characters
# counts (a character is about a token), and a run of them is compared by its overlapping pairs.
CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # kana, CJK ideographs
CJK_CHAR = re.compile(f"[{CJK}]")
CJK_RUN = re.compile(f"[{CJK}]+")
_OTHER_WORD = re.compile(f"[^\\W{CJK}]+")


def cjk_pairs(run: str) -> list[str]:
    """A run of Chinese or Japanese characters as its overlapping pairs (one character alone, itself)."""
    return [run] if len(run) < 2 else [run[i:i + 2] for i in range(len(run) - 1)]


def word_set(text: str) -> set[str]:
    """The words of `text`, case folded, to compare texts by: runs of letters and digits, and for
    Chinese and Japanese, pairs of characters."""
    folded = text.casefold()
    words = set(_OTHER_WORD.findall(folded))
    for run in CJK_RUN.findall(folded):
        words.update(cjk_pairs(run))
    return words


# Their punctuation (、。「」，：；！？（）) separates, as a space does: no word of its own.
_CJK_OR_ITS_PUNCTUATION = re.compile(f"[{CJK}\u3000-\u303f\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f]")


def words_and_characters(text: str) -> tuple[int, int]:
    """How many words `text` holds apart from Chinese and Japanese, and how many characters of those."""
    characters = len(CJK_CHAR.findall(text))
    return len((_CJK_OR_ITS_PUNCTUATION.sub(" ", text) if characters else text).split()), characters


def word_count(text: str) -> int:
    """Words as a reader counts them: each Chinese or Japanese character one (a thinking written in
    Chinese was "1 word")."""
    return sum(words_and_characters(text))


_WORD_OR_CJK_CHAR = re.compile(f"[{CJK}]|[^\\s{CJK}]+")


def first_words(text: str, most: int) -> str | None:
    """The start of `text` up to its `most`th word (each Chinese or Japanese character one, as
    word_count counts), as written, line breaks kept; None when it holds no more than that."""
    for count, word in enumerate(_WORD_OR_CJK_CHAR.finditer(text), 1):
        if count == most:
            rest = text[word.end():]
            return None if not rest.strip() else text[:word.end()]
    return None


def _longest_backticks(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)


def fenced(text: str, language: str = "") -> str:
    """A code block that the text cannot close: its fence is longer than any run of backticks in it."""
    fence = "`" * max(3, _longest_backticks(text) + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


_FENCE_LINE = re.compile(r" {0,3}(`{3,}|~{3,})")


def fences_closed(text: str) -> str:
    """`text` with the code block it leaves open closed: a text cut short inside one (a long task's
    start, a dropped file's text in it) made the rest of the document it went into code."""
    opened = ""
    for line in text.splitlines():
        if not (fence := _FENCE_LINE.match(line)):
            continue
        run = fence.group(1)
        if not opened:
            opened = run
        elif run[0] == opened[0] and len(run) >= len(opened) and not line[fence.end():].strip():
            opened = ""  # (a closing fence is as long or longer, with nothing after it)
    return f"{text}\n{opened}" if opened else text


def code_span(text: str) -> str:
    """Inline code that shows the text as it is, backticks included (a shell command's `date`):
    delimited by a longer run of backticks than any in it, and spaced from them, a space that
    Markdown takes off again on each side."""
    longest = _longest_backticks(text)
    if not longest:
        return f"`{text}`"
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}"


# Escape sequences a terminal acts on and does not show: colours and cursor moves (CSI), window
# titles and links (OSC), and the two-character ones. Tools that colour their output even into a
# pipe (cargo, npm, some test runners) would fill the agent's context and the cards with them.
# (An OSC cut short ends at its line, not at the next escape far below.)
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[ -/]*[0-~])")
# A line's text that a lone carriage return sends the cursor back over, when more text follows on
# that line: a progress bar redrawn a thousand times shows, as on a terminal, its last state only.
# Anchored at line starts, so it runs in linear time on a 64 MB output of CRLF lines.
_OVERWRITTEN = re.compile(r"^(?:[^\r\n]*\r+(?=[^\r\n]))+", re.MULTILINE)


def as_terminal_shows(text: str) -> str:
    """A command's output as a terminal would leave it on screen: no escape sequences, and of a
    line redrawn with carriage returns (a progress bar), its last drawing."""
    if "\x1b" in text:
        text = _ESCAPE.sub("", text)
    if "\r" in text:
        # With no line feed at all, carriage returns are line ends (`cat` of a classic Mac file,
        # some CSV exports), not redrawings: drawn over, all but its last line would be lost.
        text = _OVERWRITTEN.sub("", text) if "\n" in text else text.replace("\r", "\n")
    return text
