"""The tool that hands a question to a research helper with its own short context (seed 004).

The loop carries it out itself (core/agent/research.py): the helper calls the model and reads,
and only its report comes back as this call's result.
"""

from __future__ import annotations

from typing import Literal

from core.tools.context import ToolContext
from core.tools.registry import ToolError


async def delegate_research(ctx: ToolContext, question: str, bring_back: str = "",
                            kind: Literal["general", "fact", "repository", "topic", "deep"] = "general") -> str:
    """Hand a reading question to a research helper; only its report comes back to you.

    The helper has its own short context and only reading tools (file_list, file_read,
    file_search, memory_search, memory_get, and web_fetch, which the person may be asked to
    allow as for your own calls): it cannot change files, run commands or ask the person
    anything else. Use it when
    answering would take reading far more than the answer is worth keeping: surveying an
    unfamiliar codebase, finding every place a name is used across many files, digesting long
    logs or a saved large output, comparing several web pages. What it reads never enters your
    context, so your history stays short; its report names its sources so you can check them. Do
    not use it for one file you are about to edit (read that yourself), nor for work that changes
    things. Write the question so it stands alone: the helper sees nothing of your history.
    Independent questions asked in one reply, one call after another, are researched at the same time.

    Args:
        question: The self-contained question, with the names, paths and context the helper needs.
        bring_back: What the report must contain (for example "each caller as path:line with one line of context").
        kind: fact: verify one claim (memory, then two or three sources; at most 5 reads); repository: how a project is laid out and works (at most 15 reads); topic: a subject surveyed aspect by aspect, with sources and dates (at most 20 reads); deep: a large question split into 2-4 parts, each researched in a context of its own, then combined and checked (at most 50 reads; the dearest); general: anything else.
    """
    raise ToolError("delegate_research is handled by the loop")  # the loop intercepts this tool
