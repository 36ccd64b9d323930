"""A research helper: a question the agent delegates, worked on in a short context of its own.

Seed 004: the one who plans should keep the state of the work, not every page read to get there.
A survey of a codebase that reads forty files would leave all forty in the agent's context, paid
for on every later request, for an answer it needed once. The helper reads in its own context — a
fixed prompt, the question, its reads — and only its report comes back, as the delegate_research
call's result. Its model calls are recorded (ResearchStep) for the person and counted in the
session's spending and budget; what it read is not kept, since the files are there to read again.

The helper only reads (READING_TOOLS): files, memory and web pages, whose fetch the person may be
asked to allow as the agent's own would be. Nothing it does changes the work, so a run interrupted
in the middle of one loses nothing but the report (and the question it asked, withdrawn).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from dataclasses import replace as dataclass_replace
from typing import Any

from core.agent.tool_calls import with_own_ids
from core.context.history import (
    MESSAGE_OVERHEAD_TOKENS,
    Message,
    message_text,
    reply_message,
)
from core.events import Consulted, ResearchStep, ToolCall, Usage
from core.llm import ModelError, ModelReply, ModelRequest
from core.paths import resource_text

log = logging.getLogger(__name__)

# web_fetch under the session's approvals: the agent's helper asks the person, theirs cannot (delegation.py).
READING_TOOLS = ("file_list", "file_read", "file_search", "memory_get", "memory_search", "web_fetch", "web_search")
MAX_STEPS = 12  # model calls; the last one writes the report
# The most the helper's context may hold before it must report: a short context is the point,
# and twelve reads of at most 4,000 characters each come to about 14,000 tokens.
CONTEXT_TOKENS = 24_000
ERROR_KEPT_CHARS = 300  # of a failed read, in its event
# The helper's calls listed under its report, each in a line of at most 100 characters: with a
# report of the advised 400 words, the result stays under the size that would be offloaded.
CALLS_LISTED = 12

# Seed 002 §6.1's kinds of research: how each goes about it, and the most reads it gets ("general":
# no set way, only the steps and the context bound it).
KINDS: dict[str, tuple[int, str]] = {
    "fact": (5, "A fact check: verify one claim. Search long-term memory first (it may have been checked "
                "before), then two or three authoritative sources (the official site or documentation before an "
                "encyclopedia, an encyclopedia before news). If they agree, say the claim is confirmed, with them; "
                "if they disagree, say it is disputed, with each side and its source."),
    "repository": (15, "A repository survey: read its README, then its layout (the key folders and files), then "
                       "its entry points, configuration and core modules. Report what it is for, how it is built "
                       "and where things live."),
    "topic": (20, "A topic survey: first outline the aspects the question needs, then research each. Prefer "
                  "authoritative sources (papers, official blogs, then industry reports, then news), note each "
                  "source's date, and end with what is still unknown."),
}

# Why the helper is told to report before it says it is done, and what it is told.
CUT_SHORT = {
    "steps": "This is your last step",
    "context": "Your context is full",
    "stopped": "The person asked you to stop researching",
    "budget": "The session's budget is spent",
    "reads": "You have made all the reads this research gets",
}


@dataclass(frozen=True)
class Report:
    text: str  # "" when the helper gave none
    steps: int
    consulted: tuple[str, ...]  # each read, as `file_read path=core/x.py`
    cut_short: str = ""  # a key of CUT_SHORT, or "" when the helper finished by itself

    def for_the_agent(self) -> str:
        """The delegate call's result: the report, and what it rests on."""
        how = f"{self.steps} step{'s' * (self.steps != 1)}"
        if self.cut_short:
            how += f"; reported early: {CUT_SHORT[self.cut_short].lower()}"
        listed = self.consulted[:CALLS_LISTED]
        read = "\n".join(f"- {line}" for line in listed) or "- none"
        more = f"\n- … and {len(self.consulted) - len(listed)} more" if len(self.consulted) > len(listed) else ""
        return f"Research report ({how}):\n\n{self.text}\n\nThe helper's calls:\n{read}{more}"


@dataclass
class Research:
    """One delegated question. The loop supplies how to reach the model and how to read."""

    call_id: str
    question: str
    bring_back: str
    model: str
    api_base: str | None
    tools: list[dict[str, Any]]  # the reading tools' schemas, always the same (the helper's prefix is cached)
    ask: Callable[[ModelRequest], Awaitable[ModelReply]]  # raises ModelError, StopRequested
    # (ok, output) of one call; a second argument, if given, goes before the read where it is shown
    read: Callable[..., Awaitable[tuple[bool, str]]]
    record: Callable[[ResearchStep], object]
    count_tokens: Callable[[str], int]
    hide: Callable[[str], str] = lambda text: text  # secrets out of what is kept
    cut_short: Callable[[], str] = lambda: ""  # "stopped" | "budget" | ""
    between_steps: Callable[[], Awaitable[None]] | None = None  # where the person's Pause holds the helper
    window: int | None = None
    reasoning_effort: str = ""
    context_tokens: int = CONTEXT_TOKENS
    for_person: bool = False  # the person asked (aside from the agent), not the agent
    kind: str = "general"  # a key of KINDS, or "general"
    reads_allowed: int | None = None  # the most reads, when not its kind's (a part of a deep research)
    # The session's model, its server, window and effort: who reads when the helpers' model the
    # person chose fails the first request (no key, no tools, gone). None: the helper is that model.
    fallback: tuple[str, str | None, int | None, str] | None = None
    consulted: list[str] = field(default_factory=list)
    _call_ids: set[str] = field(default_factory=set)  # of its calls so far: each answered by its own result

    def asked(self) -> str:
        """The question as the helper is given it, with what to bring back."""
        asked = f"# Question\n{self.question.strip()}"
        return asked + (f"\n\n# Bring back\n{self.bring_back.strip()}" if self.bring_back.strip() else "")

    async def run(self) -> Report:
        asked = self.asked()
        if self.most_reads is not None:
            way = f"{KINDS[self.kind][1]} " if self.kind in KINDS else ""
            asked += f"\n\n# How\n{way}You have at most {self.most_reads} reads."
        messages: list[Message] = [{"role": "system", "content": resource_text("prompts", "research.md")},
                                   {"role": "user", "content": asked}]
        tokens, spent = 0, Usage()
        for step in range(1, MAX_STEPS + 1):
            if step > 1 and self.between_steps is not None:
                await self.between_steps()
            why = self.cut_short() or ("steps" if step == MAX_STEPS else "") or (
                "context" if tokens > self.context_tokens else "") or ("reads" if self._reads_left() == 0 else "")
            if why:
                messages.append({"role": "user", "content": (
                    f"[Tripane] {CUT_SHORT[why]}. Do not call tools: write your report now from what you "
                    "have read, and say what is left unanswered.")})
            request = ModelRequest(
                model=self.model, messages=list(messages), tools=self.tools,
                tool_choice="none" if why else "auto", api_base=self.api_base,
                cache_breakpoints=(0, len(messages) - 1), window=self.window,
                reasoning_effort=self.reasoning_effort)
            reply, fell_back = await self.complete(request, first=step == 1)
            calls = () if why else with_own_ids(reply.tool_calls, self._call_ids, f"read_{step}")
            consulted = await self._read_all(reply, calls, messages)
            text = self.hide(reply.text)
            spent = spent + reply.usage
            self.record(ResearchStep(call_id=self.call_id, step=step, text=text, tool_calls=calls,
                                     consulted=consulted, usage=reply.usage, model=self.model, final=not calls,
                                     spent=Usage() if calls else spent, for_person=self.for_person,
                                     question=self.question if self.for_person and step == 1 else "",
                                     fell_back=fell_back))
            if not calls:
                return Report(text.strip(), step, tuple(self.consulted), why)
            tokens = await asyncio.to_thread(self._tokens, messages)
        raise AssertionError("the last step is told to report")  # pragma: no cover

    async def complete(self, request: ModelRequest, first: bool) -> tuple[ModelReply, str]:
        """The reply, and why the chosen helpers' model gave way to the session's ("" when it did
        not). Only at the first request: later ones carry that model's own replies."""
        try:
            return await self.ask(request), ""
        except ModelError as exc:
            if not first or self.fallback is None:
                raise
            failed = f"{self.model}: {str(exc).rstrip('.')}"
            log.warning("research helper: %s; the session's model reads instead", failed)
            self.model, self.api_base, self.window, self.reasoning_effort = self.fallback
            self.fallback = None
            return await self.ask(dataclass_replace(request, model=self.model, api_base=self.api_base,
                                                    window=self.window, reasoning_effort=self.reasoning_effort)), failed

    async def _read_all(self, reply: ModelReply, calls: tuple[ToolCall, ...],
                        messages: list[Message]) -> tuple[Consulted, ...]:
        if not calls:
            return ()
        messages.append(reply_message(reply.text, calls, self.model, self.api_base,
                                      reply.reasoning, reply.thinking_blocks, reply.reasoning_details))
        consulted = []
        for call in calls:
            refused = self._reads_left() == 0  # asked for more in one reply than its kind of research gets
            if refused:
                ok, output = False, (f"Not read: this research gets at most {self.most_reads} reads. Write your "
                                     "report from what you have read.")
            elif call.name in READING_TOOLS:
                ok, output = await self.read(call)
            else:
                ok, output = False, (f"{call.name} is not available to you: you can only read, with "
                                     f"{', '.join(READING_TOOLS)}. Report what needs doing instead.")
            self.consulted.append(described(call) + (" (not read)" if refused else "" if ok else " (failed)"))
            consulted.append(Consulted(ok, len(output), "" if ok else output[:ERROR_KEPT_CHARS]))
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": output if ok else f"ERROR: {output}"})
        return tuple(consulted)

    @property
    def most_reads(self) -> int | None:
        if self.reads_allowed is not None:
            return self.reads_allowed
        return KINDS[self.kind][0] if self.kind in KINDS else None

    def _reads_left(self) -> int | None:
        """None: no bound but the steps and the context."""
        return None if self.most_reads is None else max(0, self.most_reads - len(self.consulted))

    def _tokens(self, messages: list[Message]) -> int:
        return sum(self.count_tokens(message_text(m)) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def described(call: ToolCall) -> str:
    """A read in one short line: `file_read path=core/x.py offset=120`."""
    try:
        shown = " ".join(f"{key}={value}" for key, value in call.parsed_arguments().items())
    except ValueError:
        shown = call.arguments
    shown = " ".join(shown.split())
    return f"{call.name} {shown if len(shown) <= 80 else shown[:79] + '…'}".rstrip()
