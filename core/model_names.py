"""The model strings a person may mean when typing a model's name: the chat models in litellm's own
(bundled) model map that call tools, written as litellm wants them ("anthropic/claude-sonnet-4-5").

A new user knows "Claude Sonnet" or "GPT-4o", not litellm's spelling of it, and a misspelt model is
found out only at its first request. The map is read as it is: nothing is asked of litellm that
could reach the network (working out the provider of some strings signs in to GitHub Copilot)."""

from __future__ import annotations

import datetime
import difflib
import functools
import re

from core.llm import load_litellm

# Providers a person signs up to with a key of their own (or a cloud sign-in), most asked for first.
# Left out: Azure (a model there is a deployment the person names), Ollama (the window lists what
# the local server has), and resellers that need an OAuth sign-in.
PROVIDERS = ("openai", "anthropic", "gemini", "deepseek", "mistral", "xai", "groq", "openrouter", "together_ai",
             "fireworks_ai", "cerebras", "moonshot", "zai", "dashscope", "deepinfra", "bedrock", "vertex_ai")
# Chat models for other work than an agent's: speech, web search, computer use, robots.
NOT_FOR_AGENTS = ("audio", "realtime", "search", "computer-use", "robotics", "tts", "transcribe", "image")


# A server's address where a model's name goes: a URL, or a host and port (a local server's).
_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]+\])(?::\d+)?(?:/|$))",
                      re.IGNORECASE)


def model_string_problem(model: str, instead: str = "put it under API base") -> str:
    """Why `model` cannot be a model string ("" when it may be one; an empty one is the caller's to
    refuse): a server's address pasted where the model goes (its provider would be "http:", its
    key HTTP:_API_KEY, and its first request fail with litellm's "provider not provided").
    `instead`: where the address goes, as the person meets it (a field, an option)."""
    model = model.strip()
    if _ADDRESS.match(model):
        return (f"{model} is a server's address, not a model: {instead}, and write the model under "
                "its own name as provider/model (openai/NAME for an OpenAI-compatible server, ollama_chat/NAME for "
                "Ollama).")
    return ""


_MISSPELT_SCHEME = re.compile(r"^(https?)[:/]+(.*)$", re.IGNORECASE)


def api_base_problem(api_base: str | None) -> str:
    """Why `api_base` cannot be a server's address ("" when it may be one, or is empty): one
    without http:// ("127.0.0.1:8000/v1", "http//…") reached litellm as a path, and the person read
    "The provider had an internal error: /127.0.0.1:8000/v1/chat/completions", three times."""
    base = (api_base or "").strip()
    if not base or re.match(r"^https?://", base, re.IGNORECASE):
        return ""
    if re.match(r"^[a-z][a-z0-9+.-]*://", base, re.IGNORECASE):
        return f"The API base {base} is not a web address: it begins with http:// or https://."
    misspelt = _MISSPELT_SCHEME.match(base)
    meant = f"{misspelt[1].lower()}://{misspelt[2]}" if misspelt else f"http://{base}"
    return f"The API base {base} lacks its http:// (or https://): {meant}, for instance."


def known_chat_models() -> tuple[str, ...]:
    """Every tool-calling chat model of PROVIDERS in litellm's map, as a model string, grouped by
    provider in PROVIDERS' order; models past their deprecation date, or close to it, left out.
    Imports litellm (seconds, the first time): call it from a worker thread."""
    return models_on(today())


def today() -> str:
    """The day whose models are offered (ISO date)."""
    return datetime.date.today().isoformat()


@functools.cache
def models_on(today: str) -> tuple[str, ...]:
    """known_chat_models as of a day (ISO date)."""
    found: dict[str, list[str]] = {provider: [] for provider in PROVIDERS}
    for key, info in load_litellm().model_cost.items():
        if not isinstance(info, dict) or info.get("mode") != "chat" or not info.get("supports_function_calling"):
            continue
        provider = str(info.get("litellm_provider") or "").split("-")[0]  # "vertex_ai-anthropic_models"
        if provider not in found or any(word in key for word in NOT_FOR_AGENTS):
            continue
        if deprecated_soon(str(info.get("deprecation_date") or ""), today):
            continue
        if key.startswith(f"{provider}/"):
            found[provider].append(key)
        elif provider in ("openai", "anthropic") and "/" not in key and not key.startswith("ft:"):
            found[provider].append(f"{provider}/{key}")  # the map names their models bare
    return tuple(name for provider in PROVIDERS for name in dict.fromkeys(found[provider]))


def deprecated_on(model: str) -> str:
    """The day (ISO date) from which the model's provider deprecates it, by litellm's map; "" when
    the map names none (or does not know the model). A deprecated model is retired some time after:
    its requests then fail."""
    cost = load_litellm().model_cost
    whole = model.strip()
    provider, _, bare = whole.partition("/")
    for key in (whole, bare):
        info = cost.get(key)
        # a bare key is another provider's model of that name, unless the map files it under this one
        if isinstance(info, dict) and (key == whole or str(info.get("litellm_provider", "")).startswith(provider)):
            return str(info.get("deprecation_date") or "")
    return ""


# How long before the day its provider deprecates it a session's model is pointed out (the status
# bar, `tripane run`): a deprecated model is retired some time after, and its requests then fail.
DEPRECATION_NOTICE_DAYS = 30


def deprecation_words(day: str, on: str | None = None) -> str:
    """What the day a model's provider deprecates it (ISO date) means for the person's work, as
    of the day `on` (today)."""
    past = day <= (on or today())
    then = "its requests may fail any day" if past else "choose a newer one for long work"
    return (f"Its provider {'deprecated' if past else 'deprecates'} this model on {day} (litellm's model map) and "
            f"retires it some time after: {then}")


def deprecation_near(model: str, api_base: str | None = None, on: str | None = None) -> str:
    """The day the model's provider deprecates it, if that day is past or comes within
    DEPRECATION_NOTICE_DAYS of `on` (today); else "". A model on a server of one's own
    (`api_base`) is the server's, whatever its name. Imports litellm: call it from a worker thread."""
    if api_base:
        return ""
    day = deprecated_on(model)
    return day if deprecated_soon(day, on or today()) else ""


def deprecated_soon(day: str, on: str) -> bool:
    """Whether a deprecation day (ISO date) is past on the day `on`, or comes within
    DEPRECATION_NOTICE_DAYS of it."""
    try:
        return (datetime.date.fromisoformat(day) - datetime.date.fromisoformat(on)).days <= DEPRECATION_NOTICE_DAYS
    except ValueError:  # none, or a date the map spells otherwise
        return False


def close_model_names(model: str, count: int = 3) -> list[str]:
    """The known model strings a mistyped or unprefixed one may have meant: those it names without
    their provider first ("claude-sonnet-4-5": anthropic/claude-sonnet-4-5), then the most alike
    (a name typed without its provider is compared with theirs without it too)."""
    typed = model.strip().lower()
    if not typed:
        return []
    by_key: dict[str, list[str]] = {}
    for name in known_chat_models():
        by_key.setdefault((name if "/" in typed else name.split("/", 1)[1]).lower(), []).append(name)
    alike = difflib.get_close_matches(typed, by_key, n=count, cutoff=0.75)
    return list(dict.fromkeys(name for key in [typed, *alike] for name in by_key.get(key, [])))[:count]
