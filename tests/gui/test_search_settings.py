"""Settings → Web search: the provider the agent's web_search uses, its key in the keyring, a test."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

from core.secrets import SERVICE
from core.user_settings import read_settings
from tests.support.local_site import send_page, serving

WAIT = 10_000


class Searx(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        body = {"results": [{"title": "Tripane on GitHub", "url": "https://example.org/tripane", "content": "An agent "
                             "supervisor."}] * 3}
        send_page(self, json.dumps(body).encode(), "application/json")


def test_a_searxng_server_is_tested_and_saved_for_the_agent_and_the_command_line(qtbot, make_window):
    window = make_window()
    dialog = window.open_settings()
    fields = dialog.search
    assert fields.provider.currentText() == "None: the agent cannot search the web"
    assert not fields.test_button.isEnabled() and not fields.api_key.isEnabled()
    fields.provider.setCurrentIndex(fields.provider.findData("searxng"))
    assert fields.api_base.isEnabled() and not fields.api_key.isEnabled()
    assert "“json” listed under search → formats" in fields.note.text()
    dialog._accept()  # no address yet: said, and nothing saved
    assert dialog.error.text() == "Web search: give the SearXNG server's address (as http://localhost:8888)."
    assert dialog.isVisible() and window.prefs.search_provider == ""
    with serving(Searx) as address:
        fields.api_base.setText(address)
        fields.test_button.click()
        qtbot.waitUntil(lambda: fields.test_result.text().startswith("✓"), timeout=WAIT)
    assert fields.test_result.text() == "✓ It answered with 3 results: “Tripane on GitHub”, https://example.org/tripane"
    dialog._accept()
    qtbot.waitUntil(lambda: window.prefs.search_provider == "searxng", timeout=WAIT)
    assert window.prefs.search_api_base == address
    shared = read_settings(window.settings.shared_file)
    assert (shared["search_provider"], shared["search_api_base"]) == ("searxng", address)


def test_a_providers_key_goes_to_the_keyring_and_a_refused_test_says_why(qtbot, make_window, memory_keyring,
                                                                         monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    window = make_window()
    dialog = window.open_settings()
    fields = dialog.search
    fields.provider.setCurrentIndex(fields.provider.findData("brave"))
    assert not fields.api_base.isEnabled() and fields.api_key.isEnabled()
    qtbot.waitUntil(lambda: fields.api_key.placeholderText() == "paste the key from api-dashboard.search.brave.com",
                    timeout=WAIT)
    fields.test_button.click()  # no key anywhere
    qtbot.waitUntil(lambda: fields.test_result.text().startswith("✗"), timeout=WAIT)
    assert fields.test_result.text().startswith("✗ Brave Search needs an API key, and none is set")
    fields.api_key.setText("BSA-typed-key-0001")
    dialog._accept()
    qtbot.waitUntil(lambda: window.prefs.search_provider == "brave", timeout=WAIT)
    assert memory_keyring.secrets[(SERVICE, "search:brave")] == "BSA-typed-key-0001"
    assert "BSA-typed-key-0001" not in window.settings.shared_file.read_text(encoding="utf-8")
    again = window.open_settings().search
    qtbot.waitUntil(lambda: again.api_key.placeholderText() == "stored in the keyring: leave empty to keep it",
                    timeout=WAIT)
