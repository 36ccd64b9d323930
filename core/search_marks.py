"""A search finds a word whatever marks it is written with, as a browser's find does.

Arabic is written with its short vowels and shadda or without them, as the writer likes ("قرّب",
"قرب"), often stretched with tatweel, and its alef with or without hamza ("إجمالي", "اجمالي");
Persian keyboards type ی and ک where Arabic ones type ي and ك; Hebrew has its niqqud; French,
Spanish, Vietnamese their accents. A model adds marks the person does not type, and the other way
round: matched letter for letter, their own words were not found. Here a letter matches its forms
with any marks, Unicode's primary strength (ICU's, which Chrome's find uses) for these scripts.
Japanese voicing marks and the vowel signs of Indic scripts are letters' own: they stay.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

# Combining accents (Latin, Greek, Cyrillic), Hebrew's points and cantillation, Arabic's vowels,
# shadda, sukun and Quranic marks, and tatweel (a letter stretched, U+0640); and what no search
# should see, as collation does not: the zero-width non-joiner inside a Persian word ("می‌خواهم",
# typed with it or without), joiners, soft hyphens, and direction marks and isolates (a web page's,
# or those that keep a person's words apart on screen: gui/bidi.py).
_MARK_RANGES = ("\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
                "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7"
                "\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed"
                "\u08d3-\u08e1\u08e3-\u08ff\u0640"
                "\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff")
MARKS = re.compile(f"[{_MARK_RANGES}]+")
# Arabic letters written one for another: alef with or without hamza or madda, alef maksura and
# yeh (and Persian yeh), teh marbuta and heh, Persian keheh and kaf.
_SAME_LETTERS = {"ا": "اأإآٱ", "ي": "يىی", "ه": "هة", "ك": "كک"}


def search_folded(text: str) -> str:
    """`text` as a search compares it: without marks, each letter in one form, in lower case. Two
    texts that differ only there fold alike ("قرّب" and "قرب", "Café" and "cafe")."""
    return text.casefold() if text.isascii() else without_marks(text).casefold()


def without_marks(text: str) -> str:
    """`text` without marks, each letter in one form ("é" as "e", "أ" as "ا"); its case as it was.
    (No Unicode normalization: on an Arabic text with its vowels it took three times as long.)"""
    if text.isascii():
        return text
    letter_of, one_of_them = _letters()
    return one_of_them.sub(lambda found: letter_of[found.group()], MARKS.sub("", text))


@cache
def _forms() -> dict[str, str]:
    """Each letter with the precomposed letters built on it and marks (Latin, Greek, Cyrillic,
    Arabic) and the letters written for it: "e" → "eéèêë…", "ا" → "اأإآٱ"."""
    forms: dict[str, str] = {}
    for code in (*range(0xC0, 0x250), *range(0x370, 0x530), *range(0x600, 0x700), *range(0x1E00, 0x1F00)):
        char = chr(code)
        parts = unicodedata.normalize("NFD", char)
        if len(parts) > 1 and not MARKS.sub("", parts[1:]):
            forms[parts[0]] = forms.get(parts[0], parts[0]) + char
    for first, same in _SAME_LETTERS.items():
        forms[first] = "".join(dict.fromkeys(forms.get(first, first) + same))
    return forms


@cache
def _letters() -> tuple[dict[str, str], re.Pattern[str]]:
    """Each letter that is another with a mark, or written for another, with that letter; and the
    pattern that finds them."""
    letter_of = {form: first for first, forms in _forms().items() for form in forms if form != first}
    return letter_of, re.compile(f"[{re.escape(''.join(letter_of))}]")


def search_pattern(needle: str) -> re.Pattern[str]:
    """A pattern that finds `needle` in a text as it is written, whatever its case and marks: each
    letter of it matches its forms, each followed by any marks. Its matches are the text's own
    places and lengths (to select them), which a search in folded text would not give. The cases
    are spelled out rather than left to re.IGNORECASE, which made a search three times as slow."""
    forms = _forms()
    parts = []
    for char in without_marks(needle) or needle:  # (marks alone: looked for as they are)
        cases = [case for case in (char, char.lower(), char.upper()) if len(case) == 1]
        same = "".join(dict.fromkeys("".join(forms.get(case, case) for case in cases)))
        letter = f"[{re.escape(same)}]" if len(same) > 1 else re.escape(same)
        parts.append(f"{letter}[{_MARK_RANGES}]*")
    return re.compile("".join(parts))
