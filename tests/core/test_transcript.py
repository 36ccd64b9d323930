"""A session as Markdown, for people to read where they paste it."""

from __future__ import annotations

from core.events import (
    AssistantMessage,
    ErrorRecorded,
    HumanAnswer,
    HumanQuestion,
    Record,
    SessionEnded,
    SessionStarted,
    ToolCall,
    ToolResult,
    UserMessage,
)
from core.text import fenced
from core.transcript import OUTPUT_CHARS, transcript


def records() -> list[Record]:
    events = [
        SessionStarted(task="Fix the date tests\n\nKeep the assertions.", model="openai/gpt-4o-mini", workdir="/w",
                       reasoning_effort="low"),
        AssistantMessage("I'll run the tests.", (ToolCall("c1", "shell_run", '{"command": "pytest -q"}'),), turn=1,
                         reasoning="The failing test is about offsets. Run it first."),
        ToolResult("c1", "shell_run", False, "E   assert None is not None\n" + "x" * (OUTPUT_CHARS + 500),
                   offload_path="offload/c1.txt"),
        ErrorRecorded("shell_run:error", "Command failed with exit code 1.", 1, tool="shell_run"),
        AssistantMessage("", (ToolCall("c2", "file_write", '{"path": "README.md", "content": "```python\\nx\\n```"}'),),
                         turn=2),
        ToolResult("c2", "file_write", True, "Wrote README.md:\n```python\nx\n```"),
        HumanQuestion("q1", "three_strike", "The same error happened 3 times. How should the agent go on?",
                      ("retry_with_hint", "skip_step", "stop")),
        HumanAnswer("q1", "retry_with_hint", "Read dates/tz.py first"),
        UserMessage("Also keep the changelog."),
        SessionEnded("done", "date tests pass"),
    ]
    return [Record("20261126-000000-abcd", seq, "2026-11-26T01:02:03.000+00:00", event)
            for seq, event in enumerate(events, 1)]


def test_a_transcript_reads_as_the_conversation_went():
    text = transcript(records(), "Fix the date tests")
    assert text.startswith("# Fix the date tests\n\n*Session `20261126-000000-abcd`, model `openai/gpt-4o-mini`, "
                           "reasoning effort low, work folder `/w`, started 2026-11-26 01:02 UTC.*\n\n"
                           "<details><summary>At a glance</summary>\n\n| | |\n| --- | --- |\n| State | ended: done — "
                           "date tests pass |\n")
    assert "| Tool calls | 2, 1 failed: shell_run 1 (1 failed), file_write 1 |\n" in text  # (core/summary.py)
    assert ("|\n\n</details>\n\n## You\n\nFix the date tests\n\nKeep the assertions.\n\n"
            "## Agent (turn 1)\n\n") in text
    assert ("<details><summary>Thought (9 words)</summary>\n\nThe failing test is about offsets. Run it first.\n\n"
            "</details>\n\nI'll run the tests.\n\n**shell_run** ✗ failed") in text
    output = records()[2].event.content
    assert (f"\n… {len(output) - OUTPUT_CHARS:,} more characters\n```\n\n"
            "*The whole output: `offload/c1.txt` in the session's folder.*") in text  # cut, and where it all is
    assert "> ⚠ Error, attempt 1: shell_run failed: Command failed with exit code 1\n" in text
    assert "> **? Question** (3-Strike): The same error happened 3 times." in text
    assert "> ↳ You answered **Retry with a hint** — Read dates/tz.py first" in text
    assert "## You\n\nAlso keep the changelog." in text
    assert text.endswith("**■ Ended, done**: date tests pass\n")
    # An output holding a code block stays inside its own: the fence is longer than its backticks.
    assert "````\nWrote README.md:\n```python\nx\n```\n````" in text


def test_a_fence_is_longer_than_any_run_of_backticks_inside():
    assert fenced("plain") == "```\nplain\n```"
    assert fenced("a ``````` b", "json").startswith("````````json\n")
