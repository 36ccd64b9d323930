"""Who writes a session's side texts (a compaction's summary, a reflection): the session's summary
model, a cheaper one the person chose, and the session's own model when that one fails (no key, gone,
too small for the text), rather than the text being lost to one refusal."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from core.agent.state import SessionState
from core.llm import ModelClient, ModelError, ModelReply, ModelRequest
from core.secrets import provider_of

log = logging.getLogger(__name__)


def side_writers(state: SessionState) -> list[tuple[str, str | None]]:
    """(model, API base) to try, in order."""
    return chosen_then_own(state.model, state.api_base, state.config.summary_model)


def helper_models(state: SessionState) -> list[tuple[str, str | None]]:
    """(model, API base) a research helper reads with, in order: the helpers' model the person
    chose, then the session's own when that one fails its first request."""
    return chosen_then_own(state.model, state.api_base, state.config.helper_model)


def chosen_then_own(model: str, api_base: str | None, chosen: str | None) -> list[tuple[str, str | None]]:
    """The side model chosen (if any), then `model` itself at its `api_base`."""
    chosen = chosen or model
    # The API base is a server of the model's provider: a side model of another provider (a
    # hosted one beside a local model, say) is reached at its own address.
    writers = [(chosen, api_base if provider_of(chosen) == provider_of(model) else None)]
    if chosen != model:
        writers.append((model, api_base))
    return writers


async def first_reply(client: ModelClient, writers: list[tuple[str, str | None]],
                      request_for: Callable[[str, str | None], ModelRequest],
                      wrap: Callable[[Awaitable[ModelReply]], Awaitable[ModelReply]] | None = None,
                      ) -> tuple[ModelReply | None, str, list[str]]:
    """The first reply with text, the model that wrote it ("" if none), and why each that failed did.
    `wrap`: around each request (the loop makes it stoppable)."""
    failures: list[str] = []
    for model, api_base in writers:
        pending = client.complete(request_for(model, api_base))
        try:
            reply = await (wrap(pending) if wrap else pending)
        except ModelError as exc:
            failures.append(f"{model}: {str(exc).rstrip('.')}")
            log.warning("the side model %s failed: %s", model, exc)
            continue
        if reply.text.strip():
            return reply, model, failures
        failures.append(f"{model}: empty reply")
    return None, "", failures
