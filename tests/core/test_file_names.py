"""Unusual entries in a work folder: names that are not UTF-8 (Linux allows any bytes in a name:
old archives, other locales) and named pipes."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from core.events import SessionEnded, ToolResult
from core.memory.working import WorkingMemory
from core.scripted import ScriptedModel, call, reply
from core.text import os_path, shown_text
from core.tools.context import ToolContext
from core.tools.files import file_edit, file_list, file_read, file_write
from core.tools.registry import ToolError
from tests.core.helpers import events_of, make_session

linux_only = pytest.mark.skipif(sys.platform != "linux", reason="only Linux file systems take names that are not UTF-8")


def latin1_file(folder, text: str = "latte\n"):
    """café.txt as a Latin-1 system of the 1990s wrote it: the é is the single byte E9."""
    name = os.path.join(os.fsencode(folder), b"caf\xe9.txt")
    with open(name, "wb") as fh:
        fh.write(text.encode("utf-8"))
    return os.fsdecode(name)


def test_the_shown_name_is_storable_and_reads_back():
    name = "caf\udce9.txt"  # how Python holds the byte E9 of a file name
    shown = shown_text(name)
    assert shown == "caf\\xe9.txt" and shown.encode("utf-8")
    assert os_path(shown) == name
    assert shown_text("lone \ud800 surrogate") == "lone \ufffd surrogate"  # not from a file name: no byte to show
    assert shown_text("plain ünïcödé") == "plain ünïcödé" and os_path(r"C:\x41") == r"C:\x41"  # ASCII escapes stay


@linux_only
def test_a_name_that_is_not_utf8_is_listed_read_and_edited(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    latin1_file(work)
    ctx = ToolContext(workdir=work, session_dir=tmp_path / "s", memory=WorkingMemory(tmp_path / "s"))
    listed = file_list(ctx)
    assert listed == "caf\\xe9.txt"
    assert "latte" in file_read(ctx, listed)
    file_edit(ctx, listed, "latte", "espresso")
    with open(os.path.join(os.fsencode(work), b"caf\xe9.txt"), "rb") as fh:
        assert fh.read() == b"espresso\n"


@linux_only
async def test_a_run_that_meets_such_a_name_goes_on(store, data_dir, workdir):
    """It died: the event log, progress.md and the next request all refused the name's text."""
    latin1_file(workdir)
    model = ScriptedModel([reply("", call("file_list", call_id="l")),
                           reply("", call("file_search", call_id="s", query="latte")),
                           reply("", call("file_read", call_id="r", path="nope-\udce9.txt")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    results = {e.call_id: e for e in events_of(session, ToolResult)}
    assert results["l"].content == "caf\\xe9.txt" and results["l"].ok
    assert results["s"].content.startswith("caf\\xe9.txt:1: latte")
    assert not results["r"].ok and "No such file" in results["r"].content  # a model's own lone surrogate
    assert all(e.content.encode("utf-8") for e in results.values())
    assert "caf\\xe9.txt" in " ".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert "caf\\xe9.txt" in session.read_file("progress.md")[0]
    reread = list(store.iter_records(session.id))  # the log holds it as stored text
    assert isinstance(reread[-1].event, SessionEnded) and len(reread) == len(session.records)


@linux_only
def test_a_work_folder_whose_path_is_not_utf8_is_refused_with_a_reason(store, data_dir, tmp_path):
    folder = os.fsdecode(os.path.join(os.fsencode(tmp_path), b"caf\xe9"))
    os.mkdir(folder)
    with pytest.raises(ValueError, match=r"caf\\xe9 is not UTF-8 text.*rename that folder"):
        make_session(store, data_dir, Path(folder), ScriptedModel([]))
    assert store.sessions() == []  # nothing half made


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are a POSIX file type")
def test_a_named_pipe_in_the_work_folder_is_refused_not_waited_on(tmp_path):
    """Opening a pipe to read waits for a writer: a search or a read of one hung the run."""
    from core.tools.search import file_search

    work = tmp_path / "work"
    work.mkdir()
    (work / "notes.txt").write_text("hello\n", encoding="utf-8")
    os.mkfifo(work / "events.pipe")
    ctx = ToolContext(workdir=work, session_dir=tmp_path / "s", memory=WorkingMemory(tmp_path / "s"))
    assert file_search(ctx, "hello").startswith("notes.txt:1: hello")
    assert file_list(ctx) == "notes.txt"
    for tool, arguments in ((file_read, {}), (file_edit, {"old": "a", "new": "b"}), (file_write, {"content": "x"})):
        with pytest.raises(ToolError, match="not a regular file"):
            tool(ctx, "events.pipe", **arguments)


def test_a_name_from_a_mac_is_found_however_the_model_writes_its_accents(tmp_path):
    import unicodedata

    work = tmp_path / "work"
    work.mkdir()
    decomposed = unicodedata.normalize("NFD", "résumé.md")  # as a Mac's archive keeps it
    (work / decomposed).write_text("# CV\n", encoding="utf-8")
    ctx = ToolContext(workdir=work, session_dir=tmp_path / "s", memory=WorkingMemory(tmp_path / "s"))
    composed = unicodedata.normalize("NFC", "résumé.md")  # as a model writes it
    assert "# CV" in file_read(ctx, composed)
    file_edit(ctx, composed, "CV", "Résumé")
    assert (work / decomposed).read_text(encoding="utf-8") == "# Résumé\n"
    assert len(list(work.iterdir())) == 1  # edited in place, not written beside it


@pytest.mark.skipif(os.sep != "/", reason="on Windows a backslash is the separator already")
def test_a_windows_style_path_finds_the_file_it_means(tmp_path):
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "app.py").write_text("print('hi')\n", encoding="utf-8")
    ctx = ToolContext(workdir=work, session_dir=tmp_path / "s", memory=WorkingMemory(tmp_path / "s"))
    assert "print('hi')" in file_read(ctx, "src\\app.py")
    file_edit(ctx, "src\\app.py", "hi", "hello")
    assert (work / "src" / "app.py").read_text(encoding="utf-8") == "print('hello')\n"
    file_write(ctx, "src\\util.py", "x = 1\n")  # a new file goes in the folder it names
    assert (work / "src" / "util.py").read_text(encoding="utf-8") == "x = 1\n"
    assert sorted(p.name for p in work.iterdir()) == ["src"]  # no file named 'src\app.py' beside it
    with pytest.raises(ToolError, match="is a Windows path"):
        file_write(ctx, "C:\\Users\\ada\\notes.txt", "x")
    assert sorted(p.name for p in work.iterdir()) == ["src"]  # no folder 'C:' made
