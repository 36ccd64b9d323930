"""The work folder's git state at the start of a session, among the agent's facts."""

from __future__ import annotations

import subprocess

from core.git_state import git_state
from core.scripted import ScriptedModel, call, reply
from tests.core.helpers import make_session
from tests.support.marks import needs_git

pytestmark = needs_git


def git(folder, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=folder, check=True,
                   capture_output=True)


async def test_the_agent_is_told_the_branch_and_the_changes_not_committed_when_the_session_starts(
        store, data_dir, workdir):
    # Not told, an agent neither looked at `git diff` for what it changed, nor knew the person had
    # work of their own in progress.
    git(workdir, "init", "-b", "main")
    (workdir / "app.py").write_text("x = 1\n", encoding="utf-8")
    assert git_state(workdir) == "no commit yet, on branch main; nothing changed since the last commit"
    git(workdir, "add", "app.py")
    git(workdir, "commit", "-m", "first")
    (workdir / "app.py").write_text("x = 2\n", encoding="utf-8")
    (workdir / "notes.txt").write_text("untracked: not counted\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model)
    assert await session.run() == "done"
    facts = model.requests[0].messages[0]["content"].split("# This session", 1)[1]
    assert ("\n- Git: branch main; 1 file changed and not committed (the person's work, or earlier), when the "
            "session started\n") in facts


def test_a_folder_outside_any_repository_says_nothing(tmp_path):
    assert git_state(tmp_path) == ""
