"""Documents the agent reads as text (core/documents.py): PDFs page by page, Word documents as
Markdown, Excel workbooks as CSV by sheet, PowerPoint decks by slide."""

from __future__ import annotations

import zipfile
from datetime import date, datetime
from io import BytesIO

import pytest

from core.documents import (
    NoText,
    Places,
    cached_text,
    document_text,
    kind_of,
    kind_of_file,
    old_office_hint,
)
from core.pdf_text import as_written, page_count
from tests.support.office import (
    docx_bytes,
    ods_bytes,
    odt_bytes,
    pptx_bytes,
    xlsx_bytes,
)
from tests.support.pdfs import locked, pdf_bytes, write_pdf

PAPER = [["KV-cache reuse in agent loops", "Results (table 2): the cache hit rate was 0.97."],
         None,
         ["第二章 结论", "缓存命中率为 0.97。Mixed: café"]]


def test_each_page_comes_under_its_number_and_a_page_of_pictures_is_said_so():
    found = document_text(pdf_bytes(PAPER), "paper.pdf", "pdf")
    assert found.text == ("[page 1 of 3]\nKV-cache reuse in agent loops\nResults (table 2): the cache hit rate was "
                          "0.97.\n\n[page 2 of 3: no text, a picture only (a scan, a figure)]\n\n[page 3 of 3]\n"
                          "第二章 结论\n缓存命中率为 0.97。Mixed: café\n")
    assert found.about == "a PDF of 3 pages (1 of them pictures only), each page after a [page K of N] line"
    assert page_count(pdf_bytes(PAPER), "paper.pdf") == 3


def test_characters_a_font_names_for_the_ones_written_read_as_written(tmp_path):
    # A CJK font's ToUnicode map gave the Kangxi radical ⽂ (U+2F42) for 文, so a search for 中文
    # found nothing; a typesetter's ligature ﬁ broke "find". Qt's PDFs put tabs between words.
    found = document_text(pdf_bytes([["上下⽂⼯程：中⽂", "We ﬁnd the ﬂow ﬃcient; x² and ，stay"]]), "cn.pdf", "pdf")
    assert found.text == "[page 1 of 1]\n上下文工程：中文\nWe find the flow fficient; x² and ，stay\n"
    assert as_written("KV\t\ncache\thit rate\t\t") == "KV\ncache hit rate"


def test_a_document_is_known_by_its_contents_not_only_its_name(tmp_path):
    pdf, docx, xlsx = pdf_bytes(PAPER), docx_bytes(["Hello"]), xlsx_bytes({"S": [[1]]})
    assert kind_of(pdf, "report") == "pdf" and kind_of(b"\r\n" * 20 + pdf, "x") == "pdf"
    assert kind_of(b" " * 2000 + pdf, "paper.pdf") is None  # (a signature that far in is no PDF's)
    # A notebook by its name or type, though its first cell names a PDF's signature.
    notebook = b'{\n "cells": [{"source": "with open(f, \'rb\') as fh: assert fh.read(5) == b\'%PDF-\'"}]}'
    assert kind_of(notebook, "check.ipynb") == "ipynb" and kind_of(notebook, "x", "application/x-ipynb+json") == "ipynb"
    assert kind_of(b"\xef\xbb\xbf" + notebook, "check.ipynb") == "ipynb" and kind_of(b"PK", "a.ipynb") is None
    assert kind_of(docx, "spec.docx") == "docx" and kind_of(xlsx, "FIGURES.XLSX") == "xlsx"
    # A download: by its Content-Type, else by the parts inside it.
    assert kind_of(docx, "https://x.org/get?id=7", "application/vnd.openxmlformats-officedocument."
                   "wordprocessingml.document") == "docx"
    assert kind_of(xlsx, "https://x.org/get?id=7", "application/octet-stream", whole=xlsx) == "xlsx"
    assert kind_of(pptx_bytes([["x"]]), "download", whole=pptx_bytes([["x"]])) == "pptx"
    plain_zip = BytesIO()
    with zipfile.ZipFile(plain_zip, "w") as archive:
        archive.writestr("src/app.py", "print()")
    assert kind_of(plain_zip.getvalue(), "release.zip", whole=plain_zip.getvalue()) is None
    assert kind_of(b"PK\x03\x04 cut short", "notes.docx") == "docx"  # (then said to be damaged when read)
    (tmp_path / "report").write_bytes(pdf)
    (tmp_path / "notes.pdf").write_text("not a pdf at all", encoding="utf-8")
    assert kind_of_file(tmp_path / "report") == "pdf"
    assert kind_of_file(tmp_path / "notes.pdf") is None and kind_of_file(tmp_path / "missing.pdf") is None


def test_a_scan_a_locked_file_and_a_damaged_one_say_why_they_give_no_text():
    with pytest.raises(NoText, match=r"^scan\.pdf has no text, only pictures of its 2 pages \(a scan, most likely\): "
                                     r".* one run through OCR \(ocrmypdf"):
        document_text(pdf_bytes([None, None]), "scan.pdf", "pdf")
    with pytest.raises(NoText, match=r"^secret\.pdf is a PDF locked with a password; its text cannot be read "
                                     r"without it \(a copy saved without the password can be\)\.$"):
        document_text(locked(pdf_bytes(PAPER), user_password="s3cret"), "secret.pdf", "pdf")
    whole = pdf_bytes(PAPER)
    for damaged in (whole[: len(whole) // 2], b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", b"%PDF-1.7\n" + bytes(4000)):
        with pytest.raises(NoText, match=r"^cut\.pdf is (not a PDF that can be read|a damaged PDF) \(.+\)\.$"):
            document_text(damaged, "cut.pdf", "pdf")
    for kind, data in (("docx", docx_bytes(["x"])), ("xlsx", xlsx_bytes({"S": [[1]]})), ("pptx", pptx_bytes([["x"]]))):
        with pytest.raises(NoText, match=rf"^cut\.{kind} is (not a|a damaged) (Word document|Excel workbook|"
                                         r"PowerPoint deck)( that can be read)? \(.+\)\.$"):
            document_text(data[: len(data) // 2], f"cut.{kind}", kind)
    for kind, data in (("odt", odt_bytes("<text:p>x</text:p>")), ("ods", ods_bytes(""))):
        with pytest.raises(NoText, match=rf"^cut\.{kind} is (not an|a damaged) OpenDocument (text|spreadsheet)"
                                         r"( that can be read)? \(.+\)\.$"):
            document_text(data[: len(data) // 2], f"cut.{kind}", kind)
    with pytest.raises(NoText, match=r"^empty\.docx has no text \(pictures only, or empty\)\.$"):
        document_text(docx_bytes([]), "empty.docx", "docx")


def test_a_pdf_locked_only_against_printing_opens_without_a_password():
    # (AES-256 with an empty user password: many vendors' datasheets)
    assert "the cache hit rate was 0.97" in document_text(locked(pdf_bytes(PAPER), user_password=""), "sheet.pdf",
                                                          "pdf").text


def test_a_book_longer_than_any_window_is_read_to_the_text_limit_and_says_where_it_stopped(monkeypatch):
    monkeypatch.setattr("core.documents.TEXT_MAX_CHARS", 300)
    book = [[f"Chapter {n}: " + "words " * 20] for n in range(1, 11)]
    found = document_text(pdf_bytes(book), "book.pdf", "pdf")
    assert found.text.rstrip().endswith("[the rest of the PDF's text is not read: 393 characters of it already, "
                                        "3 pages of 10]")
    assert "Chapter 3:" in found.text and "Chapter 4:" not in found.text
    assert found.what == "a PDF of 10 pages, text of the first 3"


def test_a_word_document_reads_as_markdown_in_its_order():
    found = document_text(docx_bytes([
        ("Titel", "Quarterly report"), ("1", "Results"), "Revenue grew\t12 %.", ("list", "first point"),
        ("list", "second | point"), ("ListBullet", "third point"), [["Region", "Q3"], ["EU", "1,200"], ["", ""]], ("2", "Risks"),
        "The deleted text stays out.", "   "]), "report.docx", "docx")
    assert found.text == ("# Quarterly report\n\n# Results\nRevenue grew\t12 %.\n- first point\n- second | point\n- third point\n\n"
                          "| Region | Q3 |\n| --- | --- |\n| EU | 1,200 |\n\n## Risks\nThe deleted text stays out.\n")
    assert found.about == "a Word document, its headings marked #, list items -, tables in Markdown"


def test_a_workbooks_sheets_read_as_csv_with_dates_as_dates_and_row_k_on_line_k():
    found = document_text(xlsx_bytes({
        "Q3 sales, EU": [["Region", "Revenue", "Date", "Note"], ["EU", 1200, date(2024, 1, 1), 'say "hi", then go'],
                         [], ["US", 3400.5, datetime(2024, 2, 3, 14, 30), True]],
        "Empty": []}), "figures.xlsx", "xlsx")
    assert found.text == ('[sheet 1 of 2: Q3 sales, EU, 4 rows × 4 columns]\nRegion,Revenue,Date,Note\n'
                          'EU,1200,2024-01-01,"say ""hi"", then go"\n\nUS,3400.5,2024-02-03 14:30:00,TRUE\n\n'
                          '[sheet 2 of 2: Empty, 0 rows × 0 columns]\n')
    assert found.what == "an Excel workbook of 2 sheets"


def test_a_decks_slides_read_in_the_decks_order_with_tables_and_speaker_notes():
    found = document_text(pptx_bytes([["Roadmap", "2025 and after"], ["Agenda\nOne\nTwo", [["A", "B"], ["1", "2"]]]],
                                     notes={2: "Say the numbers slowly."}), "talk.pptx", "pptx")
    assert found.text == ("[slide 1 of 2]\nRoadmap\n2025 and after\n\n[slide 2 of 2]\nAgenda\nOne\nTwo\n"
                          "| A | B |\n| --- | --- |\n| 1 | 2 |\n(speaker notes) Say the numbers slowly.\n")
    assert found.what == "a PowerPoint deck of 2 slides"


def test_an_opendocument_text_reads_as_markdown_with_its_spaces_lists_and_tables():
    found = document_text(odt_bytes(
        '<text:h text:outline-level="1">Export</text:h>'
        '<text:p>The CSV has<text:s text:c="2"/>a <text:span>header</text:span> row.<text:note><text:note-body>'
        '<text:p>A footnote.</text:p></text:note-body></text:note></text:p>'
        '<text:list><text:list-item><text:p>first</text:p></text:list-item>'
        '<text:list-item><text:p>second</text:p></text:list-item></text:list>'
        '<table:table><table:table-row><table:table-cell><text:p>Field</text:p></table:table-cell>'
        '<table:table-cell><text:p>Type</text:p></table:table-cell></table:table-row>'
        '<table:table-row><table:table-cell><text:p>id</text:p></table:table-cell>'
        '<table:table-cell><text:p>int</text:p></table:table-cell></table:table-row></table:table>'
        '<text:section><text:h text:outline-level="2">中文</text:h><text:p>导出的编码是 UTF-8。</text:p></text:section>'),
        "spec.odt", "odt")
    assert found.text == ("# Export\nThe CSV has  a header row.\n- first\n- second\n\n| Field | Type |\n"
                          "| --- | --- |\n| id | int |\n\n## 中文\n导出的编码是 UTF-8。\n")
    assert found.what == "an OpenDocument text"


def test_an_opendocument_spreadsheet_keeps_its_values_and_skips_its_filler():
    cell = '<table:table-cell office:value-type="{}" {}><text:p>{}</text:p></table:table-cell>'
    found = document_text(ods_bytes(
        '<table:table table:name="Q3, EU">'
        '<table:table-row>' + cell.format("string", "", "Day") + cell.format("string", "", "Revenue") + '</table:table-row>'
        '<table:table-row>' + cell.format("date", 'office:date-value="2025-07-01"', "01/07/25")
        + cell.format("float", 'office:value="1200.5"', "1,200.50 €") + '</table:table-row>'
        '<table:table-row table:number-rows-repeated="2"><table:table-cell table:number-columns-repeated="1024"/>'
        '</table:table-row>'
        '<table:table-row>' + cell.format("boolean", 'office:boolean-value="true"', "TRUE")
        + '<table:table-cell table:number-columns-repeated="2"/>'
        + cell.format("percentage", 'office:value="0.25"', "25%") + '</table:table-row>'
        '<table:table-row table:number-rows-repeated="1048570"><table:table-cell table:number-columns-repeated="1024"/>'
        '</table:table-row></table:table>'
        '<table:table table:name="Notes"><table:table-row>' + cell.format("string", "", "Unaudited, for now.")
        + '</table:table-row></table:table>'), "figures.ods", "ods")
    assert found.text == ("[sheet 1 of 2: Q3, EU, 5 rows × 4 columns]\nDay,Revenue\n2025-07-01,1200.5\n\n\n"
                          "TRUE,,,0.25\n\n[sheet 2 of 2: Notes, 1 row × 1 column]\n\"Unaudited, for now.\"\n")
    assert found.what == "an OpenDocument spreadsheet of 2 sheets"
    places = Places()
    assert [places.of(n, line) for n, line in enumerate(found.text.splitlines(), start=1)][5] == "(sheet Q3, EU, row 5) "
    # A download with no telling name or type is known by its mimetype part.
    assert kind_of(ods_bytes(""), "export?id=3", "application/octet-stream", whole=ods_bytes("")) == "ods"
    assert kind_of(odt_bytes(""), "notes.odt") == "odt"


def test_an_office_file_unpacking_to_a_bomb_or_declaring_entities_is_refused(monkeypatch):
    monkeypatch.setattr("core.office_text.PART_MAX_BYTES", 1_000)
    with pytest.raises(NoText, match=r"^big\.docx unpacks its word/document\.xml to more than 0 MB: not read\.$"):
        document_text(docx_bytes(["word " * 1_000]), "big.docx", "docx")
    monkeypatch.undo()
    laughs = BytesIO()
    with zipfile.ZipFile(laughs, "w") as archive:
        archive.writestr("word/document.xml", '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><w:document/>')
    with pytest.raises(NoText, match=r"^lolz\.docx declares a DTD in its word/document\.xml"):
        document_text(laughs.getvalue(), "lolz.docx", "docx")


def test_an_older_office_file_or_one_with_a_password_is_said_so():
    ole = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100)
    assert old_office_hint(ole, "budget.xls") == (" It is an Office file (the format before 2007) or one locked with a "
                                                  "password: saved as .docx, .xlsx or .pptx without a password (or as "
                                                  "PDF), it can be read.")
    assert old_office_hint(ole, "budget.xlsx").startswith(" It is an Office file or one locked with a password")
    assert old_office_hint(b"\x7fELF", "a.out") == ""


def test_a_lines_place_is_its_page_its_slide_or_its_sheet_and_row():
    places = Places()
    lines = ["[page 1 of 2]", "a", "[page 2 of 2]", "b", "[sheet 1 of 1: Q3, EU, 3 rows × 2 columns]", "h", "", "x"]
    assert [places.of(n, line) for n, line in enumerate(lines, start=1)] == [
        "(page 1) ", "(page 1) ", "(page 2) ", "(page 2) ", "", "(sheet Q3, EU, row 1) ", "(sheet Q3, EU, row 2) ",
        "(sheet Q3, EU, row 3) "]


def test_the_text_is_extracted_once_per_version_of_the_file(tmp_path, monkeypatch):
    pdf, cache = write_pdf(tmp_path / "paper.pdf", PAPER), tmp_path / "cache"
    kept, about = cached_text(pdf, cache, "paper.pdf", "pdf")
    assert kept.read_text(encoding="utf-8") == document_text(pdf, "paper.pdf", "pdf").text
    assert about.startswith("a PDF of 3 pages")
    monkeypatch.setattr("core.documents.document_text", lambda *_: pytest.fail("extracted again"))
    assert cached_text(pdf, cache, "paper.pdf", "pdf") == (kept, about)
    monkeypatch.undo()
    write_pdf(pdf, [["The second edition."]])
    newer, about = cached_text(pdf, cache, "paper.pdf", "pdf")
    assert newer != kept and "The second edition." in newer.read_text(encoding="utf-8") and "1 page," in about
