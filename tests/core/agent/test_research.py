"""delegate_research: a helper with its own short context reads; only its report reaches the agent.

The model is scripted at the core/llm.py boundary; the files, the store and the loop are real. A
request with the five reading tools is the helper's; one with every tool is the agent's.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from core.agent.research import MAX_STEPS, READING_TOOLS
from core.events import (
    ErrorRecorded,
    HumanQuestion,
    ResearchStep,
    SessionEnded,
    ToolResult,
)
from core.journal import ToolOutput
from core.llm import ModelError, ModelRequest
from core.render import render
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from tests.core.helpers import events_of, make_session, wait_for_question
from tests.support.local_site import LongPage, serving

BILLING = "def price_total(lines):\n    return sum(round(x, 2) for x in lines)  # drift-7731\n"


def helpers_turn(request: ModelRequest) -> bool:
    return len(request.tools) == len(READING_TOOLS)


def routed(agent_steps: list, helper_steps: list):
    """A model that answers the agent's requests and the helper's each from their own script."""
    agent, helper = list(agent_steps), list(helper_steps)

    def step(request: ModelRequest):
        queue = helper if helpers_turn(request) else agent
        item = queue.pop(0) if len(queue) > 1 else queue[0]  # the last one repeats
        return item(request) if callable(item) else item
    return ScriptedModel([step] * 200)


def delegate(question="Where are totals rounded?", call_id="d1", **more):
    return reply("Asking a helper.", call("delegate_research", call_id=call_id, question=question, **more))


def result_of(session: Session, call_id: str) -> ToolResult:
    return next(r for r in events_of(session, ToolResult) if r.call_id == call_id)


async def test_the_agent_gets_the_helpers_report_and_never_what_the_helper_read(store, data_dir, workdir):
    (workdir / "billing.py").write_text(BILLING, encoding="utf-8")
    model = routed(
        [delegate(bring_back="the file and line"), reply("", call("task_done", summary="found it"))],
        [reply("", call("file_search", call_id="h1", query="price_total"), prompt_tokens=900),
         reply("", call("file_read", call_id="h2", path="billing.py"), prompt_tokens=1000),
         reply("Totals are rounded per line in billing.py:2, before summing.", prompt_tokens=1100)])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    result = result_of(session, "d1")
    assert result.ok and "Totals are rounded per line in billing.py:2" in result.content
    assert "file_search query=price_total" in result.content and "file_read path=billing.py" in result.content
    agent_requests = [r for r in model.requests if not helpers_turn(r)]
    helper_requests = [r for r in model.requests if helpers_turn(r)]
    assert len(helper_requests) == 3 and len(agent_requests) == 2
    # The helper read the file; the agent's requests never held a byte of it.
    assert any("drift-7731" in str(m.get("content")) for m in helper_requests[-1].messages)
    assert not any("drift-7731" in str(m.get("content")) for r in agent_requests for m in r.messages)
    # The helper starts from its own prompt and the question alone, with only reading tools.
    first = helper_requests[0].messages
    assert [m["role"] for m in first] == ["system", "user"] and "research helper" in first[0]["content"]
    assert "Where are totals rounded?" in first[1]["content"] and "the file and line" in first[1]["content"]
    assert sorted(t["function"]["name"] for t in helper_requests[0].tools) == sorted(READING_TOOLS)
    # Its steps are in the log, and its tokens count in the session's spending.
    steps = events_of(session, ResearchStep)
    assert [(s.step, s.final, len(s.consulted)) for s in steps] == [(1, False, 1), (2, False, 1), (3, True, 0)]
    assert all(s.call_id == "d1" and s.consulted[0].ok for s in steps[:2])
    assert session.state.usage.prompt_tokens >= 3000
    assert session.state.actions_since_finding == 1  # a report is read like a file (2-Action Rule)


async def test_the_helper_cannot_change_anything_and_its_mistakes_are_not_the_agents_strikes(store, data_dir, workdir):
    model = routed(
        [delegate(), reply("", call("task_done", summary="ok"))],
        [reply("", call("file_write", call_id="w", path="notes.txt", content="x"),
               call("shell_run", call_id="s", command="touch made.txt"),
               call("file_read", call_id="m", raw=1)),
         reply("I could not find where totals are rounded.")])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"

    assert not (workdir / "notes.txt").exists() and not (workdir / "made.txt").exists()
    step = events_of(session, ResearchStep)[0]
    assert [c.ok for c in step.consulted] == [False, False, False]
    assert "not available to you" in step.consulted[0].error and "unknown argument" in step.consulted[2].error
    told = [m["content"] for m in model.requests[2].messages if m["role"] == "tool"]
    assert all(text.startswith("ERROR: ") for text in told)
    assert not events_of(session, ErrorRecorded)  # the agent did nothing wrong
    assert "file_write content=x path=notes.txt (failed)" in result_of(session, "d1").content


async def test_a_helper_that_keeps_reading_reports_at_its_last_step(store, data_dir, workdir):
    model = routed([delegate(), reply("", call("task_done", summary="ok"))],
                   [reply("", call("file_list"))])
    model.side_replies.append(reply("Nothing conclusive after a long look."))
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    helper_requests = [r for r in model.requests if helpers_turn(r)]
    assert len(helper_requests) == MAX_STEPS
    last = helper_requests[-1]
    assert last.tool_choice == "none" and "This is your last step" in last.messages[-1]["content"]
    content = result_of(session, "d1").content
    assert f"({MAX_STEPS} steps; reported early: this is your last step)" in content
    assert "Nothing conclusive after a long look." in content


async def test_a_helper_whose_context_fills_up_reports_before_the_window_is_reached(store, data_dir, workdir):
    for index in range(6):
        (workdir / f"log{index}.txt").write_text(f"line {index} of many words here\n" * 400, encoding="utf-8")
    reads = [reply("", call("file_read", call_id=f"r{i}", path=f"log{i}.txt")) for i in range(6)]
    model = routed([delegate(), reply("", call("task_done", summary="ok"))], reads)
    model.side_replies.append(reply("The logs repeat one line."))
    session = make_session(store, data_dir, workdir, model, context_window=8192)
    assert await session.run() == "done"

    helper_requests = [r for r in model.requests if helpers_turn(r)]
    assert 2 < len(helper_requests) < MAX_STEPS
    assert "Your context is full" in helper_requests[-1].messages[-1]["content"]
    assert "reported early: your context is full" in result_of(session, "d1").content


async def test_stopping_the_delegate_call_alone_makes_the_helper_report_what_it_has(store, data_dir, workdir):
    box: list[Session] = []

    def read_and_get_stopped(request):
        box[0].stop_tool("d1")  # the person presses Stop on the research while it reads
        return reply("", call("file_list"))

    model = routed([delegate(), reply("", call("task_done", summary="ok"))], [read_and_get_stopped])
    model.side_replies.append(reply("Only the file list so far."))
    session = make_session(store, data_dir, workdir, model)
    box.append(session)
    assert await session.run() == "done"  # the run went on

    content = result_of(session, "d1").content
    assert "reported early: the person asked you to stop researching" in content
    assert "Only the file list so far." in content
    assert len(events_of(session, ResearchStep)) == 2


async def test_stopping_the_run_during_research_aborts_it_and_closes_the_call(store, data_dir, workdir):
    started = asyncio.Event()

    async def never(request):
        started.set()
        await asyncio.sleep(60)

    class Waiting(ScriptedModel):
        async def complete(self, request, *args, **kwargs):
            if helpers_turn(request):
                await never(request)
            return await super().complete(request, *args, **kwargs)

    session = make_session(store, data_dir, workdir, Waiting([delegate()]))
    session.start()
    await asyncio.wait_for(started.wait(), 5)
    session.stop()
    assert await asyncio.wait_for(session.wait(), 5) == "aborted"
    assert not result_of(session, "d1").ok and not session.state.pending_calls


async def test_stopping_the_run_during_a_deep_researchs_parts_stops_every_part(store, data_dir, workdir):
    waiting: list[asyncio.Task] = []

    class Waiting(ScriptedModel):
        async def complete(self, request, *args, **kwargs):
            if helpers_turn(request):
                waiting.append(asyncio.current_task())
                await asyncio.sleep(60)
            return await super().complete(request, *args, **kwargs)

    model = Waiting([delegate(kind="deep")], side_replies=[reply("parts: [one?, two?, three?]")])
    session = make_session(store, data_dir, workdir, model)
    session.start()
    while len(waiting) < 3:  # the three parts ask at once
        await asyncio.sleep(0.01)
    session.stop()
    assert await asyncio.wait_for(session.wait(), 5) == "aborted"
    assert not result_of(session, "d1").ok and not session.state.pending_calls
    assert all(task.done() for task in waiting)  # no part left running after the run


async def test_a_failed_helper_model_call_is_an_error_result_and_the_run_goes_on(store, data_dir, workdir):
    model = routed([delegate(), reply("", call("task_done", summary="read it myself"))],
                   [ModelError("rate_limit", "Too many requests")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    result = result_of(session, "d1")
    assert not result.ok and "The research helper's model call failed" in result.content
    assert "Too many requests" in result.content
    assert events_of(session, ErrorRecorded)[0].tool == "delegate_research"


async def test_a_run_killed_during_research_tells_the_agent_the_report_was_lost(store, data_dir, workdir):
    reading = asyncio.Event()

    class Killed(ScriptedModel):
        async def complete(self, request, *args, **kwargs):
            if helpers_turn(request) and len([r for r in self.requests if helpers_turn(r)]) == 1:
                reading.set()
                await asyncio.sleep(60)
            return await super().complete(request, *args, **kwargs)

    model = Killed([delegate()])
    session = make_session(store, data_dir, workdir, model)
    session.start()
    await asyncio.wait_for(reading.wait(), 5)
    await session.close()  # as a killed process: nothing more is recorded
    assert "d1" in session.state.pending_calls

    again = ScriptedModel([reply("", call("task_done", summary="done without it"))])
    reopened = Session.open(store, data_dir, session.id, again)
    assert await reopened.run() == "done"
    result = result_of(reopened, "d1")
    assert not result.ok and "its report was lost" in result.content
    assert not any(helpers_turn(r) for r in again.requests)  # not started again unasked
    assert not events_of(reopened, ErrorRecorded)


async def test_research_that_spends_the_budget_reports_and_the_person_is_asked(store, data_dir, workdir):
    model = routed([delegate(), reply("", call("task_done", summary="ok"))],
                   [reply("", call("file_list"), prompt_tokens=5000)])
    model.side_replies.append(reply("Stopped early for the budget."))
    session = make_session(store, data_dir, workdir, model, budget_tokens=4000)
    session.start()
    question = await wait_for_question(session)
    assert question.reason == "budget"
    assert "reported early: the session's budget is spent" in result_of(session, "d1").content
    assert len([r for r in model.requests if helpers_turn(r)]) == 2
    await session.answer(question.qid, "stop")
    await session.wait()
    assert events_of(session, SessionEnded)[-1].status == "aborted"
    assert len(events_of(session, HumanQuestion)) == 1


async def test_a_question_left_empty_is_refused_without_asking_a_helper(store, data_dir, workdir):
    model = routed([delegate(question="  "), reply("", call("task_done", summary="ok"))], [reply("never")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    assert "needs a question" in result_of(session, "d1").content
    assert not any(helpers_turn(r) for r in model.requests)


def test_a_long_list_of_calls_is_cut_so_the_report_is_not_pushed_out_of_view():
    from core.agent.research import CALLS_LISTED, Report

    consulted = tuple(f"file_read path=src/module_{i:03d}.py offset=1 limit=60" for i in range(CALLS_LISTED + 3))
    text = Report("Found it.", 5, consulted).for_the_agent()
    assert text.startswith("Research report (5 steps):\n\nFound it.\n\nThe helper's calls:\n")
    assert f"module_{CALLS_LISTED - 1:03d}" in text and f"module_{CALLS_LISTED:03d}" not in text
    assert text.endswith("\n- … and 3 more")


@pytest.fixture
def site():
    with serving(LongPage) as address:
        yield f"{address}/notes"


async def test_a_long_page_the_helper_fetches_is_kept_whole_and_it_can_read_on(store, data_dir, workdir, site):
    model = routed([delegate(question="What do the release notes say?"), reply("", call("task_done", summary="ok"))],
                   [reply("", call("web_fetch", call_id="w1", url=site)), reply("Nine hundred paragraphs.")])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"

    helper_requests = [r for r in model.requests if helpers_turn(r)]
    seen = helper_requests[1].messages[-1]["content"]
    assert "Paragraph 1:" in seen and "Paragraph 899:" not in seen
    saved = re.search(r"file_read path=(offload:research-d1-w1\.txt)", seen)
    assert saved is not None
    whole = (session.dir / "offload" / "research-d1-w1.txt").read_text(encoding="utf-8")
    assert "Paragraph 899: the release notes say more." in whole and len(whole) > len(seen)
    findings, _ = session.read_file("findings.md")
    assert f"Source fetched: {site}" in findings  # where the helper read, for the person and the agent


async def test_pause_holds_the_helper_between_its_steps(store, data_dir, workdir):
    box: list[Session] = []

    def read_then_pause(request):
        box[0].pause()  # the person presses Pause while the helper reads
        return reply("", call("file_list"))

    model = routed([delegate(), reply("", call("task_done", summary="ok"))],
                   [read_then_pause, reply("Nothing much.")])
    session = make_session(store, data_dir, workdir, model)
    box.append(session)
    session.start()
    while session.state.status != "paused":
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    assert len([r for r in model.requests if helpers_turn(r)]) == 1  # held before its next request
    session.resume()
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    assert result_of(session, "d1").ok and len(events_of(session, ResearchStep)) == 2


async def test_the_person_asks_a_helper_aside_and_the_agent_never_sees_it(store, data_dir, workdir):
    (workdir / "billing.py").write_text(BILLING, encoding="utf-8")
    model = routed([reply("", call("human_ask", "ask", question="Go on?")),
                    reply("", call("task_done", summary="ok"))],
                   [reply("", call("file_read", call_id="h1", path="billing.py"), prompt_tokens=700),
                    reply("It rounds each line (billing.py:2, marked drift-7731).", prompt_tokens=800)])
    session = make_session(store, data_dir, workdir, model)
    session.start()
    question = await wait_for_question(session)  # the run waits for the person: it is still running
    reads: list[str] = []
    asked, report = await session.ask_helper("Where do totals get rounded?", on_read=reads.append)

    assert asked.startswith("asked") and "billing.py:2" in report.text and report.steps == 2
    assert reads == ["file_read path=billing.py\n"]
    first, last = events_of(session, ResearchStep)
    assert first.for_person and first.question == "Where do totals get rounded?" and last.final and not last.question
    assert session.state.usage.prompt_tokens >= 1500  # its cost is the session's
    await session.answer(question.qid, "yes")
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    agent_requests = [r for r in model.requests if not helpers_turn(r)]
    for text in ("Where do totals get rounded?", "drift-7731"):
        assert not any(text in str(m.get("content")) for r in agent_requests for m in r.messages)


async def test_the_runs_stop_still_stops_the_run_while_the_person_asks_aside(store, data_dir, workdir):
    agent_waits, helper_waits = asyncio.Event(), asyncio.Event()

    class Slow(ScriptedModel):
        async def complete(self, request, *args, **kwargs):
            (helper_waits if helpers_turn(request) else agent_waits).set()
            await asyncio.sleep(60)

    session = make_session(store, data_dir, workdir, Slow([]))
    session.start()
    await asyncio.wait_for(agent_waits.wait(), 5)
    aside = asyncio.ensure_future(session.ask_helper("What is in the folder?"))
    await asyncio.wait_for(helper_waits.wait(), 5)
    session.stop()  # the agent's model call is what Stop cuts, not the person's question
    assert await asyncio.wait_for(session.wait(), 5) == "aborted"
    assert not aside.done()
    aside.cancel()
    with pytest.raises(asyncio.CancelledError):
        await aside


async def test_an_empty_question_to_a_helper_is_refused(store, data_dir, workdir):
    session = make_session(store, data_dir, workdir, ScriptedModel([]))
    with pytest.raises(ValueError, match="empty"):
        await session.ask_helper("   ")


def test_tripane_ask_answers_the_person_about_the_newest_session(tmp_path, monkeypatch, capsys):
    from core import cli
    from tests.support.openai_server import ScriptedServer, Turn, tool

    monkeypatch.setenv("TRIPANE_CONFIG_DIR", str(tmp_path / "config"))
    work = tmp_path / "work"
    work.mkdir()
    (work / "billing.py").write_text(BILLING, encoding="utf-8")

    def script(request):
        if len(request.get("tools") or ()) != len(READING_TOOLS):
            return Turn(tool_calls=(tool("task_done", summary="done"),))
        if not any(m["role"] == "tool" for m in request["messages"]):
            return Turn(tool_calls=(tool("file_read", path="billing.py"),))
        return Turn(text="Totals are rounded in billing.py:2.")

    with ScriptedServer(script) as server:
        base = ["--data-dir", str(tmp_path)]
        assert cli.main([*base, "run", "Check billing", "--model", "openai/scripted", "--api-base", server.url,
                         "--workdir", str(work), "--no-memory"]) == cli.EXIT_DONE
        capsys.readouterr()
        assert cli.main([*base, "ask", "Where are totals rounded?", "--no-memory"]) == cli.EXIT_DONE
    printed = capsys.readouterr()
    assert printed.out == "Totals are rounded in billing.py:2.\n"
    assert "⌕ file_read path=billing.py" in printed.err
    assert "You asked a helper “Where are totals rounded?”: it answered after 2 steps" in printed.err


async def test_the_summary_tells_the_agents_research_from_the_persons_questions(store, data_dir, workdir):
    from core.summary import summarize, summary_rows

    model = routed([delegate(), reply("", call("task_done", summary="ok"))],
                   [reply("", call("file_list")), reply("Found it.")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    await session.ask_helper("What is in the folder?")
    rows = dict(summary_rows(summarize(session.records)))
    assert rows["Research helpers"] == "1 question from the agent, 1 question from you; 3 requests"


async def test_a_helper_whose_server_repeats_call_ids_still_answers_each_call_once(store, data_dir, workdir):
    (workdir / "a.txt").write_text("alpha\n", encoding="utf-8")
    same_id = [reply("", call("file_read", call_id="0", path="a.txt")),
               reply("", call("file_list", call_id="0")), reply("Read and listed.")]
    model = routed([delegate(), reply("", call("task_done", summary="ok"))], same_id)
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    last = [r for r in model.requests if helpers_turn(r)][-1]
    ids = [c["id"] for m in last.messages if m["role"] == "assistant" for c in m.get("tool_calls", ())]
    answered = [m["tool_call_id"] for m in last.messages if m["role"] == "tool"]
    assert len(set(ids)) == 2 and answered == ids  # each call its own id, each answered once


async def test_a_helper_the_person_asked_keeps_the_session_theirs_after_the_run_ends(store, data_dir, workdir):
    from core.run_lock import lock_taken, run_lock

    gate, helping = asyncio.Event(), asyncio.Event()

    class Held(ScriptedModel):
        async def complete(self, request, *args, **kwargs):
            if helpers_turn(request):
                helping.set()
                await gate.wait()
                return reply("Nothing there.")
            await helping.wait()  # the agent ends its run while the helper works
            return reply("", call("task_done", summary="ok"))

    session = make_session(store, data_dir, workdir, Held([]))
    session.start()
    aside = asyncio.ensure_future(session.ask_helper("Anything in the folder?"))
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    other = run_lock(data_dir, session.id)  # another process's view of the session
    assert lock_taken(other)  # the helper still writes its steps
    gate.set()
    await asyncio.wait_for(aside, 5)
    assert not lock_taken(other)


async def test_the_persons_question_and_its_answer_are_in_the_sessions_markdown(store, data_dir, workdir):
    from core.transcript import transcript

    model = routed([reply("", call("task_done", summary="ok"))], [reply("The folder is empty.\nNothing to read.")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    await session.ask_helper("What is in the folder?")
    text = transcript(session.records, "t")
    assert ("> ⌕ The research helper you asked, step 1 (you asked: What is in the folder?): wrote its report "
            "(the research took 9 tokens)\n>\n> The folder is empty.\n> Nothing to read.") in text


@pytest.mark.parametrize("helper_works", [True, False])
async def test_the_helpers_model_the_person_chose_reads_and_the_sessions_own_takes_over_when_it_fails(
        store, data_dir, workdir, monkeypatch, helper_works):
    from core.render import research_note

    windows = {"openai/main-model": 128_000, "anthropic/claude-haiku-4-5": 200_000}
    monkeypatch.setattr("core.agent.loop.model_window", lambda model, base: windows[model])
    monkeypatch.setattr("core.agent.delegation.model_window", lambda model, base: windows[model])
    (workdir / "billing.py").write_text(BILLING, encoding="utf-8")

    def helper(request: ModelRequest):
        if request.model == "anthropic/claude-haiku-4-5" and not helper_works:
            return ModelError("no_key", "No API key for anthropic")
        return reply("Totals are rounded per line in billing.py:2.")
    model = routed([delegate(), reply("", call("task_done", summary="found it"))], [helper])
    session = make_session(store, data_dir, workdir, model, model="openai/main-model", reasoning_effort="high",
                           api_base="http://127.0.0.1:8080/v1", helper_model="anthropic/claude-haiku-4-5")
    assert await session.run() == "done"

    assert result_of(session, "d1").ok and "billing.py:2" in result_of(session, "d1").content
    helper_requests = [(r.model, r.api_base, r.reasoning_effort) for r in model.requests if helpers_turn(r)]
    agent_requests = {(r.model, r.api_base) for r in model.requests if not helpers_turn(r)}
    assert agent_requests == {("openai/main-model", "http://127.0.0.1:8080/v1")}
    step, = events_of(session, ResearchStep)
    if helper_works:  # its own provider's address, and none of the session model's effort
        assert helper_requests == [("anthropic/claude-haiku-4-5", None, "")]
        assert step.model == "anthropic/claude-haiku-4-5" and step.fell_back == ""
    else:
        assert helper_requests == [("anthropic/claude-haiku-4-5", None, ""),
                                   ("openai/main-model", "http://127.0.0.1:8080/v1", "high")]
        assert step.model == "openai/main-model"
        assert step.fell_back == "anthropic/claude-haiku-4-5: No API key for anthropic"
        assert ("[the helpers' model failed — anthropic/claude-haiku-4-5: No API key for anthropic; the session's "
                "model reads instead]: wrote its report") in research_note(step)


async def test_a_fact_check_is_told_its_way_and_gets_five_reads(store, data_dir, workdir):
    for name in "abcdef":
        (workdir / f"{name}.md").write_text(f"note {name}\n", encoding="utf-8")
    reads = [call("file_read", call_id=f"h{name}", path=f"{name}.md") for name in "abcdef"]
    model = routed([delegate(question="Is the retry limit 5?", kind="fact"), reply("", call("task_done", summary="ok"))],
                   [reply("", *reads[:3]), reply("", *reads[3:])])
    model.side_replies.append(reply("Confirmed: the retry limit is 5 (a.md, b.md)."))
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    helper_requests = [r for r in model.requests if helpers_turn(r)]
    asked = helper_requests[0].messages[1]["content"]
    assert "# How\nA fact check: verify one claim. Search long-term memory first" in asked
    assert asked.endswith("You have at most 5 reads.")
    second_replies = [m for m in helper_requests[2].messages if m["role"] == "tool"][3:]
    assert [m["content"].startswith("ERROR: Not read: this research gets at most 5 reads") for m in second_replies] \
        == [False, False, True]
    last = helper_requests[-1]
    assert len(helper_requests) == 3 and last.tool_choice == "none"
    assert "You have made all the reads this research gets" in last.messages[-1]["content"]
    content = result_of(session, "d1").content
    assert "(3 steps; reported early: you have made all the reads this research gets)" in content
    assert "- file_read path=f.md (not read)" in content and "Confirmed: the retry limit is 5" in content


async def test_a_delegate_call_with_an_unknown_kind_is_refused_as_any_invalid_call(store, data_dir, workdir):
    model = routed([delegate(kind="deeper"), reply("", call("task_done", summary="ok"))], [reply("unused")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    result = result_of(session, "d1")
    assert not result.ok and "argument 'kind' must be one of ['general', 'fact', 'repository', 'topic', 'deep']" in result.content
    assert not any(helpers_turn(r) for r in model.requests)


class PartsTogether(ScriptedModel):
    """Answers each part's helper from its own script, and holds each part's first request until
    every part has asked: parts run one after another never get past it."""

    def __init__(self, agent_steps, by_part: dict[str, list], side):
        super().__init__([], side_replies=side)
        self.agent, self.by_part = list(agent_steps), {k: list(v) for k, v in by_part.items()}
        self.first_asked: set[str] = set()
        self.all_asked = asyncio.Event()

    async def complete(self, request, *args, **kwargs):
        if request.tools and helpers_turn(request):
            self.requests.append(request)
            part = next(key for key in self.by_part if key in request.messages[1]["content"])
            if len(request.messages) == 2:
                self.first_asked.add(part)
                if self.first_asked == set(self.by_part):
                    self.all_asked.set()
                await asyncio.wait_for(self.all_asked.wait(), 5)
            answer = self.by_part[part].pop(0)
            if isinstance(answer, ModelError):
                raise answer
            return answer
        if request.tools:
            self.requests.append(request)
            return self.agent.pop(0) if self.agent else reply("", call("task_done", summary="ok"))
        return await super().complete(request, *args, **kwargs)


async def test_a_deep_research_splits_the_question_researches_the_parts_at_once_each_apart_and_combines_them(
        store, data_dir, workdir):
    (workdir / "billing.py").write_text(BILLING, encoding="utf-8")
    (workdir / "tax.py").write_text("RATE = 0.2  # tax-5521\n", encoding="utf-8")
    totals, tax = "How are invoice totals computed in billing.py?", "How is tax applied in tax.py?"
    model = PartsTogether(
        [delegate(question="How are invoices totalled and taxed?", kind="deep"), reply("", call("task_done", summary="ok"))],
        {totals: [reply("", call("file_read", call_id="r1", path="billing.py")), reply("Totals: billing.py:2 rounds each line.")],
         tax: [reply("", call("file_read", call_id="r1", path="tax.py")), reply("Tax: tax.py:1 applies 20%.")]},
        [reply(f'```yaml\nparts:\n  - "{totals}"\n  - "{tax}"\n```'),
         reply("Each line is rounded, then summed (billing.py:2), then taxed at 20% (tax.py:1). The reports agree.")])
    outputs: list[str] = []
    session = make_session(store, data_dir, workdir, model)
    session.subscribe(lambda notice: outputs.append(notice.text) if isinstance(notice, ToolOutput) else None)
    assert await session.run() == "done"

    plan, combine = (r for r in model.requests if not r.tools)
    assert "Split the question into two to four parts" in plan.messages[0]["content"]
    assert "How are invoices totalled and taxed?" in plan.messages[1]["content"]
    helper_requests = [r for r in model.requests if r.tools and helpers_turn(r)]
    first_of = {part: next(r for r in helper_requests if part in r.messages[1]["content"]) for part in (totals, tax)}
    for part, request in first_of.items():
        assert request.messages[1]["content"].startswith(f"# Question\n{part}")
        assert "one part of a larger question: How are invoices totalled and taxed?" in request.messages[1]["content"]
        assert request.messages[1]["content"].endswith("You have at most 25 reads.")  # an equal share of 50
    # Both parts asked before either read: they ran at the same time.
    assert model.requests.index(first_of[totals]) < 3 and model.requests.index(first_of[tax]) < 4
    # Each part reads in a context of its own: one never holds what the other read.
    tax_requests = [r for r in helper_requests if tax in r.messages[1]["content"]]
    totals_requests = [r for r in helper_requests if totals in r.messages[1]["content"]]
    assert any("drift-7731" in str(m.get("content")) for m in totals_requests[1].messages)
    assert not any("drift-7731" in str(m.get("content")) for r in tax_requests for m in r.messages)
    assert any("tax-5521" in str(m.get("content")) for m in tax_requests[1].messages)
    asked = combine.messages[1]["content"]
    assert "Check them against each other" in combine.messages[0]["content"] and not combine.tools
    assert f"## Part 1: {totals}\n\nTotals: billing.py:2 rounds each line." in asked
    assert f"## Part 2: {tax}\n\nTax: tax.py:1 applies 20%." in asked

    steps = events_of(session, ResearchStep)
    assert [s.step for s in steps] == [1, 2, 3, 4, 5, 6] and [s.final for s in steps] == [False] * 5 + [True]
    assert sorted(s.part for s in steps) == [0, 0, 1, 1, 2, 2]  # the plan and the combining step are no part's
    assert steps[-1].spent.prompt_tokens == sum(s.usage.prompt_tokens for s in steps)
    assert {"part 1: file_read path=billing.py\n", "part 2: file_read path=tax.py\n"} <= set(outputs)
    assert any(", part 2, step " in render(r) for r in session.records if isinstance(r.event, ResearchStep))
    content = result_of(session, "d1").content
    assert content.startswith("Research report (6 steps):\n\nEach line is rounded, then summed")
    assert "- file_read path=billing.py\n- file_read path=tax.py" in content
    agent_requests = [r for r in model.requests if r.tools and not helpers_turn(r)]
    assert not any("drift-7731" in str(m.get("content")) for r in agent_requests for m in r.messages)


async def test_questions_delegated_one_after_another_in_a_reply_are_researched_at_once(store, data_dir, workdir):
    (workdir / "billing.py").write_text(BILLING, encoding="utf-8")
    both = reply("Two questions at once.", call("delegate_research", call_id="d1", question="Where are totals rounded?"),
                 call("delegate_research", call_id="d2", question="Where is tax applied?"))
    model = PartsTogether([both, reply("", call("task_done", summary="ok"))],
                          {"totals rounded": [reply("billing.py:2 rounds each line.")],
                           "tax applied": [reply("Nowhere yet.")]}, [])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"  # each helper's first request waited until both had asked

    assert result_of(session, "d1").content.startswith("Research report (1 step):\n\nbilling.py:2 rounds each line.")
    assert result_of(session, "d2").content.startswith("Research report (1 step):\n\nNowhere yet.")
    last = [r for r in model.requests if r.tools and not helpers_turn(r)][-1].messages
    assert sorted(m.get("tool_call_id") for m in last if m["role"] == "tool") == ["d1", "d2"]
    # Shown together (on the terminal), each helper's steps say which it is.
    steps = {s.call_id: s for s in events_of(session, ResearchStep)}
    assert (steps["d1"].helper, steps["d2"].helper) == (1, 2)
    assert render(next(r for r in session.records if isinstance(r.event, ResearchStep)
                       and r.event.call_id == "d2")).startswith("    ⌕ research helper 2, step 1: wrote its report")


async def test_a_pause_holds_helpers_at_work_together_and_is_one_pause_in_the_log(store, data_dir, workdir):
    from core.events import SessionPaused, SessionResumed

    (workdir / "billing.py").write_text(BILLING, encoding="utf-8")
    release = asyncio.Event()
    asked: list[str] = []

    class Held(ScriptedModel):
        async def complete(self, request, *args, **kwargs):
            if helpers_turn(request):
                self.requests.append(request)
                asked.append(request.messages[1]["content"])
                if len(request.messages) == 2:  # the first step of each: a read, once released
                    await release.wait()
                    return reply("", call("file_read", call_id="r", path="billing.py"))
                return reply("Found it.")
            return await super().complete(request, *args, **kwargs)

    both = reply("", call("delegate_research", call_id="d1", question="one?"),
                 call("delegate_research", call_id="d2", question="two?"))
    session = make_session(store, data_dir, workdir, Held([both, reply("", call("task_done", summary="ok"))]))
    session.start()
    while len(asked) < 2:
        await asyncio.sleep(0.01)
    session.pause()
    release.set()
    while session.state.status != "paused":
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    assert len(asked) == 2  # neither helper went on to its next step
    session.resume()
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    assert len(events_of(session, SessionPaused)) == 1 and len(events_of(session, SessionResumed)) == 1


async def test_a_call_between_two_delegations_keeps_them_in_turn(store, data_dir, workdir):
    order: list[str] = []

    class Noting(ScriptedModel):
        async def complete(self, request, *args, **kwargs):
            if helpers_turn(request):
                order.append(request.messages[1]["content"].split("\n")[1])
                await asyncio.sleep(0.05)
            return await super().complete(request, *args, **kwargs)

    calls = reply("", call("delegate_research", call_id="d1", question="first?"),
                  call("file_write", call_id="w", path="notes.md", content="x\n"),
                  call("delegate_research", call_id="d2", question="second, reading notes.md?"))
    model = Noting([calls, reply("First found."), reply("Second found."), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    assert order == ["first?", "second, reading notes.md?"]
    results = [r.call_id for r in events_of(session, ToolResult)]
    assert results.index("d1") < results.index("w") < results.index("d2")


async def test_a_deep_research_part_whose_model_fails_is_said_to_have_failed_and_the_others_still_count(
        store, data_dir, workdir):
    (workdir / "billing.py").write_text(BILLING, encoding="utf-8")
    totals, tax = "How are invoice totals computed?", "How is tax applied?"
    model = PartsTogether(
        [delegate(question="How are invoices totalled and taxed?", kind="deep"), reply("", call("task_done", summary="ok"))],
        {totals: [reply("Totals: billing.py:2 rounds each line.")],
         tax: [ModelError("rate_limit", "RateLimitError: too many requests at once")]},
        [reply(f"parts: ['{totals}', '{tax}']"), reply("Totals are rounded per line; how tax applies is not known.")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    combine = [r for r in model.requests if not r.tools][-1].messages[1]["content"]
    assert f"## Part 1: {totals}\n\nTotals: billing.py:2 rounds each line." in combine
    assert f"## Part 2: {tax}\n\n(this part failed: its model call did — RateLimitError: too many requests" in combine
    assert result_of(session, "d1").ok


async def test_a_deep_research_parts_long_report_is_cut_for_the_combining_request_in_chinese_too(
        store, data_dir, workdir):
    from core.agent.deep_research import PART_WORDS

    long_report = "合计按行四舍五入。" * 400  # 3,600 characters, no space: "one word" it was kept whole
    model = PartsTogether(
        [delegate(question="发票怎么算？", kind="deep"), reply("", call("task_done", summary="ok"))],
        {"合计？": [reply(long_report)], "税？": [reply("税率为百分之二十。")]},
        [reply("parts: ['合计？', '税？']"), reply("合计按行，税率百分之二十。")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    combine = [r for r in model.requests if not r.tools][-1].messages[1]["content"]
    part = combine.split("## Part 1: 合计？\n\n")[1].split("\n\n## Part 2")[0]
    assert part.endswith(" … (cut here)") and len(part) < PART_WORDS + 20
    assert "## Part 2: 税？\n\n税率为百分之二十。" in combine


async def test_a_deep_research_whose_every_part_fails_fails_the_call_as_one_helper_would(store, data_dir, workdir):
    failure = ModelError("auth", "AuthenticationError: the key was revoked")
    model = PartsTogether(
        [delegate(question="How are invoices totalled and taxed?", kind="deep"), reply("", call("task_done", summary="ok"))],
        {"totals?": [failure], "tax?": [failure]},
        [reply("parts: ['totals?', 'tax?']")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    result = result_of(session, "d1")
    assert not result.ok and "the key was revoked" in result.content


def test_a_plan_that_names_no_parts_makes_the_whole_question_its_one_part():
    from core.agent.deep_research import parts_of

    assert parts_of("I would look at billing first.", "How are invoices taxed?") == ["How are invoices taxed?"]
    assert parts_of("parts: [a, b, c, d, e]", "q") == ["a", "b", "c", "d"]  # four at most
