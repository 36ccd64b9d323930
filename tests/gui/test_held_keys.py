"""Where no keyring can store a key, one typed is held for the run: the agent's requests take it,
and nothing on disk does."""

from __future__ import annotations

from core.llm import LiteLLMClient
from core.secrets import get_api_key
from tests.gui.test_supporting_screens import settings_with_a_key_typed
from tests.gui.test_window import WAIT
from tests.support.memory_keyring import MemoryKeyring
from tests.support.openai_server import ScriptedServer, Turn, positional, tool


def test_with_no_keyring_a_key_typed_for_a_server_of_ones_own_reaches_it(qtbot, make_window, workdir, tmp_path):
    # A vLLM started with --api-key, on a desktop with no keyring service: the server is sent only its
    # own key (never an environment variable's), so without a key held for the run it was unreachable.
    done = Turn(tool_calls=(tool("task_done", summary="reached the server"),))
    with ScriptedServer(positional([done]), served_key="sk-the-servers-key") as server:
        window = make_window(LiteLLMClient(api_key=get_api_key, retries=0))
        dialog = window.new_session()
        qtbot.waitUntil(lambda: "no keyring service" in dialog.connection.key_note.text().lower(), timeout=WAIT)
        dialog.task.setPlainText("Say hello")
        dialog.workdir.setText(str(workdir))
        dialog.model.setCurrentText("openai/served-model")
        dialog.api_base.setText(server.url)
        dialog.api_key.setText("sk-the-servers-key")
        dialog._accept()
        qtbot.waitUntil(lambda: window.session is not None and window.session.state.ended, timeout=WAIT)
        assert window.session.state.status == "ended:done"
        assert len(server.requests) == 1
    assert get_api_key("openai/served-model") is None  # the server's own, not OpenAI's
    assert not any("sk-the-servers-key" in path.read_text(encoding="utf-8", errors="replace")
                   for path in tmp_path.rglob("*") if path.is_file())


class RefusingKeyring(MemoryKeyring):
    """A keyring that runs, but whose unlock prompt the person dismissed."""

    def set_password(self, service, username, password):
        raise RuntimeError("Prompt dismissed")


def test_a_keyring_that_refuses_a_key_says_so_and_the_key_is_held_for_the_run(qtbot, make_window, use_keyring):
    refusing = RefusingKeyring()
    _window, dialog = settings_with_a_key_typed(make_window, use_keyring, refusing, "anthropic/claude-3-5-haiku-latest",
                                                "sk-ant-secret-123")
    dialog._accept()
    qtbot.waitUntil(lambda: dialog.error.text() != "", timeout=WAIT)
    # Not said before it was typed, so said now, before the dialog closes.
    assert dialog.isVisible()
    assert dialog.error.text() == (
        "The key could not be stored (the keyring refused it (Prompt dismissed)), so it is kept only until "
        "Tripane closes: to keep it, type it again once the keyring opens. Save again to go on.")
    assert get_api_key("anthropic/claude-3-5-haiku-latest") == "sk-ant-secret-123"
    assert refusing.secrets == {}
    dialog._accept()  # the field is empty now: saved, the key kept as it is
    qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=WAIT)
    assert get_api_key("anthropic/claude-3-5-haiku-latest") == "sk-ant-secret-123"
