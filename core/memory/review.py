"""The review of a day's work (seed 002, section 3.1, the third trigger): one request reads a day's
log across its tasks, to find what a reflection on one task cannot, the patterns that recur from
task to task ("three of five tasks spent most of their turns reading the same config").

A review is a reflection whose subject is a day: its report has the five parts (reflection.py), is
kept beside the reflections as `day-YYYY-MM-DD-<n>.yaml`, and its strategies count toward lessons
as one more source, as a session's reflection does (strategies.py). Its digest goes to today's log.
It belongs to no session, so what it cost is written to memory/reviews.jsonl, which Spending reads.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from core.events import Usage
from core.llm import ModelClient, ModelRequest, is_ollama
from core.memory.longterm import LongTermMemory
from core.memory.reflection import (
    TRACE_CHARS,
    ReflectionUnreadable,
    Report,
    digest,
    fit_lines,
    parse,
)
from core.paths import resource_text
from core.providers import model_window
from core.side_writers import first_reply
from core.spending import REVIEW, REVIEW_COSTS

MIN_TASKS = 2  # a day with fewer has no pattern across tasks to find
_TASK_LINE = re.compile(r"^- [\d,]+ tool calls?, .*; session (\S+)$", re.M)  # layers.write_episode
_REVIEWED = re.compile(re.escape(REVIEW) + r"(\d{4}-\d{2}-\d{2})-\d+\.")  # its kept report


class CannotReview(ValueError):
    """Nothing to review, or no model could: said in words for the person."""


@dataclass(frozen=True)
class Reviewed:
    day: datetime.date
    path: Path  # the kept report (or the reply as it came, .unreadable.txt)
    report: Report | None
    model: str
    usage: Usage
    promoted: list  # strategies.Promotion: the lessons its strategies made


def tasks_in(log: str) -> list[str]:
    """The sessions a day's log has task entries of (a reflection's or research's entry is none)."""
    return list(dict.fromkeys(_TASK_LINE.findall(log)))


def reviewed_days(memory: LongTermMemory) -> set[datetime.date]:
    from core.memory.strategies import reflections_dir

    folder = reflections_dir(memory)
    found = (_REVIEWED.match(path.name) for path in folder.glob(f"{REVIEW}*")) if folder.is_dir() else ()
    return {datetime.date.fromisoformat(match.group(1)) for match in found if match}


def day_to_review(memory: LongTermMemory, today: datetime.date | None = None) -> datetime.date:
    """The latest day, today included, with tasks enough for a review and none yet. Raises CannotReview."""
    today = today or datetime.date.today()
    done = reviewed_days(memory)
    days = sorted((datetime.date.fromisoformat(p.stem) for p in memory.files.daily_dir.glob("????-??-??.md")),
                  reverse=True) if memory.files.daily_dir.is_dir() else []
    for day in days:
        if day <= today and day not in done and len(tasks_in(_log(memory, day))) >= MIN_TASKS:
            return day
    raise CannotReview(f"There is no day left to review: a review looks across {MIN_TASKS} tasks or more of one "
                       "day, and each such day in the daily logs has its review already.")


def _log(memory: LongTermMemory, day: datetime.date) -> str:
    path = memory.files.daily_path(day)
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def review_writers(model: str | None = None, api_base: str | None = None) -> list[tuple[str, str | None]]:
    """Who reviews from the command line: `model` at `api_base`, else the summary model chosen in
    Settings, then Settings' model. Raises ValueError when there is none."""
    from core.side_writers import chosen_then_own
    from core.user_settings import SHARED, read_settings

    if model:
        return chosen_then_own(model, api_base or None, None)
    saved = {**SHARED, **read_settings()}
    if not saved["model"]:
        raise ValueError("no model: pass --model (a litellm model string, e.g. openai/gpt-5.4-mini), or choose one "
                         "in the window's Settings")
    return chosen_then_own(str(saved["model"]), api_base or str(saved["api_base"]) or None,
                           str(saved["summary_model"]) or None)


def review_request(model: str, api_base: str | None, day: datetime.date, log: str, lessons: Sequence[str],
                   window: int | None = None) -> ModelRequest:
    known = "\n".join(f"- {lesson}" for lesson in lessons[-40:]) or "(none yet)"
    text = fit_lines(log.splitlines(), TRACE_CHARS)  # a long day: its start and its end, the middle counted
    return ModelRequest(model=model, api_base=api_base, window=window, messages=[
        {"role": "system", "content": resource_text("prompts", "review.md")},
        {"role": "user", "content": f"## The log of {day:%Y-%m-%d}\n{text}\n\n## Lessons the agent already follows\n{known}"},
    ])


async def review_day(memory: LongTermMemory, client: ModelClient, writers: list[tuple[str, str | None]],
                     day: datetime.date | None = None) -> Reviewed:
    """Review `day` (by default day_to_review's): the report kept, its cost written down, its digest
    in today's log, its strategies counted toward lessons. Raises CannotReview."""
    from core.memory import strategies

    day = day or await asyncio.to_thread(day_to_review, memory)
    log = await asyncio.to_thread(_log, memory, day)
    tasks = tasks_in(log)
    if len(tasks) < MIN_TASKS:
        raise CannotReview(f"The log of {day:%Y-%m-%d} has {len(tasks)} task{'s' * (len(tasks) != 1)}: a review "
                           f"looks for what recurs across {MIN_TASKS} or more.")
    lessons = await asyncio.to_thread(strategies.active_lessons, memory)
    # Ollama cuts a prompt longer than its small default context without a word: it is told its window.
    windows = {name: await asyncio.to_thread(model_window, name, api_base) if is_ollama(name) else None
               for name, api_base in writers}
    reply, model, failures = await first_reply(
        client, writers, lambda name, api_base: review_request(name, api_base, day, log, lessons, windows[name]))
    if reply is None:
        raise CannotReview("No model could review the day: " + "; ".join(failures))
    await asyncio.to_thread(_write_cost, memory, day, model, reply.usage)
    try:
        report = replace(parse(reply.text), preferences=())  # the tasks' own reflections count those
    except ReflectionUnreadable:
        report = None
    subject = f"{REVIEW}{day:%Y-%m-%d}"  # the report's "session", as Spending groups its cost
    path = await asyncio.to_thread(strategies.save, memory, subject, model, reply.text, report,
                                   heading=f"Review of the work of {day:%Y-%m-%d} ({len(tasks)} tasks)")
    promoted = []
    if report is not None:
        await asyncio.to_thread(memory.files.append_reflection, f"the work of {day:%Y-%m-%d}", digest(report),
                                subject, path.name)
        promoted = await asyncio.to_thread(strategies.promote_due, memory)
        await memory.arefresh()
    return Reviewed(day, path, report, model, reply.usage, promoted)


def _write_cost(memory: LongTermMemory, day: datetime.date, model: str, usage: Usage) -> None:
    memory.files.root.mkdir(parents=True, exist_ok=True)
    line = {"at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "day": f"{day:%Y-%m-%d}", "model": model, "usage": asdict(usage)}
    with (memory.files.root / REVIEW_COSTS).open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, sort_keys=True) + "\n")
