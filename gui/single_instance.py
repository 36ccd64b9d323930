"""One window per data folder: starting Tripane again brings the running window to the front.

Two windows over one data folder would be safe (one process drives a session, the others follow
it), but a person who launches Tripane again from the menu or the dock expects the window they
already have, not a second list of the same sessions. The first instance listens on a local socket
(a named pipe on Windows) named after the user and the data folder; a later launch connects, asks
it to come forward, waits for its answer and exits. A different data folder is a different
instance, and a running instance that does not answer (hung) does not keep a new one from opening.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
import sys
from pathlib import Path

from gui.qt import (
    QAbstractSocket,
    QLocalServer,
    QLocalSocket,
    QObject,
    Signal,
    qt_alive,
)

log = logging.getLogger(__name__)

CONNECT_MS = 500
ANSWER_MS = 3000  # the running window answers from its event loop, which a long render may hold
RAISE = b"raise\n"
RAISED = b"raised\n"


def instance_name(data_dir: Path) -> str:
    """The socket's name: the same for every launch by this user over this data folder."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no user name in the environment or the password database
        user = ""
    folder = str(Path(data_dir).expanduser().resolve())
    if sys.platform == "win32":  # one folder, however its name is cased
        folder = folder.lower()
    digest = hashlib.sha256(f"{user}\0{folder}".encode()).hexdigest()[:16]
    return f"tripane-{digest}"


def hand_over(name: str) -> bool:
    """Ask the instance running under `name` to show its window; True once it says it did."""
    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_MS):
        return False
    _let_it_take_the_foreground()
    socket.write(RAISE)
    socket.waitForBytesWritten(CONNECT_MS)
    answer = b""
    while RAISED not in answer and socket.waitForReadyRead(ANSWER_MS):
        answer += bytes(socket.readAll().data())
    socket.disconnectFromServer()
    return RAISED in answer


def _let_it_take_the_foreground() -> None:
    """Windows gives the foreground only to the process the person just started (this one), so
    this one lends it to the running window; otherwise it would only flash in the taskbar."""
    if sys.platform == "win32":
        import ctypes

        ctypes.windll.user32.AllowSetForegroundWindow(-1)  # ASFW_ANY


def claim(name: str) -> InstanceServer | None:
    """This launch's listener, or None when an instance already running took over (its window is
    in front now, and this launch should end). A name still taken after a crash (the socket file
    left behind on Unix) is freed, unless an instance that started meanwhile answers on it. If the
    name cannot be had at all, the listener returned is not listening: this launch opens its own
    window, as it would without this module."""
    if hand_over(name):
        return None
    server = InstanceServer(name)
    if server.try_listen():
        return server
    if server.error == QAbstractSocket.SocketError.AddressInUseError:
        if hand_over(name):  # two launches at once: the other one listens now
            return None
        QLocalServer.removeServer(name)
        if server.try_listen():
            return server
    log.warning("a second launch of Tripane will open a second window: cannot listen as %s (%s)",
                name, server.error_text)
    return server


class InstanceServer(QObject):
    """Listens for later launches; `raise_requested` is emitted for each."""

    raise_requested = Signal()

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name
        self._server = QLocalServer(self)
        # Only this user may connect: the socket of a Unix instance lives in the shared /tmp.
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._accept)
        self._clients: dict[QLocalSocket, bytearray] = {}

    def try_listen(self) -> bool:
        return self._server.listen(self.name)

    @property
    def listening(self) -> bool:
        return self._server.isListening()

    @property
    def error(self):
        return self._server.serverError()

    @property
    def error_text(self) -> str:
        return self._server.errorString()

    def close(self) -> None:
        self._server.close()

    def _accept(self) -> None:
        while (socket := self._server.nextPendingConnection()) is not None:
            # Held here: PySide deletes a pending connection's socket with its last Python reference.
            self._clients[socket] = bytearray()
            socket.readyRead.connect(lambda socket=socket: self._read(socket))
            socket.disconnected.connect(lambda socket=socket: self._drop(socket))
            self._read(socket)

    def _read(self, socket: QLocalSocket) -> None:
        received = self._clients.get(socket)
        if received is None:
            return
        received.extend(bytes(socket.readAll().data()))
        if RAISE in received:
            received.clear()
            self.raise_requested.emit()
            socket.write(RAISED)
            socket.flush()

    def _drop(self, socket: QLocalSocket) -> None:
        self._clients.pop(socket, None)
        if qt_alive(socket):  # not when the listener is being destroyed, and its sockets with it
            socket.deleteLater()
