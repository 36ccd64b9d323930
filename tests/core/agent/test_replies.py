"""Replies with no call that are not the final answer: tool calls a model wrote into its text (as
local servers that do not parse them hand them over), and a next step announced and not taken."""

from __future__ import annotations

import pytest

from core.agent.replies import announces_a_step, tool_written_as_text
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


@pytest.mark.parametrize("text", [
    "Let me read the config file first.",
    "I understand the task. I'll start by listing the files in the project:",
    "The tests fail on import. Now I will run them again with -x to see the first error.",
    "Let's check what the CSV files hold.",
    "I'm going to **inspect** the build script.",
    "I need the schema. I am going to look at models.py next.",
])
def test_a_next_step_announced_and_not_taken_is_seen(text):
    assert announces_a_step(text)


@pytest.mark.parametrize("text", [
    "Done: report.md holds the summary. Let me know if you need anything else.",
    "The answer is 4.",
    "I'll be glad to go further if you want.",
    "I read the config first, then ran the tests: all 40 pass.",
    "Shall I run the full test suite as well?",  # a question to the person
    "Let me read the config first. The config sets debug=true, so the log is verbose.",
])
def test_an_answer_is_not_taken_for_an_announced_step(text):
    assert not announces_a_step(text)
