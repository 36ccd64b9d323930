"""The sessions the window knows: one store in the data folder, and the sessions opened from it.

A session opened is kept while something needs it (a run, a question, a server kept for the person)
and while it is among the last few looked at; the others are let go, so that a window looking
through sessions all day does not hold every one it showed (a 2,000-event session takes ~4 MB).
One let go is found again while anything still holds it (a dialog of its own): there is never a
second object for one session."""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from core.agent.loop import LoopSettings
from core.imports import HEAVY_IMPORTS
from core.llm import ModelClient
from core.paths import DB_NAME
from core.run_lock import live_status, run_by_nobody
from core.session import Session, SessionConfig, delete_session
from core.store import SessionRow, Store
from core.tool_servers.pool import POOL

if TYPE_CHECKING:
    from core.memory.longterm import LongTermMemory

log = logging.getLogger(__name__)


def default_model_client(retries: int = 4) -> ModelClient:
    from core.llm import LiteLLMClient
    from core.secrets import get_api_key

    return LiteLLMClient(api_key=get_api_key, retries=retries)


def connection_test_client() -> ModelClient:
    """For "Test connection": one attempt, so a wrong address is reported at once, not after retries."""
    return default_model_client(retries=0)


# What its commands leave running (a dev server) a window keeps for the person when the task is
# done: they see it, and stop it there or by quitting.
IN_A_WINDOW = LoopSettings(keeps_left_running=True)
# Sessions kept open beyond those in use: going back to one of the last few looked at is instant,
# and the rest are read again from the log when shown (0.3 s for 10,000 events).
KEPT_IDLE = 6
RECHECK_INTERRUPTED_S = 15  # how often a session found interrupted is looked at again (sessions_signature)


class Workspace:
    def __init__(self, data_dir: Path, model_factory: Callable[[], ModelClient] = default_model_client):
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.store = Store(self.data_dir / DB_NAME)
        self._model_factory = model_factory
        self._open: dict[str, Session] = {}  # the last shown last
        self._let_go: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()
        self._nobody_at: dict[str, float] = {}  # interrupted sessions, when each was found so
        # As of which writes: the sessions' signature (Store.sessions_signature) and those logged as running.
        self._running: tuple[tuple, tuple, list[str]] = ((), (), [])
        self._loading: dict[str, asyncio.Future[Session]] = {}
        # Long-term memory is loaded after the first frame (numpy, the index, a refresh that may
        # embed what changed while Tripane was closed); sessions started before get it when it lands.
        self.long_memory: LongTermMemory | None = None
        self.memory_problem: str | None = None
        self._memory_loading: asyncio.Future[LongTermMemory] | None = None
        self._closing = False

    async def load_memory(self) -> LongTermMemory:
        if self._memory_loading is None:
            self._memory_loading = asyncio.ensure_future(asyncio.to_thread(self._open_memory))
        memory = await asyncio.shield(self._memory_loading)  # a cancelled caller leaves the load intact
        if self.long_memory is None:
            self.long_memory = memory
            for session in self.opened():
                session.attach_memory(memory)
        return memory

    def _open_memory(self) -> LongTermMemory:
        with HEAVY_IMPORTS:  # NumPy, the embedding model, keyring: not while litellm imports
            from core.memory.longterm import LongTermMemory
            from core.secrets import get_api_key

            memory = LongTermMemory.open(self.data_dir, api_key=get_api_key)
        try:
            memory.refresh()
            memory.summarise_old_logs()  # the lifecycle: past 30 days a log keeps its summary (originals archived)
        except Exception as exc:  # e.g. the embedding provider is unreachable: search says so later
            log.warning("long-term memory refresh failed: %s", exc)
            self.memory_problem = f"the index could not be brought up to date: {exc}"
        return memory

    def sessions(self) -> list[SessionRow]:
        """Every session, newest first, with its state as it is now (a run nobody runs any more is
        interrupted)."""
        return live_status(self.data_dir, self.store.sessions())

    def lately_used(self, count: int) -> list[tuple[str, str, str]]:
        """The newest sessions' work folders and models with their servers, newest first, as
        (workdir, model, api_base): from the terminal as from the window."""
        rows = self.store.sessions()[:count]
        servers = self.store.servers_used([row.id for row in rows])
        return [(row.workdir, *servers.get(row.id, (row.model, ""))) for row in rows]

    def sessions_signature(self) -> tuple:
        """Changes when a session is created, deleted, renamed or changes state, by any process, and
        when a run ends without a word (a `tripane run` killed): the list then shows it interrupted.
        A run is looked for at each call; an interrupted session (nobody ran it when last looked)
        only every RECHECK_INTERRUPTED_S: a long-time user's dozens of them, each a lock taken and
        let go every 1.5 s, kept an idle window at 1–2 % of a core."""
        now = time.monotonic()
        writes = self.store.writes_seen()
        if writes != self._running[0]:  # written since: the rows and the sessions logged as running read again
            self._running = writes, self.store.sessions_signature(), self.store.session_ids("running")
        _writes, rows, running = self._running
        interrupted, looked_at = [], {}
        for session_id in running:
            when = self._nobody_at.get(session_id)
            if when is None or now - when >= RECHECK_INTERRUPTED_S:
                when = now if run_by_nobody(self.data_dir, session_id) else None
            if when is not None:
                interrupted.append(session_id)
                looked_at[session_id] = when
        self._nobody_at = looked_at
        return rows, tuple(interrupted)

    def create(self, config: SessionConfig) -> Session:
        session = Session.create(self.store, self.data_dir, config, self._model_factory(),
                                 long_memory=self.long_memory, settings=IN_A_WINDOW)
        self._open[session.id] = session
        return session

    def already_open(self, session_id: str) -> Session | None:
        """The session if it is open (shown lately, or started here, or still held by something
        after it was let go): no need to wait for it."""
        session = self._open.get(session_id)
        if session is None and (session := self._let_go.pop(session_id, None)) is not None:
            self._open[session_id] = session  # (kept again)
        return session

    async def load(self, session_id: str) -> Session:
        """The session, opened once: its log is replayed on a worker thread (Session.load). Two
        callers asking at once share one load."""
        if (session := self.already_open(session_id)) is not None:
            return session
        loading = self._loading.get(session_id)
        if loading is None:
            loading = self._loading[session_id] = asyncio.ensure_future(self._load(session_id))
            loading.add_done_callback(lambda _done: self._loading.pop(session_id, None))
        return await asyncio.shield(loading)  # a caller that gives up leaves the load to the others

    async def _load(self, session_id: str) -> Session:
        session = await Session.load(self.store, self.data_dir, session_id, self._model_factory(),
                                     long_memory=self.long_memory, settings=IN_A_WINDOW)
        if self.long_memory is not None and session.long_memory is None:  # it landed during the load
            session.attach_memory(self.long_memory)
        return self._open.setdefault(session.id, session)

    async def keep_copies_under_budget(self, budget_mb: int) -> list[str]:
        """The oldest sessions' copies of their work folders removed while all take more than
        `budget_mb` (core/copies.py); those open here are in use, and kept."""
        from core.copies import keep_under_budget

        return await asyncio.to_thread(keep_under_budget, self.data_dir, self.sessions(), budget_mb,
                                       _OpenIds(self),  # (a live view: a session opened meanwhile is kept too)
                                       should_stop=lambda: self._closing)  # (the app's exit waits for the thread)

    def opened(self) -> list[Session]:
        """Every session open in this process: those kept, and those let go that something holds."""
        return list(self._open.values()) + [s for i, s in list(self._let_go.items()) if i not in self._open]

    def let_go(self, shown: Collection[str]) -> list[str]:
        """Let go of the sessions nothing needs (Session.in_use) but the KEPT_IDLE last looked at,
        and those in `shown` (on screen, or in a window of their own); their ids, so that the
        window drops what it keeps of them. Their memory is freed once nothing holds them."""
        for session_id in [i for i in shown if i in self._open]:  # (now the last looked at)
            self._open[session_id] = self._open.pop(session_id)
        idle = [s.id for s in self._open.values() if s.id not in shown and not s.in_use]
        gone = idle[:max(0, len(idle) - KEPT_IDLE)]
        for session_id in gone:
            self._let_go[session_id] = self._open.pop(session_id)
        return gone

    def title(self, session_id: str) -> str:
        """The session's title, as the list shows it (its task's first line, or as renamed)."""
        return self.store.session(session_id).title

    def rename(self, session_id: str, title: str) -> None:
        title = " ".join(title.split())
        if not title:
            raise ValueError("a session needs a name")
        self.store.update_session(session_id, title=title[:120])

    async def delete(self, session_id: str) -> None:
        """Remove the session's events and its folder (the three files, offloads)."""
        if session_id in self._loading:  # finish opening it, so that it is not opened after it is gone
            await asyncio.wait([self._loading[session_id]])
        session = self.already_open(session_id)
        if session is not None:
            del self._open[session_id]
            await session.close()
            await session.stop_kept()  # (what runs on for the person: delete_session would stop it unsaid)
        delete_session(self.store, self.data_dir, session_id)

    async def close(self) -> None:
        self._closing = True
        if self._loading:
            await asyncio.wait(list(self._loading.values()))
        for session in self.opened():
            await session.close()
            await session.stop_kept(by="quit")  # (a dev server kept for the person: it goes with Tripane)
        await POOL.close_all()  # the tool servers the sessions used
        if self._memory_loading is not None:
            try:
                (await self._memory_loading).close()
            except Exception as exc:  # a load that failed has nothing to close
                log.info("long-term memory was not loaded: %s", exc)
        self.store.close()


class _OpenIds(Collection[str]):
    """The ids of the sessions open in a workspace, as they are when asked (from a worker thread)."""

    def __init__(self, workspace: Workspace):
        self._workspace = workspace

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._workspace._open or session_id in self._workspace._let_go

    def __iter__(self) -> Iterator[str]:
        return iter([session.id for session in self._workspace.opened()])

    def __len__(self) -> int:
        return len(self._workspace.opened())
