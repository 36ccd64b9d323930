from __future__ import annotations

import os
import sys

import pytest

from core.tools.files import file_edit, file_list, file_read, file_write
from core.tools.registry import ToolError
from core.tools.seen import SeenFiles
from tests.support.office import docx_bytes, xlsx_bytes
from tests.support.pdfs import locked, pdf_bytes, write_pdf


@pytest.mark.parametrize("path", ["../secret.txt", "sub/../../secret.txt", "/etc/passwd"])
def test_paths_outside_the_workdir_are_refused(ctx, tmp_path, path):
    (tmp_path / "secret.txt").write_text("s", encoding="utf-8")
    with pytest.raises(ToolError, match="outside the workdir"):
        file_read(ctx, path)
    with pytest.raises(ToolError, match="outside the workdir"):
        file_write(ctx, path, "x")
    assert (tmp_path / "secret.txt").read_text(encoding="utf-8") == "s"


@pytest.mark.skipif(sys.platform == "win32", reason="creating symlinks needs privileges on Windows")
def test_a_symlink_pointing_outside_is_refused(ctx, tmp_path):
    (tmp_path / "outside.txt").write_text("s", encoding="utf-8")
    os.symlink(tmp_path / "outside.txt", ctx.workdir / "link.txt")
    os.symlink(tmp_path, ctx.workdir / "up")
    # Said to be a link: "Use a path relative to the workdir" told the agent to do what it had done.
    with pytest.raises(ToolError) as refused:
        file_read(ctx, "link.txt")
    assert str(refused.value) == (f"Refused: 'link.txt' is a link in the workdir that leads outside it, to "
                                  f"{(tmp_path / 'outside.txt').resolve()}. Only what is inside the workdir "
                                  f"({ctx.workdir.resolve()}) can be used.")
    with pytest.raises(ToolError, match="'up/outside.txt' is a link in the workdir that leads outside it"):
        file_write(ctx, "up/outside.txt", "x")
    assert (tmp_path / "outside.txt").read_text(encoding="utf-8") == "s"


def test_absolute_paths_inside_the_workdir_are_fine(ctx):
    (ctx.workdir / "a.txt").write_text("hello\n", encoding="utf-8")
    assert "hello" in file_read(ctx, str(ctx.workdir / "a.txt"))


def test_read_returns_a_window_of_lines_and_says_how_to_continue(ctx):
    (ctx.workdir / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 1001)), encoding="utf-8")
    out = file_read(ctx, "n.txt", offset=10, limit=3)
    assert out.splitlines() == ["[n.txt: lines 10-12 of 1000; continue with offset=13]", "line 10", "line 11", "line 12"]
    with pytest.raises(ToolError, match="past the end"):
        file_read(ctx, "n.txt", offset=2000)


def test_binary_files_are_refused_with_their_size(ctx):
    (ctx.workdir / "model.bin").write_bytes(b"\x89PNG\x00\x00" + bytes(1000))
    with pytest.raises(ToolError, match="binary file .1,006 bytes"):
        file_read(ctx, "model.bin")
    (ctx.workdir / "img.png").write_bytes(b"\x89PNG\x00\x00" + bytes(1000))  # (a model that sees pictures sees it)
    with pytest.raises(ToolError, match=r"^'img.png' is a picture \(1,006 bytes\), and this model cannot see pictures"):
        file_read(ctx, "img.png")


def test_a_binary_data_file_is_said_what_it_is_and_how_to_read_it(ctx):
    import sqlite3

    with sqlite3.connect(ctx.workdir / "sales.db") as db:
        db.execute("create table t (x)")
    db.close()
    with pytest.raises(ToolError, match=r"It is a SQLite database: query it in a command \(`sqlite3 sales.db '.tables'`"):
        file_read(ctx, "sales.db")
    (ctx.workdir / "data").mkdir()
    (ctx.workdir / "data/part-0.parquet").write_bytes(b"PAR1\x15\x04\x00" + bytes(100))
    with pytest.raises(ToolError, match=r"It is a Parquet table: read it in a command \(`python -c \"import pandas as pd; "
                                        r"print\(pd.read_parquet\('data/part-0.parquet'\).head\(\)\)\"`, with pyarrow\)\.$"):
        file_read(ctx, "data/part-0.parquet")
    (ctx.workdir / "model.pkl").write_bytes(b"\x80\x04\x95\x00" + bytes(20))
    with pytest.raises(ToolError, match="It is a Python pickle: loading one runs the code it holds"):
        file_read(ctx, "model.pkl")
    (ctx.workdir / "weights.bin").write_bytes(b"\x80\x04\x95\x00" + bytes(20))  # (not named a pickle: said nothing of)
    with pytest.raises(ToolError, match=r"binary file \(24 bytes\); only text files can be read\.$"):
        file_read(ctx, "weights.bin")


def test_a_pdf_is_read_as_its_text_slice_by_slice(ctx):
    # A paper the person put in the folder to study was "a binary file; only text files can be read".
    pages = [[f"Section {n}.{k}: the cache hit rate of run {k} was 0.9{k}." for k in range(1, 31)] for n in (1, 2)]
    (ctx.workdir / "papers").mkdir()
    write_pdf(ctx.workdir / "papers" / "kv-cache.pdf", [*pages, None])
    first = file_read(ctx, "papers/kv-cache.pdf", limit=10)
    assert first.splitlines() == [
        "[papers/kv-cache.pdf: lines 1-10 of 65; continue with offset=11; the text of a PDF of 3 pages (1 of them "
        "pictures only), each page after a [page K of N] line]",
        "[page 1 of 3]", *(f"Section 1.{k}: the cache hit rate of run {k} was 0.9{k}." for k in range(1, 10))]
    rest = file_read(ctx, "papers/kv-cache.pdf", offset=30, limit=100)
    assert rest.splitlines()[1:] == [
        "Section 1.29: the cache hit rate of run 29 was 0.929.", "Section 1.30: the cache hit rate of run 30 was 0.930.",
        "", "[page 2 of 3]", *(f"Section 2.{k}: the cache hit rate of run {k} was 0.9{k}." for k in range(1, 31)),
        "", "[page 3 of 3: no text, a picture only (a scan, a figure)]"]
    assert list((ctx.session_dir / "offload" / "documents").glob("pdf-*.txt"))  # (extracted once, read from there)


def test_a_pdf_with_no_text_or_a_password_says_why_it_cannot_be_read(ctx):
    write_pdf(ctx.workdir / "scan.pdf", [None])
    with pytest.raises(ToolError, match=r"^scan\.pdf has no text, only pictures of its 1 page \(a scan, most likely\)"):
        file_read(ctx, "scan.pdf")
    (ctx.workdir / "contract.pdf").write_bytes(locked(pdf_bytes([["Terms"]]), user_password="pw"))
    with pytest.raises(ToolError, match=r"^contract\.pdf is a PDF locked with a password"):
        file_read(ctx, "contract.pdf")
    (ctx.workdir / "raw.pdf").write_text("%PDF-1.4 written by hand\n", encoding="utf-8")
    # (a read with an encoding reads the bytes as text: the PDF's source, should the agent want it)
    assert file_read(ctx, "raw.pdf", encoding="latin-1").splitlines()[1] == "%PDF-1.4 written by hand"


def test_word_excel_and_powerpoint_files_are_read_as_their_text_and_an_old_one_is_said_so(ctx):
    (ctx.workdir / "budget.xlsx").write_bytes(xlsx_bytes({"2025": [["Item", "Cost"], ["Servers", 1200]]}))
    assert file_read(ctx, "budget.xlsx").splitlines() == [
        "[budget.xlsx: lines 1-3 of 3; the text of an Excel workbook of 1 sheet, each after a [sheet K of N: NAME, …] "
        "line, its rows as CSV lines from row 1 (formulas as their values)]",
        "[sheet 1 of 1: 2025, 2 rows × 2 columns]", "Item,Cost", "Servers,1200"]
    (ctx.workdir / "spec.docx").write_bytes(docx_bytes([("1", "Export"), "The CSV has a header row."]))
    assert file_read(ctx, "spec.docx").splitlines()[1:] == ["# Export", "The CSV has a header row."]
    (ctx.workdir / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(2000))
    with pytest.raises(ToolError, match=r"^'old\.xls' is a binary file \(2,008 bytes\); only text files can be read\. "
                                        r"It is an Office file \(the format before 2007\) or one locked with a password"):
        file_read(ctx, "old.xls")


def test_write_edit_and_list(ctx):
    assert file_write(ctx, "src/app.py", "print('hi')\n").startswith("Created")
    assert file_edit(ctx, "src/app.py", "hi", "hello").startswith("Edited")
    assert (ctx.workdir / "src/app.py").read_text(encoding="utf-8") == "print('hello')\n"
    with pytest.raises(ToolError, match=r"^The text to replace was not found in 'src/app.py'.* Read the lines again"):
        file_edit(ctx, "src/app.py", "absent", "x")
    file_write(ctx, "src/b.py", "x")
    # Said without the tool's name, which the failure line before it already gives, and with what to do.
    with pytest.raises(ToolError, match=r"^The text to replace was found 2 times .* Include more of the lines around it"):
        file_write(ctx, "src/c.py", "aa"), file_edit(ctx, "src/c.py", "a", "b")
    assert file_list(ctx, ".", "*.py").splitlines() == ["src/app.py", "src/b.py", "src/c.py"]


def test_a_windows_file_keeps_its_crlf_line_endings_through_edits_and_rewrites(ctx):
    """git checks files out with CRLF on Windows; a model copies lines from a read with "\n"."""
    source = ctx.workdir / "calc.py"
    source.write_bytes(b"def add(a, b):\r\n    return a - b\r\n\r\nprint(add(1, 2))\r\n")
    assert file_edit(ctx, "calc.py", "def add(a, b):\n    return a - b", "def add(a, b):\n    return a + b")
    assert source.read_bytes() == b"def add(a, b):\r\n    return a + b\r\n\r\nprint(add(1, 2))\r\n"
    said = file_write(ctx, "calc.py", "def add(a, b):\n    return b + a\n")
    assert said.endswith("its CRLF line endings kept).")
    assert source.read_bytes() == b"def add(a, b):\r\n    return b + a\r\n"
    # Unix files, and new files, are written as given.
    unix = ctx.workdir / "unix.py"
    unix.write_bytes(b"a = 1\nb = 2\n")
    file_edit(ctx, "unix.py", "a = 1\nb = 2", "a = 1\nb = 3")
    assert unix.read_bytes() == b"a = 1\nb = 3\n"
    file_write(ctx, "new.txt", "one\ntwo\n")
    assert (ctx.workdir / "new.txt").read_bytes() == b"one\ntwo\n"
    # Visual Studio marks a UTF-8 file with a byte order mark: a rewrite keeps it, once.
    marked = ctx.workdir / "Program.cs"
    marked.write_bytes(b"\xef\xbb\xbfusing System;\r\nclass A {}\r\n")
    file_edit(ctx, "Program.cs", "class A", "class B")
    assert marked.read_bytes() == b"\xef\xbb\xbfusing System;\r\nclass B {}\r\n"
    said = file_write(ctx, "Program.cs", "using X;\nclass C {}\n")
    assert said.endswith("its CRLF line endings kept; its byte order mark kept).")
    assert marked.read_bytes() == b"\xef\xbb\xbfusing X;\r\nclass C {}\r\n"
    file_write(ctx, "Program.cs", "\ufeffusing Y;\r\n")  # the agent wrote it itself
    assert marked.read_bytes() == b"\xef\xbb\xbfusing Y;\r\n"


def test_offloaded_outputs_are_readable_but_confined(ctx):
    ctx.offload_dir.mkdir(parents=True)
    (ctx.offload_dir / "turn0001-x.txt").write_text("full output\n", encoding="utf-8")
    assert "full output" in file_read(ctx, "offload:turn0001-x.txt")
    with pytest.raises(ToolError, match="outside the offload folder"):
        file_read(ctx, "offload:../task_plan.md")


def test_a_saved_output_or_session_file_named_as_a_work_folder_file_is_pointed_to(ctx):
    # The chat and the terminal show an offloaded output as offload/NAME; an agent gave that back.
    ctx.offload_dir.mkdir(parents=True)
    (ctx.offload_dir / "turn0005-call_shell_run.txt").write_text("1\n2\n", encoding="utf-8")
    ctx.memory.create(title="t", task="Fix the rounding bug")
    with pytest.raises(ToolError) as refused:
        file_read(ctx, "offload/turn0005-call_shell_run.txt")
    assert str(refused.value) == ("No such file: 'offload/turn0005-call_shell_run.txt'. It is a saved output: read it "
                                  'as file_read(path="offload:turn0005-call_shell_run.txt").')
    with pytest.raises(ToolError) as refused:
        file_read(ctx, "findings.md")
    assert str(refused.value) == ("No such file: 'findings.md'. The session's own findings.md is read as "
                                  'file_read(path="session:findings.md").')
    with pytest.raises(ToolError) as refused:  # (no such saved output: nothing to point to)
        file_read(ctx, "offload/turn0009-other.txt")
    assert str(refused.value) == "No such file: 'offload/turn0009-other.txt'."
    # The work folder's own file of that name is the one read.
    (ctx.workdir / "offload").mkdir()
    (ctx.workdir / "offload" / "turn0005-call_shell_run.txt").write_text("the project's\n", encoding="utf-8")
    assert "the project's" in file_read(ctx, "offload/turn0005-call_shell_run.txt")


def test_session_files_are_readable_with_the_session_scheme_but_not_writable(ctx):
    ctx.memory.create(title="t", task="Fix the rounding bug")
    assert "Fix the rounding bug" in file_read(ctx, "session:task_plan.md")
    assert file_read(ctx, "session:findings.md").startswith("[session:findings.md: lines 1-")
    for write in (lambda p: file_write(ctx, p, "x"), lambda p: file_edit(ctx, p, "Fix", "Break")):
        with pytest.raises(ToolError, match="can be read, not written.*plan_update"):
            write("session:task_plan.md")
    assert "Fix the rounding bug" in ctx.memory.read("task_plan.md")[0]
    with pytest.raises(ToolError, match="Unknown session file.*task_plan.md"):
        file_read(ctx, "session:../../etc/passwd")
    (ctx.offload_dir).mkdir(parents=True)
    (ctx.offload_dir / "turn0001-x.txt").write_text("saved\n", encoding="utf-8")
    with pytest.raises(ToolError, match="can be read, not written"):
        file_write(ctx, "offload:turn0001-x.txt", "changed")
    assert (ctx.offload_dir / "turn0001-x.txt").read_text(encoding="utf-8") == "saved\n"


def test_a_read_returns_whole_lines_up_to_the_output_limit_and_says_where_to_go_on(ctx):
    """A read is never offloaded: it stops at whole lines under the limit; the file is the copy."""
    (ctx.workdir / "long.py").write_text("".join(f"line_{i} = {i}  # " + "x" * 60 + "\n" for i in range(1, 501)),
                                         encoding="utf-8")
    first = file_read(ctx, "long.py", limit=400)
    header, _, body = first.partition("\n")
    assert len(first) <= ctx.output_chars and body.startswith("line_1 = 1") and body.endswith("\n")
    shown = body.count("\n")
    assert 30 < shown < 400 and header == f"[long.py: lines 1-{shown} of 500; continue with offset={shown + 1}]"
    following = file_read(ctx, "long.py", offset=shown + 1, limit=5)
    assert following.split("\n")[1].startswith(f"line_{shown + 1} = ")
    (ctx.workdir / "min.json").write_text("[" + "1," * 10_000 + "1]\n", encoding="utf-8")
    one = file_read(ctx, "min.json")
    assert len(one) <= ctx.output_chars and "line 1 is longer; only its first" in one
    assert "characters are shown: file_search shows the text around a match further in)" in one  # (how to read on)


@pytest.mark.parametrize("path", ["a.txt\nrow 2 of something pasted", "x" * 5000])
def test_text_that_is_not_a_path_gets_a_clear_refusal(ctx, path):
    with pytest.raises(ToolError, match="Not a path"):
        file_read(ctx, path)


GBK_SOURCE = '# 计算器模块\ndef add(a, b):\n    """两个数相加"""\n    return a + b\n'


def test_a_file_that_is_not_utf8_is_said_so_and_read_in_the_encoding_named(ctx):
    (ctx.workdir / "calc.py").write_bytes(GBK_SOURCE.encode("gbk"))
    plain = file_read(ctx, "calc.py")
    assert "not UTF-8 from line 1" in plain.splitlines()[0] and "�" in plain
    named = file_read(ctx, "calc.py", encoding="gbk")
    assert named == "[calc.py: lines 1-4 of 4; encoding gbk]\n" + GBK_SOURCE
    with pytest.raises(ToolError, match=r"'calc.py' is not shift_jis \(line 1\)"):
        file_read(ctx, "calc.py", encoding="shift_jis")
    with pytest.raises(ToolError, match="Unknown encoding 'klingon'"):
        file_read(ctx, "calc.py", encoding="klingon")


def test_a_file_that_is_not_utf8_is_never_changed_from_what_a_utf8_read_showed(ctx):
    """A rewrite from a read full of � would replace every character they stand for."""
    original = GBK_SOURCE.encode("gbk")
    (ctx.workdir / "calc.py").write_bytes(original)
    with pytest.raises(ToolError, match=r"not UTF-8 \(line 1\), so it was not changed.*encoding"):
        file_edit(ctx, "calc.py", "a + b", "a - b")
    with pytest.raises(ToolError, match=r"not UTF-8 \(line 1\), so it was not changed"):
        file_write(ctx, "calc.py", "# 计算器模块\n")
    assert (ctx.workdir / "calc.py").read_bytes() == original

    # In its own encoding it is edited and stays in it; what it cannot hold is refused.
    assert file_edit(ctx, "calc.py", "两个数相加", "两个数相加，返回和", encoding="gbk").startswith("Edited")
    assert (ctx.workdir / "calc.py").read_bytes() == GBK_SOURCE.replace("两个数相加", "两个数相加，返回和").encode("gbk")
    before = (ctx.workdir / "calc.py").read_bytes()
    with pytest.raises(ToolError, match="not changed: gbk has no '🙂'"):
        file_edit(ctx, "calc.py", "返回和", "返回和 🙂", encoding="gbk")
    assert (ctx.workdir / "calc.py").read_bytes() == before

    # Converted on purpose: written in UTF-8 when the agent says so.
    assert file_write(ctx, "calc.py", GBK_SOURCE, encoding="utf-8") == f"Replaced calc.py ({len(GBK_SOURCE)} characters, utf-8)."
    assert (ctx.workdir / "calc.py").read_text(encoding="utf-8") == GBK_SOURCE


def test_a_utf16_file_is_pointed_to_its_encoding_and_read_in_it(ctx):
    """What PowerShell 5 writes with `>`: UTF-16 with a byte order mark, NUL bytes throughout."""
    (ctx.workdir / "out.txt").write_bytes("PS output: ok\r\n".encode("utf-16"))
    with pytest.raises(ToolError, match='binary file.*encoding="utf-16"'):
        file_read(ctx, "out.txt")
    assert file_read(ctx, "out.txt", encoding="utf-16").endswith("PS output: ok\r\n")


def test_the_list_shows_the_project_not_its_dependencies_and_says_what_it_passed_over(ctx):
    from tests.core.tools.test_search import a_project_with_dependencies

    a_project_with_dependencies(ctx)
    lines = file_list(ctx).splitlines()
    assert lines[:6] == [".gitignore", "keep.log", "packages/web/index.js", "src/.gitignore", "src/app.py",
                         "[not listed: build/ (.gitignore), node_modules/ (dependencies), target/ (a cache folder), "
                         "venv/ (a virtual environment), packages/web/node_modules/ (dependencies), 1 more folder, "
                         "2 files .gitignore excludes. Give a folder's path to list it if the task is about it]"]
    assert file_list(ctx, "venv").splitlines() == ["pyvenv.cfg", "lib/site.py"]  # asked for: listed
    # A folder that is neither a repository nor has a .gitignore: everything but the usual folders.
    (ctx.workdir / ".git").rmdir()
    (ctx.workdir / ".gitignore").unlink()
    assert "build/out.txt" in file_list(ctx).splitlines() and "app.log" in file_list(ctx).splitlines()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no permission to run a file")
def test_an_edited_script_stays_executable_and_a_read_only_file_read_only(ctx):
    script, kept = ctx.workdir / "build.sh", ctx.workdir / "locked.txt"
    script.write_text("#!/bin/sh\necho one\n", encoding="utf-8")
    script.chmod(0o750)
    kept.write_text("a\n", encoding="utf-8")
    kept.chmod(0o444)
    file_edit(ctx, "build.sh", "echo one", "echo two")
    file_write(ctx, "locked.txt", "b\n")
    assert script.read_text(encoding="utf-8") == "#!/bin/sh\necho two\n" and (script.stat().st_mode & 0o777) == 0o750
    assert (kept.stat().st_mode & 0o777) == 0o444


def test_a_rewrite_of_a_file_changed_since_the_agent_read_it_is_refused_and_an_edit_goes_on(ctx):
    ctx.seen = SeenFiles(ctx.workdir)
    notes = ctx.workdir / "notes.md"
    notes.write_text("# Notes\n", encoding="utf-8")
    file_write(ctx, "fresh.md", "never read: written\n")
    file_read(ctx, "notes.md")
    notes.write_text("# Notes\nthe person's line\n", encoding="utf-8")  # a formatter, or the person
    with pytest.raises(ToolError, match="Not written: notes.md changed since you last read or wrote it"):
        file_write(ctx, "notes.md", "# Notes\nthe agent's line\n")
    assert notes.read_text(encoding="utf-8") == "# Notes\nthe person's line\n"
    file_edit(ctx, "notes.md", "# Notes", "# My notes")  # on the file as it is: nothing lost
    file_write(ctx, "notes.md", "# My notes\nthe person's line\nthe agent's line\n")  # its own edit: known
    file_read(ctx, "fresh.md")
    file_write(ctx, "fresh.md", "read, then written\n")
    assert (ctx.workdir / "fresh.md").read_text(encoding="utf-8") == "read, then written\n"



def test_a_file_too_large_to_change_as_text_is_refused_unchanged(ctx, monkeypatch):
    monkeypatch.setattr("core.tools.files.MAX_EDIT_BYTES", 1000)
    (ctx.workdir / "dump.sql").write_text("INSERT 1;\n" * 200, encoding="utf-8")
    with pytest.raises(ToolError, match=r"'dump.sql' is too large to change as text \(2,000 bytes; at most 1,000\)"):
        file_edit(ctx, "dump.sql", "INSERT 1;\nINSERT 1;\n" * 100, "")
    assert (ctx.workdir / "dump.sql").read_text(encoding="utf-8") == "INSERT 1;\n" * 200
    assert file_write(ctx, "dump.sql", "small\n").startswith("Replaced")  # replaced whole, it need not be read
