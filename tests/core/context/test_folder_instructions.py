"""The instructions a folder within the work folder keeps for its own files (a monorepo's
packages/web/AGENTS.md), told to the agent the first time it reads or writes a file there."""

from __future__ import annotations

import asyncio

from core.context.project import instructions_told_since_compaction
from core.events import Compaction, Record, ToolResult
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from tests.core.helpers import events_of, make_session

TOLD = ("\n\n[Instructions for the files in packages/web/, from packages/web/AGENTS.md; follow them there:\n"
        "Use pnpm, never npm.\n[end of packages/web/AGENTS.md]")


def a_monorepo(workdir):
    (workdir / "AGENTS.md").write_text("Root rule.\n", encoding="utf-8")
    (workdir / "packages" / "web" / "src").mkdir(parents=True)
    (workdir / "packages" / "api").mkdir()
    (workdir / "packages" / "web" / "AGENTS.md").write_text("Use pnpm, never npm.\n", encoding="utf-8")
    for name in ("a.ts", "b.ts", "c.ts"):
        (workdir / "packages" / "web" / "src" / name).write_text(f"export const {name[0]} = 1;\n", encoding="utf-8")
    (workdir / "packages" / "api" / "x.py").write_text("x = 1\n", encoding="utf-8")


async def test_a_folders_own_instructions_are_told_with_the_first_file_read_or_written_there(store, data_dir,
                                                                                             workdir):
    a_monorepo(workdir)
    model = ScriptedModel([
        reply("", call("file_read", call_id="r1", path="packages/web/src/a.ts")),
        reply("", call("file_edit", call_id="e1", path="packages/web/src/b.ts", old="b = 1", new="b = 2")),
        reply("", call("file_read", call_id="r2", path="packages/api/x.py")),
        reply("", call("task_done", summary="ok")),
        reply("", call("file_read", call_id="r3", path="packages/web/src/c.ts")),  # reopened, later
        reply("", call("task_done", summary="ok again")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    results = {e.call_id: e.content for e in events_of(session, ToolResult)}
    assert results["r1"] == "[packages/web/src/a.ts: lines 1-1 of 1]\nexport const a = 1;\n" + TOLD[1:]
    assert "Root rule" not in results["r1"]  # the work folder's own are in the prefix already
    assert results["e1"] == "Edited packages/web/src/b.ts: replaced 5 characters with 5."  # told: once
    assert "[Instructions" not in results["r2"]  # a folder without its own
    assert "Use pnpm" in render_of(model, -3)  # the model read them with the result

    reopened = Session.open(store, data_dir, session.id, model)
    await reopened.send("Once more.")
    assert await asyncio.wait_for(reopened.wait(), 10) == "done"
    again = {e.call_id: e.content for e in events_of(reopened, ToolResult)}
    assert again["r3"] == "[packages/web/src/c.ts: lines 1-1 of 1]\nexport const c = 1;\n"  # the log says told


def render_of(model: ScriptedModel, index: int) -> str:
    return str(model.requests[index].messages)


def test_reading_the_instructions_file_itself_adds_no_note_of_it(tmp_path):
    from core.context.project import folder_instructions

    a_monorepo(tmp_path)
    web = tmp_path / "packages" / "web"
    assert folder_instructions(tmp_path, web, set(), web / "AGENTS.md") == ""


async def test_listing_the_folder_tells_them_before_any_of_its_files_is_read(store, data_dir, workdir):
    a_monorepo(workdir)
    model = ScriptedModel([reply("", call("file_list", call_id="l0", path=".")),
                           reply("", call("file_list", call_id="l1", path="packages/web")),
                           reply("", call("file_read", call_id="r1", path="packages/web/src/a.ts")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    results = {e.call_id: e.content for e in events_of(session, ToolResult)}
    assert "[Instructions" not in results["l0"]  # the work folder's own are in the prompt
    assert results["l1"] == "AGENTS.md\nsrc/a.ts\nsrc/b.ts\nsrc/c.ts" + TOLD
    assert "[Instructions" not in results["r1"]  # told already


async def test_they_are_left_out_with_the_work_folders_own(store, data_dir, workdir):
    a_monorepo(workdir)
    model = ScriptedModel([reply("", call("file_read", call_id="r1", path="packages/web/src/a.ts")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, project_instructions=False)
    assert await session.run() == "done"
    assert "[Instructions" not in events_of(session, ToolResult)[0].content


def test_they_are_told_again_after_a_compaction_whose_summary_may_have_dropped_them():
    told = ToolResult("r1", "file_read", True, "[a.ts: lines 1-1 of 1]\nx\n" + TOLD)
    records = [Record("s", 1, "", told), Record("s", 2, "", ToolResult("r2", "file_read", True, "y"))]
    assert instructions_told_since_compaction(records) == {"packages/web/AGENTS.md"}
    # A compaction that kept the turn whole: still read.
    records.append(Record("s", 3, "", Compaction(summary="…", first_seq=1, last_seq=0, flush_done=True)))
    assert instructions_told_since_compaction(records) == {"packages/web/AGENTS.md"}
    records.append(Record("s", 4, "", Compaction(summary="…", first_seq=1, last_seq=2, flush_done=True)))
    assert instructions_told_since_compaction(records) == set()  # summarized: told again
    # A command's output that happens to hold the words tells nothing.
    records.append(Record("s", 5, "", ToolResult("s1", "shell_run", True, TOLD)))
    assert instructions_told_since_compaction(records) == set()


async def test_the_folders_with_instructions_of_their_own_are_named_from_the_start(store, data_dir, workdir):
    # A command run in a package (`cd packages/web && npm install`) reads no file there: the agent
    # was never told that the package says "use pnpm, never npm".
    a_monorepo(workdir)
    (workdir / "packages" / "api" / "CLAUDE.md").write_text("Run the API's tests with tox.\n", encoding="utf-8")
    (workdir / "node_modules" / "left-pad").mkdir(parents=True)
    (workdir / "node_modules" / "left-pad" / "AGENTS.md").write_text("Not the project's.\n", encoding="utf-8")
    (workdir / ".gitignore").write_text("build/\n", encoding="utf-8")
    (workdir / "build").mkdir()
    (workdir / "build" / "AGENTS.md").write_text("Generated.\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    assert session.state.config.instruction_files == ("packages/api/CLAUDE.md", "packages/web/AGENTS.md")
    system = model.requests[0].messages[0]["content"]
    assert ("- Folders with instructions of their own: packages/api/CLAUDE.md, packages/web/AGENTS.md. Follow a "
            "folder's in it, commands run there included: read them before you work there") in str(system)

    off = make_session(store, data_dir, workdir, ScriptedModel([reply("", call("task_done", summary="ok"))]),
                       project_instructions=False)
    assert off.state.config.instruction_files == ()
