"""Finding a local model server: Ollama's models as litellm strings, a server's window, and nothing when none answers."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from core.providers import detect_ollama, model_window, served_window
from core.secrets import key_name
from tests.support.openai_server import ScriptedServer


def serve(body: bytes) -> ThreadingHTTPServer:
    class Tags(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            ok = self.path == "/api/tags"
            self.send_response(200 if ok else 404)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body if ok else b"{}")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Tags)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_a_running_ollama_lists_its_models():
    server = serve(json.dumps({"models": [{"name": "llama3.1:8b"}, {"name": "qwen2.5-coder"}]}).encode())
    try:
        models = detect_ollama(f"http://127.0.0.1:{server.server_address[1]}")
    finally:
        server.shutdown()
    assert models == ["ollama_chat/llama3.1:8b", "ollama_chat/qwen2.5-coder"]


def test_no_server_or_a_strange_answer_gives_no_models():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert detect_ollama(f"http://127.0.0.1:{port}") == []
    server = serve(b"<html>not ollama</html>")
    try:
        assert detect_ollama(f"http://127.0.0.1:{server.server_address[1]}") == []
    finally:
        server.shutdown()


def test_a_server_answering_nonsense_about_its_window_gives_none():
    """Probing a server that is not vLLM, llama.cpp or LM Studio (a proxy, a hosted API, a web page)
    must not fail a session: the window then comes from litellm's model map."""
    class Junk(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = {"/v1/models": b'{"data": [{"id": "a", "max_model_len": "lots"}, {"id": "b"}]}',
                    "/props": b'["not", "an", "object"]',
                    "/api/v0/models": b"<html>LM Studio is not here</html>"}.get(self.path, b"{}")
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Junk)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/v1"
        assert served_window("openai/a", base) is None
        assert model_window("openai/a", base) == 128_000
    finally:
        server.shutdown()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert served_window("openai/a", f"http://127.0.0.1:{port}/v1") is None  # nothing listening


def test_lm_studio_says_each_loaded_instance_s_context():
    """LM Studio 0.4's REST API lists a model's loaded instances, each with its own context; a model
    that is not loaded has none yet (it gets one when a request loads it)."""
    with ScriptedServer(served_window=12_000, served_as="lmstudio") as server:
        assert served_window("openai/served-model", server.url) == 12_000
        assert served_window("lm_studio/served-model:2", server.url) == 24_000  # a second instance
        assert served_window("openai/other-model", server.url) is None


def test_a_server_that_wants_a_key_is_asked_with_the_model_s_key(memory_keyring):
    """vLLM started with --api-key (LM Studio with authentication on) answers nothing without it."""
    with ScriptedServer(served_window=24_576, served_key="sk-local") as server:
        assert served_window("openai/served-model", server.url) is None
        assert model_window("openai/served-model", server.url) == 128_000  # litellm's map, for now
        memory_keyring.set_password("Tripane", "openai", "sk-local")  # the OpenAI key: not sent there
        assert model_window("openai/served-model", server.url) == 128_000
        memory_keyring.set_password("Tripane", key_name("openai/served-model", server.url), "sk-local")
        assert model_window("openai/served-model", server.url) == 24_576


def test_a_server_that_says_nothing_of_pictures_is_not_asked_at_every_paste(monkeypatch):
    # vLLM states no model's pictures: the window asks when a picture is pasted, and waited each time.
    from core import providers
    from core.providers import sees_pictures
    from tests.support.openai_server import ScriptedServer, Turn

    monkeypatch.setattr(providers, "PAGE_KEPT_S", 0.0)  # (the pages read a moment ago, for the window: not these)

    with ScriptedServer(lambda request: Turn("ok"), served_as="vllm", served_window=32_768) as server:
        assert sees_pictures("openai/served-model", server.url, timeout_s=0.5) is True
        asked = list(server.gets)
        assert sees_pictures("openai/served-model", server.url, timeout_s=0.5) is True
        assert server.gets == asked == ["/props", "/api/v1/models", "/api/v0/models"]
