"""`tripane servers …` and a `tripane run` whose agent calls a tool server's tool: the real CLI in a
child process, litellm's real path to a scripted OpenAI-compatible server on 127.0.0.1, and the
scripted tool server (tests/support/tool_server.py) started by Tripane as a person's would be."""

from __future__ import annotations

import json
import re
import sys

from core.cli import _servers_chosen, build_parser
from core.events import ServerToolsListed, ToolResult
from core.store import Store
from tests.core.test_cli import finish, tripane, work_folder
from tests.core.test_tool_servers import SCRIPT
from tests.support.openai_server import ScriptedServer, Turn, positional, tool


def servers(*args: str, tmp_path, stdin: str | None = None):
    config = {"TRIPANE_CONFIG_DIR": str(tmp_path / "config")}
    proc = tripane("servers", *args, data_dir=tmp_path / "data", env=config,
                   **({"stdin": -1} if stdin is not None else {}))
    out, err = proc.communicate(stdin, timeout=120)
    return proc.returncode, out, err


def test_servers_are_added_checked_turned_off_and_removed(tmp_path):
    code, out, _ = servers(tmp_path=tmp_path)
    assert code == 0 and out.startswith("No tool servers.")
    code, out, err = servers("add", "--env", "LOG=debug", "demo", "--", sys.executable, SCRIPT, "--pages", "3",
                             tmp_path=tmp_path)
    assert code == 0, err
    assert out.startswith("Added demo: ")

    code, out, err = servers("check", tmp_path=tmp_path)
    assert code == 0, err
    lines = out.splitlines()
    assert re.fullmatch(r"✓ demo: 9 tools, about \d{3} tokens in each request", lines[0]), lines[0]
    assert "    mcp_demo_lookup  (changes nothing: runs without asking)" in lines
    assert "    mcp_demo_echo" in lines

    code, out, _ = servers("off", "demo", tmp_path=tmp_path)
    assert code == 0
    code, out, _ = servers(tmp_path=tmp_path)
    assert out.startswith("off  demo: ")
    code, _, err = servers("check", tmp_path=tmp_path)
    assert code == 1 and "no server is on" in err
    code, _, _ = servers("remove", "demo", tmp_path=tmp_path)
    code, out, _ = servers(tmp_path=tmp_path)
    assert out.startswith("No tool servers.")


def test_a_server_that_fails_its_check_says_why(tmp_path):
    servers("add", "broken", "--", sys.executable, SCRIPT, "--die-at-start", tmp_path=tmp_path)
    servers("add", "gone", "--", "no-such-program-here", tmp_path=tmp_path)
    code, out, _ = servers("check", tmp_path=tmp_path)
    assert code == 1
    assert "✗ broken: The tool server 'broken' ended (exit code 2). Its last words:\ncannot open the config file" in out
    assert "✗ gone: The tool server 'gone' could not start: the program 'no-such-program-here' was not found" in out


def test_importing_a_file_that_names_no_servers_exits_1_with_why(tmp_path):
    source = tmp_path / "mcp.json"
    source.write_text(json.dumps({"servers": {"web": {"url": "https://example.com/mcp"}}}), encoding="utf-8")
    code, out, _ = servers("import", str(source), tmp_path=tmp_path)
    assert code == 1 and "Skipped web: it is reached at an address" in out
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    code, _, err = servers("import", str(tmp_path / "broken.json"), tmp_path=tmp_path)
    assert code == 1 and "is not JSON" in err and "Traceback" not in err


def test_a_run_from_the_terminal_gives_the_agent_the_servers_tools(tmp_path):
    servers("add", "demo", "--", sys.executable, SCRIPT, tmp_path=tmp_path)
    work = work_folder(tmp_path)
    script = positional([
        Turn(tool_calls=(tool("mcp_demo_lookup", "l1", word="ledger"),)),
        Turn(tool_calls=(tool("task_done", "d1", summary="looked it up"),)),
    ])
    with ScriptedServer(script) as model:
        proc = tripane("run", "Look up ledger", "--model", "openai/scripted", "--api-base", model.url,
                       "--workdir", str(work), "--no-memory", data_dir=tmp_path / "data",
                       env={"TRIPANE_CONFIG_DIR": str(tmp_path / "config")})
        code, out, err = finish(proc)
        assert code == 0, err
        sent = [t["function"]["name"] for t in model.requests[0]["tools"]]
    assert "mcp_demo_echo" in sent and "mcp_demo_lookup" in sent
    store = Store(tmp_path / "data" / "tripane.db")
    session = store.sessions()[0]
    events = [r.event for r in store.read_records(session.id)]
    store.close()
    assert any(isinstance(e, ServerToolsListed) for e in events)
    result = next(e for e in events if isinstance(e, ToolResult) and e.call_id == "l1")
    assert result.ok and "ledger: a word" in result.content


def test_a_run_names_the_servers_it_is_given_and_an_unknown_one_is_refused(tmp_path, monkeypatch):
    servers("add", "demo", "--", sys.executable, SCRIPT, tmp_path=tmp_path)
    work = work_folder(tmp_path)
    config = {"TRIPANE_CONFIG_DIR": str(tmp_path / "config")}
    code, _, err = finish(tripane("run", "t", "--model", "openai/scripted", "--api-base", "http://127.0.0.1:9/v1",
                                  "--workdir", str(work), "--servers", "demo,nope", data_dir=tmp_path / "data", env=config))
    assert code == 2 and "no tool server named nope (`tripane servers` lists them: demo)" in err
    monkeypatch.setenv("TRIPANE_CONFIG_DIR", str(tmp_path / "config"))
    args = build_parser().parse_args(["run", "t", "--servers", "demo, demo"])
    assert _servers_chosen(args) == ("demo",)
    assert _servers_chosen(build_parser().parse_args(["run", "t", "--no-servers"])) == ()
    assert _servers_chosen(build_parser().parse_args(["run", "t"])) is None  # those on
