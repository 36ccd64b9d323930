"""A reply with no tool call: the agent's final answer, or why it is not one.

A reply with text and no call ends the run, its text the answer. Not when the provider stopped it
short (a content filter, the output limit), when it is empty, or when it is a tool call written as
text: a local model whose server does not parse its tool calls (llama.cpp without --jinja, vLLM
without the model's --tool-call-parser, a parser that fails on one call) hands them over as text —
Qwen's `<tool_call>{"name": …}</tool_call>`, Llama's bare `{"name": …, "parameters": …}`,
Mistral's `[TOOL_CALLS]`, Qwen3-Coder's `<function=…>`, gpt-oss's `to=functions.…` — and such a
run ended "done" at its first step, with a JSON blob for its summary. Nor when it ends by saying
what the agent will do next ("Let me read the config first.") and does not do it: smaller models
narrate a step and stop, and such a run ended "done" before it began.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from core.llm import ModelReply

# The markers chat templates wrap a call in; a known tool's name after one of them is a call.
MARKERS = ("<tool_call>", "[TOOL_CALLS]", "<|tool_call|>", "<|python_tag|>", "<｜tool▁call", "<tool_calls>")
# Qwen3-Coder's XML calls; gpt-oss's harmony format leaking through a failed parse
# ("<|channel|>commentary to=functions.file_read <|constrain|>json<|message|>{…}").
_FUNCTION_TAG = re.compile(r"<function=([\w.\-]+)>|\bto=functions\.([\w\-]+)")
# A JSON object naming a tool, as Llama 3.x writes one: {"name": "file_read", "parameters": {…}}.
_NAMED = re.compile(r'"(?:name|function|tool_name)"\s*:\s*"([\w.\-]+)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters|args|input)"\s*:\s*\{')
_WORD = re.compile(r"[A-Za-z_][\w]*")


def tool_written_as_text(text: str, tools: Collection[str]) -> str | None:
    """The tool `text` calls in writing (a known tool's name in a call's form), or None: a final
    answer that names a tool in prose, or shows other JSON, is not a call."""
    for match in _FUNCTION_TAG.finditer(text):
        if (name := _bare(match.group(1) or match.group(2))) in tools:
            return name
    for marker in MARKERS:
        start = text.find(marker)
        if start >= 0:
            for word in _WORD.findall(text[start + len(marker):start + len(marker) + 400]):
                if word in tools:
                    return word
    if _ARGUMENTS.search(text):
        for match in _NAMED.finditer(text):
            if (name := _bare(match.group(1))) in tools:
                return name
    return None


# The last sentence of a reply announcing the agent's next action: "Let me read …", "I'll start by
# …", "Now I will run …". Not "Let me know …", and not a future of being ("I'll be glad to …").
_ANNOUNCED = re.compile(
    r"\b(?:let me|let's|let us|i'll|i will|i am going to|i'm going to)\s+(?:now\s+|first\s+|then\s+|next\s+)?"
    r"(?:start|begin|read|check|look|open|run|list|search|grep|write|create|make|examine|inspect|explore|fetch|"
    r"edit|update|modify|fix|implement|test|try|verify|analy[sz]e|review|add|install|use|call|find|go|proceed|"
    r"continue|investigate|scan|view|load|download|set up|build|compile|execute)\b",
    re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_EMPHASIS = re.compile(r"[*_`]+")  # Markdown's: "I'll **read** it."


def announces_a_step(text: str) -> bool:
    """Whether `text` ends by announcing an action (its last sentence: "… Let me read the tests
    first." or "I'll start by listing the files:"), which a reply with no call then does not take."""
    last = _EMPHASIS.sub("", _SENTENCE_END.split(text.strip())[-1])
    return bool(_ANNOUNCED.search(last)) and "?" not in last


def _bare(name: str) -> str:
    """`functions.file_read` (how some templates spell a call) is file_read."""
    return name.rsplit(".", 1)[-1]


def not_an_answer(reply: ModelReply, tools: Collection[str]) -> tuple[str, str] | None:
    """Why `reply` (no tool call in it) is not the agent's final answer: the error's kind and what
    the agent is told. None: it is the answer."""
    text = reply.text.strip()
    cut_off = reply.finish_reason == "length"
    if reply.finish_reason == "content_filter":  # OpenAI's filter, Claude's refusal, Gemini's safety stop
        return "filtered", ("The provider's content filter stopped your reply" + (" before it ended" if text else "")
                            + ", so it is not taken as your final answer. Go on another way, or ask the person "
                            "with human_ask.")
    if not text:
        what = ("The model's reply held only its thinking: no answer and no tool call"
                + (" (it reached the output limit while thinking). " if cut_off else
                   " (cut off at the output limit, perhaps). ")
                if reply.reasoning.strip() else
                # Gemini answers a call it could not parse (long arguments full of quotes, often)
                # with nothing at all (MALFORMED_FUNCTION_CALL, which litellm reports as a stop).
                "The model sent an empty reply: no text and no tool call (a call the provider could not "
                "parse arrives as nothing; if you made a long one, make it in smaller parts). ")
        return "empty_reply", what + "Continue the task with a tool call, or call task_done."
    if cut_off:
        return "cut_off", ("Your reply reached the output limit before it ended, so it is not taken as your "
                           "final answer. Go on from where it stopped, in a shorter reply, or call task_done.")
    if written := tool_written_as_text(reply.text, tools):
        return "call_as_text", (
            f"Your reply wrote a call to {written!r} as text, so nothing was run, and it is not taken as your "
            "final answer. Make each tool call as a call, not in your reply's text; to finish, call "
            "task_done. (If this goes on, the server running the model is not turning its tool calls into "
            "calls: llama.cpp needs --jinja, vLLM --enable-auto-tool-choice with the model's "
            "--tool-call-parser.)")
    if announces_a_step(text):
        return "announced", ("Your reply said what you will do next but made no tool call, so nothing was run, "
                             "and it is not taken as your final answer. Make the call now; when the task is "
                             "done, call task_done.")
    return None
