"""Deep research (seed 002 §6.1's fourth kind): a question too large for one helper is split into
parts, each researched by a helper with a context of its own, so that one part's pages do not crowd
out another's; then their reports are combined and checked against each other for contradictions
and for what none of them answers. The parts run one after another: they share the call's card,
its Stop and the session's Pause, and one at a time each of them holds only its own reads.

Every request is a research_step of the one delegate call, numbered in order; only the combining
step is final, and it carries what the whole research cost.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from core.agent.research import Report, Research
from core.events import ResearchStep, Usage
from core.llm import ModelRequest
from core.paths import resource_text

MOST_PARTS = 4
DEEP_READS = 50  # the seed's bound on a deep research's tool calls, all its parts together
PART_WORDS = 1200  # of a part's report, in what the combining request reads (it asked for about 400)


async def deep_research(research: Research) -> Report:
    """Plan, research each part, combine. `research` is the helper as any other kind would be
    (its model, reads, records); its question is the whole question."""
    steps, spent, consulted = 0, Usage(), []

    def record(step: ResearchStep) -> None:
        nonlocal steps, spent
        steps, spent = steps + 1, spent + step.usage
        research.record(dataclasses.replace(step, step=steps, spent=spent if step.final else Usage()))

    plan, fell_back = await research.complete(_request(research, "research_plan.md", research.asked()), first=True)
    record(ResearchStep(call_id=research.call_id, step=0, text=research.hide(plan.text), usage=plan.usage,
                        model=research.model, fell_back=fell_back))
    reports: list[tuple[str, Report]] = []
    for part in parts_of(plan.text, research.question):
        if research.cut_short() or len(consulted) >= DEEP_READS:
            break
        if research.between_steps is not None:
            await research.between_steps()
        helper = dataclasses.replace(
            research, question=part, kind="general", reads_allowed=DEEP_READS - len(consulted), fallback=None,
            bring_back=f"What this part needs. It is one part of a larger question: {research.question.strip()}",
            consulted=[], record=lambda step: record(dataclasses.replace(step, final=False)))
        report = await helper.run()
        consulted.extend(report.consulted)
        reports.append((part, report))
    combined, _ = await research.complete(_request(research, "research_combine.md", _combining(research, reports)),
                                      first=False)
    text = research.hide(combined.text)
    record(ResearchStep(call_id=research.call_id, step=0, text=text, usage=combined.usage, model=research.model,
                        final=True))
    cut = research.cut_short() or ("reads" if len(consulted) >= DEEP_READS else "")
    return Report(text.strip(), steps, tuple(consulted), cut)


def parts_of(plan: str, question: str) -> list[str]:
    """The parts the plan names (at most MOST_PARTS), or the whole question as its one part when
    the plan names none the helper could read."""
    from core.memory.reflection import (  # the YAML reader the reports use
        ReflectionUnreadable,
        load,
    )

    try:
        data = load(plan)
    except ReflectionUnreadable:
        data = None
    items = data.get("parts") if isinstance(data, dict) else data
    parts = [str(item).strip() for item in items if isinstance(item, (str, int, float)) and str(item).strip()] \
        if isinstance(items, list) else []
    return parts[:MOST_PARTS] or [question.strip()]


def _combining(research: Research, reports: Sequence[tuple[str, Report]]) -> str:
    parts = "\n\n".join(f"## Part {i}: {part}\n\n{_words(report.text, PART_WORDS) or '(no report)'}"
                        for i, (part, report) in enumerate(reports, 1))
    return f"{research.asked()}\n\n# The parts' reports\n\n{parts or '(no part was researched)'}"


def _words(text: str, most: int) -> str:
    words = text.split(" ")
    return text.strip() if len(words) <= most else " ".join(words[:most]) + " … (cut here)"


def _request(research: Research, prompt: str, asked: str) -> ModelRequest:
    """A request of the deep research's own, without tools (the parts' helpers read)."""
    return ModelRequest(model=research.model, api_base=research.api_base, window=research.window,
                        reasoning_effort=research.reasoning_effort, messages=[
                            {"role": "system", "content": resource_text("prompts", prompt)},
                            {"role": "user", "content": asked}])
