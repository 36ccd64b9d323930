"""Starting and ending the app: a damaged database is a clear message; a signal closes it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import gui.app
from gui.qt import QSettings
from gui.settings import AppSettings, Preferences


def test_a_corrupt_database_is_reported_and_left_untouched(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    database = data / "tripane.db"
    database.write_bytes(b"this is not a database, it is a shopping list\n" * 100)
    before = database.read_bytes()
    shown = []
    monkeypatch.setattr(gui.app.QMessageBox, "critical", lambda parent, title, text: shown.append((title, text)))

    code = gui.app.main(["--data-dir", str(data), "--settings", str(tmp_path / "settings.ini")])

    assert code == 2
    assert shown and shown[0][0] == "Tripane cannot start"
    assert "not a Tripane database" in shown[0][1] or "SQLite" in shown[0][1]
    assert database.read_bytes() == before


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
