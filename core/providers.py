"""Finding a model to talk to: a local Ollama server, the context a local server was started with,
and a one-message connection test."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.llm import (
    DEFAULT_CONTEXT_WINDOW,
    ModelClient,
    ModelError,
    ModelRequest,
    is_ollama,
    mapped_sees_pictures,
    mapped_window,
    needs_cache_markers,
    refuses_pictures,
)
from core.model_names import deprecated_on, deprecation_words
from core.secrets import get_api_key

log = logging.getLogger(__name__)
OLLAMA_BASE = "http://127.0.0.1:11434"
# The context Tripane asks of an Ollama model unless the person sets one: room for the brief system
# prompt and several turns of file reads. Ollama allocates the whole context's KV cache when it
# loads the model, so the model's trained length (often 128k) could exhaust a laptop's memory.
LOCAL_WINDOW = 16_384


def detect_ollama(base: str = OLLAMA_BASE, timeout_s: float = 0.6) -> list[str]:
    """The models of an Ollama server answering at `base`, as litellm model strings; [] if none.

    Blocking (it is one short HTTP request): call it from a worker thread.
    """
    import httpx

    try:
        response = httpx.get(f"{base.rstrip('/')}/api/tags", timeout=timeout_s)
        response.raise_for_status()
        models = response.json().get("models") or []
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        log.debug("no Ollama at %s: %s", base, exc)
        return []
    return [f"ollama_chat/{m['name']}" for m in models if isinstance(m, dict) and m.get("name")]


# What Ollama's /api/show said of a model, by (model, server), for this process: its window and
# whether it sees pictures are asked once.
_shown: dict[tuple[str, str], dict] = {}


def _ollama_show(model: str, api_base: str | None, timeout_s: float) -> dict:
    """Ollama's /api/show of the model (raises httpx's errors, ValueError for a body not JSON)."""
    import httpx

    name, base = model.split("/", 1)[-1], (api_base or OLLAMA_BASE).rstrip("/")
    if (name, base) not in _shown:
        response = httpx.post(f"{base}/api/show", json={"model": name}, timeout=timeout_s)
        response.raise_for_status()
        shown = response.json()
        if not isinstance(shown, dict):
            raise ValueError(f"/api/show answered {type(shown).__name__}, not an object")
        _shown[(name, base)] = shown
    return _shown[(name, base)]


def ollama_window(model: str, api_base: str | None = None, timeout_s: float = 3.0) -> int:
    """The context to ask an Ollama model for: its trained length from /api/show, at most
    LOCAL_WINDOW; LOCAL_WINDOW when the server does not say. Blocking: call it from a thread."""
    import httpx

    try:
        info = _ollama_show(model, api_base, timeout_s).get("model_info") or {}
        trained = int(info.get(f"{info.get('general.architecture')}.context_length") or 0)
    except (httpx.HTTPError, ValueError, AttributeError, TypeError) as exc:
        log.info("Ollama did not say how long %s's context is (%s); asking for %s tokens", model, exc, LOCAL_WINDOW)
        return LOCAL_WINDOW
    return min(trained, LOCAL_WINDOW) if trained > 0 else LOCAL_WINDOW


def sees_pictures(model: str, api_base: str | None = None, timeout_s: float = 0.0) -> bool:
    """Whether to show the model pictures: as pictures_said says; a model no one says anything of
    (on vLLM, or newer than the map) is shown them, and one that refuses them is not shown more
    (core.llm.refuses_pictures)."""
    said = pictures_said(model, api_base, timeout_s)
    return True if said is None else said


def pictures_said(model: str, api_base: str | None = None, timeout_s: float = 0.0) -> bool | None:
    """Whether the model takes pictures: by litellm's bundled map, or, for a model it does not
    know (gemma3, llava, qwen2.5vl on a server of one's own), by what its server says: Ollama's
    capabilities, llama.cpp's and LM Studio's model information (served_sees_pictures); no, when
    it refused all it was shown. None: nothing says. Asks the server (blocking, `timeout_s`) only
    when given time to and not asked before; with none, what it said before (the run asks when it
    starts, with the window)."""
    import httpx

    if refuses_pictures(model, api_base):
        return False
    mapped = mapped_sees_pictures(model)
    if mapped:
        return True
    if not is_ollama(model):
        said = None
        if api_base and served_vision_known(model, api_base):
            said = served_sees_pictures(model, api_base)  # (what it said: no key looked up, no page asked)
        elif api_base and timeout_s:
            said = served_sees_pictures(model, api_base, get_api_key(model, api_base), timeout_s)
        return said if said is not None else mapped
    name, base = model.split("/", 1)[-1], (api_base or OLLAMA_BASE).rstrip("/")
    if (name, base) not in _shown and not timeout_s:
        return False
    try:
        capabilities = _ollama_show(model, api_base, timeout_s).get("capabilities") or ()
    except (httpx.HTTPError, ValueError) as exc:
        log.info("Ollama did not say whether %s sees pictures (%s)", model, exc)
        return False
    return "vision" in capabilities


def served_window(model: str, api_base: str, api_key: str | None = None, timeout_s: float = 2.0) -> int | None:
    """The context an OpenAI-compatible server at `api_base` was started with, if it says: vLLM in
    /v1/models (`max_model_len`), llama.cpp in /props (a slot's `n_ctx`), LM Studio in /api/v1/models
    (0.4 on: a loaded instance's `context_length`) or /api/v0/models (`loaded_context_length`). None
    when none of them answers (a hosted API, a proxy, an older server). These servers fix the window
    when they start, below the model's trained length as a rule, and no model map knows it.
    `api_key` goes along as the requests to the model do: vLLM started with --api-key, and LM Studio
    with authentication on, answer nothing without it. Blocking: call it from a thread."""
    window = _first_said(model, api_base, api_key, timeout_s, (
        ("models", _vllm_window), ("/props", _llamacpp_window), ("/api/v1/models", _lmstudio_window),
        ("/api/v0/models", _lmstudio_v0_window)))
    if window:
        log.info("the server at %s says %s's window is %s tokens", api_base, model, window)
    return window


def _first_said(model: str, api_base: str, api_key: str | None, timeout_s: float,
                probes: tuple[tuple[str, Callable[[dict, str], Any]], ...], fresh: bool = True) -> Any:
    """What the first of the server's pages says of the model, by the reader given for it; None
    when none answers with it. A page's path is from the server's root (/props), or from the API
    base (models: OpenAI's list). Blocking."""
    import httpx

    name = model.split("/", 1)[-1]
    base = api_base.rstrip("/")
    root = base.removesuffix("/v1")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
    with httpx.Client(timeout=timeout_s, headers=headers) as client:
        for path, read in probes:
            url = root + path if path.startswith("/") else f"{base}/{path}"
            try:
                page = _page(client, url, api_key, fresh)
                said = read(page, name) if page is not None else None
            except (httpx.HTTPError, ValueError, AttributeError, TypeError, KeyError) as exc:
                log.debug("nothing said at %s: %s", url, exc)
                continue
            if said is not None:
                return said
    return None


# The pages a server answered lately, by address and key: (when, its JSON or None for another
# answer). A run asks its window (always afresh: Test connection after a restart of the server)
# and, at once after, whether its model sees pictures, of the same pages: each is fetched once.
_pages: dict[tuple[str, str | None], tuple[float, Any]] = {}
PAGE_KEPT_S = 5.0


def _page(client: Any, url: str, api_key: str | None, fresh: bool) -> Any:
    """The JSON of the page at `url` (None when it answered otherwise than 200), fetched with
    `client` unless it was a moment ago and need not be `fresh`. Raises what httpx and JSON
    decoding raise."""
    kept = _pages.get((url, api_key))
    if not fresh and kept is not None and time.monotonic() - kept[0] < PAGE_KEPT_S:
        return kept[1]
    response = client.get(url)
    page = response.json() if response.status_code == 200 else None
    _pages[(url, api_key)] = (time.monotonic(), page)
    return page


# What a server said of its model's pictures, by (model, server): (when, True, False, or None for
# nothing: a server that does not say, or did not answer, is asked again after UNSAID_KEPT_S).
_served_vision: dict[tuple[str, str], tuple[float, bool | None]] = {}
UNSAID_KEPT_S = 60.0


def served_sees_pictures(model: str, api_base: str, api_key: str | None = None, timeout_s: float = 2.0) -> bool | None:
    """Whether the OpenAI-compatible server at `api_base` says the model takes pictures: llama.cpp
    in /props (started with a vision projector, --mmproj), LM Studio in /api/v1/models (0.4 on:
    capabilities.vision) or /api/v0/models (type "vlm"). None when none of them says (vLLM, a
    hosted API). What it said is kept for the process. Blocking."""
    key = (model, api_base.rstrip("/"))
    if not served_vision_known(model, api_base):
        said = _first_said(model, api_base, api_key, timeout_s, (
            ("/props", _llamacpp_vision), ("/api/v1/models", _lmstudio_vision), ("/api/v0/models", _lmstudio_v0_vision)),
            fresh=False)
        _served_vision[key] = (time.monotonic(), said)
    return _served_vision[key][1]


def served_vision_known(model: str, api_base: str) -> bool:
    """Whether the server was asked about the model's pictures, and its answer still holds."""
    kept = _served_vision.get((model, api_base.rstrip("/")))
    return kept is not None and (kept[1] is not None or time.monotonic() - kept[0] < UNSAID_KEPT_S)


def _llamacpp_vision(props: dict, name: str) -> bool | None:
    modalities = props.get("modalities")
    return bool(modalities.get("vision")) if isinstance(modalities, dict) else None


def _lmstudio_vision(listing: dict, name: str) -> bool | None:
    models = [model for model in listing.get("models") or [] if isinstance(model, dict)]
    capabilities = _only_or_named(models, name, "key").get("capabilities")
    return bool(capabilities.get("vision")) if isinstance(capabilities, dict) else None


def _lmstudio_v0_vision(listing: dict, name: str) -> bool | None:
    kind = _served_entry(listing, name).get("type")
    return kind == "vlm" if kind else None


def _only_or_named(entries: list[dict], name: str, *keys: str) -> dict:
    """The entry called `name` under one of `keys`; a server serving one model is taken to serve
    it under whatever name it is asked for (vLLM's --served-model-name, aliases)."""
    named = [e for e in entries if any(e.get(key) == name for key in keys)]
    return named[0] if named else entries[0] if len(entries) == 1 else {}


def _served_entry(listing: dict, name: str) -> dict:
    """The entry for `name` in an OpenAI-style model list."""
    return _only_or_named([e for e in listing.get("data") or [] if isinstance(e, dict)], name, "id")


def _vllm_window(listing: dict, name: str) -> int | None:
    return int(_served_entry(listing, name).get("max_model_len") or 0) or None


def _llamacpp_window(props: dict, name: str) -> int | None:
    return int((props.get("default_generation_settings") or {}).get("n_ctx") or 0) or None


def _lmstudio_window(listing: dict, name: str) -> int | None:
    # Each loaded instance of a model has the context it was loaded with; a request names the
    # model's key or an instance's id ("key:2" for a second one). A model not loaded yet gets its
    # context when it loads: only a loaded one says.
    instances = [{**instance, "key": model.get("key")}
                 for model in listing.get("models") or [] if isinstance(model, dict)
                 for instance in model.get("loaded_instances") or [] if isinstance(instance, dict)]
    config = _only_or_named(instances, name, "id", "key").get("config") or {}
    return int(config.get("context_length") or 0) or None


def _lmstudio_v0_window(listing: dict, name: str) -> int | None:
    # LM Studio before 0.4: the loaded context, on the model's entry.
    return int(_served_entry(listing, name).get("loaded_context_length") or 0) or None


def stated_window(model: str, api_base: str | None = None) -> int | None:
    """The context window as someone states it: a local Ollama server, the OpenAI-compatible server
    at `api_base` (asked with the key the model's requests carry there), or litellm's bundled model
    map. None when none of them does. Blocking: call it from a thread."""
    if is_ollama(model):
        return ollama_window(model, api_base)
    served = served_window(model, api_base, get_api_key(model, api_base)) if api_base else None
    return served or mapped_window(model)


def model_window(model: str, api_base: str | None = None) -> int:
    """The context window to budget for when the person has not set one: the stated one, else a
    conservative default (a server's first refusal then says the real one). Blocking."""
    return stated_window(model, api_base) or DEFAULT_CONTEXT_WINDOW


async def test_connection(client: ModelClient, model: str, api_base: str | None = None) -> str:
    """One tiny request. Returns what the model said; raises ModelError in plain words otherwise."""
    if not model.strip():
        raise ModelError("bad_request", "No model is set. Enter a litellm model string, e.g. openai/gpt-5.4-mini.")
    request = ModelRequest(model=model.strip(), api_base=api_base or None, max_tokens=8, timeout_s=20.0,
                           messages=[{"role": "user", "content": "Reply with the single word: ready"}],
                           tools=[PROBE_TOOL])
    reply = await client.complete(request)
    if reply.text.strip():
        return reply.text.strip()
    if reply.tool_calls:
        return "(a tool call: tools work)"
    if reply.reasoning.strip():  # a reasoning model spends the test's few tokens thinking
        return "(it was still thinking when the test's 8-token limit stopped it: the connection works)"
    return "(an empty reply, but the connection works)"


# Sent with the test request: a model its server runs without tools (an Ollama model with no tool
# template, llama.cpp without --jinja) is refused then, in Settings, not at a session's first step.
PROBE_TOOL = {"type": "function", "function": {
    "name": "task_done", "description": "Not needed now: just reply with text.",
    "parameters": {"type": "object", "properties": {}, "required": []}}}


PICTURES_SAID = {True: "sees pictures", False: "does not see pictures",
                 None: "pictures: shown to it, as nothing says whether it sees them"}


@dataclass(frozen=True)
class Connection:
    """What a working connection tells the person: the model's answer, the window a session with it
    would budget for, whether Claude's prompt cache is marked, and whether it sees pictures."""

    said: str
    window: int
    cache_marked: bool
    window_assumed: bool = False  # neither the server nor the model map states it
    deprecated_on: str = ""  # the day its provider deprecates the model (litellm's map), if any
    pictures: str = ""  # whether it sees pictures, in words (PICTURES_SAID); "": not asked

    def details(self, on: str | None = None, set_window: str = "set Context window", set_here: int = 0) -> str:
        """`on`: the day the deprecation is told as of (today); `set_window`: how the person gives
        the window where they read this; `set_here`: the window they gave (0: none), the one a
        session budgets for."""
        more = "; prompt caching marked for Claude" if self.cache_marked else ""
        more += f"; {self.pictures}" if self.pictures else ""
        if set_here:
            own = "" if self.window_assumed or self.window == set_here else f"; its own: {self.window:,}"
            said = f"(context window {set_here:,} tokens, as set here{own}{more})"
        elif self.window_assumed:
            said = (f"(context window: not stated by the server or litellm's model map, so {self.window:,} "
                    f"tokens are assumed until a refusal says otherwise; {set_window} if you know it{more})")
        else:
            said = f"(context window {self.window:,} tokens{more})"
        if self.deprecated_on:
            said += f". {deprecation_words(self.deprecated_on, on)}"
        return said


async def check_connection(client: ModelClient, model: str, api_base: str | None = None) -> Connection:
    """test_connection, then the window the model gets. Raises ModelError as test_connection does."""
    said = await test_connection(client, model, api_base)
    stated = await asyncio.to_thread(stated_window, model.strip(), api_base or None)
    return Connection(said, stated or DEFAULT_CONTEXT_WINDOW, needs_cache_markers(model.strip()),
                      window_assumed=stated is None,
                      deprecated_on="" if api_base else await asyncio.to_thread(deprecated_on, model),
                      pictures=PICTURES_SAID[await asyncio.to_thread(pictures_said, model.strip(), api_base or None,
                                                                     2.0)])
