"""Going back to an earlier point of a session: a new session from there, with the plan, findings,
progress and the work folder's files as they were then. Real sessions, real commands, real git,
the scripted model."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from core.branch import CannotGoBack, go_back, going_back
from core.events import (
    AssistantMessage,
    Compaction,
    FileChanged,
    SessionBranched,
    ToolResult,
    UserMessage,
)
from core.memory.working import PLAN
from core.originals import ORIGINALS_DIR, STEPS_NAME
from core.paths import session_dir
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from core.snapshot import SNAPSHOT_DIR, WorkFolderSnapshot
from core.spending import spending
from tests.core.helpers import make_session
from tests.support.marks import needs_git

pytestmark = needs_git

ADD = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


def command(code: str):
    return reply("", call("shell_run", command=f'"{sys.executable}" -c "{code}"'))


async def a_run_that_went_wrong(store, data_dir, workdir, first_command_at_step: int = 2):
    """Step 1 fixes calc.py with a file tool; a command writes config.ini (v1); step 3 is the
    wrong turn: calc.py rewritten, the plan changed, config.ini made v2 and junk.txt made."""
    (workdir / "calc.py").write_text(ADD, encoding="utf-8")
    (workdir / "notes.txt").write_text("the person's\n", encoding="utf-8")
    v1 = command("open('config.ini', 'w').write('v1')")
    fix = reply("", call("file_edit", path="calc.py", old="a - b", new="a + b"))
    steps = [fix, v1] if first_command_at_step == 2 else [v1, fix]
    folder = []  # the session's, once made: the plan the agent rewrites
    model = ScriptedModel([
        *steps,
        lambda request: reply("Rewriting it all.", call("file_write", path="calc.py", content="rewritten\n"),
                              call("plan_update", content=plan_of(folder[0]).replace("## Goal\nTest task",
                                                                                     "## Goal\nRewrite everything"))),
        command("open('config.ini', 'w').write('v2'); open('junk.txt', 'w').write('x')"),
        reply("", call("task_done", summary="rewrote it")),
    ], default=reply("", call("task_done", summary="done")))
    session = make_session(store, data_dir, workdir, model, approval="all")
    folder.append(session.dir)
    assert await session.run() == "done"
    steps = [r for r in session.records if isinstance(r.event, AssistantMessage)]
    return session, model, steps


def plan_of(folder) -> str:
    return (folder / PLAN).read_text(encoding="utf-8")


async def test_going_back_puts_the_work_folder_the_plan_and_the_conversation_as_they_were(store, data_dir, workdir):
    source, model, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    wrong_turn = steps[2]
    plan_then = next(r.event for r in reversed(source.records)
                     if isinstance(r.event, FileChanged) and r.event.file == PLAN and r.seq < wrong_turn.seq)
    assert "Rewrite everything" in plan_of(source.dir)

    plan = going_back(store, data_dir, source.id, wrong_turn.seq)
    assert plan.changed == ["calc.py", "config.ini", "junk.txt"]
    new_id = go_back(store, data_dir, plan)

    assert (workdir / "calc.py").read_text(encoding="utf-8") == FIXED  # as step 1 left it, not as before the session
    assert (workdir / "config.ini").read_text(encoding="utf-8") == "v1"
    assert not (workdir / "junk.txt").exists()
    assert (workdir / "notes.txt").read_text(encoding="utf-8") == "the person's\n"  # never the agent's: untouched
    branch = Session.open(store, data_dir, new_id, ScriptedModel([]))
    assert [r.event for r in branch.records[:-1]] == [r.event for r in source.records if r.seq < wrong_turn.seq]
    branched = branch.records[-1].event
    assert isinstance(branched, SessionBranched) and branched.source == source.id
    assert branched.put_back == ("calc.py", "config.ini") and branched.removed == ("junk.txt",)
    assert branch.state.status == "ended:branched"
    assert "Rewrite everything" not in plan_of(branch.dir)
    assert branch.state.files[PLAN].version == plan_then.version and branch.read_file(PLAN)[1] == plan_then.version
    assert store.session(new_id).title == "Test task (from step 3)"
    # The session gone back in stays as it was: its log, its plan.
    assert "Rewrite everything" in plan_of(source.dir)
    assert store.records(source.id) == source.records


async def test_the_agent_goes_on_from_the_point_with_the_same_prefix_told_where_it_stands(store, data_dir, workdir):
    source, model, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    wrong_turn = steps[2]
    asked_then = model.requests[2].messages  # the request whose reply was the wrong turn
    new_id = go_back(store, data_dir, going_back(store, data_dir, source.id, wrong_turn.seq))

    again = ScriptedModel([reply("", call("task_done", summary="kept it small"))])
    branch = Session.open(store, data_dir, new_id, again)
    await branch.send("Do not rewrite calc.py; add a test instead.")
    assert await branch.wait() == "done"
    sent = again.requests[0].messages
    # Everything before the tail (the plan recited, regenerated each turn) is byte for byte what the
    # other session sent at that point: a provider's cache may still hold it.
    assert sent[:len(asked_then) - 1] == asked_then[:-1]
    told = " ".join(str(m["content"]) for m in sent[len(asked_then) - 1:])
    assert "The person went back to this point of the session" in told
    assert "as they were here again: calc.py, config.ini" in told and "Those you made after it are removed: junk.txt" in told
    assert "Do not rewrite calc.py" in told
    assert (workdir / "calc.py").read_text(encoding="utf-8") == FIXED


async def test_a_point_before_the_first_command_takes_what_the_copy_and_the_originals_hold(store, data_dir, workdir):
    source, _, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    before_fix = steps[0]  # before anything: calc.py as the person had it, no config.ini
    plan = going_back(store, data_dir, source.id, before_fix.seq)
    assert plan.not_put_back == {}
    go_back(store, data_dir, plan)
    assert (workdir / "calc.py").read_text(encoding="utf-8") == ADD
    assert not (workdir / "config.ini").exists() and not (workdir / "junk.txt").exists()


async def two_edits_then_a_command(store, data_dir, workdir):
    (workdir / "calc.py").write_text(ADD, encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("", call("file_edit", path="calc.py", old="a + b", new="a * b")),
        command("print('the first command')"),
        reply("", call("task_done", summary="done")),
    ])
    source = make_session(store, data_dir, workdir, model, approval="all")
    assert await source.run() == "done"
    return source, [r for r in source.records if isinstance(r.event, AssistantMessage)][1]


async def test_a_file_the_tools_wrote_before_and_after_the_point_comes_back_as_it_was_between(
        store, data_dir, workdir):
    source, second = await two_edits_then_a_command(store, data_dir, workdir)
    plan = going_back(store, data_dir, source.id, second.seq)
    assert plan.not_put_back == {} and list(plan.held) == ["calc.py"]
    go_back(store, data_dir, plan)
    assert (workdir / "calc.py").read_text(encoding="utf-8") == FIXED  # after the first edit, before the second


async def test_in_a_log_from_before_each_write_was_kept_such_a_file_is_said_not_put_back(store, data_dir, workdir):
    source, second = await two_edits_then_a_command(store, data_dir, workdir)
    (source.dir / ORIGINALS_DIR / STEPS_NAME).unlink()  # as an older Tripane left it

    plan = going_back(store, data_dir, source.id, second.seq)
    assert list(plan.not_put_back) == ["calc.py"] and "before that point and after" in plan.not_put_back["calc.py"]
    new_id = go_back(store, data_dir, plan)
    assert "a * b" in (workdir / "calc.py").read_text(encoding="utf-8")  # left, never guessed
    branched = store.records(new_id)[-1].event
    assert branched.not_put_back == ("calc.py",) and branched.put_back == ()


async def test_left_as_they_are_when_the_person_says_so(store, data_dir, workdir):
    source, _, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    new_id = go_back(store, data_dir, going_back(store, data_dir, source.id, steps[2].seq), put_back=False)
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "rewritten\n"
    branched = store.records(new_id)[-1].event
    assert branched.left_as_they_are and branched.not_put_back == ("calc.py", "config.ini", "junk.txt")


async def test_a_persons_message_is_a_point_a_tool_result_or_a_running_session_is_not(store, data_dir, workdir):
    (workdir / "calc.py").write_text(ADD, encoding="utf-8")
    model = ScriptedModel([reply("", call("file_read", path="calc.py")), reply("", call("task_done", summary="read"))],
                          default=reply("", call("task_done", summary="again")))
    source = make_session(store, data_dir, workdir, model, approval="all")
    assert await source.run() == "done"
    await source.send("Now explain it.")
    assert await source.wait() == "done"
    message = next(r for r in source.records if isinstance(r.event, UserMessage))
    result = next(r for r in source.records if isinstance(r.event, ToolResult))

    with pytest.raises(CannotGoBack, match="before one of the agent's steps or one of your messages"):
        going_back(store, data_dir, source.id, result.seq)
    plan = going_back(store, data_dir, source.id, message.seq)
    assert plan.changed == []
    lock = source._run_lock
    lock.acquire()
    try:
        with pytest.raises(CannotGoBack, match="stop its run first"):
            go_back(store, data_dir, plan)
    finally:
        lock.release(force=True)
    new_id = go_back(store, data_dir, plan)
    assert not any(isinstance(r.event, UserMessage) for r in store.records(new_id))


async def test_the_requests_taken_over_are_counted_once_in_the_spending(store, data_dir, workdir):
    (workdir / "calc.py").write_text(ADD, encoding="utf-8")
    model = ScriptedModel([reply("", call("file_read", path="calc.py"), prompt_tokens=1000),
                           reply("", call("task_done", summary="read"), prompt_tokens=1200)])
    source = make_session(store, data_dir, workdir, model, approval="all")
    assert await source.run() == "done"
    second = [r for r in source.records if isinstance(r.event, AssistantMessage)][1]
    before = spending(store).total.prompt_tokens
    new_id = go_back(store, data_dir, going_back(store, data_dir, source.id, second.seq))
    after = spending(store)
    assert after.total.prompt_tokens == before == 2200
    assert new_id not in after.by_session
    assert Session.open(store, data_dir, new_id, ScriptedModel([])).state.usage.prompt_tokens == 1000  # its own history's


async def test_the_new_sessions_own_changes_are_listed_and_put_back_as_before_its_point(store, data_dir, workdir):
    source, _, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    new_id = go_back(store, data_dir, going_back(store, data_dir, source.id, steps[2].seq))
    branch = Session.open(store, data_dir, new_id, ScriptedModel([
        reply("", call("file_write", path="other.py", content="x = 1\n")),
        reply("", call("task_done", summary="other")),
    ]))
    await branch.send("Write other.py instead.")
    assert await branch.wait() == "done"
    listed = {c.path: c.what() for c in branch.changed_files()}
    # calc.py as the file tools kept it before the session; other.py its own; what the other
    # session did after the point is not this one's.
    assert listed == {"calc.py": "changed", "config.ini": "created by a command", "other.py": "created"}
    branch.put_back(["other.py", "calc.py"])
    assert (workdir / "calc.py").read_text(encoding="utf-8") == ADD and not (workdir / "other.py").exists()


def test_the_command_line_goes_back_to_a_step_says_what_it_put_back_and_refuses_one_not_taken(
        store, data_dir, workdir, capsys):
    from core import cli

    source, _, _ = asyncio.run(a_run_that_went_wrong(store, data_dir, workdir))  # (the command runs its own loop)
    dry = cli.main(["--data-dir", str(data_dir), "go-back", source.id, "3", "--dry-run"])
    assert dry == cli.EXIT_DONE
    assert capsys.readouterr().out == (f"Going back to before step 3 of {source.id} would put back: calc.py, "
                                       "config.ini; remove (made after it): junk.txt\n")
    assert (workdir / "junk.txt").exists()  # a dry run does nothing

    assert cli.main(["--data-dir", str(data_dir), "go-back", source.id, "9"]) == cli.EXIT_USAGE
    assert "the session has no step 9: its agent took 5" in capsys.readouterr().err

    assert cli.main(["--data-dir", str(data_dir), "go-back", source.id, "3"]) == cli.EXIT_DONE
    out = capsys.readouterr().out
    new_id = store.sessions()[0].id
    assert f"New session {new_id} waits for your word: tripane resume {new_id} --message" in out
    assert "files put back as they were then: calc.py, config.ini; removed (made after it): junk.txt" in out
    assert (workdir / "calc.py").read_text(encoding="utf-8") == FIXED and not (workdir / "junk.txt").exists()


async def test_the_folder_kept_at_each_step_outlasts_the_packing_of_the_copy(store, data_dir, workdir, monkeypatch):
    from core import snapshot as snapshot_module

    source, _, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    monkeypatch.setattr(snapshot_module, "PACK_LOOSE_OBJECTS", 1)
    assert WorkFolderSnapshot(source.dir).pack()  # (as the copies' budget does once the session is not in use)
    assert not list((source.dir / SNAPSHOT_DIR / "objects").glob("[0-9a-f][0-9a-f]/*"))  # all packed

    go_back(store, data_dir, going_back(store, data_dir, source.id, steps[3].seq))  # before the second command
    assert (workdir / "config.ini").read_text(encoding="utf-8") == "v1"  # as the first command left it
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "rewritten\n" and not (workdir / "junk.txt").exists()


async def test_going_back_in_a_session_gone_back_in_opens_as_that_one_did_there(store, data_dir, workdir):
    source, _, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    first_id = go_back(store, data_dir, going_back(store, data_dir, source.id, steps[2].seq))
    again = ScriptedModel([reply("", call("file_write", path="test_calc.py", content="assert True\n")),
                           reply("", call("file_write", path="notes.txt", content="overwritten\n")),
                           reply("", call("task_done", summary="tested"))])
    first = Session.open(store, data_dir, first_id, again)
    await first.send("Add a test instead.")
    assert await first.wait() == "done"
    wrong_again = [r for r in first.records if isinstance(r.event, AssistantMessage)][-2]  # its notes.txt step

    second_id = go_back(store, data_dir, going_back(store, data_dir, first_id, wrong_again.seq))
    assert (workdir / "notes.txt").read_text(encoding="utf-8") == "the person's\n"  # as it was before that step
    assert (workdir / "test_calc.py").exists() and (workdir / "calc.py").read_text(encoding="utf-8") == FIXED
    third = ScriptedModel([reply("", call("task_done", summary="left notes.txt alone"))])
    second = Session.open(store, data_dir, second_id, third)
    await second.send("Leave notes.txt alone.")
    assert await second.wait() == "done"
    asked_there = again.requests[1].messages  # the request whose reply was the step gone back before
    assert third.requests[0].messages[:len(asked_there) - 1] == asked_there[:-1]


async def test_a_work_folder_gone_is_said_and_nothing_is_made(store, data_dir, workdir, tmp_path):
    source, _, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    workdir.rename(tmp_path / "moved")
    with pytest.raises(CannotGoBack, match="the work folder .* is not there"):
        going_back(store, data_dir, source.id, steps[2].seq)
    assert [row.id for row in store.sessions()] == [source.id]


async def test_the_compaction_summaries_kept_are_those_of_the_compactions_taken_over(store, data_dir, workdir):
    from core.llm import ModelReply

    (workdir / "a.txt").write_text("a\n", encoding="utf-8")
    reads = [reply("", call("file_read", call_id=f"c{i}", path="a.txt")) for i in range(4)]
    source = make_session(store, data_dir, workdir, ScriptedModel([*reads, reply("", call("task_done", summary="read"))]),
                          keep_turns=1)  # (something to compact)
    assert await source.run() == "done"
    for said, summary in (("Compact, then finish.", "First summary."), ("Again.", "Second summary.")):
        compacting = ScriptedModel([reply("", call("findings_add", title="Kept", body="a.txt has one line.")),
                                    reply("", call("task_done", summary="compacted"))],
                                   side_replies=[ModelReply(summary)])
        source = Session.open(store, data_dir, source.id, compacting)
        source.request_compaction()
        await source.send(said)
        assert await source.wait() == "done"
    second = next(r for r in source.records if isinstance(r.event, UserMessage) and r.event.text == "Again.")
    kept = (source.dir / "compaction" / "summaries.jsonl").read_text(encoding="utf-8")
    assert "First summary." in kept and "Second summary." in kept

    asked_then = compacting.requests[0].messages  # the first request after "Again."
    new_id = go_back(store, data_dir, going_back(store, data_dir, source.id, second.seq))
    assert sum(isinstance(r.event, Compaction) for r in store.records(new_id)) == 1
    summaries = (session_dir(data_dir, new_id) / "compaction" / "summaries.jsonl").read_text(encoding="utf-8")
    assert [json.loads(line)["summary"] for line in summaries.splitlines()] == ["First summary."]
    # Past the compaction taken over, the request opens as the other session's did there: the summary
    # names the session whose log has those events, the other (its own holds them too).
    instead = ScriptedModel([reply("", call("task_done", summary="else"))])
    branch = Session.open(store, data_dir, new_id, instead)
    await branch.send("Something else.")
    assert await branch.wait() == "done"
    again_at = next(i for i, m in enumerate(asked_then) if "Again." in str(m["content"]))
    assert instead.requests[0].messages[:again_at] == asked_then[:again_at]
    assert any(f"of session {source.id} are summarised" in str(m["content"]) for m in asked_then[:again_at])


def test_the_command_line_ends_the_session_left_when_it_waits_for_an_answer(store, data_dir, workdir, capsys,
                                                                             monkeypatch):
    from core import cli

    (workdir / "calc.py").write_text(ADD, encoding="utf-8")
    monkeypatch.setattr(cli, "_model_client", lambda: ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("", call("human_ask", question="Rewrite the module too?", options=["yes", "no"]))]))
    assert cli.main(["--data-dir", str(data_dir), "run", "Fix add", "--model", "openai/gpt-4o-mini", "--workdir",
                     str(workdir), "--approve", "all", "--no-memory"]) == cli.EXIT_WAITING  # nobody at a terminal
    source = store.sessions()[0].id
    capsys.readouterr()

    assert cli.main(["--data-dir", str(data_dir), "go-back", source, "2"]) == cli.EXIT_DONE
    assert f"■ {source}, which waited for you, is ended where it was" in capsys.readouterr().out
    left = Session.open(store, data_dir, source, ScriptedModel([]))
    assert left.state.status == "ended:aborted" and left.state.open_question is None


async def test_a_failure_while_the_new_session_is_made_leaves_nothing_of_it_and_the_files_untouched(
        store, data_dir, workdir, monkeypatch):
    from core import branch

    source, _, steps = await a_run_that_went_wrong(store, data_dir, workdir)
    plan = going_back(store, data_dir, source.id, steps[2].seq)

    def disk_full(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(branch, "_write_files_as_then", disk_full)
    with pytest.raises(OSError, match="No space left"):
        go_back(store, data_dir, plan)
    assert [row.id for row in store.sessions()] == [source.id]
    assert sorted(p.name for p in (data_dir / "sessions").iterdir()) == [source.id]
    assert (workdir / "calc.py").read_text(encoding="utf-8") == "rewritten\n"  # nothing put back either
    assert (workdir / "junk.txt").exists()


async def test_past_what_the_copies_before_each_write_may_take_a_file_is_said_not_kept(
        store, data_dir, workdir, monkeypatch):
    from core import originals

    monkeypatch.setattr(originals, "STEPS_KEPT_MAX", 1)  # full after the first copy
    source, second = await two_edits_then_a_command(store, data_dir, workdir)
    plan = going_back(store, data_dir, source.id, second.seq)
    assert plan.not_put_back == {"calc.py": "calc.py was not kept then: the session's copies of files before each "
                                            "write had reached 1 GB"}
