"""Keys that a widget takes back from the window's shortcuts."""

from __future__ import annotations

from gui.qt import QEvent, Qt


def keeps_escape(event: QEvent) -> bool:
    """Esc stops the run from anywhere in the window. A widget where Esc means something else (or
    where a stray Esc would stop the run being steered) calls this from event(): accepting the
    shortcut override makes the key its own."""
    if event.type() == QEvent.Type.ShortcutOverride and event.key() == Qt.Key.Key_Escape:
        event.accept()
        return True
    return False
