"""The review of a day's work across its tasks (seed 002 §3.1, the third trigger): real daily logs,
real kept reports, the scripted model at the core/llm.py boundary (and a scripted server for the
command line, through the real litellm path)."""

from __future__ import annotations

import datetime
import json

import pytest

from core.events import Usage
from core.llm import ModelError, ModelReply
from core.memory import strategies
from core.memory.layers import Episode
from core.memory.reflection import parse
from core.memory.review import CannotReview, day_to_review, review_day, tasks_in
from core.scripted import ScriptedModel
from core.spending import report, spending
from core.store import Store
from tests.core.memory.test_reflection import STRATEGY, report_yaml

DAY = datetime.date(2026, 11, 25)


def log_tasks(files, day: datetime.date, *sessions: str) -> None:
    """Tasks of `day` in the daily log of `files` (a MemoryFiles)."""
    for i, session in enumerate(sessions):
        episode = Episode(title=f"Fix the flaky test {i}", asked=f"fix test {i}", done="fixed after reading the config twice",
                          failed=("file_read failed: No such file: 'conf/app.yaml'",), tool_calls=12, errors=1,
                          minutes=9, session_id=session, status="done")
        files.append_episode(episode, datetime.datetime.combine(day, datetime.time(9 + i)))


def reviewer(*replies) -> ScriptedModel:
    return ScriptedModel([], side_replies=list(replies))


async def test_a_days_tasks_are_reviewed_together_and_the_report_is_kept_costed_and_digested(long_memory):
    log_tasks(long_memory.files, DAY, "s1", "s2", "s3")
    model = reviewer(ModelReply(report_yaml(), usage=Usage(3000, 400, 0, 0.004)))
    reviewed = await review_day(long_memory, model, [("cheap-model", None)], DAY)

    request = model.requests[0]
    assert request.model == "cheap-model" and not request.tools
    assert "across all its tasks" in request.messages[0]["content"]
    content = request.messages[1]["content"]
    assert content.startswith("## The log of 2026-11-25\n# 2026-11-25\n") and "session s2" in content
    assert "## Lessons the agent already follows\n(none yet)" in content
    assert reviewed.path.name == "day-2026-11-25-1.yaml" and reviewed.report == parse(report_yaml())
    kept = reviewed.path.read_text(encoding="utf-8")
    assert kept.startswith("# Review of the work of 2026-11-25 (3 tasks), ") and "session: day-2026-11-25" in kept
    costs = [json.loads(line) for line in (long_memory.files.root / "reviews.jsonl").read_text().splitlines()]
    assert [(c["day"], c["model"], c["usage"]["cost_usd"]) for c in costs] == [("2026-11-25", "cheap-model", 0.004)]
    today = long_memory.files.daily_path(datetime.date.today()).read_text(encoding="utf-8")
    assert "– Reflection on: the work of 2026-11-25\n- Outcome: achieved" in today
    assert "- session day-2026-11-25; the report is day-2026-11-25-1.yaml in the reflections folder" in today
    # The day is reviewed: nothing is left to review until another day has tasks enough.
    with pytest.raises(CannotReview, match="no day left to review"):
        day_to_review(long_memory, today=DAY)


async def test_a_reviews_strategy_counts_as_one_more_source_toward_a_lesson(long_memory):
    log_tasks(long_memory.files, DAY, "s1", "s2")
    for session in ("s1", "s2"):  # two sessions' reflections suggested it already
        strategies.save(long_memory, session, "m", report_yaml(), parse(report_yaml()))
    assert strategies.promote_due(long_memory) == []
    reviewed = await review_day(long_memory, reviewer(ModelReply(report_yaml())), [("m", None)], DAY)
    promotion, = reviewed.promoted
    assert promotion.lesson is not None and STRATEGY in promotion.lesson.text
    assert promotion.candidate.sessions == ["s1", "s2", "day-2026-11-25"]


async def test_the_day_to_review_is_the_latest_with_tasks_enough_and_none_yet(long_memory):
    log_tasks(long_memory.files, DAY - datetime.timedelta(days=2), "a1", "a2")
    log_tasks(long_memory.files, DAY - datetime.timedelta(days=1), "b1", "b2")
    log_tasks(long_memory.files, DAY, "c1")  # one task: no pattern across tasks to find
    assert tasks_in(long_memory.files.daily_path(DAY).read_text(encoding="utf-8")) == ["c1"]
    assert day_to_review(long_memory, today=DAY) == DAY - datetime.timedelta(days=1)
    with pytest.raises(CannotReview, match="The log of 2026-11-25 has 1 task: a review looks for what recurs"):
        await review_day(long_memory, reviewer(), [("m", None)], DAY)
    await review_day(long_memory, reviewer(ModelReply(report_yaml())), [("m", None)])
    assert day_to_review(long_memory, today=DAY) == DAY - datetime.timedelta(days=2)


async def test_a_reply_that_is_no_report_is_kept_as_it_came_and_still_costed(long_memory):
    log_tasks(long_memory.files, DAY, "s1", "s2")
    reviewed = await review_day(long_memory, reviewer(ModelReply("The day went fine.", usage=Usage(900, 20, 0, 0.001))),
                                [("m", None)], DAY)
    assert reviewed.report is None and reviewed.path.name == "day-2026-11-25-1.unreadable.txt"
    assert "The day went fine." in reviewed.path.read_text(encoding="utf-8")
    assert (long_memory.files.root / "reviews.jsonl").exists()
    with pytest.raises(CannotReview):  # reviewed all the same: not asked again unless the person says which day
        day_to_review(long_memory, today=DAY)


async def test_when_the_summary_model_fails_the_model_itself_reviews_and_when_both_do_it_is_said(long_memory):
    log_tasks(long_memory.files, DAY, "s1", "s2")
    writers = [("anthropic/claude-haiku-4-5", None), ("openai/main", "http://127.0.0.1:8080/v1")]
    model = reviewer(ModelError("no_key", "No API key for anthropic"), ModelReply(report_yaml()))
    reviewed = await review_day(long_memory, model, writers, DAY)
    assert reviewed.model == "openai/main" and [r.model for r in model.requests] == [w[0] for w in writers]
    log_tasks(long_memory.files, DAY + datetime.timedelta(days=1), "t1", "t2")
    failing = reviewer(ModelError("no_key", "No API key for anthropic"), ModelError("server", "it broke"))
    with pytest.raises(CannotReview, match="No model could review the day: anthropic/claude-haiku-4-5: No API key"):
        await review_day(long_memory, failing, writers, DAY + datetime.timedelta(days=1))


async def test_spending_counts_the_reviews_apart_from_the_sessions(long_memory, data_dir):
    log_tasks(long_memory.files, DAY, "s1", "s2")
    await review_day(long_memory, reviewer(ModelReply(report_yaml(), usage=Usage(3000, 400, 0, 0.004))),
                     [("cheap-model", None)], DAY)
    (long_memory.files.root / "reviews.jsonl").open("a", encoding="utf-8").write("{damaged\n")
    spent = spending(Store(data_dir / "tripane.db"), None, long_memory.files.root)
    assert spent.total.requests == 1 and spent.total.cost_usd == pytest.approx(0.004)
    assert spent.by_model["cheap-model"].tokens == 3400
    assert spent.titles == {"day-2026-11-25": "Review of the work of 2026-11-25"}
    assert spent.over() == "0 sessions and 1 day's review"
    assert "  day-2026-11-25  " in report(spent)  # `tripane spending` lists it too
    assert spending(Store(data_dir / "tripane.db")).total.requests == 0  # without the memory folder: sessions only


def test_the_command_line_reviews_a_day_through_the_real_model_path(data_dir):
    from core.memory.longterm import LongTermMemory
    from tests.core.test_cli import finish, tripane
    from tests.support.openai_server import ScriptedServer, Turn

    memory = LongTermMemory(data_dir)
    log_tasks(memory.files, DAY, "s1", "s2")
    memory.close()
    with ScriptedServer(lambda request: Turn(text=report_yaml())) as server:
        args = ("--model", "openai/scripted", "--api-base", server.url)
        code, out, err = finish(tripane("memory", "review", *args, data_dir=data_dir))
        assert code == 0, err
        assert "Reviewing the latest day not reviewed yet (one request to openai/scripted)…" in err
        assert out.startswith("✦ review of the work of 2026-11-25 by openai/scripted "
                              "(memory/reflections/day-2026-11-25-1.yaml")
        assert "**Achieved.** The tests pass again." in out and STRATEGY in out
        assert "The log of 2026-11-25" in server.requests[0]["messages"][1]["content"]
        code, _, err = finish(tripane("memory", "review", *args, data_dir=data_dir))
    assert code == 1 and "tripane: memory review: There is no day left to review" in err
    code, _, err = finish(tripane("memory", "review", "--day", "25/11/2026", *args, data_dir=data_dir))
    assert code == 2 and "tripane: memory review: --day takes a date as YYYY-MM-DD, not '25/11/2026'" in err


def test_a_run_of_the_command_line_reviews_a_finished_day_when_settings_say_so(data_dir, tmp_path):
    from core.memory.longterm import LongTermMemory
    from core.user_settings import write_settings
    from tests.core.test_cli import finish, tripane
    from tests.support.openai_server import ScriptedServer, Turn, tool

    memory = LongTermMemory(data_dir)
    log_tasks(memory.files, DAY, "s1", "s2")
    memory.close()
    work, config = tmp_path / "work", tmp_path / "config"
    work.mkdir()

    def route(request):
        return Turn(tool_calls=(tool("task_done", summary="ok"),)) if request.get("tools") else Turn(text=report_yaml())

    with ScriptedServer(route) as server:
        settings = {"model": "openai/scripted", "api_base": server.url, "review_days": 0}
        write_settings(settings, config / "settings.json")
        env = {"TRIPANE_CONFIG_DIR": str(config)}
        code, out, err = finish(tripane("run", "Check", "--workdir", str(work), data_dir=data_dir, env=env))
        assert code == 0, err
        assert "review" not in out and not any(not r.get("tools") for r in server.requests)  # not asked for

        write_settings({**settings, "review_days": 1}, config / "settings.json")
        code, out, err = finish(tripane("run", "Check again", "--workdir", str(work), data_dir=data_dir, env=env))
        assert code == 0, err
        assert "Settings say to review each day's work once it is over: 2026-11-25 has no review yet." in err
        assert "✦ review of the work of 2026-11-25 by openai/scripted" in out and STRATEGY in out
        code, out, err = finish(tripane("run", "Once more", "--workdir", str(work), data_dir=data_dir, env=env))
        assert code == 0 and "review" not in out + err  # reviewed already; today is not over
    assert sum(not r.get("tools") for r in server.requests) == 1


def test_a_task_of_one_tool_call_counts_among_the_days_tasks(long_memory):
    from core.memory.review import tasks_in

    for calls, session in ((1, "s1"), (1_200, "s2")):
        long_memory.files.append_episode(Episode(title="t", asked="a", done="d", failed=(), tool_calls=calls, errors=0,
                                                 minutes=1, session_id=session, status="done"),
                                         datetime.datetime.combine(DAY, datetime.time(9)))
    log = long_memory.files.daily_path(DAY).read_text(encoding="utf-8")
    assert tasks_in(log) == ["s1", "s2"]
