"""A reflection on a session's work (core/memory/reflection.py), as the person reads it: the verdict,
efficiency, errors, strategies with where each stands toward becoming a lesson, and gaps."""

from __future__ import annotations

from gui.dialogs.summary import SessionTextDialog
from gui.markdown import to_html
from gui.qt import QDialogButtonBox, QPushButton, QWidget, Signal


class ReflectionDialog(SessionTextDialog):
    memory_folder_requested = Signal()

    def __init__(self, title: str, markdown: str, parent: QWidget | None = None):
        super().__init__("Reflection", title, to_html(markdown), "The reflection", (720, 560), parent)
        self.setObjectName("reflection")
        self.markdown = markdown
        folder = QPushButton("Open &memory folder")
        folder.setToolTip("MEMORY.md (the lessons), the reflections, the daily logs and the skills")
        self.buttons.addButton(folder, QDialogButtonBox.ButtonRole.ActionRole)
        folder.clicked.connect(self.memory_folder_requested)
