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
from core.llm import CallSink, ModelError, ModelReply, ModelRequest, RetrySink, TextSink

Step = ModelReply | ModelError | Callable[[ModelRequest], "ModelReply | ModelError"]


def call(name: str, call_id: str | None = None, **arguments: Any) -> ToolCall:
    """A tool call as a model would send it (arguments as JSON text)."""
    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=json.dumps(arguments, sort_keys=True))


def reply(text: str = "", *calls: ToolCall, prompt_tokens: int = 0, cached_tokens: int = 0) -> ModelReply:
    return ModelReply(text, tuple(calls), Usage(prompt_tokens, len(text) // 4, cached_tokens, 0.0))


@dataclass
class ScriptedModel:
    """Replies in order: `steps[i]` answers the i-th request of the agent loop.

    Side requests — the 3-Strike reboot (tool_choice "none") and compaction summaries (no tools) —
    are answered by `side_replies` in order instead, so they do not shift the script.
    """

    steps: Sequence[Step]
    side_replies: list[ModelReply] = field(default_factory=list)
    requests: list[ModelRequest] = field(default_factory=list)
    default: ModelReply | None = None
    _main_calls: int = 0

    async def complete(self, request: ModelRequest, on_text: TextSink | None = None,
                       on_retry: RetrySink | None = None, on_reasoning: TextSink | None = None,
                       on_call: CallSink | None = None) -> ModelReply:
        self.requests.append(request)
        if request.tool_choice == "none" or not request.tools:
            result: ModelReply | ModelError = (
                self.side_replies.pop(0) if self.side_replies else ModelReply('{"answers": "none scripted"}')
            )
        else:
            index = self._main_calls
            self._main_calls += 1
            if index < len(self.steps):
                step = self.steps[index]
                result = step(request) if callable(step) else step
            elif self.default is not None:
                result = self.default
            else:
                result = ModelReply("", (call("task_done", summary="script exhausted"),))
        if isinstance(result, ModelError):
            raise result
        if on_reasoning and result.reasoning:
            on_reasoning(result.reasoning)
        if on_text and result.text:
            on_text(result.text)
        for tool_call in result.tool_calls if on_call else ():
            on_call(tool_call.name, tool_call.arguments)
        return result
