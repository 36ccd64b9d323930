"""Reflection on a task (seed 002, section 3): one request to the summary model reads what the agent
did and judges it in five dimensions (outcome, efficiency, errors, strategies, gaps), answering in
YAML. The report is kept in the data folder's memory/reflections/; its strategies count toward the
lessons of MEMORY.md (strategies.py), where every later task's memory search finds them.

The trace the model reads is built from the session's events: each turn's calls and what failed,
every word of the person's (messages, answers, edits, a stop), and how the task ended.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import yaml

from core.agent.options import NO_ANSWER, WITHDRAWN, reason_label
from core.agent.rules import failure_excerpt, of_put_back
from core.agent.state import asked_aside
from core.changes import ChangeTally
from core.events import (
    AGENT_FILES_NAMED,
    AssistantMessage,
    CommandChangedFiles,
    Compaction,
    ErrorDiagnosed,
    ErrorRecorded,
    FileChanged,
    FilesChangedOutside,
    FilesPutBack,
    HumanAnswer,
    HumanQuestion,
    ModelChanged,
    Record,
    SessionEnded,
    SessionPaused,
    SessionResumed,
    SessionStarted,
    ToolResult,
    UserMessage,
)
from core.llm import ModelRequest
from core.paths import named_files, resource_text
from core.pictures import with_pictures_named
from core.summary import summarize, summary_rows
from core.text import capitalized, one_line, sentence

DIMENSIONS = ("outcome", "efficiency", "errors", "strategies", "gaps")
ACHIEVED = ("yes", "partly", "no")
CONFIDENCES = ("HIGH", "MEDIUM", "LOW")
ERROR_KINDS = {"A": "missing information", "B": "wrong strategy", "C": "tool misuse", "D": "beyond the model"}
# About 6,000 tokens of trace: enough for a long run's shape, cheap for a summary model.
TRACE_CHARS = 24_000
TASK_CHARS = 4_000  # a task pasted with a long log: its beginning says what was asked
ITEMS_KEPT = 10  # of each list in a report (strategies: at most 3 are asked for)
LESSONS_SHOWN = 40  # the newest lessons, told so they are not suggested again


class ReflectionUnreadable(ValueError):
    """The model's reply is not the YAML report asked for."""


@dataclass(frozen=True)
class Strategy:
    text: str
    when: str = ""
    effect: str = ""
    confidence: str = "LOW"
    urgent: bool = False  # the reflecting model says it prevents harm (lost or leaked data, secrets, security)

    @property
    def counts(self) -> bool:
        """Seed 002's first rule: a LOW-confidence suggestion stays in its report and goes no further."""
        return self.confidence in ("HIGH", "MEDIUM")

    @property
    def at_once(self) -> bool:
        """Seed 002's fourth rule, the emergency channel: urgent and of HIGH confidence, it becomes a
        lesson without waiting for three sessions' reflections."""
        return self.urgent and self.confidence == "HIGH"


@dataclass(frozen=True)
class Diagnosis:
    what: str
    kind: str = ""  # A-D (ERROR_KINDS), "" when the model named none
    root_cause: str = ""


@dataclass(frozen=True)
class Preference:
    """What the person showed they want (seed 002, section 4.3: the user model's signals)."""

    text: str
    evidence: str = ""  # what they said or did
    strength: str = "LOW"  # HIGH: said outright; MEDIUM: chose or edited so; LOW: a hint


@dataclass(frozen=True)
class Report:
    achieved: str  # yes | partly | no | "" (not said)
    assessment: str
    efficient: tuple[str, ...] = ()
    wasteful: tuple[str, ...] = ()
    errors: tuple[Diagnosis, ...] = ()
    strategies: tuple[Strategy, ...] = ()
    gaps: tuple[str, ...] = ()
    preferences: tuple[Preference, ...] = ()

    def to_yaml(self) -> str:
        """The report as the file keeps it: the shape asked of the model, whatever it actually sent."""
        data = {
            "outcome": {"achieved": self.achieved, "assessment": self.assessment},
            "efficiency": {"efficient": list(self.efficient), "wasteful": list(self.wasteful)},
            "errors": [{"what": e.what, "kind": e.kind, "root_cause": e.root_cause} for e in self.errors],
            "strategies": [{"strategy": s.text, "when": s.when, "effect": s.effect, "confidence": s.confidence,
                            **({"urgent": True} if s.urgent else {})} for s in self.strategies],
            "gaps": list(self.gaps),
            "preferences": [{"preference": p.text, "evidence": p.evidence, "strength": p.strength}
                            for p in self.preferences],
        }
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


# --- the request ---------------------------------------------------------------------------------

def reflection_request(model: str, api_base: str | None, trace_text: str, lessons: Sequence[str],
                       window: int | None = None) -> ModelRequest:
    """No output cap: a reasoning model spends some of it thinking, and a report cut off is lost."""
    known = "\n".join(f"- {lesson}" for lesson in lessons[-LESSONS_SHOWN:]) or "(none yet)"
    return ModelRequest(model=model, api_base=api_base, window=window, messages=[
        {"role": "system", "content": resource_text("prompts", "reflect.md")},
        {"role": "user", "content": f"{trace_text}\n\n## Lessons the agent already follows\n{known}"},
    ])


def reflected_on_by_itself(records: Sequence[Record]) -> bool:
    """Whether a run that ended is reflected on when Settings says to reflect on each task: not
    after the person stopped it (Stop, Esc, Ctrl+C: they reflect by hand if it is worth it), but
    after they answered "stop" to 3-Strike, the turn threshold or the budget (a failed run is the
    one to learn from)."""
    ended = next((r.event for r in reversed(records) if isinstance(r.event, SessionEnded)), None)
    if ended is None or ended.status != "aborted":
        return ended is not None
    answer = next((r.event for r in reversed(records) if isinstance(r.event, HumanAnswer)), None)
    return answer is not None and answer.choice == "stop"


def trace(records: Sequence[Record], limit: int = TRACE_CHARS) -> str:
    """What the model reflects on: the task, how it ended, the person's reaction, and each step."""
    start = next((r.event for r in records if isinstance(r.event, SessionStarted)), None)
    task = start.task if start else "(unknown)"
    steps = list(trace_lines(records))
    rows = "\n".join(f"- {what}: {value}" for what, value in summary_rows(summarize(records)))
    task = task.strip() if len(task.strip()) <= TASK_CHARS else task.strip()[:TASK_CHARS] + "…"
    head = (f"## Task\n{task}\n\n## How it went\n{rows}\n\n## How the person reacted\n"
            f"{_reaction(records)}\n\n## Trace (oldest first)\n")
    return head + fit_lines(steps, max(limit - len(head), limit // 2))


def trace_lines(records: Iterable[Record]) -> Iterable[str]:  # noqa: C901 - one branch per event kind reads best
    aside: set[str] = set()  # the questions of the person's own helper: nothing the agent did
    for record in records:
        event = record.event
        match event:
            case HumanQuestion() if asked_aside(event):
                aside.add(event.qid)
            case HumanAnswer() if event.qid in aside:
                pass
            case UserMessage():
                yield f"The person wrote: {one_line(with_pictures_named(event.text, event.pictures), 400)}"
            case AssistantMessage():
                said = f": {one_line(event.text, 300)}" if event.text.strip() else ""
                yield f"Turn {event.turn}{said}"
                for call in event.tool_calls:
                    yield f"  call {call.name}({one_line(call.readable_arguments(), 160)})"
            case ToolResult() if event.ok:
                yield f"  → {event.name} ok, {event.size or len(event.content):,} chars"
            case ToolResult():
                yield f"  → {event.name} FAILED: {failure_excerpt(event.content, 300)}"
            case CommandChangedFiles():  # (an ok result is told by its size: the files a command touched, not)
                yield f"    it changed {event.words()}"
            case FilesChangedOutside():
                yield f"{capitalized(event.by('its'))}, changed files: {event.words()}"
                if event.diff:  # the person's fix of the agent's work, often: what they wanted
                    yield f"  how those the agent had read or written changed: {one_line(event.diff, 600)}"
            case ErrorRecorded() if not event.counts:
                yield f"  ! the provider failed: {one_line(event.message, 200)}"
            case ErrorRecorded() if event.attempt > 1:
                yield f"  ! the same failure, attempt {event.attempt}"
            case ErrorDiagnosed() if event.text:
                what = "the work put back" if of_put_back(event.signature) else "the failure"
                yield f"  Tripane diagnosed {what}: {one_line(event.text, 400)}"
            case HumanQuestion():
                yield f"Asked the person ({reason_label(event.reason)}): {one_line(event.question, 300)}"
            case HumanAnswer() if event.choice == NO_ANSWER:
                yield f"The person did not answer ({event.text}); the agent went on with its fallback"
            case HumanAnswer() if event.choice == WITHDRAWN:
                pass  # a helper's question, gone before the person answered: nothing of theirs
            case HumanAnswer():
                text = f": {one_line(event.text, 300)}" if event.text.strip() else ""
                yield f"The person answered {event.choice}{text}"
            case FileChanged() if event.author == "user":
                yield f"The person edited {event.file}: {one_line(event.diff, 400)}"
            case FilesPutBack():
                undone = [*event.paths, *(f"{path} (removed)" for path in event.removed)]
                why = f" — why: {one_line(event.reason, 300)}" if event.reason else ""
                yield f"The person undid the agent's changes to files: {named_files(undone, AGENT_FILES_NAMED)}{why}"
            case Compaction():
                yield f"(The context was compacted: events {event.first_seq}–{event.last_seq} summarised.)"
            case ModelChanged():
                yield f"(The person changed the model to {event.model}.)"
            case SessionPaused():
                yield "(The person paused the run.)"
            case SessionResumed() if event.interrupted_at:
                yield "(Tripane closed or was stopped mid-run here; the run was resumed later.)"
            case SessionEnded():
                yield f"Ended {event.status}: {one_line(event.summary, 600)}"


def _reaction(records: Sequence[Record]) -> str:
    messages = sum(isinstance(r.event, UserMessage) for r in records)
    edits = sum(isinstance(r.event, FileChanged) and r.event.author == "user" for r in records)
    aside = {r.event.qid for r in records if isinstance(r.event, HumanQuestion) and asked_aside(r.event)}
    answers = [r.event for r in records if isinstance(r.event, HumanAnswer) and r.event.qid not in aside]
    refused = sum(a.choice in ("deny", "stop") for a in answers)
    # The agent's own output rejected: files it changed, put back as they were.
    undone = sum(len(r.event.paths) + len(r.event.removed) for r in records if isinstance(r.event, FilesPutBack))
    # The agent's output changed by hand: files it changed, changed again outside its tools (the
    # person's fix, most often; told to the agent, with the diff, in the trace).
    tally = ChangeTally()
    for record in records:
        tally.add(record)
    fixed = len(tally.changed_since)
    ended = [r.event for r in records if isinstance(r.event, SessionEnded)]
    stopped = any(e.status == "aborted" for e in ended)
    if not (messages or edits or answers or stopped or undone or fixed):
        return "No reaction: the person did not intervene."
    return (f"{messages} message(s) after the task, {edits} edit(s) of the plan or findings, {len(answers)} "
            f"answer(s) to questions ({refused} refusing or stopping)"
            + (f", {undone} file(s) the agent changed put back as they were (its changes undone)" if undone else "")
            + (f", {fixed} file(s) the agent changed then changed outside its tools (the person's fix, or another "
               "program's)" if fixed else "")
            + ("; the person stopped the run." if stopped else "."))


def fit_lines(lines: list[str], limit: int) -> str:
    """The lines, or their beginning and end with how many were left out between (the end matters more)."""
    text = "\n".join(lines)
    if len(text) <= limit:
        return text or "(nothing was done)"
    head, tail, size = [], [], 0
    for line in lines:  # the first 40% of the room
        if size + len(line) + 1 > limit * 0.4:
            break
        head.append(line)
        size += len(line) + 1
    for line in reversed(lines[len(head):]):
        if size + len(line) + 1 > limit - 60:
            break
        tail.append(line)
        size += len(line) + 1
    left_out = len(lines) - len(head) - len(tail)
    return "\n".join([*head, f"… ({left_out:,} lines left out) …", *reversed(tail)])


# --- the reply -----------------------------------------------------------------------------------

_FENCE = re.compile(r"```(?:ya?ml)?[ \t]*\n(.*?)```", re.S | re.I)


# libyaml's loader where PyYAML was built with it (its wheels are): reading every kept reflection
# to count strategies takes a fifth of the pure-Python loader's time.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load(reply: str):
    """The YAML in the model's reply (fenced or not), or in a kept report. Raises ReflectionUnreadable."""
    fenced = _FENCE.search(reply)
    try:
        return yaml.load(fenced.group(1) if fenced else reply, Loader=_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" (line {where.line + 1})" if where is not None else ""
        raise ReflectionUnreadable(f"The reflection is not valid YAML{at}: {getattr(exc, 'problem', None) or exc}") from exc


def parse(reply: str, data=None) -> Report:
    """The report in the model's reply (fenced or not), or in `data` already loaded from it. Loose
    where it can be (a missing part is empty, `achieved: yes` read as YAML's true), strict where it
    matters: a confidence it does not know is LOW, so it counts toward nothing. Raises
    ReflectionUnreadable."""
    if data is None:
        data = load(reply)
    if not isinstance(data, dict) or not any(key in data for key in DIMENSIONS):
        raise ReflectionUnreadable("The reflection does not have the report's parts "
                                   f"({', '.join(DIMENSIONS)}): {one_line(reply, 200) or '(an empty reply)'}")
    outcome = _mapping(data.get("outcome"), "assessment")
    efficiency = _mapping(data.get("efficiency"), "wasteful")
    return Report(
        achieved=_achieved(outcome.get("achieved")),
        assessment=field_text(outcome.get("assessment")),
        efficient=_texts(efficiency.get("efficient")),
        wasteful=_texts(efficiency.get("wasteful")),
        errors=tuple(Diagnosis(what, error_kind(item.get("kind")), field_text(item.get("root_cause")))
                     for item in map(lambda i: _mapping(i, "what"), _list(data.get("errors")))
                     if (what := field_text(item.get("what")))),
        strategies=tuple(Strategy(text, field_text(item.get("when")), field_text(item.get("effect")),
                                  _confidence(item.get("confidence")), item.get("urgent") is True
                                  or field_text(item.get("urgent")).lower() in ("true", "yes"))
                         for item in map(lambda i: _mapping(i, "strategy"), _list(data.get("strategies")))
                         if (text := field_text(item.get("strategy")))),
        gaps=_texts(data.get("gaps")),
        preferences=tuple(Preference(text, field_text(item.get("evidence")), _confidence(item.get("strength")))
                          for item in map(lambda i: _mapping(i, "preference"), _list(data.get("preferences")))
                          if (text := field_text(item.get("preference")))),
    )


def _mapping(value, key_for_text: str) -> dict:
    """A part that should be a mapping; a bare text is taken as its main field."""
    if isinstance(value, dict):
        return value
    return {key_for_text: value} if isinstance(value, str) else {}


def _list(value) -> list:
    """A part that should be a list, at most ITEMS_KEPT long: the prompt asks for a few, and a reply
    that runs on (a model looping) must not become a report nobody can read."""
    if value is None:
        return []
    return value[:ITEMS_KEPT] if isinstance(value, list) else [value]


def field_text(value) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return one_line(str(value), 600)


def _texts(value) -> tuple[str, ...]:
    return tuple(text for text in map(field_text, _list(value)) if text)


def _achieved(value) -> str:
    if isinstance(value, bool):  # YAML 1.1 reads an unquoted yes/no as a boolean
        return "yes" if value else "no"
    text = field_text(value).lower()
    return text if text in ACHIEVED else ""


def error_kind(value) -> str:
    text = field_text(value).upper()[:1]
    return text if text in ERROR_KINDS else ""


def _confidence(value) -> str:
    text = field_text(value).upper()
    return text if text in CONFIDENCES else "LOW"


def describe(report: Report, standing: Sequence[str] = ()) -> str:
    """The report as Markdown, for the window and the command line; `standing`: where each strategy
    stands toward becoming a lesson, in the report's order (Markdown)."""
    verdict = {"yes": "Achieved", "partly": "Partly achieved", "no": "Not achieved"}.get(report.achieved, "Outcome")
    parts = [f"**{verdict}.** {report.assessment}".rstrip()]
    if report.efficient or report.wasteful:
        parts.append("### Efficiency\n" + "\n".join([*(f"- ✓ {t}" for t in report.efficient),
                                                     *(f"- ✗ {t}" for t in report.wasteful)]))
    if report.errors:
        parts.append("### Errors\n" + "\n".join(
            f"- {e.what}" + (f" — *{ERROR_KINDS[e.kind]}*" if e.kind else "") + (f": {e.root_cause}" if e.root_cause else "")
            for e in report.errors))
    if report.strategies:
        stands = [*standing, *[""] * len(report.strategies)]
        parts.append("### Strategies\n" + "\n".join(
            f"- **{s.text}** ({s.confidence.lower()} confidence{', urgent' if s.urgent else ''})"
            + (f" When: {sentence(s.when)}" if s.when else "")  # (the model's may end in a period)
            + (f" Effect: {sentence(s.effect)}" if s.effect else "") + (f" — {stand}" if stand else "")
            for s, stand in zip(report.strategies, stands)))
    if report.gaps:
        parts.append("### Gaps\n" + "\n".join(f"- {t}" for t in report.gaps))
    if report.preferences:
        parts.append("### What you showed you want\n" + "\n".join(
            f"- {p.text} ({p.strength.lower()} signal)" + (f": {p.evidence}" if p.evidence else "")
            for p in report.preferences))
    return "\n\n".join(parts)


def digest(report: Report) -> list[str]:
    """The report in a few lines for the daily log: the verdict, the waste, the causes, the
    strategies, the gaps (empty parts left out)."""
    verdict = {"yes": "achieved", "partly": "partly achieved", "no": "not achieved"}.get(report.achieved, "not said")
    lines = [f"Outcome: {verdict}" + (f" — {report.assessment}" if report.assessment else "")]
    if report.wasteful:
        lines.append("Wasted: " + "; ".join(report.wasteful))
    if report.errors:
        lines.append("Causes: " + "; ".join(
            e.what + (f" ({ERROR_KINDS[e.kind]})" if e.kind else "") + (f": {e.root_cause}" if e.root_cause else "")
            for e in report.errors))
    if report.strategies:
        lines.append("Strategies: " + "; ".join(f"{s.text} ({s.confidence.lower()})" for s in report.strategies))
    if report.gaps:
        lines.append("Gaps: " + "; ".join(report.gaps))
    if report.preferences:
        lines.append("The person showed they want: " + "; ".join(p.text for p in report.preferences))
    return lines
