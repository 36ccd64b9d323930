"""The shell tool: runs a command in the workdir with a timeout and a cap on captured output."""

from __future__ import annotations

import asyncio
import codecs
import functools
import itertools
import logging
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from core import big_text
from core.processes import processes
from core.text import as_terminal_shows
from core.tools.context import ToolContext
from core.tools.files import BINARY_PROBE_BYTES
from core.tools.registry import InvalidCall, ToolError

log = logging.getLogger(__name__)

TIMED_OUT = "Command timed out after"  # how the error of a command that ran out of time begins

# Output beyond this is dropped (and said so); what is kept goes to offload/ when it is large.
CAPTURE_LIMIT_BYTES = 64 * 1024 * 1024
MAX_TIMEOUT_S = 1800
# A watching view is told what the command printed at most this often, and only its latest part:
# a command printing a million short lines must not become a million notices.
LIVE_INTERVAL_S = 0.25
# Said in the live output while the copy is made; Tripane's words, not the command's output.
COPYING_NOTE = ("[Tripane copies the work folder before the session's first command, so that what commands change "
                "can be put back]\n")
LIVE_TAIL_CHARS = 8000
BACKGROUND_DECODE_BYTES = 1 << 20
# When the shell has ended but its output stays open this long, a process it started in the
# background holds it (`server &`): the command has returned, and is reported so.
BACKGROUND_GRACE_S = 1.0
BACKGROUND_POLL_S = 0.25
REAP_S = 1.0  # how long a killed command's end is waited for when its call is cancelled (see _reaped)


async def shell_run(ctx: ToolContext, command: str, timeout: int = 120) -> str:
    """Run a shell command in the workdir and return its combined output and exit code.

    Use it for what files alone cannot do: running tests, builds, linters, git, package tools. The
    command runs non-interactively (no input; prompts fail), in the workdir, and is stopped after
    `timeout` seconds together with its child processes. A server or watcher started in the
    background (`cmd &` in sh, `start /b cmd` in cmd.exe) keeps running after the command returns,
    what it prints then kept in a log the result names, until this run ends; do not start one in
    the foreground. A non-zero exit code is reported as an error with the output. The files the
    command changed in the workdir are named after its output, with how those you had read or
    written changed (a diff: what your sed or formatter did). A long output is saved to a file and
    you see its head and end.
    Depending on the person's approval policy a command may wait for approval or be denied with a
    reason; respect the reason.

    Args:
        command: The command line to run.
        timeout: Seconds before the command is stopped.
    """
    if not command.strip():
        raise InvalidCall("shell_run needs a command.")
    timeout = max(1, min(timeout, MAX_TIMEOUT_S))
    if ctx.work_folder_copy_due and ctx.on_output is not None:  # (seconds, for a large folder: said)
        ctx.on_output(COPYING_NOTE)
    await asyncio.to_thread(ctx.before_command)  # what the command changes can be told and put back
    try:
        output = await _run(ctx, command, timeout)
    except ToolError as error:  # (a command that failed, timed out or was stopped may have changed files too)
        raise ToolError(str(error) + await asyncio.to_thread(ctx.after_command)) from None
    except BaseException:
        await asyncio.to_thread(ctx.after_command)
        raise
    return output + await asyncio.to_thread(ctx.after_command)


async def _run(ctx: ToolContext, command: str, timeout: int) -> str:
    proc = await _start(command, ctx)
    if ctx.on_started is not None:
        ctx.on_started(proc.pid)
    chunks: list[bytes] = []
    kept = dropped = 0
    live = LiveOutput(ctx.on_output)
    detached = False  # the command returned; what its background processes print is not kept...
    later: list[Callable[[bytes], None]] = []  # ...but passed on to whoever listens (see listen_to_kept)

    async def drain() -> None:
        nonlocal kept, dropped
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(1 << 16):
            if detached:
                for listener in later:
                    listener(chunk)
                continue
            live.feed(chunk)
            part = chunk[: max(0, CAPTURE_LIMIT_BYTES - kept)]
            if part:
                chunks.append(part)
                kept += len(part)
            dropped += len(chunk) - len(part)

    async def finished() -> bool:
        """Whether all the output was read when the command ended (False: a process it started
        in the background holds the output open, and will for as long as it runs)."""
        # asyncio's proc.wait() waits for the output to close too, so the shell's own end is
        # seen in its return code, looked at between waits for the output.
        while not (await asyncio.wait([draining], timeout=BACKGROUND_POLL_S))[0]:
            if proc.returncode is not None:
                if not (await asyncio.wait([draining], timeout=BACKGROUND_GRACE_S))[0]:
                    return False
                break
        await proc.wait()
        return True

    started = time.monotonic()
    draining = asyncio.ensure_future(drain())
    finishing = asyncio.ensure_future(finished())
    watched = [finishing] + ([asyncio.ensure_future(ctx.stop_requested.wait())] if ctx.stop_requested else [])
    try:
        await asyncio.wait(watched, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        kill_process_tree(proc)
        finishing.cancel()
        detached = True  # (what it prints as it dies is not shown)
        await _reaped(proc, draining)
        raise
    finally:
        for task in watched[1:]:
            task.cancel()
        live.close()
    if not finishing.done():  # the timeout, or the person stopped this command
        finishing.cancel()
        draining.cancel()
        kill_process_tree(proc)
        await proc.wait()
        why = (f"Stopped by the person after {time.monotonic() - started:.0f} s (the run goes on)."
               if ctx.stop_requested is not None and ctx.stop_requested.is_set()
               else f"{TIMED_OUT} {timeout} s and was stopped. {_longer(timeout)}")
        raise ToolError(await _decoded(chunks, kept, f"{why}\n"))
    background = ""
    if not finishing.result():
        detached = True  # drain goes on reading, so the background process never blocks on a full pipe
        kept_log = BackgroundLog(ctx.offload_dir, ctx.call_id)
        later.append(kept_log.write)
        background = _keep_in_background(ctx, Background(proc, draining, command, ctx.call_id, later),
                                         log_name=kept_log.name)
        if ctx.on_left_running is not None:
            ctx.on_left_running()
    else:
        draining.result()  # a failure reading the output surfaces here
        # `server > server.log 2>&1 &` holds no output open, and was neither told nor stopped
        # with the run: the server outlived the task, holding its port.
        if sys.platform != "win32" and await asyncio.to_thread(group_runs_on, proc.pid):
            background = _keep_in_background(ctx, Background(proc, draining, command, ctx.call_id), holds_output=False)
            if ctx.on_left_running is not None:
                ctx.on_left_running()
    truncated = f"\n[output truncated: {dropped:,} further bytes were not captured]" if dropped > 0 else ""
    if proc.returncode != 0:
        raise ToolError(await _decoded(chunks, kept, f"Command failed with exit code {proc.returncode}.\n",
                                       truncated + background))
    if not kept:
        return f"[no output; exit code 0]{background}"
    return await _decoded(chunks, kept, after=f"{truncated}\n[exit code 0]{background}")


def _longer(timeout: int) -> str:
    """What to do about a command that ran out of time: a large project's test suite or build
    takes longer than the default two minutes, and the agent ran it again the same way."""
    if timeout < MAX_TIMEOUT_S:
        return (f"If it needs longer (a whole test suite, a build), run it again with a larger timeout (up to "
                f"{MAX_TIMEOUT_S:,}), or run a part of it.")
    return "That is the longest a command may run: run a part of it, or start it in the background and read its log."


class Background(NamedTuple):
    """A command that returned, leaving processes running in the background."""

    proc: asyncio.subprocess.Process  # its shell, whose id is its process group's
    draining: asyncio.Task  # reads its output, for as long as one of them holds it
    command: str
    call_id: str = ""  # the call that ran it
    listeners: list[Callable[[bytes], None]] | None = None  # given what it prints from now on (its drain's)


# Processes that commands left running in the background (a dev server), by session: they are
# stopped when the session's run ends, so a server does not outlive the task it was started for...
_background: dict[str, list[Background]] = {}
# ...unless the task ended done with them running, in a window: the person asked for a server to
# try, and the agent finished by saying where it is. They are the person's then, until they stop
# them or quit Tripane (see keep_background).
_kept: dict[str, list[Background]] = {}


def _keep_in_background(ctx: ToolContext, left: Background, holds_output: bool = True, log_name: str = "") -> str:
    """Keep what the command left running, to stop with the run; what the agent is told of it.
    `holds_output`: it holds the command's output (else it writes where the command sent it), and
    what it prints from now on goes to offload `log_name`."""
    _background.setdefault(ctx.session_id, []).append(left)
    proc = left.proc
    # Nobody awaits it any more: a read error when the process ends is of no interest.
    left.draining.add_done_callback(lambda task: task.cancelled() or task.exception())
    unseen = (f"; what it prints from now on goes to offload:{log_name} (its last {BACKGROUND_LOG_BYTES // 2**20} MB: "
              "read it with file_read, as a server's log)" if holds_output else "")
    if sys.platform == "win32":
        return (f"\n[a process this command started still runs in the background{unseen}. "
                "Stop it with taskkill when you no longer need it.]")
    until = ("this run ends, unless the task is done with it running: then it is left running for the person, "
             "so stop what they will not need. Stop it" if ctx.keeps_left_running
             else "this run ends (to let the person try it, ask them, with human_ask, while it runs), or")
    return f"\n[a process this command started still runs in the background{unseen}. It is stopped when {until} now with: kill -- -{proc.pid}]"


BACKGROUND_LOG_BYTES = 1 << 20  # the most of what a process left running prints that is kept


def background_log_named(result: str) -> str:
    """The log a shell result names for what a process left running prints ("" for none)."""
    found = re.search(r"offload:(background-[A-Za-z0-9_.-]+\.log)", result)
    return found[1] if found else ""


class BackgroundLog:
    """What a process a command left running prints from the moment the command returned (a dev
    server's requests and errors), kept in the session's offload/ folder, the latest
    BACKGROUND_LOG_BYTES of it: the agent reads it with file_read, the person opens it. Before, it
    was read and dropped, so an agent that started a server could not see why a page failed."""

    def __init__(self, offload_dir: Path, call_id: str):
        stem = f"background-{re.sub(r'[^A-Za-z0-9_.-]', '_', call_id or 'command')[:80]}"
        # A server of one's own may give every call the same id ("call_0"): each log a name of its own.
        self.name = next(name for n in itertools.count(1)
                         if not (offload_dir / (name := f"{stem}{f'-{n}' if n > 1 else ''}.log")).exists())
        self.path = offload_dir / self.name
        self.size = 0
        self.failed = False
        try:
            offload_dir.mkdir(parents=True, exist_ok=True)
            self.path.write_bytes(b"")
        except OSError as exc:
            self._give_up(exc)

    def write(self, chunk: bytes) -> None:
        if self.failed:
            return
        try:
            with self.path.open("ab") as log_file:
                log_file.write(chunk)
            self.size += len(chunk)
            if self.size > BACKGROUND_LOG_BYTES:  # the latest half kept: a chatty server's log has no end
                latest = self.path.read_bytes()[-(BACKGROUND_LOG_BYTES // 2):]
                self.path.write_bytes(latest)
                self.size = len(latest)
        except OSError as exc:  # a full disk: the process goes on, its output is read and dropped
            self._give_up(exc)

    def _give_up(self, exc: OSError) -> None:
        self.failed = True
        log.warning("the output of a process left running is not kept in %s: %s", self.path, exc)


def group_runs_on(group: int) -> bool:
    """Whether a process of the process group `group` still runs (not one that has ended and
    waits to be reaped). Asked of the kernel first, which answers at once for the many commands
    that leave nothing; the process table is read only when it says some process is there."""
    try:
        os.killpg(group, 0)
    except OSError:  # (none there; or not ours to signal, so not the command's)
        return False
    table = processes()
    return table is not None and any(p.group == group and not p.ended for p in table)


def left_in_background(session_id: str) -> bool:
    """Whether any of the session's commands left processes in the background (running or not),
    in this run or kept from an earlier one."""
    return bool(_background.get(session_id) or _kept.get(session_id))


def running_in_background(session_id: str) -> int:
    """How many of the session's commands left a process running: one that holds their output,
    or one still in the command's process group."""
    return sum(_runs_on(left) for left in _background.get(session_id, []) + _kept.get(session_id, []))


def _runs_on(left: Background) -> bool:
    return not left.draining.done() or (sys.platform != "win32" and group_runs_on(left.proc.pid))


async def stop_background(session_id: str) -> list[str]:
    """Stop what the session's commands left running in the background; the command lines of
    those that still ran (the person is told what went). Each is waited for a moment (see
    _reaped): a run from the terminal closes its event loop right after, and a process still
    unclaimed then made asyncio print "Event loop is closed" at exit."""
    return [left.command for left in await _stopped(_background.pop(session_id, []))]


async def keep_background(session_id: str) -> list[Background]:
    """What the session's commands left running, kept as the run ends (the task is done): those
    still running go on, for the person (stop_kept ends them); the rest are reaped."""
    left = _background.pop(session_id, [])
    if not left or sys.platform == "win32":  # (there, they are the agent's to stop: nothing is kept)
        await _stopped(left)
        return []
    running = await asyncio.to_thread(lambda: [one for one in left if _runs_on(one)])
    await _stopped([one for one in left if one not in running])
    _kept.setdefault(session_id, []).extend(running)
    return running


def kept_in_background(session_id: str) -> list[Background]:
    """What the session's commands left running that was kept for the person as a task ended, and
    still runs (one may end by itself: then it is let go of)."""
    running = [left for left in _kept.get(session_id, []) if _runs_on(left)]
    if running:
        _kept[session_id] = running
    else:
        _kept.pop(session_id, None)
    return running


def listen_to_kept(session_id: str, listener: Callable[[bytes], None]) -> Callable[[], None]:
    """`listener` is given what the processes kept running for the person print from now on (a dev
    server's requests and errors, as in a terminal of its own); the function returned stops that."""
    heard = [left.listeners for left in _kept.get(session_id, []) if left.listeners is not None]
    for listeners in heard:
        listeners.append(listener)

    def stop() -> None:
        for listeners in heard:
            if listener in listeners:
                listeners.remove(listener)
    return stop


async def stop_kept(session_id: str, call_id: str | None = None) -> list[Background]:
    """Stop what was kept running for the person (all of it, or what the call `call_id` left);
    those that still ran."""
    kept = _kept.get(session_id, [])
    chosen = [left for left in kept if call_id is None or left.call_id == call_id]
    if rest := [left for left in kept if left not in chosen]:
        _kept[session_id] = rest
    else:
        _kept.pop(session_id, None)
    return await _stopped(chosen)


async def _stopped(kept: list[Background]) -> list[Background]:
    """Those of `kept` that still ran, now stopped: their process groups killed, and each waited
    for a moment. Only a group that still runs is killed: once its processes are gone its id may
    be a new group's (a kept server may be stopped hours after it started)."""
    if not kept:  # (most runs: their end is not put off by a wait for a thread)
        return []
    if sys.platform == "win32":  # there they are the agent's to stop (taskkill): nothing is waited for
        for left in kept:
            left.draining.cancel()
        return []
    running = await asyncio.to_thread(lambda: [left for left in kept if _runs_on(left)])
    for left in kept:  # the shell has ended: its group is what still runs
        if left in running or not left.draining.done():
            try:
                os.killpg(left.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    await asyncio.gather(*(_reaped(left.proc, left.draining) for left in kept))
    return running


async def _decoded(chunks: list[bytes], size: int, before: str = "", after: str = "") -> str:
    """The output as text between `before` and `after`. A large one is put together on a worker
    thread: joining, decoding and framing 64 MB on the event loop stalled the window for 0.2 s."""
    def text() -> str:
        data = b"".join(chunks)
        if is_binary_output(data):  # (sent as text, it was 4,000 characters of NULs and � for the model)
            return (f"{before}[binary output: {size:,} bytes, not text, so not shown; send it to a file "
                    f"(> out.bin) to keep it]{after}")
        return before + big_text.by_lines(decode_output(data), as_terminal_shows) + after
    return text() if size < BACKGROUND_DECODE_BYTES else await asyncio.to_thread(text)


class LiveOutput:
    """Passes what a command prints on to a watcher as text, at most every LIVE_INTERVAL_S; what
    arrives in between waits for the next pass (a timer makes it, so a last line before a long
    silence is not held back)."""

    def __init__(self, sink: Callable[[str], None] | None):
        self.sink = sink
        # Incremental: a character may be split across two reads.
        self.decoder = codecs.getincrementaldecoder("utf-8")("strict" if _console_encoding() else "replace")
        self.pending: list[str] = []
        self.timer: asyncio.TimerHandle | None = None
        self.first = True
        self.binary = False

    def feed(self, chunk: bytes) -> None:
        if self.sink is None or self.binary:
            return
        if self.first:  # the first bytes tell binary output, and UTF-16 text (wmic writes it to a pipe)
            self.first = False
            if is_binary_output(chunk):
                self.binary = True
                self.sink("[binary output, not shown]\n")
                return
            if wide := _wide_codec(chunk[:BINARY_PROBE_BYTES]):
                self.decoder = codecs.getincrementaldecoder(wide)("replace")
        try:
            text = self.decoder.decode(chunk)
        except UnicodeDecodeError:  # on Windows, a tool writing the console's code page: read the rest in it
            self.decoder = codecs.getincrementaldecoder(_console_encoding() or "utf-8")("replace")
            text = self.decoder.decode(chunk)
        self.pending.append(text)
        if len(self.pending) > 16:  # a flood between two passes: only its latest part will be passed on
            self.pending = ["".join(self.pending)[-LIVE_TAIL_CHARS:]]
        if self.timer is None:
            self.pass_on()
            self.timer = asyncio.get_running_loop().call_later(LIVE_INTERVAL_S, self._tick)

    def _tick(self) -> None:
        self.timer = None
        if self.pending:
            self.pass_on()
            self.timer = asyncio.get_running_loop().call_later(LIVE_INTERVAL_S, self._tick)

    def pass_on(self) -> None:
        text = as_terminal_shows("".join(self.pending)[-LIVE_TAIL_CHARS:])
        self.pending.clear()
        if text and self.sink is not None:
            self.sink(text)

    def close(self) -> None:
        """The command ended: its result says the rest."""
        if self.timer is not None:
            self.timer.cancel()
        self.sink = None


async def _start(command: str, ctx: ToolContext) -> asyncio.subprocess.Process:
    """Start the command in a process group of its own (so a stop reaches its children).

    A stop that lands while the process is starting must not cancel asyncio's start: that kills
    only the shell, then waits for the command the shell started to end by itself, since it holds
    the output pipe (CPython gh-103847, gh-125502). Stop or quit then hung for as long as the
    command ran. The start is left to finish, and what it started is stopped."""
    kwargs: dict = {"start_new_session": True} if sys.platform != "win32" else {}
    starting = asyncio.ensure_future(asyncio.create_subprocess_shell(
        command,
        cwd=ctx.workdir,
        env=_child_environment(),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        **kwargs,
    ))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        await _end_once_started(starting)
        raise


async def _end_once_started(starting: asyncio.Future) -> None:
    """The process a stopped call was starting: made (a moment), then ended and waited for."""
    try:
        proc = await asyncio.shield(starting)
    except asyncio.CancelledError:  # stopped again meanwhile: ended once made, not waited for
        starting.add_done_callback(_kill_once_started)
        raise
    except Exception:  # (it never started)
        return
    kill_process_tree(proc)
    assert proc.stdout is not None
    await _reaped(proc, asyncio.ensure_future(proc.stdout.read()))


def _kill_once_started(starting: asyncio.Future) -> None:
    if not starting.cancelled() and starting.exception() is None:
        kill_process_tree(starting.result())


async def _reaped(proc: asyncio.subprocess.Process, reading: asyncio.Future) -> None:
    """A killed command's output read to its end and its process waited for, a moment at most, so
    that neither is left open when the call ends: Tripane quitting (or a test ending) mid-command
    closed the loop with the pipe and the process unclaimed; asyncio then warned of an unclosed
    transport (and raised "Event loop is closed" from it at the next garbage collection), and the
    process stayed a zombie until Tripane exited. A process outside the group that holds the
    output (a daemon the command started) is given up on after REAP_S."""
    try:
        await asyncio.wait_for(asyncio.shield(asyncio.gather(reading, proc.wait())), REAP_S)
    except asyncio.TimeoutError:
        reading.cancel()
    except OSError:  # (reading a pipe that broke: the process is killed all the same)
        pass


# Git runs its editor through its own sh (Git for Windows too), with the file's name after it.
NO_EDITOR = "echo 'No editor without a terminal: use -m, --no-edit or -F' >&2; false"


def _child_environment() -> dict[str, str]:
    """The command's environment: Tripane's, with Python's standard streams in UTF-8 unless the
    person chose otherwise, and no editor for git. On Windows a Python program writing to a pipe
    uses the ANSI code page, and fails outright (UnicodeEncodeError) on a character it lacks — a
    test printing ✓ would fail under Tripane and pass in the person's terminal."""
    env = dict(os.environ)
    env.setdefault("PYTHONIOENCODING", "utf-8")
    # No terminal, so no editor: `git commit` without -m (or a merge, a rebase -i) waited in vim
    # for the whole time-out, and the agent learnt nothing. Git now fails at once, saying how.
    env["GIT_EDITOR"] = NO_EDITOR
    env["GIT_TERMINAL_PROMPT"] = "0"  # a credential prompt fails instead of waiting for a console
    return env


def decode_output(data: bytes, fallback: str | None = None) -> str:
    """A command's output as text. UTF-8 as a rule; a line that is not UTF-8 is read in the
    console's code page on Windows (cmd's built-ins and older tools write the OEM code page: `dir`
    of a folder named Café), so a mix of the two reads right line by line. Elsewhere, bytes that
    are not UTF-8 become �. UTF-16 (which some Windows tools write to a pipe) is read as such."""
    if wide := _wide_codec(data[:BINARY_PROBE_BYTES]):
        return data.decode(wide, errors="replace")
    try:
        return big_text.decode_utf8(data) if len(data) > big_text.SLICE else data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    encoding = fallback or _console_encoding()
    lines = []
    for line in data.splitlines(keepends=True):
        try:
            lines.append(line.decode("utf-8"))
        except UnicodeDecodeError:
            lines.append(line.decode(encoding or "utf-8", errors="replace"))
    return "".join(lines)


def is_binary_output(data: bytes) -> bool:
    """NUL bytes near the start, as a file read tells a binary file (core/tools/files.py), unless
    they are UTF-16 text's."""
    probe = data[:BINARY_PROBE_BYTES]
    return b"\x00" in probe and _wide_codec(probe) is None


def _wide_codec(probe: bytes) -> str | None:
    """"utf-16" for output with a UTF-16 byte order mark, "utf-16-le" for text whose every other
    byte is NUL (wmic's, without a mark); None for any other."""
    if b"\x00" not in probe:
        return None
    if probe.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    odd, even = probe[1::2], probe[0::2]
    return "utf-16-le" if len(odd) >= 2 and odd.count(0) >= 0.9 * len(odd) and not even.count(0) else None


@functools.cache
def _console_encoding() -> str | None:
    if sys.platform != "win32":
        return None  # POSIX tools write the locale's encoding, UTF-8 on any current system
    import ctypes

    try:
        return f"cp{ctypes.windll.kernel32.GetOEMCP()}"
    except (AttributeError, OSError):
        return None


def kill_process_tree(proc: asyncio.subprocess.Process) -> None:
    """Kill the process and what it started (its group, made by start_new_session; on Windows its
    tree), without waiting."""
    if proc.returncode is not None:
        return
    try:
        if sys.platform == "win32":
            _kill_tree_on_windows(proc)
        else:  # the whole group, so children of the shell stop too
            os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _kill_tree_on_windows(proc: asyncio.subprocess.Process) -> None:
    """cmd.exe's children (the test run it started) hold the output pipe, which only their end
    closes, and TerminateProcess stops cmd.exe alone; taskkill /T ends the tree, cmd.exe included
    (while it lives, so its children can still be found). Not waited for: the pipe's end says when
    the tree is gone."""
    try:
        subprocess.Popen(["taskkill", "/F", "/T", "/PID", str(proc.pid)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
    except OSError:  # no taskkill (a stripped-down Windows): at least the shell stops
        proc.kill()
