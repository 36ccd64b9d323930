"""Finding a model to talk to: a local Ollama server, and a one-message connection test."""

from __future__ import annotations

import logging

from core.llm import ModelClient, ModelError, ModelRequest, context_window, is_ollama

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


def ollama_window(model: str, api_base: str | None = None, timeout_s: float = 3.0) -> int:
    """The context to ask an Ollama model for: its trained length from /api/show, at most
    LOCAL_WINDOW; LOCAL_WINDOW when the server does not say. Blocking: call it from a thread."""
    import httpx

    name = model.split("/", 1)[-1]
    try:
        response = httpx.post(f"{(api_base or OLLAMA_BASE).rstrip('/')}/api/show", json={"model": name},
                              timeout=timeout_s)
        response.raise_for_status()
        info = response.json().get("model_info") or {}
        trained = int(info.get(f"{info.get('general.architecture')}.context_length") or 0)
    except (httpx.HTTPError, ValueError, AttributeError, TypeError) as exc:
        log.info("Ollama did not say how long %s's context is (%s); asking for %s tokens", name, exc, LOCAL_WINDOW)
        return LOCAL_WINDOW
    return min(trained, LOCAL_WINDOW) if trained > 0 else LOCAL_WINDOW


def model_window(model: str, api_base: str | None = None) -> int:
    """The context window to budget for when the person has not set one: asked of a local Ollama
    server, else litellm's bundled model map. Blocking: call it from a thread."""
    return ollama_window(model, api_base) if is_ollama(model) else context_window(model)


async def test_connection(client: ModelClient, model: str, api_base: str | None = None) -> str:
    """One tiny request. Returns what the model said; raises ModelError in plain words otherwise."""
    if not model.strip():
        raise ModelError("bad_request", "No model is set. Enter a litellm model string, e.g. openai/gpt-4o-mini.")
    request = ModelRequest(model=model.strip(), api_base=api_base or None, max_tokens=8, timeout_s=20.0,
                           messages=[{"role": "user", "content": "Reply with the single word: ready"}])
    reply = await client.complete(request)
    return reply.text.strip() or "(an empty reply, but the connection works)"
