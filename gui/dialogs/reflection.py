"""A reflection on a session's work (core/memory/reflection.py), as the person reads it: the verdict,
efficiency, errors, strategies with where each stands toward becoming a lesson (and a link to make
it one now), and gaps. The same dialog says what the agent learned (View → What the agent learned):
the lessons, the strategies on their way, the skills."""

from __future__ import annotations

from gui.dialogs.summary import SessionTextDialog
from gui.markdown import to_html
from gui.qt import QDialogButtonBox, QPushButton, QUrl, QWidget, Signal

LESSON_LINK = "tripane-lesson:"  # then the reflection's path in memory/, ":", the strategy's index
SKILL_LINK = "tripane-skill:"  # then the skill's slug, ":", the status to set


def lesson_link(rel_path: str, index: int) -> str:
    """Where a strategy's "Make it a lesson now" points."""
    return f"{LESSON_LINK}{rel_path}:{index}"


def skill_link(slug: str, status: str) -> str:
    """Where a skill's "Retire it" / "Take it back" points."""
    return f"{SKILL_LINK}{slug}:{status}"


def read_lesson_link(href: str) -> tuple[str, int] | None:
    """(the reflection, the strategy's index) a lesson_link points to; None for another link."""
    path, _, index = href.removeprefix(LESSON_LINK).rpartition(":")
    return (path, int(index)) if href.startswith(LESSON_LINK) and path and index.isdigit() else None


class ReflectionDialog(SessionTextDialog):
    memory_folder_requested = Signal()
    lesson_requested = Signal(str, int)  # the person makes a lesson of this strategy (reflection, index) now
    skill_status_requested = Signal(str, str)  # the person retires a skill or takes it back (slug, status)

    def __init__(self, title: str, markdown: str, parent: QWidget | None = None, what: str = "Reflection"):
        super().__init__(what, title, to_html(markdown), f"{what}: {title}", (720, 560), parent)
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
        href = url.toString()
        if (target := read_lesson_link(href)) is not None:
            self.lesson_requested.emit(*target)
        elif href.startswith(SKILL_LINK):
            slug, _, status = href.removeprefix(SKILL_LINK).rpartition(":")
            self.skill_status_requested.emit(slug, status)
