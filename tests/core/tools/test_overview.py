"""file_list of a large project: the folders deeper down told with their counts (core/tools/overview.py)."""

from __future__ import annotations

from core.tools.files import file_list
from tests.core.tools.test_search import write


def a_large_project(ctx) -> None:
    """A project of 4,000 files: a few at the top, many folders, a thousand files in one of them."""
    write(ctx, "README.md", "# app\n")
    write(ctx, "pyproject.toml", "[project]\n")
    for package in range(30):
        for module in range(30):
            write(ctx, f"src/app/pkg_{package:02}/sub/module_{module:03}.py", "x = 1\n")
        write(ctx, f"src/app/pkg_{package:02}/__init__.py", "")
        write(ctx, f"src/app/pkg_{package:02}/__pycache__/__init__.cpython-311.pyc", "")
    for number in range(1000):
        write(ctx, f"tests/data/case_{number:04}.json", "{}\n")


def test_a_list_too_long_to_show_shows_the_folders_deeper_down_with_their_counts(ctx):
    # The first 500 paths in walking order, cut by the output limit to the first few dozen, showed
    # nothing of what a large project holds.
    a_large_project(ctx)
    listed = file_list(ctx)
    assert len(listed) <= ctx.output_chars
    lines = listed.splitlines()
    assert lines[0].startswith("[1,932 files under '.', more than fit here, so the larger folders are one line each")
    assert lines[1:4] == ["README.md", "pyproject.toml", "src/app/pkg_00/__init__.py"]
    assert "src/app/pkg_00/sub/  (30 files)" in lines and "src/app/pkg_29/sub/  (30 files)" in lines
    assert "tests/data/  (1,000 files)" in lines
    assert not any("__pycache__" in line for line in lines)  # passed over without a word
    # The folder given as the path lists its files, whole when they fit.
    assert file_list(ctx, "src/app/pkg_07/sub").splitlines()[:2] == ["module_000.py", "module_001.py"]
    # A pattern narrows the count, and is said.
    assert file_list(ctx, "tests", "*.json").splitlines()[0].startswith(
        "[1,000 files under 'tests' matching '*.json', more than fit here, so the larger folders")


def test_a_folder_of_more_folders_than_fit_says_how_many_lines_were_left_out(ctx, monkeypatch):
    for number in range(600):
        write(ctx, f"datasets/set_{number:04}/data.csv", "a,b\n")
    lines = file_list(ctx, "datasets").splitlines()
    assert len("\n".join(lines)) <= ctx.output_chars
    assert lines[1] == "set_0000/  (1 file)" and lines[-1].startswith("[… ") and lines[-1].endswith(
        " more lines; give a folder as the path to list it]")
    shown = len(lines) - 2
    assert lines[-1] == f"[… {600 - shown:,} more lines; give a folder as the path to list it]"
    # A walk through more files than are counted (a home folder) stops, and says so.
    monkeypatch.setattr("core.tools.overview.MAX_COUNTED", 100)
    assert file_list(ctx, "datasets").splitlines()[0].startswith("[the first 100 files under 'datasets', more than fit")
