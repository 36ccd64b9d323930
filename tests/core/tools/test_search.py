from __future__ import annotations

import os
import sys

import pytest

from core.tools.builtin import builtin_registry
from core.tools.files import file_list, file_read
from core.tools.registry import ToolError
from core.tools.search import MAX_FILE_BYTES, file_search
from tests.support.office import docx_bytes, xlsx_bytes
from tests.support.pdfs import locked, pdf_bytes, write_pdf


def write(ctx, path: str, text: str) -> None:
    target = ctx.workdir / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def test_matching_lines_come_as_path_line_text_and_lead_to_file_read(ctx):
    write(ctx, "src/app.py", "import os\n\ndef parse_config(path):\n    return path\n")
    write(ctx, "src/cli.py", "from app import parse_config\nparse_config('x')\n")
    write(ctx, "README.md", "Nothing here.\n")
    out = file_search(ctx, "parse_config")
    assert out.splitlines() == [
        "src/app.py:3: def parse_config(path):",
        "src/cli.py:1: from app import parse_config",
        "src/cli.py:2: parse_config('x')",
        "[3 matching lines in 2 files under '.']",
    ]
    path, line, _ = out.splitlines()[0].split(":", 2)
    assert "def parse_config" in file_read(ctx, path, offset=int(line), limit=1)


def test_a_subfolder_search_names_paths_from_the_workdir(ctx):
    write(ctx, "pkg/sub/mod.py", "VALUE = 1\n")
    write(ctx, "other.py", "VALUE = 2\n")
    assert file_search(ctx, "VALUE", path="pkg").splitlines()[0] == "pkg/sub/mod.py:1: VALUE = 1"


def test_the_name_pattern_case_and_regex_options(ctx):
    write(ctx, "a.py", "Error: disk full\n")
    write(ctx, "a.txt", "error: disk full\n")
    assert [line.split(":")[0] for line in file_search(ctx, "disk", pattern="*.py").splitlines()[:-1]] == ["a.py"]
    assert len(file_search(ctx, "ERROR").splitlines()) == 1  # only the summary: case matters by default
    assert len(file_search(ctx, "ERROR", ignore_case=True).splitlines()) == 3
    assert file_search(ctx, r"^E\w+:", regex=True).splitlines()[0] == "a.py:1: Error: disk full"
    # Without regex, the text is taken as written: "." and "(" are not special.
    write(ctx, "b.py", "call(x)\ncallax\n")
    assert file_search(ctx, "call(x)").splitlines()[0] == "b.py:1: call(x)"


def test_hidden_folders_binary_and_huge_files_are_skipped_and_the_huge_ones_named(ctx):
    write(ctx, ".git/config", "needle\n")
    write(ctx, "src/ok.py", "needle\n")
    (ctx.workdir / "img.bin").write_bytes(b"needle\x00\x01")
    (ctx.workdir / "lib.so").write_bytes(b"\x7fELF\x00" + b"needle" * MAX_FILE_BYTES)  # not named: unreadable anyway
    write(ctx, "big.log", "needle\n" * (MAX_FILE_BYTES // 7 + 1))
    out = file_search(ctx, "needle")
    assert out.splitlines() == ["src/ok.py:1: needle", "[1 matching line in 1 file under '.']",
                                "[skipped, over 2 MB: big.log; search one by naming it as the path]"]


def test_the_output_stops_at_the_limit_and_says_how_to_narrow_it(ctx):
    write(ctx, "many.txt", "".join(f"match number {i}\n" for i in range(5000)))
    write(ctx, "long.txt", "match " + "x" * 10_000 + "\n")
    out = file_search(ctx, "match")
    assert len(out) <= ctx.output_chars
    assert "long.txt:1: match " + "x" * 194 + "…" in out  # a long line is cut
    # Where the matches it had no room for are, most first: where to narrow the search to.
    shown = out.count("\nmany.txt:")
    assert out.endswith(f"stopped at the output limit; {5000 - shown:,} more matching lines in 1 file, most in "
                        f"many.txt ({5000 - shown:,}): narrow the path, pattern or text]")


def test_the_matches_past_the_output_are_counted_by_the_folders_they_are_in(ctx):
    # The agent saw the first 40 of 55,000 matches, and nothing of where the rest were.
    for package, count in (("proxy", 30), ("llms", 20), ("caching", 5)):
        for i in range(count):
            write(ctx, f"src/{package}/m{i:02}.py", "import litellm\n" * 10)
    out = file_search(ctx, "litellm")
    assert len(out) <= ctx.output_chars
    summary = out.splitlines()[-1]
    assert summary.startswith("[") and " more matching lines in " in summary
    assert ", most in src/proxy/ (300), src/llms/ (" in summary  # (caching came first: some of it was shown)


def test_a_match_deep_in_a_long_line_is_shown_with_what_is_around_it(ctx):
    # Minified code is one line of megabytes: its first 200 characters left out the match.
    write(ctx, "bundle.min.js", "var a=1;" * 1000 + "function needle(){return 42}" + ";b=2" * 1000 + "\n")
    [line, _] = file_search(ctx, "needle").splitlines()
    assert line.startswith("bundle.min.js:1: …") and line.endswith("…")
    assert "var a=1;function needle(){return 42};b=2" in line and len(line) < 240


def test_no_match_says_what_was_searched(ctx):
    write(ctx, "a.py", "x = 1\n")
    assert file_search(ctx, "absent", pattern="*.py") == "[no lines containing 'absent' under '.' in files matching '*.py']"


@pytest.mark.parametrize(("arguments", "message"), [
    ({"query": ""}, "non-empty"),
    ({"query": "a\nb"}, "one line"),
    ({"query": "(", "regex": True}, "Not a valid regular expression"),
    ({"query": "x", "path": "../"}, "outside the workdir"),
    ({"query": "x", "path": "missing"}, "No such folder"),
    ({"query": "x", "path": "blob.bin"}, "'blob.bin' is a binary file: file_search searches text"),
    ({"query": "x", "path": "offload:."}, "searches the workdir"),
])
def test_bad_requests_are_refused_with_a_reason(ctx, arguments, message):
    (ctx.session_dir / "offload").mkdir(parents=True)
    write(ctx, "a.py", "x = 1\n")
    (ctx.workdir / "blob.bin").write_bytes(b"x\x00\x01")
    with pytest.raises(ToolError, match=message):
        file_search(ctx, **arguments)


@pytest.mark.skipif(sys.platform == "win32", reason="creating symlinks needs privileges on Windows")
def test_a_link_to_a_file_outside_the_workdir_is_not_read(ctx, tmp_path):
    (tmp_path / "secret.txt").write_text("password=needle\n", encoding="utf-8")
    os.symlink(tmp_path / "secret.txt", ctx.workdir / "link.txt")
    write(ctx, "mine.txt", "needle\n")
    assert "password" not in file_search(ctx, "needle")


def test_it_is_a_reading_tool_of_the_file_group():
    spec = builtin_registry().get("file_search")
    assert spec.group == "file" and spec.gathers_information and not spec.risky


def test_a_search_of_a_huge_tree_stops_and_says_where(ctx, monkeypatch):
    monkeypatch.setattr("core.tools.search.MAX_FILES", 5)
    for i in range(8):
        write(ctx, f"f{i}.txt", "hay\n")
    assert file_search(ctx, "needle") == ("[no lines containing 'needle' under '.' in the first 5 files; "
                                          "stopped after 5 files: narrow the path or pattern]")


def test_files_in_another_encoding_are_named_and_searched_in_it(ctx):
    """An older Chinese project keeps its source in GBK: a UTF-8 search cannot match its Chinese
    text, says which files those are, and a search in their encoding finds the line."""
    (ctx.workdir / "legacy.py").write_bytes("# 用户登录\nprint('登录失败')\n".encode("gbk"))
    write(ctx, "new.py", "# 用户登录, UTF-8\n")
    first = file_search(ctx, "登录")
    assert first.splitlines()[0] == "new.py:1: # 用户登录, UTF-8"
    assert "legacy.py" not in first.splitlines()[1] and "not utf-8" in first and "legacy.py" in first
    assert 'encoding="gbk"' in first
    again = file_search(ctx, "登录失败", encoding="gbk")
    assert again.splitlines()[0] == "legacy.py:2: print('登录失败')"
    assert "not gbk" not in again  # new.py's ASCII and CJK bytes happen to be valid GBK too
    with pytest.raises(ToolError, match="Unknown encoding"):
        file_search(ctx, "x", encoding="klingon")


def test_pdfs_are_searched_in_their_text_and_a_match_leads_to_file_read(ctx):
    # "Which of these papers reports a hit rate?" was answered by reading each PDF: none were searched.
    (ctx.workdir / "papers").mkdir()
    write_pdf(ctx.workdir / "papers" / "kv.pdf", [["Introduction", "Agents resend their history."],
                                                  ["Results", "The prefix cache hit rate was 0.97."]])
    write_pdf(ctx.workdir / "papers" / "scan.pdf", [None])
    (ctx.workdir / "papers" / "locked.pdf").write_bytes(locked(pdf_bytes([["hit rate"]]), user_password="pw"))
    write(ctx, "papers/notes.md", "to check: the hit rate\n")
    out = file_search(ctx, "hit rate", path="papers")
    assert out.splitlines() == ["papers/kv.pdf:7: (page 2) The prefix cache hit rate was 0.97.",
                                "papers/notes.md:1: to check: the hit rate",
                                "[2 matching lines in 2 files under 'papers']",
                                "[documents with no text to search (scans, or locked with a password): papers/locked.pdf, "
                                "papers/scan.pdf]"]
    assert file_read(ctx, "papers/kv.pdf", offset=7, limit=1).splitlines()[1] == "The prefix cache hit rate was 0.97."


def test_word_and_excel_files_are_searched_in_their_text_a_match_saying_its_sheet_and_row(ctx):
    (ctx.workdir / "costs.xlsx").write_bytes(xlsx_bytes({"Q3, EU": [["Item", "Cost"], ["GPU hours", 900]],
                                                         "Q4": [["Item", "Cost"], [], ["GPU hours", 1300]]}))
    (ctx.workdir / "plan.docx").write_bytes(docx_bytes(["Budget", "We need more GPU hours."]))
    out = file_search(ctx, "GPU hours")
    assert out.splitlines() == ["costs.xlsx:3: (sheet Q3, EU, row 2) GPU hours,900",
                                "costs.xlsx:8: (sheet Q4, row 3) GPU hours,1300",
                                "plan.docx:2: We need more GPU hours.",
                                "[3 matching lines in 2 files under '.']"]
    assert file_read(ctx, "costs.xlsx", offset=8, limit=1).splitlines()[1] == "GPU hours,1300"


def test_line_numbers_count_lines_as_file_read_does(ctx):
    """A form feed or a Unicode line separator inside a line does not start a new one."""
    write(ctx, "odd.py", "a = 1\x0c# page\nb = 2\u2028c\nmark = 3\r\nold_mac = 4\rlast = 5\n")
    out = file_search(ctx, "=")
    numbers = [int(line.split(":")[1]) for line in out.split("\n")[:-1]]
    assert numbers == [1, 2, 3, 4, 5]
    for number, needle in zip(numbers, ("a = 1", "b = 2", "mark", "old_mac", "last")):
        assert needle in file_read(ctx, "odd.py", offset=number, limit=1)


def test_a_search_in_utf16_reads_the_files_that_binary_sniffing_would_skip(ctx):
    """PowerShell writes UTF-16 (full of NUL bytes, like a binary file)."""
    (ctx.workdir / "build.log").write_bytes("Build succeeded.\nWarnung: Übersetzung fehlt\n".encode("utf-16"))
    (ctx.workdir / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00")
    assert "no lines containing" in file_search(ctx, "Übersetzung")  # skipped as binary in UTF-8
    found = file_search(ctx, "Übersetzung", encoding="utf-16")
    assert found.splitlines()[0] == "build.log:2: Warnung: Übersetzung fehlt" and "logo.png" not in found


def a_project_with_dependencies(ctx) -> None:
    """A project as it looks on disk after installing and building: its own code, and far more."""
    (ctx.workdir / ".git").mkdir()
    write(ctx, ".gitignore", "build/\n*.log\n!keep.log\n.env\n")
    write(ctx, "src/app.py", "needle = 1\n")
    write(ctx, "src/.gitignore", "generated/\n")  # a nested .gitignore speaks for its folder
    write(ctx, "src/generated/out.py", "needle\n")
    write(ctx, "packages/web/index.js", "needle\n")
    write(ctx, "keep.log", "needle\n")
    for ignored in ("node_modules/react/index.js", "packages/web/node_modules/x/i.js", "venv/lib/site.py",
                    "target/debug/main.rs", "build/out.txt", "app.log", ".env", "src/__pycache__/app.pyc"):
        write(ctx, ignored, "needle\n")
    write(ctx, "venv/pyvenv.cfg", "home = /usr\n")
    write(ctx, "target/CACHEDIR.TAG", "Signature: 8a477f597d28d172789f06886806bc55\n")


def test_dependencies_virtual_environments_caches_and_gitignored_files_are_not_searched_and_named(ctx):
    a_project_with_dependencies(ctx)
    lines = file_search(ctx, "needle").splitlines()
    assert lines[:4] == ["keep.log:1: needle", "packages/web/index.js:1: needle", "src/app.py:1: needle = 1",
                         "[3 matching lines in 3 files under '.']"]
    assert lines[4] == ("[not searched: build/ (.gitignore), node_modules/ (dependencies), target/ (a cache folder), "
                        "venv/ (a virtual environment), packages/web/node_modules/ (dependencies), 1 more folder, "
                        "2 files .gitignore excludes. Give a folder's path to search it if the task is about it]")
    # Asked for by its path, a folder passed over is searched, .gitignore or not.
    assert file_search(ctx, "needle", path="build").splitlines()[0] == "build/out.txt:1: needle"
    assert file_search(ctx, "needle", path="node_modules").splitlines()[0] == "node_modules/react/index.js:1: needle"
    assert file_search(ctx, "needle", path="src/generated").splitlines()[0] == "src/generated/out.py:1: needle"
    assert file_read(ctx, "app.log").endswith("\nneedle\n")  # and any file is read by its name


def test_node_modules_asked_for_by_its_path_is_searched_when_gitignore_lists_it_too(ctx):
    # Nearly every JavaScript project's .gitignore lists node_modules/: asked for by its path, the
    # folder's packages were still passed over by that line, and the agent told to give the path
    # it had given.
    (ctx.workdir / ".git").mkdir()
    write(ctx, ".gitignore", "node_modules/\n")
    write(ctx, "node_modules/react/index.js", "needle\n")
    found = file_search(ctx, "needle", path="node_modules")
    assert found.splitlines()[0] == "node_modules/react/index.js:1: needle" and "not searched" not in found
    assert file_list(ctx, "node_modules").splitlines() == ["react/index.js"]


def test_one_file_named_by_its_path_is_searched_whatever_its_size(ctx):
    # A 3 MB log was "skipped, over 2 MB; read them with file_read": 750 reads of 4,000 characters to
    # find one order's lines, or a grep the person had to approve.
    lines = [f"2026-11-29 10:{n // 60 % 60:02d}:{n % 60:02d} INFO order {n} shipped" for n in range(60_000)]
    lines[41_234] = "2026-11-29 10:07:14 ERROR order 41234 refused: card declined"
    write(ctx, "logs/app.log", "\n".join(lines) + "\n")
    assert (ctx.workdir / "logs/app.log").stat().st_size > MAX_FILE_BYTES
    assert file_search(ctx, "ERROR", path="logs/app.log").splitlines() == [
        "logs/app.log:41235: 2026-11-29 10:07:14 ERROR order 41234 refused: card declined",
        "[1 matching line in 1 file in 'logs/app.log']"]
    assert file_read(ctx, "logs/app.log", offset=41235, limit=1).splitlines()[1].endswith("card declined")
    many = file_search(ctx, "shipped", path="logs/app.log").splitlines()
    assert many[0] == "logs/app.log:1: 2026-11-29 10:00:00 INFO order 0 shipped"
    assert many[-1].startswith("[") and "59,9" in many[-1] and "more matching lines in 1 file, most in logs/app.log" in many[-1]
    # A saved output (a command's long log) is searched by its name too.
    (ctx.offload_dir).mkdir(parents=True)
    (ctx.offload_dir / "pytest-1.log").write_text("ok\nFAILED tests/test_x.py::test_y\n", encoding="utf-8")
    assert file_search(ctx, "FAILED", path="offload:pytest-1.log").splitlines()[0] == \
        "offload:pytest-1.log:2: FAILED tests/test_x.py::test_y"


def test_a_file_read_in_slices_numbers_its_lines_as_when_read_whole(ctx, monkeypatch):
    # Slices end anywhere: between \r and \n, inside a line, inside a character of several bytes.
    from core import big_text
    from core.tools import search

    ends = ("\r\n", "\n", "\r")
    text = "".join(f"line {n} é{'needle' if n % 7 == 0 else ''}{ends[n % 3]}" for n in range(400))
    (ctx.workdir / "mixed.txt").write_bytes(text.encode("utf-8") + b"\xff tail needle")
    whole = file_search(ctx, "needle", path="mixed.txt")
    monkeypatch.setattr(search, "MAX_FILE_BYTES", 10)
    for size in (1, 2, 3, 5, 64):
        monkeypatch.setattr(big_text, "SLICE", size)
        assert file_search(ctx, "needle", path="mixed.txt") == whole
    assert whole.splitlines()[-2:] == ["[59 matching lines in 1 file in 'mixed.txt']",
                                       "[not utf-8, so searched with their other characters as �: mixed.txt; search them "
                                       'with their encoding (encoding="gbk", "cp1252", …)]']


def test_a_compressed_log_is_read_and_searched_by_its_path_and_passed_over_in_a_folder(ctx):
    # Rotated logs are gzipped: "binary file", and a command the person approved to read one.
    import bz2
    import gzip
    import lzma

    lines = "".join(f"10:{n % 60:02d} INFO request {n}\n" for n in range(5000)).replace("request 4321\n",
                                                                                      "request 4321 failed: timeout\n")
    (ctx.workdir / "logs").mkdir()
    for name, packed in (("app.log.1.gz", gzip.compress), ("app.log.2.bz2", bz2.compress), ("app.log.3.xz", lzma.compress)):
        (ctx.workdir / "logs" / name).write_bytes(packed(lines.encode()))
        assert file_search(ctx, "failed", path=f"logs/{name}").splitlines()[0] == \
            f"logs/{name}:4322: 10:01 INFO request 4321 failed: timeout"
        assert file_read(ctx, f"logs/{name}", offset=4322, limit=1).splitlines()[1] == "10:01 INFO request 4321 failed: timeout"
    assert file_read(ctx, "logs/app.log.3.xz", limit=1).splitlines()[0] == (
        "[logs/app.log.3.xz: lines 1-1 of 5000; continue with offset=2; the text of an xz-compressed file (118,906 "
        "bytes unpacked), its text as unpacked]")
    write(ctx, "logs/app.log", "10:00 INFO failed nothing\n")
    assert file_search(ctx, "failed").splitlines() == [
        "logs/app.log:1: 10:00 INFO failed nothing", "[1 matching line in 1 file under '.']",
        "[compressed files passed over: logs/app.log.1.gz, logs/app.log.2.bz2, logs/app.log.3.xz; search one by naming "
        "it as the path]"]
    (ctx.workdir / "logs/cut.gz").write_bytes(gzip.compress(lines.encode())[:100])
    with pytest.raises(ToolError, match=r"^logs/cut\.gz is a gzip-compressed file that cannot be unpacked \(Compressed "
                                        r"file ended before the end-of-stream marker was reached\): damaged or cut short"):
        file_read(ctx, "logs/cut.gz")
