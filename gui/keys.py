"""Keys a text field takes back from the window's shortcuts (Esc), and those it gives them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from gui.qt import QAction, QApplication, QEvent, QLineEdit, QObject, Qt, QWidget


def keeps_escape(event: QEvent) -> bool:
    """Esc stops the run from anywhere in the window. A widget where Esc means something else (or
    where a stray Esc would stop the run being steered) calls this from event(): accepting the
    shortcut override makes the key its own."""
    if event.type() == QEvent.Type.ShortcutOverride and event.key() == Qt.Key.Key_Escape:
        event.accept()
        return True
    return False


# The modifiers of the window's shortcuts: a key typed without one is text, and is passed on at once.
SHORTCUT_MODIFIERS = (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier
                      | Qt.KeyboardModifier.MetaModifier)


def gives_window_keys(widget: QWidget, event: QEvent) -> bool:
    """The window's own shortcuts win over a text field's editing keys. Linux's key bindings make
    Ctrl+E "end of line" and Ctrl+K "delete to the end of the line" in every text field, which
    claim them first: in the message box, Find a session (Ctrl+K) deleted the rest of the line
    being written, and Edit plan (Ctrl+E) did nothing. A text field calls this from event(); the
    shortcut override, left unaccepted, lets the window's enabled command have the key."""
    if event.type() != QEvent.Type.ShortcutOverride or not event.modifiers() & SHORTCUT_MODIFIERS:
        return False
    pressed = event.keyCombination()
    for action in _commands_for(widget):
        if action.isEnabled() and any(keys.count() == 1 and keys[0] == pressed for keys in action.shortcuts()):
            event.ignore()
            return True
    return False


def _commands_for(widget: QWidget) -> Iterator[QAction]:
    """The commands of `widget`'s window, and those of Tripane's that work from any of its windows
    (gui/menus.py EVERYWHERE: New session, Find a session…)."""
    yield from widget.window().actions()
    for window in QApplication.topLevelWidgets():
        if window is not widget.window():
            yield from (action for action in window.actions()
                        if action.shortcutContext() == Qt.ShortcutContext.ApplicationShortcut)


class _GivesWindowKeys(QObject):
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        return isinstance(watched, QWidget) and gives_window_keys(watched, event)


def give_window_keys(field: QWidget) -> None:
    """gives_window_keys for a text field of a dialog's (which has no class of its own to call it
    from): in a question window's answer, Ctrl+K deleted the rest of the line instead of finding a
    session, with Linux's key bindings."""
    field.installEventFilter(_GivesWindowKeys(field))


def search_field(placeholder: str, accessible_name: str) -> QLineEdit:
    """A window's one-line box to search or filter with: a clear button, and Ctrl+K finding a session
    from it as from anywhere (see give_window_keys)."""
    field = QLineEdit()
    field.setPlaceholderText(placeholder)
    field.setAccessibleName(accessible_name)
    field.setClearButtonEnabled(True)
    give_window_keys(field)
    return field


class _OnEnter(QObject):
    def __init__(self, widget: QWidget, then: Callable[[], object]):
        super().__init__(widget)
        self._then = then

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.KeyPress and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._then()
            return True
        return False


def on_enter(widget: QWidget, then: Callable[[], object]) -> None:
    """Enter in `widget` (a dialog's list or field) does `then`, and only that: a list passes the
    key on to its dialog, whose default button it pressed too (a Save dialog opened over the file
    Enter opened; a version was put in the plan's editor)."""
    widget.installEventFilter(_OnEnter(widget, then))
