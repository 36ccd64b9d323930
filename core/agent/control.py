"""What the person can do to a running loop. The loop looks at it between steps."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")


class StopRequested(Exception):
    """The person pressed Stop: the loop ends the session as aborted."""


class Control:
    def __init__(self) -> None:
        self.inbox: list[tuple[str, tuple[str, ...]]] = []  # the person's messages: text, pictures
        self.stop_requested = False
        self.pause_requested = False
        self.compaction_requested = False
        self._resumed = asyncio.Event()
        self._answers: dict[str, asyncio.Future[None]] = {}
        # Answers the person gave in this process that no run has acted on yet: a call approved
        # here, before the loop (re)started, has not begun, so it runs rather than being taken
        # for one a crash interrupted.
        self.unacted_answers: set[str] = set()
        # What Stop cuts short: every interruptible await under way (research helpers run at once).
        self._current: set[asyncio.Future] = set()
        # By call id, the calls running now: the event each watches for the person's Stop of that
        # call alone, and when it started (time.monotonic).
        self._tool_stops: dict[str, tuple[asyncio.Event, float]] = {}

    # --- one running call --------------------------------------------------------------------------

    def running_tool(self, call_id: str) -> asyncio.Event:
        """A call starts: the event it watches for the person's Stop of that call alone."""
        return self._tool_stops.setdefault(call_id, (asyncio.Event(), time.monotonic()))[0]

    def tool_ended(self, call_id: str) -> None:
        self._tool_stops.pop(call_id, None)

    def running_since(self) -> dict[str, float]:
        """The calls running now, and when each started (a view shown again counts from there)."""
        return {call_id: started for call_id, (_, started) in self._tool_stops.items()}

    def stop_tool(self, call_id: str) -> bool:
        """Ask one running call to end early (a command that hangs); the run goes on. False when
        the call is not running."""
        running = self._tool_stops.get(call_id)
        if running is None:
            return False
        running[0].set()
        return True

    # --- the person's side -----------------------------------------------------------------------

    def stop(self) -> None:
        self.stop_requested = True
        self._resumed.set()
        for awaited in self._current:
            awaited.cancel()

    def pause(self) -> None:
        self.pause_requested = True
        self._resumed.clear()

    def resume(self) -> None:
        self.pause_requested = False
        self._resumed.set()

    def answered(self, qid: str) -> None:
        self.unacted_answers.add(qid)
        future = self._answers.pop(qid, None)
        if future is not None and not future.done():
            future.set_result(None)

    # --- the loop's side -------------------------------------------------------------------------

    async def wait_resumed(self) -> None:
        while self.pause_requested:
            await self.interruptible(self._resumed.wait())

    async def wait_answer(self, qid: str) -> None:
        await self.interruptible(self.answer_for(qid))

    def answer_for(self, qid: str) -> asyncio.Future[None]:
        """Done when the person answers `qid` (Stop does not end it: see wait_answer)."""
        return self._answers.setdefault(qid, asyncio.get_running_loop().create_future())

    async def interruptible(self, awaitable: Awaitable[T]) -> T:
        """Await something that Stop may cut short (a model call, a tool, a question)."""
        if self.stop_requested:
            if asyncio.iscoroutine(awaitable):
                awaitable.close()  # never started: close it so it is not reported as un-awaited
            raise StopRequested
        task = asyncio.ensure_future(awaitable)
        self._current.add(task)
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if self.stop_requested and not (current and current.cancelling()):
                raise StopRequested from None
            raise
        finally:
            self._current.discard(task)


async def all_at_once(awaitables: Iterable[Awaitable[T]]) -> list[T]:
    """Their results in order, awaited at the same time. The first error (a Stop, say) ends the
    others and is raised as it is, as it would be had they run one after another."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(_awaited(awaitable)) for awaitable in awaitables]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


async def _awaited(awaitable: Awaitable[T]) -> T:
    return await awaitable
