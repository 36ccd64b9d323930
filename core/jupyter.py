"""Jupyter notebooks (.ipynb) as the agent reads, searches and changes them: their cells as text.

A notebook is JSON: each line of code a quoted string in a list, each chart a line of base64 a
hundred thousand characters long. Read as stored, a read's room went on a chart's base64 and the
agent's edits had to quote JSON (one quote missed, and Jupyter would not open the notebook). Here
it reads as its cells in the percent format (a `# %%` line before each, as VS Code, Spyder and
jupytext read Python files), each code cell's outputs after it on `#> ` lines (as R's reprex marks
them); an edit or a rewrite of that text is written back as JSON formatted as Jupyter writes it,
with the outputs, ids and metadata of the cells it keeps.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.text import as_terminal_shows, counted

SUFFIX = ".ipynb"
CONTENT_TYPE = "application/x-ipynb+json"
OUTPUT_MARK = "#> "
MAX_OUTPUT_LINES = 120  # of one output shown: its first and last lines (a training loop's log)
MAX_OUTPUT_LINE_CHARS = 2_000
PICTURE_SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif"}
MAX_DIFFED_BYTES = 20_000_000  # a notebook diffed as its text: its charts are most of it
RUN_IT = "jupyter nbconvert --to notebook --execute --inplace"

# The line a cell starts after: `# %%`, `# %% [markdown]`, or as a read shows it, `# %% [cell 3: code]`.
CELL_LINE = re.compile(r"^# ?%%(?P<rest>[^\n]*)$", re.MULTILINE)
_NUMBERED = re.compile(r"\[cell (\d+)")
_OUTPUT_HEADER = re.compile(r"^#> (Out \[\d*\]|Printed|Shown|Error)\b")

# Given a picture's bytes and suffix, how the text names the file it is kept in ("" when not kept).
PictureKeeper = Callable[[bytes, str], str]


class NotANotebook(ValueError):
    """The file is named .ipynb but is not a notebook Jupyter opens (its JSON is broken, or it is
    of the format before 2015): read and changed as the text it is."""


@dataclass(frozen=True)
class Cell:
    """A cell as the text gives it: its kind, the number it had when read (None for a new one) and
    its source."""
    kind: str  # "code", "markdown" or "raw"
    number: int | None
    source: str


def parsed(text: str) -> dict[str, Any]:
    """The notebook `text` holds, checked to be one this module can read and write back."""
    try:
        notebook = json.loads(text.removeprefix("\ufeff"))  # (a byte order mark an editor on Windows put)
    except ValueError as exc:
        where = f" (line {exc.lineno}, column {exc.colno})" if isinstance(exc, json.JSONDecodeError) else ""
        raise NotANotebook(f"its JSON is broken{where}: {exc.msg if isinstance(exc, json.JSONDecodeError) else exc}") \
            from None
    if not isinstance(notebook, dict):
        raise NotANotebook("its JSON is not a notebook (no cells)")
    if "worksheets" in notebook:
        raise NotANotebook("it is in the notebook format before 2015 (nbformat 3): opened in Jupyter and saved, it "
                           "is converted")
    cells = notebook.get("cells")
    if not isinstance(cells, list) or not all(isinstance(cell, dict) and _text(cell.get("source", "")) for cell in cells):
        raise NotANotebook("its JSON is not a notebook (no list of cells with sources)")
    return notebook


def _text(value: Any) -> bool:
    """Whether `value` is text as a notebook holds it: a string, or a list of strings (its lines)."""
    return isinstance(value, str) or isinstance(value, list) and all(isinstance(part, str) for part in value)


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def kind_of(cell: dict[str, Any]) -> str:
    kind = cell.get("cell_type")
    return kind if kind in ("markdown", "raw") else "code"


def language(notebook: dict[str, Any]) -> str:
    """The notebook's kernel's language or name ("Python 3"), or "" when it names none."""
    metadata = _mapping(notebook.get("metadata"))
    spec = _mapping(metadata.get("kernelspec"))
    named = spec.get("display_name") or spec.get("language") or _mapping(metadata.get("language_info")).get("name")
    return named if isinstance(named, str) else ""


def _mapping(value: Any) -> dict[str, Any]:
    """`value` if it is a JSON object: a notebook written by hand or by another tool may hold
    anything where Jupyter puts one."""
    return value if isinstance(value, dict) else {}


def described(notebook: dict[str, Any]) -> str:
    """"a Jupyter notebook (Python 3) of 14 cells, 9 of them code"."""
    cells = notebook["cells"]
    code = sum(kind_of(cell) == "code" for cell in cells)
    kernel = f" ({language(notebook)})" if language(notebook) else ""
    return f"a Jupyter notebook{kernel} of {counted(len(cells), 'cell')}, {code:,} of them code"


LAYOUT = "each cell after a `# %% [cell K: code|markdown]` line, a code cell's outputs after it on `#> ` lines"
EDITED_AS_READ = "; file_edit changes the cells as they read here"  # (said of a file's, not a web page's)


def cell_text(number: int, cell: dict[str, Any]) -> str:
    """The cell as the text shows it: its `# %%` line, then its source."""
    source = source_of(cell)
    return f"# %% [cell {number}: {kind_of(cell)}]\n{source}" + ("\n" if source and not source.endswith("\n") else "")


def notebook_text(notebook: dict[str, Any], outputs: bool = True, keep_picture: PictureKeeper | None = None) -> str:
    """The notebook's cells as text, with their outputs or without (the text an edit works on)."""
    parts = []
    for number, cell in enumerate(notebook["cells"], start=1):
        parts.append(cell_text(number, cell))
        if outputs and kind_of(cell) == "code":
            parts.extend(_outputs_text(cell, keep_picture))
    return "".join(parts)


def _outputs_text(cell: dict[str, Any], keep_picture: PictureKeeper | None) -> list[str]:
    shown: list[str] = []
    stream_name, stream_text = "", ""  # Jupyter splits a cell's printing into pieces: shown as one
    outputs = cell.get("outputs")
    for output in outputs if isinstance(outputs, list) else []:
        if not isinstance(output, dict):
            continue
        kind = output.get("output_type")
        if kind == "stream":
            name = "Printed to stderr" if output.get("name") == "stderr" else "Printed"
            if stream_text and name != stream_name:
                shown.append(_output_block(stream_name + ":", stream_text))
                stream_text = ""
            stream_name, stream_text = name, stream_text + _joined(output.get("text"))
            continue
        if stream_text:
            shown.append(_output_block(stream_name + ":", stream_text))
            stream_text = ""
        if kind == "error":
            lines = output.get("traceback")
            traceback = "\n".join(map(str, lines)) if isinstance(lines, list) else _joined(lines)
            shown.append(_output_block(f"Error: {output.get('ename', '')}: {output.get('evalue', '')}", traceback))
        elif kind in ("execute_result", "display_data"):
            count = output.get("execution_count")
            header = f"Out [{count if isinstance(count, int) else ''}]:" if kind == "execute_result" else "Shown:"
            shown.append(_output_block(header, _data_text(_mapping(output.get("data")), keep_picture)))
    if stream_text:
        shown.append(_output_block(stream_name + ":", stream_text))
    return shown


def _data_text(data: dict[str, Any], keep_picture: PictureKeeper | None) -> str:
    """What a result or a display shows, in the form the agent reads best: a picture is named (a
    figure's text is only "<Figure size 640x480 with 1 Axes>"), then Markdown, plain text, HTML."""
    for media, suffix in PICTURE_SUFFIXES.items():
        if media in data:
            return _picture_line(_joined(data[media]), media, suffix, keep_picture)
    if "image/svg+xml" in data:
        return "a picture (SVG)"
    for media in ("text/markdown", "text/plain", "text/latex"):
        if media in data:
            return _joined(data[media])
    if "text/html" in data:
        from core.tools.html_text import html_to_text
        return html_to_text(_joined(data["text/html"]))
    if "application/json" in data:
        return json.dumps(data["application/json"], ensure_ascii=False)[:MAX_OUTPUT_LINE_CHARS]
    kinds = ", ".join(sorted(data)) or "none"
    widget = "an interactive widget, " if any("widget" in kind for kind in data) else ""
    return f"({widget}shown only in Jupyter: {kinds})"


def _picture_line(encoded: str, media: str, suffix: str, keep_picture: PictureKeeper | None) -> str:
    try:
        data = base64.b64decode(encoded)
    except (binascii.Error, ValueError):
        return f"a picture ({suffix[1:].upper()}, not readable)"
    size = _png_size(data) if media == "image/png" else ""
    kept = keep_picture(data, suffix) if keep_picture else ""
    where = f': file_read("{kept}") shows it' if kept else ""
    return f"a picture ({suffix[1:].upper()}{size}){where}"


def _png_size(data: bytes) -> str:
    if data[:8] != b"\x89PNG\r\n\x1a\n" or len(data) < 24:
        return ""
    return f", {int.from_bytes(data[16:20], 'big'):,} × {int.from_bytes(data[20:24], 'big'):,}"


def _output_block(header: str, text: str) -> str:
    """An output's lines as the text shows them: as a terminal would (a traceback's colours and a
    progress bar's redrawings gone), the middle of a long one left out."""
    text = as_terminal_shows(text)
    lines = text.rstrip("\n").split("\n") if text.strip() else []
    if len(lines) > MAX_OUTPUT_LINES:
        head, tail = MAX_OUTPUT_LINES * 2 // 3, MAX_OUTPUT_LINES // 3
        lines = [*lines[:head], f"… {len(lines) - head - tail:,} lines left out …", *lines[-tail:]]
    if len(lines) == 1 and len(lines[0]) < 200 and not header.startswith("Error"):
        return f"{OUTPUT_MARK}{header} {_clipped(lines[0])}\n"
    return f"{OUTPUT_MARK}{header}\n" + "".join(f"{OUTPUT_MARK}{_clipped(line)}\n" for line in lines)


def _clipped(line: str) -> str:
    return line if len(line) <= MAX_OUTPUT_LINE_CHARS else line[:MAX_OUTPUT_LINE_CHARS] + " …"


def _joined(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


# Reading the text back -------------------------------------------------------------------------


def cells_in(text: str) -> list[Cell]:
    """The cells of a notebook's text: each `# %%` line starts one (`[markdown]` or `[raw]` in it
    says its kind; `[cell K` which cell it was when read). Text before the first is a code cell."""
    cells: list[Cell] = []
    starts = list(CELL_LINE.finditer(text))
    if not starts:
        return [Cell("code", None, _cell_source(text))] if text.strip() else []
    if text[:starts[0].start()].strip():
        cells.append(Cell("code", None, _cell_source(text[:starts[0].start()])))
    for index, start in enumerate(starts):
        end = starts[index + 1].start() if index + 1 < len(starts) else len(text)
        rest = start.group("rest")
        kind = "markdown" if re.search(r"\b(markdown|md)\b", rest) else "raw" if re.search(r"\braw\b", rest) else "code"
        number = _NUMBERED.search(rest)
        cells.append(Cell(kind, int(number.group(1)) if number else None, _cell_source(text[start.end() + 1:end])))
    return cells


def _cell_source(text: str) -> str:
    """A cell's source from its lines in the text: the line break the text put after its last line
    is not the source's (Jupyter keeps none there)."""
    return text[:-1] if text.endswith("\n") else text


def without_outputs(text: str) -> tuple[str, bool]:
    """A notebook's text as a read shows it, its outputs (a `#> Out [3]:` line and the `#> ` lines
    after it, to the next cell) taken out, and whether there were any: a rewrite that copied them
    would otherwise put them in the cells as comments."""
    kept, dropped, in_output = [], False, False
    for line in text.splitlines(keepends=True):
        if CELL_LINE.match(line.rstrip("\r\n")):
            in_output = False
        elif _OUTPUT_HEADER.match(line):
            in_output = dropped = True
        if in_output and (line.startswith(OUTPUT_MARK.rstrip()) or not line.strip()):
            continue
        in_output = False
        kept.append(line)
    return "".join(kept), dropped


def rebuilt(notebook: dict[str, Any], cells: list[Cell]) -> tuple[dict[str, Any], list[str]]:
    """The notebook with the cells the text now gives, and what changed ("cell 3 changed", "a cell
    added after cell 3", "cell 5 removed"). A cell the text still numbers keeps its id, metadata and
    outputs (those of a changed code cell are from before the change, as in Jupyter until it is run
    again); a cell left empty is removed."""
    old = notebook["cells"]
    taken: set[int] = set()
    made: list[dict[str, Any]] = []
    said: list[str] = []
    new_ids = _uses_ids(notebook)
    after = 0  # the number of the last cell kept, which an added cell comes after
    for cell in cells:
        index = cell.number - 1 if cell.number and 0 < cell.number <= len(old) and cell.number - 1 not in taken \
            else None
        if index is None:
            if cell.source.strip():
                made.append(_new_cell(cell.kind, cell.source, new_ids))
                said.append(f"a {_kind_word(cell.kind)} cell added " + (f"after cell {after}" if after else "first"))
            continue
        taken.add(index)
        was = old[index]
        if not cell.source.strip() and source_of(was).strip():
            said.append(f"cell {index + 1} removed")
            continue
        after = index + 1
        if cell.kind != kind_of(was):
            made.append(_new_cell(cell.kind, cell.source, new_ids, like=was))
            said.append(f"cell {index + 1} made a {_kind_word(cell.kind)} cell")
        elif cell.source not in (source_of(was), source_of(was).removesuffix("\n")):
            made.append({**was, "source": _source_lines(cell.source)})
            stale = " (its outputs are from before the change)" if cell.kind == "code" and was.get("outputs") else ""
            said.append(f"cell {index + 1} changed{stale}")
        else:
            made.append(was)
    said += [f"cell {index + 1} removed" for index in range(len(old)) if index not in taken]
    return {**notebook, "cells": made}, said


def _kind_word(kind: str) -> str:
    return {"markdown": "Markdown", "raw": "raw"}.get(kind, "code")


def _uses_ids(notebook: dict[str, Any]) -> bool:
    """Whether the notebook's format gives cells ids (nbformat 4.5 and later)."""
    return (notebook.get("nbformat"), notebook.get("nbformat_minor", 0)) >= (4, 5) or \
        any("id" in cell for cell in notebook["cells"])


def _new_cell(kind: str, source: str, with_id: bool, like: dict[str, Any] | None = None) -> dict[str, Any]:
    """A cell as Jupyter makes it (its keys in Jupyter's order, sorted)."""
    cell: dict[str, Any] = {"cell_type": kind}
    if kind == "code":
        cell["execution_count"] = None
    if with_id:
        cell["id"] = (like or {}).get("id") or secrets.token_hex(4)
    cell["metadata"] = (like or {}).get("metadata") or {}
    if kind == "code":
        cell["outputs"] = []
    cell["source"] = _source_lines(source)
    return cell


def _source_lines(source: str) -> list[str]:
    return source.splitlines(keepends=True)


def new_notebook(cells: list[Cell]) -> dict[str, Any]:
    """A notebook of these cells, for a Python 3 kernel (as `jupyter notebook` makes one)."""
    return {
        "cells": [_new_cell(cell.kind, cell.source, True) for cell in cells if cell.source.strip()],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


_ESCAPED_CHARACTER = re.compile(r"\\u(?!00[01])[0-9a-fA-F]{4}")


def written(notebook: dict[str, Any], like: str = "") -> str:
    """The notebook's JSON as Jupyter writes it (one space of indent, characters as they are, a
    line break at the end), or as the file `like` was written: its indent and escapes kept, so
    that an edit of one cell changes those lines only."""
    indent: int | None = 1
    separators = (",", ": ")
    if second := re.match(r"\ufeff?\{\r?\n( +)\"", like):
        indent = len(second.group(1))
    elif like.lstrip("\ufeff").startswith("{") and "\n" not in like.rstrip("\r\n"):  # all on one line (some tools')
        indent = None
        separators = (",", ":") if '":' in like[:1000] and '": ' not in like[:1000] else (", ", ": ")
    # Jupyter writes characters as they are; a notebook another tool wrote with only ASCII has its
    # others as \u escapes (control characters, a traceback's colour codes, are escaped either way).
    ascii_only = like.isascii() and _ESCAPED_CHARACTER.search(like) is not None
    text = json.dumps(notebook, indent=indent, separators=separators, ensure_ascii=ascii_only)
    return ("\ufeff" if like.startswith("\ufeff") else "") + text + ("\n" if not like or like.endswith("\n") else "")


def readable_back(notebook: dict[str, Any], text: str | None = None) -> bool:
    """Whether the text of the notebook's cells (`text`, made if not given) reads back as the same
    cells: a cell whose own source has a `# %%` line (a notebook exported from a percent script)
    would be split in two by an edit of that text, so such a notebook is edited as its JSON."""
    cells = cells_in(notebook_text(notebook, outputs=False) if text is None else text)
    return len(cells) == len(notebook["cells"]) and all(
        cell.number == number and cell.source in (source_of(was), source_of(was).removesuffix("\n"))
        for number, (cell, was) in enumerate(zip(cells, notebook["cells"]), start=1))


# Changing it -----------------------------------------------------------------------------------


class Misses(ValueError):
    """An edit's text is not in the cells once: `count` times (0: not at all; `in_outputs`: it
    is in an output, which running the notebook writes)."""

    def __init__(self, count: int, in_outputs: bool) -> None:
        super().__init__(count)
        self.count, self.in_outputs = count, in_outputs


def edited(text: str, old: str, new: str) -> tuple[str, list[str]]:
    """The notebook JSON `text` with `old` replaced by `new` in the text of its cells (as a read
    without outputs shows it), and what that changed. NotANotebook: edit it as JSON; Misses: `old`
    is not in the cells once."""
    notebook = parsed(text)
    cells = notebook_text(notebook, outputs=False)  # (made once: checked, then edited)
    if not readable_back(notebook, cells):
        raise NotANotebook("a cell of it has a `# %%` line of its own")
    count = cells.count(old) if old else 0
    if count != 1:
        raise Misses(count, in_outputs=bool(old) and count == 0 and old in notebook_text(notebook))
    changed, said = rebuilt(notebook, cells_in(cells.replace(old, new, 1)))
    return written(changed, like=text), said


def for_writing(content: str, existing: str | None) -> tuple[str, str]:
    """The JSON to write for a notebook given as `content` (its cells as text, or JSON, which is
    checked), and what it is. `existing`: the notebook it replaces, whose metadata (the kernel) and
    whose cells the text still numbers are kept, with their outputs. NotANotebook for broken JSON."""
    if content.lstrip().startswith("{"):
        return content, described(parsed(content))
    cells_text, dropped = without_outputs(content.replace("\r\n", "\n"))  # (cells keep \n, as Jupyter's do)
    cells = cells_in(cells_text)
    try:
        base = parsed(existing) if existing else None
    except NotANotebook:
        base = None
    if base is not None and readable_back(base):
        notebook, _ = rebuilt(base, cells)
        kept = sum(bool(cell.get("outputs")) for cell in notebook["cells"])
        json_text = written(notebook, like=existing or "")
    else:
        notebook, kept = new_notebook(cells), 0
        json_text = written(notebook)
    return json_text, described(notebook) + (f"; the outputs of {counted(kept, 'cell')} kept" if kept else "") + \
        ("; the `#> ` output lines left out (running the notebook makes its outputs)" if dropped else "")
