"""Running one tool call and turning what it raised into what the model is told."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from core.agent.control import StopRequested
from core.tools.context import ToolContext
from core.tools.registry import InvalidCall, ToolError, ToolRegistry

log = logging.getLogger(__name__)


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
