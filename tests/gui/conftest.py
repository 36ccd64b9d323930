"""The real window, offscreen, on a qasync loop shared with the agent core.

One qasync loop for the whole run (qasync cannot be restarted per test); each test marks it as the
thread's running loop, so `Session.start()` and `asyncio.ensure_future` schedule onto Qt, and
`qtbot.waitUntil` turns the Qt event loop, which runs the core. Leftover tasks are cancelled after
every test, and every window is closed through its real shutdown path.
"""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

from core.scripted import ScriptedModel
from gui.app import make_app, open_window
from gui.qt import QAccessible, QApplication, QEvent, QSettings
from gui.settings import AppSettings, Preferences


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item):
    """After everything else of a test's teardown (pytest-qt's closing of its widgets included):
    the widgets it left are deleted now, between tests, with no Qt call under way. Left to Python's
    cycle collector, a window was deleted whenever it happened to run, inside a later test, and
    Qt crashed on it afterwards."""
    result = yield
    QApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    gc.collect()
    return result


@pytest.fixture(scope="session")
def qapp_cls():
    return QApplication


@pytest.fixture(scope="session")
def qasync_loop(qapp):
    import qasync

    make_app([])
    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.events._set_running_loop(None)
    workers = qasync.QThreadExecutor(4)
    loop.set_default_executor(workers)
    yield loop
    workers.shutdown(wait=True)  # worker threads must not outlive the QApplication


@pytest.fixture(autouse=True)
def running_loop(qasync_loop, qtbot):
    asyncio.events._set_running_loop(qasync_loop)
    asyncio.set_event_loop(qasync_loop)
    try:
        yield qasync_loop
    finally:
        leftover = [t for t in asyncio.all_tasks(qasync_loop) if not t.done()]
        for task in leftover:
            task.cancel()
        if leftover:
            qtbot.waitUntil(lambda: all(t.done() for t in leftover), timeout=5000)
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(None)


@pytest.fixture
def actual_size_after():
    """For a test that changes the text size: the app font is shared by every later test."""
    yield
    from gui.text_size import apply_text_size

    apply_text_size(QApplication.instance(), 1.0)


@pytest.fixture
def screen_reader():
    """Qt's accessibility on, as a screen reader turns it on (Orca through AT-SPI's bus, NVDA by asking
    the window): the window announces what happens only then (gui/announcer.py)."""
    QAccessible.setActive(True)
    yield
    QAccessible.setActive(False)


@pytest.fixture
def workdir(tmp_path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def settings(tmp_path, workdir) -> AppSettings:
    settings = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    settings.save(Preferences(model="scripted", workdir=str(workdir), data_dir=str(tmp_path / "data")))
    return settings


@pytest.fixture
def make_window(qtbot, settings, tmp_path):
    """Open the real main window over tmp_path/data with a scripted model; closed after the test."""
    windows = []

    def make(model: ScriptedModel | None = None, settings_: AppSettings | None = None):
        client = model or ScriptedModel([])
        window = open_window(settings_ or settings, tmp_path / "data", lambda: client)
        qtbot.addWidget(window)
        with qtbot.waitExposed(window):
            window.show()
        windows.append(window)
        return window

    yield make
    for window in windows:
        if not window._shut_down:
            window.close_now()
        # Long when a test ends just as the window began loading the model library and the memory
        # index (after a first-run Save): the close waits for those worker threads.
        qtbot.waitUntil(lambda w=window: w.shutdown_done is not None and w.shutdown_done.done(), timeout=20_000)
