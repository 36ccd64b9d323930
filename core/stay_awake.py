"""Keeping the computer from sleeping on its own while an agent works.

A laptop left alone sleeps after some idle minutes (15 on battery, by the usual defaults), and a
task of an hour started before lunch had done 15 minutes of it by the person's return. While a run
works (not while it waits for the person with nothing to go on with, nor when paused or ended),
Tripane asks the system not to sleep for idleness — the way a download or a backup does. Closing
the lid still sleeps it: that is the person's choice, and a laptop in a bag must not run hot.

- Windows: SetThreadExecutionState(ES_SYSTEM_REQUIRED), on the event loop's thread.
- macOS: `caffeinate -i -w PID`, which ends by itself if Tripane does.
- Linux: `systemd-inhibit --what=sleep --mode=block cat`, reading a pipe from Tripane; the pipe
  closed (released, or Tripane killed), `cat` ends and logind lets go. (logind ignores such a lock
  when the lid closes, by its default LidSwitchIgnoreInhibited=yes.)
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

log = logging.getLogger(__name__)

WHY = "An agent is working on a task"


class Inhibitor(Protocol):
    def start(self) -> None:
        """Keep the computer awake from now on (raises OSError if the system cannot be asked)."""

    def stop(self) -> None:
        """Let it sleep again."""


class WindowsInhibitor:
    ES_CONTINUOUS, ES_SYSTEM_REQUIRED = 0x80000000, 0x00000001

    def _set(self, flags: int) -> None:
        import ctypes

        set_state = ctypes.windll.kernel32.SetThreadExecutionState  # type: ignore[attr-defined]
        set_state.argtypes, set_state.restype = [ctypes.c_uint], ctypes.c_uint  # (a DWORD: 0x80000000 is no int)
        if not set_state(flags):  # (the previous state; 0 when refused)
            raise OSError("SetThreadExecutionState refused")

    def start(self) -> None:
        self._set(self.ES_CONTINUOUS | self.ES_SYSTEM_REQUIRED)

    def stop(self) -> None:
        self._set(self.ES_CONTINUOUS)


class CommandInhibitor:
    """A helper process that holds the lock while it lives (caffeinate, systemd-inhibit)."""

    def __init__(self, command: list[str], *, through_pipe: bool):
        self.command = command
        self.through_pipe = through_pipe  # it lives until its standard input closes
        self._process: subprocess.Popen | None = None
        self._ended: list[subprocess.Popen] = []  # let go, not yet reaped

    def start(self) -> None:
        self._reap()
        if self._process is not None:
            return
        self._process = subprocess.Popen(
            self.command, stdin=subprocess.PIPE if self.through_pipe else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        if process.poll() is not None:  # it could not take the lock (no logind: a container, WSL 1)
            said = process.stderr.read().decode(errors="replace").strip() if process.stderr else ""
            raise OSError(f"{self.command[0]} ended at once ({said or f'exit {process.returncode}'})")
        if self.through_pipe and process.stdin:
            process.stdin.close()
        else:
            process.terminate()
        self._ended.append(process)

    def _reap(self) -> None:
        self._ended = [process for process in self._ended if process.poll() is None]


OFF_VARIABLE = "TRIPANE_KEEP_AWAKE"  # "0": never asked for, whatever the setting (the tests: not the developer's laptop)


def inhibitor_for_this_system() -> Inhibitor | None:
    if os.environ.get(OFF_VARIABLE) == "0":
        return None
    if sys.platform == "win32":
        return WindowsInhibitor()
    if sys.platform == "darwin":
        return CommandInhibitor(["caffeinate", "-i", "-w", str(os.getpid())], through_pipe=False)
    if shutil.which("systemd-inhibit") and shutil.which("cat"):
        return CommandInhibitor(["systemd-inhibit", "--what=sleep", "--mode=block", "--who=Tripane", f"--why={WHY}",
                                 "cat"], through_pipe=True)
    return None  # (no systemd: nothing Tripane knows to ask)


class StayAwake:
    """Whether the computer is kept awake: while anything holds it (a run working), if enabled."""

    def __init__(self, inhibitor: Inhibitor | None = None):
        self.enabled = True  # the person's setting ("keep_awake")
        self._inhibitor = inhibitor
        self._found = inhibitor is not None
        self._holders: set[object] = set()
        self._on = False
        self._failed = False  # said once in the log, then tried no more

    @property
    def on(self) -> bool:
        return self._on

    def hold(self, holder: object) -> None:
        self._holders.add(holder)
        self._update()

    def release(self, holder: object) -> None:
        self._holders.discard(holder)
        self._update()

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        self._update()

    @contextmanager
    def held(self, holder: object) -> Iterator[None]:
        self.hold(holder)
        try:
            yield
        finally:
            self.release(holder)

    @contextmanager
    def let_go(self, holder: object) -> Iterator[None]:
        """Released while the block runs (a run waiting for the person), held again after if it was."""
        was = holder in self._holders
        self.release(holder)
        try:
            yield
        finally:
            if was:
                self.hold(holder)

    def _update(self) -> None:
        wanted = self.enabled and bool(self._holders)
        if wanted == self._on or self._failed:
            return
        if not self._found:
            self._inhibitor, self._found = inhibitor_for_this_system(), True
        if self._inhibitor is None:
            return
        try:
            self._inhibitor.start() if wanted else self._inhibitor.stop()
            self._on = wanted
        except OSError as exc:
            log.warning("the computer cannot be kept awake while agents work: %s (Settings → Supervision → Keep the "
                        "computer awake: off, not to be told)", exc)
            self._failed, self._on = True, False


STAY_AWAKE = StayAwake()  # the process's: its sessions share it


def keep_awake_setting() -> bool:
    """The person's choice (Settings → Supervision), as the window and `tripane run` share it."""
    from core.user_settings import SHARED, read_settings

    return bool(read_settings().get("keep_awake", SHARED["keep_awake"]))
