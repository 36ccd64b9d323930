"""Find in a pane's text (Ctrl+F while the pane has the focus): Enter finds the next match,
Shift+Enter the one before, both wrapping around; Esc closes the bar."""

from __future__ import annotations

from collections.abc import Callable

from gui.keys import keeps_escape
from gui.qt import (
    QEvent,
    QLineEdit,
    QPlainTextEdit,
    Qt,
    QTextBrowser,
    QTextCursor,
    QTextDocument,
)
from gui.theme import set_style_property

View = QTextBrowser | QPlainTextEdit


class FindBar(QLineEdit):
    def __init__(self, what: str, view: Callable[[], View]):
        super().__init__()
        self.setObjectName("find_bar")
        self._view = view
        self.setPlaceholderText(f"Find in {what} — Enter: next, Shift+Enter: previous, Esc: close")
        self.setAccessibleName(f"Find in {what}")
        self.setClearButtonEnabled(True)
        self.setVisible(False)
        # While typing, the match grows where it is rather than jumping to the next one.
        self.textChanged.connect(lambda: self.find(from_match_start=True))

    def open(self) -> None:
        self.setVisible(True)
        self.setFocus()
        self.selectAll()

    def close_bar(self) -> None:
        self.setVisible(False)
        self._view().setFocus()

    def find(self, backward: bool = False, from_match_start: bool = False) -> bool:
        view, text = self._view(), self.text()
        if not text:
            self._show_found(None)
            return False
        if from_match_start:
            cursor = view.textCursor()
            cursor.setPosition(cursor.selectionStart())
            view.setTextCursor(cursor)
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        found = view.find(text, flags)
        if not found:  # around the end (or the start) and once more
            where, scrolled = view.textCursor(), view.verticalScrollBar().value()
            cursor = view.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
            view.setTextCursor(cursor)
            found = view.find(text, flags)
            if not found:  # nowhere: the view stays where the person was reading
                view.setTextCursor(where)
                view.verticalScrollBar().setValue(scrolled)
        self._show_found(found)
        return found

    def _show_found(self, found: bool | None) -> None:
        set_style_property(self, "found", "" if found is None else ("yes" if found else "no"))

    def event(self, event: QEvent) -> bool:
        return keeps_escape(event) or super().event(event)  # Esc closes the bar (keyPressEvent)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.find(backward=bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        elif event.key() == Qt.Key.Key_Escape:
            self.close_bar()
        else:
            super().keyPressEvent(event)
