"""Tool calls a model wrote into its text, as local servers that do not parse them hand them over."""

from __future__ import annotations

import pytest

from core.agent.replies import tool_written_as_text
from core.tools.builtin import builtin_registry

TOOLS = builtin_registry().specs


@pytest.mark.parametrize("text, tool", [
    ('<tool_call>\n{"name": "file_list", "arguments": {"path": "."}}\n</tool_call>', "file_list"),  # Qwen, Hermes
    ('{"name": "file_read", "parameters": {"path": "app.py"}}', "file_read"),  # Llama 3.x
    ('{"type": "function", "name": "functions.shell_run", "parameters": {"command": "ls"}}', "shell_run"),
    ('[TOOL_CALLS][{"name": "file_search", "arguments": {"pattern": "config"}}]', "file_search"),  # Mistral
    ("<tool_call>\n<function=file_write>\n<parameter=path>\nout.md\n</parameter>\n</function>\n</tool_call>",
     "file_write"),  # Qwen3-Coder
    ('I will look first.\n\n```json\n{"name": "file_list", "arguments": {}}\n```', "file_list"),
    ('<|channel|>commentary to=functions.file_read <|constrain|>json<|message|>{"path": "a.py"}', "file_read"),
])
def test_a_call_written_as_text_is_recognised(text, tool):
    assert tool_written_as_text(text, TOOLS) == tool


@pytest.mark.parametrize("text", [
    "I used file_read on app.py: the config is read from settings.toml, once, at start.",
    'The config file holds {"name": "app", "parameters": {"debug": true}}: debug is on.',
    '<tool_call>{"name": "make_coffee", "arguments": {}}</tool_call>',  # no such tool: the answer stands
    "Done. The report is in report.md.",
])
def test_an_answer_that_names_tools_or_shows_json_is_not_a_call(text):
    assert tool_written_as_text(text, TOOLS) is None
