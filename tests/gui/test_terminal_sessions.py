"""A person who began in the terminal (`tripane run`) and then opens the window: the window offers
the models, servers and work folders those sessions used, which it never saw started."""

from __future__ import annotations

from pathlib import Path

from core.paths import DB_NAME
from core.scripted import ScriptedModel
from core.session import Session, SessionConfig
from core.store import Store
from gui.dialogs.new_session import NewSessionDialog
from gui.qt import QSettings
from gui.settings import AppSettings, Preferences
from tests.gui.test_supporting_screens import settings_dialog

LOCAL = "http://127.0.0.1:11434"


def run_from_the_terminal(data_dir: Path, runs: list[tuple[Path, str, str | None]]) -> None:
    """Sessions as `tripane run` leaves them, oldest first: (work folder, model, server)."""
    store = Store(data_dir / DB_NAME)
    for day, (workdir, model, api_base) in enumerate(runs, start=1):
        workdir.mkdir(exist_ok=True)
        session = Session.create(store, data_dir, SessionConfig(task=f"Task {day}", model=model, workdir=workdir,
                                                                api_base=api_base), ScriptedModel([]))
        store.db.execute("UPDATE sessions SET created = ? WHERE id = ?", [f"2026-11-{day:02d}T09:00:00", session.id])
    store.close()


def test_a_first_run_after_the_terminal_offers_the_model_its_latest_session_used(qtbot, make_window, tmp_path):
    run_from_the_terminal(tmp_path / "data", [(tmp_path / "site", "openai/gpt-5.4-mini", None),
                                              (tmp_path / "parser", "ollama_chat/llama3.1", LOCAL)])
    fresh = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    dialog = settings_dialog(qtbot, make_window(settings_=fresh))
    # It met an empty model field, though the person had run two sessions with these models.
    assert dialog.findChild(type(dialog.error), "intro").text().endswith(
        "The model your latest session used is filled in.")
    assert (dialog.model.currentText(), dialog.api_base.text()) == ("ollama_chat/llama3.1", LOCAL)
    offered = [dialog.model.itemText(i) for i in range(dialog.model.count())]
    assert "openai/gpt-5.4-mini" in offered


def test_new_session_offers_the_terminals_folders_and_models_after_the_windows_own(qtbot, make_window, tmp_path,
                                                                                      workdir):
    run_from_the_terminal(tmp_path / "data", [(tmp_path / "site", "openai/gpt-5.4-mini", None),
                                              (tmp_path / "parser", "ollama_chat/llama3.1", LOCAL),
                                              (workdir, "scripted", "http://127.0.0.1:9999/v1")])
    settings = AppSettings(QSettings(str(tmp_path / "used.ini"), QSettings.Format.IniFormat))
    prefs = Preferences(model="scripted", workdir=str(workdir), data_dir=str(tmp_path / "data"))
    prefs.remember_workdir(workdir)
    prefs.remember_model("scripted", None)  # the window's own: its server stays the one it knows
    settings.save(prefs)
    window = make_window(settings_=settings)
    dialog = window.new_session()
    assert isinstance(dialog, NewSessionDialog)
    folders = [dialog.recent.itemText(i) for i in range(dialog.recent.count())]
    assert folders == [str(workdir), str(tmp_path / "parser"), str(tmp_path / "site")]
    assert dialog.api_base.text() == ""  # (not the terminal session's server for the same model)
    dialog.model.setCurrentText("ollama_chat/llama3.1")
    assert dialog.api_base.text() == LOCAL  # the server the terminal used it at
    dialog.model.setCurrentText("openai/gpt-5.4-mini")
    assert dialog.api_base.text() == ""
    dialog.reject()


def test_before_the_window_started_any_session_new_session_proposes_the_terminals_latest_folder(
        qtbot, make_window, tmp_path):
    run_from_the_terminal(tmp_path / "data", [(tmp_path / "site", "openai/gpt-5.4-mini", None),
                                              (tmp_path / "parser", "ollama_chat/llama3.1", LOCAL)])
    settings = AppSettings(QSettings(str(tmp_path / "saved.ini"), QSettings.Format.IniFormat))
    settings.save(Preferences(model="ollama_chat/llama3.1", api_base=LOCAL, data_dir=str(tmp_path / "data")))
    dialog = make_window(settings_=settings).new_session()
    # It proposed the home folder, with its warning, as if the person had used none.
    assert dialog.workdir.text() == str(tmp_path / "parser")
    assert dialog.folder_note.isHidden()
    dialog.reject()
