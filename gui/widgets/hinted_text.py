"""A text box whose hint (its placeholder text) a screen reader says too.

Qt gives a one-line field's placeholder to a screen reader as its description, but not a text box's:
Orca said "Message to the agent" with nothing of Ctrl+Enter, and a question's answer box without
"Ctrl+Enter: Deny". Here the hint is the box's description as well, unless it has one of its own.
"""

from __future__ import annotations

from gui.qt import QPlainTextEdit


class HintedText(QPlainTextEdit):
    def setPlaceholderText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        if self.accessibleDescription() in ("", self.placeholderText()):
            self.setAccessibleDescription(text)
        super().setPlaceholderText(text)
