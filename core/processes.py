"""The processes running on this computer, each with its process group, state and start time:
read from /proc on Linux, from `ps` on macOS and the BSDs; not known on Windows.

A process id is given again once its process has ended, so an id alone does not say a process
is the one Tripane started: its start time does.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Process:
    pid: int
    group: int
    state: str  # R, S, Z (ended, not yet reaped), …
    started: float  # seconds since the epoch

    @property
    def ended(self) -> bool:
        return self.state.startswith("Z")


def processes() -> list[Process] | None:
    """Every process this user can see; None: not known here (Windows, or no /proc and no ps)."""
    if sys.platform == "win32":
        return None
    if Path("/proc/stat").is_file():
        return _from_proc()
    return _from_ps()


def _from_proc() -> list[Process] | None:
    try:
        boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text(encoding="ascii").splitlines()
                    if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:  # "pid (name) state parent group … start …": the name may hold spaces and parentheses
            pid, _, rest = stat.read_text(encoding="ascii", errors="replace").partition(" (")
            fields = rest.rpartition(")")[2].split()
            found.append(Process(int(pid), int(fields[2]), fields[0], boot + int(fields[19]) / ticks))
        except (OSError, ValueError, IndexError):  # (it ended meanwhile)
            continue
    return found


def _from_ps() -> list[Process] | None:
    try:  # lstart: "Sat Nov 28 12:48:41 2026", in the C locale's words
        listed = subprocess.run(["ps", "-A", "-o", "pid=,pgid=,stat=,lstart="], capture_output=True, text=True,
                                timeout=10, stdin=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"}).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("the processes cannot be listed: %s", exc)
        return None
    found = []
    for line in listed.splitlines():
        parts = line.split(None, 3)
        try:
            started = time.mktime(time.strptime(parts[3].strip(), "%a %b %d %H:%M:%S %Y"))
            found.append(Process(int(parts[0]), int(parts[1]), parts[2], started))
        except (ValueError, IndexError, OverflowError):
            continue
    return found
