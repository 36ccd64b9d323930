"""Seed 002's error reflection for work the person rejected: files put back are diagnosed before the
agent's next step. Real sessions (SQLite, files, the work folder), a scripted model."""

from __future__ import annotations

from core.agent.rules import put_back_signature
from core.events import ErrorDiagnosed, FilesPutBack, Usage
from core.llm import ModelError, ModelReply
from core.memory.reflection import trace_lines
from core.render import diagnosis_note, render
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from tests.core.helpers import events_of, make_session

CALC = "def add(a, b):\n    return a - b\n"
DIAGNOSIS = ModelReply('```yaml\nroot_cause: "add() was changed, but the task asked for a new function"\nkind: "B"\n'
                       'try_instead: "Leave add() as it is and write subtract() beside it in calc.py"\n```',
                       usage=Usage(900, 45, 0, 0.0019))
DONE = reply("", call("task_done", summary="done"))


def turns_of(model: ScriptedModel) -> list:
    return [r for r in model.requests if r.tools]


def side_requests(model: ScriptedModel) -> list:
    return [r for r in model.requests if not r.tools]


async def agent_that_rewrote(store, data_dir, workdir, *after, **config):
    """A run that edits calc.py and creates helpers.py, then ends; `after`: its replies once told to go on."""
    (workdir / "calc.py").write_text(CALC, encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_edit", path="calc.py", old="a - b", new="a + b")),
        reply("", call("file_write", path="./helpers.py", content="def twice(x):\n    return 2 * x\n")),
        reply("", call("file_read", path="calc.py")),
        DONE, *after,
    ], side_replies=[DIAGNOSIS])
    session = make_session(store, data_dir, workdir, model, approval="all", summary_model="scripted-small",
                           task="Add a subtract function to calc.py", **config)
    assert await session.run() == "done"
    return session, model


async def test_work_the_person_put_back_is_diagnosed_and_the_agent_reads_it_after_the_put_back(
        store, data_dir, workdir):
    session, model = await agent_that_rewrote(store, data_dir, workdir, DONE)
    asked_before = len(model.requests)
    put_back = session.put_back(["calc.py", "helpers.py"], "add must still add; I asked for subtract")
    seq = next(r.seq for r in session.records if r.event == put_back)
    assert session.state.put_back_due == seq

    await session.send("Go on.")
    assert await session.run() == "done"
    # One request to the summary model, before the agent's next turn.
    [asked] = side_requests(model)
    assert model.requests.index(asked) == asked_before and asked.model == "scripted-small"
    system, question = (m["content"] for m in asked.messages)
    assert system.startswith("You diagnose rejected work")
    assert "## Task\nAdd a subtract function to calc.py" in question
    assert ("- calc.py (the agent changed it; it is now as before the task)\n"
            "- helpers.py (the agent created it; it was removed)") in question
    assert 'The person\'s reason: "add must still add; I asked for subtract"' in question
    # What the agent had done to them, its texts in full: the model judges the work, not its name.
    assert "Turn 1: file_edit calc.py\n  old:\n    a - b\n  new:\n    a + b" in question
    assert "Turn 2: file_write helpers.py\n  content:\n    def twice(x):\n        return 2 * x" in question
    assert "file_read calc.py" not in question.split("## The latest steps")[0]  # a read changed nothing

    [diagnosed] = events_of(session, ErrorDiagnosed)
    assert diagnosed.signature == put_back_signature(seq) and diagnosed.cause == "B"
    assert diagnosed.model == "scripted-small" and diagnosed.usage.cost_usd == 0.0019
    assert diagnosed.text == (
        "[Tripane's diagnosis of the work the person put back — calc.py, helpers.py (removed). Root cause "
        "(wrong strategy): add() was changed, but the task asked for a new function. Try instead: Leave add() "
        "as it is and write subtract() beside it in calc.py.]")
    assert session.state.put_back_due is None
    # The agent reads the put-back, then the diagnosis, appended after the request before (cache kept).
    before, after = turns_of(model)[-2].messages, turns_of(model)[-1].messages
    assert after[:len(before) - 1] == before[:-1]
    told = [str(m["content"]) for m in after if m["role"] == "user"]
    put_back_at = next(i for i, text in enumerate(told) if text.startswith("[The person put these files"))
    assert told[put_back_at + 1:put_back_at + 3] == ["Go on.", diagnosed.text]  # in the order they came
    # The person reads it in the chat's line, progress.md and the reflection's trace.
    line = render(next(r for r in session.records if isinstance(r.event, ErrorDiagnosed)))
    assert line.startswith("  🩺 Tripane's diagnosis of the work you put back — calc.py") and "(by scripted-small" in line
    progress, _ = session.read_file("progress.md")
    assert "🩺 Diagnosis by scripted-small" in progress and "write subtract() beside it" in progress
    assert any(step.startswith("  Tripane diagnosed the work put back: [Tripane's diagnosis")
               for step in trace_lines(session.records))


async def test_a_file_put_back_twice_is_judged_by_what_the_agent_did_since_the_first_put_back(
        store, data_dir, workdir):
    session, model = await agent_that_rewrote(
        store, data_dir, workdir, reply("", call("file_edit", path="calc.py", old="a - b", new="b - a")), DONE, DONE)
    session.put_back(["calc.py"], "")
    await session.send("Go on.")
    assert await session.run() == "done"
    model.side_replies.append(ModelReply("Ask the person what they want from calc.py before changing it again."))
    session.put_back(["calc.py"], "")
    await session.send("Go on.")
    assert await session.run() == "done"

    first, second = side_requests(model)
    assert "The person gave no reason." in second.messages[1]["content"]
    work = second.messages[1]["content"].split("## What the agent had done to these files")[1].split("## The latest")[0]
    assert "new:\n    b - a" in work and "a + b" not in work  # the first edit was undone by the first put-back
    assert "helpers.py" not in work
    prose = events_of(session, ErrorDiagnosed)[-1]
    assert prose.text.endswith("— calc.py. Try instead: Ask the person what they want from calc.py before "
                               "changing it again.]")


async def test_no_diagnosis_of_work_put_back_when_the_person_turned_diagnoses_off(store, data_dir, workdir):
    session, model = await agent_that_rewrote(store, data_dir, workdir, DONE, diagnose_errors=False)
    session.put_back(["calc.py"], "no")
    assert session.state.put_back_due is None
    await session.send("Go on.")
    assert await session.run() == "done"
    assert side_requests(model) == [] and events_of(session, ErrorDiagnosed) == []


async def test_a_put_back_no_model_could_diagnose_leaves_the_agent_its_own_note(store, data_dir, workdir):
    session, model = await agent_that_rewrote(store, data_dir, workdir, DONE)
    model.side_replies[:] = [ModelError("auth", "AuthenticationError: no key for scripted-small"),
                             ModelError("rate_limit", "RateLimitError: slow down")]
    session.put_back(["calc.py"], "wrong")
    await session.send("Go on.")
    assert await session.run() == "done"

    [diagnosed] = events_of(session, ErrorDiagnosed)
    assert diagnosed.text == "" and "no key for scripted-small" in diagnosed.error
    assert diagnosis_note(diagnosed).startswith("the work you put back could not be diagnosed: ")
    progress, _ = session.read_file("progress.md")
    assert "🩺 The work put back could not be diagnosed" in progress
    told = [str(m["content"]) for m in turns_of(model)[-1].messages]
    assert any(text.startswith("[The person put these files") for text in told)
    assert not any("Tripane's diagnosis" in text for text in told)
    assert session.state.put_back_due is None  # not asked again


async def test_a_put_back_made_before_tripane_closed_is_diagnosed_when_the_session_goes_on(
        store, data_dir, workdir):
    session, model = await agent_that_rewrote(store, data_dir, workdir)
    event = session.put_back(["helpers.py"], "not asked for")
    assert isinstance(event, FilesPutBack)
    await session.close()

    again = ScriptedModel([DONE], side_replies=[DIAGNOSIS])
    reopened = Session.open(store, data_dir, session.id, again)
    assert reopened.state.put_back_due is not None
    await reopened.send("Go on.")
    assert await reopened.run() == "done"
    assert len(side_requests(again)) == 1 and len(events_of(reopened, ErrorDiagnosed)) == 1
    await reopened.close()
    assert Session.open(store, data_dir, session.id, again).state.put_back_due is None


def test_the_diagnosis_of_a_put_back_of_hundreds_of_files_names_a_few():
    # Its note named all 621 files a formatter changed, again, in the agent's context.
    from core.agent.put_back_diagnosis import memory_query, request_text, undone
    from core.events import FilesPutBack, Record

    paths = tuple(f"src/llms/m{i:03}.py" for i in range(600))
    event = FilesPutBack(paths=paths, removed=("src/llms/new.py",))
    assert undone(event) == ", ".join(paths[:20]) + " and 581 more (601 files, all in src/llms/)"
    assert len(memory_query(event)) < 1000
    asked = request_text([Record("s", 1, "", event)], 1, "", "/w", [])
    assert "- src/llms/m019.py (the agent changed it" in asked and "m020" not in asked
    assert "\n- … and 581 more, all in src/llms\n" in asked
    # Nor in the steps a reflection reads.
    from core.memory.reflection import trace_lines
    [line] = trace_lines([Record("s", 1, "", event)])
    assert line.endswith("and 581 more (601 files, all in src/llms/)")
