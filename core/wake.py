"""Whether the computer slept while a provider's reply was on its way.

A laptop whose lid closes mid-reply wakes with the reply's connection dead: the provider gave up on
it, or the laptop woke on another network. Nothing tells the client; it waits for the provider's
silence to reach the timeout — and on Linux and macOS that wait is measured on a clock that stood
still while the computer slept, so it starts anew at waking: 3 minutes for a hosted provider, 20
for a server on the person's own network. A watch on a clock that goes on during sleep sees the
time that went missing, and the reply, silent after the waking, is asked for again.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")

TICK_S = 5.0  # how often the watch looks at the clock while a reply is awaited (5 s: a wake-up a 5 s)
SLEPT_AFTER_S = 20.0  # this much more time gone than the tick: the computer slept (or the process stood frozen)
# A connection that survived the sleep (the same network, a short one) goes on within seconds of
# waking; one still silent after this is dead, and waiting longer is waiting for the timeout.
WAKE_GRACE_S = 15.0


def _sleep_counting_clock() -> float:
    """Seconds on a clock that goes on while the computer sleeps: Linux's CLOCK_BOOTTIME, macOS's
    CLOCK_MONOTONIC (time.monotonic stops on both); elsewhere the wall clock (on Windows,
    time.monotonic may itself count the sleep, and the wall clock does)."""
    if hasattr(time, "CLOCK_BOOTTIME"):
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    if sys.platform == "darwin":
        return time.clock_gettime(time.CLOCK_MONOTONIC)
    return time.time()


clock = _sleep_counting_clock  # (a test moves it on to stand for a sleep)


class Heard:
    """When the provider was last heard from (time.monotonic()): each piece of the reply says so."""

    def __init__(self) -> None:
        self.last = time.monotonic()

    def now(self) -> None:
        self.last = time.monotonic()


async def woken() -> float:
    """Returns, with the seconds that went missing, once the computer has slept (more than
    SLEPT_AFTER_S went by on the sleep-counting clock beyond a tick)."""
    while True:
        before = clock()
        await asyncio.sleep(TICK_S)
        missing = clock() - before - TICK_S
        if missing > SLEPT_AFTER_S:
            return missing


async def silent_since_waking(heard: Heard) -> float:
    """Returns, with the seconds slept, once the computer has slept and the provider has not been
    heard from for WAKE_GRACE_S after it woke."""
    while True:
        slept = await woken()
        woke = time.monotonic()
        await asyncio.sleep(WAKE_GRACE_S)
        if heard.last < woke:
            return slept


class SleptThrough(Exception):
    """The computer slept while the reply was awaited, and the reply did not go on after it woke."""

    def __init__(self, slept_s: float):
        super().__init__(f"slept {slept_s:.0f} s")
        self.slept_s = slept_s


async def unless_slept_through(work: Awaitable[T], heard: Heard) -> T:
    """`work`'s result; SleptThrough (work cancelled) if the computer slept while it ran and the
    provider stayed silent after the waking."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(silent_since_waking(heard))
    try:
        await asyncio.wait({task, watch}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:  # stopped from outside: the work goes too
        task.cancel()
        raise
    finally:
        watch.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.wait({task})  # (its connection closed before the reply is asked for again)
    if not task.cancelled():
        task.exception()  # what a dead request said as it went is not news (and not left unread)
    raise SleptThrough(watch.result())
