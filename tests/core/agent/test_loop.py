"""The loop's rules, with a scripted model at the core/llm.py boundary and real files and SQLite."""

from __future__ import annotations

import asyncio
import json
import sys

from core.events import (
    AssistantMessage,
    BackgroundStopped,
    Danger,
    ErrorRecorded,
    FileChanged,
    HumanQuestion,
    SessionEnded,
    ToolCall,
    ToolResult,
)
from core.journal import ToolOutput
from core.llm import ModelError, ModelReply
from core.memory.working import PLAN
from core.render import describe_danger, render
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from tests.core.helpers import (
    events_of,
    last_user_text,
    make_session,
    person_edits_plan,
    wait_for_question,
)


async def test_task_completes_end_to_end_and_fills_the_three_files(store, data_dir, workdir):
    (workdir / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")

    box: list[Session] = []

    def tick_plan(request):  # the agent rewrites the whole plan from the file, as the tail tells it to
        plan, _ = box[0].read_file("task_plan.md")
        return reply("", call("plan_update", content=plan.replace("1. [ ] Read the relevant", "1. [x] Read the relevant")
                              .replace("- Phase: 1", "- Phase: 2")))

    model = ScriptedModel([
        reply("Looking around.", call("file_list", call_id="c1"), call("file_read", call_id="c2", path="notes.txt")),
        reply("", call("findings_add", title="notes.txt", body="Two lines: alpha, beta.")),
        tick_plan,
        reply("", call("file_write", path="out.txt", content="ALPHA\nBETA\n")),
        reply("", call("task_done", summary="Wrote out.txt in upper case.")),
    ])
    session = make_session(store, data_dir, workdir, model, task="Upper-case notes.txt into out.txt")
    box.append(session)
    assert await session.run() == "done"

    assert (workdir / "out.txt").read_text(encoding="utf-8") == "ALPHA\nBETA\n"
    plan, plan_version = session.read_file("task_plan.md")
    findings, _ = session.read_file("findings.md")
    progress, _ = session.read_file("progress.md")
    assert "1. [x] Read the relevant" in plan and "- Phase: 2" in plan and plan_version == 2
    assert "Two lines: alpha, beta." in findings
    for expected in ("Session started", "file_list", "file_read", "findings_add", "plan_update",
                     "file_write", "Phase changed: 1 → 2", "Session ended: done"):
        assert expected in progress, expected
    # The files on disk are what the session reports, and the last event says done.
    assert (session.dir / "progress.md").read_text(encoding="utf-8") == progress
    assert events_of(session, SessionEnded)[-1].summary == "Wrote out.txt in upper case."
    assert store.session(session.id).status == "ended:done"


async def test_third_identical_error_opens_three_strike_question_with_reboot(store, data_dir, workdir):
    missing = reply("", call("file_read", path="missing.txt"))
    reboot = json.dumps({"goal": "Read the config", "tried": "file_read missing.txt three times",
                         "wrong": "The file does not exist", "differently": "List the folder first",
                         "ask_human": "Ask where the config lives"})
    diagnosis = ('root_cause: "missing.txt is not in the work folder"\nkind: A\n'
                 'try_instead: "List the folder with file_list first"')
    model = ScriptedModel([missing, missing, missing, reply("", call("task_done", summary="gave up"))],
                          side_replies=[ModelReply(diagnosis), ModelReply(reboot)])
    session = make_session(store, data_dir, workdir, model)
    session.start()
    question = await wait_for_question(session)

    assert question.reason == "three_strike"
    assert question.options == ("retry_with_hint", "skip_step", "edit_plan", "change_model", "stop")
    # Person and model read the failure itself, not its masked signature ("<q>").
    assert "file_read failed: No such file: 'missing.txt'. How should" in question.question
    third_turn = [r for r in model.requests if r.tools][2].messages
    third_tail = third_turn[-1]["content"]
    # The second failure was diagnosed before the third turn, and the agent read the diagnosis.
    told = ("[Tripane's diagnosis of a failure that happened twice — file_read failed: No such file: 'missing.txt'. "
            "Root cause (missing information): missing.txt is not in the work folder. "
            "Try instead: List the folder with file_list first.")
    assert any(str(m["content"]).startswith(told) for m in third_turn)
    assert question.context["diagnosis"].startswith(told)
    assert "The same failure 2 times (latest — file_read failed: No such file: 'missing.txt')" in third_tail
    assert "At 3 the run stops" in third_tail
    reboot_prompt = [m["content"] for m in model.requests[-1].messages if str(m["content"]).startswith("[Tripane: 3-Strike Protocol]")]
    assert "file_read failed: No such file: 'missing.txt'" in reboot_prompt[0]
    assert question.context["reboot"]["wrong"] == "The file does not exist"
    assert len(question.context["errors"]) == 3 and "No such file" in question.context["errors"][0]
    attempts = [e.attempt for e in events_of(session, ErrorRecorded)]
    assert attempts == [1, 2, 3]
    # The reboot is one model call without tools (tool_choice none), and no 4th turn ran.
    assert model.requests[-1].tool_choice == "none"
    # It reads the cache the turns wrote: marked where the history ends, before its own prompt.
    reboot_messages = model.requests[-1].messages
    last_turn = model.requests[-2]
    assert model.requests[-1].cache_breakpoints == (0, len(last_turn.messages) - 2, len(reboot_messages) - 3)
    assert reboot_messages[-2]["content"].startswith("[Tripane: 3-Strike Protocol]")
    assert session.state.turn == 3
    progress, _ = session.read_file("progress.md")
    assert "ERROR (3rd attempt) in file_read" in progress and "3-STRIKE TRIGGERED" in progress
    assert "<q>" not in progress

    await session.answer(question.qid, "retry_with_hint", "The config is in settings/app.toml")
    assert await session.wait() == "done"
    # The answer reached the agent's context, and the strike count was reset.
    next_request = model.requests[-1].messages
    assert any("settings/app.toml" in str(m.get("content")) for m in next_request)
    assert session.state.strikes == {}


async def test_three_strike_stop_answer_ends_the_session(store, data_dir, workdir):
    bad = reply("", call("shell_run", command="exit 7"))
    model = ScriptedModel([bad, bad, bad])
    session = make_session(store, data_dir, workdir, model, approval="all")
    session.start()
    question = await wait_for_question(session)
    await session.answer(question.qid, "stop")
    assert await session.wait() == "aborted"


async def test_the_turn_thresholds_question_shows_the_latest_calls_and_why_one_failed(store, data_dir, workdir):
    model = ScriptedModel([reply("", call("file_read", path="missing.txt")),
                           reply("", call("file_list"), call("file_search", query="parse_date"))],
                          default=reply("", call("file_list")))
    session = make_session(store, data_dir, workdir, model, danger_turn=3, warn_turn=2)
    session.start()
    question = await wait_for_question(session)
    assert question.reason == "danger_turn"
    first, *rest = question.context["recent"]
    assert first.startswith("✗ file_read path=missing.txt — ") and "missing.txt" in first[30:]
    assert rest == ["✓ file_list", "✓ file_search query=parse_date", "✓ file_list"]
    session.stop()
    await session.wait()


async def test_turn_thirty_opens_the_danger_question(store, data_dir, workdir):
    (workdir / "f.txt").write_text("x", encoding="utf-8")
    model = ScriptedModel([], default=reply("", call("file_list")))
    session = make_session(store, data_dir, workdir, model)
    session.start()
    question = await wait_for_question(session)

    assert question.reason == "danger_turn" and session.state.turn == 30
    assert question.options == ("continue", "guidance", "stop")
    # What the person needs to decide: where the plan stands, the step at hand, the latest steps.
    assert question.context["status"][0].startswith("- Phase: ") and question.context["step"].startswith("1. [ ]")
    assert question.context["recent"] == ["✓ file_list"] * 6
    assert [d.level for d in events_of(session, Danger)] == ["warn", "stop"]
    # The person reads what each threshold means, not just its name.
    warn, stop = (describe_danger(d) for d in events_of(session, Danger))
    assert warn.startswith("Turn 7: the task is taking long") and "at turn 30 you will be asked" in warn
    assert stop.startswith("Turn 30: the danger threshold") and "continue, guide or stop" in stop
    # From turn 7 on, the tail warns against blind retries.
    assert "Do not retry blindly" in last_user_text(model, 7)
    assert "Do not retry blindly" not in last_user_text(model, 5)

    await session.answer(question.qid, "continue", "3")
    second = await wait_for_question(session)
    assert second.reason == "danger_turn" and session.state.turn == 33
    await session.answer(second.qid, "stop")
    assert await session.wait() == "aborted"


async def test_stale_agent_plan_write_after_user_edit_is_refused_and_retried(store, data_dir, workdir):
    session_box: list[Session] = []

    def user_edits_during_model_call(request):
        # The person saves an edit while the model is thinking: the agent's write is then stale.
        person_edits_plan(session_box[0], lambda text: text + "\n- USER NOTE: use PostgreSQL, not SQLite\n")
        return reply("", call("plan_update", content="# Task Plan\n\n## Goal\nAgent's rewrite\n"))

    def retry_from_current(request):
        tool_result = [m for m in request.messages if m["role"] == "tool"][-1]["content"]
        assert tool_result.startswith("ERROR:") and "USER NOTE" in tool_result
        current = tool_result.split("---\n", 1)[1]
        return reply("", call("plan_update", call_id="retry", content=current + "\n- Agent step added\n"))

    model = ScriptedModel([user_edits_during_model_call, retry_from_current,
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    session_box.append(session)
    assert await session.run() == "done"

    plan, _ = session.read_file(PLAN)
    assert "USER NOTE: use PostgreSQL" in plan and "Agent step added" in plan
    assert "Agent's rewrite" not in plan
    authors = [(e.author, e.version) for e in events_of(session, FileChanged) if e.file == PLAN]
    assert authors == [("core", 1), ("user", 2), ("agent", 3)]
    # The person's edit reached the agent as a diff.
    assert any("USER NOTE" in str(m.get("content")) and "```diff" in str(m.get("content"))
               for m in model.requests[1].messages)


async def test_pinned_line_survives_an_agent_rewrite(store, data_dir, workdir):
    box: list[Session] = []

    def rewrite(keep_pinned: bool):
        def step(request):
            plan, _ = box[0].read_file(PLAN)
            if not keep_pinned:
                plan = plan.replace("- Never touch prod\n", "")
            return reply("", call("plan_update", call_id=f"keep-{keep_pinned}", content=plan.replace("- Phase: 1", "- Phase: 2")))
        return step

    model = ScriptedModel([rewrite(False), rewrite(True), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    box.append(session)
    text, version = session.read_file(PLAN)
    session.edit_file(PLAN, text + "- Never touch prod\n", base_version=version)
    session.pin(PLAN, ["- Never touch prod"])
    assert await session.run() == "done"

    results = events_of(session, ToolResult)
    assert not results[0].ok and "pinned" in results[0].content
    assert results[1].ok
    assert "- Never touch prod" in session.read_file(PLAN)[0]
    assert "📌 - Never touch prod" in last_user_text(model, 1)


async def test_a_plan_update_that_drops_most_of_the_plan_is_refused_with_the_current_text(store, data_dir, workdir):
    model = ScriptedModel([
        # What an agent would send if it rewrote the plan from the tail's short recitation…
        reply("", call("plan_update", content="Goal: do it\nNext: 1. [ ] Read the relevant files\n")),
        # …and one that wrote it in Chinese, headings and all.
        reply("", call("plan_update", content="# 任务计划\n\n## 目标\n跳过空行\n\n## 当前状态\n- 阶段：1\n")),
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    refused, translated = events_of(session, ToolResult)[:2]
    assert not refused.ok and "drops the section(s) ## Goal" in refused.content
    assert "--- current task_plan.md (version 1) ---" in refused.content and "## Execution Plan" in refused.content
    assert "## Execution Plan" in session.read_file(PLAN)[0]
    assert "in English" not in refused.content  # (no heading of its own: not a translation)
    assert not translated.ok and "Keep the headings as they are, in English" in translated.content


async def test_huge_tool_output_is_offloaded_and_readable_back(store, data_dir, workdir):
    line = "x" * 99 + "\n"  # 100 bytes a line
    (workdir / "big.log").write_text(line * 500_000, encoding="utf-8")  # 50 MB
    model = ScriptedModel([
        reply("", call("shell_run", command="cat big.log")),
        lambda req: reply("", call("file_read", path="offload:" + _offload_name(req), offset=499_999, limit=5)),
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"

    result = events_of(session, ToolResult)[0]
    assert result.ok and result.size > 50_000_000
    assert len(result.content) < 3000 and result.offload_path
    saved = session.dir / result.offload_path
    assert saved.stat().st_size > 50_000_000
    read_back = events_of(session, ToolResult)[1]
    assert read_back.ok and "lines 499999-500002 of 500002" in read_back.content
    # Neither the event log nor the next request carries the 50 MB.
    assert max(len(json.dumps(m)) for m in model.requests[1].messages[1:]) < 10_000  # after the system prompt


async def test_a_log_pasted_as_an_answer_is_offloaded_as_a_message_is(store, data_dir, workdir):
    """Asked "what does the log say?", the person pastes it into the question's box."""
    from core.events import HumanAnswer

    log = "".join(f"12:00:{i % 60:02d} worker {i}: connection reset by peer\n" for i in range(40_000))
    model = ScriptedModel([reply("", call("human_ask", question="What does last night's log say?")),
                           reply("", call("task_done", summary="read it"))])
    session = make_session(store, data_dir, workdir, model, context_window=16_000)
    session.start()
    question = await wait_for_question(session)
    await session.answer(question.qid, log + "That is all of it.")  # typed as the answer (the window's way)
    assert await asyncio.wait_for(session.wait(), 10) == "done"

    answer = events_of(session, HumanAnswer)[-1]
    assert answer.offload_path == "offload/answer-0001.txt" and answer.size == len(log) + len("That is all of it.")
    assert (session.dir / answer.offload_path).read_text(encoding="utf-8") == log + "That is all of it."
    assert "whole answer in offload:answer-0001.txt" in answer.choice and answer.choice.endswith("That is all of it.")
    assert max(len(json.dumps(m)) for m in model.requests[1].messages[1:]) < 10_000
    assert (session.dir / "progress.md").stat().st_size < 20_000

    model.steps.append(reply("", call("human_ask", question="Anything else?", options=["no", "yes"])))
    model.steps.append(reply("", call("task_done", summary="read that too")))
    await session.send("One more thing.")
    question = await wait_for_question(session)
    await session.answer(question.qid, "yes", "details: " + log)  # a choice, with a long detail
    assert await asyncio.wait_for(session.wait(), 10) == "done"
    answer = events_of(session, HumanAnswer)[-1]
    assert answer.choice == "yes" and answer.offload_path == "offload/answer-0002.txt"
    assert answer.text.startswith("details: ") and len(answer.text) < 7_000

    # Typed in the box beside the options (the window's Send answer): the log itself, kept in a file too.
    model.steps.append(reply("", call("human_ask", question="Which log?", options=["last night's"])))
    model.steps.append(reply("", call("task_done", summary="read the other")))
    await session.send("And the other log.")
    question = await wait_for_question(session)
    await session.answer(question.qid, log)
    assert await asyncio.wait_for(session.wait(), 10) == "done"
    answer = events_of(session, HumanAnswer)[-1]
    assert answer.offload_path == "offload/answer-0003.txt" and len(answer.choice) < 10_000
    assert max(len(json.dumps(m)) for m in model.requests[-1].messages[1:]) < 10_000


async def test_a_pasted_log_the_size_of_no_window_is_offloaded_and_readable_back(store, data_dir, workdir):
    """Sent whole, a 2 MB paste went into every request after it, over any model's window."""
    from core.events import UserMessage

    log = "".join(f"12:00:{i % 60:02d} worker {i}: connection reset by peer\n" for i in range(40_000))
    pasted = f"Here is the log from last night:\n{log}Why did the workers drop?"
    model = ScriptedModel([
        reply("", call("task_done", summary="first")),
        lambda req: reply("", call("file_read", path="offload:message-0001.txt", offset=20_001, limit=1)),
        reply("", call("task_done", summary="read it")),
    ])
    session = make_session(store, data_dir, workdir, model, context_window=16_000)
    assert await session.run() == "done"
    await session.send(pasted)
    assert await asyncio.wait_for(session.wait(), 10) == "done"

    message = events_of(session, UserMessage)[-1]
    assert message.size == len(pasted) and message.offload_path == "offload/message-0001.txt"
    assert (session.dir / message.offload_path).read_text(encoding="utf-8") == pasted  # whole, lost nothing
    said = message.text
    assert said.startswith("Here is the log from last night:") and said.endswith("Why did the workers drop?")
    assert "whole message in offload:message-0001.txt" in said and len(said) < 7_000
    assert max(len(json.dumps(m)) for m in model.requests[1].messages[1:]) < 10_000
    read_back = events_of(session, ToolResult)[-2]
    assert read_back.ok and "worker 19999: connection reset" in read_back.content

    await session.send("Short ones stay whole.")
    await asyncio.wait_for(session.wait(), 10)
    assert events_of(session, UserMessage)[-1] == UserMessage("Short ones stay whole.")

    session.pause()  # a run in progress takes a message at its next step: offloaded there too
    await session.send("Keep going.")
    await session.send(pasted)
    session.resume()
    await asyncio.wait_for(session.wait(), 10)
    again = events_of(session, UserMessage)[-1]
    assert again.offload_path == "offload/message-0002.txt" and again.text == said.replace("0001", "0002")


async def test_a_small_window_takes_a_shorter_message_whole(store, data_dir, workdir):
    """A 4,096-token local model: 10,000 characters, under the usual limit, are over its budget."""
    from core.events import UserMessage

    model = ScriptedModel([], default=reply("", call("task_done", summary="ok")))
    session = make_session(store, data_dir, workdir, model, context_window=4_096)
    assert await session.run() == "done"
    paste = "".join(f"line {i}: a value of the table\n" for i in range(350))
    assert 8_000 < len(paste) < 20_000
    await session.send(paste)
    await asyncio.wait_for(session.wait(), 10)
    message = events_of(session, UserMessage)[-1]
    assert message.offload_path and message.size == len(paste) and len(message.text) < 1_000
    await session.send("line 1: short")
    await asyncio.wait_for(session.wait(), 10)
    assert events_of(session, UserMessage)[-1].offload_path is None


async def test_a_long_task_is_recited_in_brief_and_kept_whole_for_the_agent_to_read(store, data_dir, workdir):
    """A pasted specification as the task: the plan's Goal, recited at every step, held all of it."""
    spec = "Build the importer.\n" + "".join(f"- Rule {i}: rows of kind {i} go to table t{i}.\n" for i in range(1_500))
    model = ScriptedModel([
        reply("", call("file_read", path="offload:task.md", offset=1_400, limit=1)),
        reply("", call("task_done", summary="read the rules")),
    ])
    session = make_session(store, data_dir, workdir, model, task=spec)
    assert await session.run() == "done"

    assert (session.dir / "offload" / "task.md").read_text(encoding="utf-8") == spec.strip()
    goal = session.read_file(PLAN)[0].split("## Goal\n", 1)[1].split("\n## ", 1)[0]
    assert goal.startswith("Build the importer.\n- Rule 0:") and "whole in offload:task.md" in goal
    assert len(goal) < 2_000 and "Rule 1499" not in goal
    first = json.dumps(model.requests[0].messages)
    assert "whole task in offload:task.md" in first and "Rule 1499" in first  # its start and its end
    assert len(first) < len(spec)
    read_back = events_of(session, ToolResult)[0]
    assert read_back.ok and "Rule 1398: rows of kind 1398" in read_back.content  # (line 1,400)


def _offload_name(request) -> str:
    content = [m for m in request.messages if m["role"] == "tool"][-1]["content"]
    return content.split("offload:")[1].split(";")[0]


async def test_malformed_tool_json_and_unknown_tool_are_survived(store, data_dir, workdir):
    model = ScriptedModel([
        reply("", ToolCall(id="bad", name="file_read", arguments='{"path": "a.txt"')),
        reply("", ToolCall(id="unk", name="file_teleport", arguments="{}")),
        ModelReply(""),
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"

    results = events_of(session, ToolResult)
    assert "not valid JSON" in results[0].content and not results[0].ok
    assert "Unknown tool 'file_teleport'" in results[1].content
    signatures = [e.signature for e in events_of(session, ErrorRecorded)]
    assert signatures[0].startswith("file_read:malformed_arguments")
    assert signatures[2].startswith("model:empty_reply")
    # The malformed call stays in the history, as an object a provider accepts, followed by its
    # error quoting what was sent; the log keeps it exactly as sent.
    history = model.requests[-1].messages
    assert any(m.get("tool_calls") and m["tool_calls"][0]["function"]["arguments"] == "{}" for m in history)
    assert any(m["role"] == "tool" and """You sent: '{"path": "a.txt"'""" in m["content"] for m in history)
    assert events_of(session, AssistantMessage)[0].tool_calls[0].arguments == '{"path": "a.txt"'
    assert any(m["role"] == "user" and "empty reply" in m["content"] for m in history)


async def test_denied_approval_is_never_executed(store, data_dir, workdir):
    model = ScriptedModel([
        reply("", call("shell_run", command="touch SHOULD_NOT_EXIST")),
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="ask")
    session.start()
    question = await wait_for_question(session)
    assert question.reason == "approval" and question.context["tool"] == "shell_run"
    assert "SHOULD_NOT_EXIST" in question.context["arguments"]

    await session.approve(question.qid, approved=False, reason="no shell today")
    assert await session.wait() == "done"
    assert not (workdir / "SHOULD_NOT_EXIST").exists()
    result = events_of(session, ToolResult)[0]
    assert not result.ok and "denied" in result.content and "no shell today" in result.content


async def test_always_allow_this_call_approves_the_same_command_only(store, data_dir, workdir):
    model = ScriptedModel([
        reply("", call("shell_run", call_id="first", command="echo run >> runs.txt")),
        # The same command, its JSON spelled otherwise and with a timeout: not asked again.
        reply("", ToolCall("again", "shell_run", '{ "timeout": 60,  "command": "echo run >> runs.txt" }')),
        reply("", call("shell_run", call_id="other", command="echo other > other.txt")),  # asked
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="ask")
    session.start()
    first = await wait_for_question(session)
    assert "always_call" in first.options
    await session.answer(first.qid, "always_call")
    second = await wait_for_question(session)
    assert second.qid != first.qid and "other.txt" in second.context["arguments"]
    assert (workdir / "runs.txt").read_text(encoding="utf-8").split() == ["run", "run"]
    await session.approve(second.qid, approved=False)
    assert await session.wait() == "done"
    assert len(events_of(session, HumanQuestion)) == 2 and not (workdir / "other.txt").exists()
    progress, _ = session.read_file("progress.md")
    assert "Allow shell_run echo other > other.txt?" in progress  # what it would have run, not "Allow shell_run?"
    # A reopened session remembers what was allowed.
    reopened = Session.open(store, data_dir, session.id, model)
    assert reopened.state.allowed_without_asking("shell_run", '{"command": "echo run >> runs.txt"}')
    assert not reopened.state.allowed_without_asking("shell_run", '{"command": "echo other > other.txt"}')

    # So does a later session in the same folder; one in another folder asks.
    later = make_session(store, data_dir, workdir, ScriptedModel([
        reply("", call("shell_run", command="echo run >> runs.txt")), reply("", call("task_done", summary="ok"))]),
        approval="ask")
    assert await asyncio.wait_for(later.run(), 10) == "done"
    assert not events_of(later, HumanQuestion) and len((workdir / "runs.txt").read_text().split()) == 3
    assert "shell_run run without asking: you allowed this command in this folder" in later.read_file("progress.md")[0]
    elsewhere = workdir / "sub"
    elsewhere.mkdir()
    other = make_session(store, data_dir, elsewhere, ScriptedModel([
        reply("", call("shell_run", command="echo run >> runs.txt"))]), approval="ask")
    other.start()
    assert (await wait_for_question(other)).reason == "approval"
    await other.close()


async def test_always_allow_approves_later_calls_of_that_tool(store, data_dir, workdir):
    model = ScriptedModel([
        reply("", call("shell_run", command="echo one > one.txt")),
        reply("", call("shell_run", call_id="second", command="echo two > two.txt")),
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model, approval="ask")
    session.start()
    question = await wait_for_question(session)
    await session.approve(question.qid, approved=True, always=True)
    assert await session.wait() == "done"
    assert (workdir / "one.txt").exists() and (workdir / "two.txt").exists()
    assert len(events_of(session, HumanQuestion)) == 1


async def test_policy_none_refuses_risky_tools_without_asking(store, data_dir, workdir):
    model = ScriptedModel([reply("", call("shell_run", command="touch X")), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, approval="none")
    assert await session.run() == "done"
    assert not (workdir / "X").exists()
    assert "policy" in events_of(session, ToolResult)[0].content


async def test_two_action_rule_reminds_until_a_finding_is_written(store, data_dir, workdir):
    (workdir / "a.txt").write_text("a", encoding="utf-8")
    model = ScriptedModel([
        reply("", call("file_read", path="a.txt")),
        reply("", call("file_list")),
        reply("", call("findings_add", title="t", body="b")),
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    assert "2-Action Rule" not in last_user_text(model, 1)
    assert "2-Action Rule: 2 reading" in last_user_text(model, 2)
    assert "2-Action Rule" not in last_user_text(model, 3)


async def test_max_turns_caps_the_run(store, data_dir, workdir):
    model = ScriptedModel([], default=reply("", call("file_list")))
    session = make_session(store, data_dir, workdir, model, max_turns=4)
    assert await session.run() == "capped"
    assert session.state.turn == 4


async def test_user_message_mid_run_reaches_the_next_request(store, data_dir, workdir):
    session_box: list[Session] = []

    def first(request):
        asyncio.get_running_loop().create_task(session_box[0].send("Please also check the tests folder"))
        return reply("", call("file_list"))

    model = ScriptedModel([first, reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    session_box.append(session)
    assert await session.run() == "done"
    second_request = model.requests[1].messages
    assert second_request[-2] == {"role": "user", "content": "Please also check the tests folder"}


async def test_stop_during_a_model_call_aborts_at_once(store, data_dir, workdir):
    started = asyncio.Event()

    class SlowModel(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            started.set()
            await asyncio.sleep(60)

    session = make_session(store, data_dir, workdir, SlowModel([]))
    session.start()
    await asyncio.wait_for(started.wait(), 5)
    session.stop()
    assert await asyncio.wait_for(session.wait(), 5) == "aborted"


async def test_a_reply_stopped_midway_is_kept_and_the_agent_told_so(store, data_dir, workdir):
    """A slow model's long answer, stopped by the person after a minute of it: what they read stays
    in the conversation (it is in the log), and the agent, asked again, knows it was cut short."""
    halfway = asyncio.Event()

    class SlowModel(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            if not self.requests:
                self.requests.append(request)
                on_reasoning("Which module first?")
                on_text("## Review\n\n1. The helpers differ ")
                on_text("only in a constant.")
                halfway.set()
                await asyncio.sleep(60)
            return await super().complete(request, on_text, on_retry, on_reasoning, on_call)

    model = SlowModel([reply("Thanks for stopping me; shorter then.", call("task_done", summary="short"))])
    session = make_session(store, data_dir, workdir, model)
    session.start()
    await asyncio.wait_for(halfway.wait(), 5)
    session.stop()
    assert await asyncio.wait_for(session.wait(), 5) == "aborted"
    kept = events_of(session, AssistantMessage)
    assert [m.text for m in kept] == ["## Review\n\n1. The helpers differ only in a constant."]
    assert kept[0].tool_calls == () and kept[0].reasoning == "" and kept[0].metrics["stopped_by_person"]
    assert session.records[-1].event == SessionEnded("aborted", "Stopped by the person.")

    await session.send("Shorter, please.")
    assert await asyncio.wait_for(session.wait(), 5) == "done"
    asked = model.requests[-1].messages
    said = [m for m in asked if m["role"] == "assistant"]
    assert said[0]["content"] == "## Review\n\n1. The helpers differ only in a constant."
    after = asked[asked.index(said[0]) + 1:]
    assert after[0]["content"].startswith("[The person stopped your reply above before you finished it.]")
    assert "Shorter, please." in json.dumps(after)


async def test_a_reply_stopped_before_its_first_word_leaves_nothing(store, data_dir, workdir):
    started = asyncio.Event()

    class SilentModel(ScriptedModel):
        async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
            started.set()
            on_call("file_write", '{"path": "a.md", "content": "half')  # a call half written is not kept
            await asyncio.sleep(60)

    session = make_session(store, data_dir, workdir, SilentModel([]))
    session.start()
    await asyncio.wait_for(started.wait(), 5)
    session.stop()
    assert await asyncio.wait_for(session.wait(), 5) == "aborted"
    assert events_of(session, AssistantMessage) == []


async def test_pause_holds_the_loop_between_steps_until_resume(store, data_dir, workdir):
    model = ScriptedModel([reply("", call("file_list")), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    session.pause()
    session.start()
    await asyncio.sleep(0.05)
    assert session.state.status == "paused" and model.requests == []
    session.resume()
    assert await session.wait() == "done"
    kinds = [r.event.kind for r in session.records]
    assert kinds.index("session_paused") < kinds.index("session_resumed") < kinds.index("assistant_message")


async def test_provider_failure_ends_with_a_clear_error(store, data_dir, workdir):
    model = ScriptedModel([ModelError("auth", "The provider refused the API key: invalid key")])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "error"
    ended = events_of(session, SessionEnded)[-1]
    assert "refused the API key" in ended.summary
    assert "refused the API key" in session.read_file("progress.md")[0]


async def test_a_provider_down_three_times_running_is_not_a_three_strike(store, data_dir, workdir):
    """Each provider failure ends the run, and the person's message once it is fixed answers it: a
    3-Strike question about it on the next message would ask what was just answered."""
    down = ModelError("connection", "Could not reach the server at http://127.0.0.1:9/v1 (Connection error): "
                      "is it running, and is the API base right?", retryable=True)
    model = ScriptedModel([down, down, down, reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "error"
    for _ in range(2):
        await session.send("The server is up again, go on.")
        assert await session.wait() == "error"
    await session.send("Now it is up.")
    assert await asyncio.wait_for(session.wait(), 10) == "done"  # not waiting on a 3-Strike question
    assert not events_of(session, HumanQuestion)
    assert [e.attempt for e in events_of(session, ErrorRecorded)] == [1, 2, 3]  # still told as the 3rd time
    assert "STRIKE" not in session.read_file("progress.md")[0]


async def test_a_run_ended_on_a_provider_error_goes_on_with_resume_from_the_step_that_failed(
        store, data_dir, workdir):
    down = ModelError("connection", "Could not reach the server at http://127.0.0.1:9/v1 (Connection error): "
                      "is it running, and is the API base right?", retryable=True)
    model = ScriptedModel([reply("", call("file_list")), down, reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "error"
    session.resume()  # the server is up again: no message needed to go on
    assert await asyncio.wait_for(session.wait(), 10) == "done"
    kinds = [r.event.kind for r in session.records]
    assert kinds.index("session_ended") < kinds.index("session_resumed")
    failed, again = model.requests[1], model.requests[2]
    assert again.messages[:len(failed.messages) - 1] == failed.messages[:-1]  # only the tail may differ
    assert not [m for m in again.messages if m["role"] == "user" and "go on" in str(m["content"]).lower()]

    session.resume()  # a run that ended otherwise (done) goes on with a message only
    assert not session.running and session.state.status == "ended:done"


async def test_text_reply_without_tools_ends_and_a_new_message_continues(store, data_dir, workdir):
    model = ScriptedModel([reply("Which file do you mean?"), reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    await session.send("notes.txt")
    assert await session.wait() == "done"
    assert [e.turn for e in events_of(session, AssistantMessage)] == [1, 2]


async def test_budget_cap_asks_and_a_continue_grants_as_much_again(store, data_dir, workdir):
    from core.events import Usage

    costly = ModelReply("", (ToolCall("c", "file_list", "{}"),), usage=Usage(prompt_tokens=400, completion_tokens=100))
    model = ScriptedModel([], default=costly)
    session = make_session(store, data_dir, workdir, model, budget_tokens=1200)
    session.start()
    question = await wait_for_question(session)

    assert question.reason == "budget" and question.options == ("continue", "stop")
    assert session.state.turn == 3 and session.state.tokens_used == 1500  # asked before a fourth call
    assert "1,500 tokens used" in question.question  # and no "$0.0000": this model has no price
    await session.answer(question.qid, "continue")
    second = await wait_for_question(session)
    assert second.reason == "budget" and session.state.turn == 6  # 1,500 + 1,200 granted → asked at 3,000
    await session.answer(second.qid, "stop")
    assert await session.wait() == "aborted"
    reopened = Session.open(store, data_dir, session.id, model)
    assert reopened.state.budget_tokens == 2700


async def test_the_budget_question_shows_where_the_work_stands_and_a_continue_grants_what_the_person_names(
        store, data_dir, workdir):
    from core.events import Usage

    costly = ModelReply("", (ToolCall("c", "file_list", "{}"),), usage=Usage(prompt_tokens=400, completion_tokens=100))
    session = make_session(store, data_dir, workdir, ScriptedModel([], default=costly), budget_tokens=1200)
    session.start()
    question = await wait_for_question(session)

    # What the person needs to decide, as at the turn threshold, and as much again offered.
    assert question.context["recent"] == ["✓ file_list"] * 3 and question.context["step"].startswith("1. [ ]")
    assert question.context["status"][0].startswith("- Phase: ")
    assert (question.context["more_tokens"], question.context["more_usd"]) == (1200, 0)
    assert "Continue (how much more?)" in question.question
    await session.answer(question.qid, "continue", "600 more tokens. Finish the listing")
    second = await wait_for_question(session)
    assert second.reason == "budget" and session.state.turn == 5  # 1,500 + 600 granted → asked at 2,100
    await session.answer(second.qid, "stop")
    assert await session.wait() == "aborted"


def test_a_budget_continue_grants_the_amount_its_text_names_for_the_caps_in_force():
    from core.agent.state import more_budget, more_budget_words

    assert more_budget("", 1200, 0.0) == (1200, 0.0)  # as much again
    assert more_budget("$2.50 more", 0, 1.0) == (0, 2.5)
    assert more_budget("50,000 more tokens and $3 more", 1000, 1.0) == (50000, 3.0)
    assert more_budget("$3 more", 1000, 1.0) == (1000, 3.0)  # the token cap: as much again
    assert more_budget("0.5. the 2 tests left", 0, 1.0) == (0, 0.5)  # a bare number, for the one cap
    assert more_budget("2", 1000, 1.0) == (1000, 1.0)  # …but not when it could be either
    assert more_budget("keep going, 3 tests left", 0, 1.0) == (0, 1.0)  # a number in the note is no grant
    assert more_budget(more_budget_words(600, 0.25), 1000, 1.0) == (600, 0.25)  # the words the window sends
    assert more_budget_words(0, 0.005) == "$0.0050 more"


def test_failures_are_counted_by_signature_and_described_by_their_message():
    from core.agent.rules import describe_failure, error_signature, failure_notice

    first = "Command failed (exit code 1)\n  File 'a.py', line 12\nNameError: name 'x' is not defined"
    second = "Command failed (exit code 1)\n  File 'a.py', line 40\nNameError: name 'y' is not defined"
    # One failure for 3-Strike, whatever the line numbers and names...
    assert error_signature("shell_run", "error", first) == error_signature("shell_run", "error", second)
    assert error_signature("shell_run", "error", first) != error_signature("file_read", "error", first)
    # ...but a reader sees what broke: the first line, and a command's last line.
    assert describe_failure("shell_run", second) == (
        "shell_run failed: Command failed (exit code 1) … NameError: name 'y' is not defined")
    assert describe_failure("", "timeout after 60 s.") == "the model failed: timeout after 60 s"
    assert describe_failure("file_read", "") == "file_read failed: (no message)"
    # A long message is cut between words, and says it was cut.
    long = "plan_update replaces the whole file, and this drops the section(s) ## Current Status, " * 3
    described = describe_failure("plan_update", long)
    assert described.endswith("…") and len(described) <= len("plan_update failed: ") + 160
    kept = described.removeprefix("plan_update failed: ").removesuffix("…")
    assert long.startswith(kept) and long[len(kept)] in " ,"  # never half a word
    # Where no card holds the whole message (the model's own failures), it is shown whole: its
    # second half says what to do.
    as_text = ("Your reply wrote a call to 'file_list' as text, so nothing was run. Make each tool call as a "
               "call. (If this goes on, the server is not turning its tool calls into calls: llama.cpp needs "
               "--jinja.)")
    assert failure_notice("", as_text) == f"the model failed: {as_text}"
    assert failure_notice("plan_update", long) == described


# A failed test run as pytest prints it: a warning first, what broke at the end.
FAILED_RUN = """Command failed with exit code 1.
/venv/lib/python3.11/site-packages/pytest_asyncio/plugin.py:306: PytestDeprecationWarning: The configuration option
  warnings.warn(PytestDeprecationWarning(_DEFAULT_FIXTURE_LOOP_SCOPE_UNSET))
F
=================================== FAILURES ===================================
_______________________________ test_empty_lines _______________________________
>       assert parse("1\\n\\n2\\n") == [1, 2]
E   ValueError: invalid literal for int() with base 10: ''
parse.py:2: ValueError
=========================== short test summary info ============================
FAILED test_parse.py::test_empty_lines - ValueError: invalid literal for int() with base 10: ''
!!!!!!!!!!!!!!!!!!!!!!!!!! stopping after 1 failures !!!!!!!!!!!!!!!!!!!!!!!!!!!
1 failed in 0.02s"""


def test_a_failed_command_is_shown_by_the_end_of_its_output_where_what_broke_is():
    from core.agent.rules import (
        error_signature,
        failure_excerpt,
        failure_lines,
        failures_grouped,
    )
    from core.events import FILES_CHANGED_LINE

    told_the_agent = f"{FAILED_RUN}\n{FILES_CHANGED_LINE}out.log]"  # what Tripane added for the agent
    lines = failure_lines(told_the_agent)
    assert lines[:2] == ["Command failed with exit code 1.", "…"]  # the warning left out, and said so
    assert "E   ValueError: invalid literal for int() with base 10: ''" in lines
    assert lines[-2:] == ["stopping after 1 failures", "1 failed in 0.02s"]  # without pytest's rules of !!!
    assert not any("PytestDeprecationWarning" in line or "out.log" in line for line in lines)
    # On one line (the turn threshold's latest steps): the first line, and the end that fits.
    short = failure_excerpt(told_the_agent, 120)
    assert short.startswith("Command failed with exit code 1. … ") and short.endswith(
        "base 10: '' · stopping after 1 failures · 1 failed in 0.02s") and len(short) <= 120
    assert "ValueError" in failure_excerpt(FAILED_RUN, 300) and "PytestDeprecation" not in failure_excerpt(FAILED_RUN, 300)
    # Any other failure reads from its start; a short one is whole.
    other = "old text not found in parse.py\nThe file has: " + "x " * 400
    assert failure_lines(other)[0] == "old text not found in parse.py" and len("".join(failure_lines(other))) <= 620
    assert failure_excerpt("No such file: 'a.txt'", 120) == "No such file: 'a.txt'"
    # The same failure three times, its time aside, is shown once; another one apart.
    again = FAILED_RUN.replace("0.02s", "0.03s")
    assert [count for _, count in failures_grouped([FAILED_RUN, again, again, "No such file"])] == [3, 1]
    assert failures_grouped([FAILED_RUN, again])[0][0][-1] == "1 failed in 0.03s"  # the latest
    # What Tripane added does not make a failure another one: 3-Strike counts it.
    assert error_signature("shell_run", "error", told_the_agent) == error_signature("shell_run", "error", FAILED_RUN)
    # The terminal's line for the failed call (tripane run) says what broke, too.
    from core.events import Record
    from core.render import render
    line = render(Record("s", 7, "2026-11-27T08:00:00Z", ToolResult("c1", "shell_run", False, told_the_agent)))
    assert line.startswith("  ✗ shell_run: Command failed with exit code 1. … ") and line.endswith("1 failed in 0.02s")
    passed = FAILED_RUN.split("\n", 1)[1].split("F\n")[0] + ("." * 80 + " [ 50%]\n") * 2 + "1 passed in 0.01s\n[exit code 0]"
    line = render(Record("s", 8, "2026-11-27T08:00:00Z", ToolResult("c2", "shell_run", True, passed)))
    assert line.startswith("  ✓ shell_run: … ") and line.endswith("1 passed in 0.01s · [exit code 0]"), line
    assert len(line) < 180 and "PytestDeprecationWarning" not in line


async def test_a_refusal_by_the_system_is_an_error_the_model_reads_not_a_tool_bug(store, data_dir, workdir, caplog):
    too_long = "x" * 300 + ".txt"  # longer than any file system allows for one name
    model = ScriptedModel([reply("", call("file_write", call_id="w", path=too_long, content="hi")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    result = [e for e in events_of(session, ToolResult) if e.call_id == "w"][0]
    assert not result.ok and result.content.startswith("The system refused:") and too_long in result.content
    assert [e.signature.split(":")[1] for e in events_of(session, ErrorRecorded)] == ["os_error"]
    assert "raised" not in caplog.text  # not logged as a bug with a traceback


async def test_a_call_approved_after_a_restart_runs_and_one_approved_before_it_is_not_repeated(store, data_dir,
                                                                                               workdir):
    def asking_session():
        model = ScriptedModel([reply("", call("shell_run", command="echo ran >> ran.txt")),
                               reply("", call("task_done", summary="ok"))])
        session = make_session(store, data_dir, workdir, model, approval="ask")
        session.start()
        return session, model

    # Tripane closed while the approval was open; reopened, the person approves: the call never began.
    session, model = asking_session()
    question = await wait_for_question(session)
    await session.close()
    reopened = Session.open(store, data_dir, session.id, model)
    await reopened.approve(question.qid, approved=True)
    assert await reopened.run() == "done"
    assert (workdir / "ran.txt").read_text(encoding="utf-8") == "ran\n"
    result = events_of(reopened, ToolResult)[0]
    assert result.ok and not events_of(reopened, ErrorRecorded)

    # Approved, then Tripane stopped before the call's result was written: it may have run, so it is
    # not run again blind; the agent is told to look first.
    (workdir / "ran.txt").unlink()
    session, model = asking_session()
    question = await wait_for_question(session)
    await session.close()
    await Session.open(store, data_dir, session.id, model).approve(question.qid, approved=True)
    reopened = Session.open(store, data_dir, session.id, model)  # the process that approved it is gone
    assert await reopened.run() == "done"
    assert not (workdir / "ran.txt").exists()
    result = events_of(reopened, ToolResult)[0]
    assert not result.ok and "effect is unknown" in result.content


HANG = f'"{sys.executable}" -c "import time; print(\'waiting for a server\', flush=True); time.sleep(60)"'


async def waiting_for_a_server(store, data_dir, workdir, *after: ModelReply) -> tuple[Session, ScriptedModel]:
    """A session whose command "hang" has said it waits for a server, and waits on."""
    model = ScriptedModel([reply("", call("shell_run", call_id="hang", command=HANG)), *after])
    session = make_session(store, data_dir, workdir, model, approval="all")
    printed = []  # what the command printed (after Tripane's line on copying the work folder)
    session.subscribe(lambda notice: isinstance(notice, ToolOutput) and printed.append(notice.text))
    session.start()

    async def until_it_waits() -> None:
        while "waiting for a server" not in "".join(printed):
            await asyncio.sleep(0.02)
    await asyncio.wait_for(until_it_waits(), 10)
    return session, model


async def test_the_person_stops_one_command_and_the_run_goes_on(store, data_dir, workdir):
    session, model = await waiting_for_a_server(store, data_dir, workdir,
                                                reply("", call("task_done", summary="gave up on the server")))
    assert session.stop_tool("hang")
    assert await asyncio.wait_for(session.wait(), 10) == "done"  # not aborted: the agent went on
    result = events_of(session, ToolResult)[0]
    assert not result.ok and result.content.startswith("Stopped by the person after")
    assert "waiting for a server" in result.content  # what it printed before
    assert "Stopped by the person" in model.requests[1].messages[-2]["content"]  # the agent read why
    assert not session.stop_tool("hang")  # it ended: nothing to stop


async def test_the_persons_stop_mid_command_closes_the_call_with_what_it_had_printed(store, data_dir, workdir):
    session, _ = await waiting_for_a_server(store, data_dir, workdir)
    session.stop()  # the whole run, not the one command
    assert await asyncio.wait_for(session.wait(), 10) == "aborted"
    result = events_of(session, ToolResult)[0]
    # Should the person go on with a message, the agent reads how far the command had got.
    assert result.content == ("Stopped by the person before this call finished.\n\n"
                              "What it had printed by then (the end):\nwaiting for a server")


async def test_a_server_the_agent_started_in_the_background_stops_when_the_run_ends(store, data_dir, workdir):
    from tests.core.tools.test_shell_and_web import BEATING, still_beating

    (workdir / "serve.py").write_text(BEATING, encoding="utf-8")
    model = ScriptedModel([reply("", call("shell_run", call_id="serve", command=f'"{sys.executable}" serve.py')),
                           reply("", call("human_ask", question="Does the page look right?", options=["yes"])),
                           reply("", call("task_done", summary="served")),
                           reply("", call("task_done", summary="not again"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    ran = asyncio.ensure_future(session.run())
    question = await wait_for_question(session, timeout=30)
    assert "still runs in the background" in events_of(session, ToolResult)[0].content
    assert await still_beating(workdir)  # the person looks at the page the server serves
    left = list((session.dir / "running").glob("left-running-*.pid"))
    assert len(left) == (0 if sys.platform == "win32" else 1)  # kept, should Tripane die before the run ends
    await session.answer(question.qid, "yes")
    assert await ran == "done"
    if sys.platform != "win32":
        assert not await still_beating(workdir)
    assert not any((session.dir / "running").iterdir())  # stopped by this run: nothing for the next
    if sys.platform == "win32":  # (there what it left is the agent's to stop: nothing was)
        return
    # Said, after the end: the person who looks for the server learns why it is gone, and so does
    # the agent, should the session go on.
    command = f'"{sys.executable}" serve.py'
    [stopped] = [record for record in session.records if isinstance(record.event, BackgroundStopped)]
    ended = next(record for record in session.records if isinstance(record.event, SessionEnded))
    assert stopped.event == BackgroundStopped((command,)) and stopped.seq > ended.seq  # (after the end)
    assert render(stopped) == f"  ⏹ stopped what `{command}` had left running in the background, as the " \
                                          "run ended"
    progress_text = (session.dir / "progress.md").read_text(encoding="utf-8")
    assert progress_text.endswith(f"⏹ Stopped with the run: what commands had left running in the background\n"
                                  f"- `{command}`\n")
    await session.send("Start it again, please.")
    assert await session.run() == "done"
    told = [m["content"] for m in model.requests[-1].messages if m["role"] == "user"]
    assert (f"[Your last run has ended, and what your commands had left running in the background was stopped with "
            f"it: what `{command}` started. Start it again if you still need it.]") in told


async def test_a_reply_cut_off_at_the_output_limit_is_neither_run_half_nor_taken_as_the_answer(store, data_dir,
                                                                                             workdir):
    half_a_file = ToolCall("w1", "file_write", '{"path": "big.py", "content": "def main():\\n    print(\'')
    model = ScriptedModel([
        ModelReply("", (half_a_file,), finish_reason="length"),  # the output limit, mid-arguments
        ModelReply("The answer is that the config is read in two places, first in", finish_reason="length"),
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    errors = events_of(session, ErrorRecorded)
    assert [e.signature.split(":")[1] for e in errors][:2] == ["cut_off_arguments", "cut_off"]
    assert "write a long file in parts" in errors[0].message and not (workdir / "big.py").exists()
    assert "not taken as your final answer" in errors[1].message
    assert events_of(session, SessionEnded)[-1].summary == "ok"


async def test_a_call_written_as_text_is_not_taken_as_the_final_answer(store, data_dir, workdir):
    as_text = '<tool_call>\n{"name": "file_list", "arguments": {"path": "."}}\n</tool_call>'
    model = ScriptedModel([ModelReply(as_text), reply("", call("task_done", summary="listed"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    error = events_of(session, ErrorRecorded)[0]
    assert error.signature.split(":")[1] == "call_as_text" and "'file_list' as text" in error.message
    assert events_of(session, SessionEnded)[-1].summary == "listed"
    assert "'file_list' as text" in str(model.requests[-1].messages)  # the agent was told


async def test_a_step_announced_and_not_taken_is_not_the_final_answer_and_a_narrating_model_reaches_the_person(
        store, data_dir, workdir):
    model = ScriptedModel([ModelReply("I'll start by listing the files in the project."),
                           reply("", call("task_done", summary="listed"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    error = events_of(session, ErrorRecorded)[0]
    assert error.signature.split(":")[1] == "announced"
    assert events_of(session, SessionEnded)[-1].summary == "listed"  # not the announcement
    assert "said what you will do next but made no tool call" in str(model.requests[-1].messages)

    # A model that only ever narrates: at the strike limit the person is asked, instead of a run
    # that ends "done" having done nothing.
    narrator = ScriptedModel([], default=ModelReply("Let me read the task plan first."))
    session = make_session(store, data_dir, workdir, narrator)
    session.start()
    question = await wait_for_question(session)
    assert question.reason == "three_strike" and session.state.turn == 3
    session.stop()
    await session.wait()


def test_an_option_typed_on_the_terminal_is_taken_by_its_name_first_then_its_number_or_label():
    from core.agent.options import option_typed, options_typed
    from core.events import HumanQuestion

    numbers = HumanQuestion("q1", "ask_user", "Which port?", ("2", "1"))
    assert option_typed("1", numbers) == "1" and option_typed("2", numbers) == "2"  # names, not places
    approval = HumanQuestion("q2", "approval", "Allow shell_run?", ("approve", "deny", "always_call", "always"),
                             {"tool": "shell_run", "arguments": '{"command": "make"}'})
    assert [option_typed(t, approval) for t in ("3", "Always allow shell_run", " DENY ", "yes")] == [
        "always_call", "always", "deny", ""]
    assert options_typed(approval) == ("1. approve / 2. deny / 3. always_call: always allow this command in this "
                                       "folder / 4. always: always allow shell_run")
    # The terminal's line for the answer says it as the question listed it.
    from core.events import HumanAnswer, Record
    from core.render import render
    line = render(Record("s", 9, "2026-11-27T08:00:00Z", HumanAnswer("q3", "retry_with_hint", "skip blank lines")))
    assert line == "  answer to q3: Retry with a hint — skip blank lines"


async def test_progress_md_shows_a_calls_arguments_with_their_letters_not_escapes(store, data_dir, workdir):
    model = ScriptedModel([reply("", call("findings_add", title="空行导致崩溃", body="int('') 会抛出 ValueError")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    progress = session.read_file("progress.md")[0]
    assert '"title": "空行导致崩溃"' in progress and "\\u7a7a" not in progress


async def test_progress_md_has_the_persons_messages_that_steered_the_agent(store, data_dir, workdir):
    # Without them, a run going on after "Session ended: done" read as if the agent went on alone.
    model = ScriptedModel([reply("", call("task_done", summary="first")), reply("", call("task_done", summary="again"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    await session.send("Also handle blank lines; the key is sk-proj-abcdefghijklmnopqrstuvwx")
    assert await session.wait() == "done"
    progress = session.read_file("progress.md")[0]
    wrote = progress.index("💬 The person wrote\nAlso handle blank lines; the key is «key masked»\n")
    assert progress.index("Session ended: done\nfirst") < wrote < progress.index("Session ended: done\nagain")
    assert "sk-proj-" not in progress
