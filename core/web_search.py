"""Web search for the agent's web_search tool, through litellm's search providers.

An agent that researches must find pages before it can read them; with web_fetch alone it could
read only addresses it already knew, or guessed. litellm offers one call to many search APIs, as it
does for models: the person picks one in Settings → Web search, with its API key (kept in the
keyring, as a model's), or the address of a SearXNG server of their own, which needs none.
Nothing is searched until they do; the agent is told how to ask for it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from core.secrets import stored_key
from core.text import one_line
from core.user_settings import read_settings

SEARCH_TIMEOUT_S = 30.0
MAX_RESULTS = 20
SNIPPET_CHARS = 400  # of a result's text: what tells whether the page is worth a fetch


@dataclass(frozen=True)
class SearchProvider:
    name: str  # litellm's
    label: str
    variable: str = ""  # the environment variable litellm reads its key from ("": it needs none)
    site: str = ""  # where a key is had (the server's docs, for one's own)
    own_server: bool = False  # the person's own server, at the address they give

    @property
    def key_name(self) -> str:
        """The name its key is kept under in the keyring (apart from the models' keys)."""
        return f"search:{self.name}"


PROVIDERS = (
    SearchProvider("brave", "Brave Search", "BRAVE_API_KEY", "api-dashboard.search.brave.com"),
    SearchProvider("tavily", "Tavily", "TAVILY_API_KEY", "app.tavily.com"),
    SearchProvider("exa_ai", "Exa", "EXA_API_KEY", "dashboard.exa.ai"),
    SearchProvider("serper", "Serper (Google's results)", "SERPER_API_KEY", "serper.dev"),
    SearchProvider("perplexity", "Perplexity", "PERPLEXITYAI_API_KEY", "perplexity.ai/account/api"),
    SearchProvider("linkup", "Linkup", "LINKUP_API_KEY", "app.linkup.so"),
    SearchProvider("searxng", "SearXNG (a server of your own)", site="docs.searxng.org", own_server=True),
)
NOT_SET_UP = ("Web search is not set up in Tripane: the person chooses a search provider in Settings → Web search "
              "(Brave Search, Tavily, Exa, … with its API key, or a SearXNG server of their own). Ask them to, or "
              "read an address you know with web_fetch.")


class SearchFailed(Exception):
    """Why a search gave no results to show: said to the agent, and by the Settings' test."""


@dataclass(frozen=True)
class SearchResult:
    title: str
    url: str
    snippet: str
    date: str = ""


@dataclass(frozen=True)
class SearchSetup:
    provider: SearchProvider
    api_base: str = ""


def provider_named(name: str) -> SearchProvider | None:
    return next((provider for provider in PROVIDERS if provider.name == name), None)


def saved_setup() -> SearchSetup | None:
    """The search the person set up in Settings, or None. Read at each search (a file of a few
    hundred bytes): set up while a session runs, it is used from its next search."""
    settings = read_settings()
    provider = provider_named(str(settings.get("search_provider", "")))
    return SearchSetup(provider, str(settings.get("search_api_base", "")).strip()) if provider else None


def search_key_named() -> dict[str, str]:
    """The search provider's key from the keyring, by the name it is hidden under in what the
    agent's tools return (see core/secrets.Redactor). Asks the keyring: off the event loop."""
    setup = saved_setup()
    key = stored_key(setup.provider.key_name) if setup else None
    return {f"{setup.provider.label} API key (keyring)": key} if setup and key else {}


async def search(query: str, max_results: int, setup: SearchSetup | None, key: str = "") -> list[SearchResult]:
    """At most `max_results` results for `query` from the provider `setup` names, with `key` (a
    key typed, not yet stored: Settings' test) or the one stored; SearchFailed saying why not (not
    set up, no key, refused, unreachable, too slow)."""
    from core.llm import error_words, load_litellm

    if setup is None:
        raise SearchFailed(NOT_SET_UP)
    provider = setup.provider
    if provider.own_server and not setup.api_base:
        raise SearchFailed(f"Web search is set to {provider.label} without its address: the person gives it in "
                           "Settings → Web search (as http://localhost:8888).")
    litellm = await asyncio.to_thread(load_litellm)
    key = key or await asyncio.to_thread(stored_key, provider.key_name)  # (a locked keyring may ask for its password)
    where = setup.api_base or None
    try:
        found = await asyncio.wait_for(
            litellm.asearch(query, search_provider=provider.name, max_results=max_results, api_key=key or None,
                            api_base=where, timeout=SEARCH_TIMEOUT_S),
            SEARCH_TIMEOUT_S)  # (litellm's own timeout is not kept by every provider's client)
    except TimeoutError:
        raise SearchFailed(f"{_who(setup)} did not answer within {SEARCH_TIMEOUT_S:g} s.") from None
    except Exception as exc:  # noqa: BLE001 (litellm's errors, and a provider's client's own)
        raise SearchFailed(_failure(litellm, exc, setup, error_words(exc)[1], has_key=bool(key))) from None
    return [SearchResult(str(r.title or "").strip() or "(untitled)", str(r.url or ""),
                         one_line(str(r.snippet or ""), SNIPPET_CHARS), str(r.date or "")[:10])
            for r in (found.results or [])[:max_results]]


def _who(setup: SearchSetup) -> str:
    return f"The SearXNG server at {setup.api_base}" if setup.provider.own_server else setup.provider.label


def _failure(litellm, exc: Exception, setup: SearchSetup, detail: str, has_key: bool) -> str:
    provider, who = setup.provider, _who(setup)
    if provider.variable and provider.variable in detail and "not set" in detail:
        return (f"{provider.label} needs an API key, and none is set: the person gives it in Settings → Web search "
                f"(or sets {provider.variable} where Tripane starts).")
    status = getattr(exc, "status_code", None)
    if isinstance(exc, litellm.AuthenticationError) or status in (401, 403):
        if provider.own_server and status == 403:  # SearXNG answers JSON only when its settings allow it
            return (f"{who} refused the search (HTTP 403: {detail}): a SearXNG server gives JSON results only "
                    "with `json` listed under search → formats in its settings.yml.")
        source = "the key in Settings → Web search" if has_key else f"the key from {provider.variable}"
        return f"{who} refused {source} ({detail}): the person checks it in Settings → Web search."
    if isinstance(exc, litellm.RateLimitError):
        return f"{who} says too many searches for now ({detail}): wait a while, or read what you found."
    if isinstance(exc, litellm.APIConnectionError) and ("Expecting value" in detail or "JSON" in detail):
        return f"{who} answered with something that is not search results (a sign-in page, a proxy's?): {detail}"
    if isinstance(exc, litellm.APIConnectionError):
        return f"{who} could not be reached ({detail})."
    return f"{who} failed: {detail}"
