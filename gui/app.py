"""Starting the window: Qt application, theme, the qasync loop shared by Qt and the agent core.

Nothing here imports litellm: the first frame is shown before any model code loads (the tokenizer
and the provider library are imported in a worker thread when a session first needs them).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import platform
import signal
import socket
import sys
from collections.abc import Callable
from pathlib import Path

from core.build import version_text
from core.file_systems import network_place
from core.llm import ModelClient
from core.logs import start_logging, stop_logging
from core.network import prepare_for_requests
from core.store import StoreError
from gui.binding_check import FIX, binding_problem
from gui.dialogs.cannot_start import how_to_go_on
from gui.qt import (
    QApplication,
    QEvent,
    QMessageBox,
    QObject,
    QSettings,
    QSocketNotifier,
    QTimer,
    qVersion,
)
from gui.settings import AppSettings
from gui.single_instance import claim, instance_name
from gui.text_size import apply_text_size
from gui.theme import apply_theme
from gui.unexpected import catch_unexpected
from gui.workspace import Workspace, default_model_client

log = logging.getLogger("gui.app")  # not __name__: that is __main__ under `python -m gui.app`
# Set by benchmarks/gui_startup.py: print "FRAME" and exit at the window's first paint, so the real
# entry point (installed script or bundle) is what gets timed. The line names which of the heavy
# libraries, loaded in the background after the first frame, were loaded before it (none should be).
EXIT_AT_FIRST_FRAME = "TRIPANE_EXIT_AT_FIRST_FRAME"
LOADED_AFTER_FIRST_FRAME = ("litellm", "numpy")


class _FirstFrameExit(QObject):
    def eventFilter(self, watched, event) -> bool:  # noqa: N802 - Qt's name
        if event.type() == QEvent.Type.Paint:
            print("FRAME", *(name for name in LOADED_AFTER_FIRST_FRAME if name in sys.modules), flush=True)
            os._exit(0)
        return False


def close_on_signals(window) -> None:
    """Ctrl+C in a terminal, `kill` and the desktop's logout (SIGTERM) close the window the normal
    way: layout saved, sessions left at a clean point. Python runs signal handlers only between its
    own bytecodes, never while Qt's C++ loop waits, so the signal is written to a socket Qt watches.
    Not on Windows, which has no such signals for a window."""
    if sys.platform == "win32":
        return
    receive, send = socket.socketpair()
    for end in (receive, send):
        end.setblocking(False)
    signal.set_wakeup_fd(send.fileno())
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: None)  # the real work happens below, on Qt's loop
    notifier = QSocketNotifier(receive.fileno(), QSocketNotifier.Type.Read, window)

    received = []

    def on_signal() -> None:
        try:
            receive.recv(64)
        except BlockingIOError:
            return
        received.append(True)
        if len(received) > 1:  # asked twice: the person does not want to wait for a clean close
            os._exit(130)
        log.warning("signal received: closing the window")
        window.close_now()
    notifier.activated.connect(on_signal)
    window._signal_sockets = (receive, send, notifier)  # alive as long as the window


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tripane-gui", description="The Tripane window.")
    parser.add_argument("--data-dir", type=Path, help="where sessions are stored (default: the settings' folder)")
    parser.add_argument("--settings", type=Path, help="an INI file to use instead of the user's settings")
    parser.add_argument("--selftest", action="store_true",
                        help="open the window offscreen, run a scripted task through the real core, exit 0 if it works")
    return parser


def make_app(argv: list[str]) -> QApplication:
    app = QApplication.instance() or QApplication(argv)
    app.setApplicationName("Tripane")
    app.setOrganizationName("Tripane")
    app.setApplicationDisplayName("Tripane")
    app.setQuitOnLastWindowClosed(False)  # the window quits after its sessions are closed cleanly
    # Worker threads (Markdown rendering, the tokenizer, litellm's import) share the GIL with this
    # thread; a shorter switch interval bounds how long the window waits for it after each Qt call.
    sys.setswitchinterval(0.002)
    return app


def open_window(settings: AppSettings, data_dir: Path | None = None,
                client_factory: Callable[[], ModelClient] = default_model_client):
    """The main window over the data folder; first run opens the settings dialog."""
    from gui.window import MainWindow

    prefs = settings.load()
    apply_theme(QApplication.instance(), prefs.theme)
    apply_text_size(QApplication.instance(), prefs.text_scale)
    workspace = Workspace(data_dir or prefs.data_path(), client_factory)
    window = MainWindow(workspace, settings, client_factory, prefs)
    if not prefs.configured:
        QTimer.singleShot(0, lambda: window.open_settings(first_run=True))
    # After the first frame is on screen. Long-term memory loads on a first run too (it needs no
    # model); the model library waits until one is chosen (start_warm_up checks).
    QTimer.singleShot(300, window.start_warm_up)
    QTimer.singleShot(50, window.after_first_frame)
    return window


def open_main_window(settings: AppSettings, data_dir: Path, remember_folder: bool):
    """The window over the data folder and this launch's listener for later launches; or the exit
    code when there is no window to show: 0, an instance already open took over; 2, the folder
    cannot be opened and the person chose to quit."""
    note = ""
    while True:
        listener = claim(instance_name(data_dir))
        if listener is None:
            print(f"Tripane is already open on {data_dir}: its window was brought to the front.", flush=True)
            return 0
        start_logging(data_dir)
        log.info("Tripane %s starting over %s (Python %s, Qt %s, %s)", version_text(), data_dir,
                 platform.python_version(), qVersion(), platform.platform())
        try:
            window = open_window(settings, data_dir)
        except (StoreError, OSError) as exc:  # a damaged or foreign database, an unwritable folder
            log.error("cannot start: %s", exc)
            listener.close()
            chosen = how_to_go_on(exc, data_dir, settings, remember_folder)
            if chosen is None:
                return 2
            data_dir, note = chosen
            continue
        if not note and (place := network_place(data_dir)):  # (said at each start, until it is moved;
            # `tripane doctor` says why at length)
            log.warning("the data folder %s is on %s, where its database can be damaged", data_dir, place)
            note = (f"The data folder is on {place}, where its database can be damaged. Settings → Data folder "
                    "moves it to this computer's disk.")
        if note:
            window.say_at_start(note)
        return window, listener


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    prepare_for_requests()  # the computer's certificates trusted, no proxy for its own servers
    start_logging(None)
    try:
        return _run(args)
    finally:
        stop_logging()


def _run(args: argparse.Namespace) -> int:
    if args.selftest:
        from gui.selftest import run_selftest

        return run_selftest()
    app = make_app(sys.argv[:1])
    problem = binding_problem()
    if problem:
        log.error("cannot start: %s", problem)
        print(f"{problem}\nTo fix it, {FIX}", file=sys.stderr, flush=True)
        QMessageBox.critical(None, "Tripane cannot start", f"{problem}.\n\nTo fix it, {FIX}.")
        return 2
    qsettings = QSettings(str(args.settings), QSettings.Format.IniFormat) if args.settings else None
    settings = AppSettings(qsettings)
    opened = open_main_window(settings, args.data_dir or settings.load().data_path(),
                              remember_folder=args.data_dir is None)
    if isinstance(opened, int):
        return opened
    window, listener = opened
    import qasync  # after PySide6, so qasync picks the binding already loaded

    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    if os.environ.get(EXIT_AT_FIRST_FRAME):
        window.installEventFilter(_FirstFrameExit(window))
    close_on_signals(window)
    catch_unexpected(window, loop)
    app.commitDataRequest.connect(window.desktop_session_ending)
    listener.setParent(window)
    listener.raise_requested.connect(window.bring_to_front)
    window.show()
    with loop:
        finished = loop.create_future()
        window.closed.connect(lambda: finished.done() or finished.set_result(None))
        try:
            loop.run_until_complete(finished)
        except RuntimeError:  # Qt quit on its own: the display server went away, the desktop session ended
            if finished.done():
                raise
            log.warning("Tripane's window closed without shutting down (the display went away?); "
                        "sessions reopen where they stopped")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
