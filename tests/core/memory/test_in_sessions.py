"""Long-term memory through real sessions: the tools, the recall at task start, the episode at the end."""

from __future__ import annotations

import asyncio
from datetime import date

from core.events import MemoryRecalled, ToolResult
from core.memory.layers import Episode
from core.memory.longterm import LongTermMemory
from core.render import diagnosis_note, recall_note
from core.scripted import ScriptedModel, call, reply
from core.session import Session
from core.store import Store
from tests.core.helpers import events_of, make_session, wait_for_question


async def test_a_fact_remembered_in_one_session_is_found_in_a_later_one(data_dir, workdir, embedder):
    store = Store(data_dir / "tripane.db")
    memory = LongTermMemory(data_dir, embedder)
    first_model = ScriptedModel([
        reply("", call("memory_remember", fact="The staging database listens on port 6543, not 5432",
                       kind="fact")),
        reply("", call("task_done", summary="noted the port")),
    ])
    first = make_session(store, data_dir, workdir, first_model, task="Find the staging database port",
                         long_memory=memory)
    assert await first.run() == "done"
    assert events_of(first, ToolResult)[0].ok
    memory.close()
    store.close()

    # A later run of Tripane: a new store connection, a new index object over the same folder.
    store = Store(data_dir / "tripane.db")
    memory = LongTermMemory(data_dir, embedder)
    second_model = ScriptedModel([
        reply("", call("memory_search", query="which port does the staging db use")),
        reply("", call("task_done", summary="found it")),
    ])
    second = make_session(store, data_dir, workdir, second_model, task="Connect to staging", long_memory=memory)
    assert await second.run() == "done"
    result = events_of(second, ToolResult)[0]
    assert result.ok and "port 6543" in result.content and f"source: {first.id}" in result.content
    # The Session façade searches the same memory.
    hits = await second.search_memory("staging database port", top_k=3)
    assert any(h.path == "MEMORY.md" and "6543" in h.text for h in hits)
    # The first session's episode is in the daily log, and found as well.
    assert any(h.path.startswith("daily/") and "Find the staging database port" in h.text for h in hits)
    memory.close()
    store.close()


async def test_a_secret_sent_to_memory_remember_is_an_error_the_agent_sees(store, data_dir, workdir, long_memory):
    model = ScriptedModel([
        reply("", call("memory_remember", fact="The API key is sk-proj-Zx8Qp2Lm9Rt5Vb3Nk7Hg1Jd6", kind="fact")),
        reply("", call("task_done", summary="ok")),
    ])
    session = make_session(store, data_dir, workdir, model, long_memory=long_memory)
    assert await session.run() == "done"
    result = events_of(session, ToolResult)[0]
    assert not result.ok and "Secrets never go into memory" in result.content
    assert "sk-proj" not in long_memory.files.memory_path.read_text(encoding="utf-8")


async def test_matching_skills_and_recent_logs_are_appended_at_task_start_never_in_the_prefix(
        store, data_dir, workdir, long_memory):
    long_memory.save_skill("Fix failing tests", ["the task asks to fix failing unit tests", "pytest reports failures"],
                           ["Run the failing test alone", "Fix the cause", "Run the whole suite"], ["shell_run"],
                           source="s0")
    model = ScriptedModel([reply("", call("task_done", summary="fixed"))])
    session = make_session(store, data_dir, workdir, model, task="Our pytest run shows 3 failures, repair them",
                           long_memory=long_memory)
    assert await session.run() == "done"

    recalled = events_of(session, MemoryRecalled)
    assert len(recalled) == 1 and recalled[0].skills == ("fix-failing-tests",)
    messages = model.requests[0].messages
    assert "Fix failing tests" not in messages[0]["content"]  # the system prompt (prefix) is untouched
    recall_at = next(i for i, m in enumerate(messages) if "Skill to follow: Fix failing tests" in str(m["content"]))
    task_at = next(i for i, m in enumerate(messages) if "Our pytest run shows" in str(m["content"]))
    assert messages[recall_at]["role"] == "user" and recall_at > task_at
    assert "1. Run the failing test alone" in messages[recall_at]["content"]

    # After the task: the episode is in today's daily log and the skill's record counts the success.
    daily = long_memory.files.daily_path(date.today()).read_text(encoding="utf-8")
    assert "Our pytest run shows 3 failures" in daily and "- Done: fixed" in daily
    assert f"session {session.id}" in daily and "ended done" in daily
    skill = long_memory.files.skills()[0]
    assert (skill.successes, skill.uses) == (1, 1)

    # A second task the next moment sees today's log listed.
    model2 = ScriptedModel([reply("", call("task_done", summary="ok"))])
    later = make_session(store, data_dir, workdir, model2, task="Write the release notes", long_memory=long_memory)
    assert await later.run() == "done"
    text = events_of(later, MemoryRecalled)[0].text
    assert f"daily/{date.today():%Y-%m-%d}.md" in text and "Skill" not in text


async def test_a_memory_failure_at_task_start_is_reported_and_the_task_goes_on(store, data_dir, workdir,
                                                                                 long_memory, monkeypatch):
    def broken(task):
        raise OSError("disk unreadable")

    monkeypatch.setattr(long_memory, "recall_for_task", broken)
    model = ScriptedModel([reply("", call("task_done", summary="done anyway"))])
    session = make_session(store, data_dir, workdir, model, long_memory=long_memory)
    assert await session.run() == "done"
    assert events_of(session, MemoryRecalled)[0].text == ""
    assert "Long-term memory unavailable" in session.read_file("progress.md")[0]
    assert "disk unreadable" in session.read_file("progress.md")[0]


async def test_a_reopened_session_does_not_recall_twice(store, data_dir, workdir, long_memory):
    long_memory.files.append_episode(Episode(title="t", asked="a", done="d", failed=(), tool_calls=1, errors=0,
                                             minutes=1, session_id="s", status="done"))
    model = ScriptedModel([reply("", call("human_ask", question="Which branch?"))])
    session = make_session(store, data_dir, workdir, model, long_memory=long_memory)
    session.start()
    question = await wait_for_question(session)
    await session.close()
    reopened = Session.open(store, data_dir, session.id,
                            ScriptedModel([reply("", call("task_done", summary="ok"))]), long_memory=long_memory)
    await reopened.answer(question.qid, "main")
    assert await reopened.run() == "done"
    assert len(events_of(reopened, MemoryRecalled)) == 1


async def test_a_burst_that_ends_in_a_3_strike_stop_is_logged_and_the_task_end_logs_only_the_rest(
        store, data_dir, workdir, long_memory):
    missing = reply("", call("file_read", path="nope.txt"))
    model = ScriptedModel([reply("", call("file_list")), missing, missing, missing,
                           reply("", call("task_done", summary="found another way"))],
                          side_replies=[reply('{"goal": "g", "tried": "t", "wrong": "w", "differently": "d", '
                                              '"ask_human": "a"}')])
    session = make_session(store, data_dir, workdir, model, task="Read the notes", long_memory=long_memory)
    session.start()
    question = await wait_for_question(session)
    daily = long_memory.files.daily_path(date.today())
    text = daily.read_text(encoding="utf-8")
    assert "Read the notes (in progress: waiting: 3-Strike)" in text
    assert "- 4 tool calls, 3 errors" in text
    assert "- Failed: file_read failed: No such file: 'nope.txt' (3×)" in text  # once, counted, in plain words
    await session.answer(question.qid, "retry_with_hint", "use file_list")
    assert await session.wait() == "done"
    entries = daily.read_text(encoding="utf-8").split("\n## ")
    assert len(entries) == 3  # the day's title, the burst, the end
    assert "- 1 tool call, 0 errors" in entries[2] and "ended done" in entries[2]


async def test_a_task_that_ends_before_long_term_memory_loads_still_gets_its_episode(
        store, data_dir, workdir, long_memory):
    # The window loads long-term memory after its first frame; a quick task may end before it lands.
    model = ScriptedModel([reply("", call("file_list")), reply("", call("task_done", summary="listed the files"))])
    session = make_session(store, data_dir, workdir, model, task="List what is in the folder")
    assert await session.run() == "done"
    daily = long_memory.files.daily_path(date.today())
    assert not daily.exists() or "List what is in the folder" not in daily.read_text(encoding="utf-8")

    session.attach_memory(long_memory)
    text = daily.read_text(encoding="utf-8")
    assert "List what is in the folder" in text and "- Done: listed the files" in text and "ended done" in text
    session.attach_memory(long_memory)  # again (another window's load): written once
    assert daily.read_text(encoding="utf-8").count("- Done: listed the files") == 1


async def test_a_lesson_that_bears_on_a_new_task_is_recalled_at_its_start_and_others_are_not(
        store, data_dir, workdir, long_memory):
    long_memory.remember("Cache the pip downloads in CI (when: the CI takes long)", kind="lesson", source="s1")
    long_memory.remember("Write the release notes from merged pull requests (when: preparing a release)",
                         kind="lesson", source="s2")
    long_memory.remember("Staging listens on port 6543", kind="fact", source="s3")  # a fact, not a lesson
    model = ScriptedModel([reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, task="Why does CI take forty minutes?",
                           long_memory=long_memory)
    assert await session.run() == "done"
    text = events_of(session, MemoryRecalled)[0].text
    assert "## Lessons that may apply (MEMORY.md)\n- [m1] Cache the pip downloads in CI" in text
    assert "release notes" not in text and "6543" not in text
    assert "Lessons that may apply" not in model.requests[0].messages[0]["content"]  # appended, never the prefix
    assert events_of(session, MemoryRecalled)[0].lessons == ("m1",)
    assert "- Lessons quoted: m1" in session.read_file("progress.md")[0]
    assert recall_note(events_of(session, MemoryRecalled)[0]) == "lessons quoted: m1"

    model = ScriptedModel([reply("", call("task_done", summary="ok"))])
    later = make_session(store, data_dir, workdir, model, task="Translate the README into French",
                         long_memory=long_memory)
    assert await later.run() == "done"
    assert "Lessons that may apply" not in (events_of(later, MemoryRecalled)[0].text or "")


async def test_research_reports_are_kept_in_the_daily_log_where_a_later_search_finds_them(store, data_dir, workdir,
                                                                                          long_memory):
    from tests.core.agent.test_research import BILLING, delegate, routed

    (workdir / "billing.py").write_text(BILLING, encoding="utf-8")
    report = "## Where\nTotals are rounded per line in billing.py:2, before summing (drift-7731).\n\nNothing else."
    model = routed([delegate(), reply("", call("task_done", summary="found it"))],
                   [reply("", call("file_read", call_id="h1", path="billing.py")), reply(report)])
    session = make_session(store, data_dir, workdir, model, long_memory=long_memory)
    assert await session.run() == "done"

    daily = long_memory.files.daily_path(date.today()).read_text(encoding="utf-8")
    entry = daily.split("– Research: Where are totals rounded?\n", 1)[1]
    assert entry.startswith(f"- Asked: Where are totals rounded? (asked by the agent)\n- 2 steps, 1 read; session "
                            f"{session.id}\n\n> ## Where\n> Totals are rounded per line in billing.py:2, before "
                            "summing (drift-7731).\n>\n> Nothing else.\n")
    hits = long_memory.search("drift-7731", mode="keyword")
    assert hits and hits[0].path == f"daily/{date.today():%Y-%m-%d}.md"

    await session.ask_helper("What rounds the totals?")  # the person's own question, answered from the same script
    daily = long_memory.files.daily_path(date.today()).read_text(encoding="utf-8")
    assert "– Research: What rounds the totals?\n- Asked: What rounds the totals? (asked by the person)\n- 1 step, " \
           "0 reads" in daily


async def test_what_the_person_was_asked_and_answered_goes_to_the_daily_log_and_outlives_its_summary(
        store, data_dir, workdir, long_memory):
    from datetime import timedelta

    model = ScriptedModel([
        reply("", call("human_ask", question="Which date format should the report use?", options=["ISO", "US"])),
        reply("", call("shell_run", command="echo ok")),
        reply("", call("shell_run", command="rm -rf build")),
        reply("", call("task_done", summary="dates rewritten")),
    ])
    session = make_session(store, data_dir, workdir, model, task="Rewrite the report's dates", approval="ask",
                           long_memory=long_memory)
    session.start()
    asked = []
    for choice, text in (("ISO", "the finance import reads ISO"), ("approve", ""), ("deny", "never delete build/")):
        question = await wait_for_question(session)
        while question.qid in asked:  # the answer just given is still being taken in
            await asyncio.sleep(0.005)
            question = await wait_for_question(session)
        asked.append(question.qid)
        await session.answer(question.qid, choice, text)
    assert await session.wait() == "done"

    daily = long_memory.files.daily_path(date.today())
    lines = [line for line in daily.read_text(encoding="utf-8").splitlines() if line.startswith("- The person was asked")]
    assert lines[0] == ("- The person was asked: Which date format should the report use? — ISO: the finance import "
                        "reads ISO")
    assert lines[1].startswith("- The person was asked: ") and "rm -rf build" in lines[1]
    assert lines[1].endswith(" — Deny: never delete build/")
    assert len(lines) == 2  # the plain approval of `echo ok` says nothing about the work
    hits = long_memory.search("which date format does the report use", mode="keyword")
    assert hits and "finance import reads ISO" in hits[0].text

    long_memory.summarise_old_logs(today=date.today() + timedelta(days=40))
    summary = daily.read_text(encoding="utf-8")
    assert "(Summary; the full log is daily/archive/" in summary and lines[0] in summary and lines[1] in summary


async def test_a_failure_diagnosed_as_it_happens_again_is_looked_up_in_long_term_memory(
        store, data_dir, workdir, long_memory):
    from core.events import ErrorDiagnosed
    from core.llm import ModelReply

    daily = data_dir / "memory" / "daily"
    daily.mkdir(parents=True, exist_ok=True)
    (daily / "2026-11-20.md").write_text(
        "# 2026-11-20\n\n## Fix the report\nfile_read failed: No such file: 'missing.txt'. The data moved to "
        "archive/data.txt when the folder was reorganised.\n", encoding="utf-8")
    missing = reply("", call("file_read", path="missing.txt"))
    model = ScriptedModel([missing, missing, reply("", call("task_done", summary="ok"))],
                          side_replies=[ModelReply("root_cause: moved\nkind: A\ntry_instead: read archive/data.txt")])
    session = make_session(store, data_dir, workdir, model, long_memory=long_memory)
    assert await session.run() == "done"

    [diagnosed] = events_of(session, ErrorDiagnosed)
    assert "daily/2026-11-20.md:3" in diagnosed.memory
    asked = next(r for r in model.requests if not r.tools and "You diagnose" in r.messages[0]["content"])
    remembered = asked.messages[1]["content"].split("## What long-term memory holds on it\n", 1)[1]
    assert "— daily/2026-11-20.md:3" in remembered and "archive/data.txt" in remembered


async def test_a_diagnosis_goes_to_the_daily_log_where_the_next_failure_like_it_finds_it(
        store, data_dir, workdir, long_memory):
    from core.events import ErrorDiagnosed
    from core.llm import ModelReply

    missing = reply("", call("file_read", path="reports/q3.csv"))
    first = ScriptedModel([missing, missing, reply("", call("task_done", summary="found it under exports/"))],
                          side_replies=[ModelReply("root_cause: the reports are written to exports/, not reports/\n"
                                                   "kind: A\ntry_instead: read exports/q3.csv")])
    session = make_session(store, data_dir, workdir, first, task="Total the Q3 report", long_memory=long_memory)
    assert await session.run() == "done"
    log = next((data_dir / "memory" / "daily").glob("*.md")).read_text(encoding="utf-8")
    assert ("- Diagnosed: Tripane's diagnosis of a failure that happened twice — file_read failed: No such file: "
            "'reports/q3.csv'. Root cause (missing information): the reports are written to exports/, not reports/. "
            "Try instead: read exports/q3.csv.\n") in log

    # A later task fails the same way: its diagnosis is shown what was found the first time.
    missing = reply("", call("file_read", path="reports/q4.csv"))
    second = ScriptedModel([missing, missing, reply("", call("task_done", summary="ok"))],
                           side_replies=[ModelReply("root_cause: as before\nkind: A\ntry_instead: read exports/q4.csv")])
    later = make_session(store, data_dir, workdir, second, task="Total the Q4 report", long_memory=long_memory)
    assert await later.run() == "done"
    asked = next(r for r in second.requests if not r.tools and "You diagnose" in r.messages[0]["content"])
    remembered = asked.messages[1]["content"].split("## What long-term memory holds on it\n", 1)[1]
    assert "the reports are written to exports/, not reports/" in remembered
    assert events_of(later, ErrorDiagnosed)[0].memory[0].startswith("daily/")
    shown = diagnosis_note(events_of(later, ErrorDiagnosed)[0])
    assert "(by scripted; long-term memory shown: daily/" in shown  # where the person can read it too
    # and a month on, the log's summary keeps it
    long_memory.summarise_old_logs(today=date.today().replace(year=date.today().year + 1))
    summary = next((data_dir / "memory" / "daily").glob("*.md")).read_text(encoding="utf-8")
    assert "- Diagnosed: Tripane's diagnosis" in summary and "(Summary; the full log" in summary
