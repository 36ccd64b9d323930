"""A web server on 127.0.0.1 for the tests that fetch pages (nothing leaves the machine)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """The server's address (http://127.0.0.1:PORT), while it serves pages with `handler`."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def send_page(handler: BaseHTTPRequestHandler, body: bytes, content_type: str = "text/html; charset=utf-8",
              status: int = 200) -> None:
    """A whole page in answer to the request `handler` is serving."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


class LongPage(BaseHTTPRequestHandler):
    """A page of 900 paragraphs: longer than a tool's output, so a fetch of it is offloaded."""

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        body = ("<html><body>" + "".join(f"<p>Paragraph {i}: the release notes say more.</p>" for i in range(900))
                + "</body></html>").encode()
        send_page(self, body)
