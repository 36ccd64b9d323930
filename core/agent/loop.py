"""The agent loop: an async generator of recorded events.

One turn = assemble the context → call the model → run the tools → apply the rules. Where the loop
goes next is decided from the session's derived state alone (an open question, a strike that is
due, the danger threshold, calls left open by a crash), so a loop started on a replayed log simply
continues. `steps()` yields every event as it is recorded; the GUI, the CLI and tests consume it.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import logging
import os
import re
from collections.abc import AsyncIterator
from contextlib import nullcontext
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from string import Template
from typing import TYPE_CHECKING, NamedTuple

from core import big_text, offload, pictures
from core.agent import diagnosis, put_back_diagnosis
from core.agent.control import Control, StopRequested, all_at_once
from core.agent.delegation import Delegation, safe_name
from core.agent.options import (
    NO_ANSWER,
    answer_line,
    denial,
    reason_label,
    refused_by_policy,
)
from core.agent.replies import not_an_answer
from core.agent.research import described
from core.agent.rules import (
    describe_failure,
    error_signature,
    failure_excerpt,
    for_the_person,
)
from core.agent.running_calls import RunningCall, forget_left_running, left_unfinished
from core.agent.state import approval_key
from core.agent.tool_calls import tool_outcome, with_own_ids
from core.alongside import sessions_alongside
from core.changes import FILE_TOOLS, SHELL_TOOL, path_of, relative
from core.context import compaction
from core.context.engine import (
    Assembled,
    ContextEngine,
    FixedZone,
    budget_for,
    choose_fixed_zone,
)
from core.context.history import STOPPED_BY_PERSON, History, OutputSeen
from core.context.project import instructions_told_since_compaction
from core.context.session_facts import session_facts
from core.context.tail import build_tail
from core.diffs import diff_told
from core.events import (
    AssistantMessage,
    BackgroundKept,
    BackgroundStopped,
    Compaction,
    Danger,
    ErrorDiagnosed,
    ErrorRecorded,
    Event,
    FilesChangedOutside,
    FileSeen,
    FlushRequested,
    HumanAnswer,
    HumanQuestion,
    MemoryRecalled,
    Record,
    ServerToolsListed,
    SessionEnded,
    SessionPaused,
    SessionResumed,
    ToolCall,
    ToolResult,
    Usage,
    WindowLearned,
)
from core.journal import CallWriting, Journal, StatusChanged, TextDelta, ToolOutput
from core.llm import (
    AT_ONCE_S,
    ModelClient,
    ModelError,
    ModelReply,
    ModelRequest,
    Retry,
    count_tokens,
    encode_tokens,
    prepare_tokenizer,
    refuses_pictures,
    supports_tool_choice,
)
from core.logs import TOLD
from core.memory import MIN_SCORE, progress
from core.memory.layers import Episode, sections_of
from core.memory.working import PLAN, PROGRESS, WorkingMemory, current_step
from core.originals import Originals
from core.paths import data_dir_of, missing_work_folder, resource_text
from core.providers import model_window, sees_pictures
from core.render import flush_note
from core.secrets import Redactor, get_api_key, is_held, provider_of
from core.side_writers import first_reply, side_writers
from core.snapshot import WorkFolderSnapshot
from core.stay_awake import STAY_AWAKE
from core.store import StoreError, as_disk_full
from core.text import money, shown_text
from core.tool_servers.pool import POOL, ServerPool
from core.tool_servers.tools import PREFIX as SERVER_TOOLS
from core.tool_servers.tools import offered_tools
from core.tool_servers.tools import register as register_server_tools
from core.tools.context import ToolContext
from core.tools.files import rewrite_refused
from core.tools.registry import ToolRegistry
from core.tools.seen import SeenFiles
from core.tools.shell import (
    COPYING_NOTE,
    Background,
    keep_background,
    kept_in_background,
    left_in_background,
    running_in_background,
    stop_background,
)

if TYPE_CHECKING:
    from core.folder_approvals import FolderApprovals
    from core.memory.longterm import LongTermMemory

log = logging.getLogger(__name__)
# Before these, what changed outside the agent since its last step is looked for (it is told), and
# after them the folder is marked as they left it (_look_outside).
WRITING_TOOLS = (*FILE_TOOLS, SHELL_TOOL)
# The tool that replaces a file whole: refused on a file changed outside since the agent's last step,
# whose change it would lose (file_edit replaces only the text it names, in the file as it is now).
REWRITING_TOOL = "file_write"

THREE_STRIKE_OPTIONS = ("retry_with_hint", "skip_step", "edit_plan", "change_model", "stop")
DANGER_OPTIONS = ("continue", "guidance", "stop")
RECENT_STEPS_SHOWN = 6  # the turn threshold's question shows the latest tool results
APPROVAL_OPTIONS = ("approve", "deny", "always_call", "always")
BUDGET_OPTIONS = ("continue", "stop")
WORKDIR_GROUPS = ("file", "shell", "delegate")  # the tools that work in the work folder
REBOOT_KEYS = ("goal", "tried", "wrong", "differently", "ask_human")
_PHASE = re.compile(r"^\s*-\s*Phase:\s*(.+?)\s*$", re.M)


MINUTE_S = 60.0  # a minute of waiting for an answer, in seconds (tests shorten it)
ANSWERS_LOGGED = 5  # the latest questions to the person and their answers, in an episode of the daily log
DIAGNOSES_LOGGED = 3  # of a burst's failures diagnosed as they came again, the latest


@dataclass(frozen=True)
class LoopSettings:
    offload_chars: int = 4000  # tool outputs longer than this go to offload/
    offload_keep_chars: int = 1000  # what of them stays in the context: their start and their end
    # A task that ends done with what its commands left running still running (the dev server the
    # person asked for) leaves it running for them: a window can show it and stop it. A run from
    # the terminal stops it, as the process that would have to is ending.
    keeps_left_running: bool = False
    # The tool servers whose tools a session is given before its first request (None: none).
    tool_servers: ServerPool | None = POOL


def output_digest(content: str) -> str:
    return big_text.sha256_hex(content)[:32]


def repeated_output_notice(tool: str, seen: OutputSeen, size: int) -> str:
    """What an information tool's output becomes when the model still has the very same output."""
    where = ("That output is still above in this conversation: use it there rather than reading it again."
             if seen.offload_path is None else
             f"Its start and end are above in this conversation; the whole of it is in "
             f"offload:{PurePosixPath(seen.offload_path).name}.")
    return f"[Unchanged: the same {size:,} characters your {tool} call {seen.call_id} returned at turn {seen.turn}. {where}]"


# Outputs at least this long are hashed and saved on a worker thread (see _prepare_large).
BACKGROUND_OUTPUT_CHARS = 1_000_000


class Prepared(NamedTuple):
    """A large output's digest and, unless it repeats one the model has, its offload file's path
    and the excerpt that stays in the context."""
    digest: str
    saved: tuple[str, str] | None


def session_key(model: str, api_base: str | None) -> dict[str, str]:
    """The session model's API key from the keyring (or held for the run), by the name it is hidden under."""
    key = get_api_key(model, api_base) if model else None
    where = "typed for this run" if is_held(model, api_base) else "keyring"
    return {f"{provider_of(model)} API key ({where})": key} if key else {}


class AgentLoop(Delegation):
    def __init__(
        self,
        *,
        journal: Journal,
        memory: WorkingMemory,
        registry: ToolRegistry,
        model: ModelClient,
        session_dir: Path,
        control: Control,
        settings: LoopSettings = LoopSettings(),
        long_memory: LongTermMemory | None = None,
        folder_approvals: FolderApprovals | None = None,
    ):
        self.journal = journal
        self.long_memory = long_memory
        self.folder_approvals = folder_approvals  # commands the person allowed in this work folder
        self.state = journal.state
        self.memory = memory
        self.registry = registry
        self.model = model
        self.session_dir = session_dir
        self.control = control
        self.settings = settings
        # The environment the commands inherit; the key the session's model is called with joins
        # it when the run starts (a keyring lookup: off the event loop, see steps).
        self._hide_secrets = Redactor(dict(os.environ))
        self._out: list[Record] = []
        self._started_at_seq = self.state.last_seq
        self._episode_mark = self.state.last_seq  # the daily log has what happened before this run
        # An episode due while long-term memory was still loading (the window loads it after its
        # first frame): (status, summary), written when the memory is attached.
        self._episode_due: tuple[str, str] | None = None
        self._plan_version_seen = memory.version(PLAN)
        self.engine: ContextEngine | None = None
        self._window: int | None = None  # the context window the engine budgets for, once known
        self._sees_pictures = False  # whether the model takes pictures, once known (with the window)
        self._budgeted_for: tuple[str, str | None, int | None] | None = None  # the model it is for
        self._allowed_groups: frozenset[str] | None = None  # None: every tool group
        self._plan_version_recited = 0
        # The files the agent read or wrote, as they were then (ToolContext.seen), once needed.
        self._seen_files: SeenFiles | None = None
        self._changing_in_background: set[str] = set()  # see _look_outside
        self._reply_cut_off = False  # the last reply ended at the output limit (finish_reason "length")
        self._written: list[str] = []  # the reply being streamed, as far as it came (_call_model)
        self._asked_with: Assembled | None = None  # the context it answers (_reply)
        self._call_ids: set[str] | None = None  # the ids of the session's calls so far, once needed
        self._together: dict[str, int] = {}  # see Delegation
        self._helpers_asking = asyncio.Lock()
        self._persons_helpers_asking = asyncio.Lock()

    # --- driving ---------------------------------------------------------------------------------

    async def steps(self) -> AsyncIterator[Record]:
        # The first keyring lookup loads its backends (0.2 s), and a locked keyring may ask for its
        # password: on the event loop that froze the window.
        key = await asyncio.to_thread(session_key, self.state.model, self.state.api_base)
        from core.web_search import search_key_named  # (not needed to start Tripane)

        searching = await asyncio.to_thread(search_key_named)  # (the search provider's, as the model's)
        self._hide_secrets = Redactor(dict(os.environ), {**key, **searching})
        try:
            while not self.state.ended:
                try:
                    await self._step()
                except StopRequested:
                    self.stopped_by_person()
                except asyncio.CancelledError:
                    raise
                except Exception as exc:
                    if full := as_disk_full(exc, self.session_dir):
                        # Nothing more can be written, not even the end: the run stops as a crash
                        # would, and resumes from what was saved once there is room.
                        log.error("session %s: %s", self.state.session_id, full.what, extra=TOLD)
                        raise full from exc
                    # a programmer error: keep the log consistent and say so
                    log.exception("agent loop failed")
                    self._close_open_calls("Tripane failed internally while this call ran.")
                    self._end("error", f"Internal error in Tripane: {type(exc).__name__}: {exc}")
                finally:
                    self.journal.notify(StatusChanged(self.state.session_id, "idle"))
                while self._out:
                    yield self._out.pop(0)
        finally:  # ended, stopped or closed: a server the agent started does not outlive the run...
            session_id = self.state.session_id
            kept = (await keep_background(session_id)  # ...unless the task is done, in a window
                    if self.settings.keeps_left_running and self.state.status == "ended:done" else [])
            if stopped := await stop_background(session_id):
                log.info("stopped %d background process group(s) of session %s", len(stopped), session_id)
                self._background_stopped(tuple(stopped))
            if kept:
                log.info("kept %d background process group(s) of session %s running", len(kept), session_id)
                self._background_kept(kept)
            forget_left_running(self.session_dir, keep={left.call_id for left in kept_in_background(session_id)})

    def _background_stopped(self, commands: tuple[str, ...]) -> None:
        """Said as the run ends: the person who asked for a server to try finds it gone, and the
        agent, should the session go on, would think it still runs. (Not yielded: the steps are
        over; the journal's listeners show it.) A record that fails is logged: the run is over."""
        try:
            self.journal.record(BackgroundStopped(commands))
            self.journal.record(self.memory.append(PROGRESS, progress.background_stopped(commands), author="core"))
        except (OSError, StoreError) as exc:
            log.warning("what was stopped with the run was not recorded: %s", exc)

    def _background_kept(self, kept: list[Background]) -> None:
        """Said as a task ends done with what its commands left running still running: the person
        is shown what runs on and how to stop it; the agent, should the session go on, that it
        runs. A record that fails is logged (the run is over)."""
        event = BackgroundKept(tuple(left.command for left in kept), tuple(left.call_id for left in kept))
        try:
            self.journal.record(event)
            self.journal.record(self.memory.append(PROGRESS, progress.background_kept(event.commands), author="core"))
        except (OSError, StoreError) as exc:
            log.warning("what was kept running was not recorded: %s", exc)

    async def run(self) -> str:
        async for _ in self.steps():
            pass
        return self.state.status.removeprefix("ended:")

    def _record(self, event: Event) -> Record:
        record = self.journal.record(event)
        self._out.append(record)
        return record

    def _progress(self, text: str) -> None:
        self._take_outside_edits()
        self._record(self.memory.append(PROGRESS, text, author="core"))

    def _take_outside_edits(self) -> None:
        """Edits of the three files saved in another editor since Tripane last looked, recorded
        (the agent is told) before Tripane or a tool writes to them: the plan's write is then refused,
        its base being stale, rather than laid over the edit, and an append does not take the edit
        for its own. At each step, before each tool and each line of progress.md: a stat per file."""
        for change in self.memory.check_external():
            self._record(change)

    def stopped_by_person(self) -> None:
        """The person's Stop: the calls still open are closed, and the session ends."""
        self._close_open_calls("Stopped by the person before this call finished.")
        self._end("aborted", "Stopped by the person.")

    def _end(self, status: str, summary: str) -> None:
        if self.state.ended:
            return
        self._progress(progress.session_ended(status, summary))
        self._record(SessionEnded(status, summary))
        self._write_episode(status, summary)

    # --- one step --------------------------------------------------------------------------------

    async def _step(self) -> None:
        state, config, control = self.state, self.state.config, self.control
        assert config is not None, "a session starts with session_started"
        if control.stop_requested:
            raise StopRequested
        await self._pause_point()
        question = state.runs_question
        if question is not None and "call_id" not in question.context:
            with STAY_AWAKE.let_go(state.session_id):  # (a 3-Strike or turn-30 question: the person's to answer)
                await control.wait_answer(question.qid)
        if state.halt_requested:
            self._end("aborted", "The person chose to stop.")
            return
        self._take_inbox()
        self._take_outside_edits()
        if control.compaction_requested and not state.pending_calls:
            control.compaction_requested = False
            await self._compact()
            return
        if state.pending_calls:  # left open by a crash, or waiting for an approval
            await self._finish_pending_calls()
        elif state.strike_due:
            await self._three_strike(state.strike_due)
        elif state.turn >= config.max_turns:
            self._end("capped", f"Stopped at the limit of {config.max_turns} turns.")
        elif state.turn >= state.danger_limit:
            self._ask_danger()
        elif state.over_budget:
            self._ask_budget()
        elif state.diagnosis_due:
            await self._diagnose(state.diagnosis_due)
        elif state.put_back_due is not None:
            await self._diagnose_put_back(state.put_back_due)
        else:
            if state.turn >= config.warn_turn and not state.warned:
                self._record(Danger(turn=state.turn, level="warn", limit=state.danger_limit))
            if self.long_memory is not None and not state.memory_recalled and state.turn == 0:
                await self._recall()
            await self._turn()

    async def _pause_point(self) -> None:
        if not self.control.pause_requested:
            return
        if self.state.status != "paused":
            self._record(SessionPaused())
        with STAY_AWAKE.let_go(self.state.session_id):  # (nothing to do until the person is back)
            await self.control.wait_resumed()
        if self.state.status == "paused":  # research helpers at work wait here together: one resume
            self._record(SessionResumed())

    def _take_inbox(self) -> None:
        while self.control.inbox:
            text, shown = self.control.inbox.pop(0)
            message = offload.person_message(text, self.session_dir, self.message_budget(), shown)
            self._record(message)
            self._progress(progress.person_wrote(message))

    # --- long-term memory ------------------------------------------------------------------------

    async def _recall(self) -> None:
        """At task start: matching skills, lessons and recent daily logs, as a message appended to the history
        (the prefix never changes). A memory failure is reported and the task goes on without it."""
        assert self.long_memory is not None
        task = self.state.config.task
        try:
            await self.long_memory.arefresh()
            text, matches, lessons, variants = await asyncio.to_thread(self.long_memory.recall_for_task, task)
        except Exception as exc:  # embedding provider down, unreadable files: not a reason to stop
            log.warning("long-term memory recall failed: %s", exc)
            self._record(MemoryRecalled(text=""))
            self._progress(progress.memory_recalled([], [], f"{type(exc).__name__}: {exc}"))
            return
        injected = tuple(m.skill.slug for m in matches if m.injected)
        self._record(MemoryRecalled(text=text or "", skills=injected, lessons=tuple(e.id for e in lessons),
                                    variants=variants))
        if text:
            self._progress(progress.memory_recalled([m.skill.name for m in matches if m.injected],
                                                    [m.skill.name for m in matches if not m.injected], "",
                                                    [e.id for e in lessons]))

    def attach_memory(self, memory: LongTermMemory) -> None:
        """Long-term memory that landed after the run began: a task that ended (or stopped for the
        person) before it did still gets its episode in the daily log."""
        self.long_memory = memory
        if self._episode_due is not None:
            self._write_episode(*self._episode_due)

    def _write_episode(self, status: str, summary: str) -> None:
        """What was asked, done and failed since the last episode, into today's daily log: after a
        task, and after each burst of tool calls that ends with a stop for the person or a compaction."""
        if self.long_memory is None:
            self._episode_due = (status, summary)
            return
        self._episode_due = None
        state = self.state
        since = [r for r in self.journal.records if r.seq > self._episode_mark]
        if not any(isinstance(r.event, ToolResult) for r in since) and not state.ended:
            return  # no burst to report
        # Each failure once, as people and the model read it (not its internal signature), with
        # how often it happened: "file_read failed: No such file: 'a.py' (3×)".
        times: dict[str, tuple[int, str]] = {}
        for record in since:
            if isinstance(record.event, ErrorRecorded):
                count = times.get(record.event.signature, (0, ""))[0] + 1
                times[record.event.signature] = (count, describe_failure(record.event.tool, record.event.message))
        failed = [f"{text} ({count}×)" if count > 1 else text for count, text in times.values()]
        results = [r.event for r in since if isinstance(r.event, ToolResult)]
        answers = [line for r in since if isinstance(r.event, HumanAnswer)
                   and (line := answer_line(state.questions.get(r.event.qid), r.event))]
        diagnosed = [for_the_person(r.event.text) for r in since if isinstance(r.event, ErrorDiagnosed) and r.event.text]
        try:
            started = datetime.fromisoformat(since[0].ts) if since else datetime.now(timezone.utc)
            minutes = (datetime.now(timezone.utc) - started).total_seconds() / 60
            task = state.config.task
            title = task.strip().splitlines()[0] + ("" if state.ended else f" (in progress: {status})")
            self.long_memory.write_episode(Episode(
                title=title, asked=task, done=summary, failed=tuple(failed[-5:]), tool_calls=len(results),
                errors=sum(not r.ok for r in results), minutes=minutes, session_id=state.session_id,
                status=status, answers=tuple(answers[-ANSWERS_LOGGED:]), diagnosed=tuple(diagnosed[-DIAGNOSES_LOGGED:])))
            if state.ended:
                from core.memory.variants import record_use

                for slug in state.injected_skills:
                    if changed := record_use(self.long_memory.files, slug, status == "done", state.turn,
                                             on_variant=slug in state.injected_variants):
                        log.info("skill %s: %s", slug, changed)
        except Exception as exc:  # the episode is a convenience; the event log already has everything
            log.warning("could not write the episode to the daily log: %s", exc)
        self._episode_mark = state.last_seq

    # --- a model turn ----------------------------------------------------------------------------

    async def _ensure_engine(self) -> ContextEngine:
        if self.engine is None:
            config = self.state.config
            tokenizer_model = config.model
            await prepare_tokenizer(tokenizer_model)  # imports litellm off the event loop
            window = self._window = await self._model_window()
            await self._ask_whether_it_sees_pictures()
            self._budgeted_for = self._serving()
            budget = budget_for(window, config.reserve_output)

            def counter(text: str) -> int:
                return count_tokens(tokenizer_model, text)
            await self._take_server_tools()
            risky = sorted(name for name, spec in self.registry.specs.items() if spec.risky)
            facts = "\n\n" + session_facts(config, self.state.started, risky)
            zones = [
                FixedZone("full", resource_text("prompts", "system.md") + facts, self.registry.schemas()),
                FixedZone("brief", resource_text("prompts", "system_brief.md") + facts, self.registry.schemas(brief=True)),
            ]

            def build() -> ContextEngine:  # counting the fixed prompt's tokens, off the event loop
                zone = choose_fixed_zone(zones, budget, counter)
                if zone.name != "full":
                    log.info("window of %s tokens: the brief system prompt and tool descriptions are used", window)
                return ContextEngine(system_prompt=zone.system_prompt, tools=zone.tools, count_tokens=counter,
                                     encode=lambda text: encode_tokens(tokenizer_model, text), budget=budget)
            engine = await asyncio.get_running_loop().run_in_executor(None, build)
            if self.engine is not None:  # another turn of this loop built it meanwhile
                return self.engine
            self.engine = engine
            held = self.journal.history.last_request_held
            if held is not None:  # a reopened session that had sent requests
                engine.assume_sent(self.journal.history, held)
            if self.engine.prefix_tokens > budget:
                log.warning("window of %s tokens: Tripane's fixed prompt alone (%s tokens) exceeds the %s-token "
                            "budget; choose a model with a larger window", window, self.engine.prefix_tokens, budget)
        return self.engine

    async def _take_server_tools(self) -> None:
        """The tool servers' tools among the agent's: listed and recorded before the session's first
        request (a server reached later, or changed, would change the prefix every request shares),
        then taken from the log each time the loop runs (core/tool_servers)."""
        pool = self.settings.tool_servers
        state = self.state
        if (pool is not None and not state.servers_listed and self.journal.history.last_request_held is None
                and not any(isinstance(r.event, AssistantMessage) for r in self.journal.records)
                and (servers := await asyncio.to_thread(pool.chosen, state.config.tool_servers))):
            self.journal.notify(StatusChanged(state.session_id, "starting_servers"))
            listed = await pool.list_all(Path(state.workdir), servers)
            self._record(ServerToolsListed(tools=offered_tools(listed.tools, self.registry.specs),
                                           failed=listed.failed))
            self._progress(progress.servers_listed(self.state.server_tools, listed.failed, len(servers)))
            self.journal.notify(StatusChanged(state.session_id, "thinking"))
        if pool is not None:
            register_server_tools(self.registry, state.server_tools, pool)

    async def _model_window(self) -> int:
        """A window the provider stated (learned at an overflow, before a reopen) is the truth;
        then the person's setting; then what the server or litellm's model map says."""
        state = self.state
        return (state.learned_window or state.context_window
                or await asyncio.get_running_loop().run_in_executor(None, model_window, state.model, state.api_base))

    def _serving(self) -> tuple[str, str | None, int | None]:
        return self.state.model, self.state.api_base, self.state.context_window

    async def _ask_whether_it_sees_pictures(self) -> None:
        """For the model's requests and its file reads (an Ollama model's server is asked, once
        in a process: after the window, which asked it the same)."""
        self._sees_pictures = await asyncio.to_thread(sees_pictures, self.state.model, self.state.api_base, 3.0)

    def _shows_pictures(self) -> bool:
        """Whether the model is shown pictures: it sees them, and has not refused all it was shown."""
        return self._sees_pictures and not refuses_pictures(self.state.model, self.state.api_base)

    def message_budget(self) -> int | None:
        """The tokens a request may fill, for what is known of the window without asking litellm
        (None before then): how long a message of the person's may be before it is offloaded."""
        window = self.state.learned_window or self.state.context_window or self._window
        return budget_for(window, self.state.config.reserve_output) if window else None

    async def _budget_for_the_model(self, engine: ContextEngine) -> None:
        """The person chose another model since the budget was set: budget for its window (a
        smaller one compacts at the next turn, before the request overflows it)."""
        if self._budgeted_for == self._serving():
            return
        self._budgeted_for = self._serving()
        self._window = await self._model_window()
        await self._ask_whether_it_sees_pictures()
        engine.budget = budget_for(self._window, self.state.config.reserve_output)
        log.info("session %s: now %s, budgeted for a %s-token window", self.state.session_id, self.state.model,
                 self._window)

    async def assemble(self, extra: list[dict] | None = None, remember: bool = True,
                       history: History | None = None) -> tuple[Assembled, int]:
        engine = await self._ensure_engine()
        await self._budget_for_the_model(engine)
        plan, version = self.memory.read(PLAN)
        # The full plan when it is new to the agent (first turn, or changed since it was last
        # recited); otherwise its compact form, so the part of the request that is never cached
        # stays small.
        full = version != self._plan_version_recited
        tail = build_tail(self.state, plan, version, full_plan=full)
        if remember:
            self._plan_version_recited = version
        history = self.journal.history if history is None else history
        return engine.assemble(history, tail, extra, remember, self._shows_pictures()), version

    def _request(self, assembled: Assembled, tool_choice: str = "auto") -> ModelRequest:
        config = self.state.config
        assert config is not None and self.engine is not None  # the messages were assembled by it
        return ModelRequest(
            model=self.state.model, messages=assembled.messages, tools=self.engine.tools,
            tool_choice=tool_choice, api_base=self.state.api_base, cache_breakpoints=assembled.cache_breakpoints,
            window=self._window, reasoning_effort=self.state.reasoning_effort, pictures_dir=self.session_dir,
            sees_pictures=self._shows_pictures(),
        )

    async def _call_model(self, request: ModelRequest, *, end_on_error: bool = True) -> ModelReply | None:
        session_id = self.state.session_id
        self.journal.notify(StatusChanged(session_id, "thinking"))
        written = self._written = []  # the reply's text so far: what a Stop keeps (_keep_stopped_reply)

        def streamed(text: str) -> None:
            written.append(text)
            self.journal.notify(TextDelta(session_id, text))

        asking = [True]  # (False once this call is over: a retry's wait ending later tells nothing)

        def retried(retry: Retry) -> None:
            written.clear()  # the reply streams anew
            self.journal.notify(StatusChanged(session_id, "retrying", retry.describe()))
            # The wait over, the model is asked again: a view counts that, and shows the retry no more
            # — but for one made at once (a reply the computer slept through), whose why it keeps a
            # while, or the reply would seem to start over for no reason.
            why = retry.describe() if retry.delay_s < AT_ONCE_S else ""
            asyncio.get_running_loop().call_later(
                retry.delay_s, lambda: asking[0] and self.journal.notify(StatusChanged(session_id, "thinking", why)))
        try:
            reply = await self.control.interruptible(self.model.complete(
                request, streamed, retried,
                lambda thought: self.journal.notify(TextDelta(session_id, thought, reasoning=True)),
                on_call=lambda name, piece: self.journal.notify(CallWriting(session_id, name, len(piece))),
            ))
        except ModelError as exc:
            if not end_on_error:
                raise
            self._model_failed(exc)
            return None
        finally:
            asking[0] = False
        if pictures.refused(self.state.model, self.state.api_base):  # (for the session when it is reopened)
            try:
                pictures.keep_refusals(self.session_dir)
            except OSError as exc:
                log.warning("what the model refused of the pictures was not written down: %s", exc)
        return reply

    def _model_failed(self, exc: ModelError) -> None:
        signature = f"model:{exc.kind}"
        log.warning("session %s: the model call failed (%s): %s", self.state.session_id, exc.kind, exc, extra=TOLD)
        attempt = self.state.strikes.get(signature, 0) + 1
        self._record(ErrorRecorded(signature=signature, message=str(exc), attempt=attempt, counts=False))
        self._progress(progress.error("", str(exc), attempt, limit=None))
        self._end("error", f"The model call failed: {exc}")

    async def _turn(self, flush: bool = False) -> None:
        await self._look_outside()
        assembled, plan_version = await self.assemble()
        # Over the budget: compact, unless what the summary would replace is under a tenth of the
        # budget — the prefix and the last two turns alone are too big, as with a very small
        # window, and a flush and a summary every turn would not help. The request then goes as it
        # is (the budget leaves a quarter of the window spare); a provider overflow compacts anyway.
        if (not flush and assembled.tokens > assembled.budget
                and await self._compact(min_gain=assembled.budget // 10, assembled=assembled)):
            assembled, plan_version = await self.assemble()
        tool_choice = "auto"
        if flush and supports_tool_choice(self.state.model):
            tool_choice = "required"
        try:
            reply, assembled, plan_version = await self._reply(assembled, plan_version, tool_choice, flush)
        except StopRequested:
            if not flush:  # (a flush's words are not the person's to read)
                self._keep_stopped_reply()
            raise
        if reply is None:
            return
        self._plan_version_seen = plan_version
        if reply.tool_calls:
            reply = dataclass_replace(reply, tool_calls=self._with_own_ids(reply.tool_calls))
        self._record(AssistantMessage(
            text=reply.text, tool_calls=reply.tool_calls, usage=reply.usage,
            model=self.state.model, turn=self.state.turn + 1,
            metrics={**assembled.metrics(), **({"flush": True} if flush else {}),
                     # what the person's effort came to (not taken by a model that has none)
                     **({"effort_sent": reply.effort_sent} if self.state.reasoning_effort else {})},
            reasoning=reply.reasoning,
            thinking_blocks=reply.thinking_blocks,
            reasoning_details=reply.reasoning_details,
        ))
        # The provider stopped the reply at the output limit: a call's arguments may be cut short,
        # and a text is not the final answer it would otherwise be taken for.
        self._reply_cut_off = reply.finish_reason == "length"
        if reply.tool_calls:
            await self._run_calls(list(reply.tool_calls))
        elif flush:
            return
        elif problem := not_an_answer(reply, self.registry.specs):
            self._fail("", *problem)
        else:
            self._end("done", reply.text.strip())

    async def _reply(self, assembled: Assembled, plan_version: int, tool_choice: str,
                     flush: bool) -> tuple[ModelReply | None, Assembled, int]:
        """The model's reply (None: the call failed, which ended the run, or a flush could not
        run), with the context it answered: another one after a compaction a window overflow forced."""
        self._asked_with = assembled
        try:
            return await self._call_model(self._request(assembled, tool_choice), end_on_error=False), assembled, plan_version
        except ModelError as exc:
            self._written = []  # (a reply the error broke off is not one a Stop would keep)
            if exc.kind != "context_window":
                self._model_failed(exc)
                return None, assembled, plan_version
            self._learn_window(exc.window)
            if flush:
                # The flush turn is the whole context and its instruction: over the window it cannot
                # run. The compaction goes on without it (its event says so; the log keeps all).
                log.warning("the flush turn is over the model's window: compacting without it")
                return None, assembled, plan_version
            # A window overflow is the one provider error compaction can cure: by a compaction, then
            # by one keeping only the last two turns (a proxy's body limit states no window to budget
            # for, and the turns a compaction keeps can still be over it), then give up.
            for room in (None, 0):
                if not await self._compact(room=room):
                    if self.state.ended:
                        return None, assembled, plan_version
                    continue  # (too few turns since the last one to keep five: keep two)
                assembled, plan_version = await self.assemble()
                self._asked_with = assembled
                try:
                    return (await self._call_model(self._request(assembled), end_on_error=False), assembled,
                            plan_version)
                except ModelError as again:
                    self._written = []
                    if again.kind != "context_window":
                        exc = again
                        break
                    self._learn_window(again.window)
                    exc = again
            self._model_failed(exc)
            return None, assembled, plan_version

    def _keep_stopped_reply(self) -> None:
        """The person stopped the model mid-reply: what it had written, which they read as it came,
        is kept in the conversation (a slow model's answer may have taken minutes), and the agent is
        told it was cut short. A call half written is not kept, nor thinking without a signature."""
        text = "".join(self._written)
        if not text.strip() or self._asked_with is None:
            return
        self._record(AssistantMessage(text=text, model=self.state.model, turn=self.state.turn + 1,
                                      metrics={**self._asked_with.metrics(), STOPPED_BY_PERSON: True}))

    def _with_own_ids(self, calls: tuple[ToolCall, ...]) -> tuple[ToolCall, ...]:
        """The calls, each with an id no other call of the session has (see with_own_ids)."""
        if self._call_ids is None:
            self._call_ids = {c.id for r in self.journal.records if isinstance(r.event, AssistantMessage)
                              for c in r.event.tool_calls}
        return with_own_ids(calls, self._call_ids, f"call_{self.state.turn + 1}")

    def _learn_window(self, window: int | None) -> None:
        """The provider stated a smaller window than assumed (a local server started with a fixed
        context, whose size no model map knows): budget for it from now on, so that compaction comes
        before the next overflow instead of after it. The fixed prompt stays as it is."""
        if not window or self.engine is None or not self._window or window >= self._window:
            return
        log.warning("the provider's window is %s tokens, not %s: budgeting for it", window, self._window)
        self._record(WindowLearned(window=window, assumed=self._window))
        self._progress(progress.window_learned(window, self._window))
        self._window = window
        self.engine.budget = budget_for(window, self.state.config.reserve_output)

    # --- compaction ------------------------------------------------------------------------------

    async def _summarise(self, transcript: str) -> tuple[ModelReply | None, str, list[str]]:
        """The summary of a compacted range, by the summary model; by the session's own if that one
        fails (a summary model with no key, gone, or too small for the range), rather than every
        compaction of the session falling back to a bare list of calls. The reply that holds the
        summary (None if neither wrote one), the model that wrote it, and why each that failed did."""
        return await first_reply(
            self.model, side_writers(self.state),
            lambda model, api_base: compaction.summary_request(model, api_base, transcript, self._window),
            wrap=self.control.interruptible)

    async def _compact(self, min_gain: int = 0, assembled: Assembled | None = None, room: int | None = None) -> bool:
        """Flush, summarise, restart the history. Every path that compacts comes through here,
        so the flush always runs before anything is cut. False if there is too little to compact:
        no range, or one holding fewer than `min_gain` tokens (a flush and a summary every turn
        would cost more than they save). `assembled`: the request just built, if any. `room`: the
        tokens the turns kept may take (None: their share of the budget; 0: the last two alone)."""
        config = self.state.config
        history = self.journal.history
        if assembled is None:  # assembling counts every message's tokens
            assembled = (await self.assemble(remember=False))[0]
        if room is None:
            room = int(assembled.budget * compaction.KEPT_TURNS_SHARE)
        span = compaction.compactable_range(history, self.journal.records, config.keep_turns, room)
        if span is None or compaction.range_tokens(history, *span) < min_gain:
            return False
        tokens_before = assembled.tokens
        flush_seq = self._record(FlushRequested(resource_text("prompts", "flush.md"))).seq
        self._allowed_groups = frozenset({"findings", "plan", "memory"})
        try:
            await self._turn(flush=True)
        finally:
            self._allowed_groups = None
        if self.state.ended:
            return False
        since_flush = itertools.takewhile(lambda r: r.seq > flush_seq, reversed(self.journal.records))
        flush_done = any(isinstance(r.event, AssistantMessage) for r in since_flush)
        history.count(self.engine.count_tokens)  # the flush turn's messages
        span = compaction.compactable_range(history, self.journal.records, config.keep_turns, room)
        if span is None:
            return False
        first_seq, last_seq = span
        text = compaction.transcript(history, first_seq, last_seq)
        self.journal.notify(StatusChanged(self.state.session_id, "compacting"))
        reply, writer, failures = await self._summarise(text)
        summary = reply.text.strip() if reply else compaction.fallback_summary(history, first_seq, last_seq,
                                                                               "; ".join(failures))
        event = Compaction(summary=summary, first_seq=first_seq, last_seq=last_seq, flush_done=flush_done,
                           tokens_before=tokens_before, usage=reply.usage if reply else Usage(), summary_model=writer)
        tokens_after = await self._tokens_after(event)
        event = dataclass_replace(event, tokens_after=tokens_after)
        self._record(event)
        compaction.save_summary(self.session_dir, event)
        self._write_episode("compacted", summary.splitlines()[0][:300] if summary.strip() else "context compacted")
        self._progress(progress.compaction(first_seq, last_seq, tokens_before, tokens_after, flush_note(event)))
        return True

    async def _tokens_after(self, event: Compaction) -> int:
        """The size of the next request once `event` is applied, measured on a copy of the history
        so that the event itself can carry it (the chat and the log show it)."""
        preview = copy.deepcopy(self.journal.history)
        preview.apply(Record(self.state.session_id, self.state.last_seq + 1, "", event))
        return (await self.assemble(remember=False, history=preview))[0].tokens

    # --- tool calls ------------------------------------------------------------------------------

    async def _finish_pending_calls(self) -> None:
        calls = self._open_calls()
        await self._run_calls(calls, resuming=True)

    def _open_calls(self) -> list[ToolCall]:
        for record in reversed(self.journal.records):
            if isinstance(record.event, AssistantMessage):
                return [c for c in record.event.tool_calls if c.id in self.state.pending_calls]
        return []

    async def _run_calls(self, calls: list[ToolCall], resuming: bool = False) -> None:
        index = 0
        while index < len(calls):
            if self.state.strike_due or self.state.ended:
                for rest in calls[index:]:
                    self._result(rest, False, "Not run: the run stopped (3-Strike) before this call.")
                return
            together = 1 if resuming else _delegations_from(calls, index)
            if together > 1:  # questions for research helpers, one after another in the reply: at once
                group = calls[index:index + together]
                self._together = {call.id: number for number, call in enumerate(group, 1)}
                try:
                    await all_at_once(self._run_call(call, resuming) for call in group)
                finally:
                    self._together = {}
            else:
                await self._run_call(calls[index], resuming)
            index += together
            if self.state.ended:  # task_done, or a work folder gone: the rest is answered, not left open
                for rest in calls[index:]:
                    self._result(rest, False, "Not run: the run ended before this call.")
                return

    async def _run_call(self, call: ToolCall, resuming: bool) -> None:
        try:
            arguments = call.parsed_arguments()
        except ValueError as exc:
            if self._reply_cut_off:  # the same call sent again would be cut off again
                self._fail(call.name, "cut_off_arguments",
                           f"Your reply reached the output limit in the middle of this {call.name!r} call, so "
                           f"its arguments are incomplete ({len(call.arguments):,} characters came) and it was "
                           "not run. Send less in one call: write a long file in parts (file_write the first "
                           "part, then file_edit to add each next part after the last line written).", call)
                return
            self._fail(call.name, "malformed_arguments",
                       f"The arguments of your {call.name!r} call are not valid JSON ({exc}). "
                       f"You sent: {call.arguments[:500]!r}. Send a JSON object.", call)
            return
        if self._allowed_groups is not None and call.name.split("_", 1)[0] not in self._allowed_groups:
            allowed = ", ".join(f"{g}_" for g in sorted(self._allowed_groups))
            self._result(call, False, f"{call.name} is not allowed in this step; only {allowed} tools are.")
            return
        spec = self.registry.get(call.name)
        asked = self.state.question_for_call(call.id)
        if call.name == "human_ask":
            await self._human_ask(call, arguments, asked)
            return
        if call.name == "task_done":
            summary = str(arguments.get("summary", "")).strip() or "(no summary)"
            self._result(call, True, "Task marked done.")
            self._end("done", summary)
            return
        if spec is not None and spec.risky:
            verdict = await self._approval(call, asked)
            if verdict is not None:
                self._result(call, False, verdict)
                return
        if resuming and call.name == "delegate_research":  # it only read: nothing changed, the report is lost
            self._result(call, False, "Tripane stopped while the research helper worked (a crash or a forced quit), "
                                      "so its report was lost. Delegate the question again if you still need it.")
            return
        if resuming and (asked is None or self._acted_on_before(asked.qid)):
            self._fail(call.name, "interrupted", self._with_what_is_known(
                call.id, "Tripane stopped while this call was in progress (a crash, a forced quit, a full disk), "
                "so its effect is unknown. Check the current state before you repeat it."), call)
            return
        # This run acts on the approval now, whether it was asked before or just now: a later run
        # in this process (after a full disk) must not take it as one no run has acted on.
        if (approved_by := asked or self.state.question_for_call(call.id)) is not None:
            self.control.unacted_answers.discard(approved_by.qid)
        gone = missing_work_folder(self.state.workdir) if call.name.split("_", 1)[0] in WORKDIR_GROUPS else None
        if gone:  # a write would make the folder anew (on the wrong drive, say); a command would fail
            self._result(call, False, f"Not run: {gone}")
            self._end("error", gone)
            return
        if call.name == "delegate_research":
            await self._delegate(call, arguments)
        else:
            await self._execute(call, arguments)

    def _acted_on_before(self, qid: str) -> bool:
        """Whether an earlier run may have started the call this answer approved: it was given
        before this run began, and not in this process since (then no run has seen it)."""
        answer = self.state.answers.get(qid)
        return answer is not None and answer[1] <= self._started_at_seq and qid not in self.control.unacted_answers

    def _runs_unasked(self, call: ToolCall) -> bool:
        """Whether a risky call may run without asking the person: the session's policy, their
        "always" in this session, or this very command allowed in the work folder (said in progress.md)."""
        if self.state.config.approval == "all" or self.state.allowed_without_asking(call.name, call.arguments):
            return True
        if (self.folder_approvals is not None
                and approval_key(call.name, call.arguments) in self.folder_approvals.allowed(self.state.workdir)):
            self._progress(progress.allowed_in_folder(call.name))
            return True
        return False

    async def _approval(self, call: ToolCall, asked: HumanQuestion | None) -> str | None:
        """None when the call may run, else the reason it may not (which the model sees)."""
        if self._runs_unasked(call):
            return None
        if self.state.config.approval == "none":
            return refused_by_policy(call.name)
        if asked is None:
            spec = self.registry.get(call.name)
            # A tool server's tool: what it does, in its server's words (Tripane's own are known).
            about = {"described": spec.description} if spec is not None and spec.group == SERVER_TOOLS else {}
            asked = self._ask_approval(call, **about)
        return denial(call.name, await self._answer_for(asked.qid))

    def _ask_approval(self, call: ToolCall, question: str = "", **context: object) -> HumanQuestion:
        """The approval question for a risky call; `question` and `context` say more of who asks."""
        plan, _ = self.memory.read(PLAN)
        return self._ask("approval", question or f"Allow {call.name}?", APPROVAL_OPTIONS,
                         {"call_id": call.id, "tool": call.name, "arguments": call.arguments, "plan": plan, **context})

    def _answer_for_the_person(self, question: HumanQuestion, choice: str, text: str) -> None:
        """Tripane's answer to a question the person left (one of UNANSWERED), kept as theirs is."""
        answer = HumanAnswer(qid=question.qid, choice=choice, text=text)
        self._record(answer)
        self._progress(progress.answer(answer, question))

    async def _human_ask(self, call: ToolCall, arguments: dict, asked: HumanQuestion | None) -> None:
        if asked is None:
            options = tuple(str(o) for o in arguments.get("options") or ())
            fallback = str(arguments.get("fallback") or "").strip()
            asked = self._ask("ask_user", str(arguments.get("question", "")).strip() or "(no question)",
                              options, {"call_id": call.id, **({"fallback": fallback} if fallback else {})})
        fallback = str(asked.context.get("fallback", ""))
        minutes = self.state.config.answer_wait_min if fallback else 0
        answer = await self._answer_for(asked.qid, minutes)
        if answer.choice == NO_ANSWER:
            self._result(call, True, f"The person did not answer within {_minutes(minutes)}. Go on with your "
                                     f"fallback: {fallback}\nTheir answer may still come later, as a message.")
            return
        detail = f"\n{answer.text.strip()}" if answer.text.strip() else ""
        self._result(call, True, f"The person answered: {answer.choice}{detail}", shown=answer.pictures)

    async def _answer_for(self, qid: str, minutes: int = 0):
        """The person's answer; with `minutes`, Tripane's NO_ANSWER once they have gone by without
        one. (A reopened session waits them out again: the person who reopened it is there.)"""
        if qid not in self.state.answers:
            # Waited for with no end, the computer may sleep meanwhile; with one, the run goes on after.
            try:
                with STAY_AWAKE.let_go(self.state.session_id) if not minutes else nullcontext():
                    await asyncio.wait_for(self.control.wait_answer(qid), minutes * MINUTE_S if minutes else None)
            except asyncio.TimeoutError:
                if qid not in self.state.answers:
                    self._answer_for_the_person(self.state.questions[qid], NO_ANSWER,
                                                f"No answer within {_minutes(minutes)}")
        return self.state.answers[qid][0]

    def _tool_context(self, call_id: str, running: RunningCall | None = None) -> ToolContext:
        """`running`: where what the call prints, and its command's process, are kept while it
        runs (see running_calls)."""

        def on_output(text: str) -> None:
            text = self._hide_secrets(text)
            self.journal.notify(ToolOutput(self.state.session_id, call_id, text))
            if running is not None and text != COPYING_NOTE:
                running.add(text)

        return ToolContext(
            workdir=Path(self.state.workdir), session_dir=self.session_dir,
            memory=self.memory, plan_version_seen=self._plan_version_seen,
            long_memory=self.long_memory, session_id=self.state.session_id,
            output_chars=self.settings.offload_chars,
            on_output=on_output, on_started=running.started if running is not None else None,
            on_left_running=running.left_running if running is not None else None,
            keeps_left_running=self.settings.keeps_left_running,
            stop_requested=self.control.running_tool(call_id), call_id=call_id,
            originals=Originals(self.session_dir),
            snapshot=self._snapshot(), seen=self.seen_files,
            changing_on_their_own=frozenset(self._changing_in_background),
            data_dir=data_dir_of(self.session_dir), sees_pictures=self._shows_pictures(),
            picture_in_view=self.journal.history.picture_in_view,
            instructions_told=(instructions_told_since_compaction(self.journal.records)  # (a fresh set: a failed
                               if self.state.config.folder_instructions else None),  # call tells none)
        )

    async def _execute(self, call: ToolCall, arguments: dict) -> None:
        running = RunningCall(self.session_dir, call.id)
        ctx = self._tool_context(call.id, running)
        spec = self.registry.get(call.name)
        writes = call.name in WRITING_TOOLS or (spec is not None and spec.changes_folder)
        if writes:  # (the person may have edited while the model thought, or while they approved it)
            outside = await self._look_outside(ctx.snapshot)
            if call.name == REWRITING_TOOL and outside is not None and (
                    path := relative(path_of(call.arguments), self.state.workdir)) in outside.paths():
                self._fail(call.name, "changed_outside", rewrite_refused(
                    path, f"was changed outside your tools since your last step (by {outside.by()})"),
                    call)
                return
        self._take_outside_edits()  # (what was edited while the model thought, before a tool writes)
        phase_before = _phase(self.memory.read(PLAN)[0])
        self.journal.notify(StatusChanged(self.state.session_id, "running_tool", call.name))
        self.journal.notify(ToolOutput(self.state.session_id, call.id))  # started
        try:
            content, error_type = await tool_outcome(self.registry, call.name, arguments, ctx,
                                                     self.control.interruptible)
        except (StopRequested, asyncio.CancelledError):
            for event in [*ctx.events, *ctx.told_after]:
                self._record(event)
            raise
        finally:
            self.control.tool_ended(call.id)
        running.discard()  # its result says what it printed (stopped or closed, it is told at the resume)
        for event in ctx.events:
            self._record(event)
        content = self._storable(content) if len(content) < BACKGROUND_OUTPUT_CHARS else \
            await asyncio.to_thread(self._storable, content)
        prepared = await self._prepare_large(call, not error_type, content)
        if error_type:
            self._fail(call.name, error_type, content, call, prepared, ctx.file_seen)
        else:
            self._result(call, True, content, prepared, ctx.file_seen, tuple(ctx.pictures))
        for event in ctx.told_after:
            self._record(event)
        if writes and call.name != SHELL_TOOL and not spec.changes_folder:  # (a command marks the folder as it
            # leaves it itself, as does a tool that changes it out of sight)
            await self._mark(ctx.snapshot)
        phase_after = _phase(self.memory.read(PLAN)[0])
        if phase_after != phase_before:
            self._progress(progress.phase_changed(phase_before, phase_after))

    def _snapshot(self) -> WorkFolderSnapshot | None:
        return WorkFolderSnapshot(self.session_dir) if self.state.config.copy_work_folder else None

    @property
    def seen_files(self) -> SeenFiles:
        """The work folder's files the agent read or wrote, as they were then; from the log the
        first time (a reopened session knows them again), and again in a work folder moved."""
        if self._seen_files is None or self._seen_files.workdir != Path(self.state.workdir):
            self._seen_files = SeenFiles.from_records(Path(self.state.workdir), self.journal.records)
        return self._seen_files

    async def _look_outside(self, snapshot: WorkFolderSnapshot | None = None) -> FilesChangedOutside | None:
        """The work folder's files that changed since the agent last left it, not by its tools (the
        person's editor, another program), recorded so that the agent is told, and returned.
        Before the folder is copied (the first command), or without a copy, only the files the
        agent read or wrote are looked at. A failure is logged, and the step goes on."""
        snapshot = snapshot or self._snapshot()
        workdir = Path(self.state.workdir)
        seen = self.seen_files  # (made here, from the log, not on the worker thread)

        diffs: dict[str, list[str]] = {}

        def look() -> FilesChangedOutside | None:
            if snapshot is None or not snapshot.taken:
                return seen.news(diffs)
            found = snapshot.outside_changes(workdir)
            if found is not None:
                # What changed in the files the agent knew, against the folder as it left them: a
                # person's fix of the agent's work tells it what they wanted, not only where.
                diffs.update(snapshot.diffs_since_mark(workdir, seen.among(found.changed)))
                snapshot.mark(workdir)
            return found
        try:
            found = await asyncio.to_thread(look)
        except OSError as exc:  # (SnapshotFailed too; a work folder gone is said by the tool)
            log.warning("the work folder was not looked at for changes outside the agent: %s", exc)
            return None
        # A file that changes at every look while a process the commands left running runs (its
        # log, a heartbeat) is told once, not at every step, nor put on a command. (A look that
        # finds nothing, a moment after the last, keeps what was changing.)
        running = (await asyncio.to_thread(running_in_background, self.state.session_id)  # (ps, on macOS)
                   if left_in_background(self.state.session_id) else 0)
        changing = self._changing_in_background
        if not running or found is not None:
            self._changing_in_background = found.paths() if found is not None and running else set()
        if found is not None and running:
            found = found.without(changing)
            found = found and dataclass_replace(found, background=running)
        if found is not None and (told := diff_told(diffs, found.changed)):
            found = dataclass_replace(found, diff=self._storable(told))
        if found is not None and (alongside := self._sessions_alongside()):
            found = dataclass_replace(found, alongside=alongside)
        if found is not None:
            self._record(found)
            self._progress(progress.changed_outside(found))
        return found

    def _sessions_alongside(self) -> tuple[str, ...]:
        """The other sessions at work in the work folder now, whose agents may have made changes
        found outside this one's tools (else each would take the other's for the person's)."""
        try:
            return sessions_alongside(self.journal.store, data_dir_of(self.session_dir), Path(self.state.workdir),
                                      but=self.state.session_id)
        except StoreError as exc:
            log.warning("the sessions at work in the folder were not looked up: %s", exc)
            return ()

    async def _mark(self, snapshot: WorkFolderSnapshot | None) -> None:
        """The folder as the agent's file tool left it: what changes next is not the agent's."""
        if snapshot is None or not snapshot.taken:
            return
        try:
            await asyncio.to_thread(snapshot.mark, Path(self.state.workdir))
        except OSError as exc:
            log.warning("the work folder was not marked after a file tool: %s", exc)

    def _storable(self, content: str) -> str:
        """A tool's output as it may be kept and sent: UTF-8 whatever file names it has, and no
        value of a secret environment variable (an `env` run while debugging)."""
        return big_text.by_lines(content, lambda text: self._hide_secrets(shown_text(text)))

    def _digest(self, call: ToolCall, ok: bool, content: str) -> str:
        """What finds the same output again; only a reading tool's output is looked for."""
        spec = self.registry.get(call.name)
        return output_digest(content) if ok and spec is not None and spec.gathers_information else ""

    def _pointer(self, call: ToolCall, digest: str, size: int) -> tuple[str, str] | None:
        """(the earlier call, a notice pointing to it) when the model has this very output still in
        view and the notice is shorter than the output."""
        earlier = self.journal.history.output_in_view(digest)
        pointer = repeated_output_notice(call.name, earlier, size) if earlier is not None else ""
        return (earlier.call_id, pointer) if pointer and len(pointer) < size else None

    async def _prepare_large(self, call: ToolCall, ok: bool, content: str) -> Prepared | None:
        """A large output's digest and offload file, worked out on a worker thread: hashing and
        saving a command's 64 MB log took 0.3 s, a stall of the window. None for a small one."""
        if len(content) < BACKGROUND_OUTPUT_CHARS:
            return None
        digest = await asyncio.to_thread(self._digest, call, ok, content)
        saved = None
        if self._pointer(call, digest, len(content)) is None:
            saved = await asyncio.to_thread(self._offload, call, content)
        return Prepared(digest, saved)

    def _result(self, call: ToolCall, ok: bool, content: str, prepared: Prepared | None = None,
                seen: FileSeen | None = None, shown: tuple[str, ...] = ()) -> None:
        """`shown`: pictures the call opened for the model, which follow its turn's results."""
        size = len(content)
        offload_path, same_as = None, ""
        digest = prepared.digest if prepared else self._digest(call, ok, content)
        pointer = self._pointer(call, digest, size)
        if pointer is not None:  # the model has this very output already: point to it
            same_as, content = pointer
        elif size > self.settings.offload_chars:
            offload_path, content = (prepared and prepared.saved) or self._offload(call, content)
        self._record(ToolResult(call_id=call.id, name=call.name, ok=ok, content=content,
                                offload_path=offload_path, size=size, digest=digest, same_as=same_as, seen=seen,
                                pictures=shown))
        self._progress(progress.tool_call(self.state.turn, call.name, call.readable_arguments(), ok, content))

    def _offload(self, call: ToolCall, content: str) -> tuple[str, str]:
        name = f"turn{self.state.turn:04d}-{safe_name(call.id)}.txt"
        return offload.save(self.session_dir, name, content), offload.excerpt(content, name,
                                                                             self.settings.offload_keep_chars)

    def _fail(self, tool: str, error_type: str, message: str, call: ToolCall | None = None,
              prepared: Prepared | None = None, seen: FileSeen | None = None) -> None:
        """An error the model sees: recorded, written to progress.md, counted for 3-Strike."""
        if call is not None:
            self._result(call, False, message, prepared, seen)
        signature = error_signature(tool, error_type, message)
        attempt = self.state.strikes.get(signature, 0) + 1
        self._record(ErrorRecorded(signature=signature, message=message[:4000], attempt=attempt, tool=tool))
        self._progress(progress.error(tool, message, attempt, self.state.config.strike_limit))

    def _close_open_calls(self, why: str) -> None:
        for call in self._open_calls():
            self._result(call, False, self._with_what_is_known(call.id, why))

    def _with_what_is_known(self, call_id: str, why: str) -> str:
        """Why a call never ended, with what is known of it (see running_calls): whether its
        command still runs, without Tripane, and the end of what it had printed."""
        printed, group = left_unfinished(self.session_dir, call_id)
        if group is not None:
            why += (f" It is still running, as process group {group}, though what it prints no longer reaches "
                    f"you: do not start it again; wait for what it writes, or stop it first with kill -- -{group}.")
        printed = printed.strip("\n")
        return f"{why}\n\nWhat it had printed by then (the end):\n{printed}" if printed.strip() else why

    async def _diagnose(self, signature: str) -> None:
        """A failure that happened again, diagnosed before the next step (core/agent/diagnosis.py);
        long-term memory is searched for it first, where it has loaded."""
        self.journal.notify(StatusChanged(self.state.session_id, "diagnosing"))
        found = await self._remembered(self.state.failure(signature))
        event = await diagnosis.diagnose(self.model, self.state, self.journal.records, signature,
                                         current_step(self.memory.read(PLAN)[0]), found, self._window,
                                         wrap=self.control.interruptible)
        self._record(event)
        self._progress(progress.diagnosed(event))

    async def _diagnose_put_back(self, seq: int) -> None:
        """Files the person put back, their work diagnosed before the next step
        (core/agent/put_back_diagnosis.py)."""
        self.journal.notify(StatusChanged(self.state.session_id, "diagnosing_put_back"))
        put_back = next(r.event for r in self.journal.records if r.seq == seq)
        found = await self._remembered(put_back_diagnosis.memory_query(put_back))
        event = await put_back_diagnosis.diagnose(self.model, self.state, self.journal.records, seq,
                                                  current_step(self.memory.read(PLAN)[0]), found, self._window,
                                                  wrap=self.control.interruptible)
        self._record(event)
        self._progress(progress.diagnosed(event))

    async def _remembered(self, query: str) -> list[tuple[str, str]]:
        """What long-term memory holds on `query` for a diagnosis ("path:line", text), where it has
        loaded; nothing when its search fails (an embedding provider down: diagnosed without it)."""
        if self.long_memory is None:
            return []
        try:
            hits = await self.long_memory.asearch(query, top_k=diagnosis.MEMORY_HITS, threshold=MIN_SCORE)
        except Exception as exc:
            log.warning("memory search for a diagnosis failed: %s", exc)
            return []
        return [(f"{hit.path}:{hit.start_line}", hit.text) for hit in hits]

    # --- stops for the person --------------------------------------------------------------------

    def _ask(self, reason: str, question: str, options: tuple[str, ...], context: dict) -> HumanQuestion:
        event = HumanQuestion(qid=f"q{self.state.last_seq + 1}", reason=reason, question=question,
                              options=options, context=context)
        self._record(event)
        self._progress(progress.question(event))
        if reason in ("three_strike", "danger_turn", "budget"):  # the run stops here: a burst ends
            self._write_episode(f"waiting: {reason_label(reason)}", question.splitlines()[0][:300])
        return event

    def _ask_danger(self) -> None:
        turn = self.state.turn
        self._record(Danger(turn=turn, level="stop", limit=turn))
        self._ask(
            "danger_turn",
            f"The agent has used {turn} turns. Continue (how many more turns?), give guidance, or stop?",
            DANGER_OPTIONS, {"turn": turn} | self._where_the_work_stands(),
        )

    def _where_the_work_stands(self) -> dict:
        """What the person needs to decide whether a run goes on (the turn threshold, the budget
        cap): where the plan stands, the step being worked on, and the latest steps."""
        plan, _ = self.memory.read(PLAN)
        return {"status": sections_of(plan).get("current status", [])[:6], "step": current_step(plan),
                "recent": self._latest_steps()}

    def _latest_steps(self) -> list[str]:
        """The latest tool calls in a line each: what was called, and a failure's message."""
        calls: dict[str, ToolCall] = {}
        steps: list[str] = []
        for record in self.journal.records[-4 * RECENT_STEPS_SHOWN:]:  # (a reply may hold several calls)
            event = record.event
            if isinstance(event, AssistantMessage):
                calls.update((call.id, call) for call in event.tool_calls)
            elif isinstance(event, ToolResult) and event.call_id in calls:
                failed = "" if event.ok else f" — {failure_excerpt(event.content, 120)}"
                steps.append(f"{'✓' if event.ok else '✗'} {described(calls[event.call_id])}{failed}")
        return steps[-RECENT_STEPS_SHOWN:]

    def _ask_budget(self) -> None:
        state = self.state
        used = f"{state.tokens_used:,} tokens" + (f", {money(state.usage.cost_usd)}" if state.usage.cost_usd else "")
        cap = " and ".join(part for part in (
            f"{state.budget_tokens:,} tokens" if state.budget_tokens else "",
            f"${state.budget_usd:.2f}" if state.budget_usd else "") if part)
        config = state.config
        grant = {"more_tokens": config.budget_tokens if config and state.budget_tokens else 0,
                 "more_usd": config.budget_usd if config and state.budget_usd else 0.0}  # as much again, unless told
        self._ask("budget", f"The budget cap ({cap}) is reached: {used} used. Continue (how much more?), or stop?",
                  BUDGET_OPTIONS, {"tokens": state.tokens_used, "cost_usd": state.usage.cost_usd} | grant
                  | self._where_the_work_stands())

    async def _three_strike(self, signature: str) -> None:
        errors = [r.event.message for r in self.journal.records
                  if isinstance(r.event, ErrorRecorded) and r.event.signature == signature][-3:]
        diagnosed = next((r.event.text for r in reversed(self.journal.records)
                          if isinstance(r.event, ErrorDiagnosed) and r.event.signature == signature), "")
        count = self.state.strikes.get(signature, len(errors))
        failure = self.state.failure(signature)
        prompt = Template(resource_text("prompts", "reboot.md")).safe_substitute(count=count, signature=failure)
        assembled, _ = await self.assemble(extra=[{"role": "user", "content": prompt}], remember=False)
        self.journal.notify(StatusChanged(self.state.session_id, "thinking"))
        try:
            reply = await self.control.interruptible(self.model.complete(self._request(assembled, "none")))
            reboot = parse_reboot(reply.text)
        except ModelError as exc:
            reboot = {key: "" for key in REBOOT_KEYS} | {"error": f"The reboot call failed: {exc}"}
        self._ask(
            "three_strike",
            f"The same error happened {count} times — {failure}. How should the agent go on?",
            THREE_STRIKE_OPTIONS,
            {"signature": signature, "errors": errors, "reboot": reboot, "diagnosis": diagnosed,
             "step": current_step(self.memory.read(PLAN)[0])},
        )


def _delegations_from(calls: list[ToolCall], index: int) -> int:
    """How many calls from `index` on are delegate_research calls in a row. Only these run at the
    same time: a helper only reads, so two cannot get in each other's way, while a call between
    them may write what the next one is to read."""
    count = 0
    while index + count < len(calls) and calls[index + count].name == "delegate_research":
        count += 1
    return max(count, 1)


def _minutes(count: int) -> str:
    return f"{count} minute{'s' * (count != 1)}"


def parse_reboot(text: str) -> dict[str, str]:
    """The five answers from the model's reply; free text is kept whole if it is not JSON."""
    match = re.search(r"\{.*\}", text, re.S)
    if match:
        try:
            data = json.loads(match.group(0))
            if isinstance(data, dict):
                return {key: str(data.get(key, "")).strip() for key in REBOOT_KEYS}
        except ValueError:
            pass
    return {key: "" for key in REBOOT_KEYS} | {"text": text.strip()}


def _phase(plan: str) -> str:
    match = _PHASE.search(plan)
    return match.group(1) if match else ""
