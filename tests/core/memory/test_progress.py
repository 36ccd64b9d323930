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


def test_a_long_task_or_message_cut_inside_a_code_block_leaves_the_rest_of_the_log_as_markdown():
    # A PDF dropped on the task: its text, fenced, was cut at 500 characters and left open, so every
    # entry after it in progress.md showed as code.
    from markdown_it import MarkdownIt

    task = "Compare the specs. `/home/me/spec.pdf`:\n```\n" + "[page 1 of 17]\nwords of the spec\n" * 50 + "```\n"
    log = progress.session_started("s1", task, "openai/m") + progress.tool_call(1, "file_list", "{}", True, "a.txt")
    headings = [t.content for t in MarkdownIt().parse(log) if t.type == "inline" and "Turn 1" in t.content]
    assert headings and headings[0].endswith("Turn 1: file_list — ✅ ok")
    assert "```\n… [" in log and "more characters]" in log  # (the notice after the block, not on its fence)
    summary = "Done.\n```\n" + "output line\n" * 500 + "tail\n"  # (cut in two: its start and its end)
    ended = progress.session_ended("done", summary) + progress.phase_changed("1", "2")
    assert any(t.type == "heading_open" for t in MarkdownIt().parse(ended)[3:])
