"""`tripane servers …`: the tool servers (MCP) the agent is given, from the command line. (Its
imports are made where used: the parser is built for every `tripane` command.)"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(commands) -> None:
    servers = commands.add_parser(
        "servers", help="the tool servers (MCP) whose tools the agent is given: list, add, import, check")
    actions = servers.add_subparsers(dest="servers_command")
    actions.add_parser("list", help="the servers, their commands, and which are on (the default)")
    add = actions.add_parser("add", help="add a server, or change one: tripane servers add NAME -- COMMAND ARGS…")
    add.add_argument("--env", action="append", default=[], metavar="NAME[=VALUE]",
                     help="an environment variable the server needs; a secret one (a token, a key, a password) "
                          "is asked for when no value is given, and kept in the keyring")
    add.add_argument("--timeout", type=int, default=0, help="seconds a call may take (default 120)")
    add.add_argument("name", help="its name (letters, digits, - and _): its tools are named mcp_NAME_…")
    add.add_argument("server_command", nargs=argparse.REMAINDER, metavar="-- COMMAND ARGS",
                     help="the command that starts it, after --")
    remove = actions.add_parser("remove", help="remove a server, and its secrets from the keyring")
    remove.add_argument("name")
    for word, does in (("on", "give its tools to new sessions"), ("off", "give its tools to no new session")):
        switch = actions.add_parser(word, help=does)
        switch.add_argument("name")
    imported = actions.add_parser("import", help="the servers of another MCP client's file (claude_desktop_config.json, "
                                  "Cursor's mcp.json, VS Code's, a project's .mcp.json); their secrets go to the keyring")
    imported.add_argument("file", type=Path)
    check = actions.add_parser("check", help="start the servers (or one) in a folder and list their tools")
    check.add_argument("name", nargs="?")
    check.add_argument("--folder", type=Path, default=Path.cwd(), help="the work folder to start them in (default: here)")


async def servers_command(args) -> int:
    from core.tool_servers.config import ServersFileError

    action = args.servers_command or "list"
    try:
        if action == "list":
            return _list()
        if action == "add":
            return _add(args)
        if action in ("remove", "on", "off"):
            return _change(action, args.name)
        if action == "import":
            return _import(args.file)
        return await _check(args.name, args.folder)
    except ServersFileError as exc:
        print(f"tripane: servers: {exc}", file=sys.stderr)
        return 1


def _list() -> int:
    from core.tool_servers.config import read_servers, servers_file

    servers = read_servers()
    if not servers:
        print(f"No tool servers. Add one with `tripane servers add NAME -- COMMAND ARGS…`, or import another client's "
              f"with `tripane servers import FILE`. (They are kept in {servers_file()}.)")
        return 0
    for server in servers:
        state = "on " if server.enabled else "off"
        secrets = f"  (in the keyring: {', '.join(server.secret_env)})" if server.secret_env else ""
        print(f"{state}  {server.name}: {server.command_line()}{secrets}")
    return 0


def _add(args) -> int:
    import getpass

    from core.secrets import SECRET_NAME
    from core.tool_servers.config import (
        NAME,
        ServerConfig,
        read_servers,
        save_secret,
        write_servers,
    )

    command = args.server_command[1:] if args.server_command[:1] == ["--"] else args.server_command
    if not NAME.fullmatch(args.name):
        print(f"tripane: servers: {args.name!r} cannot name a server: use letters, digits, - and _ (32 at most, "
              "beginning with a letter or digit)", file=sys.stderr)
        return 2
    if not command:
        print("tripane: servers: give the command that starts it after --, e.g. "
              "`tripane servers add files -- npx -y @modelcontextprotocol/server-filesystem .`", file=sys.stderr)
        return 2
    servers = read_servers()
    before = next((s for s in servers if s.name == args.name), None)
    env = dict(before.env) if before else {}
    secret = list(before.secret_env) if before else []
    for given in args.env:
        variable, has_value, value = given.partition("=")
        if not SECRET_NAME.search(variable):
            env[variable] = value
            continue
        if not has_value:
            value = getpass.getpass(f"{variable} for {args.name} (kept in the keyring): ")
        if value and save_secret(args.name, variable, value):
            print(f"No keyring here: {variable} is not kept. Set {variable} in the environment Tripane starts "
                  "from instead: the server is given it from there.", file=sys.stderr)
        secret = [*dict.fromkeys([*secret, variable])]
        env.pop(variable, None)
    server = ServerConfig(name=args.name, command=command[0], args=tuple(command[1:]), env=tuple(env.items()),
                          secret_env=tuple(secret), enabled=before.enabled if before else True,
                          timeout_s=args.timeout or (before.timeout_s if before else 120))
    write_servers([server if s.name == args.name else s for s in servers] + ([] if before else [server]))
    print(f"{'Changed' if before else 'Added'} {args.name}: {server.command_line()}. New sessions are given its tools; "
          f"`tripane servers check {args.name}` starts it and lists them.")
    return 0


def _change(action: str, name: str) -> int:
    from dataclasses import replace

    from core.secrets import forget_key
    from core.tool_servers.config import read_servers, secret_key, write_servers

    servers = read_servers()
    server = next((s for s in servers if s.name == name), None)
    if server is None:
        print(f"tripane: servers: no server named {name!r} (`tripane servers` lists them)", file=sys.stderr)
        return 1
    if action == "remove":
        write_servers([s for s in servers if s.name != name])
        for variable in server.secret_env:
            forget_key(secret_key(name, variable))
        print(f"Removed {name}. Sessions given its tools keep them, and are told it is gone when they call one.")
    else:
        write_servers([replace(s, enabled=action == "on") if s.name == name else s for s in servers])
        print(f"{name} is {action}: new sessions are {'' if action == 'on' else 'not '}given its tools.")
    return 0


def _import(source: Path) -> int:
    from core.text import counted
    from core.tool_servers.config import import_servers, servers_file

    found = import_servers(source)
    for server in found.servers:
        kept = f" ({', '.join(server.secret_env)} kept in the keyring)" if server.secret_env else ""
        print(f"Imported {server.name}: {server.command_line()}{kept}")
    for skipped in found.skipped:
        print(f"Skipped {skipped}")
    if found.held:
        print(f"No keyring here: {', '.join(found.held)} not kept. Set them in the environment Tripane starts from "
              "instead: the servers are given them from there.", file=sys.stderr)
    print(f"{counted(len(found.servers), 'server')} imported into {servers_file()}.")
    return 0 if found.servers or not found.skipped else 1


async def _check(name: str | None, folder: Path) -> int:
    from dataclasses import replace

    from core.text import counted
    from core.tool_servers.config import read_servers
    from core.tool_servers.pool import ServerPool
    from core.tool_servers.tools import offered_tools, request_tokens
    from core.tools.builtin import builtin_registry

    servers = [s for s in read_servers() if name in (None, s.name) and (s.enabled or name)]
    if not servers:
        print("tripane: servers: " + (f"no server named {name!r}" if name else "no server is on"), file=sys.stderr)
        return 1
    pool = ServerPool(lambda: [replace(s, enabled=True) for s in servers])
    try:
        listed = await pool.list_all(folder.resolve())
    finally:
        await pool.close_all()
    offered = offered_tools(listed.tools, builtin_registry().specs)
    for server in servers:
        if why := dict(listed.failed).get(server.name):
            print(f"✗ {server.name}: {why}")
            continue
        tools = [tool for tool in offered if tool.server == server.name]
        print(f"✓ {server.name}: {counted(len(tools), 'tool')}, about {request_tokens(tools):,} tokens in each request")
        for tool in tools:
            print(f"    {tool.offered_as}" + ("  (changes nothing: runs without asking)" if tool.read_only else ""))
    return 1 if listed.failed else 0
