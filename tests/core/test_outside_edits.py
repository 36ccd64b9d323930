"""The plan or findings edited in another editor (VS Code, vim) while the agent waits, or after it
finished: taken in when asked, so a save made in Tripane on the text from before cannot overwrite
it unseen, and the agent is told."""

from __future__ import annotations

import sys

import pytest

from core.events import FileChanged
from core.memory.working import FINDINGS, PLAN, PROGRESS, WriteRefused
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from tests.core.helpers import events_of, make_session


def edit_outside(session, name: str, added: str) -> None:
    path = session.file_path(name)
    path.write_text(path.read_text(encoding="utf-8") + added, encoding="utf-8")


async def ended_session(store, data_dir, workdir, *replies):
    model = ScriptedModel(list(replies), default=reply("", call("task_done", summary="hello.txt written")))
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    return session, model


async def test_an_edit_in_another_editor_after_the_run_is_recorded_once_and_told_to_the_agent(store, data_dir, workdir):
    session, model = await ended_session(store, data_dir, workdir)
    assert session.take_outside_edits() == []  # nothing changed: nothing recorded
    edit_outside(session, PLAN, "- [ ] Also write bye.txt\n")

    taken = session.take_outside_edits()
    assert [(c.file, c.author) for c in taken] == [(PLAN, "external")]
    assert "+- [ ] Also write bye.txt" in taken[0].diff
    assert session.state.files[PLAN].author == "external"
    assert session.take_outside_edits() == []  # once
    assert [e.file for e in events_of(session, FileChanged) if e.author == "external"] == [PLAN]

    await session.send("Go on.")
    assert await session.wait() == "done"
    told = "\n".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert "Someone outside Tripane edited task_plan.md" in told and "Also write bye.txt" in told


async def test_a_save_begun_before_an_outside_edit_is_refused_with_that_edit_and_loses_nothing(store, data_dir,
                                                                                               workdir):
    session, _ = await ended_session(store, data_dir, workdir)
    begun_as, version = session.read_file(PLAN)  # the person opens the plan's editor…
    edit_outside(session, PLAN, "- [ ] Edited in vim\n")  # …another editor saves meanwhile, unseen yet

    with pytest.raises(WriteRefused) as refused:
        session.edit_file(PLAN, begun_as + "- [ ] Typed in Tripane\n", base_version=version)
    assert "Edited in vim" in refused.value.current_text and refused.value.current_version == version + 1
    assert "Edited in vim" in session.file_path(PLAN).read_text(encoding="utf-8")
    # Saved again on that version (the person chose to keep both): both are there.
    session.edit_file(PLAN, refused.value.current_text + "- [ ] Typed in Tripane\n",
                      base_version=refused.value.current_version)
    on_disk = session.file_path(PLAN).read_text(encoding="utf-8")
    assert "Edited in vim" in on_disk and "Typed in Tripane" in on_disk
    assert [(e.author, e.file) for e in events_of(session, FileChanged)[-2:]] == [("external", PLAN), ("user", PLAN)]


async def test_pinning_takes_the_plan_as_it_is_on_disk(store, data_dir, workdir):
    session, _ = await ended_session(store, data_dir, workdir)
    edit_outside(session, PLAN, "- [ ] Never delete the tests\n")
    session.pin(PLAN, ["- [ ] Never delete the tests"])  # a line only the other editor wrote
    assert session.state.pins[PLAN] == ("- [ ] Never delete the tests",)
    assert session.state.files[PLAN].author == "external"


async def test_a_file_that_cannot_be_read_says_why_and_is_taken_in_once_it_can(store, data_dir, workdir):
    session, _ = await ended_session(store, data_dir, workdir)
    path = session.file_path(FINDINGS)
    text = path.read_text(encoding="utf-8")
    # What another program left there cannot be read (on Windows, an editor holding it mid-save):
    # here, a folder in its place.
    path.unlink()
    path.mkdir()
    edit_outside(session, PLAN, "- [ ] Saved at the same moment\n")
    # The plan is taken in all the same; the findings are said to be unreadable, and nothing is recorded of them.
    assert [c.file for c in session.take_outside_edits()] == [PLAN]
    assert "Is a directory" in session.memory.unreadable[FINDINGS] or "denied" in session.memory.unreadable[FINDINGS]
    assert session.state.files[FINDINGS].author != "external"
    findings, version = session.read_file(FINDINGS)
    with pytest.raises(OSError, match="findings.md was changed outside Tripane and cannot be read now"):
        session.edit_file(FINDINGS, findings + "- mine\n", base_version=version)  # it would write over that change
    path.rmdir()
    path.write_text(text + "## Learned\nThe tests need Python 3.11\n", encoding="utf-8")
    assert [c.file for c in session.take_outside_edits()] == [FINDINGS] and session.memory.unreadable == {}


async def test_an_edit_saved_as_it_began_is_no_version_and_tells_the_agent_nothing(store, data_dir, workdir):
    session, model = await ended_session(store, data_dir, workdir)
    text, version = session.read_file(PLAN)
    before = len(session.records)
    assert session.edit_file(PLAN, text, base_version=version) is None  # opened, looked at, saved
    assert len(session.records) == before and session.read_file(PLAN) == (text, version)
    await session.send("Go on.")
    assert await session.wait() == "done"
    assert "edited task_plan.md" not in "\n".join(str(m.get("content")) for m in model.requests[-1].messages)


async def test_an_edit_made_while_the_model_thinks_is_not_lost_to_the_agents_write(store, data_dir, workdir):
    """`tripane run` in a terminal: the person steers by editing the files in their editor. An edit
    saved while the model was answering is taken in before the agent's write of that file."""
    holder = {}

    def person_saves_meanwhile(request):
        session = holder["session"]
        edit_outside(session, PLAN, "- [ ] Pinned by me: no new dependencies\n")
        edit_outside(session, FINDINGS, "## From me\nThe API key is in the vault\n")
        edit_outside(session, PROGRESS, "(the person: I restarted the server)\n")  # appended to by Tripane next
        plan, _ = session.read_file(PLAN)  # the plan as the agent last saw it
        return reply("", call("findings_add", title="Layout", body="one module"),
                     call("plan_update", content=plan + "- [x] Read the layout\n"))
    model = ScriptedModel([person_saves_meanwhile], default=reply("", call("task_done", summary="done")))
    session = holder["session"] = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    plan = session.file_path(PLAN).read_text(encoding="utf-8")
    findings = session.file_path(FINDINGS).read_text(encoding="utf-8")
    assert "Pinned by me: no new dependencies" in plan  # the agent's write was refused, not laid over it
    assert "The API key is in the vault" in findings and "one module" in findings
    results = {r.event.call_id: r.event for r in session.records if type(r.event).__name__ == "ToolResult"}
    refused = next(e for e in results.values() if not e.ok)
    assert "task_plan.md changed since version" in refused.content and "Pinned by me" in refused.content
    # The log knows the files as they are: opened again, nothing is taken for an outside edit.
    assert [c.file for c in events_of(session, FileChanged) if c.author == "external"] == [PLAN, FINDINGS, PROGRESS]
    assert session.state.files[FINDINGS].sha256 == _sha(findings) and session.state.files[PLAN].sha256 == _sha(plan)
    progress = session.file_path(PROGRESS).read_text(encoding="utf-8")
    assert "I restarted the server" in progress and session.state.files[PROGRESS].sha256 == _sha(progress)


def _sha(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def test_a_file_deleted_outside_tripane_is_written_back_and_the_agents_appends_go_on_from_it(
        store, data_dir, workdir):
    def person_deletes_meanwhile(request):
        holder["session"].file_path(FINDINGS).unlink()  # a file manager's clean-up, while the model thinks
        return reply("", call("findings_add", title="Second", body="after the deletion"))
    holder = {}
    model = ScriptedModel([reply("", call("findings_add", title="First", body="before the deletion")),
                           person_deletes_meanwhile], default=reply("", call("task_done", summary="done")))
    session = holder["session"] = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    findings = session.file_path(FINDINGS).read_text(encoding="utf-8")
    assert "before the deletion" in findings and "after the deletion" in findings
    assert session.state.files[FINDINGS].sha256 == _sha(findings)  # the log and the disk agree

    before = len(session.records)
    session.file_path(PLAN).unlink()  # after the run, while the window shows it
    plan, version = session.read_file(PLAN)
    assert session.take_outside_edits() == [] and len(session.records) == before  # nothing new to record
    assert session.file_path(PLAN).read_text(encoding="utf-8") == plan and session.read_file(PLAN) == (plan, version)


async def test_a_file_deleted_while_tripane_was_closed_is_rebuilt_from_the_log(store, data_dir, workdir):
    session, model = await ended_session(store, data_dir, workdir, reply("", call("findings_add", title="Kept",
                                                                                  body="rebuilt from the log")))
    findings = session.file_path(FINDINGS).read_text(encoding="utf-8")
    await session.close()
    session.file_path(FINDINGS).unlink()

    opened = Session.open(store, data_dir, session.id, model)
    assert opened.file_path(FINDINGS).read_text(encoding="utf-8") == findings
    assert opened.read_file(FINDINGS)[0] == findings
    assert not [e for e in events_of(opened, FileChanged) if e.author == "external"]  # nothing taken for an edit


async def test_progress_edited_while_a_command_runs_is_not_taken_for_tripanes_next_line(store, data_dir, workdir):
    """Tripane appends a line to progress.md after each call: an edit saved while the command ran
    is recorded first, so the log knows the file as it is."""
    holder = {}

    def a_command_that_takes_a_while(request):
        progress = holder["session"].file_path(PROGRESS)
        # (the person's save, while the command runs: made by the command itself, in the middle of the call)
        script = f"open({str(progress)!r}, 'a', encoding='utf-8').write('(the person: a note while it ran)\\n')"
        return reply("", call("shell_run", command=f'"{sys.executable}" -c "{script}"'))
    model = ScriptedModel([a_command_that_takes_a_while], default=reply("", call("task_done", summary="done")))
    session = holder["session"] = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    progress = session.file_path(PROGRESS).read_text(encoding="utf-8")
    assert "a note while it ran" in progress and session.state.files[PROGRESS].sha256 == _sha(progress)
    assert [c.file for c in events_of(session, FileChanged) if c.author == "external"] == [PROGRESS]


async def test_a_run_goes_on_while_a_file_cannot_be_read_and_takes_it_in_once_it_can(store, data_dir, workdir):
    holder = {}

    def plan_held_by_another_program(request):
        path = holder["session"].file_path(PLAN)
        holder["text"] = path.read_text(encoding="utf-8")
        path.unlink()
        path.mkdir()  # (what cannot be read: on Windows, a file another program holds mid-save)
        return reply("", call("file_list"))

    def plan_saved_at_last(request):
        path = holder["session"].file_path(PLAN)
        path.rmdir()
        path.write_text(holder["text"] + "- [ ] Saved once the other program let go\n", encoding="utf-8")
        return reply("", call("file_list"))
    model = ScriptedModel([plan_held_by_another_program, plan_saved_at_last],
                          default=reply("", call("task_done", summary="done")))
    session = holder["session"] = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    assert [c.file for c in events_of(session, FileChanged) if c.author == "external"] == [PLAN]
    assert "Saved once the other program let go" in session.read_file(PLAN)[0]
    told = "\n".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert "Someone outside Tripane edited task_plan.md" in told
