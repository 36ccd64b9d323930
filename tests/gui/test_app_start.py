"""Starting and ending the app: a damaged database is a clear message with ways on; a signal closes it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import gui.app
from core.logs import stop_logging
from core.store import DamagedDatabase, Store
from gui.dialogs import cannot_start
from gui.qt import QApplication, QSettings, QTimer
from gui.settings import AppSettings, Preferences
from tests.support.marks import reads_mount_table
from tests.support.mount_table import on_nfs


def damaged_data_folder(tmp_path):
    data = tmp_path / "data"
    data.mkdir(exist_ok=True)
    database = data / "tripane.db"
    database.write_bytes(b"this is not a database, it is a shopping list\n" * 100)
    return data, database.read_bytes()


def test_a_corrupt_database_is_reported_and_left_untouched_when_the_person_quits(tmp_path, monkeypatch):
    data, before = damaged_data_folder(tmp_path)
    asked = []
    monkeypatch.setattr(cannot_start, "ask", lambda error, folder: asked.append((error, folder)) or cannot_start.QUIT)

    code = gui.app.main(["--data-dir", str(data), "--settings", str(tmp_path / "settings.ini")])

    assert code == 2
    assert [(type(error), folder) for error, folder in asked] == [(DamagedDatabase, data)]
    assert (data / "tripane.db").read_bytes() == before
    assert sorted(path.name for path in data.iterdir()) == ["logs", "tripane.db"]


def test_the_start_up_problem_is_told_in_words_with_ways_on_not_flags(tmp_path):
    data, _ = damaged_data_folder(tmp_path)
    with pytest.raises(DamagedDatabase) as damaged:
        Store(data / "tripane.db")
    box = cannot_start.problem_box(damaged.value, data)
    assert "not an SQLite database" in box.text() and "--data-dir" not in box.text() + box.informativeText()
    assert {b.text(): b.property("choice") for b in box.buttons()} == {
        "Set it aside and read back what it holds": cannot_start.SET_ASIDE,
        "Choose another folder…": cannot_start.OTHER_FOLDER, "Quit": cannot_start.QUIT}
    assert box.defaultButton().text() == "Set it aside and read back what it holds" and box.escapeButton().text() == "Quit"

    unusable = FileExistsError(17, "File exists", str(tmp_path / "a file, not a folder"))
    box = cannot_start.problem_box(unusable, tmp_path / "a file, not a folder")
    assert "cannot be used: File exists" in box.text()
    assert {b.property("choice") for b in box.buttons()} == {cannot_start.TRY_AGAIN, cannot_start.OTHER_FOLDER,
                                                             cannot_start.QUIT}  # nothing to set aside


@pytest.fixture
def opened_windows(qtbot):
    opened = []
    yield opened
    for window, listener in opened:
        listener.close()
        window.close_now()
        qtbot.waitUntil(lambda w=window: w.shutdown_done is not None and w.shutdown_done.done(), timeout=5000)
    stop_logging()


@pytest.fixture
def answer_dialogs():
    """Click, in each start-up dialog that comes up, the button that starts with the next of the
    texts given, then Quit: a flow that asks once more than it should ends instead of hanging."""
    answers: list[str] = []

    def click():
        box = QApplication.activeModalWidget()
        if box is not None:
            wanted = answers.pop(0) if answers else "Quit"
            next(button for button in box.buttons() if button.text().startswith(wanted)).click()
    timer = QTimer(interval=20)
    timer.timeout.connect(click)
    timer.start()
    yield answers.append
    timer.stop()


def test_a_damaged_database_set_aside_from_the_dialog_makes_way_for_a_new_one(tmp_path, settings, opened_windows,
                                                                              answer_dialogs):
    data, before = damaged_data_folder(tmp_path)
    answer_dialogs("Set it aside")

    opened = gui.app.open_main_window(settings, data, remember_folder=True)

    window, _ = opened
    opened_windows.append(opened)
    aside = [path for path in data.iterdir() if path.name.startswith("tripane.db.damaged-")]
    assert len(aside) == 1 and aside[0].read_bytes() == before  # kept whole
    assert window.workspace.store.sessions() == [] and (data / "tripane.db").read_bytes()[:6] == b"SQLite"
    assert f"set aside as {aside[0].name}" in window.statusBar().currentMessage()


def test_the_sessions_a_damaged_database_still_holds_are_read_back_into_the_new_one(
        tmp_path, settings, opened_windows, answer_dialogs, workdir):
    from tests.core.test_salvage import damage_the_record_of_migrations, filled
    data = tmp_path / "data"
    data.mkdir()
    before = filled(data / "tripane.db", workdir)
    damage_the_record_of_migrations(data / "tripane.db")
    answer_dialogs("Set it aside")

    window, listener = opened = gui.app.open_main_window(settings, data, remember_folder=True)

    opened_windows.append(opened)
    assert {row.id for row in window.workspace.store.sessions()} == set(before)
    assert "; 3 sessions (456 events) were read back from it." in window.statusBar().currentMessage()
    window.refresh_sessions()
    assert set(window.sessions.ids()) == set(before)


@pytest.mark.parametrize("remember", [True, False])
def test_another_folder_chosen_in_the_dialog_is_opened_and_remembered(tmp_path, settings, opened_windows,
                                                                       answer_dialogs, monkeypatch, remember):
    data, before = damaged_data_folder(tmp_path)
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.setattr(cannot_start.QFileDialog, "getExistingDirectory", lambda *args: str(other))
    answer_dialogs("Choose another folder")

    opened = gui.app.open_main_window(settings, data, remember_folder=remember)

    window, _ = opened
    opened_windows.append(opened)
    assert window.workspace.data_dir == other and (other / "tripane.db").exists()
    assert (data / "tripane.db").read_bytes() == before
    assert settings.load().data_dir == (str(other) if remember else str(data))  # --data-dir is for one run


def test_try_again_opens_the_folder_once_the_problem_is_gone(tmp_path, settings, opened_windows, monkeypatch):
    data = tmp_path / "data"
    data.write_text("a file where the data folder should be", encoding="utf-8")

    def person_moves_the_file(error, folder):
        assert isinstance(error, OSError)
        data.rename(tmp_path / "moved")
        return cannot_start.TRY_AGAIN
    monkeypatch.setattr(cannot_start, "ask", person_moves_the_file)

    opened = gui.app.open_main_window(settings, data, remember_folder=True)

    window, _ = opened
    opened_windows.append(opened)
    assert window.workspace.data_dir == data and (data / "tripane.db").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no SIGTERM/SIGINT for a window process")
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT])
def test_a_terminate_signal_closes_the_window_the_normal_way(tmp_path, signal_number):
    """Logout, `kill` or Ctrl+C in the terminal: the layout is saved and the process exits cleanly."""
    settings, data = tmp_path / "settings.ini", tmp_path / "data"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    app = subprocess.Popen([sys.executable, "-m", "gui.app", "--data-dir", str(data), "--settings", str(settings)],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (data / "tripane.db").exists() and app.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)  # the window is shown and the loop runs
        assert app.poll() is None, app.communicate()
        app.send_signal(signal_number)
        out, err = app.communicate(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
    assert app.returncode == 0, err
    assert "closing the window" in err and "Traceback" not in err
    assert "geometry" in settings.read_text(encoding="utf-8")  # saved on the way out
    log = (data / "logs" / "tripane.log").read_text(encoding="utf-8")  # kept for a window with no terminal
    assert "starting over" in log and "closing the window" in log


def test_the_first_frame_comes_before_the_model_library_and_numpy(tmp_path):
    """Both load in the background after it: litellm takes seconds, NumPy a tenth of the start."""
    settings = tmp_path / "settings.ini"
    AppSettings(QSettings(str(settings), QSettings.Format.IniFormat)).save(Preferences(model="openai/gpt-4o-mini"))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path), **{gui.app.EXIT_AT_FIRST_FRAME: "1"})
    result = subprocess.run([sys.executable, "-m", "gui.app", "--data-dir", str(tmp_path / "data"),
                             "--settings", str(settings)], env=env, capture_output=True, text=True, timeout=120)
    frame = [line for line in result.stdout.splitlines() if line.startswith("FRAME")]
    assert frame == ["FRAME"], (result.stdout, result.stderr)


@reads_mount_table
def test_a_data_folder_on_a_network_file_system_is_said_at_start(tmp_path, settings, opened_windows, monkeypatch,
                                                                  qtbot, workdir):
    from tests.core.test_salvage import filled

    data = tmp_path / "data"
    data.mkdir()
    last = next(iter(filled(data / "tripane.db", workdir)))  # the session shown when Tripane last closed
    prefs = settings.load()
    prefs.last_session = last
    settings.save(prefs)
    on_nfs(tmp_path, monkeypatch)
    opened = gui.app.open_main_window(settings, data, remember_folder=True)
    opened_windows.append(opened)
    window, _listener = opened
    said = ("The data folder is on a network file system (nfs4), where its database can be damaged. Settings → "
            "Data folder moves it to this computer's disk.")
    assert window.statusBar().currentMessage() == said
    # Opening the last session clears the status bar as it shows it: the word said at the start stays.
    qtbot.waitUntil(lambda: window.session is not None and window.session.id == last, timeout=15_000)
    assert window.statusBar().currentMessage() == said
