"""API keys in the OS keyring, and a clear refusal where there is none."""

from __future__ import annotations

import sys

import pytest

from core.events import ToolResult
from core.scripted import ScriptedModel, call, reply
from core.secrets import (
    NoKeyring,
    Redactor,
    get_api_key,
    key_name,
    key_source,
    key_variable,
    keyring_backend,
    set_api_key,
)
from tests.core.helpers import events_of, make_session


def test_a_keyring_that_cannot_be_read_is_said_once_in_the_log_not_at_each_request(monkeypatch, caplog):
    import keyring

    def unreadable(service, username):
        raise RuntimeError("No recommended backend was available (a test's)")
    monkeypatch.setattr(keyring, "get_password", unreadable)
    with caplog.at_level("INFO", logger="core.secrets"):
        assert [get_api_key("openai/gpt-4o-mini") for _ in range(3)] == [None, None, None]
    assert [r.getMessage() for r in caplog.records].count(
        "keyring unavailable (No recommended backend was available (a test's)); "
        "using environment variables for API keys") == 1


def test_with_no_keyring_service_a_key_is_refused_not_silently_dropped():
    # The tests run on keyring's null backend, which accepts a key and keeps nothing.
    name, problem = keyring_backend()
    assert name == "keyring.backends.null.Keyring" and problem == "no keyring service runs on this computer"
    with pytest.raises(NoKeyring, match="no keyring service"):
        set_api_key("openai", "sk-secret")
    assert get_api_key("openai/gpt-4o-mini") is None


def test_a_key_stored_is_read_back_for_the_models_provider(memory_keyring):
    assert keyring_backend()[1] is None
    set_api_key("anthropic", "sk-ant-secret")
    assert get_api_key("anthropic/claude-3-5-haiku-latest") == "sk-ant-secret"
    assert memory_keyring.secrets == {("Tripane", "anthropic"): "sk-ant-secret"}


def test_a_providers_key_is_never_sent_to_another_server_and_a_servers_key_is_its_own(memory_keyring):
    set_api_key("openai", "sk-openai-secret")
    set_api_key(key_name("openai/deepseek-chat", "https://api.deepseek.com/v1"), "sk-deepseek-secret")
    assert get_api_key("openai/gpt-4o-mini") == "sk-openai-secret"
    assert get_api_key("openai/deepseek-chat", "https://api.deepseek.com/v1") == "sk-deepseek-secret"
    assert get_api_key("openai/deepseek-chat", "https://API.deepseek.com") == "sk-deepseek-secret"  # same server
    # An OpenAI-compatible server with no key of its own (Together, a proxy, a local vLLM) gets none,
    # not the person's OpenAI key.
    assert get_api_key("openai/meta-llama/Llama-3-70b", "https://api.together.xyz/v1") is None
    assert get_api_key("openai/local", "127.0.0.1:8000") is None
    assert memory_keyring.secrets == {("Tripane", "openai"): "sk-openai-secret",
                                      ("Tripane", "openai@api.deepseek.com"): "sk-deepseek-secret"}


def test_where_a_models_key_would_come_from(memory_keyring, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    assert key_source("anthropic/claude-3-5-haiku-latest") == ""
    assert key_source("openai/gpt-4o-mini") == "environment"  # litellm reads it
    # A server of the person's choosing is sent only its own key: never the environment's OpenAI one.
    assert key_source("openai/deepseek-chat", "https://api.deepseek.com/v1") == ""
    set_api_key("anthropic", "sk-ant-secret")
    set_api_key(key_name("openai/deepseek-chat", "https://api.deepseek.com/v1"), "sk-deepseek-secret")
    assert key_source("anthropic/claude-3-5-haiku-latest") == "keyring"
    assert key_source("openai/deepseek-chat", "https://api.deepseek.com/v1") == "keyring"


def test_the_environment_variable_named_for_a_model():
    assert key_variable("anthropic/claude-3-5-haiku-latest") == "ANTHROPIC_API_KEY"
    assert key_variable("gpt-4o-mini") == "OPENAI_API_KEY"  # litellm's default provider


def test_the_redactor_hides_secret_values_and_leaves_the_rest():
    hide = Redactor({"OPENAI_API_KEY": "sk-proj-abcdefgh12345678", "GITHUB_TOKEN": "ghp_0123456789",
                     "DEBUG": "1", "PASSWORD_HINT": "short", "SSH_AUTH_SOCK": "/run/user/1000/ssh",
                     "HOME": "/home/ada", "LONGER_SECRET": "sk-proj-abcdefgh12345678-extra"})
    text = ("OPENAI_API_KEY=sk-proj-abcdefgh12345678\nLONGER_SECRET=sk-proj-abcdefgh12345678-extra\n"
            "token ghp_0123456789 used\nSSH_AUTH_SOCK=/run/user/1000/ssh\nPASSWORD_HINT=short\n")
    assert hide(text) == ("OPENAI_API_KEY=[hidden: OPENAI_API_KEY]\nLONGER_SECRET=[hidden: LONGER_SECRET]\n"
                          "token [hidden: GITHUB_TOKEN] used\nSSH_AUTH_SOCK=/run/user/1000/ssh\nPASSWORD_HINT=short\n")
    assert Redactor({"PATH": "/usr/bin"})("nothing to hide") == "nothing to hide"


async def test_a_command_that_prints_the_environment_keeps_no_key_anywhere(store, data_dir, workdir, monkeypatch):
    """`env` while debugging: the key must not reach the log, progress.md or the next request."""
    key = "sk-test-Zq81nVx0Lk29Tt7y"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    command = f'"{sys.executable}" -c "import os; print(os.environ[\'OPENAI_API_KEY\'])"'
    model = ScriptedModel([reply("", call("shell_run", call_id="env", command=command)),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, approval="all")
    assert await session.run() == "done"
    result = next(e for e in events_of(session, ToolResult) if e.call_id == "env")
    assert result.ok and "[hidden: OPENAI_API_KEY]" in result.content
    assert key not in " ".join(str(m.get("content")) for m in model.requests[-1].messages)
    assert key not in session.read_file("progress.md")[0]
    store.close()
    for path in data_dir.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


async def test_the_sessions_key_from_the_keyring_is_hidden_when_a_file_holds_it_too(store, data_dir, workdir,
                                                                                  memory_keyring):
    """The person's key is in the keyring; the project's .env holds the same key, as it often does."""
    key = "sk-proj-Kk21bDx9Qm77Rw3e"
    set_api_key("openai", key)
    (workdir / ".env").write_text(f"OPENAI_API_KEY={key}\nDEBUG=1\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_read", call_id="env", path=".env")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, model="openai/gpt-4o-mini")
    assert await session.run() == "done"
    result = next(e for e in events_of(session, ToolResult) if e.call_id == "env")
    assert "OPENAI_API_KEY=[hidden: openai API key (keyring)]" in result.content and "DEBUG=1" in result.content
    assert key not in str(model.requests[-1].messages) and key not in session.read_file("progress.md")[0]
    store.close()
    assert not [path for path in data_dir.rglob("*") if path.is_file() and key.encode() in path.read_bytes()]


async def test_the_keyring_is_read_off_the_event_loop(store, data_dir, workdir, memory_keyring, monkeypatch):
    """Its first read loads the backends (0.2 s) and a locked keyring asks for its password: on the
    event loop, the window froze meanwhile."""
    import threading

    from core.llm import LiteLLMClient
    from tests.support.openai_server import ScriptedServer, Turn, positional, tool

    set_api_key("openai", "sk-proj-Kk21bDx9Qm77Rw3e")
    read_on: list[str] = []
    real_read = memory_keyring.get_password

    def get_password(service, username):
        read_on.append(threading.current_thread().name)
        return real_read(service, username)

    monkeypatch.setattr(memory_keyring, "get_password", get_password)
    script = positional([Turn(tool_calls=(tool("task_done", summary="ok"),))])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, LiteLLMClient(api_key=get_api_key),
                               model="openai/gpt-4o-mini", api_base=server.url)
        assert await session.run() == "done"
    assert server.requests[0]["model"] == "gpt-4o-mini"
    assert len(read_on) >= 2 and threading.main_thread().name not in read_on  # the loop's key, each request's


def test_a_key_held_for_the_run_is_its_servers_alone_and_a_key_stored_later_replaces_it(memory_keyring):
    from core.secrets import hold_api_key

    hold_api_key(key_name("openai/served", "https://gateway.example.com/v1"), "sk-held-for-the-gateway")
    assert get_api_key("openai/served", "https://gateway.example.com/v1") == "sk-held-for-the-gateway"
    assert key_source("openai/served", "https://gateway.example.com/v1") == "held"
    assert get_api_key("openai/gpt-4o-mini") is None  # not OpenAI's
    assert get_api_key("openai/served", "https://other.example.com/v1") is None
    assert memory_keyring.secrets == {}  # held, not stored
    set_api_key(key_name("openai/served", "https://gateway.example.com/v1"), "sk-stored-later")
    assert get_api_key("openai/served", "https://gateway.example.com/v1") == "sk-stored-later"
    assert key_source("openai/served", "https://gateway.example.com/v1") == "keyring"


async def test_a_held_key_is_hidden_when_a_file_holds_it_too(store, data_dir, workdir):
    from core.secrets import hold_api_key

    key = "sk-held-for-the-run-123"
    hold_api_key(key_name("openai/served", "http://127.0.0.1:9/v1"), key)
    (workdir / ".env").write_text(f"SERVED_KEY={key}\n", encoding="utf-8")
    model = ScriptedModel([reply("", call("file_read", call_id="env", path=".env")),
                           reply("", call("task_done", summary="ok"))])
    session = make_session(store, data_dir, workdir, model, model="openai/served", api_base="http://127.0.0.1:9/v1")
    assert await session.run() == "done"
    result = next(e for e in events_of(session, ToolResult) if e.call_id == "env")
    assert "SERVED_KEY=[hidden: openai API key (typed for this run)]" in result.content
    store.close()
    assert not [path for path in data_dir.rglob("*") if path.is_file() and key.encode() in path.read_bytes()]
