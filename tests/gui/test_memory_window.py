"""Long-term memory in the window: its status in the status bar, the search window, the fallback."""

from __future__ import annotations

from core import store as store_module
from core.memory.embedding import LocalEmbedder
from core.memory.longterm import LongTermMemory
from core.scripted import ScriptedModel, call, reply
from core.session import SessionConfig
from gui.qt import QApplication, Qt

WAIT = 20_000


def seed_memory(data_dir) -> None:
    memory = LongTermMemory(data_dir, LocalEmbedder())
    memory.remember("The staging database listens on port 6543", kind="fact", source="s-earlier")
    memory.remember("Ask which environment before touching a database", kind="lesson", source="s-earlier")
    memory.close()


def test_memory_loads_after_the_first_frame_and_searches_from_the_window(qtbot, make_window, tmp_path, monkeypatch,
                                                                        screen_reader):
    from gui import desktop_open

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    seed_memory(tmp_path / "data")
    window = make_window()
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    qtbot.waitUntil(lambda: "lesson" in window.status.memory.text(), timeout=WAIT)
    assert window.status.memory.text() == "Memory: 1 lesson, 0 skills"
    assert "1 lesson, 0 skills in use; 2 chunks indexed" in window.status.memory.toolTip()
    assert window.status.memory.property("level") == ""
    assert "sqlite-vec" in window.status.memory.toolTip()

    window.actions_by_name["memory_search"].trigger()
    dialog = window.memory_search
    assert dialog.isVisible() and "sqlite-vec" in dialog.note.text()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT)
    said: list[str] = []
    dialog.announcer.said.connect(said.append)
    dialog.query.setText("which port does staging use")
    qtbot.keyClick(dialog.query, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "6543" in dialog.results.toPlainText(), timeout=WAIT)
    # said, the keys staying in the query box: how many, and the first
    assert said[-1].startswith("1 result for which port does staging use, in MEMORY.md: ") and "6543" in said[-1]
    assert "MEMORY.md" in dialog.results.toPlainText()
    assert opened == []  # Enter searched, and did nothing else (it opened the memory folder too)
    dialog.query.setText("zebra migration patterns in Antarctica")
    dialog.query.returnPressed.emit()
    qtbot.waitUntil(lambda: "Nothing in memory matches" in dialog.results.toPlainText(), timeout=WAIT)
    assert said[-1] == "Nothing in memory matches zebra migration patterns in Antarctica."


def test_the_exact_fallback_is_shown_in_the_status_bar_and_the_search_window(qtbot, make_window, tmp_path,
                                                                            monkeypatch):
    import sqlite3

    monkeypatch.setattr(store_module, "_sqlite_module", lambda: sqlite3)  # a Python that cannot load sqlite-vec
    window = make_window()
    qtbot.waitUntil(lambda: "lesson" in window.status.memory.text(), timeout=WAIT)
    assert "exact vector scan" in window.status.memory.text()
    assert window.status.memory.property("level") == "warn"
    assert "cannot load extensions" in window.status.memory.toolTip()
    window.open_memory_search()
    assert "cannot load extensions" in window.memory_search.note.text()


def test_a_session_started_from_the_window_writes_its_episode_to_the_daily_log(qtbot, make_window, workdir,
                                                                               tmp_path):
    model = ScriptedModel([reply("", call("task_done", summary="release notes written"))])
    window = make_window(model)
    qtbot.waitUntil(lambda: window.workspace.long_memory is not None, timeout=WAIT)
    session = window.workspace.create(SessionConfig(task="Write the release notes", model="scripted",
                                                    workdir=workdir))
    window.show_session(session.id)
    session.start()
    qtbot.waitUntil(lambda: session.state.ended, timeout=WAIT)
    daily = list((tmp_path / "data" / "memory" / "daily").glob("*.md"))
    assert len(daily) == 1 and "release notes written" in daily[0].read_text(encoding="utf-8")


def test_the_embedding_model_is_chosen_in_settings_for_the_data_folder(qtbot, make_window, tmp_path):
    from core.memory.config import read_config
    from gui.qt import QMessageBox

    window = make_window()
    dialog = window.open_settings()
    assert dialog.embedding_model.text() == ""  # the offline model
    dialog.embedding_model.setText("openai/text-embedding-3-small")
    dialog._accept()
    qtbot.waitUntil(lambda: read_config(tmp_path / "data").get("embedding_model") == "openai/text-embedding-3-small",
                    timeout=WAIT)
    qtbot.waitUntil(lambda: any("next start" in box.text() for box in window.findChildren(QMessageBox)),
                    timeout=WAIT)


def test_the_memory_folder_opens_from_the_search_window(qtbot, make_window, tmp_path, monkeypatch):
    from gui import desktop_open

    opened = []
    monkeypatch.setattr(desktop_open.QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    window = make_window()
    window.open_memory_search().open_folder.click()
    assert opened == [str(tmp_path / "data" / "memory")]


def test_memory_loads_on_a_first_run_before_a_model_is_chosen(qtbot, make_window, tmp_path):
    from PySide6.QtCore import QSettings

    from gui.settings import AppSettings

    fresh = AppSettings(QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))
    window = make_window(settings_=fresh)
    qtbot.waitUntil(lambda: "lesson" in window.status.memory.text(), timeout=WAIT)
    assert window.warm_up is None  # no model yet: the model library is not loaded


def test_ctrl_shift_m_brings_the_open_search_window_back_with_the_keyboard(qtbot, make_window):
    """Left open behind the main window, the search window comes forward and takes the typing:
    raised alone, the words went into the main window's box."""
    window = make_window()
    window.show()
    dialog = window.open_memory_search()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT)
    window.activateWindow()  # the person goes back to the main window
    qtbot.waitUntil(window.isActiveWindow, timeout=WAIT)
    qtbot.keyClick(window, Qt.Key.Key_M, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT)
    assert QApplication.focusWidget() is dialog.query
