"""Find as you type (Ctrl+F): Enter finds the next match, Shift+Enter the one before, both
wrapping around; Esc closes the bar. What is searched is the bar's `Finder`: a pane's text
(`TextViewFinder`), or the conversation (gui/widgets/chat_find.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from core.search_marks import search_pattern
from core.text import one_line
from gui.keys import gives_window_keys, keeps_escape
from gui.qt import (
    QEvent,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QRegularExpression,
    Qt,
    QTextBrowser,
    QTextCursor,
    QTextDocument,
    QWidget,
    Signal,
)
from gui.theme import set_style_property

View = QTextBrowser | QPlainTextEdit
MATCH_LINE_CHARS = 200  # of the line a match is in, said


class Finder(Protocol):
    def find(self, text: str, backward: bool, from_match_start: bool) -> bool | None:
        """Select the next (or previous) match of `text` and bring it into view; False: none, and
        the view stays where the person was reading; None: not known yet (the finder tells the
        bar's show_found later). `from_match_start`: the text grew as it was typed, so the match
        may begin where the last one began."""

    def view(self) -> QWidget:
        """What gets the focus back when the bar closes."""

    def match_line(self) -> str:
        """The line the selected match is in, as shown (said to a screen reader: the focus stays in
        the bar)."""


class TextViewFinder:
    """Find in a text view (a pane's rendered file, or its editor)."""

    def __init__(self, view: Callable[[], View]):
        self.view = view

    def find(self, text: str, backward: bool, from_match_start: bool) -> bool:
        view = self.view()
        if from_match_start:
            cursor = view.textCursor()
            cursor.setPosition(cursor.selectionStart())
            view.setTextCursor(cursor)
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        # In any case, whatever its marks ("قرب" finds "قرّب", "cafe" "Café"): core/search_marks.py.
        pattern = QRegularExpression(search_pattern(text).pattern)
        found = view.find(pattern, flags)
        if not found:  # around the end (or the start) and once more
            where, scrolled = view.textCursor(), view.verticalScrollBar().value()
            cursor = view.textCursor()
            cursor.movePosition(QTextCursor.MoveOperation.End if backward else QTextCursor.MoveOperation.Start)
            view.setTextCursor(cursor)
            found = view.find(pattern, flags)
            if not found:  # nowhere: the view stays where the person was reading
                view.setTextCursor(where)
                view.verticalScrollBar().setValue(scrolled)
        return found

    def match_line(self) -> str:
        return self.view().textCursor().block().text()


class FindBar(QLineEdit):
    # What a search found, in words: the match's line, or "Not found" and why. The window has a screen
    # reader say it; the bar shows "Not found" in its colour and in words, and the focus stays in it.
    told = Signal(str)

    def __init__(self, what: str, finder: Finder):
        super().__init__()
        self.setObjectName("find_bar")
        self.finder = finder
        self.setPlaceholderText(f"Find in {what} — Enter: next, Shift+Enter: previous, Esc: close")
        self.setAccessibleName(f"Find in {what}")
        self.setClearButtonEnabled(True)
        # "Not found" in words at the bar's end, not by its red alone: a red a person with a
        # red-green colour deficiency, or in a high-contrast theme, does not see.
        self.missing = QLabel("Not found", self)
        self.missing.setObjectName("find_missing")
        self.missing.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.missing.hide()
        self.setVisible(False)
        # While typing, the match grows where it is rather than jumping to the next one.
        self.textChanged.connect(lambda: self.find(from_match_start=True))

    def open(self) -> None:
        self.setVisible(True)
        self.setFocus()
        self.selectAll()

    def show_text(self, text: str) -> None:
        """Open with `text` found, leaving the focus where it is (the person goes through a list)."""
        self.setVisible(True)
        if self.text() == text:
            self.find(from_match_start=True)
        else:
            self.setText(text)

    def close_bar(self) -> None:
        self.setVisible(False)
        self.finder.view().setFocus()

    def find(self, backward: bool = False, from_match_start: bool = False) -> bool | None:
        text = self.text()
        found = self.finder.find(text, backward, from_match_start) if text else None
        self.show_found(found)
        return found

    def show_found(self, found: bool | None, why: str = "") -> None:
        """Found, not found (red, with `why` as the tooltip when there is more to say), or
        (None) nothing to find or not known yet."""
        set_style_property(self, "found", "" if found is None else ("yes" if found else "no"))
        self.setToolTip(why)
        self.missing.setVisible(found is False)
        self._place_missing()
        if found:
            self.told.emit(one_line(self.finder.match_line(), MATCH_LINE_CHARS))
        elif found is False:
            self.told.emit(f"Not found. {why}" if why else "Not found")

    def _place_missing(self) -> None:
        """At the bar's end, before its clear button; the text stops short of it."""
        shown = not self.missing.isHidden()  # (isVisible is False while the bar is hidden)
        width = self.missing.sizeHint().width() if shown else 0
        clear = self.height() if self.isClearButtonEnabled() else 0  # (the button is square)
        self.missing.setGeometry(self.width() - clear - width - 4, 0, width, self.height())
        margins = self.textMargins()
        self.setTextMargins(margins.left(), margins.top(), width + 4 if shown else 0, margins.bottom())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._place_missing()

    def event(self, event: QEvent) -> bool:
        # Esc closes the bar (keyPressEvent)
        return keeps_escape(event) or gives_window_keys(self, event) or super().event(event)

    def keyPressEvent(self, event) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.find(backward=bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier))
        elif event.key() == Qt.Key.Key_Escape:
            self.close_bar()
        else:
            super().keyPressEvent(event)
