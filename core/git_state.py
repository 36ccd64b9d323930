"""Whether the work folder is a git repository, on which branch, and with how many changes not
committed, when a session starts: a fact of the session for the agent (core/context/session_facts.py).

An agent that does not know the folder is under git neither looks at `git diff` to see what it
changed nor knows that the person had work of their own in progress before it began.
"""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

from core.snapshot import git_environment

log = logging.getLogger(__name__)

STATUS_TIMEOUT_S = 1.5  # a huge repository's status may take long: then it is not said (the window waits for it at Start)


def git_state(workdir: Path) -> str:
    """"branch main; 3 files changed since the last commit" (tracked files only), or "" when the
    folder is not in a git repository, git is missing, or it does not answer in time."""
    try:
        done = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "status", "--porcelain=v1", "--branch", "--untracked-files=no",
             "--ignore-submodules=all"],
            cwd=workdir, capture_output=True, timeout=STATUS_TIMEOUT_S,
            env={**git_environment(), "GIT_OPTIONAL_LOCKS": "0"},  # (a status that writes no lock or index)
            creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("the work folder's git state was not read: %s", exc)
        return ""
    if done.returncode != 0:  # not a repository (or a broken one): nothing to say
        return ""
    head, *changed = done.stdout.decode("utf-8", "replace").splitlines()
    branch = _branch(head.removeprefix("## "))
    count = len(changed)
    state = (f"{count:,} file{'s' * (count != 1)} changed and not committed (the person's work, or earlier)"
             if count else "nothing changed since the last commit")
    return f"{branch}; {state}"


def _branch(head: str) -> str:
    """The branch line of `git status --branch` as words: "branch main", "no commit yet on branch
    main", "a detached HEAD"."""
    if head.startswith("No commits yet on "):
        return f"no commit yet, on branch {head.removeprefix('No commits yet on ')}"
    if head.startswith("HEAD (no branch)"):
        return "a detached HEAD (no branch)"
    return f"branch {head.split('...', 1)[0]}"
