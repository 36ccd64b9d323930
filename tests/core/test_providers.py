"""Finding a local Ollama server: its models as litellm strings, and nothing when none answers."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from core.providers import detect_ollama


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
