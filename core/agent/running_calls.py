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
from dataclasses import dataclass
from pathlib import Path

from core.processes import processes

log = logging.getLogger(__name__)

TAIL_CHARS = 4000  # the end of the output: where a build or a test run says how far it got
SAME_START_S = 30  # a command's leader starts within this of its id being kept (a loaded machine)
SAME_PROCESS_S = 2  # a process kept with its start time: the same one (ps says whole seconds)
LEFT_RUNNING = "left-running-"  # the files of process groups commands left running, in running/
CALL_LINE = "call "  # their first line: the call that left it


def _path(session_dir: Path, call_id: str, suffix: str = ".txt") -> Path:
    return session_dir / "running" / f"{re.sub(r'[^A-Za-z0-9_.-]', '_', call_id)[:100]}{suffix}"


class RunningCall:
    """One running call's latest output, written over at each pass of the live output, and its
    command's process id."""

    def __init__(self, session_dir: Path, call_id: str):
        self.call_id = call_id
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
        when the run ends, or by the next run should Tripane die first (stop_left_running). They
        are kept by id and start time, which together say a process is still the one left."""
        group, self.pid = self.pid, None
        _remove(self.pid_path)
        table = processes() if group is not None else None  # (None on Windows: the agent's to stop)
        members = [p for p in table or () if p.group == group and not p.ended]
        if members:  # (the call first: its card says what it left running)
            self._write(self.pid_path.with_name(f"{LEFT_RUNNING}{group}.pid"),
                        f"{CALL_LINE}{self.call_id}\n" + "".join(f"{p.pid} {p.started:.2f}\n" for p in members))


def forget_left_running(session_dir: Path, keep: set[str] = frozenset()) -> None:
    """The run that started them stopped them as it ended; but for what the calls `keep` left,
    kept running for the person (a file each, should Tripane die while it runs)."""
    for left in _left_running(session_dir, look_up=False):
        if left.call_id not in keep:
            _remove(left.kept)


@dataclass(frozen=True)
class LeftRunning:
    """A process group a command left running, as kept in running/."""

    kept: Path  # its file
    group: int
    call_id: str  # the call whose command left it ("": kept by a version that did not say)
    runs: bool  # one of its processes is still there, started when it was kept (not a new one)


def _left_running(session_dir: Path, look_up: bool = True) -> list[LeftRunning]:
    """What commands left running, as kept in the session's running/ folder; their processes
    looked up in one process table (none read when nothing was kept, or not `look_up`: then none
    is said to run)."""
    kept_files = sorted((session_dir / "running").glob(f"{LEFT_RUNNING}*.pid"))
    table = {p.pid: p for p in processes() or ()} if kept_files and look_up else {}
    found = []
    for kept in kept_files:
        group, call_id, runs = -1, "", False
        try:
            group = int(kept.name.removeprefix(LEFT_RUNNING).removesuffix(".pid"))
            lines = kept.read_text(encoding="utf-8").splitlines()
            if lines and lines[0].startswith(CALL_LINE):
                call_id = lines.pop(0).removeprefix(CALL_LINE)
            members = [line.split() for line in lines]
            runs = any((p := table.get(int(pid))) is not None and p.group == group and not p.ended
                       and abs(p.started - float(started)) < SAME_PROCESS_S for pid, started in members)
        except (OSError, ValueError):
            pass
        found.append(LeftRunning(kept, group, call_id, runs))
    return found


def left_running_by_call(session_dir: Path) -> dict[str, int]:
    """The process groups commands left running in a run that ended without stopping them, which
    still run: by the call that left each (a group may be left by one call only)."""
    return {left.call_id: left.group for left in _left_running(session_dir) if left.runs and left.call_id}


def stop_left_running(session_dir: Path, call_id: str | None = None) -> list[int]:
    """Stop what commands left running in the background in a run that ended without stopping
    them (Tripane was killed), as that run's end would have; the groups stopped. `call_id`: only
    what that call left (the person's Stop it on its card). A group is stopped only while a
    process kept for it is still there, started when it was."""
    stopped = []
    for left in _left_running(session_dir):
        if call_id is not None and left.call_id != call_id:
            continue
        if left.runs:
            try:
                os.killpg(left.group, signal.SIGKILL)
                stopped.append(left.group)
            except OSError as exc:  # (it ended meanwhile)
                log.info("process group %s was not stopped: %s", left.group, exc)
        _remove(left.kept)
    return stopped


def kept_output(session_dir: Path, call_id: str) -> str:
    """The latest output of a call that Tripane stopped in the middle of ("" if none was kept)."""
    try:
        return _path(session_dir, call_id).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def still_running(session_dir: Path, call_id: str) -> int | None:
    """The process group of a command Tripane stopped in the middle of, if it still runs (None:
    it ended, none was kept, or this system cannot tell: Windows has no process groups to ask).

    Its leader must still be there, not ended (a killed command's processes stay as zombies until
    reaped: at once by a desktop's init; in a container, perhaps never), and have started when its
    id was kept: once the whole group has ended, its id may go to a new group, which the agent,
    told to stop "the command", would stop."""
    kept = _path(session_dir, call_id, ".pid")
    try:
        group, kept_at = int(kept.read_text(encoding="utf-8")), kept.stat().st_mtime
    except (OSError, ValueError):
        return None
    leader = next((p for p in processes() or () if p.pid == group and p.group == group), None)
    if leader is None or leader.ended or abs(leader.started - kept_at) > SAME_START_S:
        return None
    return group



def stop_still_running(session_dir: Path, call_id: str) -> int | None:
    """Stop the command of a call Tripane stopped in the middle of, which runs on without it (the
    person's choice, from its card); the process group stopped, None if none still ran."""
    if (group := still_running(session_dir, call_id)) is None:
        return None
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError as exc:  # (it ended meanwhile)
        log.info("process group %s was not stopped: %s", group, exc)
        return None
    return group


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
