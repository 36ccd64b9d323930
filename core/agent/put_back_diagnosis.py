"""Seed 002 §3.1's error reflection for "the model's output rejected by the person": when the person
puts back files the agent changed (Session.put_back), the work undone is diagnosed before the
agent's next step, as a failure that happens again is (core/agent/diagnosis.py).

The agent already reads what was put back and the person's reason (core/context/history.py
put_back_for_the_agent). What it lacks is the step back: why the work was not wanted, and what to do
instead of doing the same again. One small request to the summary model reads what the agent had
done to those files (its file tools' calls, since any earlier put-back of them), the reason, the
latest steps and long-term memory, and its answer joins the history as a note (append-only).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

from core.agent.diagnosis import Diagnosis, latest, parse
from core.agent.rules import PUT_BACK_FOR_THE_AGENT, put_back_signature
from core.agent.state import SessionState
from core.changes import FILE_TOOLS, path_of, relative
from core.events import (
    AGENT_FILES_NAMED,
    AssistantMessage,
    ErrorDiagnosed,
    FilesPutBack,
    Record,
    SessionStarted,
    ToolCall,
    ToolResult,
    Usage,
)
from core.llm import ModelClient, ModelReply, ModelRequest
from core.memory.reflection import trace_lines
from core.paths import common_folder, folder_of, named_files, resource_text
from core.side_writers import first_reply, side_writers

log = logging.getLogger(__name__)

TASK_CHARS = 1_500
ARGUMENT_CHARS = 1_500  # of each text the agent wrote (a file's content, an edit's old and new)
WORK_CHARS = 8_000  # what the agent did to the files, the latest kept
STEPS_CHARS = 4_000


def undone(event: FilesPutBack) -> str:
    """"calc.py, notes.md (removed)": the files a put-back undid (of hundreds, a few and how many more)."""
    return named_files([*event.paths, *(f"{path} (removed)" for path in event.removed)], AGENT_FILES_NAMED)


def note(found: Diagnosis, event: FilesPutBack) -> str:
    """What the agent is told, after the put-back's own note (which carries the person's reason)."""
    return f"[Tripane's diagnosis of {PUT_BACK_FOR_THE_AGENT} — {undone(event)}.{found.found()}]"


def memory_query(event: FilesPutBack) -> str:
    """What long-term memory is searched for: the person's reason says what was wrong."""
    return event.reason.strip() or f"changes to {undone(event)} undone by the person"


def request_text(records: Sequence[Record], seq: int, step: str, workdir: str,
                 memory: Sequence[tuple[str, str]]) -> str:
    """What the diagnosing model reads about the put-back recorded at `seq`."""
    before = [r for r in records if r.seq < seq]
    event = next(r.event for r in records if r.seq == seq)
    task = next((r.event.task for r in records if isinstance(r.event, SessionStarted)), "").strip()
    task = task if len(task) <= TASK_CHARS else task[:TASK_CHARS] + "…"
    listed = [*(f"- {path} (the agent changed it; it is now as before the task)" for path in event.paths),
              *(f"- {path} (the agent created it; it was removed)" for path in event.removed)]
    more = len(listed) - AGENT_FILES_NAMED
    everything = [*event.paths, *event.removed]
    files = "\n".join(listed[:AGENT_FILES_NAMED]) + (
        f"\n- … and {more:,} more, all in {common_folder(map(folder_of, everything)) or 'the work folder'}"
        if more > 0 else "")  # (a formatter's 600 names told the model nothing more)
    reason = f'The person\'s reason: "{event.reason.strip()}"' if event.reason.strip() else "The person gave no reason."
    work = work_on(before, {*event.paths, *event.removed}, workdir)
    remembered = "\n\n".join(f"— {where}\n{text[:500]}" for where, text in memory)
    return (f"## Task\n{task or '(unknown)'}\n\n## The step of the plan being worked on\n{step or '(none marked)'}\n\n"
            f"## What the person put back\n{files}\n\n{reason}\n\n"
            f"## What the agent had done to these files (oldest first)\n"
            f"{latest(work, WORK_CHARS) or '(not by its file tools: by a command; see the latest steps)'}\n\n"
            f"## The latest steps (oldest first)\n{latest(list(trace_lines(before)), STEPS_CHARS)}\n\n"
            f"## What long-term memory holds on it\n{remembered or '(nothing found)'}")


def work_on(records: Sequence[Record], paths: set[str], workdir: str) -> list[str]:
    """Each successful file-tool call on one of `paths`, as a short block, since the last put-back
    of that path (what an earlier put-back undid is not what this one rejects)."""
    asked: dict[str, tuple[int, ToolCall, str]] = {}  # call id → (turn, call, path)
    done: list[tuple[str, str]] = []  # (path, block)
    for record in records:
        event = record.event
        if isinstance(event, AssistantMessage):
            for call in event.tool_calls:
                if call.name in FILE_TOOLS and (path := relative(path_of(call.arguments), workdir)) in paths:
                    asked[call.id] = (event.turn, call, path)
        elif isinstance(event, ToolResult) and event.ok and event.call_id in asked:
            turn, call, path = asked.pop(event.call_id)
            done.append((path, f"Turn {turn}: {call.name} {path}\n{_arguments(call)}"))
        elif isinstance(event, FilesPutBack):
            again = {*event.paths, *event.removed}
            done = [(path, block) for path, block in done if path not in again]
    return [block for _, block in done]


def _arguments(call: ToolCall) -> str:
    try:
        arguments = call.parsed_arguments()
    except ValueError:
        return f"  (arguments not readable: {call.arguments[:ARGUMENT_CHARS]})"
    shown = []
    for key in ("content", "old", "new"):
        if isinstance(text := arguments.get(key), str):
            clipped = text if len(text) <= ARGUMENT_CHARS else f"{text[:ARGUMENT_CHARS]}… ({len(text):,} characters in all)"
            shown.append(f"  {key}:\n" + "\n".join(f"    {line}" for line in clipped.splitlines() or [""]))
    return "\n".join(shown)


def diagnosis_request(model: str, api_base: str | None, text: str, window: int | None = None) -> ModelRequest:
    return ModelRequest(model=model, api_base=api_base, window=window, messages=[
        {"role": "system", "content": resource_text("prompts", "diagnose_put_back.md")},
        {"role": "user", "content": text},
    ])


async def diagnose(client: ModelClient, state: SessionState, records: Sequence[Record], seq: int, step: str,
                   memory: Sequence[tuple[str, str]] = (), window: int | None = None,
                   wrap: Callable[[Awaitable[ModelReply]], Awaitable[ModelReply]] | None = None) -> ErrorDiagnosed:
    """The diagnosis of the put-back recorded at `seq`, as its event (no text, and why, when no
    model could write it: the agent then goes on with the put-back's own note)."""
    event = next(r.event for r in records if r.seq == seq)
    assert isinstance(event, FilesPutBack)
    text = request_text(records, seq, step, state.workdir, memory)
    reply, writer, failures = await first_reply(
        client, side_writers(state), lambda model, api_base: diagnosis_request(model, api_base, text, window), wrap=wrap)
    paths = tuple(where for where, _ in memory)
    signature = put_back_signature(seq)
    if reply is None:
        log.warning("no model could diagnose the work put back: %s", "; ".join(failures))
        return ErrorDiagnosed(signature=signature, attempt=0, memory=paths, error="; ".join(failures) or "no model replied")
    found = parse(reply.text)
    return ErrorDiagnosed(signature=signature, attempt=0, text=note(found, event), cause=found.cause,
                          model=writer, usage=reply.usage or Usage(), memory=paths)
