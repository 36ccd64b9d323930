"""The computer kept from sleeping for idleness while an agent works, and let sleep otherwise.

On Linux Tripane runs `systemd-inhibit … cat`; here a stand-in of the same name on PATH (there is
no logind to ask in a test) records how it was started and lives, as the real one does, as long
as its command: `cat`, reading the pipe from Tripane."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core import stay_awake
from core.scripted import ScriptedModel, call, reply
from core.stay_awake import CommandInhibitor, StayAwake, inhibitor_for_this_system
from tests.core.helpers import make_session, wait_for_question

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="systemd-inhibit is Linux's (the others: their APIs)")


@pytest.fixture
def logind(tmp_path, monkeypatch):
    """A stand-in systemd-inhibit first on PATH; the lines it logs, each its arguments and pid."""
    folder = tmp_path / "bin"
    folder.mkdir()
    started = tmp_path / "inhibits.log"
    script = folder / "systemd-inhibit"
    script.write_text(f"#!{sys.executable}\n" + textwrap.dedent(f"""\
        import json, os, subprocess, sys
        with open({str(started)!r}, "a") as log:
            log.write(json.dumps({{"args": sys.argv[1:], "pid": os.getpid()}}) + "\\n")
        if os.environ.get("NO_LOGIND"):
            sys.exit("Failed to inhibit: The name org.freedesktop.login1 was not provided by any .service files")
        command = [arg for arg in sys.argv[1:] if not arg.startswith("--")]
        sys.exit(subprocess.call(command))  # (the lock is held while it runs)
        """))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("TRIPANE_KEEP_AWAKE")

    class Logind:
        def locks(self) -> list[dict]:
            return [json.loads(line) for line in started.read_text().splitlines()] if started.exists() else []

        def held(self) -> bool:
            """Whether the last lock taken is held now (its process lives)."""
            locks = self.locks()
            return bool(locks) and alive(locks[-1]["pid"])
    return Logind()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped by its parent) holds nothing
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_lock_is_taken_while_held_and_let_go_when_released(logind):
    awake = StayAwake(inhibitor_for_this_system())
    awake.hold("session A")
    until(logind.held)
    [lock] = logind.locks()
    assert lock["args"] == ["--what=sleep", "--mode=block", "--who=Tripane", "--why=An agent is working on a task", "cat"]
    awake.hold("session B")  # two runs at once: still one lock
    awake.release("session A")
    assert logind.held() and len(logind.locks()) == 1
    awake.release("session B")
    until(lambda: not logind.held())
    assert not awake.on


def test_the_lock_goes_with_a_tripane_that_is_killed(logind, tmp_path):
    # Killed mid-run (kill -9, a crash), Tripane must not leave the computer unable to sleep.
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""\
        import time
        from core.stay_awake import STAY_AWAKE
        STAY_AWAKE.hold("a run")
        print("held", flush=True)
        time.sleep(600)
        """)], stdout=subprocess.PIPE, cwd=Path(__file__).parents[2], env={**os.environ, "PYTHONPATH": "."})
    try:
        assert holder.stdout.readline() == b"held\n"
        until(logind.held)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    until(lambda: not logind.held())


def test_a_system_that_cannot_be_asked_is_said_once_in_the_log_and_not_asked_again(logind, monkeypatch, caplog):
    monkeypatch.setenv("NO_LOGIND", "1")  # a container, WSL 1: no logind to ask
    awake = StayAwake(inhibitor_for_this_system())
    for _ in range(3):
        awake.hold("a run")
        until(lambda: logind.locks() and not alive(logind.locks()[-1]["pid"]))
        awake.release("a run")
    assert len(logind.locks()) == 1 and not awake.on
    [said] = [r.getMessage() for r in caplog.records if "kept awake" in r.getMessage()]
    assert said.startswith("the computer cannot be kept awake while agents work: systemd-inhibit ended at once "
                           "(Failed to inhibit: The name org.freedesktop.login1 was not provided")


def test_nothing_is_asked_when_the_person_turned_it_off(logind):
    awake = StayAwake(inhibitor_for_this_system())
    awake.set_enabled(False)
    awake.hold("a run")
    assert not awake.on and logind.locks() == []
    awake.set_enabled(True)  # turned on in Settings while the run works: from now on
    until(logind.held)
    awake.set_enabled(False)
    until(lambda: not logind.held())
    awake.release("a run")


async def test_a_run_keeps_the_computer_awake_while_it_works_and_not_while_it_waits_for_the_person(
        logind, store, data_dir, workdir, monkeypatch):
    awake = StayAwake(CommandInhibitor(inhibitor_for_this_system().command, through_pipe=True))
    monkeypatch.setattr(stay_awake, "STAY_AWAKE", awake)
    for module in ("core.session", "core.agent.loop"):
        monkeypatch.setattr(f"{module}.STAY_AWAKE", awake)
    seen = []

    def looks(answer):
        def step(request):
            seen.append(awake.on)  # (the stand-in, a Python script, takes a moment to log its start)
            return answer
        return step
    model = ScriptedModel([looks(reply("", call("human_ask", question="Which invoices?"))),
                           looks(reply("", call("task_done", summary="Summed them.")))])
    session = make_session(store, data_dir, workdir, model)
    session.start()
    question = await wait_for_question(session)
    await asyncio.to_thread(until, lambda: not logind.held())  # the person's turn: the computer may sleep
    await session.answer(question.qid, "March's")
    assert await asyncio.wait_for(session.wait(), 10) == "done"
    assert seen == [True, True]  # at work: awake
    await asyncio.to_thread(until, lambda: len(logind.locks()) == 2)  # taken again after the answer
    await asyncio.to_thread(until, lambda: not logind.held())  # ended: let go
    assert not awake.on


async def test_a_run_whose_person_turned_it_off_leaves_the_computer_be(logind, store, data_dir, workdir, monkeypatch):
    from core.user_settings import write_settings

    write_settings({"keep_awake": 0})
    awake = StayAwake(inhibitor_for_this_system())
    for module in ("core.session", "core.agent.loop"):
        monkeypatch.setattr(f"{module}.STAY_AWAKE", awake)
    session = make_session(store, data_dir, workdir, ScriptedModel([reply("", call("task_done", summary="ok"))]))
    try:
        assert await session.run() == "done"
    finally:
        write_settings({"keep_awake": 1})
    assert logind.locks() == []
