"""What the agent changed in the work folder, from a real session's event log."""

from __future__ import annotations

import shutil

from core.changes import ChangeTally, changes_line
from core.events import AssistantMessage as Said
from core.events import (
    CommandChangedFiles,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
)
from core.scripted import ScriptedModel, call, reply
from tests.core.helpers import make_session


async def test_the_file_tools_trail_says_what_changed_and_how(store, data_dir, workdir):
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (workdir / "README.md").write_text("old\n", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("", call("file_write", path="tests/test_calc.py", content="def test(): pass\n")),
        reply("", call("file_edit", path="./tests/test_calc.py", old="pass", new="assert True")),
        reply("", call("file_write", path="README.md", content="new\n")),
        reply("", call("file_edit", path="calc.py", old="not there", new="x")),  # refused: changes nothing
        reply("", call("file_write", call_id="bad", path="")),  # malformed: fails
        reply("", call("shell_run", command="echo hi")),
        reply("", call("shell_run", command="echo partial > out.txt; exit 3")),  # failed, but it ran
        reply("", call("shell_run", raw_bad="")),  # no command: it did not run
        reply("", call("task_done", summary="fixed")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"

    # What a command changed is found with git (core/snapshot.py): the failed command's file too.
    by_command = ", out.txt (created by a command)" if shutil.which("git") else ""
    assert changes_line(session.records) == (
        "Changed in the work folder: calc.py (edited), tests/test_calc.py (created), README.md (replaced)"
        f"{by_command}; 2 shell commands ran")


def test_nothing_changed_says_nothing():
    assert ChangeTally().summary() == ""
    assert changes_line([]) == ""


async def test_commands_that_changed_no_file_are_not_said_to_have_changed_one(store, data_dir, workdir):
    model = ScriptedModel([reply("", call("shell_run", command="echo hi")), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    assert changes_line(session.records) == "Changed in the work folder: no file by its file tools; 1 shell command ran"


async def test_files_put_back_are_no_longer_told_as_changed_and_a_full_path_is_told_as_put_back_names_it(
        store, data_dir, workdir):
    (workdir / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_edit", path=str(workdir / "calc.py"), old="a - b", new="a + b")),
        reply("", call("file_write", path="notes.txt", content="n\n")),
        reply("", call("task_done", summary="done")),
        reply("", call("file_write", path="notes.txt", content="again\n")),  # after the put-back: created anew
        reply("", call("task_done", summary="done")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    assert changes_line(session.records) == "Changed in the work folder: calc.py (edited), notes.txt (created)"

    session.put_back(["calc.py", "notes.txt"])
    assert changes_line(session.records) == ""
    await session.send("Go on.")
    assert await session.run() == "done"
    assert changes_line(session.records) == "Changed in the work folder: notes.txt (created)"


def test_what_commands_changed_joins_the_file_tools_trail():
    tally = ChangeTally()
    for seq, event in enumerate([
            SessionStarted(task="t", model="m", workdir="/w"),
            Said("", (ToolCall("w1", "file_write", '{"path": "notes.md", "content": "x"}'),), turn=1),
            ToolResult("w1", "file_write", True, "Created notes.md (1 characters)"),
            CommandChangedFiles(call_id="c1", changed=("notes.md", "setup.cfg"), created=("tmp.txt",), deleted=("old.log",)),
            CommandChangedFiles(call_id="c2", created=("old.log",), deleted=("tmp.txt",), more=30),
    ], 1):
        tally.add(Record("s", seq, "", event))
    # The file tool's word on notes.md stands; a file created and then deleted by commands is no
    # change; one deleted and made again is changed; the files an event did not name are counted.
    assert tally.changed == {"notes.md": "created", "setup.cfg": "changed by a command",
                             "old.log": "changed by a command"}
    assert tally.summary() == ("notes.md (created), setup.cfg (changed by a command), old.log (changed by a "
                               "command) and 30 more")


def test_many_files_changed_by_commands_are_counted_with_their_folder_after_the_file_tools_ones():
    # A formatter run over a package changed 600 files: their names filled the line, "and 590 more",
    # and hid the one file the agent edited with its own tool.
    tally = ChangeTally()
    events = [SessionStarted(task="t", model="m", workdir="/w"),
              CommandChangedFiles(call_id="c1", changed=tuple(f"src/pkg/llms/m{i:03}.py" for i in range(590)),
                                  created=tuple(f"src/pkg/llms/sub/n{i}.py" for i in range(10))),
              Said("", (ToolCall("e1", "file_edit", '{"path": "src/main.py", "old": "a", "new": "b"}'),), turn=2),
              ToolResult("e1", "file_edit", True, "Edited src/main.py")]
    for seq, event in enumerate(events, 1):
        tally.add(Record("s", seq, "", event))
    assert tally.summary() == "src/main.py (edited), 600 files changed by commands in src/pkg/llms/"
    # The files an event only counts are in the folder it says they are in.
    tally.add(Record("s", 8, "", CommandChangedFiles(call_id="c3", changed=("src/pkg/llms/m000.py",), more=300,
                                                     within="src/pkg")))
    assert tally.summary() == "src/main.py (edited), 900 files changed by commands in src/pkg/"
    # Files a command changed beyond those its event names may be anywhere: counted, no folder said.
    tally.add(Record("s", 9, "", CommandChangedFiles(call_id="c2", changed=("README.md",), more=40)))
    assert tally.summary() == "src/main.py (edited), 941 files changed by commands"


def test_a_put_back_of_hundreds_of_files_names_a_few_and_says_how_many_more_and_where():
    # The 621 names a formatter's put-back listed filled the chat, progress.md and the agent's context.
    from core.context.history import put_back_for_the_agent
    from core.events import FilesPutBack
    from core.memory import progress
    from core.render import put_back_note

    paths = tuple(f"src/pkg/llms/m{i:03}.py" for i in range(600))
    event = FilesPutBack(paths=("src/main.py", *paths), from_copy=paths, reason="too much")
    note = put_back_note(event)
    assert note == ("put back as before the session: src/main.py; put back as before the agent's first command: "
                    + ", ".join(paths[:8]) + " and 592 more (600 files, all in src/pkg/llms/) (why: too much); "
                    "the agent is told at its next step")
    told = put_back_for_the_agent(event)
    assert ", ".join(paths[:20]) + " and 580 more (600 files, all in src/pkg/llms/)" in told and len(told) < 1500
    written = progress.put_back(event)
    assert "and 580 more (600 files, all in src/pkg/llms/)" in written and paths[20] not in written
