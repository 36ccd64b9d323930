"""A tool call written into a reply's text instead of made as a call.

A local model whose server does not parse its tool calls (llama.cpp without --jinja, vLLM without
the model's --tool-call-parser, a parser that fails on one call) hands them over as text: Qwen's
`<tool_call>{"name": …}</tool_call>`, Llama's bare `{"name": …, "parameters": …}`, Mistral's
`[TOOL_CALLS]`, Qwen3-Coder's `<function=…>`. A reply with text and no call is the agent's final
answer, so such a run ended "done" at its first step, with a JSON blob for its summary.
"""

from __future__ import annotations

import re
from collections.abc import Collection

# The markers chat templates wrap a call in; a known tool's name after one of them is a call.
MARKERS = ("<tool_call>", "[TOOL_CALLS]", "<|tool_call|>", "<|python_tag|>", "<｜tool▁call", "<tool_calls>")
_FUNCTION_TAG = re.compile(r"<function=([\w.\-]+)>")
# A JSON object naming a tool, as Llama 3.x writes one: {"name": "file_read", "parameters": {…}}.
_NAMED = re.compile(r'"(?:name|function|tool_name)"\s*:\s*"([\w.\-]+)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters|args|input)"\s*:\s*\{')
_WORD = re.compile(r"[A-Za-z_][\w]*")


def tool_written_as_text(text: str, tools: Collection[str]) -> str | None:
    """The tool `text` calls in writing (a known tool's name in a call's form), or None: a final
    answer that names a tool in prose, or shows other JSON, is not a call."""
    for match in _FUNCTION_TAG.finditer(text):
        if (name := _bare(match.group(1))) in tools:
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


def _bare(name: str) -> str:
    """`functions.file_read` (how some templates spell a call) is file_read."""
    return name.rsplit(".", 1)[-1]
