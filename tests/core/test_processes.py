"""The process table Tripane reads to tell whether a command outlived it, and to stop what one
left running: the same processes, groups and start times from /proc and from ps."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.support.processes import kept_as_left_running, stand_in

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Windows has no process groups")


def test_proc_and_ps_list_the_same_process_with_its_group_and_start_time():
    from core.processes import _from_proc, _from_ps

    if not os.path.isfile("/proc/stat") or shutil.which("ps") is None:
        pytest.skip("needs /proc and ps to compare them (Linux)")
    sleeper = stand_in(30)
    try:
        by_proc = next(p for p in _from_proc() if p.pid == sleeper.pid)
        by_ps = next(p for p in _from_ps() if p.pid == sleeper.pid)  # (macOS's way, here through procps)
        assert (by_proc.group, by_ps.group) == (sleeper.pid, sleeper.pid)
        assert not by_proc.ended and not by_ps.ended
        assert abs(by_proc.started - time.time()) < 30 and abs(by_proc.started - by_ps.started) < 2
    finally:
        sleeper.kill()
        sleeper.wait()


def test_what_a_command_left_running_is_stopped_only_while_it_is_the_same_process(tmp_path):
    """A group id kept for a dev server may, once the server has ended, be another's."""
    from core.agent.running_calls import stop_left_running

    def left_running() -> subprocess.Popen:
        server = stand_in(30)
        kept_as_left_running(tmp_path, "s1", server)
        return server

    server = left_running()
    try:
        kept = tmp_path / "running" / f"left-running-{server.pid}.pid"
        said, member = kept.read_text(encoding="utf-8").splitlines()
        assert said == "call s1"  # (which call left it: its card says so)
        pid, started = member.split()
        kept.write_text(f"{pid} {float(started) - 3600:.2f}\n", encoding="utf-8")  # another process, an hour older
        # (and as an earlier version kept it, without the call: read all the same)
        assert stop_left_running(tmp_path) == [] and server.poll() is None and not kept.exists()
    finally:
        server.kill()
        server.wait()

    server = left_running()
    try:
        assert stop_left_running(tmp_path) == [server.pid]
        assert server.wait(timeout=10) == -signal.SIGKILL
    finally:
        server.kill()
        server.wait()


def test_what_one_call_left_running_is_told_and_stopped_apart_from_another(tmp_path):
    from core.agent.running_calls import (
        left_running_by_call,
        stop_left_running,
    )

    servers = {}
    for call_id in ("web", "db"):
        servers[call_id] = stand_in(30)
        kept_as_left_running(tmp_path, call_id, servers[call_id])
    try:
        assert left_running_by_call(tmp_path) == {"web": servers["web"].pid, "db": servers["db"].pid}
        assert stop_left_running(tmp_path, "web") == [servers["web"].pid]  # the person's Stop it, on its card
        assert servers["web"].wait(timeout=10) == -signal.SIGKILL and servers["db"].poll() is None
        assert left_running_by_call(tmp_path) == {"db": servers["db"].pid}
    finally:
        for server in servers.values():
            server.kill()
            server.wait()
    assert left_running_by_call(tmp_path) == {}  # ended (and reaped): no longer said to run
