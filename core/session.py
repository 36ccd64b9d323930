"""The session façade: the only API the GUI and the CLI use.

A Session owns one log in the store, the three working-memory files and at most one running loop.
Everything it does is recorded as an event first, so what a view shows and what a reopened session
continues from are the same thing.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

from core import pictures
from core.agent.control import Control
from core.agent.loop import AgentLoop, LoopSettings
from core.agent.options import WITHDRAWN, typed_answer
from core.agent.running_calls import left_running_by_call, stop_left_running
from core.agent.state import SessionState, approval_key, asked_by_helper
from core.alongside import served_alongside, sessions_alongside
from core.changes import BY_A_COMMAND, ChangeTally
from core.context.engine import Assembled
from core.context.project import instruction_files_within, read_project_instructions
from core.events import (
    AssistantMessage,
    BackgroundKept,
    BackgroundStopped,
    FileChanged,
    FilesPutBack,
    HumanAnswer,
    HumanQuestion,
    ModelChanged,
    PinsChanged,
    Record,
    ReflectionWritten,
    SessionEnded,
    SessionResumed,
    SessionStarted,
    Usage,
    WorkdirMoved,
)
from core.folder_approvals import FolderApprovals
from core.git_state import git_state
from core.given_files import copy_given, givable, keep_given
from core.journal import Journal, Subscriber, ToolOutput
from core.llm import ModelClient, is_ollama, refuses_pictures
from core.memory import progress
from core.memory.history import Unrebuildable, file_versions, text_at
from core.memory.working import (
    FILES,
    FINDINGS,
    PLAN,
    PROGRESS,
    WorkingMemory,
    atomic_write,
    pin_key,
)
from core.offload import message_limit, person_message, persons_text, save_task
from core.originals import Change
from core.paths import (
    data_dir_of,
    missing_work_folder,
    remove_folder,
    session_dir,
    within,
)
from core.providers import model_window, sees_pictures
from core.reasoning import check_effort
from core.render import model_change_details
from core.run_lock import LOCK_WAIT_S, lock_taken, run_lock
from core.side_writers import first_reply, side_writers
from core.stay_awake import STAY_AWAKE, keep_awake_setting
from core.store import DiskFull, SessionIdTaken, Store, StoreError, session_title
from core.text import one_line, shown_text
from core.tools.builtin import builtin_registry
from core.tools.registry import ToolError, ToolRegistry
from core.tools.shell import kept_in_background, stop_kept
from core.work_changes import NotListed, WorkChanges

if TYPE_CHECKING:  # long-term memory brings NumPy: imported by whoever creates one, not by sessions
    from core.agent.research import Report as HelperReport
    from core.memory.index import Hit
    from core.memory.longterm import LongTermMemory
    from core.memory.reflection import Report
    from core.memory.strategies import Promotion

log = logging.getLogger(__name__)

ENDED_ON_ERROR = "ended:error"  # a run the provider's error (or a missing work folder) ended: Resume goes on

# Questions whose answer must be one of the offered options (the loop acts on them by name).
TYPED_QUESTIONS = ("three_strike", "danger_turn", "approval", "budget")
EDITABLE_FILES = (PLAN, FINDINGS)


PATCH_TASK_SHOWN = 80  # characters of the task, in a patch's first line
MIN_CONTEXT_WINDOW = 4096  # tokens: the brief prompt (~2,200) and a few turns


@dataclass
class Restored:
    """The files a put-back wrote back (restored) or removed (the agent created them), those of
    them from the copy made before the first command, and why it stopped short, if it did."""
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    from_copy: list[str] = field(default_factory=list)
    failed: str = ""


@dataclass(frozen=True)
class SessionConfig:
    task: str
    model: str
    workdir: Path
    api_base: str | None = None
    max_turns: int = 100
    approval: str = "ask"
    context_window: int | None = None
    reserve_output: int = 4096
    summary_model: str | None = None
    helper_model: str | None = None  # a cheaper model for the research helpers; None: the session's
    reasoning_effort: str = ""  # low | medium | high; "": the model's own way
    keep_turns: int = 5
    warn_turn: int = 7
    danger_turn: int = 30
    strike_limit: int = 3
    diagnose_errors: bool = True  # see SessionStarted
    copy_work_folder: bool = True  # see SessionStarted
    budget_tokens: int = 0
    budget_usd: float = 0.0
    answer_wait_min: int = 0  # see SessionStarted
    project_instructions: bool = True  # follow the workdir's AGENTS.md / CLAUDE.md if it has one
    # Pictures given with the task (a screenshot of what is wrong): each one's bytes and suffix
    # (.png, .jpg, …), kept in the session's pictures/ folder as it is created.
    pictures: tuple[tuple[bytes, str], ...] = ()
    # Files given with the task from outside the work folder that cannot go in it as text (a
    # customer's support bundle): each one's path and the name its copy is kept under in the
    # session's offload/given/ (core/given_files.py), as the task names it.
    given: tuple[tuple[str, str], ...] = ()
    tool_servers: tuple[str, ...] | None = None  # see SessionStarted

    def __post_init__(self) -> None:
        if not self.task.strip():
            raise ValueError("the task is empty")
        if self.approval not in ("ask", "all", "none"):
            raise ValueError(f"approval must be ask, all or none, not {self.approval!r}")
        if self.max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        check_window(self.context_window)
        check_effort(self.reasoning_effort)
        if self.budget_tokens < 0 or self.budget_usd < 0:
            raise ValueError("a budget cap cannot be negative")
        if self.answer_wait_min < 0:
            raise ValueError("the wait for an answer cannot be negative")


def check_window(window: int | None) -> None:
    if window is not None and window < MIN_CONTEXT_WINDOW:
        raise ValueError(f"a context window of {window:,} tokens cannot hold Tripane's prompt "
                         f"and a few turns; give at least {MIN_CONTEXT_WINDOW:,}")


class CannotRun(ValueError):
    """The session cannot run now; the message says why and what to do."""


def new_aside_id() -> str:
    """The id of a question the person asks a helper: no call of the agent's has one like it."""
    return f"asked-{secrets.token_hex(6)}"


class SessionBusy(CannotRun):
    """The session is being run by another Tripane: another window, or `tripane run`/`resume`."""


class WorkFolderMissing(CannotRun):
    """The session's work folder is gone: every tool would fail, turn after turn, at the
    provider's expense, until the 3-Strike rule stopped it."""


def take_run_lock(lock: FileLock, session_id: str, wait_s: float = LOCK_WAIT_S) -> None:
    """Raises SessionBusy while another process holds the session's lock."""
    Path(lock.lock_file).parent.mkdir(parents=True, exist_ok=True)
    try:
        lock.acquire(timeout=wait_s)
    except Timeout:
        raise SessionBusy(
            f"Session {session_id} is being run by another Tripane (another window, or `tripane run` / "
            "`tripane resume` in a terminal). Wait for it to stop, or stop it there.") from None


def delete_session(store: Store, data_dir: Path, session_id: str) -> None:
    """Remove a session that is not open here: its events and its folder (the three files,
    offloads, copies). SessionBusy, and nothing removed, while another Tripane runs it."""
    lock = run_lock(data_dir, session_id)
    take_run_lock(lock, session_id)  # not from under another Tripane running it
    # What its commands left running (a server kept for the person, or one a killed Tripane left)
    # would run on with nothing left to say so.
    stop_left_running(session_dir(data_dir, session_id))
    try:
        store.delete_session(session_id)
    finally:
        lock.release(force=True)  # before the folder goes: Windows cannot delete a held file
    remove_folder(session_dir(data_dir, session_id))


TRIPANES_OWN_FOLDERS = ("sessions", "memory", "logs")  # of its data folder


def usable_workdir(folder: str | Path, data_dir: Path | None = None) -> Path:
    """The folder as a session's work folder (absolute), or ValueError saying why it cannot be.
    `data_dir`: Tripane's data folder, which it may hold (a home folder does) or be in (a project
    folder kept beside the data), but not be, nor be in its own folders."""
    workdir = Path(folder).expanduser().resolve()
    if not workdir.is_dir():
        raise ValueError(f"the workdir {workdir} does not exist or is not a folder")
    if data_dir is not None and (workdir == data_dir.resolve() or any(
            within(workdir, data_dir / own) is not None for own in TRIPANES_OWN_FOLDERS)):
        raise ValueError(f"the workdir {workdir} is Tripane's own data folder, or one of its folders: choose the "
                         "project's folder")
    if shown_text(str(workdir)) != str(workdir):  # the log, progress.md and every request are UTF-8
        raise ValueError(f"the workdir's path {shown_text(str(workdir))} is not UTF-8 text (a name from an older "
                         "system): rename that folder, or choose one whose path is")
    return workdir


def new_session_id() -> str:
    return f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


ID_TRIES = 20


def claim_session_id(store: Store, data_dir: Path, task: str, model: str) -> str:
    """A new session's id, its row made. The random part is short (the id is typed, in `tripane
    resume ID`): sessions started by a script, many a second, drew the same one, and the second
    session's start failed. A folder left by a deleted session is not taken over either."""
    for _ in range(ID_TRIES):
        session_id = new_session_id()
        if session_dir(data_dir, session_id).exists():
            continue
        try:
            store.create_session(session_id, task=task, model=model)
        except SessionIdTaken:
            continue
        return session_id
    raise StoreError(f"no free session id in {ID_TRIES} tries in {store.path}")


class Session:
    def __init__(self, store: Store, data_dir: Path, session_id: str, model: ModelClient,
                 registry: ToolRegistry | None = None, settings: LoopSettings = LoopSettings(),
                 long_memory: LongTermMemory | None = None):
        self.store = store
        self.long_memory = long_memory  # shared by the sessions of a data folder; None: not used
        self.id = session_id
        self.dir = session_dir(data_dir, session_id)
        self.model = model
        self.registry = registry or builtin_registry()
        self.settings = settings
        info_tools = frozenset(n for n, s in self.registry.specs.items() if s.gathers_information)
        self.journal = Journal(store, session_id, info_tools)
        self.memory = WorkingMemory(self.dir)
        self.control = Control()
        self.approvals = FolderApprovals(data_dir)  # commands allowed in a work folder, for every session there
        self._task: asyncio.Task[str] | None = None
        self._loop: AgentLoop | None = None  # one per session: it holds the context engine's memory
        self._run_lock = run_lock(data_dir, session_id)
        self._asking = 0  # the person's questions to a helper working now (they record steps too)
        # When the run the log leaves running stopped, for a session opened here: found when this
        # process first writes to it, said when it first runs it ("": nothing to say; None: not
        # found yet).
        self._interrupted_at: str | None = None
        pictures.recall_refusals(self.dir)  # (an earlier run's, for this process: not sent to be refused again)

    # --- opening ---------------------------------------------------------------------------------

    @classmethod
    def create(cls, store: Store, data_dir: Path, config: SessionConfig, model: ModelClient,
               **kwargs) -> Session:
        workdir = usable_workdir(config.workdir, data_dir)
        instructions_file, instructions = read_project_instructions(workdir) if config.project_instructions else ("", "")
        for source, _name in config.given:  # (refused before the session is made)
            givable(Path(source))
        session = cls(store, data_dir, claim_session_id(store, data_dir, config.task, config.model), model, **kwargs)
        shown = tuple(pictures.keep(session.dir, data, suffix) for data, suffix in config.pictures)
        for source, name in config.given:
            keep_given(session.dir, Path(source), name)
        start = SessionStarted(
            task=config.task, model=config.model, workdir=str(workdir), api_base=config.api_base,
            max_turns=config.max_turns, approval=config.approval, warn_turn=config.warn_turn,
            context_window=config.context_window, reserve_output=config.reserve_output,
            summary_model=config.summary_model, helper_model=config.helper_model,
            reasoning_effort=config.reasoning_effort, keep_turns=config.keep_turns,
            danger_turn=config.danger_turn, strike_limit=config.strike_limit,
            diagnose_errors=config.diagnose_errors, copy_work_folder=config.copy_work_folder, budget_tokens=config.budget_tokens, budget_usd=config.budget_usd,
            answer_wait_min=config.answer_wait_min, instructions_file=instructions_file, instructions=instructions,
            folder_instructions=config.project_instructions, git=git_state(workdir),
            instruction_files=instruction_files_within(workdir, data_dir) if config.project_instructions else (),
            pictures=shown, alongside=sessions_alongside(store, data_dir, workdir, but=session.id),
            served=served_alongside(store, data_dir, workdir, but=session.id), tool_servers=config.tool_servers,
        )
        try:
            session.journal.record(start)
        except BaseException:  # a session without its start event could never be opened: none at all
            store.delete_session(session.id)
            raise
        save_task(session.dir, config.task)  # (before the plan, whose Goal points to it)
        for change in session.memory.create(title=session_title(config.task), task=config.task):
            session.journal.record(change)
        session._progress(progress.session_started(session.id, config.task, config.model, shown))
        session._interrupted_at = ""  # its run starts here
        return session

    @classmethod
    def open(cls, store: Store, data_dir: Path, session_id: str, model: ModelClient, **kwargs) -> Session:
        row = store.find_session(session_id)
        session = cls(store, data_dir, row.id, model, **kwargs)
        session.journal.replay()
        session._opened()
        return session

    @classmethod
    async def load(cls, store: Store, data_dir: Path, session_id: str, model: ModelClient, **kwargs) -> Session:
        """Session.open for a window: the log is read, decoded and folded on a worker thread (a
        10,000-event session takes half a second, which the window would spend frozen), through a
        connection of the worker's own; the event loop's thread then takes in anything recorded
        meanwhile and checks the files."""
        row = store.find_session(session_id)

        def replayed() -> Session:
            session = cls(store, data_dir, row.id, model, **kwargs)
            session.journal.fold(store.read_records(row.id))
            return session

        session = await asyncio.to_thread(replayed)
        session.journal.replay()
        session._opened()
        return session

    def _opened(self) -> None:
        """What opening a replayed session does: files' versions and pins, edits made outside
        Tripane while it was closed, a pause that was in force."""
        state = self.state
        if state.config is None:
            raise ValueError(f"session {self.id} was never started (Tripane stopped while creating it), so there "
                             "is nothing in it to open; delete it from the list")
        self._restore_files()
        # Edits made outside Tripane while it was closed become events; while another process runs
        # the session, a difference on disk is that process's own write, not yet recorded.
        if not self.run_elsewhere():
            with self._writing():
                # Stopped between its start and its files' first versions (killed, a power cut):
                # they are written now, as the start would have.
                missing = tuple(name for name in FILES if name not in state.files)
                for change in self.memory.create(title=session_title(state.config.task), task=state.config.task,
                                                 names=missing) if missing else ():
                    self.journal.record(change)
                self._record_outside_edits()
                for question in [q for q in state.open_questions.values() if asked_by_helper(q)]:
                    # its helper ended with the process that ran it
                    self._record_answer(question, WITHDRAWN, "Tripane stopped while the research helper that asked "
                                                             "was working")
        if state.status == "paused":
            self.control.pause()

    def _restore_files(self) -> None:
        """The three files' versions and pins as the log has them, so a write can tell a stale base."""
        for name in FILES:
            info = self.state.files.get(name)
            if info is not None:
                if not self.memory.path(name).exists():
                    self._write_back_from_log(name, info.version)
                self.memory.restore(name, version=info.version, sha256=info.sha256, size=info.size)
        for name, lines in self.state.pins.items():
            self.memory.set_pins(name, lines)

    def _write_back_from_log(self, name: str, version: int) -> None:
        """A file deleted while Tripane was closed, rebuilt from the log's diffs (as its history
        shows it) and written back: the agent's memory, not a file it may lose."""
        try:
            text = text_at(file_versions(self.store, self.id, name), version)
            self.memory.folder.mkdir(parents=True, exist_ok=True)
            atomic_write(self.memory.path(name), text)
        except (Unrebuildable, OSError) as exc:
            log.warning("session %s: %s is missing and was not written back: %s", self.id, name, exc)
        else:
            log.warning("session %s: %s was deleted outside Tripane; written back from the log as version %d",
                        self.id, name, version)

    # --- one writer at a time --------------------------------------------------------------------

    def _check_work_folder(self) -> None:
        problem = missing_work_folder(self.state.workdir) if self.state.config is not None else None
        if problem:
            raise WorkFolderMissing(problem)

    def _claim(self) -> None:
        """Become the one process writing to this session, after taking in what another process
        wrote since this one opened it. Raises SessionBusy while another process runs it: two
        loops on one session would each run tools and append turns the other never sees."""
        if self._run_lock.is_locked:
            return
        take_run_lock(self._run_lock, self.id)
        self.follow()
        if self._interrupted_at is None:  # before this process writes anything: the log as left
            self._interrupted_at = self.records[-1].ts if self.state.status == "running" and self.records else ""

    def follow(self) -> list[Record]:
        """Take in what another process recorded since (read only): a window showing a session that
        `tripane run` drives follows it this way, and its views are told of each record."""
        news = self.journal.catch_up()
        if news:
            self._restore_files()
        return news

    def run_elsewhere(self) -> bool:
        """Whether another process runs this session now (its lock is held, not by this one)."""
        if self.running or self._run_lock.is_locked:
            return False
        return lock_taken(self._run_lock)

    def _release(self) -> None:
        if not self.running and not self._asking:
            self._run_lock.release(force=True)

    @contextmanager
    def _as_logged_if_disk_full(self) -> Iterator[None]:
        """Around writes to the files and the log: when the disk fills between the two, the loop and
        the files as this process holds them are a step ahead of the log that could not be written.
        They are set back to the log, so the next run goes on from it as after a crash; a file the
        disk did take is then an outside edit, recorded when there is room."""
        try:
            yield
        except DiskFull:
            try:
                self._restore_files()
            except OSError as exc:
                log.warning("session %s: the files could not be set back to the log: %s", self.id, exc)
            raise

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Around a write made while no run of this process holds the session."""
        self._claim()
        try:
            yield
        finally:
            self._release()

    # --- reading ---------------------------------------------------------------------------------

    @property
    def state(self) -> SessionState:
        return self.journal.state

    @property
    def records(self) -> list[Record]:
        return self.journal.records

    @property
    def task(self) -> asyncio.Task[str] | None:
        """The task driving the loop, if one was started (views watch it to see a run end)."""
        return self._task

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    @property
    def in_use(self) -> bool:
        """Whether this object must stay the one that holds the session: it runs, a helper the
        person asked works in it, it keeps something running for the person, or a question waits
        for their answer. A window lets the others go when they are not shown (gui/workspace.py)."""
        return self.running or bool(self._asking) or bool(self.state.open_questions) or self.serves_the_person

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        return self.journal.subscribe(subscriber)

    def attach_memory(self, memory: LongTermMemory) -> None:
        """Long-term memory that arrived after the session was opened (the window loads it late)."""
        self.long_memory = memory
        if self._loop is not None:
            self._loop.attach_memory(memory)

    async def search_memory(self, query: str, top_k: int = 8) -> list[Hit]:
        """Hybrid search of long-term memory (what the agent's memory_search sees)."""
        if self.long_memory is None:
            raise ValueError("this session has no long-term memory")
        return await self.long_memory.asearch(query, top_k=top_k)

    def read_file(self, name: str) -> tuple[str, int]:
        return self.memory.read(name)

    def file_author(self, name: str) -> str:
        """Who wrote the file's version now: agent | user | external | core ("" before any)."""
        info = self.state.files.get(name)
        return info.author if info is not None else ""

    def file_path(self, name: str) -> Path:
        return self.memory.path(name)

    # --- running ---------------------------------------------------------------------------------

    async def inspect_context(self) -> Assembled:
        """The context as the model would see it now, split by zone with token counts."""
        assembled, _ = await self._agent_loop().assemble(remember=False)
        return assembled

    def _agent_loop(self) -> AgentLoop:
        if self._loop is None:
            self._loop = AgentLoop(journal=self.journal, memory=self.memory, registry=self.registry,
                                   model=self.model, session_dir=self.dir, control=self.control,
                                   settings=self.settings, long_memory=self.long_memory,
                                   folder_approvals=self.approvals)
        return self._loop

    def start(self) -> asyncio.Task[str]:
        """Run the loop in the background (once); the task's result is the end status."""
        if self._task is None or self._task.done():
            self._check_work_folder()
            self._claim()
            self.control.stop_requested = False
            self._task = asyncio.get_running_loop().create_task(self._run(), name=f"session-{self.id}")
        return self._task

    async def _run(self) -> str:
        log.info("session %s: run starts at turn %s (model %s)", self.id, self.state.turn, self.state.model)
        status = "interrupted"
        try:
            STAY_AWAKE.set_enabled(keep_awake_setting())
            with self._as_logged_if_disk_full(), STAY_AWAKE.held(self.id):
                self._say_if_interrupted()
                status = await self._agent_loop().run()
            return status
        except DiskFull:
            self._loop = None  # a step ahead of the log too: the next run builds its loop from the log
            raise
        finally:
            if not self._asking:  # a helper the person asked still writes: it lets go when it ends
                self._run_lock.release(force=True)
            log.info("session %s: run ends %s at turn %s, %s tokens", self.id, status, self.state.turn,
                     f"{self.state.tokens_used:,}")

    def _say_if_interrupted(self) -> None:
        """A run that stopped with nobody stopping it goes on: the conversation, `progress.md` and
        the reflection say where the gap is (a command it ran may have been cut short)."""
        if self._interrupted_at:
            at, self._interrupted_at = self._interrupted_at, ""
            stopped = self._stop_left_running()
            self._progress(progress.resumed_after_interruption(at, [group for group, _ in stopped]))
            self.journal.record(SessionResumed(interrupted_at=at))
            if stopped:
                self.journal.record(BackgroundStopped(tuple(command for _, command in stopped), interrupted=True))

    async def run(self) -> str:
        """Run until the session ends or waits with nobody to answer; returns the end status."""
        return await self.start()

    async def close(self) -> None:
        """Stop driving the session without recording anything: it stays as it is (e.g. waiting)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    async def wait(self) -> str | None:
        if self._task is None:
            return None
        return await asyncio.shield(self._task)

    async def send(self, text: str, pictures: tuple[str, ...] = ()) -> None:
        """A message from the person: reaches the agent at its next step, or restarts an ended run.
        `pictures`: those shown with it, kept in the session folder (keep_picture) beforehand."""
        if not text.strip() and not pictures:
            raise ValueError("the message is empty")
        if self.running:
            self.control.inbox.append((text, pictures))
            return
        with self._writing():
            message = person_message(text, self.dir, self._agent_loop().message_budget(), pictures)
            self.journal.record(message)
            self._progress(progress.person_wrote(message))
            self.start()

    def keep_given(self, source: Path) -> str:
        """A copy of a file the person gives the agent from outside the work folder (one that cannot
        go in a message as text: a support bundle), kept in the session's offload/given/; how the
        agent names it, for the message. NotGiven when it cannot be."""
        return copy_given(self.dir, source)

    def keep_picture(self, data: bytes, suffix: str) -> str:
        """A picture the person is about to show the agent (a pasted screenshot), kept in the
        session's pictures/ folder; its path there, for send()."""
        return pictures.keep(self.dir, data, suffix)

    def sees_pictures(self) -> bool:
        """Whether the session's model takes pictures (litellm's model map, or its server, says so).
        Blocking for at most half a second a page, the first time a server of one's own is asked."""
        return sees_pictures(self.state.model, self.state.api_base, timeout_s=0.5)

    def pictures_refused(self) -> tuple[frozenset[str], bool]:
        """The pictures (their paths) the model's provider refused in this process, so it was not
        shown them, and whether it refused all it was shown (it is shown none from then on)."""
        model, api_base = self.state.model, self.state.api_base
        return pictures.refused(model, api_base), refuses_pictures(model, api_base)

    def message_limit(self) -> int:
        """The longest message taken whole into the conversation; a longer one is offloaded."""
        return message_limit(self._agent_loop().message_budget())

    async def answer(self, qid: str, choice: str, text: str = "", pictures: tuple[str, ...] = ()) -> None:
        with self._writing():  # first: another process may have answered it meanwhile
            question = self.state.questions.get(qid)
            if question is None:
                raise ValueError(f"there is no question {qid!r} in this session")
            if qid in self.state.answers:
                raise ValueError(f"question {qid} was already answered")
            if question.reason in TYPED_QUESTIONS and choice not in question.options:
                raise ValueError(f"answer {choice!r} is not one of {', '.join(question.options)}")
            self._record_answer(question, choice, text, long_offloaded=True, pictures=pictures)
        if question.reason == "approval" and choice == "always_call":  # later sessions here too
            self.approvals.allow(self.state.workdir, approval_key(
                question.context.get("tool", ""), question.context.get("arguments", "")))
        self.control.answered(qid)

    async def withdraw(self, qid: str, why: str) -> None:
        """Tripane's answer to a research helper's question that nobody can answer (a terminal
        that is not interactive): the helper goes on without the read, and says what it missed.
        The agent's own questions stay open: a later run, or another process, answers them."""
        with self._writing():
            question = self.state.questions.get(qid)
            if question is None or not asked_by_helper(question):
                raise ValueError(f"question {qid!r} is not a research helper's")
            if qid in self.state.answers:
                return
            self._record_answer(question, WITHDRAWN, why)
        self.control.answered(qid)

    def _record_answer(self, question: HumanQuestion, choice: str, text: str, long_offloaded: bool = False,
                       pictures: tuple[str, ...] = ()) -> None:
        """`long_offloaded`: the person's words, which a pasted log makes too long for the context,
        are kept as a long message is: the details, and the choice of a question without options
        (the answer itself, typed). `pictures`: shown with the answer (keep_picture)."""
        path, size = None, 0
        if long_offloaded:
            budget = self._agent_loop().message_budget()
            if typed_answer(question, choice):
                choice, path, size = persons_text(choice, self.dir, budget, "answer")
            text, text_path, text_size = persons_text(text, self.dir, budget, "answer")
            if text_path:  # (both long: the details' file; each excerpt names its own)
                path, size = text_path, text_size
        answer = HumanAnswer(qid=question.qid, choice=choice, text=text, offload_path=path, size=size,
                             pictures=pictures)
        self.journal.record(answer)
        self._progress(progress.answer(answer, question))

    async def change_model(self, model: str, api_base: str | None = None, context_window: int | None = None,
                           reasoning_effort: str | None = None) -> ModelChanged | None:
        """The rest of the session on another model (the one it had is gone, refused, too weak or
        too dear), or the same one thinking harder or less (`reasoning_effort`; None: as it is): a
        run in progress uses it from its next request; an ended one, once a message continues it.
        None when nothing changes."""
        model, api_base = model.strip(), (api_base or "").strip() or None
        if not model:
            raise ValueError("the model is empty")
        check_window(context_window)
        state = self.state
        if reasoning_effort is not None:
            check_effort(reasoning_effort)
        effort = state.reasoning_effort if reasoning_effort is None else reasoning_effort
        if (model, api_base, context_window, effort) == (state.model, state.api_base, state.context_window,
                                                         state.reasoning_effort):
            return None
        event = ModelChanged(model=model, api_base=api_base, context_window=context_window, previous=state.model,
                             reasoning_effort=reasoning_effort if effort != state.reasoning_effort else None,
                             server_changed=api_base != state.api_base)
        with self._writing():
            self.journal.record(event)
            self._progress(progress.model_changed(model_change_details(event)))
        return event

    def move_workdir(self, folder: str | Path) -> WorkdirMoved | None:
        """The work folder's new place (it was moved or renamed, or the session came from another
        computer): tools work there from the next call on, and the agent is told. Not while the
        run works (a command may be running in the old place). None when it is there already."""
        self._not_while_working("The work folder can be moved")
        workdir = str(usable_workdir(folder, data_dir_of(self.dir)))
        if workdir == self.state.workdir:
            return None
        event = WorkdirMoved(workdir=workdir, previous=self.state.workdir)
        with self._writing():
            self.journal.record(event)
            self._progress(progress.workdir_moved(event.previous, event.workdir))
        return event

    def _not_while_working(self, what: str) -> None:
        """CannotRun while the run works: a tool may be using the work folder. (A pause waits for
        the step's end.)"""
        if self.running and self.state.status not in ("paused", "waiting"):
            raise CannotRun(f"{what} while the run is paused, waiting for you or stopped, not while it works: "
                            "pause it first (Ctrl+P).")
        if self.run_elsewhere():
            raise CannotRun(f"{what} from the Tripane that runs this session now (another window or terminal), "
                            "or once its run has stopped.")

    def changed_files(self) -> list[Change]:
        """The files the agent changed in this session, against what they were before: by its file
        tools, and by its commands (core/work_changes.py). WorkFolderMissing when the work folder
        is gone: every file would seem deleted."""
        tally = self._change_tally()
        by_commands = None if tally.unnamed else tally.named_by_commands  # (None: not all are named)
        return WorkChanges(self.dir).changes(self._work_folder(), by_commands, tally.changed_since)

    def changed_file_diff(self, change: Change) -> list[str]:
        """What was done to one of changed_files(), as unified diff lines."""
        return WorkChanges(self.dir).diff(self._work_folder(), change)

    def changed_file_sides(self, change: Change) -> tuple[bytes | None, bytes | None]:
        """One of changed_files() before and now (a chart the agent drew again is seen, not diffed)."""
        return WorkChanges(self.dir).sides(self._work_folder(), change)

    def changes_patch(self, changes: list[Change]) -> bytes:
        """`changes` (of changed_files()) as one patch file in git's format, before → now, headed by
        what it is and how to apply it (core/patches.py). ValueError when none of them has a
        change a patch can hold."""
        workdir = self._work_folder()
        patch = WorkChanges(self.dir).patch(workdir, changes)
        if not patch.files:
            raise ValueError("There is no change to put in a patch"
                             + (f": {'; '.join(patch.left_out)}." if patch.left_out else "."))
        heading = (f"What the agent changed in {workdir}, in Tripane session {self.id} "
                   f"(\"{one_line(self.state.config.task, PATCH_TASK_SHOWN)}\"), as of {datetime.now():%Y-%m-%d %H:%M}.")
        return patch.file(heading, workdir)

    def changes_not_listed(self) -> NotListed:
        """What changed_files() cannot list, and why: files the log says the file tools changed
        with no copy kept (a session an earlier Tripane recorded), and what shell commands changed
        when the work folder was not copied before them."""
        tally = self._change_tally()
        by_tools = {path: how for path, how in tally.changed.items() if not how.endswith(BY_A_COMMAND)}
        return WorkChanges(self.dir).not_listed(by_tools, self.state.config.copy_work_folder, tally.shell_commands)

    def _change_tally(self) -> ChangeTally:
        tally = ChangeTally()
        for record in self.records:
            tally.add(record)
        return tally

    def _work_folder(self) -> Path:
        if problem := missing_work_folder(self.state.workdir):
            raise WorkFolderMissing(problem)
        return Path(self.state.workdir)

    def put_back(self, paths: list[str], reason: str = "") -> FilesPutBack | None:
        """The files the agent changed, as they were before the session (core/work_changes.py), and
        the agent told at its next step, with the person's `reason`. Not while the run works.
        CannotRun when one could not be put back (those before it were, and are recorded); None
        when `paths` is empty."""
        return self.record_put_back(self.restore(paths), reason)

    def restore(self, paths: list[str]) -> Restored:
        """put_back's slow half, the files themselves (git reads each one a command changed from
        the copy: seconds for hundreds), on any thread; record_put_back then tells the agent."""
        self.check_put_back()
        kept, workdir = WorkChanges(self.dir), self._work_folder()  # (a put-back must not make a new one)
        done = Restored()
        try:
            kept.read_ahead(workdir, paths)
        except OSError as exc:  # (git's SnapshotFailed): each file is read as it is put back
            log.warning("the copy's files could not be read ahead: %s", exc)
        for path in paths:
            try:
                change = kept.put_back(workdir, path)
            except (OSError, ValueError, ToolError) as exc:  # (git's SnapshotFailed is an OSError)
                done.failed = f"{path} was not put back: {exc}"
                break
            (done.restored if change.existed else done.removed).append(path)
            if change.by_command:
                done.from_copy.append(path)
        if done.restored or done.removed:
            kept.mark_put_back(workdir, [*done.restored, *done.removed])
        return done

    def check_put_back(self) -> None:
        """CannotRun when files cannot be put back now: the run works, or runs elsewhere."""
        self._not_while_working("Files can be put back")

    def record_put_back(self, done: Restored, reason: str = "") -> FilesPutBack | None:
        """What restore put back, recorded for the agent and the person, on the thread that runs the
        session (its listeners draw)."""
        event = (FilesPutBack(paths=tuple(done.restored), removed=tuple(done.removed),
                              reason=shown_text(reason.strip()), from_copy=tuple(done.from_copy))
                 if done.restored or done.removed else None)
        if event is not None:
            with self._writing():
                self.journal.record(event)
                self._progress(progress.put_back(event))
            self._take_back_success()
            if self._loop is not None:  # (a loop made later reads them off the log as known)
                self._loop.seen_files.settle([*event.paths, *event.removed])
        if done.failed:
            raise CannotRun(done.failed + (" (the files before it were)" if event else ""))
        return event

    def _take_back_success(self) -> None:
        """A task that ended done, and whose work the person now puts back, did not succeed: the
        skills (and variants) it followed count it a failure instead (the first put-back after the
        end; a later one undoes what is already counted)."""
        if self.long_memory is None or self.state.status != "ended:done" or not self.state.injected_skills:
            return
        since_end = itertools.takewhile(lambda r: not isinstance(r.event, SessionEnded), reversed(self.records))
        if sum(isinstance(r.event, FilesPutBack) for r in since_end) != 1:
            return
        from core.memory.variants import take_back_success

        for slug in self.state.injected_skills:
            try:
                if changed := take_back_success(self.long_memory.files, slug,
                                                on_variant=slug in self.state.injected_variants):
                    log.info("skill %s: %s", slug, changed)
            except Exception as exc:  # the skills' record is memory's; the put-back stands
                log.warning("the use of skill %s was not counted a failure: %s", slug, exc)

    def work_to_reflect_on(self) -> list[Record]:
        """The records since the last reflection (all of them if none), when the agent worked in them."""
        records = self.records
        last = next((i for i in range(len(records) - 1, -1, -1) if isinstance(records[i].event, ReflectionWritten)), -1)
        since = records[last + 1:]
        if not any(isinstance(r.event, AssistantMessage) for r in since):
            return []
        start = [r for r in records[:last + 1] if isinstance(r.event, SessionStarted)]
        return start + since  # the task is read from the start, whichever part is reflected on

    async def ask_helper(self, question: str, on_read: Callable[[str], None] | None = None,
                         asked: str | None = None) -> tuple[str, HelperReport]:
        """A question of the person's answered by a research helper that reads the work folder,
        the agent's files and long-term memory (core/agent/research.py): (its id, the report).
        Aside from the agent, which never sees it, and possible while it works; its requests
        count in the session's spending. `on_read` is told each read as it starts. Cancel the
        task to give up; Session.stop_tool(`asked`, the id, new_aside_id() by default) has the
        helper report what it has."""
        if not question.strip():
            raise ValueError("the question is empty")
        if self.run_elsewhere():  # asked before the model is: its steps could not be recorded
            raise SessionBusy(f"Session {self.id} is being run by another Tripane (a terminal's `tripane run`, or "
                              "another window): ask there, or once that run ends.")
        loop = self._agent_loop()  # what another process recorded is taken in as the lock is (_writing)
        asked = asked or new_aside_id()

        def reads(notice) -> None:
            if isinstance(notice, ToolOutput) and notice.call_id == asked and notice.text and on_read is not None:
                on_read(notice.text)

        unsubscribe = self.journal.subscribe(reads)
        try:
            with self._writing():
                self._asking += 1
                try:
                    return asked, await loop.research_for_person(asked, question.strip())
                finally:
                    self._asking -= 1
        finally:
            unsubscribe()

    async def reflect(self) -> tuple[ReflectionWritten, Report | None, list[Promotion]]:
        """Reflection on the work since the last one, by the summary model (the session's own if that
        one fails): the report kept in long-term memory, its strategies counted toward lessons, a
        `reflection` event recorded. Raises CannotRun when there is nothing to reflect on or no
        model could, in words for the person; a reply that is not a report is kept all the same."""
        # Long-term memory's modules bring NumPy: imported when used, as the memory itself is.
        from core.memory import strategies
        from core.memory.reflection import (
            ReflectionUnreadable,
            digest,
            parse,
            reflection_request,
            trace,
        )

        if self.long_memory is None:
            raise CannotRun("Reflections are kept in long-term memory, which is not on for this session.")
        if self.running and self.state.status not in ("paused", "waiting") and not self.state.ended:
            raise CannotRun("The agent is working: reflect on the task once it ends, pauses or waits for you.")
        if self.run_elsewhere():  # asked before the model is: its reflection could not be recorded
            raise SessionBusy(f"Session {self.id} is being run by another Tripane (a terminal's `tripane run`, or "
                              "another window): reflect on it there, or once that run ends.")
        self.follow()  # what the other process recorded before it let go
        records = self.work_to_reflect_on()
        if not records:
            raise CannotRun("There is nothing to reflect on: the agent has not worked since the last reflection.")
        memory = self.long_memory
        lessons = await asyncio.to_thread(strategies.active_lessons, memory)
        text = trace(records)
        writers = side_writers(self.state)
        windows = {model: await self._ollama_window(model, api_base) for model, api_base in writers}
        reply, writer, failures = await first_reply(
            self.model, writers,
            lambda model, api_base: reflection_request(model, api_base, text, lessons, windows[model]))
        if reply is None:
            raise CannotRun("No model could reflect on the task: " + "; ".join(failures))
        try:
            report, error = parse(reply.text), ""
        except ReflectionUnreadable as exc:
            report, error = None, str(exc)
        path = await asyncio.to_thread(strategies.save, memory, self.id, writer, reply.text, report)
        rel_path = path.relative_to(memory.files.root).as_posix()
        if report is not None:
            await asyncio.to_thread(memory.files.append_reflection, self.state.config.task.strip().splitlines()[0],
                                    digest(report), self.id, path.name)
        promoted = await asyncio.to_thread(strategies.promote_due, memory) if report else []
        variant, variant_usage = "", Usage()
        if report is not None and self.state.injected_skills:
            from core.memory.variants import earlier_tasks, propose_for

            variant, variant_usage = await propose_for(
                memory.files, self.state.injected_skills, digest(report), sorted(self.registry.specs), self.model,
                writers, windows, self.id, earlier=lambda slug: earlier_tasks(
                    strategies.kept(memory), self.store.sessions_following(slug), self.id))
        event = ReflectionWritten(
            path=rel_path, model=writer, usage=reply.usage + variant_usage,
            achieved=report.achieved if report else "", strategies=len(report.strategies) if report else 0,
            lessons=tuple(p.lesson.id for p in promoted if p.lesson), error=error, variant=variant)
        with self._writing():
            self.journal.record(event)
        return event, report, promoted

    async def _ollama_window(self, model: str, api_base: str | None) -> int | None:
        """The window an Ollama model is run with for a side request (Ollama cuts a longer prompt to
        its small default without a word); None for the others, which know their own."""
        if not is_ollama(model):
            return None
        state = self.state
        if model == state.model and (state.learned_window or state.context_window):
            return state.learned_window or state.context_window
        return await asyncio.to_thread(model_window, model, api_base)

    async def approve(self, qid: str, approved: bool, reason: str = "", always: bool = False) -> None:
        choice = ("always" if always else "approve") if approved else "deny"
        await self.answer(qid, choice, reason)

    def take_outside_edits(self) -> list[FileChanged]:
        """Record the edits made to the three files outside Tripane (another editor) since it last
        looked: the panes show them, and the agent is told at its next step. The agent's loop looks
        at each step; the window asks between them, so an edit made while the agent waits, or after
        it finished, is seen, and a save in the window made on the text before it is a conflict, not
        an overwrite that loses it. While another process runs the session, that process records them."""
        if not self.memory.outside_edits_pending() or self.run_elsewhere():
            return []
        with self._writing(), self._as_logged_if_disk_full():
            return self._record_outside_edits()

    def _record_outside_edits(self) -> list[FileChanged]:
        changes = self.memory.check_external()
        for change in changes:
            self.journal.record(change)
        return changes

    def take_persons_edit(self, name: str) -> FileChanged | None:
        """The person's edit of a file made in their own editor at Tripane's asking (the terminal's
        "edit the plan"): recorded as theirs, so the agent is told the person edited it."""
        with self._writing(), self._as_logged_if_disk_full():
            change = next(iter(self.memory.check_external((name,), author="user")), None)
            if change is not None:
                self.journal.record(change)
            self._record_outside_edits()  # (the other files, edited meanwhile by another program)
        return change

    def edit_file(self, name: str, text: str, base_version: int) -> FileChanged | None:
        """The person's edit. Raises WriteRefused (with the current text) if the file moved on,
        also by an edit outside Tripane that no one has looked at yet. An edit saved as it began
        changes nothing: no version, and nothing told to the agent (None)."""
        if name not in EDITABLE_FILES:
            raise ValueError(f"{name} is written by Tripane and cannot be edited; editable: {EDITABLE_FILES}")
        with self._writing(), self._as_logged_if_disk_full():
            self._record_outside_edits()
            if name in self.memory.unreadable:
                raise OSError(f"{name} was changed outside Tripane and cannot be read now "
                              f"({self.memory.unreadable[name]}), so your edit would write over that change.")
            if (text, base_version) == self.memory.read(name):
                return None
            change = self.memory.write(name, text, base_version=base_version, author="user")
            self.journal.record(change)
        return change

    def pin(self, name: str, lines: list[str] | tuple[str, ...]) -> None:
        """Pin lines of a file so the agent cannot remove or rewrite them (replaces earlier pins)."""
        if name != PLAN:
            raise ValueError("only lines of task_plan.md can be pinned")
        with self._writing(), self._as_logged_if_disk_full():
            self._record_outside_edits()  # the lines are pinned in the plan as it is on disk
            text, _ = self.memory.read(name)
            present = {pin_key(line) for line in text.splitlines()}
            wanted = tuple(line.strip() for line in lines if line.strip())
            absent = [line for line in wanted if pin_key(line) not in present]
            if absent:
                raise ValueError(f"cannot pin lines that are not in {name}: {absent}")
            self.memory.set_pins(name, wanted)
            self.journal.record(PinsChanged(file=name, lines=wanted))

    def pause(self) -> None:
        self.control.pause()

    def resume(self) -> None:
        """Go on: a paused run, one Tripane closed mid-run, or one that ended on an error once its
        cause is fixed (a key given, a server started, the model changed): the step that failed is
        tried again. A run that ended otherwise goes on with a message: what next is the person's."""
        self.control.resume()
        if self.running:
            return
        self.reopen_after_error()
        if not self.state.ended:
            self.start()

    def reopen_after_error(self) -> bool:
        """A run that ended on an error goes on at its next start (its `SessionResumed`): whether
        it had ended so (and is not running)."""
        if self.running or self.state.status != ENDED_ON_ERROR:
            return False
        self._check_work_folder()  # (not yet moved: it would be marked as going on, and not run)
        with self._writing():
            self.journal.record(SessionResumed())
        return True

    def stop(self) -> None:
        self.control.stop()

    def stop_unrun(self) -> bool:
        """End a session that no run drives: interrupted, or paused or waiting for an answer since
        Tripane started again. Stop ended only a run, and such a session waited to be resumed
        forever (or counted among those waiting for the person). False when it runs or has ended.
        Raises SessionBusy while another process runs it."""
        if self.running or self.state.ended:
            return False
        with self._writing():
            self._agent_loop().stopped_by_person()
        self._stop_left_running()
        return True

    def _stop_left_running(self) -> list[tuple[int, str]]:
        """What commands left running in a run that a killed Tripane never ended, stopped as that
        run's end would have (see running_calls): each process group stopped, with the command
        line that left it ("" when not known)."""
        left_by = {group: call_id for call_id, group in left_running_by_call(self.dir).items()}
        stopped = stop_left_running(self.dir)
        if not stopped:
            return []
        log.info("session %s: stopped process groups its commands had left running: %s", self.id, stopped)
        return [(group, self._command_line(left_by[group]) if group in left_by else "") for group in stopped]

    def kept_running(self) -> list[str]:
        """The command lines of what the agent's commands left running that runs on for the person,
        kept as a task ended done (see BackgroundKept): by this process, or one killed since."""
        calls = [left.call_id for left in kept_in_background(self.id)]
        if kept := self._kept_calls():  # (its running/ files say what still runs)
            calls += [call_id for call_id in left_running_by_call(self.dir) if call_id in kept and call_id not in calls]
        return [self._command_line(call_id) for call_id in calls]

    @property
    def serves_the_person(self) -> bool:
        """Whether this process keeps something running for the person (a dev server): for the
        list of sessions, which asks it of each at every change (the system is asked only about
        a session that has something kept)."""
        return bool(kept_in_background(self.id))

    def _kept_calls(self) -> list[str]:
        """The calls whose commands left what was kept running for the person, as tasks ended."""
        return [call_id for record in self.records if isinstance(record.event, BackgroundKept)
                for call_id in record.event.call_ids]

    async def stop_kept(self, by: str = "quit") -> list[str]:
        """Stop what runs on for the person (Tripane quits): kept by this process, or by one that
        was killed since (its running/ files say). Recorded, so the agent going on later knows;
        the command lines of what still ran."""
        stopped = [left.call_id for left in await stop_kept(self.id)]
        for call_id in self._kept_calls():  # (for those stopped above: their files only go)
            if stop_left_running(self.dir, call_id) and call_id not in stopped:
                stopped.append(call_id)
        if stopped:
            self._record_background_stopped(tuple(self._command_line(call_id) for call_id in stopped), by)
        return [self._command_line(call_id) for call_id in stopped]

    async def left_running_stopped(self, call_id: str) -> None:
        """The person stopped, from its card, what the call's command left running (a dev server
        kept for them, or one a killed Tripane left): told to the agent, should the session go on."""
        await stop_kept(self.id, call_id)  # (its process group was killed by the card: this lets go of it)
        self._record_background_stopped((self._command_line(call_id),), "person")

    def _command_line(self, call_id: str) -> str:
        """The command line of the shell call `call_id` ("" when there is none)."""
        return next((call.command_line() for record in reversed(self.records) if isinstance(record.event, AssistantMessage)
                     for call in record.event.tool_calls if call.id == call_id), "")

    def _record_background_stopped(self, commands: tuple[str, ...], by: str) -> None:
        try:
            with self._writing():
                self.journal.record(BackgroundStopped(commands, by=by))
                self._progress(progress.background_stopped(commands, by))
        except (SessionBusy, OSError, StoreError) as exc:  # (what ran on has stopped all the same)
            log.warning("session %s: what was stopped in the background was not recorded: %s", self.id, exc)

    def running_tools(self) -> dict[str, float]:
        """The calls running now in this process, by id, and when each started (time.monotonic)."""
        return self.control.running_since()

    def stop_tool(self, call_id: str) -> bool:
        """Stop one running command; its result says so and the run goes on. False when that call
        is not running (it ended meanwhile)."""
        return self.control.stop_tool(call_id)

    def request_compaction(self) -> None:
        """Compact the context at the next step (flush first, as always)."""
        self.control.compaction_requested = True

    def _progress(self, text: str) -> None:
        self._record_outside_edits()  # (as the loop's: an append does not take an edit for its own)
        self.journal.record(self.memory.append(PROGRESS, text, author="core"))
