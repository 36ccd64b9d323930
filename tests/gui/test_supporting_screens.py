"""First run and settings, the session list, the context inspector, and the remembered layout."""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
from dataclasses import fields
from pathlib import Path

import pytest

from core.memory.working import PLAN
from core.scripted import ScriptedModel, call, reply
from core.secrets import get_api_key
from core.session import SessionConfig
from core.user_settings import SHARED, read_settings
from gui.dialogs.inspector import ContextInspector
from gui.dialogs.settings import SettingsDialog
from gui.qt import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QEvent,
    QLabel,
    QMessageBox,
    QSettings,
    Qt,
    qt_alive,
)
from gui.settings import AppSettings, Preferences
from tests.support.memory_keyring import MemoryKeyring
from tests.support.openai_server import Failure, ScriptedServer, Turn

WAIT = 15_000


def settings_dialog(qtbot, window) -> SettingsDialog:
    qtbot.waitUntil(lambda: any(d.isVisible() for d in window.findChildren(SettingsDialog)), timeout=WAIT)
    return next(d for d in window.findChildren(SettingsDialog) if d.isVisible())


def closed(dialog: QDialog) -> bool:
    """Hidden, or already deleted (deleted on close once its `finished` handlers ran)."""
    return not qt_alive(dialog) or not dialog.isVisible()


def test_first_run_opens_settings_and_the_key_goes_to_the_keyring_only(qtbot, make_window, tmp_path, memory_keyring):
    fresh = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    window = make_window(settings_=fresh)
    dialog = settings_dialog(qtbot, window)
    assert "Welcome to Tripane" in dialog.findChild(type(dialog.error), "intro").text()
    assert dialog.accessibleDescription().startswith("Welcome to Tripane. Choose the model")  # said as it opens
    # What a new user types first is the model's name: it goes there, not to the tab bar above it.
    qtbot.waitUntil(lambda: dialog.focusWidget() is dialog.model.lineEdit() or dialog.focusWidget() is dialog.model,
                    timeout=WAIT)
    qtbot.keyClicks(dialog.focusWidget(), "openai/gpt-4o-mini")
    assert dialog.model.currentText() == "openai/gpt-4o-mini"

    dialog.model.setCurrentText("anthropic/claude-3-5-haiku-latest")
    dialog.api_key.setText("sk-ant-secret-123")
    dialog.danger_turn.setValue(40)
    assert dialog.context_window.text() == "the model's own"
    dialog.context_window.setValue(32_768)
    dialog.summary_model.setText("anthropic/claude-3-5-haiku-latest")
    dialog.helper_model.setText("openai/gpt-4.1-mini")
    assert dialog.diagnose.isChecked()  # a failure that happens again is diagnosed, unless turned off
    dialog.diagnose.setChecked(False)
    assert dialog.copy_work_folder.isChecked()  # what commands change can be put back, unless turned off
    dialog.copy_work_folder.setChecked(False)
    assert dialog.copies_mb.value() == 2048  # the copies of all sessions, at most
    dialog.copies_mb.setValue(1024)
    assert dialog.reasoning_effort.currentText() == "the model's own"
    dialog.reasoning_effort.setCurrentIndex(dialog.reasoning_effort.findText("medium"))
    assert dialog.key_note.text() == "Keys are stored in the system keyring, never in a file."
    dialog._accept()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)  # the key is stored on a worker thread

    assert memory_keyring.secrets == {("Tripane", "anthropic"): "sk-ant-secret-123"}
    prefs = fresh.load()
    assert prefs.model == "anthropic/claude-3-5-haiku-latest" and prefs.danger_turn == 40
    assert prefs.context_window == 32_768 and prefs.summary_model == "anthropic/claude-3-5-haiku-latest"
    on_disk = (tmp_path / "fresh.ini").read_text(encoding="utf-8")
    assert "sk-ant-secret-123" not in on_disk and "claude-3-5-haiku" in on_disk
    # what `tripane run` reads: the same choices, beside the window's settings, and no key
    shared = read_settings(tmp_path / "fresh.json")
    assert shared["model"] == "anthropic/claude-3-5-haiku-latest" and shared["danger_turn"] == 40
    assert prefs.reasoning_effort == shared["reasoning_effort"] == "medium"
    assert prefs.helper_model == shared["helper_model"] == "openai/gpt-4.1-mini"
    assert prefs.diagnose_errors == shared["diagnose_errors"] == 0
    assert prefs.copy_work_folder == shared["copy_work_folder"] == 0
    assert prefs.copies_mb == shared["copies_mb"] == 1024
    assert "sk-ant-secret-123" not in (tmp_path / "fresh.json").read_text(encoding="utf-8")


def test_typing_part_of_a_models_name_suggests_the_model_strings_it_may_mean(qtbot, make_window, tmp_path):
    fresh = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    dialog = settings_dialog(qtbot, make_window(settings_=fresh))
    for field in (dialog.model, dialog.summary_model):
        # litellm's map is read on a worker thread; the field takes the names when they come
        line = field.lineEdit() if field is dialog.model else field
        qtbot.waitUntil(lambda f=line: f.completer() is not None and f.completer().model().rowCount() > 100,
                        timeout=WAIT)
    qtbot.keyClicks(dialog.model.lineEdit(), "Sonnet")
    popup = dialog.model.lineEdit().completer().popup()
    qtbot.waitUntil(popup.isVisible, timeout=WAIT)
    offered = [popup.model().index(row, 0).data() for row in range(popup.model().rowCount())]
    assert offered and all("sonnet" in name.lower() for name in offered)
    assert any(name.startswith("anthropic/claude-sonnet") for name in offered)
    first = popup.model().index(0, 0)
    qtbot.mouseClick(popup.viewport(), Qt.MouseButton.LeftButton, pos=popup.visualRect(first).center())
    assert dialog.model.currentText() == offered[0]


def test_a_key_typed_for_a_server_of_ones_choosing_is_that_servers_not_the_providers(qtbot, make_window,
                                                                                       memory_keyring):
    memory_keyring.secrets[("Tripane", "openai")] = "sk-the-persons-openai-key"
    window = make_window()
    dialog = window.open_settings()
    dialog.model.setCurrentText("openai/deepseek-chat")
    dialog.api_base.setText("https://api.deepseek.com/v1")
    dialog.api_key.setText("sk-deepseek-key")
    dialog._accept()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)
    assert memory_keyring.secrets == {("Tripane", "openai"): "sk-the-persons-openai-key",  # kept, not replaced
                                      ("Tripane", "openai@api.deepseek.com"): "sk-deepseek-key"}


def test_settings_chosen_before_the_shared_file_existed_are_carried_over_to_it(tmp_path):
    qsettings = QSettings(str(tmp_path / "older.ini"), QSettings.Format.IniFormat)
    qsettings.setValue("prefs/model", "ollama_chat/llama3.1")
    qsettings.setValue("prefs/api_base", "http://127.0.0.1:11434")
    qsettings.sync()
    assert AppSettings(qsettings).load().model == "ollama_chat/llama3.1"
    assert read_settings(tmp_path / "older.json") == {**SHARED,
                                                      "model": "ollama_chat/llama3.1",
                                                      "api_base": "http://127.0.0.1:11434"}


def test_the_windows_preferences_have_the_same_defaults_as_the_shared_settings():
    defaults = {f.name: f.default for f in fields(Preferences)}
    assert {key: defaults[key] for key in SHARED} == SHARED


def test_with_no_keyring_settings_says_so_before_a_key_is_typed_and_how_long_one_typed_is_kept(
        qtbot, make_window, tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    window = make_window()  # the tests' keyring is keyring's null backend: a computer with no keyring service
    dialog = window.open_settings()
    qtbot.waitUntil(lambda: "no keyring service" in dialog.key_note.text().lower(), timeout=WAIT)
    dialog.model.setCurrentText("anthropic/claude-3-5-haiku-latest")  # the variable of the model's provider
    assert dialog.key_note.text() == ("No keyring service runs on this computer, so a key typed here is kept only "
                                      "until Tripane closes: to keep it, set the provider's environment variable "
                                      "(ANTHROPIC_API_KEY, …) where Tripane starts.")
    assert dialog.key_note.objectName() == "warning"
    assert dialog.api_key.accessibleDescription() == dialog.key_note.text()  # said with the field it is about
    dialog.model.setCurrentText("openai/gpt-4o-mini")  # its key is in the environment: no warning
    assert dialog.key_note.text().startswith("✓ OPENAI_API_KEY is set in Tripane's environment")
    assert dialog.key_note.objectName() != "warning" and "sk-from-the-environment" not in dialog.key_note.text()
    dialog.api_base.setText("https://gateway.example.com/v1")  # a server of one's own is never sent the variable's
    assert dialog.key_note.text() == ("No keyring service runs on this computer, so a key typed here is kept only "
                                      "until Tripane closes: it is asked for again at the next start.")
    assert dialog.key_note.objectName() == "warning"
    dialog.api_base.clear()
    dialog.model.setCurrentText("anthropic/claude-3-5-haiku-latest")
    assert dialog.key_note.objectName() == "warning"
    dialog.model.setCurrentText("vertex_ai/gemini-2.5-flash")  # Google Cloud's own sign-in: no key, no line
    assert dialog.key_note.isHidden() and dialog.api_key.accessibleDescription() == ""
    dialog.model.setCurrentText("anthropic/claude-3-5-haiku-latest")
    assert not dialog.key_note.isHidden()
    dialog.api_base.setText("http://127.0.0.1:8000/v1")  # a server on this computer takes none either
    assert dialog.key_note.isHidden()
    dialog.api_base.clear()
    assert not dialog.key_note.isHidden()
    qtbot.waitUntil(lambda: dialog.api_key.placeholderText() == "none for anthropic yet: paste its key here (see below)",
                    timeout=WAIT)

    # Said before it was typed: the key is held for this run, and the settings saved with it.
    dialog.api_key.setText("sk-ant-secret-123")
    dialog.danger_turn.setValue(45)
    dialog._accept()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)
    assert window.settings.load().danger_turn == 45
    assert get_api_key("anthropic/claude-3-5-haiku-latest") == "sk-ant-secret-123"  # what the agent's requests take
    assert get_api_key("anthropic/claude-3-5-haiku-latest", "https://gateway.example.com/v1") is None  # its own
    assert not any("sk-ant-secret-123" in path.read_text(encoding="utf-8", errors="replace")
                   for path in tmp_path.rglob("*") if path.is_file())
    again = window.open_settings()
    qtbot.waitUntil(lambda: again.api_key.placeholderText() == (
        "a key is held until Tripane closes: leave empty to keep it"), timeout=WAIT)
    again.reject()


class SlowKeyring(MemoryKeyring):
    """A locked keyring: storing waits until the person has typed its password in the OS's prompt."""

    def __init__(self):
        super().__init__()
        self.unlocked = threading.Event()

    def set_password(self, service, username, password):
        if not self.unlocked.wait(timeout=10):
            raise RuntimeError("the prompt was never answered")
        super().set_password(service, username, password)


def settings_with_a_key_typed(make_window, use_keyring, backend, model: str, key: str):
    """A new window over the keyring backend given, and its Settings with the model chosen and its
    key typed."""
    use_keyring(backend)
    window = make_window()
    dialog = window.open_settings()
    dialog.model.setCurrentText(model)
    dialog.api_key.setText(key)
    return window, dialog


def test_a_locked_keyring_asking_for_its_password_does_not_freeze_the_window(qtbot, make_window, use_keyring):
    locked = SlowKeyring()
    window, dialog = settings_with_a_key_typed(make_window, use_keyring, locked, "anthropic/claude-3-5-haiku-latest",
                                               "sk-ant-secret-123")
    dialog.danger_turn.setValue(44)
    save = dialog.buttons.button(QDialogButtonBox.StandardButton.Save)
    qtbot.mouseClick(save, Qt.MouseButton.LeftButton)
    # Back in the event loop at once, the keyring still waiting: the window paints and says why
    # nothing has happened yet, and a second Save cannot store the key twice.
    assert dialog.isVisible() and not save.isEnabled() and not locked.unlocked.is_set()
    assert save.text() == "Storing the key…" and dialog.error.text() == ""
    assert dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).isEnabled()
    locked.unlocked.set()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)
    assert locked.secrets == {("Tripane", "anthropic"): "sk-ant-secret-123"}
    assert window.settings.load().danger_turn == 44


def test_a_servers_address_typed_as_the_model_is_pointed_to_api_base_not_saved_or_sent(qtbot, make_window,
                                                                                       monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment")
    window = make_window()
    dialog = window.open_settings()
    qtbot.waitUntil(lambda: "no keyring service" in dialog.key_note.text().lower(), timeout=WAIT)
    dialog.model.setCurrentText("http://127.0.0.1:8000/v1")
    assert "HTTP" not in dialog.key_note.text()  # the key's variable is not made up from "http:"

    dialog.test_button.click()
    assert dialog.test_result.text() == ("✗ http://127.0.0.1:8000/v1 is a server's address, not a model: put it "
                                         "under API base, and write the model under its own name as provider/model "
                                         "(openai/NAME for an OpenAI-compatible server, ollama_chat/NAME for Ollama).")
    assert dialog.test_button.isEnabled()  # no request went out: nothing to wait for
    dialog._accept()
    assert dialog.isVisible() and dialog.error.text() == dialog.test_result.text()[2:]
    assert window.settings.load().model != "http://127.0.0.1:8000/v1"

    dialog.model.setCurrentText("openai/qwen3-8b")
    dialog.api_base.setText("127.0.0.1:8000/v1")  # (no http://: it was sent as a path)
    dialog.test_button.click()
    assert dialog.test_result.text() == ("✗ The API base 127.0.0.1:8000/v1 lacks its http:// (or https://): "
                                         "http://127.0.0.1:8000/v1, for instance.")
    dialog._accept()
    assert dialog.isVisible() and dialog.error.text() == dialog.test_result.text()[2:]

    dialog.api_base.setText("http://127.0.0.1:8000/v1")
    dialog.summary_model.setText("127.0.0.1:8000")
    dialog._accept()
    assert dialog.error.text().startswith("Summary model: 127.0.0.1:8000 is a server's address, not a model: put "
                                          "the server under API base above")
    dialog.summary_model.setText("openai/qwen3-1.7b")
    dialog._accept()
    qtbot.waitUntil(lambda: closed(dialog), timeout=WAIT)
    assert window.settings.load().model == "openai/qwen3-8b"


def test_closing_settings_while_its_work_runs_leaves_no_error_behind(qtbot, make_window, memory_keyring):
    window = make_window()
    loop, unexpected = asyncio.get_event_loop(), []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: unexpected.append(context))  # where the window reports them
    with ScriptedServer(lambda request: Turn(text="ready", delay_s=1.0)) as server:
        dialog = window.open_settings()
        dialog.model.setCurrentText("openai/gpt-4o-mini")
        dialog.api_base.setText(server.url)
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        dialog.reject()  # Cancel while the test waits for the server; the dialog is deleted on close
        try:
            qtbot.waitUntil(lambda: not window.keeper.pending, timeout=30_000)
        finally:
            loop.set_exception_handler(previous)
    assert unexpected == []
    assert memory_keyring.secrets == {}  # no key was typed: nothing stored


def test_test_connection_reports_success_and_a_refused_key_in_plain_words(qtbot, make_window, memory_keyring):
    window = make_window()  # "Test connection" takes the real litellm path, against a local server
    script = itertools.chain([Turn(text="ready"), Failure(401, "Incorrect API key provided")],
                             itertools.repeat(Turn(text="ready")))
    with ScriptedServer(lambda request: next(script), served_window=24_576) as server:  # vLLM's max_model_len
        dialog = window.open_settings()
        dialog.model.setCurrentText("openai/gpt-4o-mini")
        dialog.api_base.setText(server.url)
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.test_button.isEnabled(), timeout=30_000)
        assert dialog.test_result.text() == ("✓ Connected. The model replied: ready (context window 24,576 tokens; "
                                             "sees pictures)")
        # The button was off while it tested; the focus is back on it, not left in Context window
        # with its text selected for the next keystroke to replace.
        assert dialog.focusWidget() is dialog.test_button

        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.test_button.isEnabled(), timeout=30_000)
        assert dialog.test_result.text().startswith(f"✗ The server at {server.url} refused the API key")
        assert "Traceback" not in dialog.test_result.text()

        # A model no map knows, on a server that does not state its window: the window is said to
        # be assumed, not presented as the model's.
        server.served_window = None
        dialog.model.setCurrentText("openai/my-local-finetune")
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.test_button.isEnabled(), timeout=30_000)
        assert dialog.test_result.text().startswith("✓ Connected. The model replied: ready (context window: not "
                                                    "stated by the server or litellm's model map, so 128,000 tokens "
                                                    "are assumed")
        # All of its lines are shown (three or more at this width), none cut off at the bottom.
        result = dialog.test_result
        qtbot.waitUntil(lambda: result.height() >= result.heightForWidth(result.width()), timeout=2_000)
        assert result.heightForWidth(result.width()) >= 3 * result.fontMetrics().lineSpacing()
        # Its advice taken: the answer says the window a session will budget for, as it is set.
        dialog.context_window.setValue(32_768)
        assert dialog.test_result.text() == ("✓ Connected. The model replied: ready (context window 32,768 tokens, "
                                             "as set here; pictures: shown to it, as nothing says whether it sees "
                                             "them)")
        server.served_window = 24_576  # one the server states, set smaller here
        qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: dialog.test_button.isEnabled(), timeout=30_000)
        assert "(context window 32,768 tokens, as set here; its own: 24,576;" in dialog.test_result.text()
        dialog.context_window.setValue(0)  # the model's own again
        assert "(context window 24,576 tokens;" in dialog.test_result.text()
    dialog.reject()


def chat_says(window) -> str:
    """The notices' text (messages are MessageItems, whose .text is the Markdown they show)."""
    return " ".join(item.text() for item in window.chat.items() if isinstance(item, QLabel))


def test_with_no_session_open_the_window_says_what_to_do_and_offers_nothing_to_edit(qtbot, make_window, workdir,
                                                                                  monkeypatch):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    assert "No session is open" in chat_says(window) and "Ctrl+N" in chat_says(window)
    plan = window.panes[PLAN]
    assert not plan.edit_button.isEnabled() and not plan.pin_button.isEnabled()
    assert not any(button.isEnabled() for button in window.sessions.row_buttons)
    assert not window.actions_by_name["copy_markdown"].isEnabled() and not window.actions_by_name["export"].isEnabled()

    session = window.start_session(SessionConfig(task="Refactor the parser", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    assert "No session is open" not in chat_says(window)
    assert plan.edit_button.isEnabled() and plan.pin_button.isEnabled()
    assert window.actions_by_name["copy_markdown"].isEnabled()
    assert all(button.isEnabled() for button in window.sessions.row_buttons)

    monkeypatch.setattr(QMessageBox, "open", lambda box: box.done(QMessageBox.StandardButton.Yes))
    window.delete_session()
    qtbot.waitUntil(lambda: window.sessions.ids() == [], timeout=WAIT)
    assert "No session is open" in chat_says(window) and window.windowTitle() == "Tripane"
    assert not plan.edit_button.isEnabled()
    assert not any(button.isEnabled() for button in window.sessions.row_buttons)


def drag(window, kind, *paths):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDragEnterEvent, QDropEvent

    data = QMimeData()
    data.setUrls([QUrl.fromLocalFile(str(path)) for path in paths])
    where, action = window.rect().center(), Qt.DropAction.CopyAction
    buttons, modifiers = Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier
    if kind == "enter":
        try:  # PySide6 6.12 takes a QPointF to enter, and deprecates the QPoint that 6.11 requires
            event = QDragEnterEvent(QPointF(where), action, data, buttons, modifiers)
        except TypeError:
            event = QDragEnterEvent(where, action, data, buttons, modifiers)
    else:
        event = QDropEvent(QPointF(where), action, data, buttons, modifiers)
    QApplication.sendEvent(window, event)
    return event.isAccepted()


def test_a_folder_dropped_on_the_window_starts_a_session_in_it(qtbot, make_window, tmp_path):
    from gui.dialogs.new_session import NewSessionDialog

    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    project = tmp_path / "dropped project"
    project.mkdir()
    (project / "notes.txt").write_text("x", encoding="utf-8")
    assert not drag(window, "enter", project / "notes.txt")  # a file: not taken
    assert not drag(window, "enter", project, tmp_path)  # two folders: which one?
    assert drag(window, "enter", project)
    drag(window, "drop", project)
    dialog = next(d for d in window.findChildren(NewSessionDialog) if d.isVisible())
    assert dialog.workdir.text() == str(project)
    dialog.task.setPlainText("Tidy the notes")
    start = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(start, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.session is not None and window.session.state.ended, timeout=WAIT)
    assert window.session.state.config.workdir == str(project.resolve())


def test_the_session_shown_at_closing_is_shown_at_the_next_start(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    first = window.start_session(SessionConfig(task="Refactor the parser", model="scripted", workdir=workdir))
    second = window.start_session(SessionConfig(task="Write release notes", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: first.state.ended and second.state.ended, timeout=WAIT)
    window.sessions.go_to_row(window.sessions.ids().index(first.id))
    assert window.session.id == first.id
    window.close_now()

    again = make_window(ScriptedModel([]))
    qtbot.waitUntil(lambda: again.session is not None, timeout=WAIT)
    assert again.session.id == first.id and again.sessions.current_id() == first.id
    assert "Refactor the parser" in again.windowTitle()

    monkeypatch.setattr(QMessageBox, "open", lambda box: box.done(QMessageBox.StandardButton.Yes))
    again.delete_session()
    qtbot.waitUntil(lambda: again.sessions.ids() == [second.id], timeout=WAIT)
    again.close_now()

    # Deleted before the start had shown it (a fast hand, a slow disk): it does not come back.
    racing = make_window(ScriptedModel([]))
    racing.show_session(second.id)
    qtbot.waitUntil(lambda: racing.session is not None, timeout=WAIT)  # its log is replayed in the background
    racing.delete_session()
    racing.show_last_session()  # what the start's timer calls, after the first frame
    assert racing.session is None
    qtbot.waitUntil(lambda: racing.sessions.ids() == [], timeout=WAIT)
    racing.close_now()
    third = make_window(ScriptedModel([]))
    qtbot.wait(300)
    assert third.session is None and "No session is open" in chat_says(third)  # the deleted one is not sought


def test_sessions_can_be_searched_renamed_and_deleted(qtbot, make_window, workdir, monkeypatch):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    first = window.start_session(SessionConfig(task="Refactor the parser", model="scripted", workdir=workdir))
    second = window.start_session(SessionConfig(task="Write release notes", model="anthropic/claude-sonnet-4-5",
                                                workdir=workdir))
    qtbot.waitUntil(lambda: first.state.ended and second.state.ended, timeout=WAIT)
    assert set(window.sessions.ids()) == {first.id, second.id}

    window.sessions.search.setText("parser")
    assert window.sessions.ids() == [first.id]
    window.sessions.search.setText("Claude")  # by its model, too
    assert window.sessions.ids() == [second.id]
    assert window.sessions.list.item(0).toolTip().endswith("Model: anthropic/claude-sonnet-4-5")
    window.sessions.search.clear()

    window.workspace.rename(second.id, "Release notes 1.2")
    window.refresh_sessions()
    assert any("Release notes 1.2" in window.sessions.list.item(i).text() for i in range(window.sessions.list.count()))

    window.sessions.go_to_row(window.sessions.ids().index(first.id))
    monkeypatch.setattr(QMessageBox, "open", lambda box: box.done(QMessageBox.StandardButton.Yes))
    window.delete_session()
    qtbot.waitUntil(lambda: window.sessions.ids() == [second.id], timeout=WAIT)
    assert not first.dir.exists() and second.dir.exists()
    assert window.session is None or window.session.id != first.id


def test_several_sessions_selected_with_ctrl_and_shift_clicks_are_deleted_with_one_confirmation(
        qtbot, make_window, workdir, monkeypatch):
    from core.run_lock import run_lock

    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    window.show()
    tasks = ["Port the parser", "Fix the login page", "Tidy the imports", "Write release notes", "Add the CSV export"]
    sessions = [window.start_session(SessionConfig(task=task, model="scripted", workdir=workdir)) for task in tasks]
    qtbot.waitUntil(lambda: all(s.state.ended for s in sessions) and window.session is sessions[-1], timeout=WAIT)
    listing = window.sessions.list
    ids = window.sessions.ids()  # newest first: CSV export, release notes, imports, login page, parser

    def click(row: int, modifier=Qt.KeyboardModifier.NoModifier) -> None:
        qtbot.mouseClick(listing.viewport(), Qt.MouseButton.LeftButton, modifier,
                         listing.visualItemRect(listing.item(row)).center())

    click(1)
    click(3, Qt.KeyboardModifier.ShiftModifier)  # rows 1 to 3
    click(2, Qt.KeyboardModifier.ControlModifier)  # but not row 2
    assert window.sessions.chosen_ids() == [ids[1], ids[3]]
    rename, delete = window.sessions.row_buttons
    assert not rename.isEnabled() and delete.isEnabled()  # rename is of one session
    window.refresh_sessions()  # as a run's events do: the selection stays
    assert window.sessions.chosen_ids() == [ids[1], ids[3]]

    held = run_lock(window.workspace.data_dir, ids[3])  # another Tripane runs that one: it is kept
    held.acquire()
    asked = []
    monkeypatch.setattr(QMessageBox, "open", lambda box: asked.append(box.text()) or box.done(QMessageBox.StandardButton.Yes))
    told = []
    monkeypatch.setattr(window, "tell", told.append)
    qtbot.mouseClick(delete, Qt.MouseButton.LeftButton)  # (or the Delete key, or Session → Delete…)
    assert asked[0].startswith("Delete these 2 sessions?\n\n• Write release notes\n• Fix the login page\n\n")
    assert "Their event logs, their three files" in asked[0]
    qtbot.waitUntil(lambda: window.sessions.ids() == [ids[0], ids[2], ids[3], ids[4]], timeout=WAIT)
    assert told and "is being run by another Tripane" in told[0]
    held.release()
    by_id = {s.id: s for s in sessions}
    assert not by_id[ids[1]].dir.exists() and by_id[ids[3]].dir.exists() and by_id[ids[0]].dir.exists()

    window.show_session_beside(1)  # moved to another session from the keyboard: it alone is chosen
    qtbot.waitUntil(lambda: window.session is not None and window.session.id == window.sessions.current_id(),
                    timeout=WAIT)
    assert window.sessions.chosen_ids() == [window.sessions.current_id()] and rename.isEnabled()


def test_deleting_the_shown_session_mid_run_stops_it_and_leaves_nothing_to_send_or_stop(
        qtbot, make_window, workdir, monkeypatch, screen_reader):
    window = make_window(ScriptedModel([], default=reply("", call("file_list"))))
    session = window.start_session(SessionConfig(task="List the files", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.turn >= 2, timeout=WAIT)
    assert window.stop_button.isEnabled()
    asked, said = [], []
    window.announcer.said.connect(said.append)
    monkeypatch.setattr(QMessageBox, "open", lambda box: asked.append(box.text()) or box.done(QMessageBox.StandardButton.Yes))
    window.delete_session()
    assert "It is running: its run is stopped first" in asked[0]
    qtbot.waitUntil(lambda: window.sessions.ids() == [] and not session.running, timeout=WAIT)
    assert window.session is None and not session.dir.exists()
    assert any(line.startswith("No session is open.") for line in said)  # a screen reader is told what is left
    buttons = (window.send_button, window.pause_button, window.resume_button, window.stop_button)
    assert not any(button.isEnabled() for button in buttons)


def test_a_session_is_found_and_opened_from_the_keyboard(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    first = window.start_session(SessionConfig(task="Refactor the parser", model="scripted", workdir=workdir))
    second = window.start_session(SessionConfig(task="Write release notes", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: first.state.ended and second.state.ended and window.session is second, timeout=WAIT)
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)

    qtbot.keyClick(window.chat, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(window.sessions.search, "parser")
    qtbot.keyClick(window.sessions.search, Qt.Key.Key_Return)  # the first match opens, to write to
    qtbot.waitUntil(lambda: window.session is first, timeout=WAIT)
    assert window.composer.hasFocus()

    qtbot.keyClick(window.composer, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window.sessions.search, Qt.Key.Key_Escape)  # cleared: both listed again
    assert window.sessions.ids() == [second.id, first.id]
    qtbot.keyClick(window.sessions.search, Qt.Key.Key_Escape)  # empty: back to the message box
    assert window.composer.hasFocus()
    qtbot.keyClick(window.composer, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(window.sessions.search, Qt.Key.Key_Down)  # into the list, at the shown one
    assert window.sessions.list.hasFocus() and window.sessions.current_id() == first.id
    qtbot.keyClick(window.sessions.list, Qt.Key.Key_Up)
    qtbot.waitUntil(lambda: window.session is second, timeout=WAIT)


@pytest.mark.qt_log_ignore("This plugin does not support grabbing the keyboard")  # a popup menu, offscreen
def test_a_right_click_on_a_session_offers_what_can_be_done_with_it(qtbot, make_window, workdir, monkeypatch):
    from gui import desktop_open

    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    first = window.start_session(SessionConfig(task="Refactor the parser", model="scripted", workdir=workdir))
    second = window.start_session(SessionConfig(task="Write release notes", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: first.state.ended and second.state.ended, timeout=WAIT)
    row = window.sessions.ids().index(first.id)
    where = window.sessions.list.visualItemRect(window.sessions.list.item(row)).center()

    qtbot.mouseClick(window.sessions.list.viewport(), Qt.MouseButton.RightButton, pos=where)  # selects it
    menu = window._session_context_menu(where)  # what Qt calls on the right-click

    assert window.session is not None and window.session.id == first.id
    texts = [action.text().replace("&", "") for action in menu.actions() if not action.isSeparator()]
    assert texts == ["New session like this one…", "Rename…", "Export as zip…", "Copy as Markdown", "Open session folder",
                     "Open working folder", "What the agent changed…", "Summary…", "Reflect on the task…",
                     "Ask a helper…", "Delete…"]
    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    next(a for a in menu.actions() if a.text().replace("&", "") == "Open session folder").trigger()
    assert opened == [str(first.dir)]
    menu.close()
    empty = window.sessions.list.viewport().rect().bottomLeft() - type(where)(0, 2)
    assert window._session_context_menu(empty) is None  # below the last session: no menu

    # Both selected: what acts on several, not a Rename of the one shown alone.
    window.sessions.list.selectAll()
    menu = window._session_context_menu(where)
    assert [action.text() for action in menu.actions()] == ["Delete 2 sessions…"]
    menu.actions()[0].trigger()
    confirm = next(box for box in window.findChildren(QMessageBox) if box.isVisible())
    assert confirm.text().startswith("Delete these 2 sessions?")
    confirm.reject()
    menu.close()


def test_the_inspector_shows_zones_and_each_request(qtbot, make_window, workdir):
    model = ScriptedModel([reply("", call("file_list")), reply("", call("task_done", summary="listed"))])
    window = make_window(model)
    session = window.start_session(SessionConfig(task="List the files", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)

    qtbot.keyClick(window, Qt.Key.Key_I, Qt.KeyboardModifier.ControlModifier)
    inspector = window.findChild(ContextInspector)
    qtbot.waitUntil(lambda: "prefix" in inspector.summary.text() and "tokens" in inspector.summary.text(), timeout=WAIT)
    assert "history" in inspector.summary.text() and "tail" in inspector.summary.text()
    assert inspector.table.rowCount() == 2  # one row per model request
    assert inspector.table.item(0, 4).text() == "–"  # the scripted model has no price: not "$0.0000"
    assert "List the files" in inspector.context_view.toPlainText()
    assert "════ PREFIX" in inspector.context_view.toPlainText()
    assert len(inspector.chart.rows) == 2


def test_the_inspector_marks_the_flush_and_a_reply_stopped_midway(qtbot):
    from core.events import AssistantMessage, Record

    inspector = ContextInspector()
    qtbot.addWidget(inspector)
    inspector.show_requests([Record("s", 1, "", AssistantMessage("", turn=1)),
                             Record("s", 2, "", AssistantMessage("", turn=2, metrics={"flush": True})),
                             Record("s", 3, "", AssistantMessage("Half an answ", turn=3,
                                                                 metrics={"stopped_by_person": True}))])
    assert [inspector.table.item(row, 0).text() for row in range(3)] == ["1", "2 (flush)", "3 (stopped)"]


def test_the_open_inspector_follows_the_session_shown_and_its_requests_as_they_are_made(
        qtbot, make_window, workdir):
    model = ScriptedModel([reply("", call("file_list")), reply("", call("task_done", summary="listed")),
                           reply("", call("file_list")), reply("", call("file_list")),
                           reply("", call("task_done", summary="counted"))])
    window = make_window(model)
    first = window.start_session(SessionConfig(task="List the files", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: first.state.ended, timeout=WAIT)
    inspector = window.open_inspector()
    qtbot.waitUntil(lambda: "List the files" in inspector.context_view.toPlainText(), timeout=WAIT)
    assert inspector.table.rowCount() == 2 and "List the files" in inspector.windowTitle()

    second = window.start_session(SessionConfig(task="Count the files", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: second.state.ended, timeout=WAIT)
    qtbot.waitUntil(lambda: inspector.table.rowCount() == 3 and "Count the files" in inspector.windowTitle()
                    and "Count the files" in inspector.context_view.toPlainText(), timeout=WAIT)
    window.show_session(first.id)
    qtbot.waitUntil(lambda: inspector.table.rowCount() == 2 and "List the files" in inspector.windowTitle(),
                    timeout=WAIT)


def test_window_geometry_and_splitters_are_remembered(qtbot, make_window, settings):
    window = make_window()
    window.resize(760, 590)  # within the offscreen screen (800 × 800), which geometry is clamped to
    window.main_splitter.setSizes([150, 330, 280])
    sizes, size = window.main_splitter.sizes(), window.size()
    assert size.height() == 590
    window.close()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)

    again = make_window()
    assert again.size() == size
    assert again.main_splitter.sizes() == sizes


def test_the_sessions_list_hides_for_room_and_stays_hidden_at_the_next_start(qtbot, make_window):
    window = make_window()
    chat_width, width_with_list = window.chat.width(), window.minimumSizeHint().width()
    window.sessions.search.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert window.sessions.isHidden() and not window.actions_by_name["sessions_list"].isChecked()
    qtbot.waitUntil(lambda: window.chat.width() > chat_width, timeout=WAIT)  # the room went to the rest
    focus = QApplication.focusWidget()  # not left on a hidden field
    assert focus is not None and focus.isVisible() and not window.sessions.isAncestorOf(focus)
    window.close()
    qtbot.waitUntil(lambda: window.shutdown_done is not None and window.shutdown_done.done(), timeout=WAIT)

    again = make_window()
    assert again.sessions.isHidden() and not again.actions_by_name["sessions_list"].isChecked()
    assert again.minimumSizeHint().width() < width_with_list
    again.find()  # Ctrl+F away from the panes searches the sessions: the list comes back for it
    assert not again.sessions.isHidden() and again.sessions.search.hasFocus()
    assert again.actions_by_name["sessions_list"].isChecked()


def test_theme_toggle_switches_the_palette_and_is_saved(qtbot, make_window, settings):
    window = make_window()
    light = QApplication.palette().window().color().lightness()
    style = QApplication.style()
    action = window.actions_by_name["theme"]
    assert action.shortcut().toString() == "Ctrl+Shift+T"
    action.trigger()
    assert QApplication.palette().window().color().lightness() < light
    assert settings.load().theme == "dark"
    window.toggle_theme()
    assert settings.load().theme == "light"
    # The style is set once: made anew under the living widgets at each change, it crashed Qt.
    assert QApplication.style() is style


def test_links_take_the_new_themes_colour_when_the_theme_changes(qtbot, make_window):
    from gui.qt import QColor, QLabel, QPalette
    from gui.theme import apply_theme

    def link_colours(label: QLabel) -> set[str]:
        """The colours of the label's link, as drawn: its most saturated pixels."""
        image = label.grab().toImage()
        colours = {image.pixel(x, y) for x in range(image.width()) for y in range(image.height())}
        return {QColor(c).name() for c in colours if QColor(c).hsvSaturation() > 60}

    window = make_window()
    apply_theme(QApplication.instance(), "light")
    label = QLabel('<a href="history">v12</a>', window)  # as a pane's version beside its name
    label.setObjectName("muted")
    label.resize(80, 30)
    label.show()
    qtbot.waitExposed(label)
    light_link = QApplication.palette().color(QPalette.ColorRole.Link).name()
    assert light_link in link_colours(label)

    apply_theme(QApplication.instance(), "dark")
    dark_link = QApplication.palette().color(QPalette.ColorRole.Link).name()
    qtbot.waitUntil(lambda: dark_link in link_colours(label), timeout=WAIT)  # a dark blue on dark grey, else
    assert light_link not in link_colours(label)
    apply_theme(QApplication.instance(), "light")


def test_the_system_theme_follows_the_desktop_as_it_goes_dark_and_light(qtbot, make_window, settings, monkeypatch):
    assert Preferences().theme == "system"  # what a first start shows
    window = make_window()
    light = QApplication.palette().window().color().lightness()
    monkeypatch.setattr("gui.theme.desktop_is_dark", lambda: True)  # the desktop went dark
    QApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert QApplication.palette().window().color().lightness() < light
    window.toggle_theme()  # Ctrl+Shift+T: the other one than shown, chosen from now on
    assert settings.load().theme == "light" and QApplication.palette().window().color().lightness() == light
    QApplication.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
    assert QApplication.palette().window().color().lightness() == light  # chosen: no longer the desktop's
    dialog = window.open_settings()
    assert [dialog.theme.itemData(i) for i in range(dialog.theme.count())] == [
        "system", "light", "dark", "contrast-light", "contrast-dark"]
    dialog.reject()




def test_test_connection_to_a_server_that_is_not_there_says_so_at_once(qtbot, make_window):
    import socket

    with socket.socket() as probe:  # a port on this machine that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    window = make_window()
    dialog = window.open_settings()
    dialog.model.setCurrentText("openai/gpt-4o-mini")
    dialog.api_base.setText(f"http://127.0.0.1:{port}/v1")
    qtbot.mouseClick(dialog.test_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.test_button.isEnabled(), timeout=30_000)
    assert dialog.test_result.text() == (f"✗ Could not reach the server at http://127.0.0.1:{port}/v1 (Connection "
                                         "error): is it running, and is the API base right?")
    dialog.reject()


def test_export_writes_the_session_zip_in_the_background(qtbot, make_window, workdir, tmp_path):
    import zipfile

    window = make_window(ScriptedModel([reply("", call("task_done", summary="ok"))]))
    session = window.start_session(SessionConfig(task="Export me", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    window.export_to(session, tmp_path / "export.zip")
    assert window.statusBar().currentMessage().startswith("Exporting to ")  # said while it works
    qtbot.waitUntil(lambda: window.statusBar().currentMessage().startswith("Exported to "), timeout=WAIT)
    assert (tmp_path / "export.zip").exists()
    with zipfile.ZipFile(tmp_path / "export.zip") as archive:
        assert f"{session.id}/task_plan.md" in archive.namelist()


def test_the_new_session_dialog_says_what_is_missing_and_carries_the_settings(qtbot, workdir):
    from gui.dialogs.new_session import NewSessionDialog
    from gui.settings import Preferences

    prefs = Preferences(model="openai/gpt-4o-mini", workdir=str(workdir), danger_turn=44, budget_usd=2.5,
                        summary_model="openai/gpt-4.1-nano", reasoning_effort="high", answer_wait_min=15,
                        helper_model="openai/gpt-4.1-mini", diagnose_errors=0, copy_work_folder=0)
    dialog = NewSessionDialog(prefs)
    qtbot.addWidget(dialog)
    dialog._accept()
    assert dialog.config is None and "Describe the task" in dialog.error.text()
    dialog.task.setPlainText("Tidy the changelog")
    dialog.workdir.setText(str(workdir / "nowhere"))
    dialog._accept()
    assert dialog.config is None and "does not exist" in dialog.error.text()
    dialog.workdir.setText(str(workdir))
    dialog._accept()
    config = dialog.config
    assert (config.task, config.model, config.danger_turn, config.budget_usd, config.context_window) == (
        "Tidy the changelog", "openai/gpt-4o-mini", 44, 2.5, None)  # None: the model's own window
    assert config.summary_model == "openai/gpt-4.1-nano" and config.reasoning_effort == "high"
    assert config.answer_wait_min == 15 and config.helper_model == "openai/gpt-4.1-mini"
    assert config.diagnose_errors is False and config.copy_work_folder is False
    dialog.reasoning_effort.setCurrentIndex(dialog.reasoning_effort.findData(""))  # this task: the model's own
    dialog._accept()
    assert dialog.config.reasoning_effort == "" and prefs.reasoning_effort == "high"
    dialog.context_window.setValue(1000)
    dialog._accept()
    assert dialog.error.text() == ("A context window of 1,000 tokens cannot hold Tripane's prompt and a few turns; "
                                   "give at least 4,096.")
    dialog.context_window.setValue(16_384)
    dialog._accept()
    assert dialog.config.context_window == 16_384
    dialog.config = None
    dialog.model.setCurrentText("localhost:11434")
    dialog._accept()
    assert dialog.config is None and "localhost:11434 is a server's address, not a model" in dialog.error.text()


def test_a_model_used_before_is_offered_with_its_server_and_another_does_not_take_the_settings_server(qtbot,
                                                                                                     workdir):
    from gui.dialogs.new_session import NewSessionDialog
    from gui.settings import Preferences

    prefs = Preferences(model="ollama_chat/qwen3", api_base="http://127.0.0.1:11434", context_window=16_384,
                        summary_model="ollama_chat/qwen3:0.6b", workdir=str(workdir))
    prefs.remember_model("openai/local-coder", "http://127.0.0.1:8080/v1")
    prefs.remember_model("anthropic/claude-sonnet-4-5", None)
    prefs.remember_model("openai/local-coder", "http://127.0.0.1:8081/v1")  # used again, elsewhere: once, newest
    assert prefs.models_used() == [("openai/local-coder", "http://127.0.0.1:8081/v1"),
                                   ("anthropic/claude-sonnet-4-5", "")]
    dialog = NewSessionDialog(prefs)
    qtbot.addWidget(dialog)
    assert [dialog.model.itemText(i) for i in range(dialog.model.count())] == [
        "ollama_chat/qwen3", "openai/local-coder", "anthropic/claude-sonnet-4-5"]
    dialog.task.setPlainText("Tidy the changelog")

    def chosen(model: str):
        dialog.model.setCurrentText(model)
        dialog._accept()
        return dialog.config.api_base, dialog.config.context_window, dialog.config.summary_model

    assert chosen("ollama_chat/qwen3") == ("http://127.0.0.1:11434", 16_384, "ollama_chat/qwen3:0.6b")
    assert dialog.context_window.value() == 16_384  # shown: Settings' window goes with its model
    assert chosen("openai/local-coder") == ("http://127.0.0.1:8081/v1", None, None)
    assert dialog.context_window.text() == "the model's own"
    # A server that does not say how long its context is: Test connection says to set it, here.
    dialog.context_window.setValue(32_768)
    assert chosen("openai/local-coder") == ("http://127.0.0.1:8081/v1", 32_768, None)
    # Typed, never used: the provider's own server, not the local one of the Settings model.
    assert chosen("openai/gpt-4o-mini") == (None, None, None)


def test_a_server_corrected_in_new_session_is_offered_again_until_settings_chooses_one(qtbot, make_window, workdir,
                                                                                     memory_keyring):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    window.prefs.model, window.prefs.api_base = "openai/local-coder", "http://127.0.0.1:8080/v1s"  # a typo

    def new_session_offers() -> str:
        dialog = window.new_session()
        qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
        offered = dialog.api_base.text()
        dialog.reject()
        return offered

    assert new_session_offers() == "http://127.0.0.1:8080/v1s"
    dialog = window.new_session()
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    dialog.api_base.setText("http://127.0.0.1:8080/v1")  # corrected here, not in Settings
    dialog.task.setPlainText("Tidy the changelog")
    dialog._accept()
    qtbot.waitUntil(lambda: window.session is not None and window.session.state.ended, timeout=WAIT)
    assert new_session_offers() == "http://127.0.0.1:8080/v1"  # where it worked, not the typo again

    settings = window.open_settings()
    settings.api_base.setText("http://127.0.0.1:9090/v1")  # another server chosen in Settings: the newest
    settings._accept()
    qtbot.waitUntil(lambda: closed(settings), timeout=WAIT)
    assert window.prefs.api_base == "http://127.0.0.1:9090/v1"
    assert new_session_offers() == "http://127.0.0.1:9090/v1"


def test_a_new_session_shows_where_its_model_goes_and_takes_the_key_it_lacks(qtbot, make_window, workdir,
                                                                            memory_keyring):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    window.prefs.api_base = "http://127.0.0.1:11434"  # the Settings model is a local one
    window.prefs.remember_model("openai/local-coder", "http://127.0.0.1:8080/v1")
    dialog = window.new_session()
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    assert dialog.api_base.text() == "http://127.0.0.1:11434"
    assert not dialog.connection.key_note.isVisible()  # nothing to say but where keys are kept: no line
    dialog.model.setCurrentText("openai/local-coder")  # typed, not picked: its server all the same
    assert dialog.api_base.text() == "http://127.0.0.1:8080/v1"
    dialog.model.setCurrentText("anthropic/claude-3-5-haiku-latest")  # never used: the provider's own server
    assert dialog.api_base.text() == ""
    qtbot.waitUntil(lambda: dialog.api_key.placeholderText() == "none stored for anthropic yet: paste its key here",
                    timeout=WAIT)
    dialog.api_key.setText("sk-ant-typed-at-the-start")
    dialog.task.setPlainText("Tidy the changelog")
    start = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
    qtbot.mouseClick(start, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.session is not None and window.session.state.ended, timeout=WAIT)
    assert memory_keyring.secrets == {("Tripane", "anthropic"): "sk-ant-typed-at-the-start"}
    assert (window.session.state.model, window.session.state.api_base) == ("anthropic/claude-3-5-haiku-latest", None)

    dialog = window.new_session()  # a server typed for a model: the session goes there
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    dialog.model.setCurrentText("openai/my-finetune")
    dialog.api_base.setText("http://127.0.0.1:8000/v1")
    dialog.task.setPlainText("Tidy the README")
    dialog._accept()
    assert dialog.config.api_base == "http://127.0.0.1:8000/v1" and dialog.config.model == "openai/my-finetune"


def test_a_new_session_like_the_open_one_starts_filled_in_as_it_runs_now(qtbot, make_window, workdir, tmp_path):
    """To run a task again from the start (or a variant of it): the task, folder, approvals, and
    the model the session has now — after a change of model, that one, at its server — with its
    effort. Anything can be changed before Start."""
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    window.prefs.model = "openai/gpt-4o-mini"
    window.prefs.budget_usd = 5.0
    given = tmp_path / "Downloads" / "notes.bin"  # (given with the task: the new session has its own copy)
    given.parent.mkdir()
    given.write_bytes(b"\x00notes")
    task = "Refactor the parser\nkeep the API; notes: `offload:given/notes.bin`"
    first = window.start_session(SessionConfig(task=task, model="scripted", workdir=workdir, approval="none",
                                               budget_usd=2.5, given=((str(given), "notes.bin"),)))
    given.unlink()  # (moved away since)
    qtbot.waitUntil(lambda: first.state.ended and not first.running, timeout=WAIT)
    asyncio.ensure_future(first.change_model("openai/my-finetune", "http://127.0.0.1:8000/v1", context_window=32_768,
                                             reasoning_effort="high"))
    qtbot.waitUntil(lambda: first.state.model == "openai/my-finetune", timeout=WAIT)
    assert window.actions_by_name["new_like"].isEnabled()

    dialog = window.new_session_like()
    qtbot.waitUntil(dialog.isVisible, timeout=WAIT)
    assert dialog.task.toPlainText() == task
    assert dialog.workdir.text() == str(workdir)
    assert (dialog.model.currentText(), dialog.api_base.text()) == ("openai/my-finetune", "http://127.0.0.1:8000/v1")
    assert dialog.context_window.value() == 32_768  # the window it was given with that model
    assert dialog.reasoning_effort.currentData() == "high" and dialog.approval.currentData() == "none"
    assert dialog.budget_usd.value() == 2.5  # its own cap, not the one Settings holds
    dialog.budget_usd.setValue(1.25)
    other = tmp_path / "variant"
    other.mkdir()
    dialog.workdir.setText(str(other))
    dialog._accept()
    config = dialog.config
    assert (config.task, config.workdir, config.model, config.api_base) == (
        task, other, "openai/my-finetune", "http://127.0.0.1:8000/v1")
    assert config.given == ((str(first.dir / "offload" / "given" / "notes.bin"), "notes.bin"),)
    again = window.start_session(config)
    assert (again.dir / "offload" / "given" / "notes.bin").read_bytes() == b"\x00notes"
    assert (config.reasoning_effort, config.approval, config.budget_usd) == ("high", "none", 1.25)
    assert config.context_window == 32_768
    dialog.reject()
    assert window.new_session().budget_usd.value() == 5.0  # a new one starts with the cap Settings holds


def test_a_new_session_without_a_keyring_says_where_the_key_goes_instead(qtbot, make_window, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    window = make_window()  # keyring's null backend: no keyring service
    dialog = window.new_session()
    dialog.model.setCurrentText("anthropic/claude-3-5-haiku-latest")
    note = dialog.connection.key_note
    qtbot.waitUntil(lambda: note.isVisible() and "(ANTHROPIC_API_KEY, …)" in note.text(), timeout=WAIT)
    qtbot.waitUntil(lambda: dialog.api_key.placeholderText() == "none for anthropic yet: paste its key here (see below)",
                    timeout=WAIT)
    # On its own line, below the key, not drawn over the rows around it.
    assert note.geometry().top() >= dialog.api_key.geometry().bottom()
    assert note.geometry().bottom() <= dialog.connection.test_button.geometry().top()


def test_the_key_field_says_which_key_the_model_would_be_sent():
    from gui.dialogs.connection import key_placeholder

    assert key_placeholder("anthropic/claude-sonnet-4-5", "", "keyring") == (
        "a key is stored for anthropic: leave empty to keep it")
    assert key_placeholder("openai/deepseek-chat", "https://api.deepseek.com/v1", "keyring") == (
        "a key is stored for openai@api.deepseek.com: leave empty to keep it")
    assert key_placeholder("openai/gpt-4o-mini", "", "environment") == (
        "leave empty to use OPENAI_API_KEY from the environment")
    assert key_placeholder("ollama_chat/qwen3", "", "") == "none needed by a server on this computer"
    assert key_placeholder("openai/local", "http://localhost:8000/v1", "") == "none needed by a server on this computer"
    assert key_placeholder("bedrock/anthropic.claude-3-haiku", "", "") == (
        "none needed: AWS's own sign-in on this computer is used")
    assert key_placeholder("vertex_ai/gemini-2.5-pro", "", "") == (
        "none needed: Google Cloud's own sign-in on this computer is used")
    assert key_placeholder("anthropic/claude-sonnet-4-5", "", "") == "none stored for anthropic yet: paste its key here"
    assert key_placeholder("anthropic/claude-sonnet-4-5", "", "", can_store=False) == (
        "none for anthropic yet: paste its key here (see below)")
    assert key_placeholder("anthropic/claude-sonnet-4-5", "", "held") == (
        "a key is held until Tripane closes: leave empty to keep it")


def test_ctrl_enter_in_the_task_starts_the_session(qtbot, workdir):
    from gui.dialogs.new_session import NewSessionDialog
    from gui.settings import Preferences

    dialog = NewSessionDialog(Preferences(model="openai/gpt-4o-mini", workdir=str(workdir)))
    qtbot.addWidget(dialog)
    with qtbot.waitActive(dialog):  # a shortcut reaches only the active window
        dialog.show()
        dialog.activateWindow()
    dialog.task.setFocus()
    qtbot.keyClicks(dialog.task, "Tidy the changelog")
    qtbot.keyClick(dialog.task, Qt.Key.Key_Return)  # a new line, as in any text box
    assert dialog.isVisible() and dialog.task.toPlainText() == "Tidy the changelog\n"
    qtbot.keyClick(dialog.task, Qt.Key.Key_Tab)  # on to the next field, as in any form
    assert dialog.task.toPlainText() == "Tidy the changelog\n" and not dialog.task.hasFocus()
    dialog.task.setFocus()
    qtbot.keyClick(dialog.task, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert dialog.result() == dialog.DialogCode.Accepted.value and not dialog.isVisible(), dialog.error.text()
    assert dialog.config.task == "Tidy the changelog"


def test_the_new_session_dialog_offers_the_folders_used_lately(qtbot, make_window, settings, tmp_path):
    from gui.dialogs.new_session import NewSessionDialog

    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    folders = [tmp_path / name for name in ("site", "api", "gone")]
    for folder in folders:
        folder.mkdir()
        session = window.start_session(SessionConfig(task=f"Work on {folder.name}", model="scripted", workdir=folder))
        qtbot.waitUntil(lambda s=session: s.state.ended, timeout=WAIT)
    window.start_session(SessionConfig(task="Again", model="scripted", workdir=folders[0]))  # used again: first
    folders[2].rmdir()

    dialog = NewSessionDialog(settings.load())  # as saved, as the next start of Tripane reads them
    qtbot.addWidget(dialog)
    listed = [dialog.recent.itemText(i) for i in range(dialog.recent.count())]
    assert listed == [str(folders[0]), str(folders[1])]  # newest first, each once, the deleted one gone
    assert dialog.workdir.text() == str(folders[0])
    dialog.recent.setCurrentIndex(1)
    dialog.task.setPlainText("Fix the API")
    dialog._accept()
    assert dialog.config.workdir == folders[1]


def test_a_task_typed_in_the_new_session_window_closed_without_starting_comes_back(qtbot, make_window, workdir):
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    dialog = window.new_session()
    qtbot.keyClicks(dialog.task, "Port the parser to the new tokenizer, keeping the old API")
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)  # by mistake
    again = window.new_session()
    assert again.task.toPlainText() == "Port the parser to the new tokenizer, keeping the old API"
    again.workdir.setText(str(workdir))
    again.model.setCurrentText("scripted")
    again._accept()
    qtbot.waitUntil(lambda: window.session is not None, timeout=WAIT)
    assert window.new_session().task.toPlainText() == ""  # started: no longer waiting


def test_a_new_session_in_a_folder_not_made_yet_offers_to_make_it(qtbot, workdir):
    from gui.dialogs.new_session import NewSessionDialog
    from gui.settings import Preferences

    dialog = NewSessionDialog(Preferences(model="openai/gpt-4o-mini", workdir=str(workdir)))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.task.setPlainText("Start a changelog")
    (workdir / "notes.txt").write_text("a file", encoding="utf-8")
    dialog.workdir.setText(str(workdir / "notes.txt"))
    dialog._accept()
    assert "is a file, not a folder" in dialog.error.text() and not dialog.create_folder.isVisible()

    new = workdir / "projects" / "changelog"
    dialog.workdir.setText(str(new))
    dialog._accept()
    assert dialog.config is None and "does not exist" in dialog.error.text() and dialog.create_folder.isVisible()
    qtbot.mouseClick(dialog.create_folder, Qt.MouseButton.LeftButton)
    assert new.is_dir() and dialog.config is not None and dialog.config.workdir == new
    assert dialog.result() == dialog.DialogCode.Accepted


def test_the_new_session_dialog_says_whether_the_folder_has_agent_instructions(qtbot, workdir):
    from gui.dialogs.new_session import NewSessionDialog
    from gui.settings import Preferences

    dialog = NewSessionDialog(Preferences(model="openai/gpt-4o-mini", workdir=str(workdir)))
    qtbot.addWidget(dialog)
    assert not dialog.instructions.isEnabled() and "None in this folder" in dialog.instructions.text()
    (workdir / "AGENTS.md").write_text("- Run `make check`.\n", encoding="utf-8")
    dialog.workdir.setText(str(workdir) + "/")  # the folder chosen again
    assert dialog.instructions.isEnabled() and dialog.instructions.text() == "Follow the folder's AGENTS.md"
    dialog.task.setPlainText("Tidy the changelog")
    dialog._accept()
    assert dialog.config.project_instructions is True
    dialog.instructions.setChecked(False)
    dialog._accept()
    assert dialog.config.project_instructions is False


def test_the_new_session_dialog_says_when_the_work_folder_is_the_home_folder(qtbot, workdir, tmp_path, monkeypatch,
                                                                            memory_keyring):
    from gui.dialogs.new_session import HOME_NOTE, NewSessionDialog
    from gui.settings import Preferences

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))  # (Windows)
    monkeypatch.setattr("gui.dialogs.new_session.started_from_terminal", lambda: False)  # (from a launcher)
    dialog = NewSessionDialog(Preferences(model="openai/gpt-4o-mini"))  # a first start: home is offered
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.workdir.text() == str(home)
    assert dialog.folder_note.isVisible() and dialog.folder_note.text() == HOME_NOTE
    assert dialog.recent.accessibleDescription().endswith(HOME_NOTE)  # said with the folder's field
    note = dialog.folder_note
    qtbot.waitUntil(lambda: note.height() >= note.heightForWidth(note.width()) > 0, timeout=2_000)
    with_note = dialog.height()
    dialog.workdir.setText(str(workdir))
    assert not dialog.folder_note.isVisible() and HOME_NOTE not in dialog.recent.accessibleDescription()
    # The dialog gives the note's room back: left as tall, it spread its rows apart over the gap.
    qtbot.waitUntil(lambda: dialog.height() < with_note, timeout=2_000)
    dialog.workdir.setText("~/")
    assert dialog.folder_note.isVisible()
    qtbot.waitUntil(lambda: dialog.height() == with_note, timeout=2_000)
    assert note.height() >= note.heightForWidth(note.width())  # the whole note, none of it cut
    assert dialog.connection.key_note.isHidden()  # (with no keyring, its note comes later and moves the rows)
    # A height the person gives the dialog is theirs: the note's going does not take it back.
    dialog.resize(dialog.width(), with_note + 100)
    dialog.workdir.setText(str(workdir))
    qtbot.wait(100)  # (what would shrink it comes in a posted layout request)
    assert dialog.height() == with_note + 100


def chart_runs(chart, row: int) -> list[int]:
    """The widths of the runs of the chart's bar colour across `row` of the chart as drawn: a solid
    bar's share is a wide run, an outlined one two thin runs (its sides)."""
    from gui.qt import QColor
    from gui.theme import html_colour

    image = chart.grab().toImage()
    bar = QColor(html_colour("chart"))

    def is_bar(x: int) -> bool:
        pixel = QColor(image.pixel(x, row))
        return abs(pixel.red() - bar.red()) + abs(pixel.green() - bar.green()) + abs(pixel.blue() - bar.blue()) < 90

    runs, width = [], 0
    for x in range(image.width()):
        if is_bar(x):
            width += 1
        elif width:
            runs, width = [*runs, width], 0
    return runs


def test_a_few_requests_are_a_few_narrow_bars(qtbot):
    from gui.dialogs.inspector import BAR_STEP_MAX, TokenChart

    chart = TokenChart()
    qtbot.addWidget(chart)
    chart.resize(700, 300)
    chart.set_rows([{"prompt": 1200, "cached": 0, "reuse": 0.0, "cost": 0.0, "flush": False}])
    image = chart.grab().toImage()
    runs = chart_runs(chart, image.height() // 2)
    assert len(runs) == 2 and max(runs) <= 3  # nothing reused: one bar, outlined, not a wall across the chart
    from gui.qt import QColor
    from gui.theme import html_colour
    sides = [x for x in range(image.width()) if QColor(image.pixel(x, image.height() // 2)) == QColor(html_colour("chart"))]
    assert sides and sides[-1] - sides[0] <= BAR_STEP_MAX


def test_the_token_chart_shows_the_providers_cache_and_says_when_it_shows_reuse_instead(qtbot):
    from gui.dialogs.inspector import TokenChart

    chart = TokenChart()
    qtbot.addWidget(chart)
    chart.resize(400, 300)

    def solid_bars() -> int:
        return sum(1 for width in chart_runs(chart, 150) if width > 3)  # halfway up: within every bar below

    first = {"prompt": 1000, "cached": 0, "reuse": 0.0, "cost": 0.0}
    # A local server that reports no cached tokens: the solid share is the prefix reused.
    chart.set_rows([first, {"prompt": 1100, "cached": 0, "reuse": 0.9, "cost": 0.0}])
    assert solid_bars() == 1 and "solid: prefix reused (the provider reports no cache), outlined: the rest" in chart.legend()
    # A provider that reports its cache: a request it served nothing of is a miss, shown as one.
    chart.set_rows([first, {"prompt": 1100, "cached": 990, "reuse": 0.9, "cost": 0.0},
                    {"prompt": 1200, "cached": 0, "reuse": 0.9, "cost": 0.0}])
    assert solid_bars() == 1 and "solid: served from cache" in chart.legend()
    assert chart.legend().endswith("· cost unknown (no price for this model)")  # not "$0.0000"
    chart.set_rows([first, {"prompt": 1100, "cached": 990, "reuse": 0.9, "cost": 0.0021}])
    assert chart.legend().endswith("· line: cumulative cost $0.0021")
    # What the bars show, for a screen reader
    assert chart.accessibleDescription() == ("2 requests, the last of 1,100 prompt tokens, the largest of 1,100; "
                                             "47% of all served from cache; cost $0.0021 in all")


def test_dialogs_closed_during_a_day_of_work_do_not_stay_behind(qtbot, make_window, workdir):
    """Each dialog is made anew when it is opened; once closed it must go, or every one opened in
    a day's work stays in memory, a hidden child of the window, until Tripane quits."""
    window = make_window(ScriptedModel([], default=reply("", call("task_done", summary="ok"))))
    session = window.start_session(SessionConfig(task="Refactor the parser", model="scripted", workdir=workdir))
    qtbot.waitUntil(lambda: session.state.ended and window.session is session, timeout=WAIT)
    window.sessions.go_to_row(0)

    for _ in range(3):
        for open_one in (window.new_session, window.rename_session, window.delete_session,
                         window.open_settings, window.export_session,
                         lambda: window.on_pane_pin_requested(PLAN), lambda: window.tell("Noted.")):
            open_one()
            dialog = QApplication.activeModalWidget()
            assert isinstance(dialog, QDialog), open_one
            dialog.reject()
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert [type(dialog).__name__ for dialog in window.findChildren(QDialog)] == []
    assert session.dir.exists()  # the delete was cancelled


def test_a_new_session_offers_the_folder_tripane_was_typed_in(tmp_path, monkeypatch):
    from gui.dialogs.new_session import proposed_workdir

    project, last = tmp_path / "project", tmp_path / "last"
    project.mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("USERPROFILE", str(tmp_path / "home"))
    assert proposed_workdir(str(last), project, from_terminal=True) == str(project)
    # Started from a launcher, the folder it runs in says nothing: the one used last, else home.
    assert proposed_workdir(str(last), project, from_terminal=False) == str(last)
    assert proposed_workdir("", project, from_terminal=False) == str(tmp_path / "home")
    # A terminal in home or at a drive's root names no project either.
    assert proposed_workdir(str(last), tmp_path / "home", from_terminal=True) == str(last)
    root = Path(project.anchor)
    assert proposed_workdir(str(last), root, from_terminal=True) == str(last)


def test_a_server_changed_in_the_settings_file_by_hand_is_the_one_new_session_offers(tmp_path):
    # New session offers a model with the server it was last used at; an address corrected in
    # settings.json (the server moved to another port) was put back by that older use.
    from gui.settings import AppSettings, Preferences

    settings = AppSettings(QSettings(str(tmp_path / "app.ini"), QSettings.Format.IniFormat))
    prefs = Preferences(model="openai/local-coder", api_base="http://127.0.0.1:8080/v1")
    prefs.remember_model(prefs.model, prefs.api_base)
    settings.save(prefs)
    shared = json.loads(settings.shared_file.read_text(encoding="utf-8"))
    settings.shared_file.write_text(json.dumps(shared | {"api_base": "http://127.0.0.1:9090/v1"}), encoding="utf-8")
    loaded = settings.load()
    assert loaded.server_of("openai/local-coder") == "http://127.0.0.1:9090/v1"
    settings.save(loaded)  # and unchanged since, the window's own choices stand as they were
    assert AppSettings(settings.q).load().models_used() == [("openai/local-coder", "http://127.0.0.1:9090/v1")]
