"""A laptop's lid closed mid-reply, and a network that goes and comes back: the real litellm code
path against a scripted OpenAI-compatible server on 127.0.0.1.

The computer's sleep is stood for by the sleep-counting clock moving on an hour (as CLOCK_BOOTTIME
does over a suspend while time.monotonic stands still); the server stands for one across the
network (a server on this computer is not asked again: its connection outlives a sleep)."""

from __future__ import annotations

import asyncio
import time

import pytest

from core import llm, wake
from core.llm import (
    LiteLLMClient,
    ModelError,
    ModelRequest,
    Retry,
    sleep_breaks_connection,
)
from tests.support.openai_server import ScriptedServer, Turn

TEXT = "The totals are summed per invoice, then rounded half up to cents, and the tax comes after."
HOUR = 3600.0


def ask(url: str, timeout_s: float = 30) -> ModelRequest:
    return ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}], api_base=url, timeout_s=timeout_s)


@pytest.fixture
def laptop(monkeypatch):
    """A computer that sleeps an hour at `laptop.sleep()`, watched at a fast pace."""
    monkeypatch.setattr(wake, "TICK_S", 0.05)
    monkeypatch.setattr(wake, "WAKE_GRACE_S", 0.4)
    monkeypatch.setattr(llm, "sleep_breaks_connection", lambda api_base: True)  # (across the network)

    class Laptop:
        slept = 0.0

        def sleep(self) -> None:
            self.slept = HOUR

    computer = Laptop()
    real = wake.clock
    monkeypatch.setattr(wake, "clock", lambda: real() + computer.slept)
    return computer


def sleeps_at_first_piece(laptop, streamed: list[str]):
    def on_text(text: str) -> None:
        if not streamed:
            laptop.sleep()
        streamed.append(text)
    return on_text


async def test_a_reply_whose_connection_died_while_the_computer_slept_is_asked_again_after_it_wakes(laptop):
    # Before, the client waited for the provider's silence to reach the timeout, counted from the
    # waking (3 min hosted, 20 on one's own network), and the run stood still all that while.
    asked = []

    def script(request):
        asked.append(request)  # the first reply's connection is dead: nothing more ever comes
        return Turn(text=TEXT, break_after=2, stall_s=30) if len(asked) == 1 else Turn(text=TEXT)
    streamed, retries = [], []
    with ScriptedServer(script) as server:
        started = time.monotonic()
        reply = await LiteLLMClient(retries=2, backoff_s=5).complete(
            ask(server.url), sleeps_at_first_piece(laptop, streamed), retries.append)
        took = time.monotonic() - started
    assert reply.text == TEXT and len(asked) == 2
    assert took < 10  # (the provider's silence, 30 s, was not waited out; nor the backoff)
    [retry] = retries
    assert retry.error.kind == "slept" and retry.delay_s == 0
    assert retry.describe() == ("The computer slept for 1 h 00 min while the reply was on its way, and the reply did "
                                "not go on after it woke. Trying again now (attempt 2 of 3).")


async def test_a_reply_that_goes_on_after_the_waking_is_kept(laptop):
    # A short sleep on the same network: the connection lived, and the reply goes on within the
    # grace; asking again would throw away what came and pay for it twice.
    asked = []

    def script(request):
        asked.append(request)
        return Turn(text=TEXT, pace_s=0.1)  # (12 pieces: still streaming when the grace is over)
    streamed, retries = [], []
    with ScriptedServer(script) as server:
        reply = await LiteLLMClient(retries=2, backoff_s=0.01).complete(
            ask(server.url), sleeps_at_first_piece(laptop, streamed), retries.append)
    assert reply.text == TEXT and "".join(streamed) == TEXT
    assert len(asked) == 1 and retries == []


def test_a_server_on_this_computer_is_not_asked_again_after_a_sleep():
    # Ollama on the laptop sleeps and wakes with it, and goes on reading a long prompt: asked again,
    # minutes of its work would be thrown away.
    assert not sleep_breaks_connection("http://127.0.0.1:11434/v1")
    assert not sleep_breaks_connection("http://localhost:1234/v1")
    assert sleep_breaks_connection("http://192.168.1.20:8000/v1")
    assert sleep_breaks_connection(None)  # (the provider's own address)


async def test_the_watch_tells_a_sleep_from_a_reply_that_is_merely_slow(monkeypatch):
    monkeypatch.setattr(wake, "TICK_S", 0.02)
    monkeypatch.setattr(wake, "WAKE_GRACE_S", 0.05)
    heard = wake.Heard()
    # No sleep: the work ends as it ends, however long its silence.
    assert await wake.unless_slept_through(asyncio.sleep(0.3, "slow, not dead"), heard) == "slow, not dead"
    offset = [0.0]
    real = wake.clock
    monkeypatch.setattr(wake, "clock", lambda: real() + offset[0])
    gone_on = asyncio.Event()

    async def dead_connection():
        try:
            await asyncio.sleep(HOUR)
        finally:
            gone_on.set()  # (cancelled: its connection is closed)
    asyncio.get_running_loop().call_later(0.01, offset.__setitem__, 0, 25.0)  # it slept through a tick
    with pytest.raises(wake.SleptThrough) as slept:
        await asyncio.wait_for(wake.unless_slept_through(dead_connection(), heard), 10)
    assert 24 < slept.value.slept_s < 26 and gone_on.is_set()


async def test_a_provider_that_answered_before_is_waited_for_while_out_of_reach_and_the_run_goes_on():
    # A network gone for longer than four retries (a train's tunnel, Wi-Fi joined again after a
    # sleep): before, the run ended after 15 s with "Could not reach the server … is the API base right?".
    client = LiteLLMClient(retries=2, backoff_s=0.01)
    with ScriptedServer(lambda request: Turn(text="first")) as server:
        assert (await client.complete(ask(server.url))).text == "first"
        port, url = server._server.server_address[1], server.url
    retries: list[Retry] = []
    waiting = asyncio.ensure_future(client.complete(ask(url, timeout_s=5), None, retries.append))
    while len(retries) < 5:  # more than the client's retries: it is waited for
        assert not waiting.done(), waiting.exception()
        await asyncio.sleep(0.02)
    with ScriptedServer(lambda request: Turn(text="back"), port=port):
        assert (await asyncio.wait_for(waiting, 30)).text == "back"
    assert {retry.error.kind for retry in retries} == {"connection"}
    said = retries[-1].describe()
    assert said.startswith(f"Could not reach the server at {url}, which answered before: waiting for it, trying "
                           "again ")
    assert said.endswith("; given up after 15 min).") and "out of reach for " in said


async def test_the_wait_for_a_provider_out_of_reach_ends_with_its_error(monkeypatch):
    monkeypatch.setattr(llm, "NETWORK_PATIENCE_S", 0.3)
    client = LiteLLMClient(retries=2, backoff_s=0.01)
    with ScriptedServer(lambda request: Turn(text="first")) as server:
        await client.complete(ask(server.url))
        url = server.url
    retries: list[Retry] = []
    started = time.monotonic()
    with pytest.raises(ModelError) as failed:
        await client.complete(ask(url, timeout_s=5), None, retries.append)
    assert time.monotonic() - started >= 0.3 and len(retries) > 2
    assert failed.value.kind == "connection"
    assert str(failed.value).endswith("is it running, and is the API base right?")  # the advice, now it is given up


async def test_a_provider_never_reached_is_not_waited_for():
    # A wrong address or a server not started: the person, watching, hears it at once.
    with ScriptedServer(lambda request: Turn(text="never")) as server:
        url = server.url
    retries: list[Retry] = []
    with pytest.raises(ModelError, match="is it running, and is the API base right"):
        await LiteLLMClient(retries=2, backoff_s=0.01).complete(ask(url, timeout_s=5), None, retries.append)
    assert [retry.attempts for retry in retries] == [3, 3]
