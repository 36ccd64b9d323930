"""A research helper's web_fetch under the "ask" policy: the person is asked, as for the agent's
own call, and a question the helper can no longer use is withdrawn rather than left open.

The model is scripted at the core/llm.py boundary; the pages come from a real server on 127.0.0.1,
and the store, the files and the loop are real.
"""

from __future__ import annotations

import asyncio
from http.server import BaseHTTPRequestHandler

import pytest

from core.agent.options import WITHDRAWN
from core.events import HumanAnswer, HumanQuestion, ResearchStep, SessionEnded
from core.llm import ModelRequest
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from tests.core.agent.test_research import delegate, helpers_turn, result_of, routed
from tests.core.helpers import events_of, make_session, wait_for_question
from tests.support.local_site import send_page, serving


class _Notes(BaseHTTPRequestHandler):
    fetched: list[str] = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        _Notes.fetched.append(self.path)
        body = f"<html><body><p>Release notes at {self.path}: totals are rounded per line.</p></body></html>".encode()
        send_page(self, body)


@pytest.fixture
def site():
    _Notes.fetched = []
    with serving(_Notes) as address:
        yield address


def fetch_then_report(url_of):
    """A helper that fetches the page its question names (url_of(question)), then reports what
    its last read said."""
    def step(request: ModelRequest):
        last = request.messages[-1]
        if last["role"] == "tool":
            return reply(f"Report: {str(last['content'])[:200]}")
        return reply("", call("web_fetch", call_id="w1", url=url_of(request.messages[1]["content"])))
    return step


def ask_run(store, data_dir, workdir, site, agent_steps=None, **config):
    model = routed(agent_steps or [delegate(question="What do the notes say?"),
                                   reply("", call("task_done", summary="ok"))],
                   [fetch_then_report(lambda question: f"{site}/notes")])
    return model, make_session(store, data_dir, workdir, model, approval="ask", **config)


async def test_the_person_is_asked_before_a_helper_fetches(
        store, data_dir, workdir, site):
    _, session = ask_run(store, data_dir, workdir, site)
    session.start()
    question = await wait_for_question(session)

    assert question.reason == "approval" and question.context["tool"] == "web_fetch"
    assert f"{site}/notes" in question.context["arguments"]
    assert question.context["call_id"] == "d1"  # the delegate call's card shows it waiting
    assert question.context["helper"] == "What do the notes say?"
    assert "A research helper asks" in question.question and "What do the notes say?" in question.question
    assert _Notes.fetched == []  # nothing before the person's answer
    await session.answer(question.qid, "approve")
    assert await asyncio.wait_for(session.wait(), 5) == "done"

    assert _Notes.fetched == ["/notes"]
    result = result_of(session, "d1")
    assert result.ok and "totals are rounded per line" in result.content
    assert events_of(session, ResearchStep)[0].consulted[0].ok
    progress, _ = session.read_file("progress.md")
    assert f"Allow web_fetch {site}/notes? A research helper asks, for the agent's question: What do the notes" \
        in progress and "The person answered: Approve" in progress


async def test_a_denied_fetch_is_not_made_and_the_helper_reads_the_persons_reason(store, data_dir, workdir, site):
    model, session = ask_run(store, data_dir, workdir, site)
    session.start()
    question = await wait_for_question(session)
    await session.answer(question.qid, "deny", "Use the copy in docs/ instead")
    assert await asyncio.wait_for(session.wait(), 5) == "done"

    assert _Notes.fetched == []
    told = [r for r in model.requests if helpers_turn(r)][-1].messages[-1]["content"]
    assert "The person denied this web_fetch call; it was not run. Reason: Use the copy in docs/ instead. Name what" in told
    assert "Name what you would have fetched" in told
    assert not events_of(session, ResearchStep)[0].consulted[0].ok


async def test_helpers_at_once_ask_one_at_a_time_and_always_lets_the_other_read_unasked(
        store, data_dir, workdir, site):
    both = reply("Two questions.", call("delegate_research", call_id="d1", question="Notes page one?"),
                 call("delegate_research", call_id="d2", question="Notes page two?"))
    model = routed([both, reply("", call("task_done", summary="ok"))],
                   [fetch_then_report(lambda question: f"{site}/{'one' if 'one' in question else 'two'}")])
    session = make_session(store, data_dir, workdir, model, approval="ask")
    session.start()
    question = await wait_for_question(session)
    await asyncio.sleep(0.2)  # the other helper's fetch waits behind this question, not beside it
    assert len(events_of(session, HumanQuestion)) == 1 and _Notes.fetched == []
    await session.answer(question.qid, "always")
    assert await asyncio.wait_for(session.wait(), 5) == "done"

    assert sorted(_Notes.fetched) == ["/one", "/two"]
    assert len(events_of(session, HumanQuestion)) == 1
    assert "/one" in result_of(session, "d1").content and "/two" in result_of(session, "d2").content


async def test_stopping_the_research_withdraws_its_question_and_the_run_goes_on(store, data_dir, workdir, site):
    model, session = ask_run(store, data_dir, workdir, site)
    session.start()
    question = await wait_for_question(session)
    assert session.stop_tool("d1")  # the person stops the delegate call's card
    assert await asyncio.wait_for(session.wait(), 5) == "done"

    answer = next(a for a in events_of(session, HumanAnswer) if a.qid == question.qid)
    assert answer.choice == WITHDRAWN and session.state.open_question is None
    assert _Notes.fetched == []
    told = [r for r in model.requests if helpers_turn(r)][1].messages
    assert any("stopped the research before approving it" in str(m.get("content")) for m in told)
    with pytest.raises(ValueError, match="already answered"):  # a dialog still showing cannot answer it
        await session.answer(question.qid, "approve")
    progress, _ = session.read_file("progress.md")
    assert "↩ Question withdrawn: the research helper that asked was stopped" in progress


async def test_the_runs_stop_withdraws_the_helpers_question(store, data_dir, workdir, site):
    _, session = ask_run(store, data_dir, workdir, site)
    session.start()
    question = await wait_for_question(session)
    session.stop()
    await asyncio.wait_for(session.wait(), 5)

    assert events_of(session, SessionEnded)[-1].status == "aborted"
    assert session.state.answers[question.qid][0].choice == WITHDRAWN
    assert session.state.open_question is None and _Notes.fetched == []


async def test_a_helpers_question_left_by_a_killed_process_is_withdrawn_on_reopening(store, data_dir, workdir, site):
    _, session = ask_run(store, data_dir, workdir, site)
    session.start()
    question = await wait_for_question(session)
    await session.close()  # as a killed process: nothing more is recorded
    assert question.qid not in session.state.answers

    again = ScriptedModel([reply("", call("task_done", summary="done without it"))])
    reopened = Session.open(store, data_dir, session.id, again)
    assert reopened.state.open_question is None  # no dialog for a read that can never run
    assert reopened.state.answers[question.qid][0].choice == WITHDRAWN
    assert await reopened.run() == "done"
    assert "its report was lost" in result_of(reopened, "d1").content
    assert _Notes.fetched == []


async def test_no_question_where_approvals_are_off(store, data_dir, workdir, site):
    model = routed([delegate(question="What do the notes say?"), reply("", call("task_done", summary="ok"))],
                   [fetch_then_report(lambda question: f"{site}/notes")])
    off = make_session(store, data_dir, workdir, model, approval="none")
    assert await off.run() == "done"
    assert not events_of(off, HumanQuestion) and _Notes.fetched == []
    assert "approvals are off" in events_of(off, ResearchStep)[0].consulted[0].error


async def test_the_persons_own_helper_asks_beside_the_runs_question_which_stays_open(store, data_dir, workdir, site):
    model = routed([reply("", call("human_ask", "a1", question="Keep the old notes?")),
                    reply("", call("task_done", summary="ok"))],
                   [fetch_then_report(lambda question: f"{site}/notes")])
    session = make_session(store, data_dir, workdir, model, approval="ask")
    session.start()
    runs = await wait_for_question(session)
    aside = asyncio.ensure_future(session.ask_helper("What do the release notes say?"))
    helpers = await wait_for_question(session, other_than=runs)
    assert helpers.reason == "approval" and helpers.context["aside"] and "answering your question" in helpers.question
    assert session.state.status == "waiting" and session.state.runs_question == runs

    findings_before = session.read_file("findings.md")
    await session.answer(helpers.qid, "approve")
    _, report = await asyncio.wait_for(aside, 5)
    assert "totals are rounded per line" in report.text and _Notes.fetched == ["/notes"]
    assert session.read_file("findings.md") == findings_before  # no "Source fetched" for the agent to read
    assert session.state.open_question == runs and session.state.status == "waiting"  # the run still waits
    await session.answer(runs.qid, "yes")
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    agent_requests = [r for r in model.requests if not helpers_turn(r)]
    assert not any("Release notes at" in str(m.get("content")) for r in agent_requests for m in r.messages)


async def test_the_persons_own_helper_asks_while_the_agents_helper_waits_for_an_answer(
        store, data_dir, workdir, site):
    """The person's helper does not wait, unseen, behind the agent's helper's question: each is
    asked at once, and either may be answered first."""
    model, session = ask_run(store, data_dir, workdir, site)
    session.start()
    agents = await wait_for_question(session)
    aside = asyncio.ensure_future(session.ask_helper("What do the release notes say?"))
    persons = await wait_for_question(session, other_than=agents)
    assert persons.context["aside"] and set(session.state.open_questions) == {agents.qid, persons.qid}

    await session.answer(persons.qid, "approve")
    _, report = await asyncio.wait_for(aside, 5)
    assert "totals are rounded per line" in report.text and _Notes.fetched == ["/notes"]
    assert session.state.open_question == agents  # the agent's helper still waits for its answer
    await session.answer(agents.qid, "approve")
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    assert _Notes.fetched == ["/notes", "/notes"]


async def test_the_runs_stop_leaves_the_persons_helper_asking(store, data_dir, workdir, site):
    model = routed([reply("", call("human_ask", "a1", question="Keep the old notes?"))],
                   [fetch_then_report(lambda question: f"{site}/notes")])
    session = make_session(store, data_dir, workdir, model, approval="ask")
    session.start()
    await wait_for_question(session)
    aside = asyncio.ensure_future(session.ask_helper("What do the release notes say?"))
    while not session.state.open_question.context.get("aside"):
        await asyncio.sleep(0.01)
    helpers = session.state.open_question
    session.stop()
    await asyncio.wait_for(session.wait(), 5)
    assert session.state.ended and session.state.open_question == helpers  # theirs, not the run's
    await session.answer(helpers.qid, "deny", "not now")
    _, report = await asyncio.wait_for(aside, 5)
    assert "The person denied this web_fetch call" in report.text and _Notes.fetched == []
    assert session.state.open_question is None and session.state.status == "ended:aborted"


async def test_the_persons_helpers_question_left_by_a_killed_process_is_withdrawn_on_reopening(store, data_dir, workdir, site):
    """The person's own helper asking on a killed process: withdrawn on reopening, as the agent's helper's."""
    model = routed([reply("", call("task_done", summary="ok"))], [fetch_then_report(lambda question: f"{site}/notes")])
    session = make_session(store, data_dir, workdir, model, approval="ask")
    assert await session.run() == "done"
    aside = asyncio.ensure_future(session.ask_helper("What do the release notes say?"))
    while session.state.open_question is None:
        await asyncio.sleep(0.01)
    question = session.state.open_question
    aside.cancel()  # as the process ending: nothing more is recorded
    with pytest.raises(asyncio.CancelledError):
        await aside
    assert question.qid not in session.state.answers

    reopened = Session.open(store, data_dir, session.id, ScriptedModel([]))
    assert reopened.state.open_question is None and reopened.state.answers[question.qid][0].choice == WITHDRAWN
    assert reopened.state.status == "ended:done"


def test_the_run_waits_for_its_latest_question_and_the_persons_helper_asks_beside_it():
    from core.agent.state import SessionState
    from core.events import Record

    state = SessionState("s1")
    for seq, event in enumerate([
            HumanQuestion("q1", "approval", "Allow shell_run?", ("approve", "deny"), {"call_id": "c1"}),
            HumanQuestion("q2", "approval", "Allow web_fetch?", ("approve", "deny"), {"call_id": "h1", "aside": True,
                                                                                      "helper": "Which version?"}),
            HumanQuestion("q3", "danger_turn", "Continue?", ("continue", "stop"), {})], 1):
        state.apply(Record("s1", seq, "2026-11-26T10:00:00+00:00", event))
    # q1 was left by the run, which asks one question at a time: q3 is the one it waits for now.
    assert list(state.open_questions) == ["q2", "q3"] and state.runs_question.qid == "q3"
    state.apply(Record("s1", 4, "2026-11-26T10:00:01+00:00", HumanAnswer("q3", "continue")))
    assert state.open_question.qid == "q2" and state.runs_question is None and state.status == "running"
