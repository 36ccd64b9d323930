"""The model boundary: the only module that imports litellm.

litellm takes seconds to import and would fetch its cost map from the network at import, so it is
imported at first use, with the bundled cost map. Provider failures that may pass (429, 5xx,
timeouts, dropped connections) are retried with exponential backoff; the rest become a ModelError
whose message a person can act on.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import gc
import ipaddress
import json
import logging
import os
import random
import re
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Protocol
from urllib.parse import urlparse

from core import pictures
from core.events import ToolCall, Usage
from core.imports import HEAVY_IMPORTS
from core.logs import TOLD
from core.network import SET_THE_VARIABLES, SYSTEM_SETTINGS, proxy_for
from core.reasoning import (
    ThinkSplitter,
    add_reasoning_detail,
    answers_calls_without_thinking,
    block_of,
    calls_written_out,
    passes_reasoning_back,
    signed_thinking_for,
    signs_thinking,
    split_reasoning,
    without_reasoning,
)
from core.secrets import HOW_TO_SIGN_IN, cloud_of, key_variable, provider_of
from core.text import capitalized, how_long, one_line
from core.wake import Heard, SleptThrough, unless_slept_through

log = logging.getLogger(__name__)

# Tests set this so that nothing can reach a real provider by accident.
LOCAL_ONLY_ENV = "TRIPANE_MODELS_LOCAL_ONLY"


@dataclass(frozen=True)
class ModelRequest:
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_choice: str | None = None  # auto | none | required
    api_base: str | None = None
    max_tokens: int | None = None
    timeout_s: float | None = None  # None: the client's; a quick probe sets its own
    # Indexes of the messages that end a stable part of the request (the system prompt; the last
    # message before the tail). Providers that cache a prefix only up to a marked block (Claude)
    # are told to cache there; the others find the common prefix by themselves.
    cache_breakpoints: tuple[int, ...] = ()
    # The context size the session budgets for. Ollama sizes its context per request (num_ctx) and
    # silently drops the start of a longer prompt (its default is a few thousand tokens), so it
    # is told; other providers have a fixed window and say when a prompt does not fit.
    window: int | None = None
    # low | medium | high: how hard a reasoning model thinks (core/reasoning.py); "": its own way.
    # Sent only to a model litellm knows takes it.
    reasoning_effort: str = ""
    # The session's folder, where the pictures its messages name are kept (core/pictures.py), and
    # whether the model takes them (core.providers.sees_pictures): else it is told they are there.
    pictures_dir: Path | None = None
    sees_pictures: bool = False


@dataclass(frozen=True)
class ModelReply:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    finish_reason: str = ""
    reasoning: str = ""  # a reasoning model's thinking, apart from its answer (core/reasoning.py)
    # Claude's thinking as it sent it, signed: sent back with the reply (core/reasoning.py).
    thinking_blocks: tuple[dict[str, Any], ...] = ()
    # The reasoning effort the request was sent with ("": none, the model takes none or refused it).
    effort_sent: str = ""
    # OpenRouter's record of the model's reasoning (text, summaries, encrypted blocks): sent back
    # with the reply, as OpenRouter asks, for the same model (core/reasoning.py).
    reasoning_details: tuple[dict[str, Any], ...] = ()


class ModelError(Exception):
    """The provider could not give a reply. `kind` names the failure for people and for 3-Strike."""

    def __init__(self, kind: str, message: str, *, retryable: bool = False, retry_after_s: float | None = None,
                 window: int | None = None, unreachable: str = ""):
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable
        # What could not be reached, when no connection could be made (nothing was sent): "the
        # server at http://…", "the provider"
        self.unreachable = unreachable
        self.retry_after_s = retry_after_s  # how long the provider asked us to wait (Retry-After)
        self.window = window  # for context_window: the window the provider's message states, if it does


@dataclass(frozen=True)
class Retry:
    """A failed call about to be tried again. Shown to the person, so that a slow or flaky provider
    reads as that and not as a frozen app, and so that a reply cut off midway is dropped from view."""

    error: ModelError
    attempt: int  # the attempt about to be made: 2 or more
    attempts: int  # how many attempts in all
    delay_s: float
    instead: str = ""  # how it is tried again, when not as it was (without the pictures it showed)
    # How long a provider that answered before has been out of reach (attempts then is 0: tried
    # until NETWORK_PATIENCE_S is up).
    waited_s: float | None = None

    def describe(self) -> str:
        said = str(self.error)
        said = said if said.endswith(("?", "!", ".")) else f"{said}."
        if self.instead:
            return f"{said} {self.instead}"
        when = f"in {self.delay_s:.0f} s" if self.delay_s >= AT_ONCE_S else "now"
        if self.waited_s is not None:  # (the error's advice, "is the address right?", is not for now)
            waited, patience = how_long(self.waited_s), how_long(NETWORK_PATIENCE_S)
            return (f"Could not reach {self.error.unreachable}, which answered before: waiting for it, trying again "
                    f"{when} (out of reach for {waited}; given up after {patience}).")
        return f"{said} Trying again {when} (attempt {self.attempt} of {self.attempts})."


TextSink = Callable[[str], None]
RetrySink = Callable[[Retry], None]
CallSink = Callable[[str, str], None]  # a tool call's name, and a piece of its arguments as they stream


class ModelClient(Protocol):
    async def complete(self, request: ModelRequest, on_text: TextSink | None = None,
                       on_retry: RetrySink | None = None, on_reasoning: TextSink | None = None,
                       on_call: CallSink | None = None) -> ModelReply:
        """The reply; while it streams, its answer's text goes to `on_text`, a reasoning model's
        thinking to `on_reasoning`, and its tool calls' arguments to `on_call`."""


_litellm: Any = None


def load_litellm() -> Any:
    """Import litellm once, without letting it reach the network for its catalogs."""
    global _litellm
    if _litellm is not None:  # every token count comes here: no lock once it is loaded
        return _litellm
    with HEAVY_IMPORTS:  # also: two threads asking at once import it once
        if _litellm is None:
            # litellm fetches catalogs of its own from GitHub (its cost map; the beta headers each
            # provider takes, on a request with one): the copies bundled with it are used. Offline
            # mode says so for all; the other two, for litellm versions before it.
            for variable in ("LITELLM_OFFLINE_MODE", "LITELLM_LOCAL_MODEL_COST_MAP",
                             "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS"):
                os.environ.setdefault(variable, "True")
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            # The import creates a few hundred thousand objects that live as long as the process. Left
            # to the cyclic GC, they make each full collection (several run during the import itself)
            # take 50-150 ms, holding the GIL: a visible freeze of the window, which shares this
            # process. So: no collections during the import, then the survivors are frozen out of the
            # collector's sight. The little import-time garbage frozen with them is kept.
            was_enabled = gc.isenabled()
            gc.disable()
            try:
                import litellm
            finally:
                gc.freeze()
                if was_enabled:
                    gc.enable()

            litellm.telemetry = False
            litellm.disable_hf_tokenizer_download = True  # count with bundled tokenizers only
            litellm.suppress_debug_info = True
            _quiet_on_the_console()
            _litellm = litellm
    return _litellm


def _quiet_on_the_console() -> None:
    """litellm prints its records of a failed call, traceback and all, with a handler of its own:
    a Vertex AI call without a sign-in put forty lines above Tripane's one that says what to do.
    Without it they reach Tripane's handlers, which keep them in the log file (core/logs.py). A
    person who set LITELLM_LOG to see more (DEBUG: each request as sent) sees it as litellm prints it."""
    if os.environ.get("LITELLM_LOG", "ERROR").upper() != "ERROR":
        return
    for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy"):
        logger = logging.getLogger(name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)


def is_loopback(api_base: str | None) -> bool:
    if not api_base:
        return False
    host = urlparse(api_base).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def sleep_breaks_connection(api_base: str | None) -> bool:
    """Whether the computer's sleep may leave a reply's connection dead: not a server on this
    computer (Ollama on the laptop sleeps and wakes with it, and goes on with a long prompt's
    reading, which asking again would throw away)."""
    return not is_loopback(api_base)


def is_own_network(api_base: str | None) -> bool:
    """A server on this computer or on the person's own network (a GPU box at home or in the
    office): a private address, or a name only a local network resolves (gpu-box, gpu-box.local)."""
    if not api_base:
        return False
    host = urlparse(api_base).hostname or ""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:  # a name
        return bool(host) and ("." not in host or host.endswith((".local", ".lan", ".home.arpa")))
    return address.is_loopback or address.is_private or address.is_link_local


HOSTED_SILENCE_S = 180.0
# A model on the person's own hardware reads the whole context before its first word: without a
# fast GPU, 16k tokens take minutes. Given up on, the request is sent again and read again from the
# start, for ever; the window counts the wait, and Stop ends it.
LOCAL_SILENCE_S = 1200.0


def silence_allowed(model: str, api_base: str | None) -> float:
    """How long a provider may stay silent before it is given up on (a timeout): longer for a
    server on the person's own hardware, whose silence is its work, not a lost connection."""
    own = is_own_network(api_base) if api_base else is_ollama(model)  # (Ollama's default address is local)
    return LOCAL_SILENCE_S if own else HOSTED_SILENCE_S


class LiteLLMClient:
    def __init__(
        self,
        *,
        retries: int = 4,
        backoff_s: float = 1.0,
        timeout_s: float | None = None,
        api_key: Callable[[str, str | None], str | None] | None = None,
    ):
        self.retries = retries
        self.backoff_s = backoff_s
        # How long the provider may stay silent: before its first byte, and between two pieces of a
        # streamed reply (a long reply from a slow model may take longer than this in all). None:
        # by where the model runs (silence_allowed).
        self.timeout_s = timeout_s
        self._api_key = api_key
        # (model, api_base) of models whose server refused to be asked to think: asked no more.
        self._cannot_think: set[tuple[str, str | None]] = set()
        # (model, api_base) of servers that answer a streamed request with one whole reply: asked
        # for one from then on (see _whole_reply).
        self._answers_whole: set[tuple[str, str | None]] = set()
        # (model, api_base) that have answered this client: out of reach, they are waited for.
        self._answered: set[tuple[str, str | None]] = set()

    async def complete(self, request: ModelRequest, on_text: TextSink | None = None,
                       on_retry: RetrySink | None = None, on_reasoning: TextSink | None = None,
                       on_call: CallSink | None = None) -> ModelReply:
        # (core.model_names reads litellm's map through this module: imported here)
        from core.model_names import api_base_problem

        if problem := api_base_problem(request.api_base):  # (a settings file's, or a session's from before)
            raise ModelError("bad_api_base", problem)
        if os.environ.get(LOCAL_ONLY_ENV) and not is_loopback(request.api_base):
            raise ModelError("forbidden", f"{LOCAL_ONLY_ENV} is set: only models on 127.0.0.1 may be called")
        litellm = await _import_off_loop()
        attempt = 0
        # The pictures a failed request showed, left out to see whether they were why, and its error.
        trying_without: set[str] = set()
        refusal: ModelError | None = None
        woke = False  # the computer slept through a reply: the network may take a while to come back
        out_of_reach_since: float | None = None
        while True:
            if (request.model, request.api_base) in self._cannot_think:
                request = replace(request, reasoning_effort="")
            try:
                reply = await self._complete_once(litellm, request, on_text, on_reasoning, on_call)
            except ModelError as exc:
                if trying_without:  # they were not why: it fails as it does without them
                    pictures.unrefuse(request.model, request.api_base, trying_without)
                    trying_without = set()
                elif refusal is None and (trying_without := self._without_pictures(request, exc)):
                    refusal = exc
                    if on_retry:
                        on_retry(Retry(exc, attempt + 2, self.retries + 1, 0.0, instead=(
                            f"Asking again without {_pictures_named(trying_without)}: if that is answered, the "
                            "agent is told it is there, not shown it.")))
                    continue
                # A model its server cannot make think (an Ollama model without the capability): the
                # effort is the person's wish for any model that can, so this one goes on without.
                if exc.kind == "no_reasoning" and request.reasoning_effort:
                    log.warning("%s cannot be asked to think (%s): going on without a reasoning effort",
                                request.model, exc, extra=TOLD)
                    self._cannot_think.add((request.model, request.api_base))
                    continue
                # An overloaded provider (Anthropic's 529) stays so for a minute or two at busy
                # times: waited out twice as many times, it does not end a run left unattended.
                retries = self.retries * (OVERLOADED_PATIENCE if exc.kind == "overloaded" else 1)
                woke = woke or exc.kind == "slept"
                # A provider that answered before and cannot be reached now is not a wrong address:
                # the network went (a train's tunnel, a router's restart, a laptop waking and joining
                # its Wi-Fi). A run left alone waits for it, rather than end after 15 s of retries.
                waited = None
                if exc.unreachable and self.retries and (woke or (request.model, request.api_base) in self._answered):
                    out_of_reach_since = out_of_reach_since or time.monotonic()
                    waited = time.monotonic() - out_of_reach_since
                    if waited >= NETWORK_PATIENCE_S:
                        raise
                elif not exc.retryable or attempt >= retries:
                    raise
                else:
                    out_of_reach_since = None
                delay = min(self.backoff_s * (2 ** min(attempt, 10)), MAX_BACKOFF_S) * (0.75 + random.random() / 2)
                # A rate-limited provider says when to come back; sooner is a wasted attempt.
                delay = max(delay, min(exc.retry_after_s or 0.0, MAX_RETRY_AFTER_S))
                if exc.kind == "slept":  # (its connection is dead, not the provider busy)
                    delay = 0.0
                elif waited is not None:  # (a look costs nothing: back soon after the network is)
                    delay = min(delay, OUT_OF_REACH_LOOK_S)
                log.warning("model call failed (%s); retry %d in %.1f s", exc, attempt + 1, delay, extra=TOLD)
                if on_retry:
                    on_retry(Retry(exc, attempt + 2, 0 if waited is not None else retries + 1, delay, waited_s=waited))
                await asyncio.sleep(delay)
                attempt += 1
                continue
            self._answered.add((request.model, request.api_base))
            if trying_without:
                log.warning("%s did not take %s (%s): the agent is told it is there, not shown it",
                            request.model, _pictures_named(trying_without), refusal)
            pictures.taken(request.model, request.api_base, self._pictures_shown(request))
            return reply

    @staticmethod
    def _pictures_shown(request: ModelRequest) -> set[str]:
        """The pictures the request shows the model (their paths), as _complete_once sends it."""
        named = pictures.shown_in(request.messages, request.pictures_dir) if request.sees_pictures else set()
        if not named or refuses_pictures(request.model, request.api_base):
            return set()
        return named - pictures.refused(request.model, request.api_base)

    def _without_pictures(self, request: ModelRequest, exc: ModelError) -> set[str]:
        """The pictures the failed request showed that its model has not taken before, now left out
        of its requests, when they may be why it failed: the provider found the request bad, found
        nothing to answer it (OpenRouter: 404, "No endpoints found that support image input"), or
        its server failed at it (llama.cpp, started without a vision projector, answers 500). The
        request is asked again without them, and they are let back in if that fails too. Whatever
        the provider's words ("image_url is only supported by certain models", "is not a multimodal
        model", "unknown variant `image_url`", "Could not process image"), the answer without them
        says whether they were why."""
        if exc.kind not in ("bad_request", "not_found", "server", "unknown"):
            return set()
        untried = pictures.untried(request.model, request.api_base, self._pictures_shown(request))
        pictures.refuse(request.model, request.api_base, untried)
        return untried

    async def _complete_once(self, litellm: Any, request: ModelRequest, on_text: TextSink | None,
                             on_reasoning: TextSink | None = None, on_call: CallSink | None = None) -> ModelReply:
        timeout_s = request.timeout_s or self.timeout_s or silence_allowed(request.model, request.api_base)
        messages = request.messages if passes_reasoning_back(request.model, request.api_base) else without_reasoning(request.messages)
        messages = signed_thinking_for(messages, request.model)
        messages = pictures.sendable(
            messages, request.sees_pictures and not refuses_pictures(request.model, request.api_base),
            request.pictures_dir, pictures.refused(request.model, request.api_base))
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "timeout": timeout_s,
            "num_retries": 0,  # retries are ours, so they are visible and bounded
        }
        if request.tools:
            kwargs["tools"] = request.tools
            if request.tool_choice:
                kwargs["tool_choice"] = request.tool_choice
        if request.api_base:
            kwargs["api_base"] = request.api_base
        if request.cache_breakpoints and needs_cache_markers(request.model):
            # litellm writes the provider's marker (cache_control on the message's last block).
            kwargs["cache_control_injection_points"] = [
                {"location": "message", "index": index} for index in request.cache_breakpoints[:MAX_CACHE_MARKERS]]
        if request.window and is_ollama(request.model):
            kwargs["num_ctx"] = request.window
        if request.max_tokens:
            kwargs["max_tokens"] = request.max_tokens
        _ask_for_thinking(kwargs, request.reasoning_effort)
        # A keyring lookup (D-Bus, Keychain; a locked keyring asks for its password): off the event loop.
        key = await asyncio.to_thread(self._api_key, request.model, request.api_base) if self._api_key else None
        if key:
            kwargs["api_key"] = key
        elif request.api_base and not cloud_of(request.model):
            # Local servers (Ollama, llama.cpp) take any key; a cloud's endpoint of one's own (a
            # Bedrock VPC endpoint) is signed in to as the cloud is, which a key would replace.
            kwargs["api_key"] = "not-needed"
        heard = Heard()
        asking = self._ask(litellm, request, kwargs, on_text, on_reasoning, on_call, heard)
        try:
            if not sleep_breaks_connection(request.api_base):
                return await asking
            return await unless_slept_through(asking, heard)
        except SleptThrough as slept:
            raise ModelError("slept", f"The computer slept for {how_long(slept.slept_s)} while the reply was on its "
                             "way, and the reply did not go on after it woke.", retryable=True) from None
        except ModelError:
            raise
        except Exception as exc:  # litellm maps every provider's errors onto its own classes
            raise classify(litellm, exc, timeout_s, request.api_base, request.model) from exc

    async def _ask(self, litellm: Any, request: ModelRequest, kwargs: dict[str, Any], on_text: TextSink | None,
                   on_reasoning: TextSink | None, on_call: CallSink | None, heard: Heard) -> ModelReply:
        if (request.model, request.api_base) in self._answers_whole:
            return await _whole_reply(litellm, kwargs, on_text, on_reasoning, on_call)
        stream = await litellm.acompletion(**kwargs)
        if _served_as(stream).startswith("text/html"):  # (it streams no chunk: an empty reply, it seemed)
            raise not_an_api(request.api_base)
        reply = await _collect(litellm, request.model, stream, on_text, kwargs["timeout"], on_reasoning, on_call, heard)
        if _said_nothing(reply) and _served_as(stream).startswith("application/json"):
            # One whole reply, not a stream (a gateway that ignores "stream": true): its words
            # were lost, and the run read an empty reply. Asked again for it whole, and from
            # then on (a request more, once).
            log.info("%s at %s answers streamed requests whole: asked for whole replies from now on",
                     request.model, request.api_base)
            self._answers_whole.add((request.model, request.api_base))
            reply = await _whole_reply(litellm, kwargs, on_text, on_reasoning, on_call)
        return replace(reply, effort_sent=kwargs.get("reasoning_effort", ""))


def _pictures_named(paths: set[str]) -> str:
    names = sorted(Path(path).name for path in paths)
    return f"the picture{'s' if len(names) > 1 else ''} {' and '.join(names)}"


def _said_nothing(reply: ModelReply) -> bool:
    return not (reply.text or reply.tool_calls or reply.reasoning)


async def _whole_reply(litellm: Any, kwargs: dict[str, Any], on_text: TextSink | None, on_reasoning: TextSink | None,
                       on_call: CallSink | None) -> ModelReply:
    """The reply asked for whole (not streamed), read as one chunk holding all of it."""
    whole = {key: value for key, value in kwargs.items() if key != "stream_options"}
    response = await litellm.acompletion(**{**whole, "stream": False})
    pieces = _Pieces(on_text, on_reasoning, on_call)
    pieces.take(_as_one_chunk(response))
    return replace(pieces.reply(litellm, kwargs["model"]), effort_sent=kwargs.get("reasoning_effort", ""))


def _as_one_chunk(response: Any) -> SimpleNamespace:
    """A whole reply (litellm's ModelResponse) in the shape of a stream's chunk, its message the
    delta, each call with its place among the calls."""
    choice = response.choices[0] if getattr(response, "choices", None) else None
    message = getattr(choice, "message", None)
    if message is None:
        return SimpleNamespace(usage=getattr(response, "usage", None), choices=[])
    calls = [SimpleNamespace(index=index, id=call.id, function=call.function)
             for index, call in enumerate(getattr(message, "tool_calls", None) or ())]
    delta = SimpleNamespace(content=message.content, tool_calls=calls,
                            reasoning_content=getattr(message, "reasoning_content", None),
                            thinking_blocks=getattr(message, "thinking_blocks", None))
    return SimpleNamespace(usage=getattr(response, "usage", None),
                           choices=[SimpleNamespace(finish_reason=choice.finish_reason, delta=delta)])


def _served_as(stream: Any) -> str:
    """The content type the server answered a streamed request with, as litellm keeps it ("" when
    not known)."""
    headers = (getattr(stream, "_hidden_params", None) or {}).get("additional_headers") or {}
    return str(headers.get("llm_provider-content-type", "")).lower() if isinstance(headers, dict) else ""


# Claude 4 thinks between calls only with this beta (Sonnet 4.6 and later, adaptive, do unasked).
INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"


def _ask_for_thinking(kwargs: dict[str, Any], effort: str) -> None:
    """Add the reasoning effort to a request, where the model takes it; a Claude model that will
    think, asked or on its own, is asked within Claude's rules (see _as_claude_thinks)."""
    model = kwargs["model"]
    asked = bool(effort) and takes_reasoning_effort(model)
    if signs_thinking(model) and (asked or thinks_unasked(model)):
        _as_claude_thinks(kwargs, asked)
    if asked:
        kwargs["reasoning_effort"] = effort


def _as_claude_thinks(kwargs: dict[str, Any], asked: bool) -> None:
    """A request to a Claude model that thinks. Claude does not think in a request that answers
    calls of a reply without thinking (those calls are then written out as text, for this
    request), nor while a tool is forced on it (the flush turn then only asks for the call). A
    model that thinks unasked (Sonnet 5 and later) is asked to show its thinking, which it omits
    by default. Claude 4 asked for a budget thinks again after a call's result only when asked to
    interleave (a beta); later models interleave on their own. A budget leaves the answer the
    model's whole output."""
    model = kwargs["model"]
    if answers_calls_without_thinking(kwargs["messages"]):
        kwargs["messages"] = calls_written_out(kwargs["messages"])
    if kwargs.get("tool_choice") == "required":
        kwargs["tool_choice"] = "auto"
    if not asked:
        kwargs["thinking"] = {"type": "adaptive", "display": "summarized"}
        return
    mapped = _mapped(model)
    if mapped.get("supports_adaptive_thinking"):  # asked for an effort, not a budget: nothing more
        return
    if interleaves_when_asked(model):
        kwargs["extra_headers"] = {"anthropic-beta": INTERLEAVED_THINKING}
    if mapped.get("max_output_tokens") and "max_tokens" not in kwargs:
        # Given a budget and no max_tokens, litellm makes it the budget + 4,096: an answer with its
        # calls (a file written in one call) would be cut off at 4,096 tokens, where without an
        # effort the model's whole output is asked for.
        kwargs["max_tokens"] = int(mapped["max_output_tokens"])


async def _import_off_loop() -> Any:
    if _litellm is not None:
        return _litellm
    return await asyncio.get_running_loop().run_in_executor(None, load_litellm)


class _Pieces:
    """A streamed reply as its chunks arrive: text, reasoning, tool calls (in parts), usage, finish
    reason."""

    def __init__(self, on_text: TextSink | None, on_reasoning: TextSink | None = None,
                 on_call: CallSink | None = None):
        self.on_text = on_text
        self.on_reasoning = on_reasoning
        self.on_call = on_call
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.thinking = ThinkSplitter()
        self.calls: dict[int, dict[str, str]] = {}
        self.thinking_blocks: dict[int, dict[str, str]] = {}  # Claude's, by position, in pieces
        self.reasoning_details: list[dict[str, Any]] = []  # OpenRouter's, their streamed pieces joined
        self.usage: Any = None
        self.finish = ""
        self.started = False

    def take(self, chunk: Any) -> None:
        self.started = True
        if getattr(chunk, "usage", None):
            self.usage = chunk.usage
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        self.finish = choice.finish_reason or self.finish
        delta = choice.delta
        if delta is None:
            return
        # litellm's name for a separate reasoning field, and the name some servers use (vLLM, Ollama)
        thought = getattr(delta, "reasoning_content", None) or getattr(delta, "reasoning", None)
        if isinstance(thought, str) and thought:
            self._add(thought, "")
        if delta.content:
            answer, reasoning = self.thinking.feed(delta.content)
            self._add(reasoning, answer)
        for block in getattr(delta, "thinking_blocks", None) or ():
            self._take_thinking_block(block)
        for detail in getattr(delta, "reasoning_details", None) or ():
            add_reasoning_detail(self.reasoning_details, detail)
        for tc in delta.tool_calls or ():
            slot = self.calls.setdefault(tc.index or 0, {"id": "", "name": "", "arguments": ""})
            slot["id"] = tc.id or slot["id"]
            if tc.function is not None:
                slot["name"] += tc.function.name or ""
                slot["arguments"] += tc.function.arguments or ""
                if self.on_call and tc.function.arguments:  # a long file written: minutes, for a slow model
                    self.on_call(slot["name"], tc.function.arguments)

    def _take_thinking_block(self, block: Any) -> None:
        """A piece of one of Claude's thinking blocks: some of its text, its signature (last), or a
        redacted block's data."""
        block = dict(block) if isinstance(block, dict) else {}
        slot = self.thinking_blocks.setdefault(int(block.get("index") or 0), {"type": block.get("type", "thinking")})
        if isinstance(block.get("thinking"), str):
            slot["thinking"] = slot.get("thinking", "") + block["thinking"]
        for key in ("signature", "data"):
            if isinstance(block.get(key), str) and block[key]:
                slot[key] = block[key]

    def _add(self, reasoning: str, answer: str) -> None:
        if reasoning:
            self.reasoning.append(reasoning)
            if self.on_reasoning:
                self.on_reasoning(reasoning)
        if answer:
            self.text.append(answer)
            if self.on_text:
                self.on_text(answer)

    def reply(self, litellm: Any, model: str) -> ModelReply:
        answer, reasoning = self.thinking.finish()
        self._add(reasoning, answer)
        text, reasoning = split_reasoning("".join(self.text), "".join(self.reasoning), self.thinking.opened)
        blocks = tuple(block_of(pieces) for _, pieces in sorted(self.thinking_blocks.items()))
        return ModelReply(text, self.tool_calls(), _usage(litellm, model, self.usage), self.finish, reasoning, blocks,
                          reasoning_details=tuple(self.reasoning_details))

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(ToolCall(id=slot["id"] or f"call_{index}", name=slot["name"], arguments=slot["arguments"])
                     for index, slot in sorted(self.calls.items()))


async def _collect(litellm: Any, model: str, stream: Any, on_text: TextSink | None,
                   timeout_s: float | None = None, on_reasoning: TextSink | None = None,
                   on_call: CallSink | None = None, heard: Heard | None = None) -> ModelReply:
    pieces = _Pieces(on_text, on_reasoning, on_call)
    chunks = stream.__aiter__()
    while True:
        try:
            chunk = await chunks.__anext__()
            if heard:
                heard.now()
        except StopAsyncIteration:
            break
        except Exception as exc:
            # Pieces came, then the stream failed: the reply broke off midway, whatever class the
            # failure has (some litellm versions wrap it in a MidStreamFallbackError, others do not).
            if pieces.started and getattr(exc, "is_pre_first_chunk", None) is None:
                raise _stopped_midway(litellm, exc, timeout_s) from exc
            raise
        pieces.take(chunk)  # outside the try: a failure of ours is not the provider's
    return pieces.reply(litellm, model)


def _usage(litellm: Any, model: str, usage: Any) -> Usage:
    if usage is None:
        return Usage()
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details else 0
    # Anthropic bills what a marked request writes to its cache at 1.25 × the input price.
    written = int(getattr(usage, "cache_creation_input_tokens", 0) or 0)
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt, completion_tokens=completion, cache_read_input_tokens=cached,
            cache_creation_input_tokens=written,
        )
        cost = float(prompt_cost + completion_cost)
    except Exception:  # models without a known price (local, custom) cost nothing we can tell
        cost = 0.0
    return Usage(prompt, completion, cached, cost)


# How servers say the model cannot take tools: Ollama (a model without a tool template), llama.cpp
# without --jinja, vLLM without a tool-call parser, and others' wordings.
_NO_TOOLS = re.compile(r"does not support (?:tools|function calling)|--jinja|--enable-auto-tool-choice"
                       r"|tools? (?:use |calling )?(?:is |are )?not supported", re.IGNORECASE)
# How servers refuse a reasoning effort to a model that cannot think (Ollama's "does not support
# thinking"; OpenAI's "Unsupported parameter: 'reasoning_effort'").
_NO_THINKING = re.compile(r"does not support thinking|unsupported parameter:? '?reasoning_effort"
                          r"|reasoning_effort'? is not supported", re.IGNORECASE)
# How providers say the account has no credit left (OpenAI's insufficient_quota, Anthropic's "credit
# balance is too low", OpenRouter's and DeepSeek's 402): waiting does not help, a payment does.
# Gemini's free tier says "exceeded your current quota" of limits that do pass: not matched here.
_NO_CREDIT = re.compile(r"insufficient[_ ](?:quota|credits?|balance|funds)|credit balance is too low"
                        r"|payment required|out of credits", re.IGNORECASE)


# How a server of the person's own gets its key on the command line, where no keyring may be.
KEY_FROM_CLI = "from the command line, --api-key-env names the variable holding it"
# How litellm and the providers' SDKs say that no key was sent at all (Anthropic's and Gemini's
# checks, the OpenAI SDK's "Missing credentials"), which litellm files under three different
# classes: an internal error, a lost connection, a refused key. None of them passes by waiting.
_NO_KEY = re.compile(r"Missing (?:credentials|[\w ]{0,30}API Key)|api_key client option must be set"
                     r"|no (?:API )?key is set", re.IGNORECASE)
# How litellm says a cloud's own sign-in (see core.secrets.CLOUD_SIGN_IN) was not found: google-auth's
# "default credentials were not found", filed as an internal error or a lost connection, and
# botocore's "Unable to locate credentials", as a refused key. Signing in helps, waiting does not.
_NO_CLOUD_SIGN_IN = re.compile(r"default credentials were not found|Unable to locate credentials", re.IGNORECASE)
# How litellm says a library a provider needs is not installed ("Google Cloud SDK not found. Install
# it with: pip install …", "Missing boto3 to call bedrock").
_MISSING_LIBRARY = re.compile(r"not found\. Install it with: pip install|Missing boto3|No module named", re.IGNORECASE)
# How a connection that never opened reads, whatever class litellm gives it: the OpenAI SDK's
# "Connection error.", aiohttp's "Cannot connect to host" (DeepSeek, Groq, Mistral, xAI, a
# hosted_vllm server), a name that did not resolve (offline), a port nobody listens on.
_UNREACHABLE = re.compile(r"Connection error|Cannot connect to host|Name or service not known|name resolution"
                          r"|nodename nor servname|getaddrinfo failed|Connect call failed|Connection refused"
                          r"|Network is unreachable", re.IGNORECASE)


_WEB_PAGE = re.compile(r"<(?:!doctype\s+html|html[\s>]|head>|body[\s>]|title>)", re.IGNORECASE)
WEB_PAGE_CHARS = 200  # of a page's text, in the message


def web_page_text(text: str) -> str:
    """A web page's words, when `text` (an error's, whose body it holds) is one: its title and the
    start of its body, on one line ("" when it is no page). A proxy's or a sign-in page's HTML was
    shown to the person as it came, tags and all."""
    found = _WEB_PAGE.search(text)
    if not found:
        return ""
    from core.tools.html_text import html_to_text  # (only for such an error)

    markup = text[found.start():text.rfind(">") + 1]  # (a body in bytes' repr ends with its quote)
    lines = [" ".join(line.lstrip("# ").split()) for line in html_to_text(markup.replace("\\n", "\n")).splitlines()]
    words = " — ".join(line for line in lines if line)
    return one_line(words, WEB_PAGE_CHARS) if words else "no text"


def _response_text(exc: BaseException) -> str:
    """The body of the HTTP response an error came with, when there is one to read ("" if not)."""
    try:
        return str(getattr(exc, "response").text)[:2000]
    except Exception:  # (none, or a body never read)
        return ""


def _page_of(exc: BaseException) -> str:
    """web_page_text of an error: of its HTTP response, when that was a page (the OpenAI SDK says only
    "Error code: 403"), else of its message."""
    try:
        is_page = "text/html" in str(getattr(exc, "response").headers.get("content-type", "")).lower()
    except Exception:  # (no response: the message, then)
        is_page = False
    if is_page and (body := _response_text(exc)):
        return web_page_text(body) or "no text"
    return web_page_text(str(exc))


def answering(api_base: str | None) -> str:
    """Who answers a request, as a message names them: "the server at ADDRESS", or "the provider"."""
    return f"the server at {api_base}" if api_base else "the provider"


def not_an_api(api_base: str | None, page: str = "", status: int | None = None) -> ModelError:
    """What a web page answering instead of the model's API means, and what to do."""
    said = f" (HTTP {status}: {page})" if status and page else f" ({page})" if page else ""
    return ModelError("not_an_api", f"{capitalized(answering(api_base))} answered with a web page, not the model's API{said}. A network's sign-in "
                      "page (a hotel's, an airport's) or filter (a company's) may stand in between, or the API base is "
                      "a web page's address rather than its API's (an OpenAI-compatible one ends in /v1).")


def _trusting_advice() -> str:
    """What to do about a certificate not trusted: the computer's store (core.network trusts it), or
    SSL_CERT_FILE, as it stands now."""
    named = os.environ.get("SSL_CERT_FILE", "").strip()
    if named and not os.path.isfile(named):
        return (f"SSL_CERT_FILE names {named}, which is not a file: set it to the file of the certificate "
                "authority of the network you are on, then start Tripane again.")
    if named:
        return (f"SSL_CERT_FILE names {named}, which does not hold the authority that signed it: set it to the file "
                "of the certificate authority of the network you are on, then start Tripane again.")
    return ("On a network that inspects encrypted traffic, as many companies' do, that network's certificate "
            "authority belongs among this computer's trusted certificates (its IT department puts it there; then try "
            "again), or set SSL_CERT_FILE to its file, then start Tripane again.")


def untrusted_certificate(exc: BaseException) -> str:
    """Why the server's TLS certificate was refused, when that is why the connection failed (""
    when not). litellm says only "Connection error." and keeps the cause in the chain; a person
    behind a company's TLS inspection read "is it running, and is the API base right?", and it was."""
    seen: set[int] = set()
    found: BaseException | None = exc
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        if isinstance(found, ssl.SSLCertVerificationError):
            return str(found.verify_message or found.reason or "certificate verify failed")
        if "CERTIFICATE_VERIFY_FAILED" in str(found):
            said = re.search(r"certificate verify failed: ([^()\]]+)", str(found))
            return said[1].strip() if said else "certificate verify failed"
        found = found.__cause__ or found.__context__
    return ""


# aiohttp's repr of the TLS settings in "Cannot connect to host …:443 ssl:<ssl.SSLContext object at
# 0x7f…>": an address in memory, nothing a person can act on.
_SSL_CONTEXT = re.compile(r"\s*ssl:<[^>]*>")


# litellm's own prefixes on a provider's message, one or several: "litellm.AuthenticationError:
# AuthenticationError: OpenAIException - Incorrect API key provided", "litellm.ContextWindowExceededError:
# litellm.BadRequestError: ContextWindowExceededError: OpenAIException - …", "AnthropicError - …",
# "Vertex_ai_betaException BadRequestError: …".
# The person reads the provider's part.
_LITELLM_PREFIX = re.compile(r"^(?:(?:litellm\.)?\w+(?:Error|Exception)(?::\s*|\s+-\s+|\s+(?=\w+(?:Error|Exception)\b)))+")
# An error body passed on whole, as JSON or as the repr of its bytes (Anthropic's through litellm:
# b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}').
_BODY = re.compile(r"(?P<bytes>b(?P<quote>['\"]))?(?P<json>\{.*\})(?(bytes)(?P=quote))")


def provider_words(text: str) -> str:
    """The provider's own message in an error's text: the `message` of a JSON error body in it,
    else the text. Raw JSON, in bytes' repr at that, is not something to show a person."""
    found = _BODY.search(text)
    if not found:
        return text
    try:
        body = (ast.literal_eval(f"b{found['quote']}{found['json']}{found['quote']}").decode("utf-8", "replace")
                if found["bytes"] else found["json"])
        data = json.loads(body)
    except (ValueError, SyntaxError):
        return text
    error = data.get("error", data) if isinstance(data, dict) else None
    # OpenAI's {"error": {"message"}}; a Python server's (FastAPI: vLLM, LiteLLM's proxy) {"detail"}.
    message = (error.get("message") or error.get("detail")) if isinstance(error, dict) else error
    if not isinstance(message, str) or not message.strip():
        return text
    before = _LITELLM_PREFIX.sub("", text[:found.start()]).strip().rstrip(" -:")
    return f"{before}: {message.strip()}" if before else message.strip()


def error_words(exc: Exception) -> tuple[str, str]:
    """A litellm failure's first line without litellm's prefixes (`raw`), and the provider's own
    words in it, at most 400 characters (`detail`): what a person is shown."""
    raw = _SSL_CONTEXT.sub("", _LITELLM_PREFIX.sub("", str(exc).split("\n")[0]))
    detail = provider_words(raw)[:400]
    if re.fullmatch(r"Error code: \d+\.?", detail.strip()) and (body := _response_text(exc).strip()):
        detail = provider_words(body)[:400]  # (the OpenAI SDK's message, when the server said more)
    return raw, detail


def classify(litellm: Any, exc: Exception, timeout_s: float | None = None,
             api_base: str | None = None, model: str = "") -> ModelError:
    """Map a provider failure onto a plain message and whether trying again may help. What the
    provider said is looked through whole (`raw`); the person is shown its words (`detail`)."""
    if getattr(exc, "is_pre_first_chunk", None) is not None:  # litellm's MidStreamFallbackError
        return _broken_off(litellm, exc, timeout_s, api_base, model)
    retryable = (
        litellm.RateLimitError, litellm.InternalServerError, litellm.ServiceUnavailableError,
        litellm.Timeout, litellm.APIConnectionError,
    )
    raw, detail = error_words(exc)
    status = getattr(exc, "status_code", None)
    if status == 413:  # a proxy's body limit before a server (nginx's client_max_body_size is 1 MB)
        said = _page_of(exc) or detail
        return ModelError("context_window", f"The request is larger than {answering(api_base)} takes (HTTP 413: {said.rstrip('.')}): a "
                          "proxy before it may limit a request's size (nginx's client_max_body_size). Raise that limit, "
                          "or set a smaller Context window for this model.")
    if page := _page_of(exc):
        # A web page, not the API, answered: a filter or a sign-in page, or the wrong address. A
        # gateway's page before a provider that is down (Cloudflare's 502) is its error, told below.
        if not (isinstance(status, int) and (status >= 500 or status == 429)):
            return not_an_api(api_base, page, status)
        raw = detail = page
    if "LLM Provider NOT provided" in raw:
        meant = _did_you_mean(model)
        if meant:
            return ModelError("unknown_model", f"Tripane cannot tell which provider serves {model}: write it as "
                              f"provider/model.{meant}")
        return ModelError("unknown_model", "Tripane cannot tell which provider serves this model. Write it as "
                          "provider/model, e.g. openai/gpt-5.4-mini, anthropic/claude-haiku-latest or "
                          f"ollama_chat/llama3.1. ({detail})")
    cloud = cloud_of(model)
    if cloud and _NO_CLOUD_SIGN_IN.search(raw):
        return ModelError("no_key", f"No {cloud} sign-in was found on this computer for {model}: "
                          f"{HOW_TO_SIGN_IN[cloud]} (variables: in the environment Tripane starts from).")
    if _MISSING_LIBRARY.search(raw):
        return ModelError("setup", f"A library {provider_of(model) if model else 'the provider'} needs is missing from "
                          f"this installation of Tripane: {detail}")
    if _NO_KEY.search(raw):
        where = "store one in Tripane (Settings, or Session → Change model for a session)"
        if api_base:  # a server of the person's choosing is sent only its own key, never a variable's
            return ModelError("no_key", f"No API key for the server at {api_base}: {where}; {KEY_FROM_CLI}.")
        provider = provider_of(model) if model else "this provider"
        variable = key_variable(model) if model else "the provider's API key variable"
        return ModelError("no_key", f"No API key for {provider}: {where} or set {variable} in the environment "
                          "Tripane starts from.")
    if isinstance(exc, litellm.AuthenticationError):
        if api_base:  # sent only the key typed for it: where that goes is the way out
            return ModelError("auth", f"The server at {api_base} refused the API key ({detail.rstrip('.')}): it "
                              "takes its own (the one it was started with, as vLLM's --api-key, or a gateway's), "
                              f"typed for it in API key (Settings, or Session → Change model for a session; {KEY_FROM_CLI}).")
        return ModelError("auth", f"The provider refused the API key: {detail}")
    if isinstance(exc, litellm.PermissionDeniedError) or status == 403:
        return ModelError("permission", f"The provider refused access: {detail.rstrip('.')}. Check what "
                          "the key's account or project may use, or choose another model (Session → Change model).")
    if isinstance(exc, litellm.NotFoundError):
        said = f"{detail} {_response_text(exc)}".lower()
        if api_base and "model" not in said:  # the address is not the API's: a route the server lacks
            base = api_base.rstrip("/")
            ends = "" if base.endswith("/v1") else f" An OpenAI-compatible server's ends in /v1: {base}/v1."
            return ModelError("not_found", f"The server at {api_base} has no such address for the model's API "
                              f"({detail.rstrip('.')}): is the API base right?{ends}")
        if "try pulling it" in said:  # Ollama's, of a model not downloaded to this computer yet
            name = model.split("/", 1)[-1]
            return ModelError("not_found", f"The Ollama server{f' at {api_base}' if api_base else ''} does not have "
                              f"{name} yet: download it there with `ollama pull {name}` (or in Ollama's app), then send "
                              "a message to go on.")
        if retired := _retired(model, api_base):
            return ModelError("not_found", f"The provider no longer serves this model: {detail.rstrip('.')}. {retired}")
        meant = "" if api_base else _did_you_mean(model)  # a server of one's own serves what it has
        return ModelError("not_found", f"The provider does not know this model: {detail.rstrip('.')}.{meant}")
    if isinstance(exc, litellm.ContextWindowExceededError):
        return ModelError("context_window", f"The context is larger than the model's window: {detail}",
                          window=window_in(str(exc)))
    if status == 402 or _NO_CREDIT.search(f"{raw} {getattr(exc, 'body', '')}"):
        return ModelError("billing", f"The provider's account has no credit left for this: {detail.rstrip('.')}. Add credit or "
                          "raise the limit on the provider's billing page, then send a message to go on.")
    if isinstance(exc, litellm.RateLimitError):
        return ModelError("rate_limit", f"The provider is rate-limiting requests: {detail}", retryable=True,
                          retry_after_s=_retry_after(exc))
    if isinstance(exc, litellm.Timeout):
        within = f" within {timeout_s:g} s" if timeout_s else " in time"
        return ModelError("timeout", f"The provider did not answer{within}.", retryable=True)
    if why := untrusted_certificate(exc):
        return ModelError("certificate", f"{capitalized(answering(api_base))} was reached, but its certificate is "
                          f"not trusted on this computer ({why}). {_trusting_advice()}")
    # litellm reports a refused connection to an OpenAI-compatible server as an InternalServerError
    # whose message says "Connection error."; to a person that is "not reachable", not "it broke".
    # An APIConnectionError that says something else is the server's own error, sent within its
    # stream (vLLM's, a gateway's "The model is overloaded"): it was reached, and is told below.
    if _UNREACHABLE.search(raw) or (isinstance(exc, litellm.APIConnectionError) and not detail.strip()):
        if proxy := proxy_for(api_base):  # (a stale one, off the company's network, is the usual cause)
            variable, address = proxy
            through = f"{answering(api_base)} through the proxy {address}"
            if variable == SYSTEM_SETTINGS:
                return ModelError("connection", f"Could not reach {through} that {variable} name "
                                  f"({detail.rstrip('.')}): is the proxy reachable from here? For a server on this "
                                  f"computer or your own network, {SET_THE_VARIABLES}.", retryable=True, unreachable=through)
            return ModelError("connection", f"Could not reach {through} that {variable} names ({detail.rstrip('.')}): "
                              "is the proxy reachable from here? If it is not needed now, start Tripane without "
                              f"{variable} (or with the server's host in NO_PROXY).", retryable=True, unreachable=through)
        advice = "is it running, and is the API base right?" if api_base else "is this computer online?"
        return ModelError("connection", f"Could not reach {answering(api_base)} ({detail.rstrip('.')}): {advice}",
                          retryable=True, unreachable=answering(api_base))
    # 5xx (litellm's BadGatewayError, a gateway's 502, is none of its retryable classes); an
    # overloaded provider may say when to come back, too.
    if isinstance(exc, retryable) or (isinstance(status, int) and status >= 500):
        if status == 529 or "overloaded" in raw.lower():  # Anthropic's 529, a server's 503 when busy
            said = ("The provider is overloaded for now." if detail.lower().strip(". ") == "overloaded"
                    else f"The provider is overloaded for now ({detail.rstrip('.')})")
            return ModelError("overloaded", said, retryable=True, retry_after_s=_retry_after(exc))
        return ModelError("server", f"The provider had an internal error: {detail}", retryable=True,
                          retry_after_s=_retry_after(exc))
    if isinstance(exc, litellm.BadRequestError) and _NO_TOOLS.search(raw):
        return ModelError("no_tools", f"The model, as its server runs it, cannot call tools, and the agent works "
                          f"through them ({detail}). Ollama: choose a model whose page lists tools (llama3.1, "
                          "qwen2.5, qwen3, mistral-nemo); llama.cpp: start llama-server with --jinja; vLLM: "
                          "--enable-auto-tool-choice --tool-call-parser with the model's parser.")
    if isinstance(exc, litellm.BadRequestError) and _NO_THINKING.search(raw):
        return ModelError("no_reasoning", f"The model cannot be asked to think ({detail}): set Reasoning effort to "
                          "the model's own (Session → Change model).")
    if isinstance(exc, litellm.BadRequestError):
        return ModelError("bad_request", f"The provider rejected the request: {detail}")
    return ModelError("unknown", f"{type(exc).__name__}: {detail}")


def _retired(model: str, api_base: str | None) -> str:
    """Why a model its provider does not know may be gone: its deprecation day, past (litellm's map)."""
    from core.model_names import deprecated_on, today

    day = deprecated_on(model) if model and not api_base else ""  # a server of one's own serves what it has
    if not day or day > today():
        return ""
    return (f"Its provider deprecated it on {day} (litellm's model map), and has likely retired it since. "
            "Choose another model (Session → Change model).")


def _did_you_mean(model: str) -> str:
    # Imported here: core.model_names reads litellm's map through this module.
    from core.model_names import close_model_names

    try:
        names = close_model_names(model)
    except Exception:  # a suggestion is a courtesy: the failure is reported without it
        log.warning("no model names to suggest for %r", model, exc_info=True)
        return ""
    return f" Did you mean {' or '.join(names)}?" if names else ""


# How servers state their window when a prompt overflows it.
_WINDOW_STATED = (
    re.compile(r"maximum context length is (\d[\d,]*)", re.IGNORECASE),  # OpenAI, vLLM
    re.compile(r"context length of only (\d[\d,]*)", re.IGNORECASE),  # LM Studio
    re.compile(r"\bn_ctx\W{1,4}(\d+)"),  # llama.cpp's error body
    re.compile(r"> (\d[\d,]*) maximum"),  # Anthropic: "prompt is too long: N tokens > M maximum"
)


def window_in(message: str) -> int | None:
    """The context window a provider's overflow message states, if it states one."""
    for pattern in _WINDOW_STATED:
        found = pattern.search(message)
        if found:
            return int(found.group(1).replace(",", "")) or None
    return None


MAX_RETRY_AFTER_S = 120.0  # a longer wait is the person's call (Stop), not a silent one
MAX_BACKOFF_S = 30.0  # between two attempts, however many came before
NETWORK_PATIENCE_S = 900.0  # how long a provider that answered before is waited for while out of reach
OUT_OF_REACH_LOOK_S = 10.0  # how often it is looked for meanwhile, at most
AT_ONCE_S = 0.5  # a retry waiting less is made at once ("now")
OVERLOADED_PATIENCE = 2  # an overloaded provider is tried this many times as often


def _retry_after(exc: Exception) -> float | None:
    """The seconds in the provider's Retry-After (or retry-after-ms) header, if it sent one."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers.get(name)) * scale)
        except (TypeError, ValueError):  # absent, or an HTTP date: the backoff decides
            continue
    return None


def _broken_off(litellm: Any, exc: Any, timeout_s: float | None, api_base: str | None = None,
                model: str = "") -> ModelError:
    """A streamed reply that stopped midway: the provider went silent or the connection dropped.

    litellm wraps the cause in a MidStreamFallbackError whose text repeats it three times; the
    person needs to know that the reply broke off and why, in a line. Tried again like any
    connection failure; the part already received is dropped (the retry streams it anew)."""
    cause = getattr(exc, "original_exception", None)
    if exc.is_pre_first_chunk and cause is not None:  # nothing came: an ordinary failure to answer
        return classify(litellm, cause, timeout_s, api_base, model)
    return _stopped_midway(litellm, cause or exc, timeout_s)


def _stopped_midway(litellm: Any, cause: Exception, timeout_s: float | None) -> ModelError:
    """Why a reply that had begun to stream stopped, in a line: silence, or a dropped connection."""
    reason = str(cause).split("\n")[0].rsplit(" - ", 1)[-1][:300]
    if "timeout" in reason.lower() or "timed out" in reason.lower() or isinstance(cause, litellm.Timeout):
        silent = f"for {timeout_s:g} s" if timeout_s else "until the timeout"
        return ModelError("timeout", f"The provider stopped in the middle of its reply: nothing more came {silent}.",
                          retryable=True)
    if "payload is not completed" in reason or "connection" in reason.lower():
        reason = "the connection closed before the reply was complete"  # the transport's words say no more
    return ModelError("connection", f"The provider's reply broke off in the middle: {reason}.", retryable=True)


# --- tokens and model facts (litellm's bundled tokenizers: nothing is downloaded) ----------------

# Where Claude is served with Anthropic's own request format, which caches a prompt only up to a
# block marked with cache_control: unmarked, a byte-stable prefix is billed in full every turn.
# (OpenAI, DeepSeek, Gemini 2.5 and xAI cache common prefixes without being told.)
EXPLICIT_CACHE_PROVIDERS = frozenset({"anthropic", "bedrock", "vertex_ai", "azure_ai", "openrouter", "databricks"})
MAX_CACHE_MARKERS = 4  # Anthropic refuses a request with more


def is_ollama(model: str) -> bool:
    return provider_of(model) in ("ollama", "ollama_chat")


@functools.lru_cache(maxsize=32)  # asked for every request of a session
def needs_cache_markers(model: str) -> bool:
    if "claude" not in model.lower():
        return False
    try:
        provider = load_litellm().get_llm_provider(model)[1]
    except Exception:  # a model string litellm cannot route fails on its own, with a clear message
        return False
    return provider in EXPLICIT_CACHE_PROVIDERS


DEFAULT_CONTEXT_WINDOW = 128_000


def encode_tokens(model: str, text: str) -> list[int]:
    return list(load_litellm().encode(model=model, text=text))


def count_tokens(model: str, text: str) -> int:
    if not text:
        return 0
    return int(load_litellm().token_counter(model=model, text=text, count_response_tokens=True))


def mapped_window(model: str) -> int | None:
    """The model's input window from litellm's bundled model map; None for a model it does not know."""
    info = _mapped(model)
    return int(info.get("max_input_tokens") or info.get("max_tokens") or 0) or None


def _mapped(model: str) -> dict[str, Any]:
    """What litellm's bundled model map says of the model; nothing for one it does not know."""
    try:
        return dict(load_litellm().get_model_info(model))
    except Exception:  # unknown to the map (local or custom models)
        return {}


def mapped_sees_pictures(model: str) -> bool | None:
    """Whether the model takes pictures, by litellm's bundled map; None for a model it does not
    know (core.providers.sees_pictures asks a local server, or tries)."""
    info = _mapped(model)
    return bool(info.get("supports_vision")) if info else None


def refuses_pictures(model: str, api_base: str | None) -> bool:
    """Whether the model, which litellm's map does not say sees pictures, refused those it was
    shown in this process, and took none: it is not shown more (its messages say they are there).
    A model the map says sees them is refused a picture at a time (one it cannot read)."""
    return pictures.refused_every_picture(model, api_base) and not mapped_sees_pictures(model)


def supports_tool_choice(model: str) -> bool:
    return "tool_choice" in _supported_params(model)


def takes_reasoning_effort(model: str) -> bool:
    """Whether litellm sends this model a reasoning effort (gpt-4o and Claude 3.5 have none; a
    model on a server of one's own is given it as an OpenAI model would be)."""
    return "reasoning_effort" in _supported_params(model)


def thinks_unasked(model: str) -> bool:
    """Whether the model thinks when not asked to (litellm's map: Claude Sonnet 5 and later, some
    of which always do)."""
    info = _mapped(model)
    return bool(info.get("thinking_on_by_default") or info.get("thinking_always_on"))


def interleaves_when_asked(model: str) -> bool:
    """Whether a Claude model asked for a thinking budget (up to 4.5; the adaptive models, Sonnet
    4.6 and later, interleave unasked) thinks between calls when asked to, by the beta header:
    Claude 4 at Anthropic's API or Azure's. Claude 3.7 cannot."""
    return provider_of(model) in ("anthropic", "azure_ai") and "claude-3" not in model


def _supported_params(model: str) -> list[str]:
    """The OpenAI parameters litellm sends this model. Asked with the provider apart: asked of
    "openai/gpt-4o-mini" whole, litellm answers for an unknown model of OpenAI's."""
    try:
        litellm = load_litellm()
        name, provider, _, _ = litellm.get_llm_provider(model)
        return litellm.get_supported_openai_params(model=name, custom_llm_provider=provider) or []
    except Exception:
        return []


async def prepare_tokenizer(model: str) -> None:
    """Import litellm and load the tokenizer off the event loop (the first load takes ~1 s)."""
    await asyncio.get_running_loop().run_in_executor(None, count_tokens, model, "warm up")


# --- embeddings (long-term memory's vectors through the configured provider) ----------------------


def embed_texts(model: str, texts: list[str], *, api_base: str | None = None, api_key: str | None = None,
                timeout_s: float = 60.0) -> list[list[float]]:
    """Embed `texts` with the provider's embedding model (blocking; call it from a worker thread)."""
    if os.environ.get(LOCAL_ONLY_ENV) and not is_loopback(api_base):
        raise ModelError("forbidden", f"{LOCAL_ONLY_ENV} is set: only models on 127.0.0.1 may be called")
    litellm = load_litellm()
    kwargs: dict[str, Any] = {"model": model, "input": texts, "timeout": timeout_s}
    if api_base:
        kwargs["api_base"] = api_base
        kwargs["api_key"] = api_key or "not-needed"
    elif api_key:
        kwargs["api_key"] = api_key
    try:
        response = litellm.embedding(**kwargs)
    except Exception as exc:
        raise classify(litellm, exc, api_base=api_base, model=model) from exc
    rows = sorted(response.data, key=lambda item: item["index"])
    return [list(row["embedding"]) for row in rows]
