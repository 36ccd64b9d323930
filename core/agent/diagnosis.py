"""Seed 002 §3.1's second trigger, the error reflection: a failure diagnosed as soon as it happens
again, and the diagnosis put before the agent's next step.

A failure once is mostly a slip the model sees in the tool's result and mends by itself. The same
failure again is the agent in a rut: its own retry did not help, and one more ends the run for the
person (3-Strike). That is when a second opinion pays — a fast model (the session's summary model)
reading the failure, the latest steps and what long-term memory holds on it, saying in a few lines
what the root cause is and what to try instead. The note joins the history (append-only: the prefix
is untouched), the post-task reflection reads it in the trace, and the 3-Strike question shows it.

A command that ran out of time is diagnosed at its first timeout: each try of it costs the whole
timeout. The request is small (a few thousand characters), made once per failure until the person
is asked about it (core/agent/rules.py diagnosis_due).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from core.agent.rules import DIAGNOSIS_FOR_THE_AGENT
from core.agent.state import SessionState
from core.events import ErrorDiagnosed, ErrorRecorded, Record, SessionStarted, Usage
from core.llm import ModelClient, ModelReply, ModelRequest
from core.memory.reflection import (
    ERROR_KINDS,
    ReflectionUnreadable,
    error_kind,
    field_text,
    load,
    trace_lines,
)
from core.paths import resource_text
from core.side_writers import first_reply, side_writers
from core.text import one_line

log = logging.getLogger(__name__)

TASK_CHARS = 1_500  # the task's beginning: what was asked
STEPS_CHARS = 6_000  # the latest steps, about 1,500 tokens
ERROR_CHARS = 1_200  # of each occurrence of the failure
MEMORY_HITS = 3  # long-term memory passages shown to the model
MEMORY_HIT_CHARS = 500
NOTE_CHARS = 900  # a reply that is not the YAML asked for is told as it came, up to this


@dataclass(frozen=True)
class Diagnosis:
    root_cause: str
    cause: str  # A-D
    try_instead: str

    def note(self, failure: str, count: int, last_try: bool = True) -> str:
        """What the agent is told; `last_try`: one more of the same failure asks the person."""
        times = {1: "once", 2: "twice"}.get(count, f"{count} times")
        warned = DIAGNOSIS_FOR_THE_AGENT if last_try else ""
        return f"[Tripane's diagnosis of a failure that happened {times} — {failure}.{self.found()}{warned}]"

    def found(self) -> str:
        """" Root cause (B: wrong strategy): …. Try instead: …." — what the model found."""
        kind = f" ({ERROR_KINDS[self.cause]})" if self.cause in ERROR_KINDS else ""
        cause = f" Root cause{kind}: {self.root_cause.rstrip('.')}." if self.root_cause else ""
        instead = f" Try instead: {self.try_instead.rstrip('.')}." if self.try_instead else ""
        return cause + instead


def parse(reply: str) -> Diagnosis:
    """The diagnosis in the model's reply. A reply without the YAML asked for (a model that answered
    in prose) is taken whole as what to try: a diagnosis in other words is still one."""
    try:
        data = load(reply)
    except ReflectionUnreadable:
        data = None
    if isinstance(data, dict) and ("root_cause" in data or "try_instead" in data):
        return Diagnosis(field_text(data.get("root_cause")), error_kind(data.get("kind")),
                         field_text(data.get("try_instead")))
    return Diagnosis("", "", one_line(reply, NOTE_CHARS))


def request_text(records: Sequence[Record], signature: str, failure: str, step: str,
                 memory: Sequence[tuple[str, str]]) -> str:
    """What the diagnosing model reads: the task, the step being worked on, each occurrence of the
    failure, the latest steps and what long-term memory holds on it."""
    task = next((r.event.task for r in records if isinstance(r.event, SessionStarted)), "").strip()
    task = task if len(task) <= TASK_CHARS else task[:TASK_CHARS] + "…"
    errors = [r.event.message for r in records
              if isinstance(r.event, ErrorRecorded) and r.event.signature == signature][-3:]
    occurrences = "\n".join(f"{n}. {message[:ERROR_CHARS]}" for n, message in enumerate(errors, 1))
    remembered = "\n\n".join(f"— {where}\n{one_line(text, MEMORY_HIT_CHARS)}" for where, text in memory)
    return (f"## Task\n{task or '(unknown)'}\n\n## The step of the plan being worked on\n{step or '(none marked)'}\n\n"
            f"## The failure\n{failure}\n\nEach time it happened:\n{occurrences}\n\n"
            f"## The latest steps (oldest first)\n{latest(list(trace_lines(records)), STEPS_CHARS)}\n\n"
            f"## What long-term memory holds on it\n{remembered or '(nothing found)'}")


def latest(lines: list[str], limit: int) -> str:
    """The last of `lines` that fit in `limit` characters, and how many earlier ones were left out:
    what led to the failure is just before it."""
    kept, size = [], 0
    for line in reversed(lines):
        if size + len(line) + 1 > limit:
            break
        kept.append(line)
        size += len(line) + 1
    left_out = len(lines) - len(kept)
    return "\n".join(([f"… ({left_out:,} earlier lines left out)"] if left_out else []) + kept[::-1])


def diagnosis_request(model: str, api_base: str | None, text: str, window: int | None = None) -> ModelRequest:
    """`window`: the session's, which an Ollama model is told (its own default may not hold the text)."""
    return ModelRequest(model=model, api_base=api_base, window=window, messages=[
        {"role": "system", "content": resource_text("prompts", "diagnose.md")},
        {"role": "user", "content": text},
    ])


async def diagnose(client: ModelClient, state: SessionState, records: Sequence[Record], signature: str,
                   step: str, memory: Sequence[tuple[str, str]] = (), window: int | None = None,
                   wrap: Callable[[Awaitable[ModelReply]], Awaitable[ModelReply]] | None = None) -> ErrorDiagnosed:
    """The failure's diagnosis, as its event. A model that cannot be reached gives an event with no
    text and why: the run goes on as it would have without one."""
    count = state.strikes.get(signature, 0)
    failure = state.failure(signature)
    text = request_text(records, signature, failure, step, memory)
    reply, writer, failures = await first_reply(
        client, side_writers(state), lambda model, api_base: diagnosis_request(model, api_base, text, window), wrap=wrap)
    paths = tuple(where for where, _ in memory)
    if reply is None:
        log.warning("no model could diagnose the failure %s: %s", signature, "; ".join(failures))
        return ErrorDiagnosed(signature=signature, attempt=count, memory=paths,
                              error="; ".join(failures) or "no model replied")
    found = parse(reply.text)
    last_try = state.config is not None and count == state.config.strike_limit - 1
    return ErrorDiagnosed(signature=signature, attempt=count, text=found.note(failure, count, last_try), cause=found.cause,
                          model=writer, usage=reply.usage or Usage(), memory=paths)
