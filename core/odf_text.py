"""The text of an OpenDocument text (.odt) or spreadsheet (.ods): LibreOffice's own formats, what
many on Linux write their specifications and keep their figures in (see core/documents.py).

Read from content.xml with the standard library, laid out as Word's and Excel's are (core/
office_text.py): a text's headings marked #, list items -, tables in Markdown; a spreadsheet's
rows as CSV lines by sheet, row K on the K-th line after the sheet's line. OpenDocument keeps a
cell's value beside its display (office:value, office:date-value), so no number format is needed.
"""

from __future__ import annotations

import zipfile
from io import BytesIO
from pathlib import Path
from xml.etree import ElementTree

from core import documents
from core.documents import DocumentText, NoText
from core.office_text import (
    cell_text,
    failures_named,
    joined_blocks,
    markdown_table,
    part_xml,
    sheets_text,
)

_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_WHAT = {"odt": "OpenDocument text", "ods": "OpenDocument spreadsheet"}
# A cell or a row repeated this often is a sheet's filler to its last row or column (LibreOffice
# writes 1,048,576 empty rows as one element), not data to write out.
MAX_REPEATED = 10_000


def odf_text(source: Path | bytes, name: str, kind: str) -> DocumentText:
    """The text of the OpenDocument file at `source` of kind "odt" or "ods"; NoText saying why not."""
    with failures_named(name, f"an {_WHAT[kind]}"), \
            zipfile.ZipFile(BytesIO(source) if isinstance(source, bytes) else source) as archive:
        body = part_xml(archive, "content.xml").find(f"{_OFFICE}body")
        return _text(body) if kind == "odt" else _spreadsheet(body)


# --- Text ---------------------------------------------------------------------------------------

def _text(body: ElementTree.Element | None) -> DocumentText:
    text = body.find(f"{_OFFICE}text") if body is not None else None
    blocks: list[str] = []
    for element in text if text is not None else ():
        if sum(map(len, blocks)) > documents.TEXT_MAX_CHARS:
            blocks.append("[the rest of the document's text is not read]")
            break
        blocks.extend(_blocks(element))
    blocks = [block for block in blocks if block.strip()]
    if not blocks:
        raise NoText("has no text (pictures only, or empty).")
    return DocumentText(joined_blocks(blocks) + "\n", "an OpenDocument text",
                        "its headings marked #, list items -, tables in Markdown")


def _blocks(element: ElementTree.Element, in_list: bool = False) -> list[str]:
    tag = element.tag
    if tag == f"{_TEXT}h":
        level = int(element.get(f"{_TEXT}outline-level") or 1)
        return [f"\n{'#' * max(1, min(level, 6))} {_inline(element).strip()}"]
    if tag == f"{_TEXT}p":
        line = _inline(element).strip()
        return [f"- {line}" if in_list and line else line]
    if tag == f"{_TEXT}list":
        return [block for item in element for child in item for block in _blocks(child, in_list=True)]
    if tag == f"{_TABLE}table":
        return [markdown_table([[_cell_words(cell) for cell in _cells(row)] for row in element.iter(f"{_TABLE}table-row")])]
    if tag == f"{_TEXT}section":
        return [block for child in element for block in _blocks(child, in_list)]
    return []


def _inline(element: ElementTree.Element) -> str:
    """A paragraph's text: its spans and links, spaces (text:s c="N"), tabs and line breaks; not the
    notes' bodies, which are not the sentence's words."""
    out = [element.text or ""]
    for child in element:
        tag = child.tag
        if tag == f"{_TEXT}s":
            out.append(" " * int(child.get(f"{_TEXT}c") or 1))
        elif tag == f"{_TEXT}tab":
            out.append("\t")
        elif tag == f"{_TEXT}line-break":
            out.append("\n")
        elif tag != f"{_TEXT}note":
            out.append(_inline(child))
        out.append(child.tail or "")
    return "".join(out)


def _cells(row: ElementTree.Element) -> list[ElementTree.Element]:
    return [cell for cell in row if cell.tag in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell")]


def _cell_words(cell: ElementTree.Element) -> str:
    return " ".join(_inline(p).strip() for p in cell.iter(f"{_TEXT}p"))


# --- Spreadsheet --------------------------------------------------------------------------------

def _spreadsheet(body: ElementTree.Element | None) -> DocumentText:
    spreadsheet = body.find(f"{_OFFICE}spreadsheet") if body is not None else None
    sheets = spreadsheet.findall(f"{_TABLE}table") if spreadsheet is not None else []
    if not sheets:
        raise NoText("has no sheets.")
    return sheets_text([(sheet.get(f"{_TABLE}name") or f"Sheet{number}", lambda sheet=sheet: _rows(sheet))
                        for number, sheet in enumerate(sheets, start=1)], "an OpenDocument spreadsheet")


def _rows(sheet: ElementTree.Element) -> list[list[str]]:
    """The sheet's rows from row 1 (empty ones kept, so that line K is row K), a row or cell
    repeated (table:number-*-repeated) written out, except the empty filler at the end."""
    rows: list[list[str]] = []
    empty_rows = 0  # empty rows not written yet: only if a row with values comes after them
    for row in sheet.iter(f"{_TABLE}table-row"):
        repeat = int(row.get(f"{_TABLE}number-rows-repeated") or 1)
        cells = _row_cells(row)
        if not cells:
            empty_rows += repeat
            continue
        rows.extend([] for _ in range(empty_rows))
        empty_rows = 0
        rows.extend(list(cells) for _ in range(min(repeat, MAX_REPEATED)))
    return rows


def _row_cells(row: ElementTree.Element) -> list[str]:
    cells: list[str] = []
    empty = 0  # empty cells not written yet: only if a cell with a value comes after them
    for cell in _cells(row):
        repeat = int(cell.get(f"{_TABLE}number-columns-repeated") or 1)
        value = _value(cell)
        if not value:
            empty += repeat
            continue
        cells.extend([""] * empty)
        empty = 0
        cells.extend([value] * min(repeat, MAX_REPEATED))
    return cells


def _value(cell: ElementTree.Element) -> str:
    """A cell's value as the workbook keeps it (a number unrounded, a date as a date), else its text."""
    kind = cell.get(f"{_OFFICE}value-type") or ""
    if kind in ("float", "percentage", "currency") and (number := cell.get(f"{_OFFICE}value")) is not None:
        try:
            return cell_text(float(number))
        except ValueError:
            return number
    if kind == "date" and (day := cell.get(f"{_OFFICE}date-value")):
        return day.removesuffix("T00:00:00").replace("T", " ")
    if kind == "boolean":
        return cell_text(cell.get(f"{_OFFICE}boolean-value") == "true")
    return "\n".join(_inline(p) for p in cell.findall(f"{_TEXT}p"))
