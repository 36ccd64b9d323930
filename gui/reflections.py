"""Reflections in the window: Session → Reflect on the task… (and, when Settings says so, each task
as it ends), the report shown in a dialog, a reflection's notice in the conversation opening it again."""

from __future__ import annotations

import datetime
import logging
from typing import TYPE_CHECKING

from core.session import CannotRun, Session
from gui.dialogs.reflection import ReflectionDialog, lesson_link, skill_link
from gui.qt import Qt

if TYPE_CHECKING:
    from core.memory.strategies import Promotion
    from gui.window import MainWindow

log = logging.getLogger(__name__)


def unreadable(error: BaseException, folder) -> str:
    if isinstance(error, FileNotFoundError):  # an imported session's, or a file deleted by hand
        return (f"This reflection is not in this data folder's long-term memory ({folder}): the session may "
                "come from another computer, or its file was deleted. Its notice says what it found.")
    return f"The reflections could not be read: {error}"


class Reflections:
    def __init__(self, window: MainWindow):
        self.window = window
        self.working: set[str] = set()  # sessions being reflected on (one reflection at a time each)
        self.reviewing = False  # a day's review is on its way (one at a time)
        # Tasks that ended while long-term memory was still loading: reflected on once it is there.
        self.due: dict[str, Session] = {}

    def reflect(self, session: Session | None = None, shown: bool = True) -> bool:
        """Reflect on the work of `session` (the one shown) since its last reflection, in the
        background; `shown`: open the report when it is written (the person asked for it). False
        if it did not start (said why, when the person asked)."""
        window = self.window
        session = session or window.session
        if session is None or session.id in self.working:
            return False
        if session.long_memory is None:
            if shown:
                window.tell(f"Reflections are kept in long-term memory, which is not ready: "
                            f"{window.workspace.memory_problem or 'it is still loading; try again in a moment'}.")
            return False
        self.working.add(session.id)
        title = window.workspace.title(session.id)
        window.statusBar().showMessage(f"Reflecting on “{title}” (one request to the summary model)…")
        window._update_controls()
        window.keeper.run(session.reflect(), name=f"reflection {session.id}",
                          on_success=lambda result: self._done(session, title, shown, *result),
                          on_failure=lambda error: self._failed(session, title, shown, error))
        return True

    def _done(self, session: Session, title: str, shown: bool, event, _report, promotions: list[Promotion]) -> None:
        self.working.discard(session.id)
        window = self.window
        window._update_controls()
        lessons = f"; new lesson{'s' if len(event.lessons) > 1 else ''} {', '.join(event.lessons)}" if event.lessons else ""
        window.statusBar().showMessage(f"Reflected on “{title}”{lessons}", 8000)
        window._show_memory_status()  # a new lesson is in the index now
        if shown or event.lessons:  # a new lesson is news, even from a reflection nobody asked to see
            self.show(event.path, promotions, session)

    def _failed(self, session: Session, title: str, shown: bool, error: BaseException) -> None:
        self.working.discard(session.id)
        window = self.window
        window._update_controls()
        window.statusBar().clearMessage()
        if isinstance(error, CannotRun):
            if shown:
                window.tell(str(error))
            else:  # after a task: said where the person looks, not in a box over their work
                window.statusBar().showMessage(f"No reflection on “{title}”: {error}", 15000)
            return
        log.error("reflection on session %s failed", session.id, exc_info=error)
        window.tell(f"The reflection on “{title}” failed: {error}")

    def show(self, path: str, promotions: list[Promotion] | tuple[Promotion, ...] = (),
             session: Session | None = None) -> None:
        """A kept reflection (by its path in memory/), read on a worker thread."""
        from core.memory.strategies import page

        window = self.window
        session = session or window.session
        title = window.workspace.title(session.id) if session is not None else "a session"
        self._read(lambda memory, made=(): page(memory, path, [*promotions, *made], lesson_link), title, "Reflection")

    def show_strategies(self) -> None:
        """What the agent learned: the lessons in force, the strategies on their way, the skills."""
        from core.memory.strategies import overview

        self._read(lambda memory, made=(): overview(memory, lesson_link, skill_link), "Lessons, strategies and skills",
                   "What the agent learned")

    def review_day(self, day=None, shown: bool = True) -> bool:
        """Review the work of `day` (by default the latest day not reviewed yet) across its tasks, by
        the summary model chosen in Settings (else its model), in the background; `shown`: open its
        report when it is written (the person asked; else only if it made a lesson). False if it did
        not start (said why, when the person asked)."""
        from core.memory.review import review_day
        from core.side_writers import chosen_then_own

        window = self.window
        memory = window.workspace.long_memory
        if self.reviewing:
            if shown:
                window.statusBar().showMessage("A review of the day is on its way already", 5000)
            return False
        prefs = window.prefs
        problem = ("Reviews are kept in long-term memory, which is not ready: "
                   f"{window.workspace.memory_problem or 'it is still loading; try again in a moment'}."
                   if memory is None else "" if prefs.model.strip() else
                   "Choose a model in Settings (Ctrl+,) first: the review is one request to its summary model, or to "
                   "the model itself.")
        if problem:
            if shown:
                window.tell(problem)
            return False
        writers = chosen_then_own(prefs.model.strip(), prefs.api_base.strip() or None, prefs.summary_model.strip() or None)
        self.reviewing = True
        window.statusBar().showMessage(f"Reviewing the day's work (one request to {writers[0][0]})…")
        window.keeper.run(review_day(memory, window.client_factory(), writers, day), name="day review",
                          on_success=lambda reviewed: self._reviewed(reviewed, shown),
                          on_failure=lambda error: self._review_failed(error, shown))
        return True

    def review_finished_day(self) -> None:
        """When Settings says so, at the window's start: the latest finished day not reviewed yet."""
        from core.memory.review import CannotReview, day_to_review

        memory = self.window.workspace.long_memory
        if not self.window.prefs.review_days or memory is None:
            return
        yesterday = datetime.date.today() - datetime.timedelta(days=1)  # today is not over
        self.window.keeper.in_thread(day_to_review, memory, yesterday, name="day to review",
                                     on_success=lambda day: self.review_day(day, shown=False),
                                     on_failure=lambda error: None if isinstance(error, CannotReview) else
                                     log.warning("no day's review: %s", error))

    def _reviewed(self, reviewed, shown: bool) -> None:
        from core.memory.strategies import page

        self.reviewing = False
        window = self.window
        lessons = [p.lesson.id for p in reviewed.promoted if p.lesson]
        made = f"; new lesson{'s' * (len(lessons) > 1)} {', '.join(lessons)}" if lessons else ""
        window.statusBar().showMessage(f"Reviewed the work of {reviewed.day:%Y-%m-%d}{made}", 8000)
        window._show_memory_status()
        if not (shown or lessons):  # a new lesson is news, even from a review nobody asked to see
            return
        rel = reviewed.path.relative_to(window.workspace.long_memory.files.root).as_posix()
        self._read(lambda memory, made=(): page(memory, rel, [*reviewed.promoted, *made], lesson_link),
                   f"The work of {reviewed.day:%Y-%m-%d}", "Review")  # (a heading: capitalised)

    def _review_failed(self, error: BaseException, shown: bool) -> None:
        from core.memory.review import CannotReview

        self.reviewing = False
        window = self.window
        window.statusBar().clearMessage()
        if not isinstance(error, CannotReview):
            log.error("the day's review failed", exc_info=error)
        said = str(error) if isinstance(error, CannotReview) else f"The review of the day failed: {error}"
        if shown:
            window.tell(said)
        else:  # at the start: said where the person looks, not in a box over their work
            window.statusBar().showMessage(f"No review of the day: {said}", 15000)

    def _read(self, markdown_of, title: str, what: str) -> None:
        window = self.window
        memory = window.workspace.long_memory
        if memory is None:
            window.tell("Long-term memory, where reflections are kept, is not ready yet: "
                        f"{window.workspace.memory_problem or 'it is still loading; try again in a moment'}.")
            return
        window.keeper.in_thread(markdown_of, memory, name="reflection page",
                                on_success=lambda text: self._open(title, text, what, markdown_of),
                                on_failure=lambda error: window.tell(unreadable(error, memory.files.root)))

    def _open(self, title: str, markdown: str, what: str, markdown_of) -> ReflectionDialog:
        dialog = ReflectionDialog(title, markdown, self.window, what)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.memory_folder_requested.connect(self.window.open_memory_folder)
        dialog.lesson_requested.connect(lambda path, index: self.make_lesson(dialog, path, index, markdown_of))
        dialog.skill_status_requested.connect(lambda slug, status: self.set_skill(dialog, slug, status, markdown_of))
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        return dialog

    def make_lesson(self, dialog: ReflectionDialog, path: str, index: int, markdown_of) -> None:
        """The person makes a lesson of a strategy now; the page says so."""
        from core.memory.strategies import make_lesson

        self._change(dialog, lambda memory: make_lesson(memory, path, index),
                     lambda memory, promotion: markdown_of(memory, (promotion,)),
                     lambda promotion: f"Lesson {promotion.lesson.id} is in MEMORY.md", "The lesson could not be made")

    def set_skill(self, dialog: ReflectionDialog, slug: str, status: str, markdown_of) -> None:
        """The person retires a skill, or takes one back, or tests its variant or sets it aside; the
        page says so."""
        from core.memory.variants import DROP_VARIANT, TEST_VARIANT, decide

        if status in (TEST_VARIANT, DROP_VARIANT):
            test = status == TEST_VARIANT
            said = ("is tested: the tasks the skill fits alternate between the two" if test
                    else "is set aside; the skill's file says it was tried")
            self._change(dialog, lambda memory: decide(memory.files, slug, test),
                         lambda memory, _variant: markdown_of(memory),
                         lambda variant: f"The variant of “{variant.name}” {said}", "The variant could not be changed")
            return
        said = "is retired: neither offered nor followed" if status == "deprecated" else "is in use again"
        self._change(dialog, lambda memory: memory.files.set_skill_status(slug, status),
                     lambda memory, _skill: markdown_of(memory), lambda skill: f"The skill “{skill.name}” {said}",
                     "The skill could not be changed")

    def _change(self, dialog: ReflectionDialog, change, page_of, told, failed: str) -> None:
        """`change` long-term memory on a worker thread, then show the dialog's page again as it is
        now and say what was done (`told`), or why it could not be."""
        window = self.window
        memory = window.workspace.long_memory
        if memory is None:
            return

        def changed_then_page():
            result = change(memory)
            return result, page_of(memory, result)

        def done(pair) -> None:
            result, markdown = pair
            dialog.set_markdown(markdown)
            window.statusBar().showMessage(told(result), 8000)
            window._show_memory_status()

        window.keeper.in_thread(changed_then_page, name="memory change", on_success=done, owner=dialog,
                                on_failure=lambda error: window.tell(f"{failed}: {error}"))

    def run_ended(self, session: Session) -> None:
        """A task this window ran ended: reflected on when Settings says so (reflected_on_by_itself)."""
        from core.memory.reflection import reflected_on_by_itself

        if self.window.prefs.reflect_after_tasks and session.task is not None and reflected_on_by_itself(session.records):
            if session.long_memory is None:
                self.due[session.id] = session
            else:
                self.reflect(session, shown=False)

    def memory_ready(self) -> None:
        """Long-term memory has loaded: the tasks that ended before it did are reflected on now, and
        a finished day is reviewed when Settings says so."""
        due, self.due = self.due, {}
        for session in due.values():
            if session.long_memory is not None:
                self.reflect(session, shown=False)
        self.review_finished_day()
