"""Finding a model to talk to: a local Ollama server, and a one-message connection test."""

from __future__ import annotations

import logging

from core.llm import ModelClient, ModelError, ModelRequest

log = logging.getLogger(__name__)
OLLAMA_BASE = "http://127.0.0.1:11434"


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


async def test_connection(client: ModelClient, model: str, api_base: str | None = None) -> str:
    """One tiny request. Returns what the model said; raises ModelError in plain words otherwise."""
    if not model.strip():
        raise ModelError("bad_request", "No model is set. Enter a litellm model string, e.g. openai/gpt-4o-mini.")
    request = ModelRequest(model=model.strip(), api_base=api_base or None, max_tokens=8, timeout_s=20.0,
                           messages=[{"role": "user", "content": "Reply with the single word: ready"}])
    reply = await client.complete(request)
    return reply.text.strip() or "(an empty reply, but the connection works)"
