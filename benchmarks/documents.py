"""How long a document's text takes to make (core/documents.py): what a file_read of a PDF, a Word
document, a workbook or a Jupyter notebook waits for the first time (and for a PDF's page drawn as
a picture), and what a drop on the message box holds the window for (core/dropped_files.py caps a
dropped PDF at 100 pages and a workbook at 1 MB on these figures); and how long a notebook's edit
and diff take (core/jupyter.py).

Documents are made here (a PDF of text pages in a standard font, a Word document, a workbook of
numbers, dates and text); a PDF the machine has in /usr/share/doc is read too, when there is one.
A notebook is made of tests/data/jupyter/sales.ipynb's cells (a chart among them) repeated.
Prints ms per PDF page, µs per workbook cell, and each total.

    python benchmarks/documents.py [--pages 200] [--rows 20000] [--cells 500] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import jupyter  # noqa: E402
from core.diffs import bytes_diff_lines  # noqa: E402
from core.documents import document_text  # noqa: E402
from core.pdf_pages import page_png  # noqa: E402
from tests.support.office import docx_bytes, xlsx_bytes  # noqa: E402
from tests.support.pdfs import pdf_bytes  # noqa: E402


def timed(source, name: str, kind: str) -> tuple[float, int]:
    start = time.perf_counter()
    text = document_text(source, name, kind).text
    return time.perf_counter() - start, len(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--cells", type=int, default=500)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    line = "The prefix cache hit rate of run {n} was 0.9{n}, against 0.1{n} for the naive loop."
    pages = [[line.format(n=f"{p}{k}") for k in range(45)] for p in range(args.pages)]
    pdf_s, pdf_chars = timed(pdf_bytes(pages), "made.pdf", "pdf")
    rows = [["Region", "Day", "Revenue", "Note"]] + [
        [f"R{i % 7}", date(2025, 1, 1) + timedelta(days=i % 365), i * 1.5, f"row {i}"] for i in range(args.rows)]
    workbook = xlsx_bytes({"Sales": rows})
    xlsx_s, xlsx_chars = timed(workbook, "made.xlsx", "xlsx")
    document = docx_bytes([("1", "Report")] + [f"Paragraph {i}: " + "words " * 30 for i in range(5_000)])
    docx_s, docx_chars = timed(document, "made.docx", "docx")
    notebook = _notebook(args.cells)
    cells = len(rows) * 4
    figures = {**notebook,
        "pdf_pages": args.pages, "pdf_ms_per_page": round(pdf_s * 1000 / args.pages, 2), "pdf_s": round(pdf_s, 2),
        "xlsx_cells": cells, "xlsx_bytes": len(workbook), "xlsx_us_per_cell": round(xlsx_s * 1e6 / cells, 1),
        "xlsx_s": round(xlsx_s, 2), "docx_paragraphs": 5_001, "docx_s": round(docx_s, 3),
    }
    shipped = sorted(Path("/usr/share/doc").glob("**/*.pdf"), key=lambda p: p.stat().st_size, reverse=True)[:1]
    for pdf in shipped:
        seconds, _chars = timed(pdf, pdf.name, "pdf")
        import pypdf

        count = len(pypdf.PdfReader(pdf).pages)
        figures.update({"real_pdf": pdf.name, "real_pdf_pages": count,
                        "real_pdf_ms_per_page": round(seconds * 1000 / count, 2)})
        drawn = []
        for page in range(1, min(count, 10) + 1):  # (what a model that sees pictures waits for, a page)
            start = time.perf_counter()
            page_png(pdf, page)
            drawn.append(time.perf_counter() - start)
        figures["real_pdf_page_drawn_ms_median"] = round(statistics.median(drawn) * 1000, 1)
    if args.json:
        print(json.dumps({"benchmark": "documents", **figures}))
        return
    print(f"PDF, {args.pages} pages of text: {figures['pdf_ms_per_page']} ms a page ({pdf_s:.2f} s, {pdf_chars:,} "
          "characters)")
    if shipped:
        print(f"PDF {figures['real_pdf']}, {figures['real_pdf_pages']} pages: {figures['real_pdf_ms_per_page']} ms a page; "
              f"a page drawn as a picture {figures['real_pdf_page_drawn_ms_median']} ms (median of its first 10)")
    print(f"workbook, {cells:,} cells ({len(workbook):,} bytes): {figures['xlsx_us_per_cell']} µs a cell "
          f"({xlsx_s:.2f} s, {xlsx_chars:,} characters)")
    print(f"Word document, 5,001 paragraphs: {docx_s * 1000:.0f} ms ({docx_chars:,} characters)")
    print(f"notebook, {args.cells:,} cells ({notebook['ipynb_bytes']:,} bytes, {notebook['ipynb_pictures']} charts): "
          f"read {notebook['ipynb_read_ms']} ms, an edit of one cell {notebook['ipynb_edit_ms']} ms, its diff "
          f"{notebook['ipynb_diff_ms']} ms")


def _notebook(count: int) -> dict[str, float | int]:
    """Times a notebook of `count` cells: its text made (its charts kept as files), one cell edited
    (the whole notebook written back), and the diff of that edit as the changes dialog shows it."""
    sales = jupyter.parsed((Path(__file__).resolve().parents[1] / "tests/data/jupyter/sales.ipynb").read_text("utf-8"))
    made = {**sales, "cells": [dict(cell, id=f"c{index}") for index in range(count)
                               for cell in [sales["cells"][index % len(sales["cells"])]]]}
    raw = jupyter.written(made)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.ipynb"
        path.write_text(raw, encoding="utf-8")
        kept: list[str] = []

        def keep(data: bytes, suffix: str) -> str:
            kept.append(suffix)
            (Path(folder) / f"p{len(kept)}{suffix}").write_bytes(data)
            return f"p{len(kept)}{suffix}"

        start = time.perf_counter()
        document_text(path, path.name, "ipynb", keep)
        read_s = time.perf_counter() - start
    start = time.perf_counter()
    edited, _said = jupyter.edited(raw, "plt.show()\n# %% [cell 4:", "plt.show()\nprint('ok')\n# %% [cell 4:")
    edit_s = time.perf_counter() - start
    start = time.perf_counter()
    bytes_diff_lines(raw.encode(), edited.encode(), name="big.ipynb")
    diff_s = time.perf_counter() - start
    return {"ipynb_cells": count, "ipynb_bytes": len(raw.encode()), "ipynb_pictures": len(kept),
            "ipynb_read_ms": round(read_s * 1000, 1), "ipynb_edit_ms": round(edit_s * 1000, 1),
            "ipynb_diff_ms": round(diff_s * 1000, 1)}


if __name__ == "__main__":
    main()
