"""The files the agent read or wrote, as they were then: a rewrite of one changed since is refused,
and before the work folder is copied, or without a copy, the changes are told to the agent once.
A reopened session knows them again. Real sessions, real files, the scripted model."""

from __future__ import annotations

import sys
import time

from core.events import FilesChangedOutside, ToolResult
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from tests.core.helpers import events_of, make_session

TOLD = "[Files of the work folder changed since your last step, not by your tools"


def results(session, name: str) -> list[ToolResult]:
    return [e for e in events_of(session, ToolResult) if e.name == name]


async def test_a_file_the_agent_read_and_the_person_changed_before_any_command_is_told_once(
        store, data_dir, workdir):
    (workdir / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (workdir / "other.md").write_text("never read\n", encoding="utf-8")

    def while_the_model_thinks(request):  # the person, in their editor
        (workdir / "notes.md").write_text("# Notes\nthe person's line\n", encoding="utf-8")
        (workdir / "other.md").write_text("changed, but the agent never read it\n", encoding="utf-8")
        return reply("", call("file_list", path="."))

    model = ScriptedModel([
        reply("", call("file_read", path="notes.md")),
        while_the_model_thinks,
        reply("", call("file_write", path="notes.md", content="# Notes\nthe agent's line\n")),
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    told = events_of(session, FilesChangedOutside)
    assert [(e.changed, e.created, e.deleted) for e in told] == [(("notes.md",), (), ())]  # once, and only it
    assert told[0].diff == "--- notes.md\n@@ -1 +1,2 @@\n # Notes\n+the person's line"  # against what it read
    assert f"{TOLD} (by the person, or another program): notes.md." in str(model.requests[2].messages)
    assert "(-: as you left them, +: now):\n--- notes.md" in model.requests[2].messages[-2]["content"]
    refused = results(session, "file_write")[0]
    assert not refused.ok and refused.content.startswith("Not written: notes.md")
    assert (workdir / "notes.md").read_text(encoding="utf-8") == "# Notes\nthe person's line\n"


async def test_without_a_copy_a_commands_change_is_not_told_as_the_persons_and_a_rewrite_still_waits_for_a_read(
        store, data_dir, workdir):
    (workdir / "calc.py").write_text("x = 1\n", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_read", path="calc.py")),
        reply("", call("shell_run", command=f'"{sys.executable}" -c "open(\'calc.py\', \'a\').write(\'y = 2\\n\')"')),
        reply("", call("file_write", path="calc.py", content="x = 3\n")),
        reply("", call("file_read", path="calc.py")),
        reply("", call("file_write", path="calc.py", content="x = 1\ny = 2\nz = 3\n")),
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all", copy_work_folder=False)
    assert await session.run() == "done"
    assert events_of(session, FilesChangedOutside) == []
    # The agent reads which of the files it knows the command changed, and how (their bytes were
    # kept): there is no copy to say more.
    assert results(session, "shell_run")[0].content.endswith(
        "\n[files you read or wrote that this command changed: calc.py]\nHow those you had read or written changed "
        "(-: before the command, +: after):\n--- calc.py\n@@ -1 +1,2 @@\n x = 1\n+y = 2")
    writes = results(session, "file_write")
    assert not writes[0].ok and "changed since you last read or wrote it" in writes[0].content
    assert writes[1].ok and (workdir / "calc.py").read_text(encoding="utf-8") == "x = 1\ny = 2\nz = 3\n"


async def test_a_reopened_session_knows_the_files_read_and_tells_what_changed_while_it_was_closed(
        store, data_dir, workdir):
    (workdir / "a.md").write_text("a\n", encoding="utf-8")
    (workdir / "b.md").write_text("b\n", encoding="utf-8")
    first = ScriptedModel([
        reply("", call("file_read", path="a.md")),
        reply("", call("file_read", path="b.md")),
        reply("", call("shell_run", command=f'"{sys.executable}" -c "open(\'b.md\', \'a\').write(\'by a command\\n\')"')),
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, first, approval="all", copy_work_folder=False)
    assert await session.run() == "done"
    seen = [e.seen for e in events_of(session, ToolResult) if e.seen is not None]
    assert [s.path for s in seen] == ["a.md", "b.md"]
    # While the session is closed, the person edits a.md; then their message reopens it (a record
    # made after the edit).
    time.sleep(0.05)
    (workdir / "a.md").write_text("a, edited by the person\n", encoding="utf-8")

    again = ScriptedModel([
        reply("", call("file_write", path="a.md", content="the agent's a\n")),
        reply("", call("task_done", summary="done again")),
    ])
    reopened = Session.open(store, data_dir, session.id, again)
    await reopened.send("go on")
    assert await reopened.wait() == "done"
    told = events_of(reopened, FilesChangedOutside)
    assert [e.changed for e in told] == [("a.md",)]  # b.md: the command's doing, before the session closed
    refused = results(reopened, "file_write")[0]
    assert not refused.ok and refused.content.startswith("Not written: a.md")
    assert (workdir / "a.md").read_text(encoding="utf-8") == "a, edited by the person\n"


async def test_a_file_the_person_put_back_is_told_as_put_back_not_again_as_changed(store, data_dir, workdir):
    (workdir / "calc.py").write_text("x = 1\n", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="x = 1", new="x = 2")),
        reply("", call("task_done", summary="done")),
        reply("", call("file_list", path=".")),
        reply("", call("task_done", summary="done again")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all", copy_work_folder=False)
    assert await session.run() == "done"
    assert session.put_back(["calc.py"], "not this") is not None
    await session.send("go on")
    assert await session.wait() == "done"
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "x = 1\n"
    assert events_of(session, FilesChangedOutside) == []


async def test_a_file_changed_since_the_agent_did_is_listed_so_before_it_is_put_back(store, data_dir, workdir):
    (workdir / "a.md").write_text("a\n", encoding="utf-8")
    (workdir / "b.md").write_text("b\n", encoding="utf-8")

    def the_person_saves_both(request):
        (workdir / "a.md").write_text("A, the person's\n", encoding="utf-8")
        (workdir / "b.md").write_text("B, the person's\n", encoding="utf-8")
        return reply("", call("file_list", path="."))

    model = ScriptedModel([
        reply("", call("file_edit", path="a.md", old="a", new="A")),
        reply("", call("file_edit", path="b.md", old="b", new="B")),
        the_person_saves_both,
        reply("", call("file_read", path="b.md")),
        reply("", call("file_edit", path="b.md", old="B, the person's", new="B, both")),  # the agent's again
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all", copy_work_folder=False)
    assert await session.run() == "done"
    assert [e.paths() for e in events_of(session, FilesChangedOutside)] == [{"a.md", "b.md"}]
    listed = {c.path: c.what() for c in session.changed_files()}
    assert listed == {"a.md": "changed, then not by the agent", "b.md": "changed"}
    session.put_back(["a.md"])
    assert {c.path: c.what() for c in session.changed_files()}["a.md"] == "as before the session"


async def test_without_a_copy_a_file_too_large_to_keep_is_told_without_its_diff(store, data_dir, workdir):
    from core.tools.seen import KEPT_FILE_BYTES

    big = "".join(f"line {i}\n" for i in range(KEPT_FILE_BYTES // 6))
    (workdir / "big.log").write_text(big, encoding="utf-8")
    (workdir / "small.txt").write_text("one\n", encoding="utf-8")

    def the_person_edits_both(request):
        (workdir / "big.log").write_text(big + "the person's line\n", encoding="utf-8")
        (workdir / "small.txt").write_text("two\n", encoding="utf-8")
        return reply("", call("file_list", path="."))

    model = ScriptedModel([
        reply("", call("file_read", path="big.log", limit=5), call("file_read", path="small.txt")),
        the_person_edits_both,
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all", copy_work_folder=False)
    assert await session.run() == "done"
    [told] = events_of(session, FilesChangedOutside)
    assert told.changed == ("big.log", "small.txt")
    assert told.diff == "--- small.txt\n@@ -1 +1 @@\n-one\n+two"


def test_the_files_seen_longest_ago_are_let_go_first_past_the_bytes_kept(workdir, monkeypatch):
    import core.tools.seen as seen_module
    from core.tools.seen import SeenFiles

    monkeypatch.setattr(seen_module, "KEPT_BYTES", 10)
    seen = SeenFiles(workdir)
    for name in ("a.txt", "b.txt", "c.txt"):
        (workdir / name).write_text(f"{name[0]}{name[0]}{name[0]}\n", encoding="utf-8")  # 4 bytes each
        seen.saw((workdir / name).resolve())
    time.sleep(0.01)
    for name in ("a.txt", "b.txt", "c.txt"):
        (workdir / name).write_text("changed\n", encoding="utf-8")
    diffs: dict[str, list[str]] = {}
    news = seen.news(diffs)
    assert news is not None and news.changed == ("a.txt", "b.txt", "c.txt")  # all told
    assert sorted(diffs) == ["b.txt", "c.txt"]  # a.txt's bytes were let go for c.txt's
    assert diffs["c.txt"] == ["@@ -1 +1 @@", "-ccc", "+changed"]
