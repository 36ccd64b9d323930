"""The tail anchor: the small message regenerated every turn at the very end of the request.

It recites the current plan and the active warnings. Being last, it is the only part of a request
that is not a byte-for-byte extension of the previous one.
"""

from __future__ import annotations

import re

from core.agent.state import SessionState
from core.memory.working import pin_key

PLAN_RECITATION_CHARS = 6000
PIN_MARK = "📌 "


_OPEN_STEP = re.compile(r"^\s*(\d+\.|[-*])\s*\[ \]")
_PHASE_LINE = re.compile(r"^\s*-\s*Phase:", re.IGNORECASE)
FOCUS_STEPS = 2  # open steps named in the compact recitation; the rest are counted


def compact_plan(plan: str, pinned: set[str]) -> str:  # (pinned: their pin_key)
    """What keeps the agent on course, in a few lines: the goal, the phase the next open step is
    in, the next open steps, how many remain, and the pinned lines. It is recited every turn and is
    the part of each request that the provider cannot serve from its cache, so it stays small; the
    full plan is recited whenever it changes."""
    goal, status_phase, section, heading = "", "", "", ""
    steps: list[tuple[str, str]] = []  # (phase heading, step)
    kept_pins: list[str] = []
    open_count = 0
    for line in plan.splitlines():
        stripped = line.strip()
        if stripped.startswith("## "):
            section = stripped
        elif stripped.startswith("### "):
            heading = stripped.removeprefix("### ").strip()
        if section == "## Goal" and stripped and not stripped.startswith("#") and not goal:
            goal = stripped
        if _PHASE_LINE.match(line) and not status_phase:
            status_phase = stripped.lstrip("- ").strip()
        if _OPEN_STEP.match(line):
            open_count += 1
            if len(steps) < FOCUS_STEPS:
                steps.append((heading, stripped))
        if pin_key(stripped) in pinned:
            kept_pins.append(stripped)
    lines = [f"Goal: {goal[:300]}"] if goal else []
    current = steps[0][0] if steps else ""
    if current or status_phase:
        lines.append(current or status_phase)
    for i, (phase, step) in enumerate(steps):
        where = f"({phase}) " if phase != current else ""
        lines.append(f"{'Next' if i == 0 else 'Then'}: {where}{step}")
    if open_count > len(steps):
        lines[-1] += f" (+{open_count - len(steps)} more open steps)"
    lines += kept_pins
    return "\n".join(lines)


def recite_plan(plan: str, version: int, pins: tuple[str, ...], full: bool = True) -> str:
    """The plan's lines (or its focus), pinned lines marked, after a one-line heading."""
    pinned = {pin_key(line) for line in pins}
    source = plan if full else compact_plan(plan, pinned)
    lines = [PIN_MARK + line if pin_key(line) in pinned else line for line in source.splitlines()]
    text = "\n".join(lines)
    if len(text) > PLAN_RECITATION_CHARS:
        text = text[:PLAN_RECITATION_CHARS] + "\n… [plan truncated here; the full file is session:task_plan.md]"
    legend = f" ({PIN_MARK.strip()} = pinned by the person: keep verbatim)" if pinned else ""
    heading = f"## Current plan — task_plan.md, version {version}" if full else f"## Plan focus — v{version}"
    return f"{heading}{legend}\n{text}"


def warnings(state: SessionState) -> list[str]:
    config = state.config
    found = []
    if state.actions_since_finding >= 2:
        found.append(f"2-Action Rule: {state.actions_since_finding} reading actions since your last finding. "
                     "Record one with findings_add first.")
    limit = config.strike_limit if config else 3
    for signature, count in sorted(state.strikes.items()):
        if 2 <= count < limit:
            found.append(f"The same failure {count} times (latest — {state.failure(signature)}). At {limit} "
                         "the run stops and the person is asked: change approach.")
    if config and state.turn >= config.warn_turn:
        found.append(
            f"Turn {state.turn}: the task is taking long. Do not retry blindly; re-read the plan and "
            f"your findings. At turn {state.danger_limit} the person will be asked whether to continue."
        )
    return found


def build_tail(state: SessionState, plan: str, plan_version: int, full_plan: bool = True) -> str:
    config = state.config
    max_turns = config.max_turns if config else 0
    parts = [f"[Tripane — turn {state.turn + 1} of at most {max_turns}]\n"
             + recite_plan(plan, plan_version, state.pins.get("task_plan.md", ()), full_plan)]
    active = warnings(state)
    if active:
        parts.append("## Warnings\n" + "\n".join(f"- {w}" for w in active))
    return "\n\n".join(parts)
