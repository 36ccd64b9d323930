"""The context engine: a byte-stable prefix, an append-only history, a small tail, compaction."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import replace

import pytest

from core.context.history import History
from core.events import (
    AssistantMessage,
    Compaction,
    HumanQuestion,
    Record,
    ToolResult,
    Usage,
    UserMessage,
)
from core.llm import ModelError, ModelReply
from core.memory.working import PLAN
from core.paths import resource_text
from core.render import compaction_sizes, render
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from core.store import Store
from tests.core.helpers import events_of, make_session, person_edits_plan
from tests.support.local_site import LongPage, serving


def auto_answer(session: Session) -> None:
    """A person who answers every question at once (approvals yes, 3-Strike: retry with a hint)."""
    choices = {"three_strike": ("retry_with_hint", "try another file"), "danger_turn": ("continue", "50"),
               "approval": ("approve", ""), "ask_user": ("yes", "go on")}

    def on_notice(notice) -> None:
        if isinstance(notice, Record) and isinstance(notice.event, HumanQuestion):
            choice, text = choices[notice.event.reason]
            asyncio.get_running_loop().create_task(session.answer(notice.event.qid, choice, text))
    session.subscribe(on_notice)


def main_requests(model: ScriptedModel):
    return [r for r in model.requests if r.tools and r.tool_choice != "none"]


def dump(messages) -> list[str]:
    return [json.dumps(m, sort_keys=True, ensure_ascii=False) for m in messages]


async def test_prefix_is_byte_identical_and_history_append_only_over_50_turns(store, data_dir, workdir):
    (workdir / "src.py").write_text("".join(f"line {i}\n" for i in range(300)), encoding="utf-8")
    (workdir / "big.txt").write_text("y" * 30_000, encoding="utf-8")
    box: list[Session] = []

    def user_edits_plan(request):
        person_edits_plan(box[0], lambda text: text + "- Person: prefer small commits\n")
        return reply("", call("file_list"))

    cycle = [
        reply("", call("file_read", path="src.py", limit=40)),
        reply("", call("file_read", path="missing.py")),  # an error, kept in the history
        reply("", call("shell_run", command="cat big.txt")),  # offloaded
        reply("", call("findings_add", title="t", body="b")),
        reply("", call("human_ask", question="Continue?", options=["yes", "no"])),
    ]
    steps = [cycle[i % len(cycle)] for i in range(50)]
    steps[17] = user_edits_plan
    steps[33] = user_edits_plan
    model = ScriptedModel(steps, side_replies=[ModelReply('{"goal": "g"}')] * 5)
    session = make_session(store, data_dir, workdir, model, approval="all", danger_turn=1000, max_turns=50)
    box.append(session)
    auto_answer(session)
    assert await session.run() == "capped"

    requests = main_requests(model)
    assert len(requests) == 50
    first_system, first_tools = dump(requests[0].messages[:1]), json.dumps(requests[0].tools, sort_keys=True)
    for earlier, later in zip(requests, requests[1:]):
        assert dump(later.messages[:1]) == first_system
        assert json.dumps(later.tools, sort_keys=True) == first_tools
        # Everything before the tail is carried over unchanged: the new request extends the old one.
        kept = len(earlier.messages) - 1
        assert dump(later.messages[:kept]) == dump(earlier.messages[:kept])
        # A provider that caches only up to a marked message (Claude) is told where that part ends,
        # and the next request marks the same place again, where it reads that cache.
        assert earlier.cache_breakpoints[0] == 0 and earlier.cache_breakpoints[-1] == kept - 1
        assert later.cache_breakpoints == (0, kept - 1, len(later.messages) - 2)
    kinds = {r.event.kind for r in session.records}
    assert {"error", "human_answer", "file_changed", "tool_result"} <= kinds
    assert any(e.offload_path for e in events_of(session, ToolResult))
    reuse = [r.event.metrics["prefix_reuse"] for r in session.records if r.event.kind == "assistant_message"]
    assert min(reuse[1:]) > 0.5 and sum(reuse[1:]) / len(reuse[1:]) > 0.9


async def test_a_plan_edit_is_appended_as_a_diff_and_recited_in_the_next_tail(store, data_dir, workdir):
    box: list[Session] = []

    def edit_then_list(request):
        person_edits_plan(box[0], lambda text: text.replace("## Technical Decisions", "## Technical Decisions\n- Use SQLite"))
        return reply("", call("file_list"))

    model = ScriptedModel([edit_then_list, reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    box.append(session)
    assert await session.run() == "done"
    first, second = model.requests[0].messages, model.requests[1].messages
    notes = [i for i, m in enumerate(second) if "The person edited task_plan.md" in str(m["content"])]
    # Appended where the history ended when the person saved (the old tail's place), never earlier.
    assert notes == [len(first) - 1] and second[notes[0]]["role"] == "user"
    diff_note, tail = second[notes[0]]["content"], second[-1]["content"]
    assert "+- Use SQLite" in diff_note and "```diff" in diff_note
    assert "- Use SQLite" in tail and "version 2" in tail
    assert "- Use SQLite" not in model.requests[0].messages[-1]["content"]


FLUSH_SAYS = resource_text("prompts", "flush.md").splitlines()[0]


async def test_compaction_flushes_first_keeps_the_last_turns_and_is_reversible(store, data_dir, workdir):
    (workdir / "log.txt").write_text("".join(f"event {i}: all fine here\n" for i in range(400)), encoding="utf-8")
    reads = iter([reply("", call("file_read", call_id=f"r{i}", path="log.txt", offset=1 + i * 100, limit=100))
                  for i in range(4)])
    flush = reply("", call("findings_add", title="Before compaction", body="log.txt lines look fine"),
                  call("file_read", call_id="sneaky", path="log.txt"))

    def read_until_the_flush(request):  # whichever read the budget runs out at (the prompts may grow)
        if FLUSH_SAYS in request.messages[-2]["content"]:
            return flush
        return next(reads, reply("", call("task_done", summary="ok")))

    model = ScriptedModel([read_until_the_flush] * 7,
                          side_replies=[ModelReply("Goal: read log.txt. Done: read 400 lines. Pending: report.",
                                                   usage=Usage(5_000, 120, 0, 0.0021))])
    session = make_session(store, data_dir, workdir, model, context_window=8_000, reserve_output=1000,
                           keep_turns=2)
    assert await session.run() == "done"
    assert next(reads, None) is None  # all four reads ran, some before the compaction, maybe some after

    kinds = [r.event.kind for r in session.records]
    flush_at, compaction_at = kinds.index("flush_requested"), kinds.index("compaction")
    assert flush_at < compaction_at
    event = events_of(session, Compaction)[0]
    assert event.flush_done and 0 < event.tokens_after < event.tokens_before
    # The summary's request is the session's spending too (its status bar, its budget).
    assert event.usage == Usage(5_000, 120, 0, 0.0021) and event.summary_model == "scripted"
    replies = sum((e.usage for e in events_of(session, AssistantMessage)), Usage())
    assert session.state.usage == replies + event.usage
    # The event carries the size of the request that followed it (the chat shows "before → after").
    next_turn = next(r.event for r in session.records[compaction_at:] if isinstance(r.event, AssistantMessage))
    assert event.tokens_after == next_turn.metrics["prompt_tokens_est"]
    shown = render(next(r for r in session.records if r.event is event))
    assert shown.endswith(f"({event.tokens_before:,} → {event.tokens_after:,} tokens; "
                          "summary by scripted: 5,120 tokens, $0.0021)")
    # A compaction recorded before the size after was measured (and the summary's cost) says only
    # the size before.
    assert compaction_sizes(replace(event, tokens_after=0, usage=Usage())) == f"from {event.tokens_before:,} tokens"
    # The flush turn could only write findings; its file_read was refused, not run.
    refused = [e for e in events_of(session, ToolResult) if e.call_id == "sneaky"][0]
    assert not refused.ok and "not allowed in this step" in refused.content
    assert "log.txt lines look fine" in session.read_file("findings.md")[0]
    # After compaction: [system][task][summary][last 2 turns][tail].
    after = next(r.messages for r in model.requests
                 if r.tools and str(r.messages[2]["content"]).startswith("[Compacted history"))
    assert after[1]["content"].startswith("# Task")
    assert after[2]["content"].startswith("[Compacted history: events") and "Pending: report." in after[2]["content"]
    assert f"tripane show {session.id}" in after[2]["content"]
    assert sum(1 for m in after if m["role"] == "assistant") == 2
    # Reversible: the full log is still in the database, and the summary is on disk.
    assert all(r.event in [x.event for x in store.records(session.id)] for r in session.records)
    lines = (session.dir / "compaction" / "summaries.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["summary"].startswith("Goal: read log.txt")
    # A reopened session rebuilds the same compacted history.
    reopened = Session.open(store, data_dir, session.id, model)
    assert reopened.journal.history.messages == session.journal.history.messages


@pytest.mark.parametrize("main_model, api_base, summary_model, summary_base", [
    ("openai/local-llama", "http://127.0.0.1:8080/v1", "openai/small-llama", "http://127.0.0.1:8080/v1"),
    ("ollama_chat/llama3.1", "http://127.0.0.1:11434", "openai/gpt-4o-mini", None),  # hosted beside local
])
async def test_the_summary_is_written_by_the_summary_model_at_its_own_address(
        store, data_dir, workdir, monkeypatch, main_model, api_base, summary_model, summary_base):
    monkeypatch.setattr("core.agent.loop.model_window", lambda model, base: 8_000)  # no Ollama server here
    (workdir / "log.txt").write_text("".join(f"event {i}: all fine here\n" for i in range(400)), encoding="utf-8")
    reads = [reply("", call("file_read", call_id=f"r{i}", path="log.txt", offset=1 + i * 100, limit=100))
             for i in range(4)]
    model = ScriptedModel(reads, default=reply("", call("task_done", summary="ok")),  # refused in a flush turn
                          side_replies=[ModelReply("Goal: read log.txt.")] * 3)
    session = make_session(store, data_dir, workdir, model, model=main_model, api_base=api_base,
                           summary_model=summary_model, reserve_output=1000, keep_turns=2)
    assert await session.run() == "done"
    assert events_of(session, Compaction)
    summaries = [r for r in model.requests if not r.tools]
    assert summaries and all((r.model, r.api_base) == (summary_model, summary_base) for r in summaries)
    assert all(r.model == main_model for r in model.requests if r.tools)


@pytest.mark.parametrize("session_model_writes", [True, False])
async def test_a_failing_summary_model_hands_the_summary_to_the_sessions_own(store, data_dir, workdir, monkeypatch,
                                                                            session_model_writes):
    monkeypatch.setattr("core.agent.loop.model_window", lambda model, base: 8_000)
    (workdir / "log.txt").write_text("".join(f"event {i}: all fine here\n" for i in range(400)), encoding="utf-8")
    reads = [reply("", call("file_read", call_id=f"r{i}", path="log.txt", offset=1 + i * 100, limit=100))
             for i in range(4)]
    no_key = ModelError("no_key", "No API key for anthropic")
    second = ModelReply("Goal: read log.txt.") if session_model_writes else ModelError("server", "it broke")
    model = ScriptedModel(reads, default=reply("", call("task_done", summary="ok")),
                          side_replies=[no_key, second] * 3)
    session = make_session(store, data_dir, workdir, model, model="openai/local-llama",
                           api_base="http://127.0.0.1:8080/v1", summary_model="anthropic/claude-3-5-haiku-latest",
                           reserve_output=1000, keep_turns=2)
    assert await session.run() == "done"
    summary, writer = events_of(session, Compaction)[0].summary, events_of(session, Compaction)[0].summary_model
    assert writer == ("openai/local-llama" if session_model_writes else "")
    asked = [(r.model, r.api_base) for r in model.requests if not r.tools][:2]
    assert asked == [("anthropic/claude-3-5-haiku-latest", None), ("openai/local-llama", "http://127.0.0.1:8080/v1")]
    if session_model_writes:
        assert summary == "Goal: read log.txt."
    else:  # neither: the list of calls, and why each failed
        assert summary.startswith("(The summary model failed: anthropic/claude-3-5-haiku-latest: No API key for "
                                  "anthropic; openai/local-llama: it broke. Tool calls in the compacted range")
        assert "file_read(" in summary
    # The person is told, where the compaction is shown, only when no summary was written.
    shown = render(next(r for r in session.records if isinstance(r.event, Compaction)))
    assert ("no summary could be written (anthropic/claude-3-5-haiku-latest: No API key for anthropic; "
            "openai/local-llama: it broke), so the compacted part is kept as a list of its calls" in shown) is (
        not session_model_writes)


async def test_offloaded_output_can_be_read_back_in_full(store, data_dir, workdir):
    """Slice after slice, following each read's "continue with offset=", the agent gets it all."""
    body = "".join(f"row {i} " + "z" * 50 + "\n" for i in range(700))  # 40 KB: about ten slices
    (workdir / "data.txt").write_text(body, encoding="utf-8")

    def read_on(request):
        last = [m for m in request.messages if m["role"] == "tool"][-1]["content"]
        if "whole output in offload:" in last:  # the shell output's excerpt
            return reply("", call("file_read", call_id="back1", path="offload:" + _name(request), limit=5000))
        more = re.search(r"continue with offset=(\d+)", last)
        if more is None:
            return reply("", call("task_done", summary="ok"))
        n = len([m for m in request.messages if m["role"] == "tool"])
        return reply("", call("file_read", call_id=f"back{n}", path="offload:" + _name_in(last),
                              offset=int(more.group(1)), limit=5000))
    model = ScriptedModel([reply("", call("shell_run", command="cat data.txt")), *[read_on] * 30])
    session = make_session(store, data_dir, workdir, model, approval="all", danger_turn=100, max_turns=100)
    assert await session.run() == "done"
    reads = [e for e in events_of(session, ToolResult) if e.call_id.startswith("back")]
    assert len(reads) > 5 and all(r.ok and not r.offload_path for r in reads)  # slices, never offloaded again
    read_back = "".join(r.content.split("\n", 1)[1] for r in reads)
    saved = (session.dir / events_of(session, ToolResult)[0].offload_path).read_text(encoding="utf-8")
    assert saved.startswith(body) and read_back == saved


def _name_in(content: str) -> str:
    return content.split("[offload:", 1)[1].split(":", 1)[0]


def _name(request) -> str:
    content = [m for m in request.messages if m["role"] == "tool"][-1]["content"]
    return content.split("offload:")[1].split(";")[0]


async def test_replay_rebuilds_byte_identical_messages_including_variation(store, data_dir, workdir):
    (workdir / "a.txt").write_text("a\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_read", call_id=f"c{i}", path="a.txt")) for i in range(6)]
                          + [reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    frames = {m["content"].split("\n")[0] for m in session.journal.history.messages if m["role"] == "tool"}
    assert len(frames) > 1  # observations are framed in more than one way
    reopened = Session.open(store, data_dir, session.id, model)
    assert dump(reopened.journal.history.messages) == dump(session.journal.history.messages)


async def test_a_reopened_session_measures_its_next_request_against_the_last_one_sent(store, data_dir, workdir):
    """After a restart the history is rebuilt byte for byte, so the next request extends the last
    one sent before it: its prefix reuse says so (not 0 %), and its cache markers include where
    that request's history ended. A compaction forgets that request: it was never sent again."""
    (workdir / "a.txt").write_text("".join(f"line {i}\n" for i in range(200)), encoding="utf-8")
    model = ScriptedModel([reply("", call("file_read", call_id=f"c{i}", path="a.txt", offset=i * 40 + 1, limit=40))
                           for i in range(4)] + [reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    sent_last = main_requests(model)[-1]
    held = events_of(session, AssistantMessage)[-1].metrics["history_sent"]
    assert held == len(sent_last.messages) - 2  # all but the system prompt and the tail

    later = ScriptedModel([reply("", call("task_done", summary="checked"))])
    reopened = Session.open(store, data_dir, session.id, later)
    await reopened.send("Check the file once more.")
    assert await reopened.wait() == "done"
    after = events_of(reopened, AssistantMessage)[-1].metrics
    assert 0.8 < after["prefix_reuse"] < 1
    assert held in main_requests(later)[0].cache_breakpoints  # after that many history messages

    compacted = ScriptedModel([reply("", call("findings_add", title="Kept", body="a.txt has 200 lines.")),
                               reply("", call("task_done", summary="compacted"))],
                              side_replies=[ModelReply("Read a.txt in four pages.")])
    again = Session.open(store, data_dir, session.id, compacted)
    again.request_compaction()
    await again.send("Compact, then finish.")
    assert await again.wait() == "done"
    # Had Tripane closed right after the compaction, the request before it would not be taken for
    # the start of the next one: the compacted history was never sent.
    records = again.records
    at = next(i for i, r in enumerate(records) if isinstance(r.event, Compaction))
    rebuilt = History()
    for record in records[:at]:
        rebuilt.apply(record)
    assert rebuilt.last_request_held is not None
    rebuilt.apply(records[at])
    assert rebuilt.last_request_held is None


async def test_a_session_loaded_in_the_background_is_the_one_opened_with_what_came_meanwhile(
        store, data_dir, workdir, monkeypatch):
    (workdir / "a.txt").write_text("a\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_read", call_id=f"c{i}", path="a.txt")) for i in range(4)]
                          + [reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    read_records = store.read_records

    def read_then_another_process_writes(session_id: str) -> list[Record]:
        records = read_records(session_id)  # on the worker thread, through a connection of its own
        other = Store(store.path)  # e.g. `tripane resume` in a terminal, between the read and the fold
        other.append(session_id, UserMessage("Also update the changelog."))
        other.close()
        return records

    monkeypatch.setattr(store, "read_records", read_then_another_process_writes)
    loaded = await Session.load(store, data_dir, session.id, model)
    opened = Session.open(store, data_dir, session.id, model)
    assert dump(loaded.journal.history.messages) == dump(opened.journal.history.messages)
    assert [r.seq for r in loaded.records] == [r.seq for r in opened.records]
    assert loaded.records[-1].event == UserMessage("Also update the changelog.")
    assert loaded.state.status == opened.state.status and loaded.state.turn == opened.state.turn == 5


async def test_the_context_can_be_inspected_by_zone(store, data_dir, workdir):
    session = make_session(store, data_dir, workdir, ScriptedModel([]))
    assembled = await session.inspect_context()
    zones = {zone.name: zone for zone in assembled.zones}
    assert list(zones) == ["prefix", "history", "tail"]
    assert zones["prefix"].tokens > 500  # system prompt + ten tool schemas
    assert zones["tail"].messages[0]["content"].startswith("[Tripane — turn 1")
    assert sum(z.tokens for z in assembled.zones) == assembled.tokens
    assert assembled.budget == int(128_000 * 0.75) - 4096


async def test_the_plan_is_recited_in_full_when_new_and_compactly_otherwise(store, data_dir, workdir):
    box: list[Session] = []

    def edit(request):
        person_edits_plan(box[0], lambda text: text + "- Never force-push\n")
        box[0].pin(PLAN, ["- Never force-push"])
        return reply("", call("file_list", call_id="b"))

    model = ScriptedModel([reply("", call("file_list", call_id="a")), edit, reply("", call("file_list", call_id="c")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    box.append(session)
    assert await session.run() == "done"
    tails = [r.messages[-1]["content"] for r in model.requests]
    assert "## Technical Decisions" in tails[0] and "Plan focus" not in tails[0]  # first sight: full
    assert "Plan focus" in tails[1] and "## Technical Decisions" not in tails[1]
    assert "Goal: Test task\nPhase 1: Understand the task\nNext: 1. [ ] Read the relevant" in tails[1]
    assert "Then: 2. [ ]" in tails[1] and "more open steps)" in tails[1]
    assert "Plan focus" not in tails[2] and "📌 - Never force-push" in tails[2]  # changed: full again
    assert "Plan focus" in tails[3] and "📌 - Never force-push" in tails[3]  # pins stay in the compact form


async def test_offloaded_output_keeps_its_start_and_its_end_in_context(store, data_dir, workdir):
    """A test run's verdict is its last line: the context must show it, not only the head."""
    body = "".join(f"tests/test_x.py::test_{i} PASSED\n" for i in range(3000)) + "=== 2 failed, 2998 passed in 4.2s ===\n"
    (workdir / "run.log").write_text(body, encoding="utf-8")
    model = ScriptedModel([reply("", call("shell_run", command="cat run.log")), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    shown = [m for m in model.requests[1].messages if m["role"] == "tool"][-1]["content"]
    head, _, rest = shown.partition("\n… [")
    notice, _, end = rest.partition("\n")
    assert "tests/test_x.py::test_0 PASSED" in head and "offload:" in notice and "lines" in notice
    assert "=== 2 failed, 2998 passed in 4.2s ===" in end and "[exit code 0]" in end
    assert len(shown) < 1500
    # Whole lines only on both sides of the notice.
    assert head.splitlines()[-1].endswith("PASSED") and end.startswith("tests/")


async def test_the_fixed_zone_fits_the_window_full_for_large_windows_brief_for_small(store, data_dir, workdir):
    """Seed 002 gives the fixed zone 10-15 % of the budget: a small local model gets the brief
    rules and one-paragraph tool descriptions; either way the prefix is the same on every request
    and after a reopen."""
    from core.context.engine import FIXED_ZONE_SHARE
    (workdir / "a.txt").write_text("a\n", encoding="utf-8")
    systems = {}
    for window in (128_000, 8_000):
        model = ScriptedModel([reply("", call("file_read", path="a.txt")), reply("", call("task_done", summary="ok"))])
        session = make_session(store, data_dir, workdir, model, context_window=window, reserve_output=1000)
        assert await session.run() == "done"
        engine = session._agent_loop().engine
        first, second = main_requests(model)[:2]
        assert first.messages[0] == second.messages[0] and first.tools == second.tools
        assert engine._prefix_tokens <= max(engine.budget * FIXED_ZONE_SHARE, 3_000)
        systems[window] = (first.messages[0]["content"], first.tools)
        reopened = Session.open(store, data_dir, session.id, model)
        loop = reopened._agent_loop()
        await loop._ensure_engine()
        assert loop.engine.system_prompt == systems[window][0] and loop.engine.tools == systems[window][1]
    (full_system, full_tools), (brief_system, brief_tools) = systems[128_000], systems[8_000]
    assert len(brief_system) < len(full_system) / 3
    assert "# When something fails" in full_system and "session:task_plan.md" in full_system
    for system in (full_system, brief_system):  # the session's own facts come last, in both
        facts = system[system.index("# This session"):]
        assert f"- Workdir: {workdir}" in facts and "shell_run, web_fetch wait for the person's approval" in facts
        assert "at turn 30 the person is asked" in facts
    by_name = {t["function"]["name"]: t["function"]["description"] for t in full_tools}
    brief_by_name = {t["function"]["name"]: t["function"]["description"] for t in brief_tools}
    assert by_name.keys() == brief_by_name.keys()
    assert all(by_name[n].startswith(brief_by_name[n]) and "\n\n" not in brief_by_name[n] for n in by_name)
    assert [t["function"]["parameters"] for t in full_tools] == [t["function"]["parameters"] for t in brief_tools]


def tool_texts(request) -> list[str]:
    return [m["content"] for m in request.messages if m["role"] == "tool"]


async def test_an_unchanged_re_read_points_to_the_output_still_in_context(store, data_dir, workdir):
    (workdir / "a.py").write_text("".join(f"def f{i}(): return {i}\n" for i in range(40)), encoding="utf-8")
    (workdir / "tiny.txt").write_text("ok\n", encoding="utf-8")
    read = lambda cid, path="a.py": reply("", call("file_read", call_id=cid, path=path))  # noqa: E731
    model = ScriptedModel([read("t1", "tiny.txt"), read("t2", "tiny.txt"), read("r1"), read("r2"),
                           reply("", call("file_edit", call_id="e1", path="a.py", old="return 7", new="return 70")),
                           read("r3"), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    results = {e.call_id: e for e in events_of(session, ToolResult)}
    first, again, after_edit = results["r1"], results["r2"], results["r3"]
    assert "def f39(): return 39" in first.content and not first.same_as
    # The same output again: a pointer to the first one, which the model still has.
    assert again.ok and again.same_as == "r1" and again.size == len(first.content)
    assert again.content.startswith("[Unchanged: the same") and "call r1 returned at turn 3" in again.content
    assert "def f39" not in again.content
    request = model.requests[4]
    assert sum("def f39(): return 39" in text for text in tool_texts(request)) == 1
    # An output shorter than the pointer would be is simply shown again.
    assert results["t2"].content == results["t1"].content and not results["t2"].same_as
    # After the file changed, a read shows it in full again.
    assert not after_edit.same_as and "return 70" in after_edit.content


async def test_a_re_read_after_compaction_dropped_the_first_shows_the_output_again(store, data_dir, workdir):
    (workdir / "a.py").write_text("".join(f"def f{i}(): return {i}\n" for i in range(40)), encoding="utf-8")
    (workdir / "b.py").write_text("".join(f"def g{i}(): return {i}\n" for i in range(40)), encoding="utf-8")
    read = lambda cid, path: reply("", call("file_read", call_id=cid, path=path))  # noqa: E731

    def compact_now(request):
        session.request_compaction()
        return reply("", call("file_list", call_id="l1"))
    model = ScriptedModel(
        [read("a1", "a.py"), read("b1", "b.py"), read("b2", "b.py"), compact_now,
         reply("", call("findings_add", title="Before compaction", body="a.py and b.py define f and g")),
         read("a2", "a.py"), read("a3", "a.py"), read("b3", "b.py"), reply("", call("task_done", summary="ok"))],
        side_replies=[ModelReply("Goal: read a.py and b.py. Done: read them.")])
    session = make_session(store, data_dir, workdir, model, keep_turns=3)
    assert await session.run() == "done"

    assert len(events_of(session, Compaction)) == 1
    results = {e.call_id: e for e in events_of(session, ToolResult)}
    # a1 was compacted away, so a2 shows the file again; a3 points to a2, which is in view.
    assert not results["a2"].same_as and "def f39" in results["a2"].content
    assert results["a3"].same_as == "a2"
    # b2 (a pointer to b1) was kept, b1 was not: the kept result now shows the output itself...
    after = model.requests[-1].messages
    b2 = next(m for m in after if m.get("tool_call_id") == "b2")
    assert "def g39" in b2["content"] and "Unchanged" not in b2["content"]
    assert not any(m.get("tool_call_id") == "b1" for m in after)
    # ...and a later identical read points to it.
    assert results["b3"].same_as == "b2"
    # A reopened session rebuilds the same history and makes the same decisions.
    reopened = Session.open(store, data_dir, session.id, model)
    assert dump(reopened.journal.history.messages) == dump(session.journal.history.messages)
    assert reopened.journal.history.output_in_view(results["a2"].digest).call_id == "a2"
    assert reopened.journal.history.output_in_view(results["b1"].digest).call_id == "b2"


async def test_a_repeated_large_output_points_to_the_saved_one_and_a_listing_to_itself(store, data_dir, workdir):
    for i in range(400):  # a listing of a large folder: as much as fits the output's room
        (workdir / f"file_{i:03d}.txt").write_text("x", encoding="utf-8")
    with serving(LongPage) as address:
        model = ScriptedModel([reply("", call("web_fetch", call_id="w1", url=f"{address}/notes")),
                               reply("", call("web_fetch", call_id="w2", url=f"{address}/notes")),
                               reply("", call("file_list", call_id="l1")), reply("", call("file_list", call_id="l2")),
                               reply("", call("shell_run", call_id="s1", command="ls")),
                               reply("", call("shell_run", call_id="s2", command="ls")),
                               reply("", call("task_done", summary="ok"))])
        session = make_session(store, data_dir, workdir, model, approval="all")
        assert await session.run() == "done"
    results = {e.call_id: e for e in events_of(session, ToolResult)}
    first, again = results["w1"], results["w2"]
    assert first.offload_path and not again.offload_path and again.same_as == "w1"
    assert f"the whole of it is in offload:{first.offload_path.split('/')[-1]}" in again.content
    listed, listed_again = results["l1"], results["l2"]
    assert not listed.offload_path and listed_again.same_as == "l1" and "still above" in listed_again.content
    # A command's output is not information gathered: shown again (excerpted), never pointed to.
    assert not results["s1"].digest and not results["s2"].same_as and results["s2"].offload_path


async def test_the_projects_agents_md_joins_the_prefix_as_it_was_at_the_start(store, data_dir, workdir):
    (workdir / "AGENTS.md").write_text("# Rules\n- Run tests with `make check`.\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_write", path="AGENTS.md", content="# Rules\n- Anything goes.\n")),
                           reply("", call("file_list")), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    systems = {r.messages[0]["content"] for r in main_requests(model)}
    assert len(systems) == 1  # the file changed during the session; the prefix did not
    system = systems.pop()
    assert system.endswith("# Project instructions — AGENTS.md in the workdir, as it was when the session "
                           "started\n# Rules\n- Run tests with `make check`.")
    reopened = Session.open(store, data_dir, session.id, model)
    assert (await reopened.inspect_context()).messages[0]["content"] == system


async def test_project_instructions_can_be_left_out(store, data_dir, workdir):
    (workdir / "AGENTS.md").write_text("- Always answer in French.\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, project_instructions=False)
    assert await session.run() == "done"
    assert "Always answer in French" not in model.requests[0].messages[0]["content"]
    assert "# Project instructions" not in model.requests[0].messages[0]["content"]


def test_project_instructions_are_found_cut_when_long_and_ignored_when_binary(tmp_path):
    from core.context.project import MAX_INSTRUCTION_CHARS, read_project_instructions

    assert read_project_instructions(tmp_path) == ("", "")
    (tmp_path / "CLAUDE.md").write_text("Use tabs.\n", encoding="utf-8")
    assert read_project_instructions(tmp_path) == ("CLAUDE.md", "Use tabs.")
    (tmp_path / "AGENTS.md").write_text("".join(f"- rule {i}\n" for i in range(5000)), encoding="utf-8")
    name, text = read_project_instructions(tmp_path)  # AGENTS.md first; cut at whole lines, says how to go on
    assert name == "AGENTS.md" and len(text) < MAX_INSTRUCTION_CHARS + 200
    shown = text.splitlines()[:-1]
    assert shown[-1] == f"- rule {len(shown) - 1}"
    assert f'file_read(path="AGENTS.md", offset={len(shown) + 1})' in text
    (tmp_path / "AGENTS.md").write_bytes(b"\x00\x01binary")
    assert read_project_instructions(tmp_path) == ("", "")


def test_the_output_reserve_takes_at_most_an_eighth_of_a_small_window():
    from core.context.engine import budget_for
    assert budget_for(128_000, 4096) == 96_000 - 4096  # a large window keeps the whole reserve
    assert budget_for(8192, 4096) == 6144 - 1024  # an 8k local model keeps 5k for its context, not 2k


async def test_a_small_window_keeps_fewer_turns_so_a_compaction_buys_room(store, data_dir, workdir):
    """Five kept turns of long reads would fill an 8k model's context again at once, and every
    turn would flush and summarise: a compaction keeps as many of the last turns as fit in 30 %
    of the budget, never fewer than two, and the requests between compactions fit the budget."""
    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(400)),
                                      encoding="utf-8")
    reads = [reply("", call("file_read", call_id=f"r{i}", path="wide.txt", offset=1 + i * 20, limit=20))
             for i in range(12)]
    # A flush turn takes the next scripted reply too (its read is refused there), so the script
    # ends in task_done for as long as needed rather than at a fixed turn.
    done = reply("", call("task_done", summary="ok"))
    model = ScriptedModel(reads, default=done, side_replies=[ModelReply("Goal: read wide.txt.")] * 20)
    session = make_session(store, data_dir, workdir, model, context_window=8_000, reserve_output=1000,
                           keep_turns=5)
    assert await session.run() == "done"
    compactions = events_of(session, Compaction)
    # Was a flush and a summary on nearly every turn; now one every few reads (five at most, with the
    # prefix of seventeen tools in the 5,000-token budget: sixteen left room for one more read).
    assert 1 <= len(compactions) <= 5
    sent = [m.metrics for m in events_of(session, AssistantMessage) if not m.metrics.get("flush")]
    assert all(sum(m["zones"].values()) <= m["budget"] for m in sent)
    turn_starts = [r.seq for r in session.records if isinstance(r.event, AssistantMessage)]
    for event in compactions:
        kept = sum(1 for seq in turn_starts if seq > event.last_seq and seq < event_seq(session, event))
        assert 2 <= kept < 5


def event_seq(session: Session, event) -> int:
    return next(r.seq for r in session.records if r.event is event)
