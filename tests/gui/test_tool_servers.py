"""Settings → Tool servers in the real window: a server added with its secret (kept in the keyring,
not the file), checked, changed, imported from another client's file, removed; and a session of the
window whose agent calls its tools, asked about as a command is. The server is the scripted one
(tests/support/tool_server.py), a real child process."""

from __future__ import annotations

import json
import re
import sys

import pytest

from core.scripted import ScriptedModel, call, reply
from core.secrets import SERVICE
from core.tool_servers.config import (
    ServerConfig,
    read_servers,
    secret_key,
    servers_file,
    write_servers,
)
from gui.dialogs.new_session import NewSessionDialog
from gui.dialogs.tool_server import KEPT
from gui.qt import qt_alive
from gui.settings import Preferences
from gui.widgets.tool_card import ToolCard
from tests.core.test_tool_servers import SCRIPT
from tests.gui.test_window import wait_for_dialog

WAIT = 15_000


@pytest.fixture(autouse=True)
def own_config(tmp_path, monkeypatch):
    """This test's servers file (the one the window's sessions read too)."""
    monkeypatch.setenv("TRIPANE_CONFIG_DIR", str(tmp_path / "config"))


def closed(dialog) -> bool:
    return not qt_alive(dialog) or not dialog.isVisible()  # (Settings is deleted once closed)


def add_server(qtbot, page, name="demo", command=None, env=""):
    dialog = page.add()
    dialog.name.setText(name)
    dialog.command.setText(command or f'"{sys.executable}" "{SCRIPT}"')
    dialog.env.setPlainText(env)
    dialog._accept()
    assert not dialog.isVisible(), dialog.error.text()


def test_a_server_is_added_with_its_secret_in_the_keyring_checked_and_saved(qtbot, make_window, memory_keyring):
    window = make_window()
    dialog = window.open_settings()
    page = dialog.tool_servers
    dialog.pages.setCurrentWidget(page)
    assert page.list.item(0).text().startswith("None yet")
    add_server(qtbot, page, env="DEMO_TOKEN=tok-5f3a9c1e77d2\nLOG=debug")
    assert page.list.item(0).text().splitlines()[0] == "demo"

    page.check_button.click()
    qtbot.waitUntil(lambda: "✓" in page.list.item(0).text() or "✗" in page.list.item(0).text(), timeout=WAIT)
    checked = page.list.item(0).text()  # (with the typed secret, not saved yet)
    assert re.search(r"✓ 9 tools, about \d{3} tokens in each request: mcp_demo_echo, mcp_demo_lookup", checked), checked
    assert not servers_file().exists()  # nothing kept before Save

    dialog._accept()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)
    (server,) = read_servers()
    assert server.secret_env == ("DEMO_TOKEN",) and server.env == (("LOG", "debug"),)
    assert memory_keyring.secrets[(SERVICE, secret_key("demo", "DEMO_TOKEN"))] == "tok-5f3a9c1e77d2"
    assert "tok-5f3a9c1e77d2" not in servers_file().read_text(encoding="utf-8")

    again = window.open_settings()
    again.tool_servers.list.setCurrentRow(0)
    editor = again.tool_servers.edit()
    assert f"DEMO_TOKEN={KEPT}" in editor.env.toPlainText()
    editor.enabled.setChecked(False)
    editor._accept()  # the secret left as it was: kept
    again._accept()
    qtbot.waitUntil(lambda: closed(again), timeout=WAIT)
    assert not read_servers()[0].enabled
    assert memory_keyring.secrets[(SERVICE, secret_key("demo", "DEMO_TOKEN"))] == "tok-5f3a9c1e77d2"


def test_a_server_unticked_for_a_new_session_is_not_given_to_it(qtbot, workdir):
    write_servers([ServerConfig("demo", sys.executable, (SCRIPT,)), ServerConfig("docs", "docs-server")])
    dialog = NewSessionDialog(Preferences(model="openai/gpt-4o-mini", workdir=str(workdir)))
    qtbot.addWidget(dialog)
    dialog.task.setPlainText("Look it up")
    dialog.tool_servers["docs"].setChecked(False)
    dialog._accept()
    assert dialog.config is not None and dialog.config.tool_servers == ("demo",)


def test_a_bad_entry_is_refused_with_why(qtbot, make_window):
    window = make_window()
    page = window.open_settings().tool_servers
    qtbot.waitUntil(lambda: page.keyring_problem is not None, timeout=WAIT)  # (no keyring in the tests)
    dialog = page.add()
    assert "so a secret typed here is kept only until Tripane closes" in dialog.no_keyring.text()
    dialog.name.setText("my server")
    dialog._accept()
    assert dialog.isVisible() and "letters, digits, - and _" in dialog.error.text()
    dialog.name.setText("db")
    dialog.command.setText('uvx "mcp-server-sqlite')
    dialog._accept()
    assert "quote that is not closed" in dialog.error.text()
    dialog.command.setText("uvx mcp-server-sqlite")
    dialog.env.setPlainText("DB_PASSWORD=")
    dialog._accept()
    assert "Type DB_PASSWORD's value" in dialog.error.text()
    dialog.env.setPlainText(f"DB_PASSWORD={KEPT}")
    dialog._accept()
    assert "none is kept for db" in dialog.error.text()
    dialog.env.setPlainText("DB_PASSWORD=${PGPASSWORD}")  # named, from Tripane's environment: no secret in it
    dialog._accept()
    assert dialog.server.env == (("DB_PASSWORD", "${PGPASSWORD}"),) and not dialog.server.secret_env
    assert dialog.secrets == {}


def test_another_clients_servers_are_imported_and_removed_with_their_secrets(qtbot, make_window, memory_keyring,
                                                                            tmp_path):
    source = tmp_path / "claude_desktop_config.json"
    source.write_text(json.dumps({"mcpServers": {
        "github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abcdefghijklmnop"}},
        "remote": {"url": "https://example.com/mcp"}}}), encoding="utf-8")
    window = make_window()
    dialog = window.open_settings()
    page = dialog.tool_servers
    page.import_file(source)
    assert page.note.text() == ("Imported 1 server from claude_desktop_config.json; they are kept when you save the "
                                "settings. Skipped: remote: it is reached at an address; Tripane starts the servers it "
                                "uses itself.")
    dialog._accept()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)
    key = (SERVICE, secret_key("github", "GITHUB_PERSONAL_ACCESS_TOKEN"))
    assert memory_keyring.secrets[key] == "ghp_abcdefghijklmnop"
    assert "ghp_" not in servers_file().read_text(encoding="utf-8")

    again = window.open_settings()
    again.tool_servers.list.setCurrentRow(0)
    again.tool_servers.remove()
    again._accept()
    qtbot.waitUntil(lambda: closed(again), timeout=WAIT)
    assert read_servers() == [] and key not in memory_keyring.secrets


def test_a_window_session_calls_a_servers_tools_and_asks_before_one_that_changes_things(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([
        reply("", call("mcp_demo_lookup", call_id="l1", word="ledger")),
        reply("", call("mcp_demo_echo", call_id="e1", text="hello")),
        reply("", call("task_done", summary="done")),
    ]))
    dialog = window.open_settings()
    add_server(qtbot, dialog.tool_servers)
    dialog._accept()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)

    new = window.new_session()  # it says what else the agent will be given, to untick for this one
    assert list(new.tool_servers) == ["demo"] and new.tool_servers["demo"].isChecked()
    new.task.setPlainText("Look it up")
    new.workdir.setText(str(workdir))
    new.approval.setCurrentIndex(new.approval.findData("ask"))
    new._accept()
    qtbot.waitUntil(lambda: window.session is not None, timeout=WAIT)
    session = window.session
    assert session.state.config.tool_servers == ("demo",)
    asked = wait_for_dialog(qtbot, window, "approval")
    assert asked.question.context["tool"] == "mcp_demo_echo"
    assert "What it does: [Tool server demo] Echo the text back." in asked.details.toPlainText()
    asked.choose("approve")
    qtbot.waitUntil(lambda: session.state.ended and not session.running, timeout=WAIT)
    cards = {c.call.name: c for c in window.chat.items() if isinstance(c, ToolCard)}
    assert cards["mcp_demo_lookup"].status == "ok" and cards["mcp_demo_echo"].status == "ok"
    notices = [w.text() for w in window.chat.items() if w.objectName() == "notice"]
    assert any("Tools given from the tool servers demo (9 tools)" in text for text in notices)


def test_a_renamed_server_keeps_its_secret_under_its_new_name_only(qtbot, make_window, memory_keyring):
    window = make_window()
    dialog = window.open_settings()
    add_server(qtbot, dialog.tool_servers, name="db", env="DB_TOKEN=first-secret-1")
    dialog._accept()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)
    again = window.open_settings()
    again.tool_servers.list.setCurrentRow(0)
    editor = again.tool_servers.edit()
    editor.name.setText("orders")
    editor._accept()  # the secret kept is the old name's: asked for again
    assert "Type DB_TOKEN's value: none is kept for orders" in editor.error.text()
    editor.env.setPlainText("DB_TOKEN=second-secret-2")
    editor._accept()
    again._accept()
    qtbot.waitUntil(lambda: closed(again), timeout=WAIT)
    assert [server.name for server in read_servers()] == ["orders"]
    assert memory_keyring.secrets.get((SERVICE, secret_key("orders", "DB_TOKEN"))) == "second-secret-2"
    assert (SERVICE, secret_key("db", "DB_TOKEN")) not in memory_keyring.secrets
