"""Jupyter notebooks as the agent reads, searches and changes them (core/jupyter.py, through the
file tools): their cells as text with the outputs on `#> ` lines, edits written back as Jupyter
writes a notebook. tests/data/jupyter/sales.ipynb is a notebook Jupyter wrote and ran."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest

from core import jupyter
from core.diffs import bytes_diff_lines
from core.dropped_files import dropped_text
from core.tools.files import file_edit, file_read, file_write
from core.tools.registry import ToolError
from core.tools.search import file_search
from tests.support.office import odt_bytes

SALES = Path(__file__).parents[1] / "data" / "jupyter" / "sales.ipynb"


@pytest.fixture
def ctx(seeing_ctx):
    return seeing_ctx


@pytest.fixture
def sales(ctx):
    shutil.copy(SALES, ctx.workdir / "sales.ipynb")
    return ctx.workdir / "sales.ipynb"


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def test_a_notebook_reads_as_its_cells_with_their_outputs_and_its_chart_as_a_picture(ctx, sales):
    # Read as stored, the chart's base64 took the read's room and every line of code was a quoted
    # JSON string.
    out = file_read(ctx, "sales.ipynb", limit=40)
    header, *lines = out.splitlines()
    assert header == ("[sales.ipynb: lines 1-40 of 83; continue with offset=41; the text of a Jupyter notebook (Python 3 "
                      "(ipykernel)) of 5 cells, 4 of them code, each cell after a `# %% [cell K: code|markdown]` line, "
                      "a code cell's outputs after it on `#> ` lines; file_edit changes the cells as they read here]")
    assert lines[:16] == [
        "# %% [cell 1: markdown]", "# Monthly sales", "Which region grew fastest? The figures are in `sales.csv`.",
        "# %% [cell 2: code]", "import pandas as pd", "import matplotlib.pyplot as plt",
        "sales = pd.DataFrame({'region': ['north', 'south', 'east'], 'jan': [120, 95, 80], 'feb': [130, 90, 110]})",
        "print('regions:', len(sales))", "sales",
        "#> Printed: regions: 3", "#> Out [1]:", "#>   region  jan  feb", "#> 0  north  120  130",
        "#> 1  south   95   90", "#> 2   east   80  110", "# %% [cell 3: code]"]
    picture = next(line for line in lines if line.startswith("#> Shown: a picture"))
    # A progress line redrawn with \r shows its last drawing; the traceback has no colour codes.
    assert "#> Printed: fitting 3/3" in lines and "#> Printed to stderr: warning: few points" in lines
    assert "#> Error: KeyError: 'march'" in lines and not any("\x1b" in line for line in lines)
    assert picture.startswith('#> Shown: a picture (PNG, 83 × 64): file_read("offload:documents/picture-')
    kept = picture.split('"')[1]
    assert file_read(ctx, kept).endswith("You see it below, after the results of this turn (" + ctx.pictures[0] + ").]")
    assert (ctx.session_dir / ctx.pictures[0]).read_bytes()[:4] == b"\x89PNG"


def test_a_search_finds_the_cell_and_its_line_as_file_read_numbers_them(ctx, sales):
    out = file_search(ctx, "growth")
    assert out.splitlines()[:2] == ["sales.ipynb:17: (cell 3) sales['growth'] = (sales.feb - sales.jan) / sales.jan",
                                    "sales.ipynb:19: (cell 3) ax.bar(sales.region, sales.growth)"]
    assert file_read(ctx, "sales.ipynb", offset=17, limit=1).splitlines()[1].startswith("sales['growth']")
    assert "sales.ipynb:" in file_search(ctx, "few points")  # (outputs are searched)
    assert "no lines containing" in file_search(ctx, "iVBORw0KGgo")  # (a chart's base64 is not text)


def test_an_edit_changes_a_cells_source_and_the_notebook_stays_as_jupyter_wrote_it(ctx, sales):
    before = sales.read_text(encoding="utf-8")
    out = file_edit(ctx, "sales.ipynb", "ax.bar(sales.region, sales.growth)", 'ax.bar(sales.region, sales.growth)\n'
                    'ax.set_title("Growth, Jan → Feb")')
    assert out == ("Edited sales.ipynb: cell 3 changed (its outputs are from before the change); run it again to "
                   "refresh them: `jupyter nbconvert --to notebook --execute --inplace sales.ipynb`.")
    after = sales.read_text(encoding="utf-8")
    # Only the cell's source lines changed: Jupyter's indent, key order and characters are kept.
    changes = [line for line in difflib.ndiff(before.splitlines(), after.splitlines()) if line[0] in "+-"]
    assert changes == ['+     "ax.set_title(\\"Growth, Jan → Feb\\")\\n",']
    assert after.endswith("}\n")
    changed = cells(sales)[2]
    assert changed["source"][-2:] == ['ax.set_title("Growth, Jan → Feb")\n', "plt.show()"]
    assert changed["outputs"] and changed["id"] == json.loads(before)["cells"][2]["id"]


def test_a_cell_is_added_by_a_cell_line_in_the_new_text_and_removed_by_emptying_it(ctx, sales):
    ids = [cell["id"] for cell in cells(sales)]
    out = file_edit(ctx, "sales.ipynb", "plt.show()", "plt.show()\n# %% [markdown]\nThe east grew fastest.\n# %%\n"
                    "sales.sort_values('growth')")
    assert out == "Edited sales.ipynb: a Markdown cell added after cell 3; a code cell added after cell 3."
    now = cells(sales)
    assert [cell["cell_type"] for cell in now] == ["markdown", "code", "code", "markdown", "code", "code", "code"]
    assert now[3] == {"cell_type": "markdown", "id": now[3]["id"], "metadata": {}, "source": ["The east grew fastest."]}
    assert now[4] == {"cell_type": "code", "execution_count": None, "id": now[4]["id"], "metadata": {}, "outputs": [],
                      "source": ["sales.sort_values('growth')"]}
    assert len({*ids, now[3]["id"], now[4]["id"]}) == 7  # (new ids, unlike the others)
    # The last cell (now cell 7), emptied with its cell line, is removed; the cells keep their ids.
    file_read(ctx, "sales.ipynb")
    assert file_edit(ctx, "sales.ipynb", "# %% [cell 7: code]\nsales['march']\n", "") == \
        "Edited sales.ipynb: cell 7 removed."
    assert [cell["id"] for cell in cells(sales)] == [*ids[:3], now[3]["id"], now[4]["id"], ids[3]]


def test_an_edit_that_cannot_be_made_says_why_and_changes_nothing(ctx, sales):
    before = sales.read_bytes()
    with pytest.raises(ToolError, match=r"is in an output of 'sales.ipynb' \(a `#> ` line\), which running the "
                                        "notebook writes"):
        file_edit(ctx, "sales.ipynb", "regions: 3", "regions: 4")
    with pytest.raises(ToolError, match="was not found in the cells of 'sales.ipynb'"):
        file_edit(ctx, "sales.ipynb", "sales.plot()", "x")
    with pytest.raises(ToolError, match="was found 3 times in the cells of 'sales.ipynb'"):
        file_edit(ctx, "sales.ipynb", "import ", "from x import ")
    # The JSON edited as `cat` shows it: made when the notebook stays one, refused when it would break.
    with pytest.raises(ToolError, match=r"Not edited: sales.ipynb would not open in Jupyter after this edit \(its JSON "
                                        r"is broken \(line \d+, column \d+\): Expecting ','"):
        file_edit(ctx, "sales.ipynb", '"print(\'regions:\', len(sales))\\n",', '"print(\'regions:\', len(sales))\\n"')
    assert sales.read_bytes() == before
    file_edit(ctx, "sales.ipynb", '"display_name": "Python 3 (ipykernel)"', '"display_name": "Python 3"')
    assert json.loads(sales.read_text(encoding="utf-8"))["metadata"]["kernelspec"]["display_name"] == "Python 3"


def test_a_notebook_whose_json_is_broken_reads_and_is_mended_as_its_text(ctx):
    broken = '{\n "cells": [\n  {"cell_type": "code", "source": ["x = 1"]\n ],\n "nbformat": 4\n}\n'
    (ctx.workdir / "hand.ipynb").write_text(broken, encoding="utf-8")
    out = file_read(ctx, "hand.ipynb")
    assert out.splitlines()[0] == ("[hand.ipynb: lines 1-6 of 6; the text of a file named .ipynb that is not a notebook "
                                   "Jupyter opens (its JSON is broken (line 4, column 2): Expecting ',' delimiter), its "
                                   "text as stored]")
    assert out.endswith(broken)
    file_edit(ctx, "hand.ipynb", '["x = 1"]\n ],', '["x = 1"]}\n ],')
    assert cells(ctx.workdir / "hand.ipynb") == [{"cell_type": "code", "source": ["x = 1"]}]
    assert file_read(ctx, "hand.ipynb").splitlines()[1:] == ["# %% [cell 1: code]", "x = 1"]


def test_a_notebook_is_written_from_its_cells_as_text(ctx):
    out = file_write(ctx, "new.ipynb", "# %% [markdown]\n# Churn\nBy month.\n# %%\nimport pandas as pd\n\n"
                                       "df = pd.read_csv('churn.csv')\n")
    assert out.startswith("Created new.ipynb (") and out.endswith(
        " characters): a Jupyter notebook (Python 3) of 2 cells, 1 of them code.")
    notebook = json.loads((ctx.workdir / "new.ipynb").read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4 and notebook["nbformat_minor"] == 5
    assert notebook["metadata"]["kernelspec"] == {"display_name": "Python 3", "language": "python", "name": "python3"}
    assert [cell["source"] for cell in notebook["cells"]] == [["# Churn\n", "By month."],
                                                              ["import pandas as pd\n", "\n",
                                                               "df = pd.read_csv('churn.csv')"]]
    assert (ctx.workdir / "new.ipynb").read_text(encoding="utf-8") == jupyter.written(notebook)
    file_write(ctx, "windows.ipynb", "# %%\r\nimport os\r\nos.getcwd()\r\n")  # (a model's Windows line ends)
    assert cells(ctx.workdir / "windows.ipynb")[0]["source"] == ["import os\n", "os.getcwd()"]


def test_a_notebook_rewritten_from_its_read_keeps_its_cells_outputs_and_kernel(ctx, sales):
    before = sales.read_text(encoding="utf-8")
    read = file_read(ctx, "sales.ipynb", limit=1000).split("\n", 1)[1]
    out = file_write(ctx, "sales.ipynb", read.replace("sales['march']", "sales['feb']"))
    assert out.endswith("characters): a Jupyter notebook (Python 3 (ipykernel)) of 5 cells, 4 of them code; the outputs "
                        "of 4 cells kept; the `#> ` output lines left out (running the notebook makes its outputs).")
    assert cells(sales)[4]["source"] == ["sales['feb']"] and cells(sales)[4]["outputs"][0]["ename"] == "KeyError"
    assert cells(sales)[:4] == json.loads(before)["cells"][:4]
    # JSON that would not open is refused, and the notebook is as it was.
    file_read(ctx, "sales.ipynb")
    with pytest.raises(ToolError, match=r"Not written: sales.ipynb would not open in Jupyter: its JSON is broken"):
        file_write(ctx, "sales.ipynb", '{"cells": [')
    assert cells(sales)[4]["source"] == ["sales['feb']"]


def test_a_cell_with_a_cell_line_of_its_own_is_edited_as_json(ctx):
    # A notebook made from a percent script keeps `# %%` in a cell: its text would read as two cells.
    notebook = jupyter.new_notebook([jupyter.Cell("code", None, "# %%\nx = 1")])
    (ctx.workdir / "script.ipynb").write_text(jupyter.written(notebook), encoding="utf-8")
    assert not jupyter.readable_back(notebook)
    file_edit(ctx, "script.ipynb", '"x = 1"', '"x = 2"')
    assert cells(ctx.workdir / "script.ipynb")[0]["source"] == ["# %%\n", "x = 2"]


def test_a_notebook_with_windows_line_ends_keeps_them(ctx, sales):
    crlf = SALES.read_text(encoding="utf-8").replace("\n", "\r\n")
    sales.write_bytes(crlf.encode())
    file_edit(ctx, "sales.ipynb", "print()\r\n", "print('done')\r\n")
    after = sales.read_bytes().decode()
    assert after.count("\r\n") == after.count("\n") and '"print(\'done\')\\n",' in after


def test_a_notebook_dropped_from_elsewhere_goes_with_its_cells_and_an_odt_with_its_text(tmp_path):
    text = dropped_text(SALES)
    assert text.startswith("# %% [cell 1: markdown]\n# Monthly sales\n") and "#> Shown: a picture (PNG, 83 × 64)\n" in text
    # (An OpenDocument text dropped raised a KeyError: its size cap was missing.)
    (tmp_path / "notes.odt").write_bytes(odt_bytes("<text:p>Meeting notes</text:p>"))
    assert dropped_text(tmp_path / "notes.odt") == "Meeting notes\n"


def test_a_notebooks_change_is_diffed_as_its_cells_not_its_json():
    # Run again in Jupyter, a notebook's JSON changes in every cell's run times; its text, where the
    # person changed a cell and its output.
    before = SALES.read_bytes()
    notebook = json.loads(before)
    notebook["cells"][4]["source"] = ["sales['feb']"]
    notebook["cells"][4]["outputs"] = [{"data": {"text/plain": ["0    130"]}, "execution_count": 5, "metadata": {},
                                        "output_type": "execute_result"}]
    notebook["cells"][1]["metadata"]["execution"]["iopub.status.idle"] = "2026-11-30T10:00:00Z"
    now = jupyter.written(notebook, like=before.decode()).encode()
    lines = bytes_diff_lines(before, now, context=1, name="analysis/sales.ipynb")
    assert lines[:6] == ["@@ -30,54 +30,3 @@", " # %% [cell 5: code]", "-sales['march']", "-#> Error: KeyError: 'march'",
                         "-#> ---------------------------------------------------------------------------",
                         "-#> KeyError                                  Traceback (most recent call last)"]
    assert lines[-3:] == ["-#> KeyError: 'march'", "+sales['feb']", "+#> Out [5]: 0    130"]
    assert bytes_diff_lines(None, now, name="sales.ipynb")[1] == "+# %% [cell 1: markdown]"  # (created)
    assert "+{" in bytes_diff_lines(None, b"{\n", name="sales.ipynb")  # (broken: as text)


def test_a_notebook_changed_within_a_clock_tick_is_read_anew(ctx, sales):
    # A coarse file system (FAT's two seconds) gives an edit of the same size the same time: the
    # text kept of the version before was read again, and the agent's next edit missed.
    import os

    stat = sales.stat()
    file_read(ctx, "sales.ipynb")
    sales.write_text(sales.read_text(encoding="utf-8").replace("'jan': [120", "'jan': [121"), encoding="utf-8")
    os.utime(sales, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert sales.stat().st_size == stat.st_size
    assert "'jan': [121, 95, 80]" in file_read(ctx, "sales.ipynb")


@pytest.mark.parametrize("dumped", [
    {"indent": 2},  # (Colab's: two spaces, its keys in its own order)
    {"separators": (",", ":")},  # (all on one line, compact)
    {"ensure_ascii": True, "indent": 1},  # (characters as \u escapes)
], ids=["indent 2", "one line", "ascii"])
def test_an_edit_keeps_the_way_another_tool_wrote_the_notebook(ctx, dumped):
    notebook = {"nbformat": 4, "nbformat_minor": 0, "metadata": {"colab": {"name": "Café.ipynb"}},
                "cells": [{"cell_type": "code", "source": ["x = 'café'\n", "y = 2"], "metadata": {"id": "a"},
                           "execution_count": None, "outputs": []}]}
    text = json.dumps(notebook, **{"ensure_ascii": False, **dumped})
    (ctx.workdir / "colab.ipynb").write_text(text, encoding="utf-8")
    file_edit(ctx, "colab.ipynb", "y = 2", "y = 3")
    assert (ctx.workdir / "colab.ipynb").read_text(encoding="utf-8") == text.replace("y = 2", "y = 3")


def test_a_notebook_another_tool_wrote_oddly_still_reads(ctx):
    # Anything where Jupyter puts an object: read without a crash, what there is shown.
    notebook = {"nbformat": 4, "nbformat_minor": 2, "metadata": {"kernelspec": "python3", "language_info": None},
                "cells": [{"cell_type": "code", "source": "print(1)", "outputs": {"not": "a list"}},
                          {"source": ["x"], "outputs": [None, {"output_type": "stream", "text": None},
                                                        {"output_type": "execute_result", "data": ["odd"],
                                                         "execution_count": "7"}]}]}
    (ctx.workdir / "odd.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    assert file_read(ctx, "odd.ipynb").split("\n", 1)[1] == (
        "# %% [cell 1: code]\nprint(1)\n# %% [cell 2: code]\nx\n#> Out []: (shown only in Jupyter: none)\n")
    notebook["cells"][0]["source"] = ["print(", 1, ")"]  # (not text: the file is read as it is)
    (ctx.workdir / "odd.ipynb").write_text(json.dumps(notebook), encoding="utf-8")
    assert "(its JSON is not a notebook (no list of cells with sources))" in file_read(ctx, "odd.ipynb")


def test_every_kind_of_document_dropped_has_a_cap_and_a_compressed_log_is_carried_unpacked(tmp_path):
    import gzip

    from core.documents import OFFICE_SUFFIXES, PACKED_KINDS
    from core.dropped_files import DROPPED_DOCUMENT_BYTES, DROPPED_TEXT_MAX, NotCarried

    assert {*OFFICE_SUFFIXES.values(), "ipynb", *PACKED_KINDS} == set(DROPPED_DOCUMENT_BYTES)  # (PDFs: by pages)
    (tmp_path / "app.log.1.gz").write_bytes(gzip.compress(b"10:00 ERROR disk full\n"))
    assert dropped_text(tmp_path / "app.log.1.gz") == "10:00 ERROR disk full\n"
    (tmp_path / "big.log.gz").write_bytes(gzip.compress(b"x" * (DROPPED_TEXT_MAX + 1)))  # (a few KB packed)
    with pytest.raises(NotCarried, match=r"^big\.log\.gz unpacks to 1,000,001 characters, more than a message carries"):
        dropped_text(tmp_path / "big.log.gz")
