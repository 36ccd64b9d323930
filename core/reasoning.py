"""A reasoning model's thinking, told apart from its answer.

Reasoning models think before they answer. Hosted APIs and servers started with a reasoning
parser send the thinking in a field of its own (`reasoning_content`, or `reasoning`); others
(llama.cpp without one, many local setups of Qwen3, DeepSeek-R1, QwQ) send it inside the text, as
`<think>…</think>` before the answer, or only the closing tag when the chat template opened it.

Kept in the answer, the thinking was shown as the reply and sent back with every later request: a
few thousand tokens a turn that the model does not need again, in an agent that runs for dozens
of turns. It is kept apart: stored with the reply for the person to read, and not part of the
history the model sees, except where the provider needs it back (SENT_BACK_BY).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from core.secrets import provider_of

OPEN, CLOSE = "<think>", "</think>"
# Providers whose thinking models must have the thinking of a turn that called tools sent back in
# every later request (DeepSeek: "the API will return a 400 error" without it; litellm fills in a
# blank, which leaves the model without its own reasoning). Every other provider is sent none.
SENT_BACK_BY = {"deepseek"}
SENT_BACK_TO_HOSTS = ("deepseek.com",)  # the same API reached as an OpenAI-compatible one


def passes_reasoning_back(model: str, api_base: str | None = None) -> bool:
    """Whether the thinking of a turn that called tools is sent back: to DeepSeek, whether it is
    named as `deepseek/…` or as `openai/deepseek-reasoner` with its API base (the second way
    litellm fills in no blank for it, and the second request with tools is refused)."""
    host = (urlparse(api_base).hostname or "") if api_base else ""
    return provider_of(model) in SENT_BACK_BY or any(host == h or host.endswith("." + h) for h in SENT_BACK_TO_HOSTS)


def without_reasoning(messages: list[dict]) -> list[dict]:
    """The messages with no thinking in them, for a provider that takes none (a session whose
    model was changed from DeepSeek's to another's)."""
    if not any("reasoning_content" in message for message in messages):
        return messages
    return [{k: v for k, v in message.items() if k != "reasoning_content"} for message in messages]


# How hard a reasoning model thinks, in litellm's words (OpenAI's reasoning_effort; for Claude up to
# 4.5 and Gemini litellm makes it a thinking budget of 1,024 / 2,048 / 4,096 tokens; later Claude
# models take it as it is). "": as the model does unasked (Claude up to 4.6: no thinking; Sonnet 5
# and later think; OpenAI's and Gemini's reasoning models: their default).
EFFORTS = ("", "low", "medium", "high")


def check_effort(effort: str) -> None:
    if effort not in EFFORTS:
        raise ValueError(f"the reasoning effort must be low, medium or high (or empty: the model's own), not {effort!r}")


# Where litellm serves Claude in Anthropic's own format, besides Anthropic: Amazon's, Google's and
# Microsoft's clouds.
CLAUDE_CLOUDS = ("bedrock", "vertex_ai", "azure_ai")


def signs_thinking(model: str) -> bool:
    """Claude, wherever it is served: it signs its thinking, and with thinking on it must be sent
    back the thinking of the reply whose calls a request answers, signature and all ("a final
    assistant message must start with a thinking block")."""
    provider = provider_of(model)
    return provider == "anthropic" or (provider in CLAUDE_CLOUDS and "claude" in model.lower())


# The key a history message names the model that wrote its thinking blocks under; never sent.
THINKING_MODEL = "thinking_model"


def signed_thinking_for(messages: list[dict], model: str) -> list[dict]:
    """The messages as `model` is sent them: Claude's thinking blocks only with the replies that
    model wrote (a signature is its model's own; another Claude model refuses the request, "Invalid
    signature in thinking block"), none to another provider, and the writer's name to nobody.
    OpenRouter's reasoning details alike: to the model through OpenRouter that wrote them (Gemini's
    encrypted thinking there is refused without them, and means nothing to another model)."""
    if not any(THINKING_MODEL in message for message in messages):
        return messages
    return [_as_sent_to(message, model) if THINKING_MODEL in message else message for message in messages]


def _as_sent_to(message: dict, model: str) -> dict:
    same = message[THINKING_MODEL] == model
    dropped = {THINKING_MODEL}
    if not (same and signs_thinking(model)):
        dropped.add("thinking_blocks")
    if not (same and provider_of(model) == "openrouter"):
        dropped.add("reasoning_details")
    return {k: v for k, v in message.items() if k not in dropped}


def answers_calls_without_thinking(messages: list[dict]) -> bool:
    """Whether the request answers calls of a reply that has no thinking: Claude, asked to think,
    refuses such a request (thinking switched on, or the model changed, in the middle of the
    agent's work; a Tripane run ends with a call, task_done, so the next message answers one too)."""
    for message in reversed(messages):
        if message.get("role") == "assistant":
            return bool(message.get("tool_calls")) and not message.get("thinking_blocks")
    return False


def calls_written_out(messages: list[dict]) -> list[dict]:
    """The messages with the last reply's calls, and their results, written as text: a request
    Claude thinks in although the reply it answers had no thinking. Only that one request is sent
    so (the history keeps the calls); its reply has thinking, and the next goes as it is."""
    last = max(index for index, message in enumerate(messages) if message.get("role") == "assistant")
    reply = messages[last]
    calls = reply.get("tool_calls") or []
    names = {call["id"]: call["function"]["name"] for call in calls}
    said = [reply.get("content") or "",
            *(f"[I called {call['function']['name']} with {call['function']['arguments']}]" for call in calls)]
    written = [*messages[:last], {"role": "assistant", "content": "\n".join(part for part in said if part)}]
    for message in messages[last + 1:]:
        if message.get("role") == "tool":
            name = names.get(message.get("tool_call_id"), "the call")
            message = {"role": "user", "content": f"[Result of {name}]\n{message.get('content') or '(empty)'}"}
        written.append(message)
    return written


def block_of(pieces: dict[str, Any]) -> dict[str, Any]:
    """A thinking block as Claude sent it, from its streamed pieces: its text and signature, or
    the encrypted data of a redacted one. litellm's stream position (`index`) is not part of it."""
    if pieces.get("type") == "redacted_thinking":
        return {"type": "redacted_thinking", "data": pieces.get("data", "")}
    return {"type": "thinking", "thinking": pieces.get("thinking", ""), "signature": pieces.get("signature", "")}


def add_reasoning_detail(details: list[dict[str, Any]], piece: Any) -> None:
    """One streamed piece of OpenRouter's reasoning details, joined to the detail it continues
    (the same type at the same index: its text and summary go on) or added as a new one."""
    piece = dict(piece) if isinstance(piece, dict) else {}
    if not piece:
        return
    last = details[-1] if details else None
    if last is not None and last.get("type") == piece.get("type") and last.get("index") == piece.get("index"):
        for key, value in piece.items():
            if key in ("text", "summary") and isinstance(value, str):
                last[key] = last.get(key, "") + value
            elif value not in (None, ""):
                last[key] = value
        return
    details.append(piece)


def thinking_hidden(reasoning: str, blocks: tuple[dict[str, Any], ...]) -> bool:
    """Whether a reply's thinking is there but cannot be read: only redacted blocks (Claude's
    safety systems encrypt thinking now and then; it still goes back to Claude as it came)."""
    return not reasoning and any(block.get("type") == "redacted_thinking" for block in blocks)


class ThinkSplitter:
    """Splits a streamed text into (answer, reasoning) pieces as it arrives: a `<think>` block at
    the very start is reasoning. A tag cut between two chunks is held back until it is whole."""

    def __init__(self) -> None:
        self._state = "start"  # start (only whitespace so far) | inside (<think>) | after (</think>) | answer
        self._held = ""
        self.opened = False  # a <think> block was seen

    def feed(self, text: str) -> tuple[str, str]:
        self._held += text
        answer: list[str] = []
        reasoning: list[str] = []
        while self._held:
            if self._state == "start":
                stripped = self._held.lstrip()
                if stripped.startswith(OPEN):
                    self._held, self._state, self.opened = stripped[len(OPEN):], "inside", True
                elif not stripped or OPEN.startswith(stripped):
                    break  # whitespace, or the start of a tag: wait for more
                else:
                    self._state = "answer"
            elif self._state == "inside":
                end = self._held.find(CLOSE)
                if end >= 0:
                    reasoning.append(self._held[:end])
                    self._held, self._state = self._held[end + len(CLOSE):], "after"
                    continue
                keep = _partial_tag_length(self._held, CLOSE)
                reasoning.append(self._held[:len(self._held) - keep])
                self._held = self._held[len(self._held) - keep:]
                break
            elif self._state == "after":  # the blank lines between the thinking and the answer
                self._held = self._held.lstrip()
                if self._held:
                    self._state = "answer"
            else:
                answer.append(self._held)
                self._held = ""
        return "".join(answer), "".join(reasoning)

    def finish(self) -> tuple[str, str]:
        """What was held back when the text ends: an unclosed <think> (the reply was cut off while
        thinking) is all reasoning; anything else is answer."""
        held, self._held = self._held, ""
        if self._state == "inside":
            return "", held
        return ("", "") if self._state == "after" else (held, "")


def split_reasoning(answer: str, reasoning: str, opened: bool) -> tuple[str, str]:
    """The whole reply, once more: a chat template that opens the <think> block itself leaves only
    its closing tag in the text, with the thinking before it."""
    if opened or CLOSE not in answer:
        return answer, reasoning
    before, _, after = answer.partition(CLOSE)
    return after.lstrip(), (reasoning + before).strip()


def _partial_tag_length(text: str, tag: str) -> int:
    """How many characters at the end of `text` could be the start of `tag`."""
    for length in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(text[-length:]):
            return length
    return 0
