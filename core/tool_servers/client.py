"""One tool server's process, spoken to in MCP's stdio transport: JSON-RPC 2.0 messages, one per
line, on its standard input and output; what it writes to its standard error is its log.

Written here rather than taken from the MCP SDK: the client side Tripane needs is four methods
(initialize, tools/list, tools/call, and answering ping and roots/list), while the SDK brings a web
server's dependencies (starlette, uvicorn, sse-starlette) into every install and bundle, and runs
its transport in anyio task groups, which Tripane's loop (qasync's, in the window) would have to
host. Stopping a call, killing the server's process tree and reporting why a server failed are
Tripane's own concerns anyway (core/tools/shell.py does the same for commands).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from core.tools.shell import kill_process_tree

log = logging.getLogger(__name__)

PROTOCOL_VERSION = "2025-11-25"  # the newest Tripane speaks; a server may answer with an older one
KNOWN_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", PROTOCOL_VERSION})
CLIENT_INFO = {"name": "Tripane", "version": "1"}
START_TIMEOUT_S = 60  # `npx -y …` downloads the server the first time: a slow start is not a failure
LINE_LIMIT = 64 * 1024 * 1024  # a result is one line; asyncio's default (64 KiB) refused larger ones
BIG_LINE = 1024 * 1024
LOG_LINES_KEPT = 20  # of the server's standard error, to say why it failed
CLOSE_WAIT_S = 2.0
METHOD_NOT_FOUND = -32601
REQUEST_CANCELLED = -32800


class ServerError(Exception):
    """A tool server could not be started, broke the protocol, ended or did not answer in time;
    the message names the server and says why, with the last lines of its log when it wrote any."""


class CallFailed(ServerError):
    """The server answered a request with a JSON-RPC error (an unknown tool, bad arguments)."""


class ServerProcess:
    """A tool server's process and the requests waiting for its answers."""

    def __init__(self, name: str, command: str, args: tuple[str, ...], env: Mapping[str, str], cwd: Path):
        self.name = name
        self.command = command
        self.args = args
        self.env = dict(env)
        self.cwd = cwd
        self.info: dict[str, Any] = {}  # the server's serverInfo, from its answer to initialize
        self.version = ""  # the protocol version agreed
        self._proc: asyncio.subprocess.Process | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future] = {}
        self._log: deque[str] = deque(maxlen=LOG_LINES_KEPT)
        self._readers: list[asyncio.Task] = []
        self._ended: ServerError | None = None
        self._write_lock = asyncio.Lock()

    @property
    def running(self) -> bool:
        return self._proc is not None and self._ended is None

    async def start(self, timeout: float = START_TIMEOUT_S) -> None:
        """Start the process and agree on the protocol; ServerError if either fails."""
        program = shutil.which(self.command, path=self.env.get("PATH")) or shutil.which(self.command)
        if program is None:
            raise ServerError(f"{self._who()} could not start: the program {self.command!r} was not found"
                              f"{_install_hint(self.command)}")
        # Its own process group (a stop reaches what it starts); on Windows, no console window.
        kwargs: dict = {"start_new_session": True} if sys.platform != "win32" else {
            "creationflags": getattr(subprocess, "CREATE_NO_WINDOW", 0)}
        try:
            self._proc = await asyncio.create_subprocess_exec(
                program, *self.args, cwd=self.cwd, env=self.env, limit=LINE_LIMIT,
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                **kwargs)
        except OSError as exc:
            raise ServerError(f"{self._who()} could not start: {exc.strerror or exc}") from exc
        self._readers = [asyncio.ensure_future(self._read_messages()), asyncio.ensure_future(self._read_log())]
        try:
            answer = await self.request("initialize", {
                "protocolVersion": PROTOCOL_VERSION, "clientInfo": CLIENT_INFO,
                "capabilities": {"roots": {"listChanged": False}}}, timeout)
        except BaseException:
            await self.close()
            raise
        self.version = str(answer.get("protocolVersion", ""))
        if self.version not in KNOWN_VERSIONS:
            log.warning("%s speaks MCP %r, which Tripane does not know; trying it all the same", self._who(),
                        self.version)
        self.info = answer.get("serverInfo") if isinstance(answer.get("serverInfo"), dict) else {}
        await self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    async def list_tools(self, timeout: float) -> list[dict[str, Any]]:
        """Every tool the server offers, page after page."""
        tools: list[dict[str, Any]] = []
        cursor = None
        for _page in range(1000):  # (a server whose cursor never ends would loop forever)
            answer = await self.request("tools/list", {"cursor": cursor} if cursor else {}, timeout)
            page = answer.get("tools")
            if not isinstance(page, list):
                raise ServerError(f"{self._who()} answered tools/list without a list of tools")
            tools.extend(tool for tool in page if isinstance(tool, dict) and isinstance(tool.get("name"), str))
            cursor = answer.get("nextCursor")
            if not cursor:
                break
        return tools

    async def call_tool(self, tool: str, arguments: dict[str, Any], timeout: float) -> dict[str, Any]:
        return await self.request("tools/call", {"name": tool, "arguments": arguments}, timeout)

    async def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """The result of one request. ServerError when the server ended or took longer than
        `timeout` seconds; CallFailed for its error answer. A request stopped (cancelled) is
        cancelled at the server too, so that it does not go on working for nobody."""
        if self._ended is not None:
            raise self._ended
        request_id = next(self._ids)
        waiting = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiting
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            return await asyncio.wait_for(asyncio.shield(waiting), timeout)
        except asyncio.TimeoutError:
            await self._cancel(request_id, "timed out")
            raise ServerError(f"{self._who()} did not answer {method} within {_seconds(timeout)}") from None
        except asyncio.CancelledError:
            await asyncio.shield(self._cancel(request_id, "stopped by the person"))
            raise
        finally:
            self._waiting.pop(request_id, None)

    async def close(self) -> None:
        """End the server: its input closed (as the specification asks), then its process tree
        killed if it has not ended within a moment."""
        proc = self._proc
        self._ended = self._ended or ServerError(f"{self._who()} was closed")
        if proc is None:
            return
        if proc.returncode is None:
            try:
                assert proc.stdin is not None
                proc.stdin.close()
                await asyncio.wait_for(proc.wait(), CLOSE_WAIT_S)
            except (asyncio.TimeoutError, OSError):
                kill_process_tree(proc)
                try:
                    await asyncio.wait_for(proc.wait(), CLOSE_WAIT_S)
                except asyncio.TimeoutError:
                    log.warning("%s did not end after it was killed", self._who())
        for reader in self._readers:
            reader.cancel()
        await asyncio.gather(*self._readers, return_exceptions=True)
        self._fail_waiting(self._ended)

    def log_tail(self) -> str:
        return "\n".join(self._log)

    # --- the streams -----------------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        proc = self._proc
        if proc is None or proc.stdin is None:
            raise ServerError(f"{self._who()} is not running")
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        async with self._write_lock:
            try:
                proc.stdin.write(line)
                await proc.stdin.drain()
            except (ConnectionError, OSError) as exc:
                raise self._ended or ServerError(f"{self._who()} stopped reading its input ({exc})") from exc

    async def _cancel(self, request_id: int, reason: str) -> None:
        try:
            await self._send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": request_id, "reason": reason}})
        except ServerError:
            pass

    async def _read_messages(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        try:
            while line := await stdout.readline():
                await self._take(line)
        except (ValueError, asyncio.LimitOverrunError):  # a line over LINE_LIMIT
            self._log.append(f"(a message over {LINE_LIMIT // (1024 * 1024)} MB was refused)")
            kill_process_tree(self._proc)
        except OSError as exc:
            self._log.append(f"(its output could not be read: {exc})")
        code = await self._proc.wait()
        await asyncio.sleep(0)  # (the log reader's last lines)
        tail = self.log_tail()
        self._ended = self._ended or ServerError(
            f"{self._who()} ended (exit code {code})" + (f". Its last words:\n{tail}" if tail else ""))
        self._fail_waiting(self._ended)

    async def _read_log(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        try:
            while line := await self._proc.stderr.readline():
                text = line.decode("utf-8", errors="replace").rstrip()
                if text:
                    self._log.append(text)
                    log.debug("%s: %s", self._who(), text)
        except (ValueError, OSError):
            pass

    async def _take(self, line: bytes) -> None:
        try:  # (a result of megabytes is parsed off the event loop: the window would stall on it)
            message = json.loads(line) if len(line) < BIG_LINE else await asyncio.to_thread(json.loads, line)
        except ValueError:
            # Not the protocol (a server that prints a banner to its output): kept as its log is.
            if text := line.decode("utf-8", errors="replace").strip():
                self._log.append(text)
            return
        for one in message if isinstance(message, list) else [message]:  # (2025-03-26 allowed batches)
            if isinstance(one, dict):
                await self._take_one(one)

    async def _take_one(self, message: dict[str, Any]) -> None:
        if "method" in message:
            if "id" in message:  # the server asks the client
                await self._answer(message)
            return  # a notification (its log, progress, a changed tool list): nothing to do
        waiting = self._waiting.get(message.get("id"))  # type: ignore[arg-type]
        if waiting is None or waiting.done():
            return
        if isinstance(message.get("error"), dict):
            error = message["error"]
            waiting.set_exception(CallFailed(f"{self._who()} refused it: {error.get('message', error)}"))
        elif isinstance(message.get("result"), dict):
            waiting.set_result(message["result"])
        else:
            waiting.set_exception(ServerError(f"{self._who()} answered without a result"))

    async def _answer(self, request: dict[str, Any]) -> None:
        method = request.get("method")
        if method == "ping":
            reply: dict[str, Any] = {"result": {}}
        elif method == "roots/list":  # the folder it works in: the session's work folder
            reply = {"result": {"roots": [{"uri": self.cwd.as_uri(), "name": self.cwd.name or str(self.cwd)}]}}
        else:  # sampling, elicitation: not offered (the capabilities sent say so)
            reply = {"error": {"code": METHOD_NOT_FOUND, "message": f"Tripane does not offer {method}"}}
        try:
            await self._send({"jsonrpc": "2.0", "id": request.get("id"), **reply})
        except ServerError:
            pass

    def _fail_waiting(self, error: ServerError) -> None:
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_exception(error)
                waiting.exception()  # (retrieved: one nobody awaits any more is not warned of)

    def _who(self) -> str:
        return f"The tool server {self.name!r}"


def _install_hint(command: str) -> str:
    program = os.path.basename(command).lower().removesuffix(".exe").removesuffix(".cmd")
    if program in ("npx", "node", "npm"):
        return " (it comes with Node.js: install it from nodejs.org, then restart Tripane)"
    if program in ("uvx", "uv"):
        return " (it comes with uv: see docs.astral.sh/uv, then restart Tripane)"
    if program == "docker":
        return " (install Docker, and start it)"
    return " on the PATH; give its full path"


def _seconds(timeout: float) -> str:
    return f"{timeout:g} second" + ("" if timeout == 1 else "s")
