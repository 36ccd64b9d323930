"""progress.md entries: what a person (and the agent) reads of each step."""

from __future__ import annotations

from core.memory import progress

TEXT = "".join(f"line {i}: café\n" for i in range(200_000))  # 3 MB


def test_a_huge_error_shows_its_start_and_end_and_stays_short():
    entry = progress.error("shell_run", "\n\n   " + TEXT, 1, 3)
    assert "line 0: café" in entry and "line 199999: café" in entry and "characters not shown]" in entry and len(entry) < 2000


def test_a_long_result_in_progress_md_shows_its_start_and_its_verdict():
    run = "".join(f"tests/test_{i}.py::test_case PASSED\n" for i in range(300)) + "===== 299 passed, 1 failed in 9.1s =====\n"
    entry = progress.tool_call(3, "shell_run", '{"command": "pytest"}', False, "Command failed with exit code 1.\n" + run)
    shown = entry.split("**Result**:\n", 1)[1]
    assert shown.startswith("```\nCommand failed with exit code 1.\ntests/test_0.py")
    assert "characters not shown] …\n" in shown and "===== 299 passed, 1 failed in 9.1s =====\n```" in shown
    # Whole lines on each side of the cut, none half shown.
    assert all(line.startswith(("tests/", "Command", "=====", "…", "```")) for line in shown.splitlines() if line)


def test_arguments_with_backticks_read_in_progress_md_as_they_were_sent():
    """A shell command's `date` (or Markdown in a finding) was logged with apostrophes in their place."""
    from markdown_it import MarkdownIt

    arguments = '{"command": "echo `date` and ``two``"}'
    entry = progress.tool_call(4, "shell_run", arguments, True, "[exit code 0]")
    line = next(line for line in entry.splitlines() if line.startswith("**Arguments**"))
    code = MarkdownIt().parseInline(line.removeprefix("**Arguments**: "))[0].children
    assert [(token.type, token.content) for token in code] == [("code_inline", arguments)]
    plain = progress.tool_call(5, "file_read", '{"path": "a.py"}', True, "x")
    assert '**Arguments**: `{"path": "a.py"}`' in plain
