"""The README's two commands, parsed from the README, run as a new user would: in a fresh virtual
environment, from a copy of the repository.

Command 1 must leave the window running (it is a GUI: the test lets it run offscreen for a while,
checks it is alive and that it created its data folder, then closes it). Command 2, as written, runs
pytest in that environment: there it collects the whole suite (every test module imports, so every
dependency installed) and runs a few tests of the core and of the window. Running the whole suite
again there doubled CI's time (the suite runs once already, in CI's own fresh environment, from the
same command) and pushed it near its 30 minutes.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INNER = "TRIPANE_README_TEST_INNER"
# What command 2 runs inside: the core's text helpers, and the installed app's window running a
# scripted task offscreen (a real process).
INNER_RUN = ("tests/core/test_text.py", "tests/gui/test_selftest.py")


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL).group(1)
    return [line.strip() for line in block.splitlines() if line.strip() and not line.startswith("#")]


def test_the_readme_has_two_commands_one_to_run_and_one_to_test():
    run, test = readme_commands()
    assert run.endswith("tripane") and "pip install" in run
    assert test.endswith("python -m pytest") and ".[test]" in test


@pytest.mark.slow
# It installs Tripane, runs a few tests there and collects the rest: the suite's 300 s guard
# against a hung test is for one test, not for this one (its own waits below bound it).
@pytest.mark.timeout(1900)
@pytest.mark.skipif(os.environ.get(INNER) == "1", reason="already inside the README test's own run of the suite")
def test_the_readme_commands_work_in_a_fresh_virtual_environment(tmp_path):
    clone = tmp_path / "tripane"
    shutil.copytree(ROOT, clone, ignore=shutil.ignore_patterns(".git", ".ci", ".build", "build", "dist", "*.egg-info",
                                                               "__pycache__", ".pytest_cache", "venv", ".venv"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(env_dir),
           "QT_QPA_PLATFORM": "offscreen", "TRIPANE_DATA_DIR": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           INNER: "1",
           # (pytest reads this as the start of its command line: these files are what it runs)
           "PYTEST_ADDOPTS": " ".join(INNER_RUN)}
    env.pop("PYTHONPATH", None)
    run, test = readme_commands()

    window = subprocess.Popen(run, shell=True, cwd=clone, env=env, start_new_session=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 600  # the install takes most of it
        while time.monotonic() < deadline and window.poll() is None and not (tmp_path / "data" / "tripane.db").exists():
            time.sleep(0.5)
        time.sleep(3)
        assert window.poll() is None, window.stdout.read()  # still running: the window is up
        assert (tmp_path / "data" / "tripane.db").exists()
    finally:
        os.killpg(window.pid, signal.SIGTERM)
        window.wait(timeout=30)

    result = subprocess.run(test, shell=True, cwd=clone, env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert re.search(r"\d+ passed", result.stdout) and " failed" not in result.stdout
    collected = subprocess.run("python -m pytest --collect-only -q", shell=True, cwd=clone,
                               env={**env, "PYTEST_ADDOPTS": ""}, capture_output=True, text=True, timeout=600)
    assert collected.returncode == 0, collected.stdout[-3000:] + collected.stderr[-3000:]
    assert int(re.search(r"(\d+) tests? collected", collected.stdout).group(1)) > 900  # the whole suite imports
