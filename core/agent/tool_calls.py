"""Running one tool call and turning what it raised into what the model is told."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace as dataclass_replace
from typing import Any

from core.agent.control import StopRequested
from core.events import ToolCall
from core.tools.context import ToolContext
from core.tools.registry import InvalidCall, ToolError, ToolRegistry

log = logging.getLogger(__name__)


def with_own_ids(calls: tuple[ToolCall, ...], taken: set[str], prefix: str) -> tuple[ToolCall, ...]:
    """The calls, each with an id none in `taken` has (`taken` then holds theirs too). Some
    servers send no ids (a placeholder is made for each reply) or count from 0 in each reply: a
    result then answered two calls, and a provider that checks (Anthropic) refused the history.
    A new id is `prefix_INDEX`, with a number after it if that too is taken."""
    own = []
    for index, call in enumerate(calls):
        if call.id in taken:
            call = dataclass_replace(call, id=next(
                candidate for n in itertools.count()
                if (candidate := f"{prefix}_{index}" + (f"_{n}" if n else "")) not in taken))
        taken.add(call.id)
        own.append(call)
    return tuple(own)


async def tool_outcome(registry: ToolRegistry, name: str, arguments: dict[str, Any], ctx: ToolContext,
                       interruptible: Callable[[Awaitable[str]], Awaitable[str]]) -> tuple[str, str]:
    """(the output or the error message, the error's type: "" when the call succeeded). The
    person's Stop and a cancellation pass through; any other failure is the model's to see."""
    try:
        return await interruptible(registry.call(name, arguments, ctx)), ""
    except InvalidCall as exc:
        return str(exc), "invalid_call"
    except ToolError as exc:
        return str(exc), "error"
    except OSError as exc:  # the system refused (permissions, a name too long, a full disk): not a bug
        where = f" ({exc.filename})" if exc.filename else ""
        return f"The system refused: {exc.strerror or exc}{where}.", "os_error"
    except StopRequested:
        raise
    except Exception as exc:
        log.exception("tool %s raised", name)  # a bug in a tool must not end the session
        return f"{type(exc).__name__}: {exc}", type(exc).__name__
