"""Word, Excel and PowerPoint files made for the tests: Word's and PowerPoint's written part by part
as Office writes them (the parts the readers look at, in their namespaces), Excel's by openpyxl."""

from __future__ import annotations

import zipfile
from datetime import date, datetime
from io import BytesIO
from pathlib import Path
from xml.sax.saxutils import escape

W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
A = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
P = 'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"'
R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
RELS = 'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"'
# Word keeps a style's name in English, its id in the interface's language (German's here).
STYLES = (f'<w:styles {W}><w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>'
          '<w:style w:type="paragraph" w:styleId="berschrift2"><w:name w:val="heading 2"/></w:style>'
          '<w:style w:type="paragraph" w:styleId="Titel"><w:name w:val="Title"/></w:style>'
          # (a list style numbers its paragraphs itself: nothing in the paragraph says it is a list item)
          '<w:style w:type="paragraph" w:styleId="ListBullet"><w:name w:val="List Bullet"/><w:pPr><w:numPr>'
          '<w:numId w:val="2"/></w:numPr></w:pPr></w:style></w:styles>')

Block = str | tuple[str, str] | list[list[str]]  # a paragraph; (style, text): a heading ("1", "2", "Titel") or a
#                                                    list item ("list"); a table's rows


def docx_bytes(blocks: list[Block]) -> bytes:
    body = "".join(_word_block(block) for block in blocks)
    return _zipped({"[Content_Types].xml": _types("word/document.xml", "wordprocessingml.document.main"),
                    "word/document.xml": f'<?xml version="1.0" encoding="UTF-8"?><w:document {W}><w:body>{body}'
                                         '<w:sectPr/></w:body></w:document>',
                    "word/styles.xml": STYLES})


def pptx_bytes(slides: list[list[str | list[list[str]]]], notes: dict[int, str] | None = None) -> bytes:
    """A deck of `slides` (each its text boxes, a list of rows being a table); `notes` by slide number."""
    notes = notes or {}
    parts = {"[Content_Types].xml": _types("ppt/presentation.xml", "presentationml.presentation.main")}
    ids = "".join(f'<p:sldId id="{256 + n}" r:id="rId{n}"/>' for n in range(1, len(slides) + 1))
    parts["ppt/presentation.xml"] = f'<p:presentation {P} {R}><p:sldIdLst>{ids}</p:sldIdLst></p:presentation>'
    # (listed backwards: the deck's order is presentation.xml's, not the parts' names)
    rels = "".join(f'<Relationship Id="rId{n}" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
                   f'relationships/slide" Target="slides/slide{n}.xml"/>' for n in range(len(slides), 0, -1))
    parts["ppt/_rels/presentation.xml.rels"] = f"<Relationships {RELS}>{rels}</Relationships>"
    for n, shapes in enumerate(slides, start=1):
        tree = "".join(_slide_shape(shape) for shape in shapes)
        parts[f"ppt/slides/slide{n}.xml"] = f"<p:sld {P} {A}><p:cSld><p:spTree>{tree}</p:spTree></p:cSld></p:sld>"
        if n in notes:
            parts[f"ppt/slides/_rels/slide{n}.xml.rels"] = (
                f'<Relationships {RELS}><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/'
                f'2006/relationships/notesSlide" Target="../notesSlides/notesSlide{n}.xml"/></Relationships>')
            parts[f"ppt/notesSlides/notesSlide{n}.xml"] = (
                f'<p:notes {P} {A}><p:cSld><p:spTree>'
                '<p:sp><p:nvSpPr><p:nvPr><p:ph type="sldNum"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>7</a:t>'
                '</a:r></a:p></p:txBody></p:sp>'
                f'<p:sp><p:nvSpPr><p:nvPr><p:ph type="body"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>'
                f'{escape(notes[n])}</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:notes>')
    return _zipped(parts)


def xlsx_bytes(sheets: dict[str, list[list]]) -> bytes:
    """A workbook of `sheets` (name → rows of values: numbers, text, dates, formulas as "=…")."""
    import openpyxl

    book = openpyxl.Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
        for row in sheet.iter_rows():
            for cell in row:
                if isinstance(cell.value, datetime | date):
                    cell.number_format = "yyyy-mm-dd" if isinstance(cell.value, date) and not isinstance(
                        cell.value, datetime) else "yyyy-mm-dd hh:mm"
    out = BytesIO()
    book.save(out)
    return out.getvalue()


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _word_block(block: Block) -> str:
    if isinstance(block, list):
        rows = "".join("<w:tr>" + "".join(f"<w:tc><w:p><w:r><w:t>{escape(cell)}</w:t></w:r></w:p></w:tc>" for cell in row)
                       + "</w:tr>" for row in block)
        return f"<w:tbl>{rows}</w:tbl>"
    style, text = block if isinstance(block, tuple) else ("", block)
    properties = ('<w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr>' if style == "list" else
                  f'<w:pPr><w:pStyle w:val="{ {"1": "berschrift1", "2": "berschrift2"}.get(style, style)}"/></w:pPr>'
                  if style else "")
    runs = "".join(f'<w:r><w:t xml:space="preserve">{escape(piece)}</w:t></w:r>' + ("<w:r><w:tab/></w:r>" if n < len(
        text.split("\t")) - 1 else "") for n, piece in enumerate(text.split("\t")))
    deleted = '<w:del><w:r><w:delText>struck out</w:delText></w:r></w:del>' if "deleted" in text else ""
    return f"<w:p>{properties}{runs}{deleted}</w:p>"


def _slide_shape(shape: str | list[list[str]]) -> str:
    if isinstance(shape, list):
        rows = "".join("<a:tr>" + "".join(f"<a:tc><a:txBody><a:p><a:r><a:t>{escape(c)}</a:t></a:r></a:p></a:txBody></a:tc>"
                                          for c in row) + "</a:tr>" for row in shape)
        return f"<p:graphicFrame><a:graphic><a:graphicData><a:tbl>{rows}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>"
    paragraphs = "".join(f"<a:p><a:r><a:t>{escape(line)}</a:t></a:r></a:p>" for line in shape.split("\n"))
    return f"<p:sp><p:txBody>{paragraphs}</p:txBody></p:sp>"


def _types(part: str, kind: str) -> str:
    return ('<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            f'<Override PartName="/{part}" ContentType="application/vnd.openxmlformats-officedocument.{kind}+xml"/>'
            "</Types>")


def _zipped(parts: dict[str, str]) -> bytes:
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
    return out.getvalue()


OFFICE_NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
             'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
             'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"')


def odt_bytes(body: str) -> bytes:
    """An OpenDocument text whose office:text holds `body` (its XML, as LibreOffice writes it)."""
    return _odf("text", f"<office:text>{body}</office:text>")


def ods_bytes(body: str) -> bytes:
    """An OpenDocument spreadsheet whose office:spreadsheet holds `body` (its tables' XML)."""
    return _odf("spreadsheet", f"<office:spreadsheet>{body}</office:spreadsheet>")


def _odf(kind: str, body: str) -> bytes:
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), f"application/vnd.oasis.opendocument.{kind}")  # (first, stored)
        archive.writestr("content.xml", f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {OFFICE_NS} '
                                        f'office:version="1.3"><office:body>{body}</office:body></office:document-content>')
        archive.writestr("META-INF/manifest.xml", "<manifest/>")
    return out.getvalue()
