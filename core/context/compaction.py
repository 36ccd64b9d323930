"""Reversible compaction: what to compact, the summary request, and where summaries are kept.

Flow (seed 002 §1.2): a pre-compaction flush turn (the agent saves what matters to findings.md),
then a summary by a cheaper model, then the history restarts as [task][summary][last N turns].
Nothing is deleted: the full log stays in the database and the summary says so.
"""

from __future__ import annotations

import json
from pathlib import Path

from core.context.history import History, message_text
from core.events import AssistantMessage, Compaction, Record
from core.llm import ModelRequest
from core.paths import resource_text

TRANSCRIPT_CHARS = 120_000  # what the summariser reads at most (its head and tail)


# The most of the budget the turns kept verbatim may take (seed 002, step 6: recent history
# 20-30 %). Beyond it a compaction keeps fewer turns, never fewer than two (step 9).
KEPT_TURNS_SHARE = 0.3
MIN_KEPT_TURNS = 2


def compactable_range(history: History, records: list[Record], keep_turns: int,
                      room: int | None = None) -> tuple[int, int] | None:
    """(first_seq, last_seq) of the events to summarise, or None if there is too little history.

    The first message (the task) always stays; the last `keep_turns` turns stay verbatim, or as
    many of them (at least two) as fit in `room` tokens: five turns of long reads in a small
    window would otherwise fill the context again right after the compaction.
    """
    turn_starts = [r.seq for r in records if isinstance(r.event, AssistantMessage)]
    keep = kept_turns(history, turn_starts, keep_turns, room)
    if len(turn_starts) <= keep or len(history.seqs) < 3:
        return None
    last_seq = turn_starts[-keep] - 1 if keep else records[-1].seq
    first_seq = history.seqs[1]
    return (first_seq, last_seq) if first_seq <= last_seq else None


def kept_turns(history: History, turn_starts: list[int], keep_turns: int, room: int | None) -> int:
    """`keep_turns`, or fewer (never under two) until the last turns fit in `room` tokens."""
    if room is None or not history.seqs:
        return keep_turns
    keep, floor = min(keep_turns, len(turn_starts)), min(MIN_KEPT_TURNS, keep_turns)
    while keep > floor and range_tokens(history, turn_starts[-keep], history.seqs[-1]) > room:
        keep -= 1
    return keep


def range_tokens(history: History, first_seq: int, last_seq: int) -> int:
    """What compacting the range would take out of the context (before the summary goes in)."""
    history_tokens = [t for t, seq in zip(history.tokens, history.seqs) if first_seq <= seq <= last_seq]
    return sum(max(0, t) for t in history_tokens)


def transcript(history: History, first_seq: int, last_seq: int) -> str:
    lines = [f"{m['role'].upper()}: {message_text(m)}" for m, seq in zip(history.messages, history.seqs)
             if first_seq <= seq <= last_seq]
    text = "\n\n".join(lines)
    if len(text) > TRANSCRIPT_CHARS:
        half = TRANSCRIPT_CHARS // 2
        text = text[:half] + "\n\n[… middle of the transcript left out …]\n\n" + text[-half:]
    return text


def summary_request(model: str, api_base: str | None, text: str, window: int | None = None) -> ModelRequest:
    return ModelRequest(model=model, api_base=api_base, window=window, messages=[
        {"role": "system", "content": resource_text("prompts", "summary.md")},
        {"role": "user", "content": text},
    ])


# The fallback digest reads "(The summary model failed: WHY. Tool calls in the compacted range, …)":
# summary_failure reads WHY back between these two, so both are written once, here.
FALLBACK_OPENING = "(The summary model failed: "
FALLBACK_LIST = ". Tool calls in the compacted range"


def fallback_summary(history: History, first_seq: int, last_seq: int, error: str) -> str:
    """When the summariser fails, a mechanical digest is still better than losing the range."""
    calls = []
    for message, seq in zip(history.messages, history.seqs):
        if first_seq <= seq <= last_seq:
            for call in message.get("tool_calls") or ():
                calls.append(f"- {call['function']['name']}({call['function']['arguments'][:120]})")
    listed = "\n".join(calls[-60:]) or "- (no tool calls)"
    return f"{FALLBACK_OPENING}{error}{FALLBACK_LIST}, most recent last:)\n{listed}"


def summary_failure(summary: str) -> str:
    """Why no model wrote a compaction's summary ("" if one did)."""
    if not summary.startswith(FALLBACK_OPENING):
        return ""
    return summary[len(FALLBACK_OPENING):].split(FALLBACK_LIST, 1)[0]


def save_summary(session_dir: Path, event: Compaction) -> None:
    folder = session_dir / "compaction"
    folder.mkdir(parents=True, exist_ok=True)
    line = json.dumps({"first_seq": event.first_seq, "last_seq": event.last_seq, "summary": event.summary,
                       "tokens_before": event.tokens_before, "tokens_after": event.tokens_after},
                      ensure_ascii=False, sort_keys=True)
    with open(folder / "summaries.jsonl", "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
