"""A session at a glance, from its records: how long it ran, what the agent did (turns, tool calls and
how many failed), what it asked the person, what it cost and what it changed. The window's Session →
Summary and `tripane show ID --summary` say it; after a night's run, the first thing a person reads.
"""

from __future__ import annotations

import datetime
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from core.agent.options import UNANSWERED, reason_label
from core.changes import ChangeTally
from core.events import (
    AssistantMessage,
    Compaction,
    ErrorDiagnosed,
    ErrorRecorded,
    FileChanged,
    FilesPutBack,
    HumanAnswer,
    HumanQuestion,
    ModelChanged,
    Record,
    ReflectionWritten,
    ResearchStep,
    SessionEnded,
    SessionStarted,
    ToolResult,
    Usage,
    UserMessage,
    ended_word,
)
from core.paths import named_files
from core.spending import known_cost
from core.text import counted

SUMMARY_NAMED = 12  # files named in a row; the rest are counted


@dataclass
class SessionSummary:
    first_ts: str = ""
    last_ts: str = ""
    status: str = "new"
    ended_summary: str = ""
    models: list[str] = field(default_factory=list)  # in the order used
    turns: int = 0
    requests: int = 0
    messages: int = 0  # the person's, after the task
    edits: int = 0  # the person's, of the plan and findings
    calls: Counter = field(default_factory=Counter)  # by tool
    failed: Counter = field(default_factory=Counter)  # by tool
    errors: int = 0  # recorded failures (the agent's and the provider's)
    diagnosed: int = 0  # failures that happened again, diagnosed at once (core/agent/diagnosis.py)
    questions: Counter = field(default_factory=Counter)  # by reason
    answered: int = 0
    compactions: int = 0
    reflections: int = 0
    researched: set[str] = field(default_factory=set)  # the delegate calls a research helper worked on
    asked_helpers: set[str] = field(default_factory=set)  # the person's own questions to a helper
    research_steps: int = 0  # the helpers' requests
    usage: Usage = field(default_factory=Usage)
    changes: ChangeTally = field(default_factory=ChangeTally)
    put_back: set[str] = field(default_factory=set)  # files the person put back as they were


def summarize(records: Iterable[Record]) -> SessionSummary:
    summary = SessionSummary()
    for record in records:
        summary.first_ts = summary.first_ts or record.ts
        summary.last_ts = record.ts
        summary.changes.add(record)
        event = record.event
        match event:
            case SessionStarted():
                summary.models.append(event.model)
                summary.status = "running"
            case ModelChanged() if event.model not in summary.models:
                summary.models.append(event.model)
            case UserMessage():
                summary.messages += 1
                summary.status = "running"
            case FileChanged() if event.author == "user":
                summary.edits += 1
            case FilesPutBack():
                summary.put_back.update((*event.paths, *event.removed))
            case AssistantMessage():
                summary.requests += 1
                summary.turns = max(summary.turns, event.turn)
                summary.usage = summary.usage + event.usage
                summary.calls.update(call.name for call in event.tool_calls)
            case ToolResult() if not event.ok:
                summary.failed[event.name] += 1
            case ErrorRecorded():
                summary.errors += 1
            case ErrorDiagnosed():
                summary.diagnosed += bool(event.text)
                summary.usage = summary.usage + event.usage
            case HumanQuestion():
                summary.questions[event.reason] += 1
            case HumanAnswer() if event.choice not in UNANSWERED:
                summary.answered += 1
            case Compaction():
                summary.compactions += 1
                summary.usage = summary.usage + event.usage
            case ReflectionWritten():
                summary.reflections += 1
                summary.usage = summary.usage + event.usage
            case ResearchStep():
                summary.research_steps += 1
                (summary.asked_helpers if event.for_person else summary.researched).add(event.call_id)
                summary.usage = summary.usage + event.usage
            case SessionEnded():
                summary.status, summary.ended_summary = f"ended: {ended_word(event.status)}", event.summary
    return summary


def summary_rows(summary: SessionSummary) -> list[tuple[str, str]]:
    """(what, how much) rows, as the window's table and the command line print them."""
    rows = [("State", summary.status + (f" — {summary.ended_summary}" if summary.ended_summary else "")),
            ("Time", _span(summary.first_ts, summary.last_ts)),
            ("Model" if len(summary.models) < 2 else "Models", ", then ".join(summary.models) or "—"),
            ("Turns", f"{summary.turns:,} ({counted(summary.requests, 'request')})"),
            ("Your messages and edits", f"{counted(summary.messages, 'message')}, {counted(summary.edits, 'edit')} of the plan "
                                        "or findings")]
    calls = sum(summary.calls.values())
    failed = sum(summary.failed.values())
    by_tool = ", ".join(f"{name} {count:,}" + (f" ({summary.failed[name]:,} failed)" if summary.failed[name] else "")
                        for name, count in summary.calls.most_common())
    rows.append(("Tool calls", f"{calls:,}" + (f", {failed:,} failed" if failed else "") + (f": {by_tool}" if by_tool else "")))
    diagnosed = f" ({summary.diagnosed:,} diagnosed as they happened again)" if summary.diagnosed else ""
    rows.append(("Errors recorded", f"{summary.errors:,}{diagnosed}"))
    asked = sum(summary.questions.values())
    reasons = ", ".join(f"{reason_label(reason)} {count:,}" for reason, count in summary.questions.most_common())
    rows.append(("Questions to you", f"{asked:,}" + (f" ({reasons}); {summary.answered:,} answered" if asked else "")))
    rows.append(("Compactions", f"{summary.compactions:,}"))
    if summary.reflections:
        rows.append(("Reflections", f"{summary.reflections:,}"))
    if summary.researched or summary.asked_helpers:
        said = ", ".join(part for part in (
            f"{counted(len(summary.researched), 'question')} from the agent" if summary.researched else "",
            f"{counted(len(summary.asked_helpers), 'question')} from you" if summary.asked_helpers else "") if part)
        rows.append(("Research helpers", f"{said}; {counted(summary.research_steps, 'request')}"))
    usage = summary.usage
    # A provider that never reports cached tokens (a local server, some gateways) is not said to
    # have cached 0%: that would read as a cache that always misses.
    cached = (f" ({usage.cached_tokens / usage.prompt_tokens:.0%} cached, as the provider reported)"
              if usage.cached_tokens else "")
    rows.append(("Tokens", f"{usage.prompt_tokens:,} in{cached}; {usage.completion_tokens:,} out"))
    rows.append(("Cost", known_cost(usage.cost_usd, usage.prompt_tokens)
                 or "unknown: litellm has no price for the model (one on this computer costs nothing)"))
    rows.append(("Changed in the work folder", summary.changes.summary() or "nothing, by the file tools"))
    if summary.put_back:
        put_back = sorted(summary.put_back)  # (of a formatter's 622, a few: the names filled the window)
        named = named_files(put_back, SUMMARY_NAMED)  # (which counts them all when it names a few)
        rows.append(("Put back by you", named if len(put_back) > SUMMARY_NAMED else f"{counted(len(put_back), 'file')}: {named}"))
    return rows


def _span(first: str, last: str) -> str:
    try:
        start, end = datetime.datetime.fromisoformat(first), datetime.datetime.fromisoformat(last)
    except ValueError:
        return "—"
    seconds = int((end - start).total_seconds())
    minutes = seconds // 60
    took = (f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min" if minutes
            else f"{seconds} s")
    start, end = start.astimezone(), end.astimezone()
    until = f"{end:%H:%M}" if end.date() == start.date() else f"{end:%Y-%m-%d %H:%M}"
    return f"{start:%Y-%m-%d %H:%M} to {until} {end:%Z} ({took}, pauses included)".replace("  ", " ")
