"""The text caret stops blinking when the person has not typed or clicked for a while, as GNOME's
does after 10 s and Windows' after 5 s; it stays shown, and blinks again at the next key or click.

Qt blinks it for as long as a field has the focus: twice a second the window woke to paint it, and
everything under it, all day. Under Xvfb an idle window with a text box focused woke its process
about eleven times a second, one without the blinking about once (benchmarks/battery.py), which on a
laptop on battery is what keeps the processor from its deeper sleep.
"""

from __future__ import annotations

from gui.qt import (
    QAbstractScrollArea,
    QApplication,
    QEvent,
    QObject,
    QTimer,
    QWidget,
    qt_alive,
)

BLINK_FOR_MS = 10_000  # GNOME's gtk-cursor-blink-timeout
WAKING = (QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.InputMethod)


class CaretRest(QObject):
    """Watches only the field with the focus (a filter on every event of the application, in
    Python, slows all of them), and follows the focus from field to field and window to window."""

    def __init__(self, app: QApplication, parent: QObject | None = None, rest_after_ms: int = BLINK_FOR_MS):
        super().__init__(parent)
        self._app = app
        self._blink_ms = app.cursorFlashTime()  # the desktop's (0: it asks for no blinking at all)
        self._resting = False
        self._watched: list[QWidget] = []
        self._timer = QTimer(self, singleShot=True, interval=rest_after_ms)
        self._timer.timeout.connect(self._rest)
        app.focusChanged.connect(self._focus_moved)
        self._focus_moved(None, app.focusWidget())

    @property
    def resting(self) -> bool:
        return self._resting

    def stop(self) -> None:
        """The caret as the desktop has it, for good (the window closes)."""
        self._app.focusChanged.disconnect(self._focus_moved)
        self._timer.stop()
        self._watch(None)
        self._blink_again()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() in WAKING:
            self._wake()
        return False

    def _focus_moved(self, _old: QWidget | None, now: QWidget | None) -> None:
        self._watch(now)
        self._wake()

    def _watch(self, field: QWidget | None) -> None:
        for widget in self._watched:
            if qt_alive(widget):  # (a dialog's field may be gone with its dialog)
                widget.removeEventFilter(self)
        # A text box's clicks go to its viewport, its keys to itself.
        self._watched = [] if field is None else [field] + (
            [field.viewport()] if isinstance(field, QAbstractScrollArea) else [])
        for widget in self._watched:
            widget.installEventFilter(self)

    def _wake(self) -> None:
        if self._blink_ms <= 0:  # the desktop's caret does not blink: nothing to rest
            return
        self._blink_again()
        self._timer.start()

    def _blink_again(self) -> None:
        if self._resting:
            self._resting = False
            self._app.setCursorFlashTime(self._blink_ms)

    def _rest(self) -> None:
        self._resting = True
        self._app.setCursorFlashTime(0)  # Qt then shows the caret without blinking
