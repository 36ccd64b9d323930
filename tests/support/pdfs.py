"""PDFs made for the tests, byte by byte as a PDF writer makes them: pages of text in a standard
font, Chinese text in a CID font with its ToUnicode map (as a Chinese paper's PDF has), pages with no
text (a scan's), and the same locked with a password (by pypdf). Nothing is downloaded."""

from __future__ import annotations

import os
import zlib
from io import BytesIO
from pathlib import Path

Page = list[str] | None  # its lines; None: a page with a drawing and no text, as a scan's


def pdf_bytes(pages: list[Page], *, compressed: bool = True, padding: int = 0) -> bytes:
    """A PDF of `pages`. Lines with characters outside Latin-1 are written in a CID font (Identity-H
    with a ToUnicode map), the rest in Helvetica. `padding` bytes of an embedded file's noise make it
    as large as a paper with its figures."""
    cjk = sorted({ch for page in pages if page for line in page if _wide(line) for ch in line})
    cids = {ch: n for n, ch in enumerate(cjk, start=1)}
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    def stream(data: bytes, extra: bytes = b"") -> int:
        if compressed:
            data, extra = zlib.compress(data), extra + b" /Filter /FlateDecode"
        return add(b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream")

    catalog = add(b"")  # (filled in when the pages are known)
    tree = add(b"")
    latin = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    fonts = b"/F1 %d 0 R" % latin
    if cjk:
        fonts += b" /F2 %d 0 R" % _cid_font(add, stream, cids)
    kids = []
    for page in pages:
        content = _content(page, cids)
        body = stream(content)
        kids.append(add(b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << %s >> >> "
                        b"/Contents %d 0 R >>" % (tree, fonts, body)))
    if padding:
        stream(os.urandom(padding))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % tree
    objects[tree - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    return _assembled(objects, catalog)


def locked(pdf: bytes, user_password: str, owner_password: str = "owner") -> bytes:
    """`pdf` encrypted with AES-256: `user_password` "" locks only editing and printing."""
    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password=owner_password, algorithm="AES-256")
    out = BytesIO()
    writer.write(out)
    return out.getvalue()


def write_pdf(path: Path, pages: list[Page]) -> Path:
    path.write_bytes(pdf_bytes(pages))
    return path


def _content(page: Page, cids: dict[str, int]) -> bytes:
    if page is None:  # a scan's page: a picture, here a filled rectangle, and no text
        return b"0.5 g 50 50 495 742 re f"
    out = [b"BT 14 TL 72 780 Td"]
    for line in page:
        if _wide(line):
            out.append(b"/F2 12 Tf <%s> Tj T*" % "".join(f"{cids[ch]:04X}" for ch in line).encode())
        else:
            escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            out.append(b"/F1 12 Tf (%s) Tj T*" % escaped.encode("cp1252"))
    out.append(b"ET")
    return b"\n".join(out)


def _wide(line: str) -> bool:
    return any(ord(ch) > 0xFF for ch in line)


def _cid_font(add, stream, cids: dict[str, int]) -> int:
    mapping = "\n".join(f"<{cid:04X}> <{ord(ch):04X}>" for ch, cid in cids.items())
    cmap = ("/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n"
            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            "/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n"
            "1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n"
            f"{len(cids)} beginbfchar\n{mapping}\nendbfchar\n"
            "endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n").encode()
    to_unicode = stream(cmap)
    descriptor = add(b"<< /Type /FontDescriptor /FontName /NotoSansCJKsc /Flags 4 /FontBBox [0 -120 1000 880] "
                     b"/ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 700 /StemV 80 >>")
    descendant = add(b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /NotoSansCJKsc /CIDSystemInfo << /Registry "
                     b"(Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor %d 0 R /DW 1000 >>" % descriptor)
    return add(b"<< /Type /Font /Subtype /Type0 /BaseFont /NotoSansCJKsc /Encoding /Identity-H "
               b"/DescendantFonts [%d 0 R] /ToUnicode %d 0 R >>" % (descendant, to_unicode))


def _assembled(objects: list[bytes], root: int) -> bytes:
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)
