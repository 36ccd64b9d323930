"""The files the agent changes are kept as they were before the session, and can be put back,
from a real session's run: real files, a real event log, the scripted model."""

from __future__ import annotations

import asyncio
import json

import pytest

from core import originals as originals_module
from core.originals import ORIGINALS_DIR, Originals, OriginalsUnreadable
from core.scripted import ScriptedModel, call, reply
from tests.core.helpers import make_session

CALC = b"def add(a, b):\r\n    return a - b\r\n"  # CRLF, as the person's editor wrote it


async def run_that_changes_files(store, data_dir, workdir):
    (workdir / "calc.py").write_bytes(CALC)
    (workdir / "notes.txt").write_text("keep me\n", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("", call("file_edit", path="./calc.py", old="a + b", new="b + a")),  # the second change keeps nothing
        reply("", call("file_write", path="src/new_module.py", content="VALUE = 1\n")),
        reply("", call("file_write", path="notes.txt", content="rewritten\n")),
        reply("", call("file_edit", path="notes.txt", old="not there", new="x")),  # refused: nothing kept
        reply("", call("task_done", summary="done")),
        reply("", call("task_done", summary="done again")),  # after the person's next message
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    return session


async def test_each_file_is_kept_as_it_was_before_the_agent_first_changed_it(store, data_dir, workdir):
    session = await run_that_changes_files(store, data_dir, workdir)
    kept = Originals(session.dir)

    changes = kept.changes(workdir)
    assert [(c.path, c.existed, c.now, c.what()) for c in changes] == [
        ("calc.py", True, "changed", "changed"),
        ("src/new_module.py", False, "changed", "created"),
        ("notes.txt", True, "changed", "changed"),
    ]
    assert kept.before("calc.py") == CALC  # byte for byte: its CRLF too, not the agent's first edit
    assert kept.before("src/new_module.py") is None
    with pytest.raises(ValueError, match="was not changed by the agent's file tools"):
        kept.before("README.md")


async def test_a_file_is_put_back_and_one_the_agent_created_is_removed(store, data_dir, workdir):
    session = await run_that_changes_files(store, data_dir, workdir)
    kept = Originals(session.dir)

    assert kept.put_back(workdir, "calc.py").now == "as before"
    assert (workdir / "calc.py").read_bytes() == CALC
    assert kept.put_back(workdir, "src/new_module.py").what() == "removed again"
    assert not (workdir / "src/new_module.py").exists()
    (workdir / "notes.txt").unlink()  # deleted since: put back all the same
    assert kept.changes(workdir)[2].what() == "deleted since"
    assert kept.put_back(workdir, "notes.txt").now == "as before"
    assert (workdir / "notes.txt").read_text(encoding="utf-8") == "keep me\n"


async def test_a_file_too_large_to_keep_is_listed_and_cannot_be_put_back(store, data_dir, workdir, monkeypatch):
    monkeypatch.setattr(originals_module, "MAX_KEPT_BYTES", 10)
    (workdir / "data.csv").write_text("a,b\n1,2\n3,4\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_edit", path="data.csv", old="3,4", new="5,6")),
                           reply("", call("task_done", summary="done"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    kept = Originals(session.dir)
    assert kept.changes(workdir)[0].what() == "changed (too large to keep, over 0 MB)"
    with pytest.raises(ValueError, match="too large to keep"):
        kept.put_back(workdir, "data.csv")
    assert (workdir / "data.csv").read_text(encoding="utf-8") == "a,b\n1,2\n5,6\n"


async def test_an_unreadable_list_of_originals_does_not_stop_the_agents_write(store, data_dir, workdir):
    model = ScriptedModel([reply("", call("file_write", path="a.txt", content="one\n")),
                           reply("", call("task_done", summary="done"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    (session.dir / ORIGINALS_DIR).mkdir()
    (session.dir / ORIGINALS_DIR / "index.json").write_text("{not json", encoding="utf-8")
    assert await session.run() == "done"
    assert (workdir / "a.txt").read_text(encoding="utf-8") == "one\n"
    with pytest.raises(OriginalsUnreadable, match="cannot be read"):
        Originals(session.dir).changes(workdir)


def test_a_path_in_the_list_that_leads_outside_the_work_folder_is_refused(tmp_path):
    from core.tools.registry import ToolError

    session_dir, workdir = tmp_path / "session", tmp_path / "work"
    (session_dir / ORIGINALS_DIR).mkdir(parents=True)
    workdir.mkdir()
    (session_dir / ORIGINALS_DIR / "index.json").write_text(json.dumps({"../outside.txt": {"existed": False}}))
    (tmp_path / "outside.txt").write_text("mine\n")
    with pytest.raises(ToolError, match="outside the work folder"):
        Originals(session_dir).put_back(workdir, "../outside.txt")
    assert (tmp_path / "outside.txt").read_text() == "mine\n"


async def test_files_put_back_are_recorded_and_the_agent_reads_it_at_its_next_step(store, data_dir, workdir):
    session = await run_that_changes_files(store, data_dir, workdir)
    event = session.put_back(["calc.py", "src/new_module.py"], "  keep the subtraction: it is a difference  ")
    assert event.paths == ("calc.py",) and event.removed == ("src/new_module.py",)
    assert [c.now for c in session.changed_files()] == ["as before", "as before", "changed"]
    progress_text, _ = session.read_file("progress.md")
    assert "Files put back by the person" in progress_text and "Put back as before the session: calc.py" in progress_text
    assert "- Why: keep the subtraction: it is a difference\n" in progress_text

    await session.send("Go on.")
    assert await session.run() == "done"
    told = [m["content"] for m in session.model.requests[-1].messages if m["role"] == "user"]
    assert any("[The person put these files of the work folder back as they were before this session: calc.py; and "
               "removed these files you had created: src/new_module.py." in str(text)
               and str(text).endswith("Their reason: keep the subtraction: it is a difference") for text in told)


async def test_nothing_is_put_back_while_the_run_works_and_a_failure_keeps_what_was_done(
        store, data_dir, workdir):
    from core.session import CannotRun, Session

    session = await run_that_changes_files(store, data_dir, workdir)
    with pytest.raises(CannotRun, match="README.md was not put back: README.md was not changed .* before it were"):
        session.put_back(["calc.py", "README.md", "notes.txt"])
    assert (workdir / "calc.py").read_bytes() == CALC and (workdir / "notes.txt").read_text() == "rewritten\n"
    reopened = Session.open(store, data_dir, session.id, ScriptedModel([reply("", call("task_done", summary="ok"))]))
    assert [r.event.paths for r in reopened.records if r.event.kind == "files_put_back"] == [("calc.py",)]

    await reopened.send("Once more.")
    reopened.start()
    with pytest.raises(CannotRun, match="pause it first"):
        reopened.put_back(["notes.txt"])
    await reopened.wait()
    assert (workdir / "notes.txt").read_text() == "rewritten\n"


def test_the_command_line_lists_what_changed_shows_a_diff_and_puts_files_back(tmp_path, monkeypatch, capsys):
    from core import cli
    from core.store import Store

    work = tmp_path / "work"
    work.mkdir()
    (work / "calc.py").write_bytes(CALC)
    monkeypatch.setattr(cli, "_model_client", lambda: ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("", call("file_write", path="new.txt", content="hello\n")),
        reply("", call("task_done", summary="done"))]))
    base = ["--data-dir", str(tmp_path)]
    assert cli.main([*base, "run", "Fix add", "--model", "openai/scripted", "--api-base", "http://127.0.0.1:9/v1",
                     "--workdir", str(work), "--no-memory"]) == cli.EXIT_DONE
    session_id = Store(tmp_path / "tripane.db").sessions()[0].id
    assert f"  (what, file by file, or put them back: tripane changes {session_id})" in capsys.readouterr().out

    assert cli.main([*base, "changes"]) == cli.EXIT_DONE  # named by no id: the newest session, the one just run
    listed = capsys.readouterr().out
    assert "2 files changed by the agent. No shell command has run in this session." in listed
    assert "  calc.py  ·  changed\n  new.txt  ·  created\n" in listed
    assert cli.main([*base, "changes", session_id, "calc.py"]) == cli.EXIT_DONE
    diff = capsys.readouterr().out
    assert "--- calc.py (before the session)" in diff and "-    return a - b" in diff and "+    return a + b" in diff
    assert cli.main([*base, "changes", session_id, "README.md"]) == cli.EXIT_USAGE
    assert "README.md was not changed by the agent in session" in capsys.readouterr().err

    # The files after --put-back, as the list's hint writes it, or before it.
    assert cli.main([*base, "changes", session_id, "--put-back", "calc.py", "new.txt", "--why", "not asked for"]) \
        == cli.EXIT_DONE
    assert ("↶ put back as before the session: calc.py; removed (the agent created them): new.txt (why: not asked "
            "for); the agent is told") in capsys.readouterr().out
    assert (work / "calc.py").read_bytes() == CALC and not (work / "new.txt").exists()
    assert cli.main([*base, "changes", session_id, "calc.py", "--put-back"]) == cli.EXIT_DONE
    assert "↶ put back as before the session: calc.py" in capsys.readouterr().out
    assert cli.main([*base, "changes", session_id, "--put-back"]) == cli.EXIT_USAGE


def test_the_command_line_puts_back_the_files_changed_in_a_folder_by_its_name(tmp_path, monkeypatch, capsys):
    # A formatter's 600 files were put back from a terminal by their 600 names, or not at all.
    from core import cli
    from core.store import Store

    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(cli, "_model_client", lambda: ScriptedModel([
        *(reply("", call("file_write", path=path, content="x\n")) for path in ("pkg/a.txt", "pkg/sub/b.txt", "c.txt")),
        reply("", call("task_done", summary="done"))]))
    base = ["--data-dir", str(tmp_path)]
    assert cli.main([*base, "run", "Write", "--model", "openai/scripted", "--api-base", "http://127.0.0.1:9/v1",
                     "--workdir", str(work), "--no-memory"]) == cli.EXIT_DONE
    session_id = Store(tmp_path / "tripane.db").sessions()[0].id
    capsys.readouterr()
    assert cli.main([*base, "changes", session_id, "--put-back", "pkg/"]) == cli.EXIT_DONE
    assert "removed (the agent created them): pkg/a.txt, pkg/sub/b.txt;" in capsys.readouterr().out
    assert not (work / "pkg" / "a.txt").exists() and (work / "c.txt").exists()
    assert cli.main([*base, "changes", session_id, "--put-back", "."]) == cli.EXIT_DONE  # the rest
    assert "removed (the agent created them): c.txt;" in capsys.readouterr().out and not (work / "c.txt").exists()
    assert cli.main([*base, "changes", session_id, "--put-back", "nowhere/"]) == cli.EXIT_USAGE


async def test_a_file_put_back_while_the_run_is_paused_is_read_by_the_agent_when_it_resumes(store, data_dir, workdir):
    class HeldModel(ScriptedModel):
        """Its second request waits for `go`: the person pauses the run meanwhile."""

        async def complete(self, request, *args, **kwargs):
            if len(self.requests) == 1:
                asked.set()
                await go.wait()
            return await super().complete(request, *args, **kwargs)

    asked, go = asyncio.Event(), asyncio.Event()
    (workdir / "calc.py").write_bytes(CALC)
    model = HeldModel([reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
                       reply("", call("file_list")),
                       reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    session.start()
    await asyncio.wait_for(asked.wait(), 5)  # the edit is made
    session.pause()
    go.set()
    await asyncio.wait_for(_until(lambda: session.state.status == "paused"), 5)
    assert session.put_back(["calc.py"]).paths == ("calc.py",)
    session.resume()
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    assert (workdir / "calc.py").read_bytes() == CALC
    after = [str(m["content"]) for m in model.requests[-1].messages if m["role"] == "user"]
    assert any("back as they were before this session: calc.py" in text for text in after)


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.01)


async def test_an_exported_session_brings_its_originals_and_puts_files_back_in_its_new_work_folder(
        store, data_dir, workdir, tmp_path):
    from core.export import export_session, import_session
    from core.session import Session
    from core.store import Store

    session = await run_that_changes_files(store, data_dir, workdir)
    archive = export_session(store, data_dir, session.id, tmp_path / "run.zip")
    elsewhere, copied = tmp_path / "elsewhere", tmp_path / "copied-work"
    copied.mkdir()
    for name in ("calc.py", "notes.txt"):  # the work folder as the other computer has it
        (copied / name).write_bytes((workdir / name).read_bytes())
    other = Store(elsewhere / "tripane.db")
    imported = Session.open(other, elsewhere, import_session(other, elsewhere, archive), ScriptedModel([]))
    imported.move_workdir(copied)
    assert imported.put_back(["calc.py"]).paths == ("calc.py",)
    assert (copied / "calc.py").read_bytes() == CALC and (workdir / "calc.py").read_bytes() != CALC
    other.close()


async def test_with_its_work_folder_gone_nothing_is_listed_as_deleted_nor_put_back_into_a_new_one(
        store, data_dir, workdir, tmp_path):
    from core.session import WorkFolderMissing

    session = await run_that_changes_files(store, data_dir, workdir)
    moved = tmp_path / "moved"
    workdir.rename(moved)
    with pytest.raises(WorkFolderMissing, match="is not there any more"):
        session.changed_files()
    with pytest.raises(WorkFolderMissing, match="Move work folder"):
        session.put_back(["calc.py"])
    assert not workdir.exists()
    session.move_workdir(moved)
    assert session.put_back(["calc.py"]).paths == ("calc.py",) and (moved / "calc.py").read_bytes() == CALC
