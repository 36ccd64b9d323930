"""Which tool servers the person named, and how each is started.

They live in `tool_servers.json` beside settings.json, in the shape other MCP clients use
(`{"mcpServers": {"name": {"command": …, "args": […], "env": {…}}}}`), so that a person can read it,
and import theirs from Claude Desktop, Cursor, VS Code or a project's `.mcp.json`. The values of
secret environment variables (a token, a password: core/secrets.py SECRET_NAME) are never in the
file: they are kept in the OS keyring, and the file names them under "secretEnv".
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.memory.working import atomic_write
from core.secrets import SECRET_NAME, NoKeyring, hold_api_key, set_api_key, stored_key
from core.user_settings import settings_file

log = logging.getLogger(__name__)

FILE_NAME = "tool_servers.json"
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}")
DEFAULT_TIMEOUT_S = 120  # a call's, as a command's (core/tools/shell.py)
# What a server is given of Tripane's environment, as MCP's SDKs do: enough to find programs and
# the home folder, not the person's API keys (a third party's server would be handed them all).
INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR",
             "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")
INHERITED_ON_WINDOWS = ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
                        "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP",
                        "USERNAME", "USERPROFILE", "WINDIR", "COMSPEC")
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ServersFileError(ValueError):
    """A servers file (Tripane's or one imported) that cannot be used; the message says why."""


@dataclass(frozen=True)
class ServerConfig:
    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # values in the clear (not secrets)
    secret_env: tuple[str, ...] = ()  # names whose values are in the keyring
    enabled: bool = True
    timeout_s: int = DEFAULT_TIMEOUT_S

    def command_line(self) -> str:
        """The command as a person would type it (split_command splits it back), for lists,
        messages and Settings' field; no secret is in it."""
        return " ".join(_quoted(part) for part in (self.command, *self.args))


@dataclass
class Imported:
    servers: list[ServerConfig] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "name: why"
    # The values of secret variables that were in the clear, by (server, variable): for the keyring.
    secrets: dict[tuple[str, str], str] = field(default_factory=dict)
    held: list[str] = field(default_factory=list)  # of those, the ones kept for this run only (no keyring)


def servers_file() -> Path:
    return settings_file().parent / FILE_NAME


def read_servers(path: Path | None = None) -> list[ServerConfig]:
    """The servers named, in their order. A missing file gives none; a broken one is logged and
    gives those that can be read, so that no session refuses to start over it."""
    path = path or servers_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        log.warning("the tool servers in %s cannot be read (%s); none is used", path, exc)
        return []
    found = servers_in(raw)
    for problem in found.skipped:
        log.warning("tool server in %s not used: %s", path, problem)
    return found.servers


def write_servers(servers: Iterable[ServerConfig], path: Path | None = None) -> None:
    path = path or servers_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    entries: dict[str, Any] = {}
    for server in servers:
        entry: dict[str, Any] = {"command": server.command, "args": list(server.args)}
        if server.env:
            entry["env"] = dict(server.env)
        if server.secret_env:
            entry["secretEnv"] = list(server.secret_env)
        if not server.enabled:
            entry["disabled"] = True
        if server.timeout_s != DEFAULT_TIMEOUT_S:
            entry["timeout"] = server.timeout_s
        entries[server.name] = entry
    atomic_write(path, json.dumps({"mcpServers": entries}, indent=2, ensure_ascii=False) + "\n")


def servers_in(raw: object, split_secrets: bool = False) -> Imported:
    """The servers of a JSON document in any of the usual shapes: {"mcpServers": {…}} (Claude
    Desktop, Cursor, .mcp.json), {"servers": {…}} (VS Code) or {"mcp": {"servers": {…}}} (VS
    Code's settings.json). Servers reached over HTTP are skipped, said so: Tripane starts its
    servers itself. `split_secrets`: secret values in the clear are taken out, into `secrets` (an
    import, which keeps them in the keyring); otherwise such a server is used as it is written."""
    found = Imported()
    if isinstance(raw, dict) and isinstance(raw.get("mcp"), dict):
        raw = raw["mcp"]
    entries = raw.get("mcpServers", raw.get("servers")) if isinstance(raw, dict) else None
    if not isinstance(entries, dict):
        raise ServersFileError('it has no "mcpServers" (or "servers") object naming servers')
    taken: set[str] = set()
    for given_name, entry in entries.items():
        name = usable_name(str(given_name))
        name = next(f"{name[:29]}-{n}" for n in range(2, 1000) if f"{name[:29]}-{n}" not in taken) \
            if name in taken else name
        taken.add(name)
        if not isinstance(entry, dict):
            found.skipped.append(f"{given_name}: not an object")
            continue
        if not isinstance(entry.get("command"), str) or not entry["command"].strip():
            how = "it is reached at an address" if entry.get("url") else "it has no command"
            found.skipped.append(f"{given_name}: {how}; Tripane starts the servers it uses itself")
            continue
        args = entry.get("args", [])
        env = entry.get("env", {})
        if not isinstance(args, list) or not isinstance(env, dict):
            found.skipped.append(f"{given_name}: its args are not a list, or its env not an object")
            continue
        secret_env = [str(n) for n in entry.get("secretEnv", []) if isinstance(n, str)]
        clear: list[tuple[str, str]] = []
        for variable, value in env.items():
            if split_secrets and SECRET_NAME.search(str(variable)) and not VARIABLE.fullmatch(str(value)):
                found.secrets[(name, str(variable))] = str(value)
                secret_env.append(str(variable))
            else:
                clear.append((str(variable), str(value)))
        timeout = entry.get("timeout", DEFAULT_TIMEOUT_S)
        found.servers.append(ServerConfig(
            name=name, command=entry["command"].strip(), args=tuple(str(a) for a in args), env=tuple(clear),
            secret_env=tuple(dict.fromkeys(secret_env)), enabled=not entry.get("disabled", False),
            timeout_s=int(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else DEFAULT_TIMEOUT_S))
    return found


def servers_of_file(source: Path) -> Imported:
    """The servers another client's file names, their secret values taken out (see servers_in)."""
    try:
        raw = json.loads(source.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise ServersFileError(f"{source} cannot be read: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ServersFileError(f"{source} is not JSON ({exc})") from exc
    return servers_in(raw, split_secrets=True)


def import_servers(source: Path, path: Path | None = None) -> Imported:
    """Add the servers another client's file names to Tripane's, their secrets to the keyring. A
    server of a name Tripane already has is replaced by the imported one."""
    found = servers_of_file(source)
    for (server, variable), value in found.secrets.items():
        if save_secret(server, variable, value):
            found.held.append(f"{server}: {variable}")
    imported = {server.name: server for server in found.servers}
    kept = [server for server in read_servers(path) if server.name not in imported]
    write_servers([*kept, *found.servers], path)
    return found


def save_secret(server: str, variable: str, value: str) -> bool:
    """Keep a secret variable's value in the keyring; True when it could only be held for this run
    (no keyring here), which the person should be told."""
    try:
        set_api_key(secret_key(server, variable), value)
        return False
    except NoKeyring as exc:
        log.info("the value of %s for the tool server %s is held until Tripane ends: %s", variable, server, exc)
        hold_api_key(secret_key(server, variable), value)
        return True


def secret_key(server: str, variable: str) -> str:
    """The name a server's secret is kept under in the keyring."""
    return f"tool-server:{server}:{variable}"


def usable_name(name: str) -> str:
    """The name as tool names can carry it (letters, digits, - and _; 32 at most)."""
    cleaned = re.sub(r"[^A-Za-z0-9_-]+", "-", name.strip()).strip("-_")[:32] or "server"
    return cleaned if cleaned[0].isalnum() else f"s{cleaned}"[:32]


def environment_of(server: ServerConfig, environ: Mapping[str, str] | None = None,
                   typed: Mapping[str, str] | None = None) -> tuple[dict[str, str], list[str]]:
    """The server's environment (the inherited part of Tripane's, its own variables, its secrets
    from the keyring, or from Tripane's environment where none is kept; `${NAME}` in a value
    taken from those or Tripane's), and the secrets that are missing. `typed`: secrets typed in
    Settings and not saved yet, by name (a check before saving)."""
    environ = os.environ if environ is None else environ
    inherited = INHERITED_ON_WINDOWS if sys.platform == "win32" else INHERITED
    env = {name: environ[name] for name in inherited if name in environ}
    env["PYTHONIOENCODING"] = "utf-8"  # (a Python server on Windows would write the ANSI code page)
    missing = []
    for variable in server.secret_env:
        # Where no keyring runs, the variable set where Tripane starts does (as a model's key does).
        value = (typed or {}).get(variable) or stored_key(secret_key(server.name, variable)) or environ.get(variable)
        if value is None:
            missing.append(variable)
        else:
            env[variable] = value
    lookup = {**environ, **env}
    for variable, value in server.env:
        env[variable] = expanded(value, lookup)
    return env, missing


def expanded(text: str, lookup: Mapping[str, str]) -> str:
    """`${NAME}` replaced by NAME's value (as Claude Code's .mcp.json allows); unknown names stay."""
    return VARIABLE.sub(lambda m: lookup.get(m.group(1), m.group(0)), text)


def secret_values(server: ServerConfig) -> dict[str, str]:
    """The server's secrets by name, to hide them wherever its output is shown or kept."""
    found = {}
    for variable in server.secret_env:
        value = stored_key(secret_key(server.name, variable))
        if value:
            found[variable] = value
    return found


def split_command(text: str, windows: bool = sys.platform == "win32") -> list[str]:
    """A command line as typed (or pasted from a server's README) split into the program and its
    arguments: quotes group, as a shell's do. On Windows a backslash is a path's, not an escape
    (C:\\Tools\\server.exe). ValueError for an unclosed quote."""
    if not windows:
        return shlex.split(text)
    return [part[1:-1] if len(part) >= 2 and part[0] == part[-1] and part[0] in "\"'" else part
            for part in shlex.split(text, posix=False)]


def _quoted(part: str) -> str:
    """The part as split_command takes it back whole."""
    if sys.platform != "win32":
        return shlex.quote(part)
    return f'"{part}"' if not part or any(c.isspace() for c in part) else part


def other_clients_files(home: Path | None = None) -> list[Path]:
    """The files where other MCP clients on this computer keep their servers, those that exist:
    where Import starts looking."""
    home = home or Path.home()
    if sys.platform == "darwin":
        config = home / "Library" / "Application Support"
    elif sys.platform == "win32":
        config = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    else:  # (set but empty is unset, as the XDG specification says)
        config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    claude, code = config / "Claude", config / "Code" / "User"
    candidates = [claude / "claude_desktop_config.json", home / ".cursor" / "mcp.json", code / "mcp.json",
                  home / ".codeium" / "windsurf" / "mcp_config.json"]
    return [path for path in candidates if path.is_file()]
