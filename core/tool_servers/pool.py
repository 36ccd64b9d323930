"""The tool servers this process runs: one per server and work folder (a server's files, roots
and relative paths are its work folder's), started when a session first needs it and kept for the
sessions after; all ended when Tripane quits (close_all).

Started anew when its settings changed (the person fixed a path, a token) or it ended.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.tool_servers.client import ServerError, ServerProcess
from core.tool_servers.config import (
    ServerConfig,
    environment_of,
    expanded,
    read_servers,
)

log = logging.getLogger(__name__)

LIST_TIMEOUT_S = 30


@dataclass(frozen=True)
class Listed:
    """What the enabled servers offer: (server, its tools as it describes them), and those that
    failed, with why."""
    tools: tuple[tuple[ServerConfig, dict[str, Any]], ...]
    failed: tuple[tuple[str, str], ...]


class ServerPool:
    def __init__(self, configs: Callable[[], list[ServerConfig]] = read_servers,
                 typed: Mapping[tuple[str, str], str] | None = None):
        """`typed`: secrets typed and not saved yet, by (server, variable) (Settings' check)."""
        self._configs = configs
        self._typed = typed or {}
        self._running: dict[tuple[str, Path], tuple[ServerConfig, ServerProcess]] = {}
        self._starting: dict[tuple[str, Path], asyncio.Future] = {}

    def enabled(self) -> list[ServerConfig]:
        return [server for server in self._configs() if server.enabled]

    def chosen(self, names: tuple[str, ...] | None) -> list[ServerConfig]:
        """The servers of those names, on or off (None: those on): a session's choice."""
        return self.enabled() if names is None else [server for server in self._configs() if server.name in names]

    def config(self, name: str) -> ServerConfig | None:
        return next((server for server in self._configs() if server.name == name), None)

    async def list_all(self, workdir: Path, servers: list[ServerConfig] | None = None) -> Listed:
        """The tools of `servers` (by default those on), the servers started side by side."""
        servers = self.enabled() if servers is None else servers
        results = await asyncio.gather(*(self._listed(server, workdir) for server in servers),
                                       return_exceptions=True)
        tools: list[tuple[ServerConfig, dict[str, Any]]] = []
        failed: list[tuple[str, str]] = []
        for server, result in zip(servers, results):
            if isinstance(result, ServerError):
                failed.append((server.name, str(result)))
            elif isinstance(result, BaseException):
                raise result
            else:
                tools.extend((server, tool) for tool in result)
        return Listed(tuple(tools), tuple(failed))

    async def _listed(self, server: ServerConfig, workdir: Path) -> list[dict[str, Any]]:
        process = await self.process(server, workdir)
        return await process.list_tools(LIST_TIMEOUT_S)

    async def call(self, name: str, tool: str, arguments: dict[str, Any], workdir: Path) -> dict[str, Any]:
        server = self.config(name)
        if server is None:
            raise ServerError(f"The tool server {name!r} is no longer in Tripane's settings (Settings → Tool "
                              "servers), so its tools cannot run")
        process = await self.process(server, workdir)
        return await process.call_tool(tool, arguments, server.timeout_s)

    async def process(self, server: ServerConfig, workdir: Path) -> ServerProcess:
        """The server's process for the work folder: the one running, or one started now (once,
        however many sessions ask at the same time)."""
        key = (server.name, workdir)
        running = self._running.get(key)
        if running is not None and running[0] == server and running[1].running:
            return running[1]
        if running is not None:  # ended, or its settings changed: started again as they are now
            del self._running[key]
            await running[1].close()
        starting = self._starting.get(key)
        if starting is None:
            starting = self._starting[key] = asyncio.ensure_future(self._start(server, workdir))

            def started(done: asyncio.Future) -> None:
                self._starting.pop(key, None)
                if not done.cancelled():
                    done.exception()  # (retrieved: the session that asked may have been stopped meanwhile)
            starting.add_done_callback(started)
        return await asyncio.shield(starting)  # (a stop while it starts leaves it to start, for the next call)

    async def _start(self, server: ServerConfig, workdir: Path) -> ServerProcess:
        typed = {variable: value for (name, variable), value in self._typed.items() if name == server.name}
        env, missing = await asyncio.to_thread(environment_of, server, None, typed)  # (the keyring: see tools.py)
        if missing:
            raise ServerError(f"The tool server {server.name!r} needs {', '.join(missing)}, whose value is neither in "
                              "this computer's keyring nor in Tripane's environment: type it again in Settings → Tool "
                              "servers")
        args = tuple(expanded(arg, env) for arg in server.args)
        process = ServerProcess(server.name, server.command, args, env, workdir)
        await process.start()
        self._running[(server.name, workdir)] = (server, process)
        log.info("tool server %s started in %s (%s)", server.name, workdir, process.info.get("name", "?"))
        return process

    async def close_all(self) -> None:
        running, self._running = list(self._running.values()), {}
        await asyncio.gather(*(process.close() for _config, process in running), return_exceptions=True)


POOL = ServerPool()  # this process's: the window's sessions and `tripane run` share it
