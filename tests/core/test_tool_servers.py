"""Tool servers (MCP) spoken to as real child processes over stdio: tests/support/tool_server.py
plays the server; the client, the pool, the config file and the keyring's API are Tripane's own."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from pathlib import Path

import pytest

from core.secrets import stored_key
from core.tool_servers.client import ServerError, ServerProcess
from core.tool_servers.config import (
    ServerConfig,
    ServersFileError,
    environment_of,
    import_servers,
    read_servers,
    secret_key,
    write_servers,
)
from core.tool_servers.pool import ServerPool

SCRIPT = str(Path(__file__).parents[1] / "support" / "tool_server.py")


def demo(*options: str, name: str = "demo", **kwargs) -> ServerConfig:
    return ServerConfig(name=name, command=sys.executable, args=(SCRIPT, *options), **kwargs)


def process(tmp_path: Path, *options: str) -> ServerProcess:
    env, _ = environment_of(demo())
    return ServerProcess("demo", sys.executable, (SCRIPT, *options), env, tmp_path)


@contextlib.asynccontextmanager
async def running(tmp_path: Path, *options: str):
    server = process(tmp_path, *options)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


async def test_a_server_is_started_and_its_tools_listed_page_after_page(tmp_path):
    async with running(tmp_path, "--pages", "3", "--banner") as server:
        tools = await server.list_tools(5)
        assert [tool["name"] for tool in tools] == ["echo", "lookup", "fail", "picture", "slow", "crash", "env", "note", "huge"]
        assert server.info["name"] == "demo" and server.version == "2025-11-25"
        assert "Demo server v1 starting" in server.log_tail()  # a banner on its output is not the protocol
        answer = await server.call_tool("echo", {"text": "héllo"}, 5)
        assert answer["content"][0]["text"].startswith("echo: héllo")
    assert not server.running


async def test_the_server_is_told_its_root_is_the_work_folder(tmp_path):
    async with running(tmp_path, "--ask-roots") as server:
        await asyncio.sleep(0.2)
        text = (await server.call_tool("echo", {"text": "x"}, 5))["content"][0]["text"]
        assert tmp_path.as_uri() in text and f"cwd {tmp_path}" in text


async def test_a_refused_request_says_what_the_server_said(tmp_path):
    async with running(tmp_path) as server:
        with pytest.raises(ServerError, match="refused it: Unknown tool: nope"):
            await server.call_tool("nope", {}, 5)


async def test_a_server_that_ends_mid_call_fails_the_call_with_its_last_words(tmp_path):
    server = process(tmp_path)
    await server.start()
    with pytest.raises(ServerError) as failure:
        await server.call_tool("crash", {}, 5)
    assert "ended (exit code 3)" in str(failure.value) and "the index is corrupt" in str(failure.value)
    assert not server.running
    with pytest.raises(ServerError):  # and the next call says so at once
        await server.call_tool("echo", {"text": "x"}, 5)
    await server.close()


async def test_a_server_that_cannot_start_says_why(tmp_path):
    with pytest.raises(ServerError, match="cannot open the config file"):
        await process(tmp_path, "--die-at-start").start()
    missing = ServerProcess("gh", "npx-that-is-not-there", (), {"PATH": "/nonexistent"}, tmp_path)
    with pytest.raises(ServerError, match="'npx-that-is-not-there' was not found on the PATH"):
        await missing.start()


async def test_a_call_past_its_time_is_cancelled_at_the_server(tmp_path):
    async with running(tmp_path) as server:
        with pytest.raises(ServerError, match="did not answer tools/call within 0.3 seconds"):
            await server.call_tool("slow", {"seconds": 30}, 0.3)
        await asyncio.sleep(0.3)
        assert "cancelled 2" in server.log_tail()  # (request 1 was initialize)
        assert (await server.call_tool("echo", {"text": "still here"}, 5))["content"][0]["text"].startswith("echo")


async def test_a_stopped_call_is_cancelled_at_the_server(tmp_path):
    async with running(tmp_path) as server:
        calling = asyncio.ensure_future(server.call_tool("slow", {"seconds": 30}, 60))
        await asyncio.sleep(0.2)
        calling.cancel()
        with pytest.raises(asyncio.CancelledError):
            await calling
        await asyncio.sleep(0.3)
        assert "cancelled 2" in server.log_tail()


async def test_a_result_far_larger_than_a_pipe_line_comes_whole(tmp_path):
    async with running(tmp_path) as server:
        answer = await server.call_tool("huge", {"chars": 3_000_000}, 20)
        assert len(answer["content"][0]["text"]) == 3_000_000


async def test_the_pool_starts_a_server_once_per_work_folder_and_again_after_a_change(tmp_path):
    configs = [demo()]
    pool = ServerPool(lambda: configs)
    try:
        first, again = await asyncio.gather(pool.process(configs[0], tmp_path), pool.process(configs[0], tmp_path))
        assert first is again
        other = tmp_path / "other"
        other.mkdir()
        assert await pool.process(configs[0], other) is not first
        configs[0] = demo("--no-lookup")  # the person changed its settings
        changed = await pool.process(configs[0], tmp_path)
        assert changed is not first and not first.running
        listed = await pool.list_all(tmp_path)
        assert "lookup" not in [tool["name"] for _server, tool in listed.tools]
    finally:
        await pool.close_all()
    assert not changed.running


async def test_the_pool_lists_the_servers_that_start_and_says_why_others_did_not(tmp_path):
    pool = ServerPool(lambda: [demo(), demo("--die-at-start", name="broken"), demo(name="off", enabled=False)])
    try:
        listed = await pool.list_all(tmp_path)
    finally:
        await pool.close_all()
    assert {server.name for server, _tool in listed.tools} == {"demo"}
    assert listed.failed[0][0] == "broken" and "cannot open the config file" in listed.failed[0][1]


async def test_a_server_whose_secret_is_not_in_the_keyring_is_not_started(tmp_path):
    pool = ServerPool(lambda: [demo(secret_env=("DEMO_ONLY_TOKEN",))])
    listed = await pool.list_all(tmp_path)
    assert "needs DEMO_ONLY_TOKEN, whose value is neither in this computer's keyring nor in Tripane's environment" \
        in listed.failed[0][1]


def test_where_no_keyring_runs_a_secret_comes_from_tripanes_environment():
    env, missing = environment_of(demo(secret_env=("DEMO_ONLY_TOKEN",)), {"DEMO_ONLY_TOKEN": "t0k3n-from-env"})
    assert env["DEMO_ONLY_TOKEN"] == "t0k3n-from-env" and not missing


def test_the_servers_file_is_written_and_read_back(tmp_path):
    path = tmp_path / "tool_servers.json"
    servers = [demo(env=(("LOG_LEVEL", "debug"),), secret_env=("API_TOKEN",), timeout_s=30),
               demo(name="off", enabled=False)]
    write_servers(servers, path)
    assert read_servers(path) == servers
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw["mcpServers"]["off"]["disabled"] is True and raw["mcpServers"]["demo"]["secretEnv"] == ["API_TOKEN"]


def test_a_broken_servers_file_gives_none_and_loses_nothing(tmp_path):
    path = tmp_path / "tool_servers.json"
    path.write_text('{"mcpServers": {"a": ', encoding="utf-8")
    assert read_servers(path) == []
    assert path.read_text(encoding="utf-8") == '{"mcpServers": {"a": '


def test_importing_another_clients_file_keeps_its_secrets_in_the_keyring(tmp_path, memory_keyring):
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {
        "github issues": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                          "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnop", "LOG": "info"}},
        "remote": {"url": "https://example.com/mcp"},
        "db": {"command": "uvx", "args": ["mcp-server-sqlite", "--db-path", "${HOME}/db.sqlite"], "disabled": True},
    }}), encoding="utf-8")
    path = tmp_path / "tool_servers.json"
    write_servers([demo(name="db")], path)

    found = import_servers(source, path)

    assert [s.name for s in found.servers] == ["github-issues", "db"]
    assert found.skipped == ["remote: it is reached at an address; Tripane starts the servers it uses itself"]
    assert stored_key(secret_key("github-issues", "GITHUB_PERSONAL_ACCESS_TOKEN")) == "ghp_abcdefghijklmnop"
    written = path.read_text(encoding="utf-8")
    assert "ghp_abcdefghijklmnop" not in written  # the token is in the keyring only
    servers = {s.name: s for s in read_servers(path)}
    assert servers["github-issues"].secret_env == ("GITHUB_PERSONAL_ACCESS_TOKEN",)
    assert servers["github-issues"].env == (("LOG", "info"),)
    assert servers["db"].command == "uvx" and not servers["db"].enabled  # the import replaced Tripane's "db"
    env, missing = environment_of(servers["github-issues"], {"PATH": "/bin", "OPENAI_API_KEY": "sk-1234567890"})
    assert env["GITHUB_PERSONAL_ACCESS_TOKEN"] == "ghp_abcdefghijklmnop" and not missing
    assert "OPENAI_API_KEY" not in env  # the person's other keys are not handed to a third party's server


def test_a_file_naming_no_servers_is_refused_with_why(tmp_path):
    source = tmp_path / "settings.json"
    source.write_text('{"editor.fontSize": 14}', encoding="utf-8")
    with pytest.raises(ServersFileError, match='no "mcpServers"'):
        import_servers(source, tmp_path / "tool_servers.json")
    assert not (tmp_path / "tool_servers.json").exists()


def test_variables_in_a_servers_settings_are_filled_in(tmp_path):
    server = demo(env=(("DB", "${HOME}/data.db"), ("KEEP", "${NOT_SET}")))
    env, _ = environment_of(server, {"HOME": "/home/ana", "PATH": "/bin"})
    assert env["DB"] == "/home/ana/data.db" and env["KEEP"] == "${NOT_SET}"
