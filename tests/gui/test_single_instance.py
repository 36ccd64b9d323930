"""A second launch over the same data folder brings the running window forward instead of opening
another; a crashed instance does not stop the next one from opening."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from gui.qt import QLocalServer
from gui.single_instance import claim, hand_over, instance_name


def unique_name() -> str:
    return f"tripane-test-{uuid.uuid4().hex[:12]}"


def launched_elsewhere(call: str, name: str) -> subprocess.Popen:
    """`claim` or `hand_over` in another process, as a second launch makes it. (Not a thread of
    this one: PySide holds the GIL while a socket waits, so the listener here could not answer.)"""
    code = (f"import sys; from gui.qt import QApplication; from gui.single_instance import {call}; "
            f"app = QApplication([]); print({call}({name!r}) in (None, True))")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)


def finished(qtbot, process: subprocess.Popen) -> str:
    """What the process printed, the Qt loop here turning (and answering it) meanwhile."""
    qtbot.waitUntil(lambda: process.poll() is not None, timeout=30_000)
    return process.communicate()[0].strip()


def test_the_name_is_one_per_data_folder(tmp_path):
    one, other = tmp_path / "one", tmp_path / "other"
    assert instance_name(one) == instance_name(tmp_path / "x" / ".." / "one")
    assert instance_name(one) != instance_name(other)


def test_a_second_launch_hands_over_to_the_listening_instance(qtbot):
    name = unique_name()
    server = claim(name)
    assert server is not None and server.listening
    try:
        with qtbot.waitSignal(server.raise_requested, timeout=30_000):
            second = launched_elsewhere("claim", name)
            # True: the launch got None and ends, the running window having taken over
            assert finished(qtbot, second) == "True"
    finally:
        server.close()


def test_nothing_listening_means_no_hand_over(qtbot):
    assert hand_over(unique_name()) is False


@pytest.mark.skipif(sys.platform == "win32", reason="a named pipe leaves nothing behind when its process dies")
def test_a_socket_file_left_by_a_crash_is_taken_over(qtbot):
    name = unique_name()
    server = QLocalServer()
    assert server.listen(name)
    path = server.fullServerName()
    server.close()
    # What a killed instance leaves: the socket file, with nobody listening behind it.
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(path)
    leftover.close()
    assert Path(path).exists()

    mine = claim(name)

    try:
        assert mine is not None and mine.listening
        with qtbot.waitSignal(mine.raise_requested, timeout=30_000):
            assert finished(qtbot, launched_elsewhere("hand_over", name)) == "True"
    finally:
        if mine is not None:
            mine.close()


def launch(tmp_path: Path) -> subprocess.Popen:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path))
    return subprocess.Popen([sys.executable, "-m", "gui.app", "--data-dir", str(tmp_path / "data"),
                             "--settings", str(tmp_path / "settings.ini")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_until_listening(app: subprocess.Popen, name: str, qtbot) -> None:
    """A real window listens once it is up; probing it (which raises it) says when."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert app.poll() is None, app.communicate()
        if hand_over(name):  # the window is in another process: this thread may wait for it
            return
        time.sleep(0.2)
    raise AssertionError("the window never listened")


@pytest.mark.slow
def test_launching_again_raises_the_window_and_a_killed_one_is_replaced(tmp_path, qtbot):
    name = instance_name(tmp_path / "data")
    first = launch(tmp_path)
    replacement = None
    try:
        wait_until_listening(first, name, qtbot)

        second = launch(tmp_path)
        out, err = second.communicate(timeout=60)
        assert second.returncode == 0, err
        assert "already open" in out and "brought to the front" in out
        assert first.poll() is None  # the first window stays as it was

        first.kill()  # a crash: nothing is cleaned up
        first.wait(timeout=30)
        replacement = launch(tmp_path)
        wait_until_listening(replacement, name, qtbot)  # it opened its own window and listens
    finally:
        for app in (first, replacement):
            if app is not None and app.poll() is None:
                app.kill()
                app.communicate(timeout=30)


def test_the_window_comes_back_from_the_taskbar_with_its_dialog_still_in_charge(qtbot, make_window):
    window = make_window()
    settings = window.open_settings()  # modal to the window, as on a first run
    qtbot.waitUntil(lambda: settings.windowHandle() is not None and settings.windowHandle().isExposed())
    window.showMinimized()
    qtbot.waitUntil(window.isMinimized)

    window.bring_to_front()

    qtbot.waitUntil(lambda: not window.isMinimized() and window.isVisible())
    assert settings.isVisible()  # raised with it, not left behind
    settings.reject()


def test_quit_takes_the_window_off_the_screen_at_once_and_a_launch_meanwhile_opens_its_own(qtbot, make_window,
                                                                                          monkeypatch):
    window = make_window()
    name = unique_name()
    listener = claim(name)
    listener.setParent(window)  # as the app does
    # Closing the store waits for work no one can interrupt (the memory index loading a few seconds
    # after a start): held here until released.
    release = asyncio.Event()
    close_store = window.workspace.close

    async def held_close() -> None:
        await release.wait()
        await close_store()

    monkeypatch.setattr(window.workspace, "close", held_close)
    window.close_now()

    assert not window.isVisible()  # not left on the screen looking hung
    qtbot.wait(200)
    assert not window.shutdown_done.done()
    assert not listener.listening
    # A launch now opens its own window rather than "raising" the one going away.
    assert finished(qtbot, launched_elsewhere("claim", name)) == "False"
    release.set()
    qtbot.waitUntil(window.shutdown_done.done, timeout=10_000)
