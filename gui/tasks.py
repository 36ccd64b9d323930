"""Background work for the window, in one place (as Anki does it).

qasync keeps no reference to the tasks it runs, so a task started and forgotten can be collected
mid-flight; `TaskKeeper` holds every task until it ends and cancels the rest when the app quits.
Callbacks run on the Qt thread; a coroutine never touches a widget itself.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class TaskKeeper:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()

    def run(self, work: Awaitable[T], on_success: Callable[[T], Any] | None = None,
            on_failure: Callable[[BaseException], Any] | None = None, name: str = "") -> asyncio.Task:
        task = asyncio.ensure_future(work)
        if name:
            task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._finished(done, on_success, on_failure))
        return task

    def in_thread(self, function: Callable[..., T], *args: Any, on_success: Callable[[T], Any] | None = None,
                  on_failure: Callable[[BaseException], Any] | None = None, name: str = "") -> asyncio.Task:
        """Run blocking work (file reads, Markdown rendering) in the default executor."""
        return self.run(asyncio.to_thread(function, *args), on_success, on_failure, name)

    def _finished(self, task: asyncio.Task, on_success, on_failure) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            if on_failure is not None:
                on_failure(error)
            else:
                log.error("background task %s failed", task.get_name(), exc_info=error)
        elif on_success is not None:
            on_success(task.result())

    @property
    def pending(self) -> int:
        return len(self._tasks)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
