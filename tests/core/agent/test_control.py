"""What the person's Stop does to awaits under way at the same time (research helpers run at once)."""

from __future__ import annotations

import asyncio

import pytest

from core.agent.control import Control, StopRequested, all_at_once


async def test_stop_cuts_short_every_await_under_way_not_only_the_latest():
    control = Control()
    started = asyncio.Event()

    async def slow(seconds: float) -> str:
        started.set()
        await asyncio.sleep(seconds)
        return "done"

    first = asyncio.ensure_future(control.interruptible(slow(60)))
    second = asyncio.ensure_future(control.interruptible(slow(60)))
    quick = await control.interruptible(slow(0))  # one that ended before: it no longer counts
    assert quick == "done"
    await started.wait()
    await asyncio.sleep(0)
    control.stop()
    for waiting in (first, second):
        with pytest.raises(StopRequested):
            await asyncio.wait_for(waiting, 2)


async def test_all_at_once_gives_results_in_order_and_the_first_error_as_it_is():
    async def after(seconds: float, value: str) -> str:
        await asyncio.sleep(seconds)
        return value

    assert await all_at_once([after(0.05, "a"), after(0.01, "b")]) == ["a", "b"]

    ended: list[str] = []

    async def fails() -> str:
        await asyncio.sleep(0.01)
        raise StopRequested

    async def long() -> str:
        try:
            await asyncio.sleep(60)
        finally:
            ended.append("long")
        return "never"

    with pytest.raises(StopRequested):
        await asyncio.wait_for(all_at_once([long(), fails()]), 2)
    assert ended == ["long"]  # the other was ended, not left running
