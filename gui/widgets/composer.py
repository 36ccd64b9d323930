"""Where the person types a message to the agent."""

from __future__ import annotations

from gui.keys import keeps_escape
from gui.qt import QEvent, QPlainTextEdit


class Composer(QPlainTextEdit):
    """Esc stops the run from anywhere in the window, but not from a message half written: a person
    reaching for Esc mid-sentence (out of another program's habit, to close a completion) would
    abort the run they are writing to. With the box empty, Esc stops the run as anywhere else."""

    def event(self, event: QEvent) -> bool:
        return (bool(self.toPlainText()) and keeps_escape(event)) or super().event(event)
