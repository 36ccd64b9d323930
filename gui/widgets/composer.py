"""Where the person types a message to the agent."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.dropped_files import NotCarried, as_carried, dropped_text
from gui.keys import gives_window_keys, keeps_escape
from gui.qt import (
    QEvent,
    QKeyEvent,
    Qt,
    QTextCursor,
    Signal,
)
from gui.widgets.pictures import PictureBox


class Composer(PictureBox):
    """Esc stops the run from anywhere in the window, but not from a message half written: a person
    reaching for Esc mid-sentence (out of another program's habit, to close a completion) would
    abort the run they are writing to. With the box empty, Esc stops the run as anywhere else.

    Up in the empty box brings back the messages sent to the session, newest first, as a shell
    does its commands (to send one again, or mend it); Down goes the other way, to the empty box.

    Files dropped (or pasted from a file manager) are written as their paths, relative to the work
    folder where they are in it: as the agent's tools take them. Pictures (a screenshot copied, an
    image file dropped) are given to go with the message (pictures_given), not written. A file from
    outside the work folder is written with its text (what could not be is said: told)."""

    told = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.sent: Callable[[], list[str]] = list  # the shown session's messages, oldest first
        self.workdir: Callable[[], Path | None] = lambda: None  # the shown session's
        self._recalled: tuple[int, str] | None = None  # how far back the box shows, and what

    def event(self, event: QEvent) -> bool:
        return ((bool(self.toPlainText()) and keeps_escape(event)) or gives_window_keys(self, event)
                or super().event(event))

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt's name)
        plain = event.modifiers() in (Qt.KeyboardModifier.NoModifier, Qt.KeyboardModifier.KeypadModifier)
        cursor = self.textCursor()
        if plain and event.key() == Qt.Key.Key_Up and cursor.blockNumber() == 0 and self._recall(1):
            return
        if (plain and event.key() == Qt.Key.Key_Down and cursor.blockNumber() == self.blockCount() - 1
                and self._recall(-1)):
            return
        super().keyPressEvent(event)

    def _recall(self, step: int) -> bool:
        """Show the message `step` further back (1) or forward (-1); False when the box holds the
        person's own text, or there is nothing there, so the key moves the cursor as usual."""
        text = self.toPlainText()
        back = 0
        if self._recalled is not None and self._recalled[1] == text:
            back = self._recalled[0]
        elif text:
            return False
        messages = self.sent()
        back += step
        if back > len(messages) or back < 0 or (back == 0 and not text):
            return False
        shown = messages[-back] if back else ""
        self.setPlainText(shown)
        self.moveCursor(QTextCursor.MoveOperation.End)
        self._recalled = (back, shown) if back else None
        return True

    def write_paths(self, paths: list[Path]) -> None:
        """A file of the work folder by its path, which the agent reads; one from outside it (a log
        in Downloads) with its text, since the agent reads nothing outside (see dropped_files)."""
        workdir, written, not_carried = self.workdir(), [], []
        for path in paths:
            inside = within_folder(path, workdir)
            if inside is not None or workdir is None or path.is_dir():
                written.append(f"`{inside or path}`")
                continue
            try:
                written.append(as_carried(path, dropped_text(path)))
            except NotCarried as why:
                written.append(f"`{path}`")
                not_carried.append(str(why))
        self.insertPlainText(" ".join(written))
        if not_carried:
            self.told.emit("Only its path is in the message: " + "; ".join(not_carried) + ".")


def within_folder(path: Path, workdir: Path | None) -> str | None:
    """The path as a message names a file of the work folder: relative to it (None: not in it)."""
    if workdir is not None:
        try:
            return path.resolve().relative_to(workdir.resolve()).as_posix()
        except ValueError:
            pass
    return None
