"""A reflection on a session's work (core/memory/reflection.py), as the person reads it: the verdict,
efficiency, errors, strategies with where each stands toward becoming a lesson (and a link to make
it one now), and gaps."""

from __future__ import annotations

from gui.dialogs.summary import SessionTextDialog
from gui.markdown import to_html
from gui.qt import QDialogButtonBox, QPushButton, QUrl, QWidget, Signal

LESSON_LINK = "tripane-lesson:"  # then the strategy's index in the report


class ReflectionDialog(SessionTextDialog):
    memory_folder_requested = Signal()
    lesson_requested = Signal(int)  # the person makes a lesson of this strategy now

    def __init__(self, title: str, markdown: str, parent: QWidget | None = None):
        super().__init__("Reflection", title, to_html(markdown), "The reflection", (720, 560), parent)
        self.setObjectName("reflection")
        self.markdown = markdown
        self.text.setOpenLinks(False)  # its links are commands, not pages to go to
        self.text.anchorClicked.connect(self._link)
        folder = QPushButton("Open &memory folder")
        folder.setToolTip("MEMORY.md (the lessons), the reflections, the daily logs and the skills")
        self.buttons.addButton(folder, QDialogButtonBox.ButtonRole.ActionRole)
        folder.clicked.connect(self.memory_folder_requested)

    def set_markdown(self, markdown: str) -> None:
        """The page again (a strategy just became a lesson), where the person was reading it."""
        bar = self.text.verticalScrollBar()
        at = bar.value()
        self.markdown = markdown
        self.text.setHtml(to_html(markdown))
        bar.setValue(at)

    def _link(self, url: QUrl) -> None:
        index = url.toString().removeprefix(LESSON_LINK)
        if url.toString().startswith(LESSON_LINK) and index.isdigit():
            self.lesson_requested.emit(int(index))
