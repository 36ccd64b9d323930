"""A session whose work folder has gone (moved, renamed, an unplugged drive) says so instead of running."""

from __future__ import annotations

import pytest

from core.events import Compaction, SessionEnded, ToolResult, UserMessage
from core.llm import ModelReply
from core.memory.working import PROGRESS
from core.scripted import ScriptedModel, call, reply
from core.session import CannotRun, Session, WorkFolderMissing
from tests.core.helpers import events_of, make_session


async def test_a_gone_work_folder_stops_the_run_before_any_model_call_and_keeps_the_message(store, data_dir, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    model = ScriptedModel([reply("", call("task_done", summary="first"))],
                          default=reply("", call("task_done", summary="again")))
    session = make_session(store, data_dir, project, model)
    assert await session.run() == "done"
    moved = project.rename(tmp_path / "project-moved")
    asked = len(model.requests)

    with pytest.raises(WorkFolderMissing, match=r"project is not there any more.*Put it back"):
        await session.send("Also add a changelog")
    assert len(model.requests) == asked and not session.running  # no call spent on a folder that is gone
    assert [e.text for e in events_of(session, UserMessage)][-1] == "Also add a changelog"  # kept

    moved.rename(project)
    await session.send("The folder is back")
    assert await session.wait() == "done"
    sent = " ".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert "Also add a changelog" in sent and "The folder is back" in sent


async def test_a_work_folder_gone_during_a_run_ends_it_before_a_write_makes_the_folder_anew(store, data_dir, tmp_path):
    """A drive unplugged mid-run: file_write would create the folder again (on the system drive,
    say) and every command would fail until 3-Strike. The run ends, saying why, and goes on once
    the folder is back, with the calls that were not run in its context."""
    project = tmp_path / "project"
    project.mkdir()

    def unplug(_request):
        project.rename(tmp_path / "project-elsewhere")
        return reply("", call("file_write", call_id="w1", path="notes/a.txt", content="x"),
                     call("shell_run", call_id="s1", command="echo hi"))

    model = ScriptedModel([reply("", call("file_list")), unplug,
                           reply("", call("file_write", call_id="w2", path="notes/a.txt", content="x")),
                           reply("", call("task_done", summary="written"))])
    session = make_session(store, data_dir, project, model, approval="all")

    assert await session.run() == "error"
    assert not project.exists()  # not made anew
    ended = events_of(session, SessionEnded)[-1]
    assert "project is not there any more" in ended.summary and "Put it back" in ended.summary
    result = next(e for e in events_of(session, ToolResult) if e.call_id == "w1")
    assert not result.ok and result.content.startswith("Not run: The work folder")
    rest = next(e for e in events_of(session, ToolResult) if e.call_id == "s1")
    assert rest.content == "Not run: the run ended before this call."  # said, not left open

    (tmp_path / "project-elsewhere").rename(project)
    await session.send("The drive is back")
    assert await session.wait() == "done"
    assert (project / "notes" / "a.txt").read_text(encoding="utf-8") == "x"


async def test_a_session_whose_start_cannot_be_written_is_not_left_in_the_list(store, data_dir, workdir, monkeypatch):
    """A failure between the session's row and its first event (a full disk, a locked database)
    left a session that could never be opened in every list."""
    from core.store import Store, StoreError

    def refuse(self, session_id, event):
        raise StoreError("database is locked")

    monkeypatch.setattr(Store, "append", refuse)
    with pytest.raises(StoreError, match="locked"):
        make_session(store, data_dir, workdir, ScriptedModel([]))
    monkeypatch.undo()
    assert store.sessions() == []


async def test_a_moved_work_folder_is_given_its_new_place_and_the_agent_works_there(store, data_dir, tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.md").write_text("old notes\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("task_done", summary="first")),
                           reply("", call("file_write", path="notes.md", content="new notes\n")),
                           reply("", call("task_done", summary="written there"))])
    session = make_session(store, data_dir, project, model)
    assert await session.run() == "done"
    fixed_prompt = model.requests[-1].messages[0]
    moved = project.rename(tmp_path / "renamed")

    with pytest.raises(ValueError, match="does not exist or is not a folder"):
        session.move_workdir(tmp_path / "nowhere")
    event = session.move_workdir(moved)
    assert (event.previous, event.workdir) == (str(project.resolve()), str(moved.resolve()))
    assert session.move_workdir(moved) is None  # there already: nothing recorded
    assert "Work folder moved by the person" in session.read_file(PROGRESS)[0]

    await session.send("Rewrite the notes")
    assert await session.wait() == "done"
    assert (moved / "notes.md").read_text(encoding="utf-8") == "new notes\n"  # in the new place
    assert not project.exists()  # the old one is not made anew
    request = model.requests[-2]
    assert request.messages[0] == fixed_prompt  # the fixed prompt, byte for byte as before
    told = [m["content"] for m in request.messages if "moved the work folder" in str(m.get("content"))]
    assert told and str(moved.resolve()) in told[0]

    reopened = Session.open(store, data_dir, session.id, ScriptedModel([]))  # replayed: the new place stays
    assert reopened.state.workdir == str(moved.resolve())


async def test_the_work_folder_is_not_moved_while_the_run_works(store, data_dir, workdir, tmp_path):
    session = make_session(store, data_dir, workdir, ScriptedModel([reply("", call("task_done", summary="done"))]))
    other = tmp_path / "other"
    other.mkdir()
    session.start()
    with pytest.raises(CannotRun, match="pause it first"):
        session.move_workdir(other)
    assert await session.wait() == "done"
    assert session.move_workdir(other).workdir == str(other.resolve())


async def test_after_a_compaction_the_agent_is_still_told_where_the_folder_is(store, data_dir, tmp_path):
    project = tmp_path / "project"
    project.mkdir()

    def compact_now(_request):
        session.request_compaction()
        return reply("", call("file_list", call_id="l2"))
    model = ScriptedModel([reply("", call("task_done", summary="first")),
                           reply("", call("file_list", call_id="l1")), compact_now,
                           reply("", call("findings_add", title="Before compaction", body="the notes are listed")),
                           reply("", call("file_list", call_id="l3")), reply("", call("file_list", call_id="l4")),
                           reply("", call("task_done", summary="listed"))],
                          side_replies=[ModelReply("Goal: list the notes. Done: listed them twice.")])
    session = make_session(store, data_dir, project, model, keep_turns=1)
    assert await session.run() == "done"
    moved = project.rename(tmp_path / "renamed")
    session.move_workdir(moved)
    await session.send("List the notes again")
    assert await session.wait() == "done"

    assert events_of(session, Compaction)
    after = " ".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert after.count("moved the work folder: it is now " + str(moved.resolve())) == 1  # said once, not lost
    reopened = Session.open(store, data_dir, session.id, ScriptedModel([]))  # and the same when replayed
    assert reopened.journal.history.messages == session.journal.history.messages
