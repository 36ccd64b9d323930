"""The agent's notebook tools on real files: findings.md as it grows."""

from __future__ import annotations

from core.memory.working import FINDINGS, WorkingMemory
from core.tools.context import ToolContext
from core.tools.notebook import findings_add


async def test_the_same_finding_twice_is_kept_once_and_the_agent_is_told(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    memory = WorkingMemory(tmp_path / "session")
    memory.create(title="Fix add()", task="Fix add() in calc.py")
    ctx = ToolContext(workdir=work, session_dir=tmp_path / "session", memory=memory)
    _, start = memory.read(FINDINGS)
    first = await findings_add(ctx, "add() subtracts", "calc.py:2 returns a - b.")
    again = await findings_add(ctx, " add() subtracts ", "calc.py:2 returns a - b.\n")
    other = await findings_add(ctx, "add() subtracts", "calc.py:2 returns a - b; tests expect a + b.")
    text, version = ctx.memory.read(FINDINGS)
    assert first.startswith("Finding recorded") and other.startswith("Finding recorded")
    assert again == f"Already in findings.md (version {start + 1}) with this title and text; nothing added."
    assert text.count("] add() subtracts") == 2 and version == start + 2
    assert len(ctx.events) == 2  # no file change was recorded for the repeat
