"""The research helpers of the agent loop (core/agent/research.py): the agent's delegate_research
calls and the person's own questions (Session.ask_helper). A part of AgentLoop, kept apart: how a
helper is built, reaches the model and reads, beside the loop's own turn."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re

from core import offload
from core.agent.deep_research import deep_research
from core.agent.options import WITHDRAWN, denial, refused_by_policy
from core.agent.research import (
    CONTEXT_TOKENS,
    READING_TOOLS,
    Report,
    Research,
    described,
)
from core.agent.tool_calls import tool_outcome
from core.context.engine import budget_for
from core.events import ToolCall
from core.journal import StatusChanged, ToolOutput
from core.llm import ModelError, ModelReply, ModelRequest, count_tokens
from core.providers import model_window
from core.side_writers import helper_models
from core.text import one_line
from core.tools.registry import InvalidCall

# The most of one read a research helper is given: the reading tools stop at about 4,000
# characters, but a memory file read whole may be longer.
HELPER_READ_CHARS = 16_000

STOPPED_BEFORE_ANSWER = "The person stopped the research before approving it, so {tool} was not run."

log = logging.getLogger(__name__)


class Delegation:
    """AgentLoop's research helpers (its journal, state, control, registry and model are the loop's)."""

    # The delegate calls of one reply being researched at once, each with its number (1, 2, …):
    # their steps say which they are, where they are shown together (the terminal).
    _together: dict[str, int]
    # Held while one of the agent's helpers waits for the person's approval of a read, and while
    # one of the person's own helpers does (see _helper_approval).
    _helpers_asking: asyncio.Lock
    _persons_helpers_asking: asyncio.Lock

    async def _delegate(self, call: ToolCall, arguments: dict) -> None:
        """A question handed to a research helper (core/agent/research.py): its report is the result."""
        try:
            arguments = self.registry.checked(call.name, arguments)
        except InvalidCall as exc:  # as any other tool's call would be
            self._fail(call.name, "invalid_call", str(exc), call)
            return
        question = str(arguments.get("question", "")).strip()
        if not question:
            self._fail(call.name, "invalid_call", "delegate_research needs a question: write what the helper "
                                                  "should find out, with the names and paths it needs.", call)
            return
        self.journal.notify(StatusChanged(self.state.session_id, "running_tool", call.name))
        self.journal.notify(ToolOutput(self.state.session_id, call.id))  # started
        research = await self._helper(call.id, question, str(arguments.get("bring_back") or ""),
                                      kind=arguments.get("kind") or "general")
        try:
            report = await (deep_research(research) if research.kind == "deep" else research.run())
        except ModelError as exc:
            self._fail(call.name, f"model_{exc.kind}", f"The research helper's model call failed: {exc}", call)
            return
        finally:
            self.control.tool_ended(call.id)
        if not report.text:
            self._fail(call.name, "no_report", "The research helper ended without a report. Ask it again with a "
                                               "narrower question, or read the files yourself.", call)
            return
        content = self._storable(report.for_the_agent())
        self._result(call, True, content, await self._prepare_large(call, True, content))
        await self._keep_report(question, report, "the agent")

    async def research_for_person(self, call_id: str, question: str) -> Report:
        """A question the person asks a research helper, aside from the agent (Session.ask_helper).
        It may run while the agent works, so it is not cut short by the run's Stop (cancel its
        task) and does not wait at the run's Pause; nothing of it enters the agent's context."""
        research = await self._helper(call_id, question, "", for_person=True)
        try:
            report = await research.run()
        finally:
            self.control.tool_ended(call_id)
        await self._keep_report(question, report, "the person")
        return report

    async def _helper_approval(self, call_id: str, read: ToolCall, question: str, aside: bool,
                               interruptible) -> str | None:
        """None when the person lets a helper's risky read run, else why it may not. They are asked
        as for the agent's own call, one helper's question at a time: helpers reading at once
        would each open one, and an "always" given to the first lets the others' reads run
        unasked. The person's own helper (`aside`) asks too, in a line of its own: its question
        may come while the run, or the agent's helper, waits for an answer (it would wait unseen
        behind theirs), and the run's Stop does not withdraw it."""
        async with self._persons_helpers_asking if aside else self._helpers_asking:
            if self._runs_unasked(read):
                return None
            if self.state.config.approval == "none":
                return refused_by_policy(read.name)
            stop = self.control.running_tool(call_id)
            if stop.is_set():
                return STOPPED_BEFORE_ANSWER.format(tool=read.name)
            who = "The research helper answering your question asks" if aside else \
                "A research helper asks, for the agent's question"
            asked = self._ask_approval(read, f"Allow {read.name}? {who}: {one_line(question, 200)}",
                                       call_id=call_id, read_id=read.id, helper=question, **({"aside": True} if aside else {}))
            try:
                answered = await self._answer_or_stop(asked.qid, stop, interruptible)
            finally:
                # Stopped, or the run was. A run closed with the window leaves it open, as a
                # killed one does: opening the session again withdraws it (Session._opened).
                if asked.qid not in self.state.answers and (stop.is_set() or (
                        self.control.stop_requested and not aside)):
                    self._answer_for_the_person(asked, WITHDRAWN, "the research helper that asked was stopped")
            answer = self.state.answers[asked.qid][0] if answered else None
            if answer is None:
                return STOPPED_BEFORE_ANSWER.format(tool=read.name)
            if answer.choice == WITHDRAWN:  # nobody could answer (Session.withdraw)
                return f"{read.name} was not run: {answer.text.rstrip('.')}."
            return denial(read.name, answer)

    async def _answer_or_stop(self, qid: str, stop: asyncio.Event, interruptible) -> bool:
        """Whether the person answered before they stopped the call the question is for. The
        run's Stop raises StopRequested, as for any question, where `interruptible` says so."""
        answer = asyncio.ensure_future(interruptible(self.control.answer_for(qid)))
        stopped = asyncio.ensure_future(stop.wait())
        try:
            await asyncio.wait((answer, stopped), return_when=asyncio.FIRST_COMPLETED)
        finally:
            answer.cancel()
            stopped.cancel()
        if answer.done() and not answer.cancelled():
            answer.result()  # the run's Stop
        return qid in self.state.answers

    async def _keep_report(self, question: str, report: Report, asked_by: str) -> None:
        """A report in today's daily log, where later tasks' memory search finds it. A convenience:
        the event log has the report already, so a failure is logged and nothing more."""
        if self.long_memory is None or not report.text:
            return
        try:
            await asyncio.to_thread(self.long_memory.files.append_research, question, report.text, steps=report.steps,
                                    reads=len(report.consulted), session_id=self.state.session_id, asked_by=asked_by)
        except Exception as exc:
            log.warning("could not keep the research report in the daily log: %s", exc)

    async def _helper(self, call_id: str, question: str, bring_back: str, for_person: bool = False,
                      kind: str = "general") -> Research:
        engine = await self._ensure_engine()  # the window, and which tool descriptions fit it
        config = self.state.config
        state = self.state
        (model, api_base), *others = helper_models(state)
        window, budget = self._window, engine.budget
        if model != state.model:  # the helpers' model the person chose: its own window
            window = await asyncio.to_thread(model_window, model, api_base)
            budget = budget_for(window, config.reserve_output)
        stop = self.control.running_tool(call_id)
        number = self._together.get(call_id, 0)  # its reads need no number: each call has its own card
        # The run's Stop ends the agent's research with the run; the person's own question has its
        # own task, and must not take the run's current call from its Stop.
        interruptible = (lambda awaitable: awaitable) if for_person else self.control.interruptible
        return Research(
            call_id=call_id, question=question, bring_back=bring_back,
            model=model, api_base=api_base,
            fallback=(state.model, state.api_base, self._window, state.reasoning_effort) if others else None,
            tools=[tool for tool in engine.tools if tool["function"]["name"] in READING_TOOLS],
            ask=lambda request: self._research_ask(request, interruptible),
            read=lambda read, label="": self._research_read(call_id, read, interruptible, label, question,
                                                            aside=for_person),
            record=self._record if not number else lambda step: self._record(dataclasses.replace(step, helper=number)),
            count_tokens=lambda text: count_tokens(config.model, text),
            hide=self._storable,
            cut_short=lambda: "stopped" if stop.is_set() else "budget" if self.state.over_budget else "",
            between_steps=None if for_person else self._pause_point,
            window=window, reasoning_effort=state.reasoning_effort if model == state.model else "",
            context_tokens=min(CONTEXT_TOKENS, budget, engine.budget), for_person=for_person,  # either may read
            kind=kind,
        )

    async def _research_ask(self, request: ModelRequest, interruptible) -> ModelReply:
        session_id = self.state.session_id
        return await interruptible(self.model.complete(
            request, None, lambda retry: self.journal.notify(StatusChanged(session_id, "retrying", retry.describe()))))

    async def _research_read(self, call_id: str, read: ToolCall, interruptible, label: str = "", question: str = "",
                             aside: bool = False) -> tuple[bool, str]:
        """One of a research helper's reads, shown live under the delegate call (after `label`:
        which part of a deep research reads it). `question`: what the helper was asked, by the
        agent or, `aside`, by the person."""
        self.journal.notify(ToolOutput(self.state.session_id, call_id, f"{label}{described(read)}\n"))
        try:
            arguments = read.parsed_arguments()
        except ValueError as exc:
            return False, f"The arguments of your {read.name!r} call are not valid JSON ({exc}). Send a JSON object."
        spec = self.registry.get(read.name)
        if spec is not None and spec.risky and not self._runs_unasked(read):
            refused = await self._helper_approval(call_id, read, question, aside, interruptible)
            if refused:
                return False, f"{refused} Name what you would have fetched in your report (the address)."
        ctx = self._tool_context(call_id)
        ctx.notes_sources = not aside
        content, error_type = await tool_outcome(self.registry, read.name, arguments, ctx, interruptible)
        for event in ctx.events:
            self._record(event)
        content = await asyncio.to_thread(self._storable, content)
        if len(content) > HELPER_READ_CHARS:  # kept whole, as the agent's large outputs are (a page may change)
            name = f"research-{safe_name(call_id)}-{safe_name(read.id)}.txt"
            await asyncio.to_thread(offload.save, self.session_dir, name, content)
            content = (f"{content[:HELPER_READ_CHARS]}\n[cut here, at {HELPER_READ_CHARS:,} of {len(content):,} "
                       f"characters. The whole output is saved: read on with file_read path=offload:{name} and an "
                       f"offset, or read a narrower range.]")
        return not error_type, content


def safe_name(call_id: str) -> str:
    """A call id as a part of a file name (providers' ids may hold any character)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", call_id)[:64]
