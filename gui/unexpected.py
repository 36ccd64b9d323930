"""Errors nobody caught — in a slot, a task on the shared loop, a worker thread: each is written
to the log file with its traceback, and the person is told, at most once a minute, that nothing
was lost and where the details are. Without this, a window started from a menu drops them silently
(no terminal) and a failing button just seems to do nothing."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


def catch_unexpected(window, loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Route uncaught errors to the log and `window.report_unexpected`; returns the undo."""
    before = sys.excepthook, threading.excepthook, loop.get_exception_handler()

    def on_exception(kind, error, traceback) -> None:
        if issubclass(kind, KeyboardInterrupt):
            before[0](kind, error, traceback)
            return
        log.error("unexpected error", exc_info=(kind, error, traceback))
        window.report_unexpected(error)

    def in_thread(args) -> None:  # not the GUI thread: logged only, the window is not touched
        name = args.thread.name if args.thread is not None else "?"
        log.error("unexpected error in thread %s", name, exc_info=(args.exc_type, args.exc_value, args.exc_traceback))

    def in_task(_loop, context: dict) -> None:
        error = context.get("exception")
        log.error("%s", context.get("message") or "unexpected error in a task", exc_info=error)
        if error is not None:
            window.report_unexpected(error)

    sys.excepthook, threading.excepthook = on_exception, in_thread
    loop.set_exception_handler(in_task)

    def undo() -> None:
        sys.excepthook, threading.excepthook = before[0], before[1]
        loop.set_exception_handler(before[2])
    return undo
