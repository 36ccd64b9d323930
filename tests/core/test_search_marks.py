"""A search finds a word whatever marks it is written with (core/search_marks.py)."""

from __future__ import annotations

from core.search_marks import search_folded, search_pattern

TEXT = ("قرّب المبالغ إلى سنتين. الإجمالي واجمالي. بـــرنامج المدرسة. "
        "שָׁלוֹם עולם. Café crème, Việt Nam. ناممکن است یک کتاب. が می\u200cخواهم. Question: \u2068سؤال\u2069")


def found(needle: str) -> list[str]:
    """What of TEXT a search for `needle` selects: the text's own letters, its marks with them."""
    return [TEXT[match.start():match.end()] for match in search_pattern(needle).finditer(TEXT)]


def test_a_word_is_found_written_with_marks_or_without():
    assert found("قرب") == ["قرّب"]  # its shadda is the text's: selected with the word
    assert found("قَرِّب") == ["قرّب"]  # and the needle's own marks do not keep it from the text
    assert found("שלום") == ["שָׁלוֹם"]  # Hebrew's points
    assert found("cafe creme") == ["Café crème"] and found("VIET") == ["Việt"]
    assert found("برنامج") == ["بـــرنامج"]  # stretched with tatweel


def test_arabic_letters_written_one_for_another_are_one_letter():
    assert found("اجمالي") == found("إجمالي") == ["إجمالي", "اجمالي"]  # alef with hamza under, and bare
    assert found("المدرسه") == ["المدرسة"]  # heh for teh marbuta
    assert found("يك") == ["یک"]  # Arabic yeh and kaf for the Persian keyboard's


def test_what_no_one_sees_is_not_in_the_way():
    assert found("میخواهم") == ["می\u200cخواهم"]  # Persian, typed without its zero-width non-joiner
    assert found("question: سؤال") == ["Question: \u2068سؤال\u2069"]  # (words kept apart on screen: gui/bidi.py)


def test_what_are_letters_of_their_own_stay_apart():
    assert found("か") == []  # Japanese voicing makes another letter: か is not が
    assert found("zzz") == [] and found("سنتين.") == ["سنتين."]


def test_texts_that_differ_only_in_marks_fold_alike():
    assert search_folded("قرّب") == search_folded("قرب") and search_folded("Café") == search_folded("CAFE")
    assert search_folded("إجمالي") == search_folded("اجمالي") and search_folded("مدرسة") == search_folded("مدرسه")
    assert search_folded("が") != search_folded("か")
