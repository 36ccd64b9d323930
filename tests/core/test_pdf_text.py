"""A PDF's text, page by page, as the agent's file_read and web_fetch give it (core/pdf_text.py)."""

from __future__ import annotations

import pytest

from core.pdf_text import (
    NoText,
    cached_text,
    is_pdf_file,
    looks_like_pdf,
    page_count,
    pdf_text,
)
from tests.support.pdfs import locked, pdf_bytes, write_pdf

PAPER = [["KV-cache reuse in agent loops", "Results (table 2): the cache hit rate was 0.97."],
         None,
         ["第二章 结论", "缓存命中率为 0.97。Mixed: café"]]


def test_each_page_comes_under_its_number_and_a_page_of_pictures_is_said_so():
    found = pdf_text(pdf_bytes(PAPER), "paper.pdf")
    assert found.text == ("[page 1 of 3]\nKV-cache reuse in agent loops\nResults (table 2): the cache hit rate was "
                          "0.97.\n\n[page 2 of 3: no text, a picture only (a scan, a figure)]\n\n[page 3 of 3]\n"
                          "第二章 结论\n缓存命中率为 0.97。Mixed: café\n")
    assert (found.pages, found.pictured_pages, found.pages_read) == (3, 1, 3)
    assert found.summary() == "a PDF of 3 pages (1 of them pictures only)"
    assert page_count(pdf_bytes(PAPER), "paper.pdf") == 3


def test_a_pdf_is_known_by_its_signature_not_its_name(tmp_path):
    assert looks_like_pdf(b"%PDF-1.4\n") and looks_like_pdf(b"\r\n" * 20 + b"%PDF-1.7")
    assert not looks_like_pdf(b"PK\x03\x04 a zip") and not looks_like_pdf(b" " * 2000 + b"%PDF-1.7")
    assert is_pdf_file(write_pdf(tmp_path / "report", PAPER))  # (no suffix: a download's name)
    (tmp_path / "notes.pdf").write_text("not a pdf at all", encoding="utf-8")
    assert not is_pdf_file(tmp_path / "notes.pdf") and not is_pdf_file(tmp_path / "missing.pdf")


def test_a_scan_a_locked_file_and_a_damaged_one_say_why_they_give_no_text():
    with pytest.raises(NoText, match=r"^scan\.pdf has no text, only pictures of its 2 pages \(a scan, most likely\): "
                                     r".* one run through OCR \(ocrmypdf"):
        pdf_text(pdf_bytes([None, None]), "scan.pdf")
    with pytest.raises(NoText, match=r"^secret\.pdf is a PDF locked with a password; its text cannot be read "
                                     r"without it \(a copy saved without the password can be\)\.$"):
        pdf_text(locked(pdf_bytes(PAPER), user_password="s3cret"), "secret.pdf")
    whole = pdf_bytes(PAPER)
    for damaged in (whole[: len(whole) // 2], b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", b"%PDF-1.7\n" + bytes(4000)):
        with pytest.raises(NoText, match=r"^cut\.pdf is (not a PDF that can be read|a damaged PDF) \(.+\)\.$"):
            pdf_text(damaged, "cut.pdf")


def test_a_pdf_locked_only_against_printing_opens_without_a_password():
    # (AES-256 with an empty user password: many vendors' datasheets)
    assert "the cache hit rate was 0.97" in pdf_text(locked(pdf_bytes(PAPER), user_password=""), "sheet.pdf").text


def test_a_book_longer_than_any_window_is_read_to_the_text_limit_and_says_where_it_stopped(monkeypatch):
    monkeypatch.setattr("core.pdf_text.TEXT_MAX_CHARS", 300)
    book = [[f"Chapter {n}: " + "words " * 20] for n in range(1, 11)]
    found = pdf_text(pdf_bytes(book), "book.pdf")
    assert found.pages_read == 3 and found.pages == 10
    assert found.text.rstrip().endswith("[the rest of the PDF's text is not read: 396 characters of it already, "
                                        "3 pages of 10]")
    assert "Chapter 3:" in found.text and "Chapter 4:" not in found.text
    assert found.summary() == "a PDF of 10 pages, text of the first 3"


def test_the_text_is_extracted_once_per_version_of_the_file(tmp_path, monkeypatch):
    pdf, cache = write_pdf(tmp_path / "paper.pdf", PAPER), tmp_path / "cache"
    kept, found = cached_text(pdf, cache, "paper.pdf")
    assert kept.read_text(encoding="utf-8") == pdf_text(pdf, "paper.pdf").text and found.pages == 3
    monkeypatch.setattr("core.pdf_text.pdf_text", lambda *_: pytest.fail("extracted again"))
    again, facts = cached_text(pdf, cache, "paper.pdf")
    assert again == kept and (facts.pages, facts.pictured_pages, facts.pages_read) == (3, 1, 3)
    monkeypatch.undo()
    write_pdf(pdf, [["The second edition."]])
    newer, found = cached_text(pdf, cache, "paper.pdf")
    assert newer != kept and "The second edition." in newer.read_text(encoding="utf-8") and found.pages == 1
