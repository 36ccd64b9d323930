"""`tripane --selftest`, as an installer runs it after building a bundle: a real process, exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_selftest_runs_a_scripted_task_through_the_window_and_exits_0(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-m", "core.cli", "--selftest"], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("selftest ok")
