"""Questions the person asks a research helper, aside from the agent (Session → Ask a helper…):
one dialog per session, its question worked on in the background. Closing the dialog does not
stop the helper: its answer is in the conversation's notice when it comes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.events import ResearchStep
from core.render import aside_note
from core.session import CannotRun, Session, new_aside_id
from gui.dialogs.ask_helper import AskHelperDialog

if TYPE_CHECKING:
    from gui.window import MainWindow


class Asides:
    def __init__(self, window: MainWindow):
        self.window = window
        self.dialogs: dict[str, AskHelperDialog] = {}  # by session id
        self.asking: dict[str, str] = {}  # session id → the id of the question its helper works on

    def open(self, session: Session | None = None) -> AskHelperDialog | None:
        session = session or self.window.session
        if session is None:
            return None
        dialog = self.dialogs.get(session.id)
        if dialog is None:
            dialog = AskHelperDialog(self.window.workspace.title(session.id), self.window)
            dialog.ask_requested.connect(lambda question: self._ask(session, dialog, question))
            dialog.stop_requested.connect(lambda: self._stop(session))
            self.dialogs[session.id] = dialog
        dialog.show()
        dialog.raise_()
        dialog.activateWindow()
        dialog.question.setFocus()
        return dialog

    def show_earlier(self, call_id: str, session: Session | None = None) -> AskHelperDialog | None:
        """An answer given before, from the session's log (its notice in the conversation was clicked)."""
        session = session or self.window.session
        if session is None:
            return None
        steps = [r.event for r in session.records if isinstance(r.event, ResearchStep) and r.event.call_id == call_id]
        final = next((step for step in steps if step.final), None)
        if final is None:
            return None
        dialog = self.open(session)
        if dialog is not None and not dialog.working:
            question = next((step.question for step in steps if step.question), "")
            dialog.show_earlier(question, final.text or "*(no answer)*", aside_note(final, ""))
        return dialog

    def forget(self, session_id: str) -> None:
        """The session was deleted: its dialog goes (its helper, if working, is cancelled with it)."""
        dialog = self.dialogs.pop(session_id, None)
        if dialog is not None:
            dialog.close()
            dialog.deleteLater()

    def _ask(self, session: Session, dialog: AskHelperDialog, question: str) -> None:
        dialog.started()
        asked = self.asking[session.id] = new_aside_id()
        self.window.keeper.run(session.ask_helper(question, on_read=dialog.read, asked=asked),
                               name=f"helper {session.id}",
                               on_success=lambda result: self._answered(session, dialog, *result),
                               on_failure=lambda error: self._failed(session, dialog, error), owner=dialog)

    def _stop(self, session: Session) -> None:
        if (asked := self.asking.get(session.id)) is not None:
            session.stop_tool(asked)

    def _answered(self, session: Session, dialog: AskHelperDialog, call_id: str, report) -> None:
        self.asking.pop(session.id, None)
        final = next((r.event for r in reversed(session.records)
                      if isinstance(r.event, ResearchStep) and r.event.call_id == call_id and r.event.final), None)
        said = aside_note(final, "") if final is not None else ""
        dialog.show_answer(report.text or "*(The helper ended without an answer.)*", said)

    def _failed(self, session: Session, dialog: AskHelperDialog, error: BaseException) -> None:
        self.asking.pop(session.id, None)
        if isinstance(error, (CannotRun, ValueError)):
            dialog.show_error(str(error))
            return
        from core.llm import ModelError

        if isinstance(error, ModelError):
            dialog.show_error(f"The helper's model call failed: {error}")
            return
        dialog.show_error(f"The helper failed: {type(error).__name__}: {error}")
