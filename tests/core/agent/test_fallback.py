"""A question the agent asks with a fallback: when the session lets it go on without the person,
an unanswered question ends in that fallback after the wait; every other question waits for them.

A minute is shortened (core.agent.loop.MINUTE_S); the loop, the store and the files are real.
"""

from __future__ import annotations

import asyncio

import pytest

from core.agent import loop as agent_loop
from core.agent.options import NO_ANSWER
from core.events import HumanAnswer, ToolResult
from core.memory.working import PROGRESS
from core.scripted import ScriptedModel, call, reply
from core.summary import summarize, summary_rows
from tests.core.helpers import events_of, make_session, wait_for_question

FALLBACK = "keep the ISO date format"


@pytest.fixture
def short_minutes(monkeypatch):
    monkeypatch.setattr(agent_loop, "MINUTE_S", 0.05)


def asking(**arguments) -> ScriptedModel:
    return ScriptedModel([reply("", call("human_ask", "ask", question="Which date format should the report use?",
                                         **arguments)),
                          reply("", call("task_done", summary="report written"))])


async def test_an_unanswered_question_goes_on_with_the_agents_fallback_after_the_wait(
        store, data_dir, workdir, short_minutes):
    model = asking(options=["ISO", "US"], fallback=FALLBACK)
    session = make_session(store, data_dir, workdir, model, answer_wait_min=2)
    assert await asyncio.wait_for(session.run(), 5) == "done"

    answer, = events_of(session, HumanAnswer)
    assert (answer.choice, answer.text) == (NO_ANSWER, "No answer within 2 minutes")
    result = next(r for r in events_of(session, ToolResult) if r.call_id == "ask")
    assert "did not answer within 2 minutes" in result.content and f"fallback: {FALLBACK}" in result.content
    assert result.content in model.requests[1].messages[-2]["content"]  # the agent read it
    progress, _ = session.read_file(PROGRESS)
    assert f"⏱ No answer within 2 minutes: the agent goes on with its fallback — {FALLBACK}" in progress
    rows = dict(summary_rows(summarize(session.records)))
    assert rows["Questions to you"] == "1 (the agent asks 1); 0 answered"


async def test_an_answer_in_time_is_the_answer(store, data_dir, workdir, short_minutes):
    session = make_session(store, data_dir, workdir, asking(fallback=FALLBACK), answer_wait_min=100)
    session.start()
    question = await wait_for_question(session)
    assert question.context["fallback"] == FALLBACK
    await session.answer(question.qid, "US")
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    assert [a.choice for a in events_of(session, HumanAnswer)] == ["US"]


@pytest.mark.parametrize("arguments, wait", [({}, 1), ({"fallback": FALLBACK}, 0)],
                         ids=["no fallback", "the session waits for the person"])
async def test_without_a_fallback_or_a_wait_the_question_waits_for_the_person(
        store, data_dir, workdir, short_minutes, arguments, wait):
    session = make_session(store, data_dir, workdir, asking(**arguments), answer_wait_min=wait)
    session.start()
    question = await wait_for_question(session)
    await asyncio.sleep(0.3)  # six of the shortened minutes
    assert session.state.open_question == question and not events_of(session, HumanAnswer)
    await session.answer(question.qid, "ISO")
    assert await asyncio.wait_for(session.wait(), 5) == "done"


async def test_approvals_always_wait_for_the_person(store, data_dir, workdir, short_minutes):
    model = ScriptedModel([reply("", call("shell_run", "c1", command="echo hi")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, approval="ask", answer_wait_min=1)
    session.start()
    question = await wait_for_question(session)
    await asyncio.sleep(0.3)
    assert question.reason == "approval" and session.state.open_question == question
    await session.close()


def test_a_negative_wait_is_refused(workdir):
    from core.session import SessionConfig

    with pytest.raises(ValueError, match="cannot be negative"):
        SessionConfig(task="t", model="m", workdir=workdir, answer_wait_min=-1)


def test_an_unattended_run_goes_on_with_the_fallback_instead_of_exiting_to_wait(
        tmp_path, monkeypatch, capsys, short_minutes):
    from core import cli
    from tests.support.openai_server import ScriptedServer, Turn, positional, tool

    monkeypatch.setenv("TRIPANE_CONFIG_DIR", str(tmp_path / "config"))
    work = tmp_path / "work"
    work.mkdir()
    script = positional([Turn(tool_calls=(tool("human_ask", question="Which format?", fallback=FALLBACK),)),
                         Turn(tool_calls=(tool("task_done", summary="went on"),))])
    with ScriptedServer(script) as server:
        code = cli.main(["--data-dir", str(tmp_path), "run", "Write the report", "--model", "openai/scripted",
                         "--api-base", server.url, "--workdir", str(work), "--no-memory", "--answer-wait", "1"])
    printed = capsys.readouterr()
    assert code == cli.EXIT_DONE, printed.err
    assert "nobody can answer here; the agent goes on with its fallback in 1 min" in printed.err
    assert "⏱ q" in printed.out and "No answer within 1 minute; the agent goes on with its fallback" in printed.out


async def test_stop_while_a_question_waits_out_its_fallback_stops_the_run(store, data_dir, workdir, monkeypatch):
    monkeypatch.setattr(agent_loop, "MINUTE_S", 30.0)
    session = make_session(store, data_dir, workdir, asking(fallback=FALLBACK), answer_wait_min=1)
    session.start()
    await wait_for_question(session)
    session.stop()
    assert await asyncio.wait_for(session.wait(), 5) == "aborted"
    assert not events_of(session, HumanAnswer)
