"""Going back to before a message or step of the shown session (right-click it in the
conversation): what the work folder's files were then is read on a worker thread (git), the
person confirms, and the new session (core/branch.py) opens with the message box waiting."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from core.branch import CannotGoBack, GoingBack, go_back, going_back
from core.events import AssistantMessage, Event, Record, UserMessage
from core.session import Session
from core.store import StoreError, with_own_store
from core.text import one_line
from gui.bidi import isolated
from gui.dialogs.forms import open_once
from gui.dialogs.go_back import GoBackDialog
from gui.qt import QInputDialog, QSize
from gui.widgets.chat_items import stamp

if TYPE_CHECKING:
    from gui.window import MainWindow

STOP_THERE_FIRST = ("Another Tripane runs this session (a terminal or another window): stop its run there first, "
                    "then go back.")
LINE_CHARS = 90  # of a step's reply or a message, in the chooser's list
CHOOSER_SIZE = QSize(720, 420)  # (made narrow, it cut every line: the steps' words tell them apart)
QUOTED_CHARS = 60  # of the message or reply gone back before, in the dialog's question
COMPOSER_HINT_GONE_BACK = "Tell the agent what to do from here: it goes on once you send it (Ctrl+Enter)"


def point_words(event: Event | None) -> str:
    """The point gone back before, as the dialog asks about it: "the agent's step 4 (“The test
    passes…”)", "your message “Keep the fix…”" (times alone repeat within a minute); their words
    isolated, as Tripane's lines set a person's or agent's words (gui/bidi.py)."""
    if isinstance(event, UserMessage):
        return f"your message “{isolated(one_line(event.text, QUOTED_CHARS))}”"
    if isinstance(event, AssistantMessage):
        said = f" (“{isolated(one_line(event.text, QUOTED_CHARS))}”)" if event.text.strip() else ""
        return f"the agent's step {event.turn}{said}"
    return "that point"


def point_line(record: Record) -> str:
    """A point in the chooser's list: "Step 4 · 03:36 · The test passes. While I'm here…"."""
    event = record.event
    if isinstance(event, UserMessage):
        return f"Your message · {stamp(record.ts)} · {isolated(one_line(event.text, LINE_CHARS))}"
    said = event.text.strip() or ", ".join(call.name for call in event.tool_calls)
    return f"Step {event.turn} · {stamp(record.ts)} · {isolated(one_line(said, LINE_CHARS))}"


class GoingBackFlow:
    def __init__(self, window: MainWindow):
        self.window = window
        self.dialog: GoBackDialog | None = None
        self._message_box_for = ""  # the session just made: shown with the message box focused

    def choose(self) -> QInputDialog | None:
        """Session → Go back to an earlier step…: the shown session's steps and messages, newest
        first, to choose the one to go back to before (the conversation's right-click, by keyboard)."""
        session = self.window.session
        if session is None:
            return None
        points = {point_line(record): record.seq for record in reversed(session.records)
                  if isinstance(record.event, AssistantMessage | UserMessage)}
        if not points:
            self.window.statusBar().showMessage("The agent has taken no step yet: there is nothing to go back to.",
                                                10_000)
            return None
        dialog = QInputDialog(self.window)
        dialog.setObjectName("go_back_choice")
        dialog.setWindowTitle("Go back to an earlier step")
        dialog.setLabelText("Go back to before:")
        dialog.setOption(QInputDialog.InputDialogOption.UseListViewForComboBoxItems)
        dialog.setComboBoxItems(list(points))
        dialog.setTextValue(next(iter(points)))  # the latest chosen: Up goes further back, Enter asks
        dialog.setOkButtonText("Go back to before it…")
        dialog.resize(CHOOSER_SIZE)
        dialog.textValueSelected.connect(lambda line: line in points and self.ask(points[line]))
        open_once(dialog)
        return dialog

    def ask(self, seq: int) -> None:
        """Going back to before the shown session's event `seq`, once asked what it puts back."""
        window, session = self.window, self.window.session
        if session is None:
            return
        if not session.running and session.run_elsewhere():
            window.statusBar().showMessage(STOP_THERE_FIRST, 15_000)
            return
        words = point_words(next((r.event for r in session.records if r.seq == seq), None))
        window.statusBar().showMessage("Reading what the work folder's files were then…")
        window.keeper.in_thread(with_own_store, window.workspace.store.path, going_back, window.workspace.data_dir,
                                session.id, seq, on_success=lambda plan: self._confirm(session, plan, words),
                                on_failure=self._refused)

    def _confirm(self, session: Session, plan: GoingBack, words: str) -> GoBackDialog | None:
        window = self.window
        window.statusBar().clearMessage()
        if window.session is not session:  # another one was chosen meanwhile
            return None
        self.dialog = dialog = GoBackDialog(plan, words, window, ends_it=not session.state.ended)
        dialog.accepted.connect(lambda: self._go(session, plan, dialog.putting_back))
        open_once(dialog)
        return dialog

    def _go(self, session: Session, plan: GoingBack, put_back: bool) -> None:
        window = self.window
        window.statusBar().showMessage("Stopping the run, then going back…" if session.running else "Going back…")

        def made(session_id: str) -> None:
            window.statusBar().clearMessage()
            self._message_box_for = session_id
            window.refresh_sessions()
            window.show_session(session_id)
        window.keeper.run(self._stop_then_go(session, plan, put_back), on_success=made, on_failure=self._refused)

    async def _stop_then_go(self, session: Session, plan: GoingBack, put_back: bool) -> str:
        """The new session's id, once the session gone back in has ended: its run stopped (what its
        last steps changed is found again: they may have changed more files since the dialog
        asked), or, with nothing running it, ended where it is. A way left that went on waiting
        counted among the sessions waiting for the person, and an answer to its question would
        have run it again, in the folder just put back."""
        database, data_dir = self.window.workspace.store.path, self.window.workspace.data_dir
        if session.running:
            session.stop()
            await session.wait()
            plan = await asyncio.to_thread(with_own_store, database, going_back, data_dir, plan.source,
                                           plan.before_seq)
        elif not session.state.ended:  # paused, or asking, since a restart: ended where it is, as Stop does
            session.stop_unrun()  # (its question's window goes with it: the way left asks nothing more)
        return await asyncio.to_thread(with_own_store, database, go_back, data_dir, plan, put_back)

    def shown(self, session: Session) -> None:
        """A session is shown: the one just made waits for the person's word, in the message box."""
        if session.id == self._message_box_for:
            self._message_box_for = ""
            self.window.composer.setFocus()

    def _refused(self, error: BaseException) -> None:
        self.window.statusBar().clearMessage()
        if not isinstance(error, (CannotGoBack, StoreError, OSError)):
            raise error  # a bug: the error hook reports it
        self.window.tell(f"Tripane cannot go back there: {error}")
