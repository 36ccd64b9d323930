"""Processes that stand for a command or a server which outlived Tripane: a quit (unlike a kill)
stops the real ones, so the tests start one in a process group of its own and keep it as Tripane
would have kept the real one."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def stand_in(seconds: int = 60) -> subprocess.Popen:
    """A sleeping process in a process group of its own; the caller kills it."""
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({seconds})"], start_new_session=True)


@contextmanager
def standing_in(seconds: int = 60) -> Iterator[subprocess.Popen]:
    """stand_in, killed (if it still runs) and waited for when the block ends."""
    process = stand_in(seconds)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def kept_as_left_running(session_dir: Path, call_id: str, process: subprocess.Popen) -> None:
    """`process` kept in the session's running/ folder as what the command of `call_id` left
    running in the background (running_calls.RunningCall.left_running)."""
    from core.agent.running_calls import RunningCall

    left = RunningCall(session_dir, call_id)
    left.started(process.pid)
    left.left_running()
