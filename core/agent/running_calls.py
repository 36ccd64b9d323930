"""What is known of a call while it runs, kept on disk until it ends: the end of what it has
printed, and the process a command runs in.

The live output went only to the window. A Tripane killed mid-command (a crash, a forced quit)
reopened with the call's effect unknown and nothing to judge it by, so the agent ran a ten-minute
build again from the start to see how far it had got; and a command that printed nothing (`sleep
20; ./migrate`) went on running without Tripane, to finish while the agent, told only "effect
unknown", started it a second time. Both are now in the session's running/ folder until the call
ends, and told with the interruption.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

log = logging.getLogger(__name__)

TAIL_CHARS = 4000  # the end of the output: where a build or a test run says how far it got


def _path(session_dir: Path, call_id: str, suffix: str = ".txt") -> Path:
    return session_dir / "running" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', call_id)[:100]}{suffix}"


class RunningCall:
    """One running call's latest output, written over at each pass of the live output, and its
    command's process id."""

    def __init__(self, session_dir: Path, call_id: str):
        self.path = _path(session_dir, call_id)
        self.pid_path = _path(session_dir, call_id, ".pid")
        self.tail = ""
        self.failed = False
        self.pid: int | None = None

    def add(self, text: str) -> None:
        self.tail = (self.tail + text)[-TAIL_CHARS:]
        self._write(self.path, self.tail)

    def started(self, pid: int) -> None:
        self.pid = pid
        self._write(self.pid_path, str(pid))

    def _write(self, path: Path, text: str) -> None:
        if self.failed:
            return
        try:
            path.parent.mkdir(exist_ok=True)
            path.write_text(text, encoding="utf-8", errors="replace")
        except OSError as exc:  # (a full disk): the command runs on; only this aid is lost
            self.failed = True
            log.warning("what %s prints cannot be kept while it runs: %s", self.path.stem, exc)

    def discard(self) -> None:
        """The call ended: its result holds its output."""
        if self.tail:
            _remove(self.path)
        if self.pid is not None:
            _remove(self.pid_path)

    def left_running(self) -> None:
        """The command returned, and left processes of its group running (a dev server): stopped
        when the run ends, or by the next run should Tripane die first (stop_left_running)."""
        if self.pid is None or sys.platform == "win32":  # (there they are the agent's to stop)
            return
        try:  # (as it was written when the command started: see _group_kept_in)
            self.pid_path.replace(self.pid_path.with_name(f"{LEFT_RUNNING}{self.pid}.pid"))
        except OSError as exc:
            log.warning("what %s left running cannot be kept: %s", self.path.stem, exc)
        self.pid = None


LEFT_RUNNING = "left-running-"  # the files of process groups commands left running, in running/


def forget_left_running(session_dir: Path) -> None:
    """The run that started them stopped them as it ended."""
    for kept in (session_dir / "running").glob(f"{LEFT_RUNNING}*.pid"):
        _remove(kept)


def stop_left_running(session_dir: Path) -> list[int]:
    """Stop what commands left running in the background in a run that ended without stopping
    them (Tripane was killed), as that run's end would have; the groups stopped."""
    stopped = []
    for kept in sorted((session_dir / "running").glob(f"{LEFT_RUNNING}*.pid")):
        if (group := _group_kept_in(kept)) is not None:
            try:
                os.killpg(group, signal.SIGKILL)
                stopped.append(group)
            except OSError as exc:  # (it ended meanwhile)
                log.info("process group %s was not stopped: %s", group, exc)
        _remove(kept)
    return stopped


def kept_output(session_dir: Path, call_id: str) -> str:
    """The latest output of a call that Tripane stopped in the middle of ("" if none was kept)."""
    try:
        return _path(session_dir, call_id).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def still_running(session_dir: Path, call_id: str) -> int | None:
    """The process group of a command Tripane stopped in the middle of, if it still runs (None:
    it ended, none was kept, or this system cannot tell: Windows has no process groups to ask)."""
    return _group_kept_in(_path(session_dir, call_id, ".pid"))


def _group_kept_in(kept: Path) -> int | None:
    """The process group whose id the file holds, if it still runs and is the one kept there (its
    id written as its command started)."""
    try:
        pid, kept_at = int(kept.read_text(encoding="utf-8")), kept.stat().st_mtime
    except (OSError, ValueError):
        return None
    if sys.platform == "win32" or pid <= 1:
        return None
    try:
        os.killpg(pid, 0)  # (signal 0: is the group there, nothing sent)
    except OSError:  # gone; or PermissionError: another user's, its id taken again since
        return None
    # A killed command's processes stay as zombies until they are reaped (at once by a desktop's
    # init; in a container, perhaps never): only a process not yet ended counts.
    states = _states_in_group(pid)
    if states is not None and all(state.startswith("Z") for state in states):
        return None
    # Once the whole group has ended, its id may be given to a new one, which the agent told to
    # stop "the command" would kill: a leader that started long before or after the command is not
    # its. (A group whose leader has gone keeps its id while any member runs: it is the command's.)
    started = _start_time(pid)
    return None if started is not None and abs(started - kept_at) > SAME_START_S else pid


SAME_START_S = 30  # a command's leader starts within this of its id being kept (a loaded machine)


def _start_time(pid: int) -> float | None:
    """When the process `pid` started (seconds since the epoch); None: not there, or not known."""
    if Path("/proc").is_dir():  # Linux: ticks after boot, and the boot's time
        try:
            ticks = int(Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
                        .rpartition(")")[2].split()[19])
            boot = next(int(line.split()[1]) for line in Path("/proc/stat").read_text(encoding="ascii").splitlines()
                        if line.startswith("btime "))
            return boot + ticks / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError, StopIteration):
            return None
    try:  # macOS and the BSDs: "Sat Nov 28 12:48:41 2026", in the C locale's words
        said = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True, text=True, timeout=10,
                              stdin=subprocess.DEVNULL, env={**os.environ, "LC_ALL": "C"}).stdout.strip()
        return time.mktime(time.strptime(said, "%a %b %d %H:%M:%S %Y")) if said else None
    except (OSError, subprocess.SubprocessError, ValueError, OverflowError):
        return None


def _states_in_group(group: int) -> list[str] | None:
    """The state letters of the processes in a process group (R, S, Z, …); None: unknown."""
    proc = Path("/proc")
    if proc.is_dir():  # Linux
        states = []
        for stat in proc.glob("[0-9]*/stat"):
            try:
                fields = stat.read_text(encoding="ascii", errors="replace").rpartition(")")[2].split()
            except OSError:  # (it ended meanwhile)
                continue
            if len(fields) > 2 and fields[2] == str(group):  # state, parent, group, …
                states.append(fields[0])
        return states
    try:  # macOS and the BSDs
        listed = subprocess.run(["ps", "-A", "-o", "pgid=,stat="], capture_output=True, text=True, timeout=10,
                                stdin=subprocess.DEVNULL).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return [line.split()[1] for line in listed.splitlines() if len(line.split()) == 2 and line.split()[0] == str(group)]


def left_unfinished(session_dir: Path, call_id: str) -> tuple[str, int | None]:
    """What the agent is told once of a call Tripane stopped in the middle of: the end of what it
    printed, and its command's process group if that still runs. Their files are removed."""
    told = kept_output(session_dir, call_id), still_running(session_dir, call_id)
    _remove(_path(session_dir, call_id))
    _remove(_path(session_dir, call_id, ".pid"))
    return told


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError as exc:  # (Windows: a virus scanner holding it open) left; it is a few bytes
        log.warning("%s cannot be removed: %s", path, exc)
