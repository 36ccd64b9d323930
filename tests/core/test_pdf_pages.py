"""A PDF's pages drawn as pictures for a model that sees pictures (core/pdf_pages.py, through
file_read): a scan's pages, which have no text, and a paper's figures."""

from __future__ import annotations

import re
import struct
import zlib

import pytest

from core.pdf_pages import png
from core.pictures import LONGEST_SIDE
from core.tools.context import ToolContext
from core.tools.files import file_read
from core.tools.registry import ToolError
from tests.support.pdfs import write_pdf


@pytest.fixture
def ctx(seeing_ctx):
    return seeing_ctx


def picture_named(text: str, page: int) -> str:
    return re.search(r'file_read\("(offload:documents/pdf-[0-9a-f]{12}-page-)K\.png"\)', text)[1] + f"{page}.png"


def pixels(data: bytes) -> tuple[int, int, bytes]:
    """(width, height, the rows' bytes with their filter bytes) of a PNG made by png()."""
    width, height = struct.unpack(">II", data[16:24])
    start = data.index(b"IDAT") + 4
    length = struct.unpack(">I", data[start - 8:start - 4])[0]
    return width, height, zlib.decompress(data[start:start + length])


def test_a_papers_page_is_seen_as_a_picture_drawn_when_it_is_read(ctx):
    # A figure's labels read as scattered words; the page as a picture shows the figure.
    write_pdf(ctx.workdir / "paper.pdf", [["Figure 1: the hit rate by turn."], None])
    header = file_read(ctx, "paper.pdf").splitlines()[0]
    assert header.endswith("; page K seen as a picture (a figure, a table, a scan): file_read(\"offload:documents/pdf-"
                           + header.split("offload:documents/pdf-")[1].split("-page-")[0] + "-page-K.png\")]")
    named = picture_named(header, 2)
    folder = ctx.session_dir / "offload" / "documents"
    assert not (folder / named.split("/")[-1]).exists()  # (not drawn until it is read)
    out = file_read(ctx, named)
    assert out.startswith(f"[{named}: a picture, ") and ctx.pictures == ["pictures/0001.png"]
    width, height, rows = pixels((ctx.session_dir / ctx.pictures[0]).read_bytes())
    assert height == LONGEST_SIDE and abs(width - 595 * LONGEST_SIDE / 842) < 1  # (A4, its longer side fitted)
    middle = rows[(height // 2) * (width * 3 + 1) + 1:][: width * 3]
    assert middle[width * 3 // 2 - 1] < 200  # (the scan's grey rectangle, drawn)
    with pytest.raises(ToolError, match=r"^paper\.pdf has 2 pages; there is no page 3\.$"):
        file_read(ctx, picture_named(header, 3))
    (ctx.workdir / "paper.pdf").write_bytes(b"%PDF-1.4 cut short")  # (replaced since its text was read)
    with pytest.raises(ToolError, match=r"^paper\.pdf could not be opened to draw its page \("):
        file_read(ctx, picture_named(header, 1))


def test_a_scan_read_by_a_model_that_sees_pictures_is_its_pages_and_a_model_without_sight_is_refused(ctx):
    # Not a failure for a model that can read the pages: it was one, its card red, counted for 3-Strike.
    write_pdf(ctx.workdir / "scan.pdf", [None, None])
    said = file_read(ctx, "scan.pdf")
    first = re.search(r"offload:documents/pdf-[0-9a-f]{12}-page-1\.png", said)[0]
    last = first.replace("-page-1.png", "-page-2.png")
    assert said == (f'[scan.pdf: a PDF of 2 pages with no text, only pictures (a scan, most likely). Your model sees '
                    f'pictures: read its pages as such, page 1 with file_read("{first}"), up to page 2 ({last}).]')
    assert file_read(ctx, last).startswith(f"[{last}: a picture, ")
    blind = ToolContext(workdir=ctx.workdir, session_dir=ctx.session_dir, memory=ctx.memory)
    with pytest.raises(ToolError) as refused:
        file_read(blind, "scan.pdf")
    assert str(refused.value).endswith("(a scan, most likely): its words cannot be read as text. A version with text, or "
                                       "one run through OCR (ocrmypdf, a scanner's software), can be.")
    write_pdf(ctx.workdir / "paper.pdf", [["Text."]])
    assert "seen as a picture" not in file_read(blind, "paper.pdf")


def test_a_page_named_for_no_pdf_read_says_so(ctx):
    with pytest.raises(ToolError, match=r"No PDF was read as pdf-0123456789ab: read the PDF first"):
        file_read(ctx, "offload:documents/pdf-0123456789ab-page-1.png")


def test_the_png_made_holds_the_pixels_given():
    # Two rows of two pixels, each row with two bytes of padding after it (a bitmap's stride).
    data = png(2, 2, 8, bytes([255, 0, 0, 0, 255, 0, 9, 9, 0, 0, 255, 1, 2, 3, 9, 9]), 3)
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")
    assert pixels(data) == (2, 2, bytes([0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255, 1, 2, 3]))


def test_a_scan_given_on_the_command_line_goes_as_pictures_of_its_pages(tmp_path, capsys):
    # `tripane run --task-file letter.pdf` of a scan said it had no text, and nothing more.
    from core.cli import _pictures_read, _task_given, build_parser

    scan = write_pdf(tmp_path / "letter.pdf", [None, None])
    pages = _pictures_read([scan])
    assert [suffix for _data, suffix in pages] == [".png", ".png"] and pages[0][0].startswith(b"\x89PNG")
    write_pdf(tmp_path / "thick.pdf", [None] * 6)
    with pytest.raises(ValueError, match=r"^cannot show .*thick\.pdf: a PDF of 6 pages, more than go with a message as "
                                         r"pictures \(5\); put it in the work folder, where the agent reads it$"):
        _pictures_read([tmp_path / "thick.pdf"])
    with pytest.raises(SystemExit):
        _task_given(build_parser(), None, scan)
    assert capsys.readouterr().err.rstrip().endswith(
        f"To show its pages to a model that sees pictures, give it with --picture {scan} and the task as TASK.")


def test_a_scan_of_one_page_dropped_says_its_page_went_as_a_picture(tmp_path):
    from core.dropped_files import Scanned, dropped_text

    write_pdf(tmp_path / "letter.pdf", [None])
    with pytest.raises(Scanned, match=r"^letter\.pdf is a scan with no text: its page went as a picture$") as scanned:
        dropped_text(tmp_path / "letter.pdf")
    assert len(scanned.value.pages) == 1 and scanned.value.pages[0].startswith(b"\x89PNG")
