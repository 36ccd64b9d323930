"""Tools on long-term memory: search it, read it, add a fact, save a skill."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.llm import ModelError
from core.memory import MIN_SCORE
from core.memory.guard import MemoryRefused
from core.tools.context import ToolContext
from core.tools.registry import ToolError

if TYPE_CHECKING:
    from core.memory.longterm import LongTermMemory


def _memory(ctx: ToolContext) -> LongTermMemory:
    if ctx.long_memory is None:
        raise ToolError("Long-term memory is not available in this session; use findings.md instead.")
    return ctx.long_memory


async def memory_search(ctx: ToolContext, query: str, top_k: int = 6) -> str:
    """Search long-term memory (MEMORY.md facts, daily logs of past sessions, skills) by meaning and keywords.

    Search before you research something that earlier sessions may have met: an error message, a
    project's conventions, how a tool was set up. Results are ranked by meaning and by exact words,
    each with its file, lines and score; read more around a result with memory_get.

    Args:
        query: What you want to know; exact identifiers (error codes, function names) are matched too.
        top_k: How many results to return (1-20).
    """
    memory = _memory(ctx)
    try:
        hits = await memory.asearch(query, top_k=max(1, min(20, int(top_k))), threshold=MIN_SCORE)
    except (ValueError, ModelError) as exc:
        raise ToolError(f"Memory search failed: {exc}") from None
    if not hits:
        return f"No memory matches {query!r}."
    lines = [f"{len(hits)} results for {query!r} (score = 0.7 × meaning + 0.3 × keywords):"]
    for hit in hits:
        text = hit.text if len(hit.text) <= 700 else hit.text[:700] + " …"
        lines.append(f"\n— {hit.path} lines {hit.start_line}–{hit.end_line} (score {hit.score:.2f})\n{text}")
    notice = memory.status().notice
    if notice:
        lines.append(f"\n(Search note: {notice}.)")
    return "\n".join(lines)


async def memory_get(ctx: ToolContext, path: str, from_line: int = 1, lines: int = 80) -> str:
    """Read a long-term memory file: MEMORY.md, daily/YYYY-MM-DD.md or skills/<name>.md.

    Use the path and line numbers a memory_search result shows. Files outside the memory folder
    cannot be read with it; use file_read for the workdir.

    Args:
        path: The file, relative to the memory folder, as memory_search shows it.
        from_line: The first line to read (1-based).
        lines: How many lines to read (at most 400).
    """
    try:
        return _memory(ctx).get(path, int(from_line), max(1, min(400, int(lines))))
    except (ValueError, FileNotFoundError) as exc:
        raise ToolError(str(exc)) from None


async def memory_remember(ctx: ToolContext, fact: str, kind: str = "fact", supersedes: str = "") -> str:
    """Add a lasting fact, preference or lesson to MEMORY.md, for later sessions. Only what an action verified.

    Never secrets, temporary values (temp paths, process ids) or guesses: they are refused.

    Args:
        fact: One self-contained sentence, true beyond this session.
        kind: fact, preference or lesson.
        supersedes: The id (like m12) of an entry this one replaces; the old entry is marked, not deleted.
    """
    memory = _memory(ctx)
    try:
        entry, contradicts = memory.remember(fact, kind=kind, source=ctx.session_id,
                                             supersedes=supersedes.strip() or None)
    except MemoryRefused as exc:
        raise ToolError(str(exc)) from None
    note = ""
    if contradicts:
        ids = ", ".join(e.id for e in contradicts)
        note = (f" It may contradict {ids}; that is flagged in MEMORY.md for the person to confirm. "
                "If it replaces an entry, say so with supersedes.")
    return f"Remembered as {entry.id} in MEMORY.md ({entry.section}).{note}"


async def memory_save_skill(ctx: ToolContext, name: str, triggers: list[str], steps: list[str],
                            tools: list[str] | None = None, change: str = "") -> str:
    """Save a reusable procedure that worked, as a skill offered to future tasks that match its triggers.

    Args:
        name: A short name for the skill.
        triggers: Conditions under which the skill applies, one per item (compared with future tasks).
        steps: The steps, in order, each one concrete.
        tools: The tools the steps use.
        change: For a new version of an existing skill, what changed and why.
    """
    try:
        skill = _memory(ctx).save_skill(name, triggers, steps, tools or [], source=ctx.session_id, change=change)
    except MemoryRefused as exc:
        raise ToolError(str(exc)) from None
    return f"Skill saved as skills/{skill.slug}.md ({skill.versions[-1].split(' ', 1)[0]})."
