"""Deep research (seed 002 §6.1's fourth kind): a question too large for one helper is split into
parts, each researched by a helper with a context of its own, so that one part's pages do not crowd
out another's; then their reports are combined and checked against each other for contradictions
and for what none of them answers.

The parts run at the same time, as the seed has them: a deep research of four parts takes about as
long as its longest part, not the four in turn. They share the call's card (each read is shown with
its part), its Stop and the session's Pause, and the reads the research gets, in equal shares. A
part whose model fails is said to have failed in the combining request; the others still count.

Every request is a research_step of the one delegate call, numbered in the order they end; a part's
steps carry its number. Only the combining step is final, and it carries what the whole research cost.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Sequence

from core.agent.control import all_at_once
from core.agent.research import Report, Research
from core.events import ResearchStep, Usage
from core.llm import ModelError, ModelRequest
from core.paths import resource_text
from core.text import first_words

log = logging.getLogger(__name__)

MOST_PARTS = 4
DEEP_READS = 50  # the seed's bound on a deep research's tool calls, all its parts together
PART_WORDS = 1200  # of a part's report, in what the combining request reads (it asked for about 400)


async def deep_research(research: Research) -> Report:
    """Plan, research the parts, combine. `research` is the helper as any other kind would be
    (its model, reads, records); its question is the whole question."""
    steps, spent = 0, Usage()

    def record(step: ResearchStep) -> None:
        nonlocal steps, spent
        steps, spent = steps + 1, spent + step.usage
        research.record(dataclasses.replace(step, step=steps, spent=spent if step.final else Usage()))

    plan, fell_back = await research.complete(_request(research, "research_plan.md", research.asked()), first=True)
    record(ResearchStep(call_id=research.call_id, step=0, text=research.hide(plan.text), usage=plan.usage,
                        model=research.model, fell_back=fell_back))
    parts = parts_of(plan.text, research.question)
    reports: list[tuple[str, Report | ModelError]] = []
    if not research.cut_short():
        if research.between_steps is not None:
            await research.between_steps()
        reports = await _researched(research, parts, record)
    if reports and all(isinstance(report, ModelError) for _, report in reports):
        raise reports[0][1]  # every part's model failed: the call fails, as one helper's would
    combined, _ = await research.complete(_request(research, "research_combine.md", _combining(research, reports)),
                                      first=False)
    text = research.hide(combined.text)
    record(ResearchStep(call_id=research.call_id, step=0, text=text, usage=combined.usage, model=research.model,
                        final=True))
    done = [report for _, report in reports if isinstance(report, Report)]
    consulted = tuple(line for report in done for line in report.consulted)
    cut = research.cut_short() or ("reads" if any(report.cut_short == "reads" for report in done) else "")
    return Report(text.strip(), steps, consulted, cut)


async def _researched(research: Research, parts: Sequence[str],
                      record: Callable[[ResearchStep], None]) -> list[tuple[str, Report | ModelError]]:
    """Each part's report, or the model's failure that ended it, all parts at once. A Stop of the
    run (or any other error) ends every part."""
    share = DEEP_READS // len(parts)

    async def part(number: int, question: str) -> Report | ModelError:
        helper = dataclasses.replace(
            research, question=question, kind="general", reads_allowed=share, fallback=None, consulted=[],
            bring_back=f"What this part needs. It is one part of a larger question: {research.question.strip()}",
            record=lambda step: record(dataclasses.replace(step, final=False, part=number)),
            read=lambda call: research.read(call, f"part {number}: "))
        try:
            return await helper.run()
        except ModelError as exc:
            log.warning("deep research: part %d failed: %s", number, exc)
            return exc

    reports = await all_at_once(part(number, question) for number, question in enumerate(parts, 1))
    return list(zip(parts, reports, strict=True))


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


def _combining(research: Research, reports: Sequence[tuple[str, Report | ModelError]]) -> str:
    def said(report: Report | ModelError) -> str:
        if isinstance(report, ModelError):
            return f"(this part failed: its model call did — {report})"
        return _words(report.text, PART_WORDS) or "(no report)"

    parts = "\n\n".join(f"## Part {i}: {part}\n\n{said(report)}" for i, (part, report) in enumerate(reports, 1))
    return f"{research.asked()}\n\n# The parts' reports\n\n{parts or '(no part was researched)'}"


def _words(text: str, most: int) -> str:
    start = first_words(text, most)  # a report in Chinese has few spaces: its characters are counted
    return text.strip() if start is None else start.strip() + " … (cut here)"


def _request(research: Research, prompt: str, asked: str) -> ModelRequest:
    """A request of the deep research's own, without tools (the parts' helpers read)."""
    return ModelRequest(model=research.model, api_base=research.api_base, window=research.window,
                        reasoning_effort=research.reasoning_effort, messages=[
                            {"role": "system", "content": resource_text("prompts", prompt)},
                            {"role": "user", "content": asked}])
