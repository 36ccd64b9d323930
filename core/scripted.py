"""A scripted model at the core/llm.py boundary: for tests, benchmarks and `--selftest`.

It never touches the network. Each reply is produced by the script from the request, so a run
resumed after a crash gets the same replies as the original would have.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.events import ToolCall, Usage
from core.llm import ModelError, ModelReply, ModelRequest, TextSink

Step = ModelReply | ModelError | Callable[[ModelRequest], "ModelReply | ModelError"]


def call(name: str, call_id: str | None = None, **arguments: Any) -> ToolCall:
    """A tool call as a model would send it (arguments as JSON text)."""
    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=json.dumps(arguments, sort_keys=True))


def reply(text: str = "", *calls: ToolCall, prompt_tokens: int = 0, cached_tokens: int = 0) -> ModelReply:
    return ModelReply(text, tuple(calls), Usage(prompt_tokens, len(text) // 4, cached_tokens, 0.0))


@dataclass
class ScriptedModel:
    """Replies by the number of assistant turns already in the request, so the script is positional.

    `steps[i]` answers the request that contains i assistant messages. Requests that do not carry
    tools the loop needs (e.g. the 3-Strike reboot, which sends tool_choice="none") are answered by
    `side_replies` in order.
    """

    steps: Sequence[Step]
    side_replies: list[ModelReply] = field(default_factory=list)
    requests: list[ModelRequest] = field(default_factory=list)
    default: ModelReply | None = None

    async def complete(self, request: ModelRequest, on_text: TextSink | None = None) -> ModelReply:
        self.requests.append(request)
        if request.tool_choice == "none":
            result: ModelReply | ModelError = (
                self.side_replies.pop(0) if self.side_replies else ModelReply('{"answers": "none scripted"}')
            )
        else:
            index = sum(1 for m in request.messages if m.get("role") == "assistant") if self.steps else 0
            if index < len(self.steps):
                step = self.steps[index]
                result = step(request) if callable(step) else step
            elif self.default is not None:
                result = self.default
            else:
                result = ModelReply("", (call("task_done", summary="script exhausted"),))
        if isinstance(result, ModelError):
            raise result
        if on_text and result.text:
            on_text(result.text)
        return result
