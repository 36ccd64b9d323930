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

from gui.qt import QObject, qt_alive

log = logging.getLogger(__name__)
T = TypeVar("T")


def loop_running() -> bool:
    """Whether asyncio's loop runs (qasync's, while the window does): a Qt timer may still fire
    after it stopped (as Tripane quits, or a test ends), when no work can be started any more."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class TaskKeeper:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task] = set()

    def run(self, work: Awaitable[T], on_success: Callable[[T], Any] | None = None,
            on_failure: Callable[[BaseException], Any] | None = None, name: str = "",
            owner: QObject | None = None) -> asyncio.Task:
        """`owner`: the widget the callbacks touch. Once Qt deleted it (a dialog closed while the
        work ran, and deleted on close), they are not called: they would meet a dead C++ object."""
        task = asyncio.ensure_future(work)
        if name:
            task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(lambda done: self._finished(done, on_success, on_failure, owner))
        return task

    def in_thread(self, function: Callable[..., T], *args: Any, on_success: Callable[[T], Any] | None = None,
                  on_failure: Callable[[BaseException], Any] | None = None, name: str = "",
                  owner: QObject | None = None) -> asyncio.Task:
        """Run blocking work (file reads, Markdown rendering) in the default executor."""
        return self.run(asyncio.to_thread(function, *args), on_success, on_failure, name, owner)

    def _finished(self, task: asyncio.Task, on_success, on_failure, owner: QObject | None) -> None:
        self._tasks.discard(task)
        if task.cancelled() or (owner is not None and not qt_alive(owner)):
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
