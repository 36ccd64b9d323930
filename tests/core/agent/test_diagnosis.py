"""Seed 002's error reflection: a failure that happens again is diagnosed at once, and the agent
reads the diagnosis before its next step. Real sessions (SQLite, files), a scripted model."""

from __future__ import annotations

import asyncio

from core.agent.diagnosis import parse
from core.agent.rules import diagnosis_due
from core.events import ErrorDiagnosed, ErrorRecorded, Usage
from core.llm import ModelError, ModelReply
from core.render import diagnosis_note, render
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from core.spending import spending
from core.summary import summarize, summary_rows
from core.transcript import transcript
from tests.core.helpers import events_of, make_session, wait_for_question

MISSING = reply("", call("file_read", path="missing.txt"))
DIAGNOSIS = ModelReply('```yaml\nroot_cause: "missing.txt was never created"\nkind: "A"\n'
                       'try_instead: "List the folder with file_list, then read the file it holds"\n```',
                       usage=Usage(700, 40, 0, 0.0021))


def turns_of(model: ScriptedModel) -> list:
    return [r for r in model.requests if r.tools]


def side_requests(model: ScriptedModel) -> list:
    return [r for r in model.requests if not r.tools]


async def test_the_second_identical_failure_is_diagnosed_and_the_agent_reads_it_before_its_next_step(
        store, data_dir, workdir):
    (workdir / "data.txt").write_text("42\n", encoding="utf-8")
    model = ScriptedModel([MISSING, MISSING, reply("", call("file_list")), reply("", call("task_done", summary="ok"))],
                          side_replies=[DIAGNOSIS])
    session = make_session(store, data_dir, workdir, model, summary_model="scripted-small",
                           task="Sum the numbers in the data file", context_window=32_768)
    assert await session.run() == "done"

    [diagnosed] = events_of(session, ErrorDiagnosed)
    assert diagnosed.attempt == 2 and diagnosed.model == "scripted-small" and diagnosed.cause == "A"
    assert diagnosed.usage.cost_usd == 0.0021
    # One request to the summary model, without tools, between the second and the third turn.
    [asked] = side_requests(model)
    assert asked.model == "scripted-small" and model.requests.index(asked) == 2
    assert asked.window == 32_768  # the session's, as a compaction's summary is asked (Ollama is told it)
    system, question = (m["content"] for m in asked.messages)
    assert system.startswith("You diagnose a failure")
    assert "## Task\nSum the numbers in the data file" in question
    assert question.count("No such file: 'missing.txt'") >= 2  # each occurrence, and the steps
    assert "1. [ ] Read the relevant files and sources" in question  # the plan's step being worked on
    assert "## What long-term memory holds on it\n(nothing found)" in question  # no memory in this session
    # The agent's next request is the one before plus a suffix: the tool result, then the note.
    second, third = turns_of(model)[1].messages, turns_of(model)[2].messages
    assert third[:len(second) - 1] == second[:-1]  # all but the tail, which is rebuilt each turn
    note = next(m["content"] for m in third if "Tripane's diagnosis" in str(m["content"]))
    assert note == ("[Tripane's diagnosis of a failure that happened twice — file_read failed: No such file: "
                    "'missing.txt'. Root cause (missing information): missing.txt was never created. Try instead: "
                    "List the folder with file_list, then read the file it holds. The same failure once more "
                    "stops the run for the person.]")
    assert third.index(next(m for m in third if m["content"] == note)) > len(second) - 2
    # The person sees it in progress.md, the chat's line, the transcript and the session's figures.
    progress, _ = session.read_file("progress.md")
    assert "🩺 Diagnosis by scripted-small" in progress and "was never created" in progress
    line = render(next(r for r in session.records if isinstance(r.event, ErrorDiagnosed)))
    assert line.startswith("  🩺 Tripane's diagnosis of a failure that happened twice") and "(by scripted-small; " in line
    assert "then read the file it holds. (by scripted-small" in line  # what the agent alone is told, left out
    assert "🩺 Tripane's diagnosis" in transcript(session.records, "t")
    rows = dict(summary_rows(summarize(session.records)))
    assert rows["Errors recorded"] == "2 (1 diagnosed as they happened again)"
    assert session.state.usage.cost_usd >= 0.0021
    spent = spending(store)
    assert spent.by_model["scripted-small"].requests == 1 and spent.by_model["scripted-small"].cost_usd == 0.0021


async def test_a_failure_once_or_two_different_failures_are_not_diagnosed(store, data_dir, workdir):
    model = ScriptedModel([MISSING, reply("", call("no_such_tool")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    assert [e.attempt for e in events_of(session, ErrorRecorded)] == [1, 1]
    assert events_of(session, ErrorDiagnosed) == [] and side_requests(model) == []


async def test_no_diagnosis_when_the_person_turned_it_off_or_the_limit_asks_them_at_the_second(
        store, data_dir, workdir):
    off = ScriptedModel([MISSING, MISSING, reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, off, diagnose_errors=False)
    assert await session.run() == "done"
    assert events_of(session, ErrorDiagnosed) == [] and side_requests(off) == []

    at_two = ScriptedModel([MISSING, MISSING, reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, at_two, strike_limit=2)
    session.start()
    question = await wait_for_question(session)
    assert question.reason == "three_strike" and events_of(session, ErrorDiagnosed) == []
    assert "diagnosis" not in question.context or not question.context["diagnosis"]
    await session.answer(question.qid, "stop")
    await session.wait()


def test_when_a_failure_is_diagnosed():
    assert [diagnosis_due(count, 3) for count in (1, 2, 3, 4)] == [False, True, False, False]
    assert [diagnosis_due(count, 5) for count in (2, 3, 4, 5)] == [False, False, True, False]
    assert not any(diagnosis_due(count, 2) for count in (1, 2, 3))
    # a command that ran out of time: at once, each try costs its whole timeout
    timed_out = "Command timed out after 120 s and was stopped.\n…"
    assert [diagnosis_due(count, 3, timed_out) for count in (1, 2, 3)] == [True, True, False]
    assert [diagnosis_due(count, 2, timed_out) for count in (1, 2)] == [True, False]


async def test_a_command_that_runs_out_of_time_is_diagnosed_at_once_and_once(store, data_dir, workdir):
    import sys

    slow = reply("", call("shell_run", command=f'"{sys.executable}" -c "import time; time.sleep(30)"', timeout=1))
    model = ScriptedModel([slow, slow, reply("", call("task_done", summary="ok"))],
                          side_replies=[ModelReply("root_cause: the script waits for input\nkind: C\n"
                                                   "try_instead: pass --yes so it does not wait")])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"

    [diagnosed] = events_of(session, ErrorDiagnosed)  # after the first timeout; not again after the second
    assert diagnosed.attempt == 1 and "Try instead: pass --yes so it does not wait" in diagnosed.text
    assert model.requests.index(side_requests(model)[0]) == 1
    assert diagnosed.text.startswith("[Tripane's diagnosis of a failure that happened once — shell_run failed: "
                                     "Command timed out after 1 s")
    assert "once more stops the run" not in diagnosed.text  # that is the second time, not yet the third


async def test_a_diagnosing_model_that_fails_leaves_the_run_as_it_was(store, data_dir, workdir):
    model = ScriptedModel([MISSING, MISSING, reply("", call("task_done", summary="ok"))],
                          side_replies=[ModelError("auth", "AuthenticationError: no key for scripted-small")])
    session = make_session(store, data_dir, workdir, model, summary_model="scripted-small")
    # The session's own model is tried next: it fails too.
    model.side_replies.append(ModelError("rate_limit", "RateLimitError: slow down"))
    assert await session.run() == "done"

    [diagnosed] = events_of(session, ErrorDiagnosed)
    assert diagnosed.text == "" and "no key for scripted-small" in diagnosed.error and "slow down" in diagnosed.error
    assert [r.model for r in side_requests(model)] == ["scripted-small", "scripted"]
    last = turns_of(model)[-1].messages
    assert not any("Tripane's diagnosis" in str(m["content"]) for m in last)
    assert "could not be diagnosed" in diagnosis_note(diagnosed)
    progress, _ = session.read_file("progress.md")
    assert "The repeated failure could not be diagnosed" in progress
    # Not a failure of the agent's: no strike is counted for it.
    assert [e.attempt for e in events_of(session, ErrorRecorded)] == [1, 2]


class HangsOnSideRequests(ScriptedModel):
    """A summary model that never answers: the run is closed while it is asked, as a killed one."""

    async def complete(self, request, *args, **kwargs):
        if not request.tools:
            self.requests.append(request)
            self.asked.set()
            await asyncio.Event().wait()
        return await super().complete(request, *args, **kwargs)


async def test_a_run_closed_before_the_diagnosis_makes_it_on_reopening_and_once_only(store, data_dir, workdir):
    model = HangsOnSideRequests([MISSING, MISSING])
    model.asked = asyncio.Event()
    session = make_session(store, data_dir, workdir, model)
    session.start()
    await asyncio.wait_for(model.asked.wait(), 5)
    await session.close()
    assert events_of(session, ErrorDiagnosed) == []

    again = ScriptedModel([reply("", call("task_done", summary="ok"))], side_replies=[DIAGNOSIS])
    reopened = Session.open(store, data_dir, session.id, again)
    assert reopened.state.diagnosis_due == events_of(reopened, ErrorRecorded)[-1].signature
    assert await reopened.run() == "done"
    assert len(events_of(reopened, ErrorDiagnosed)) == 1 and len(side_requests(again)) == 1
    await reopened.close()
    # Opened once more, nothing is due.
    assert Session.open(store, data_dir, session.id, again).state.diagnosis_due is None


def test_a_reply_in_prose_is_taken_as_what_to_try():
    found = parse("The file is not there. Create it first, then read it.")
    assert (found.root_cause, found.cause) == ("", "")
    assert found.try_instead == "The file is not there. Create it first, then read it."
    found = parse("root_cause: the path is relative to the wrong folder\nkind: c\ntry_instead: use data/x.txt")
    assert (found.root_cause, found.cause, found.try_instead) == (
        "the path is relative to the wrong folder", "C", "use data/x.txt")
    assert "Root cause (tool misuse)" in found.note("file_read failed: x", 2)


def test_the_latest_steps_are_the_ones_before_the_failure():
    from core.agent.diagnosis import latest

    lines = [f"Turn {n}: read module_{n}.py" for n in range(1, 401)]
    shown = latest(lines, 300)
    assert shown.startswith("… (") and shown.endswith("Turn 400: read module_400.py")
    assert "Turn 1:" not in shown and len(shown) <= 340
    assert latest(lines[:3], 300) == "\n".join(lines[:3])  # all fit: nothing is said left out


async def test_a_failure_the_task_ended_after_is_not_diagnosed_when_the_person_writes_again(store, data_dir, workdir):
    missing = call("file_read", call_id="m2", path="missing.txt")
    model = ScriptedModel([MISSING, reply("", missing, call("task_done", call_id="done", summary="gave up")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    assert [e.attempt for e in events_of(session, ErrorRecorded)] == [1, 2]
    await session.send("Thanks; now also list the folder.")
    assert await session.wait() == "done"
    assert events_of(session, ErrorDiagnosed) == [] and side_requests(model) == []
