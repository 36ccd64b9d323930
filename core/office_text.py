"""The text of a Word document, an Excel workbook or a PowerPoint deck (see core/documents.py).

Word's and PowerPoint's are read from their XML with the standard library: a document's body is
paragraphs and tables in order, which is all the agent needs (headings marked #, list items -,
tables in Markdown). Excel's values need the workbook's number formats to tell a date from a number
(45,292 is 2024-01-01 in a date cell), which openpyxl knows: it reads them, in its streaming mode.
"""

from __future__ import annotations

import csv
import io
import re
import warnings
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, time
from io import BytesIO
from pathlib import Path
from xml.etree import ElementTree

from core import documents
from core.documents import DocumentText, NoText
from core.text import counted

PART_MAX_BYTES = 200_000_000  # a part of the file, unpacked: more is a zip bomb, not a document
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_REL = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_HEADING_STYLE = re.compile(r"heading (\d)")
_WHAT = {"docx": "Word document", "xlsx": "Excel workbook", "pptx": "PowerPoint deck"}
# openpyxl warns of what it leaves out of a workbook it would save (data validation, a missing
# default style); a workbook read for its values loses nothing by it.
warnings.filterwarnings("ignore", category=UserWarning, module="openpyxl")


def office_text(source: Path | bytes, name: str, kind: str) -> DocumentText:
    """The text of the Office file at `source` of kind "docx", "xlsx" or "pptx"; NoText saying why not."""
    with failures_named(name, f"a {_WHAT[kind]}"):
        if kind == "xlsx":
            return _workbook(source)
        with zipfile.ZipFile(BytesIO(source) if isinstance(source, bytes) else source) as archive:
            return _document(archive) if kind == "docx" else _deck(archive)


@contextmanager
def failures_named(name: str, what: str) -> Iterator[None]:
    """A document's reading that fails says so as NoText, of the file `name`, `what` it is ("a Word
    document"): its own NoText ("has no text"), an archive or XML that cannot be read, or a file
    damaged in another of the many ways a parser meets."""
    try:
        yield
    except NoText as why:  # (said of "it": named here)
        raise NoText(f"{name} {why}") from None
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError, EOFError) as exc:
        raise NoText(f"{name} is not {what} that can be read ({type(exc).__name__}: {exc}).") from None
    except Exception as exc:  # noqa: BLE001 (a damaged file fails the parsers in many ways; each says the same)
        damaged = what.replace("a ", "a damaged ", 1).replace("an ", "a damaged ", 1)
        raise NoText(f"{name} is {damaged} ({type(exc).__name__}: {exc}).") from None


# --- Word ---------------------------------------------------------------------------------------

def _document(archive: zipfile.ZipFile) -> DocumentText:
    marks = _style_marks(archive)
    body = part_xml(archive, "word/document.xml").find(f"{_W}body")
    blocks: list[str] = []
    chars = 0
    for element in body if body is not None else ():
        if chars > documents.TEXT_MAX_CHARS:
            blocks.append("[the rest of the document's text is not read]")
            break
        if element.tag == f"{_W}p":
            block = _paragraph(element, marks)
        elif element.tag == f"{_W}tbl":
            block = _table(element)
        else:
            continue
        if block.strip():
            blocks.append(block)
            chars += len(block)
    if not blocks:
        raise NoText("has no text (pictures only, or empty).")
    return DocumentText(joined_blocks(blocks) + "\n", "a Word document", "its headings marked #, list items -, tables in Markdown")


def _style_marks(archive: zipfile.ZipFile) -> dict[str, str]:
    """What a paragraph of a style starts with: "# " to "######### " for headings, "- " for list
    items. Headings by the style's name, which Word keeps in English whatever the language of its
    interface ("heading 1"; the id may be "berschrift1"); list styles by their numbering ("List
    Bullet" numbers its paragraphs itself, with nothing in the paragraph to say so)."""
    try:
        styles = part_xml(archive, "word/styles.xml")
    except KeyError:
        return {}
    marks = {}
    for style in styles.iter(f"{_W}style"):
        named = style.find(f"{_W}name")
        title = (named.get(f"{_W}val") or "").lower() if named is not None else ""
        identity = style.get(f"{_W}styleId") or ""
        if heading := _HEADING_STYLE.fullmatch(title):
            marks[identity] = "#" * int(heading.group(1)) + " "
        elif title == "title":
            marks[identity] = "# "
        elif style.find(f"{_W}pPr/{_W}numPr") is not None:
            marks[identity] = "- "
    return marks


def _paragraph(paragraph: ElementTree.Element, marks: dict[str, str]) -> str:
    text = _runs(paragraph).strip()
    if not text:
        return ""
    properties = paragraph.find(f"{_W}pPr")
    style = properties.find(f"{_W}pStyle") if properties is not None else None
    mark = marks.get(style.get(f"{_W}val") or "", "") if style is not None else ""
    if not mark and properties is not None and properties.find(f"{_W}numPr") is not None:
        mark = "- "
    return f"\n{mark}{text}" if mark.startswith("#") else f"{mark}{text}"


def _runs(element: ElementTree.Element) -> str:
    """The text of a paragraph's runs: their text, tabs and line breaks (deleted text, in w:delText,
    and field codes, in w:instrText, are not text)."""
    out = []
    for part in element.iter():
        if part.tag == f"{_W}t":
            out.append(part.text or "")
        elif part.tag == f"{_W}tab":
            out.append("\t")
        elif part.tag in (f"{_W}br", f"{_W}cr"):
            out.append("\n")
    return "".join(out)


def _table(table: ElementTree.Element) -> str:
    rows = []
    for row in table.iter(f"{_W}tr"):
        cells = [" ".join(_runs(p).strip() for p in cell.iter(f"{_W}p")).strip() for cell in row.findall(f"{_W}tc")]
        rows.append(cells)
    return markdown_table(rows)


def markdown_table(rows: list[list[str]]) -> str:
    rows = [row for row in rows if any(row)]
    if not rows:
        return ""
    width = max(len(row) for row in rows)
    lines = ["| " + " | ".join(_cell(c) for c in row + [""] * (width - len(row))) + " |" for row in rows]
    lines.insert(1, "|" + " --- |" * width)
    return "\n" + "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


# --- PowerPoint ---------------------------------------------------------------------------------

def _deck(archive: zipfile.ZipFile) -> DocumentText:
    slides = _slide_parts(archive)
    parts = []
    for number, part in enumerate(slides, start=1):
        texts = _slide_texts(part_xml(archive, part))
        notes = _notes(archive, part)
        body = "\n".join(text for text in texts if text)
        if notes:
            body += f"\n(speaker notes) {notes}"
        parts.append(f"[slide {number} of {len(slides)}]\n{body.strip()}".rstrip())
    if not any("\n" in part for part in parts):
        raise NoText("has no text (pictures only, or empty).")
    return DocumentText("\n\n".join(parts) + "\n", f"a PowerPoint deck of {counted(len(slides), 'slide')}",
                        "each after a [slide K of N] line")


def _slide_parts(archive: zipfile.ZipFile) -> list[str]:
    """The slides' parts in the deck's order (presentation.xml's list, through its relationships)."""
    targets = _relationships(archive, "ppt/_rels/presentation.xml.rels", "ppt/")
    order = part_xml(archive, "ppt/presentation.xml").iter(f"{_P}sldId")
    return [targets[rid] for slide in order if (rid := slide.get(f"{_R}id")) in targets]


def _notes(archive: zipfile.ZipFile, slide_part: str) -> str:
    folder, _, file = slide_part.rpartition("/")
    related = _relationships(archive, f"{folder}/_rels/{file}.rels", f"{folder}/")
    notes = [target for target in related.values() if "notesSlide" in target]
    if not notes or notes[0] not in archive.namelist():
        return ""
    texts = []
    for shape in part_xml(archive, notes[0]).iter(f"{_P}sp"):
        placeholder = shape.find(f".//{_P}ph")
        if placeholder is not None and placeholder.get("type") == "body":  # (not the slide's picture, its number)
            texts.append(_shape_text(shape))
    return " ".join(text for text in texts if text)


def _slide_texts(slide: ElementTree.Element) -> list[str]:
    """A slide's text boxes and tables, in the order the slide holds them."""
    texts = []
    for element in slide.iter():
        if element.tag == f"{_P}sp":
            texts.append(_shape_text(element))
        elif element.tag == f"{_A}tbl":
            texts.append(markdown_table([[_shape_text(cell) for cell in row.findall(f"{_A}tc")]
                                          for row in element.findall(f"{_A}tr")]).strip("\n"))
    return texts


def _shape_text(shape: ElementTree.Element) -> str:
    lines = ["".join(t.text or "" for t in p.iter(f"{_A}t")).strip() for p in shape.iter(f"{_A}p")]
    return "\n".join(line for line in lines if line)


def _relationships(archive: zipfile.ZipFile, part: str, base: str) -> dict[str, str]:
    try:
        rels = part_xml(archive, part)
    except KeyError:
        return {}
    out = {}
    for rel in rels.iter(f"{_REL}Relationship"):
        target = rel.get("Target") or ""
        out[rel.get("Id") or ""] = target.lstrip("/") if target.startswith("/") else _normalised(base + target)
    return out


def _normalised(path: str) -> str:
    parts: list[str] = []
    for piece in path.split("/"):
        if piece == "..":
            parts and parts.pop()
        elif piece not in ("", "."):
            parts.append(piece)
    return "/".join(parts)


# --- Excel --------------------------------------------------------------------------------------

def _workbook(source: Path | bytes) -> DocumentText:
    import openpyxl  # imported at first use: most sessions read no workbook

    book = openpyxl.load_workbook(BytesIO(source) if isinstance(source, bytes) else source, read_only=True,
                                  data_only=True)  # (a formula's value as last computed, not the formula)
    try:
        if not book.worksheets:
            raise NoText("has no worksheets (charts only).")
        return sheets_text([(sheet.title, lambda sheet=sheet: _rows(sheet)) for sheet in book.worksheets],
                           "an Excel workbook")
    finally:
        book.close()


def sheets_text(sheets: list[tuple[str, Callable[[], list[list[str]]]]], what: str) -> DocumentText:
    """A workbook's text: each sheet (its name, and how to read its rows) after a line naming it,
    its rows as CSV lines from row 1, until the text is long enough."""
    parts, chars = [], 0
    for number, (title, read_rows) in enumerate(sheets, start=1):
        if chars > documents.TEXT_MAX_CHARS:
            parts.append(f"[sheet {number} of {len(sheets)}: {title}, not read: the text is long enough]")
            continue
        rows = read_rows()
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        size = f"{counted(len(rows), 'row')} × {counted(max(map(len, rows), default=0), 'column')}"
        parts.append(f"[sheet {number} of {len(sheets)}: {title}, {size}]\n{out.getvalue()}".rstrip("\n"))
        chars += out.tell()
    return DocumentText("\n\n".join(parts) + "\n", f"{what} of {counted(len(sheets), 'sheet')}",
                        "each after a [sheet K of N: NAME, …] line, its rows as CSV lines from row 1 (formulas as "
                        "their values)")


def _rows(sheet) -> list[list[str]]:
    """The sheet's rows from row 1, as text; empty rows kept (line K after the sheet's line is row K),
    empty cells and rows at the end left off."""
    rows = []
    for values in sheet.iter_rows(values_only=True):
        row = [cell_text(value) for value in values]
        while row and not row[-1]:
            row.pop()
        rows.append(row)
    while rows and not rows[-1]:
        rows.pop()
    return rows


def cell_text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time() else value.isoformat(sep=" ")
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return str(value)


# --- Both ---------------------------------------------------------------------------------------

def part_xml(archive: zipfile.ZipFile, part: str) -> ElementTree.Element:
    """A part of the file parsed; one unpacking to more than PART_MAX_BYTES, or declaring a DTD
    (no Office part does; entities defined in one can expand without end), is refused."""
    if archive.getinfo(part).file_size > PART_MAX_BYTES:
        raise NoText(f"unpacks its {part} to more than {PART_MAX_BYTES // 1_000_000} MB: not read.")
    data = archive.read(part)
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data[:4096]:
        raise NoText(f"declares a DTD in its {part}, which no Office file does: not read.")
    return ElementTree.fromstring(data)


def joined_blocks(blocks: list[str]) -> str:
    """The blocks one after the other, a blank line around headings and tables (never two)."""
    return re.sub(r"\n{3,}", "\n\n", "\n".join(blocks)).strip("\n")
