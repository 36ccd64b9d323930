"""Tools on the working memory and the control tools the loop acts on (human_ask, task_done)."""

from __future__ import annotations

from datetime import datetime

from core.memory.working import FINDINGS, PLAN, WriteRefused
from core.tools.context import ToolContext
from core.tools.registry import ToolError


async def plan_update(ctx: ToolContext, content: str) -> str:
    """Replace task_plan.md with a new version: tick steps, record decisions, change phases.

    Update the plan when you finish a step (tick it: `- [x]`), start a new phase (change the
    `- Phase:` line), make a decision (add it under Decisions with the reason), or meet a risk or
    blocker. Send the complete new text, not a fragment: a text that drops half of the plan's
    sections is refused and the current plan is returned to you. Lines the person pinned must stay
    verbatim. Keep the plan short; details belong in findings.md.

    Args:
        content: The complete new text of task_plan.md. Lines the person pinned must be kept verbatim.
    """
    current, version = ctx.memory.read(PLAN)
    dropped = [line for line in _sections(current) if line not in _sections(content)]
    if dropped and len(dropped) * 2 >= len(_sections(current)):  # a restructure may drop a section; not half
        # The tail recites only a focus of the plan; rewriting the file from it would lose the rest.
        # Headings of its own, none of the plan's: translated, most likely (Tripane reads them).
        renamed = (" Keep the headings as they are, in English, whatever language you write the rest in."
                   if set(_sections(content)) and not set(_sections(content)) & set(_sections(current)) else "")
        raise ToolError(f"plan_update replaces the whole file, and this text drops the section(s) {', '.join(dropped)}."
                        f"{renamed} Send the complete plan; edit it from the current text:\n\n--- current task_plan.md "
                        f"(version {version}) ---\n{current}")
    try:
        change = ctx.memory.write(PLAN, content, base_version=ctx.plan_version_seen, author="agent")
    except WriteRefused as refused:
        raise ToolError(f"{refused}\n\n--- current task_plan.md (version {refused.current_version}) ---\n"
                        f"{refused.current_text}") from None
    ctx.events.append(change)
    return f"task_plan.md updated to version {change.version}."


def _sections(plan: str) -> list[str]:
    return [line.strip() for line in plan.splitlines() if line.startswith("## ")]


async def findings_add(ctx: ToolContext, title: str, body: str) -> str:
    """Append a finding to findings.md: what you learned, its source, and why it matters.

    Record a finding after every two reading or searching actions, and whenever you learn
    something the rest of the task depends on: a cause, a constraint, a file's role, a decision's
    reason. Your context may be compacted; findings.md is not. Each finding gets a dated heading;
    keep it short and concrete (names, paths, numbers), and say what is not yet verified.

    Args:
        title: A short heading for the finding.
        body: The finding in Markdown; name sources and mark anything unverified.
    """
    if not body.strip():
        raise ToolError("findings_add needs a non-empty body.")
    entry = f"{title.strip()}\n{body.strip()}\n"
    # The same finding again (a flush before each compaction invites it) would only bury the others.
    current, version = ctx.memory.read(FINDINGS)
    if f"] {entry}" in current:
        return f"Already in findings.md (version {version}) with this title and text; nothing added."
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M")
    change = ctx.memory.append(FINDINGS, f"\n## [{stamp}] {entry}", author="agent")
    ctx.events.append(change)
    return f"Finding recorded in findings.md (version {change.version})."


async def human_ask(ctx: ToolContext, question: str, options: list[str] | None = None, fallback: str = "") -> str:
    """Ask the person supervising you a question and wait for the answer.

    Use it when the goal is ambiguous, when a choice is theirs to make (scope, trade-offs, anything
    irreversible or costly), or when you are stuck after changing approach. The run pauses until
    they answer; the answer arrives as the result of this call. Ask one question at a time: say
    why you need to know, give the context they need, and offer concrete options when there are
    some (choosing is quicker than writing). Say what you will do if they cannot answer now
    (`fallback`): if they let the agent go on without them, that is what you get back after a
    while. Do not use it for what you can find out yourself.

    Args:
        question: What you need to know or decide, why, and the context the person needs.
        options: Suggested answers; the person may also answer in free text.
        fallback: What you will do if no answer comes, for example "keep the current date format"; empty when you cannot go on without an answer.
    """
    raise ToolError("human_ask is handled by the loop")  # the loop intercepts this tool


async def task_done(ctx: ToolContext, summary: str) -> str:
    """Declare the task finished, with a summary of the result for the person.

    Call it only when the goal in task_plan.md is met and verified (tests pass, the file exists,
    the answer is checked). The run ends and the summary is shown to the person: say what was
    done, where the results are, how you verified them, and anything left open.

    Args:
        summary: What was done, where the results are, and anything left open.
    """
    raise ToolError("task_done is handled by the loop")  # the loop intercepts this tool
