"""The main window: sessions on the left, the chat in the middle, the three live files on the right.

The window only talks to the core through `Session` (calls) and `SessionBridge` (signals). Every
session opened in this window keeps its bridge, so a question asked by a session running in the
background still raises an alert and marks the session list.
"""

from __future__ import annotations

import asyncio
import html
import logging
import time
from collections.abc import Callable
from pathlib import Path

from core.alongside import folder_notes
from core.branch import BRANCHED
from core.changes import may_have_changed_files
from core.events import (
    AssistantMessage,
    Compaction,
    FileChanged,
    HumanAnswer,
    HumanQuestion,
    ModelChanged,
    PinsChanged,
    Record,
    SessionEnded,
    UserMessage,
)
from core.export import import_with_own_store, write_export
from core.folder_approvals import FolderApprovals
from core.given_files import NotGiven
from core.llm import ModelClient, prepare_tokenizer
from core.logs import log_path
from core.memory import MIN_SCORE
from core.memory.config import read_config, write_config
from core.memory.working import FINDINGS, PLAN, PROGRESS, WriteRefused
from core.model_names import deprecation_near
from core.offload import whole_message
from core.run_lock import INTERRUPTED
from core.session import (
    ENDED_ON_ERROR,
    CannotRun,
    Session,
    SessionBusy,
    SessionConfig,
    WorkFolderMissing,
)
from core.spending import since_days, spending
from core.stay_awake import STAY_AWAKE
from core.store import DiskFull, SessionRow, StoreError, as_disk_full, rows_matching
from core.summary import summarize, summary_rows
from core.text import capitalized, one_line
from core.transcript import transcript
from gui.announcer import Announcer, html_said, run_ended_title
from gui.asides import Asides
from gui.bidi import isolated
from gui.bridge import SessionBridge
from gui.caret_rest import CaretRest
from gui.desktop_open import open_file, open_on_desktop
from gui.dialogs.change_model import ChangeModelDialog
from gui.dialogs.commands import CommandsWindow
from gui.dialogs.conflict import KEEP_MINE, MERGE, ConflictDialog, merge_text
from gui.dialogs.forms import open_once, save_file_dialog
from gui.dialogs.help import about_html, command_rows
from gui.dialogs.inspector import ContextInspector
from gui.dialogs.memory_search import MemorySearchDialog
from gui.dialogs.new_session import NewSessionDialog
from gui.dialogs.pins import PinDialog
from gui.dialogs.question import QuestionDialog
from gui.dialogs.settings import SettingsDialog
from gui.dialogs.spending import SpendingDialog
from gui.dialogs.summary import SummaryDialog
from gui.dialogs.work_changes import WorkChangesDialog
from gui.drafts import Drafts
from gui.file_histories import FileHistories
from gui.glyphs import check_markers
from gui.going_back import COMPOSER_HINT_GONE_BACK, GoingBackFlow
from gui.icon import app_icon
from gui.markdown import warm_up as warm_markdown
from gui.menus import bind_session_list, build_menus, session_context_menu
from gui.pane_edits import PaneEdits
from gui.qt import (
    QApplication,
    QCloseEvent,
    QDialog,
    QEvent,
    QFileDialog,
    QHBoxLayout,
    QImage,
    QInputDialog,
    QMainWindow,
    QMenu,
    QMessageBox,
    QMimeData,
    QSplitter,
    QSystemTrayIcon,
    Qt,
    QTextCursor,
    QTimer,
    QVBoxLayout,
    QWidget,
    Signal,
    qt_alive,
)
from gui.reading_order import in_reading_order
from gui.reflections import Reflections
from gui.screen_fit import cascade_over, center_on_screen, fit_to_screen
from gui.session_search import MentionSearch
from gui.settings import RECENT_WORKDIRS, AppSettings, Preferences
from gui.single_instance import InstanceServer
from gui.tasks import TaskKeeper
from gui.text_size import apply_text_size, next_step
from gui.theme import OTHER_THEME, accessibility_hints, apply_theme, shown_theme
from gui.typing_watch import TypingWatch
from gui.widgets.chat import ChatView
from gui.widgets.chat_find import ConversationFinder
from gui.widgets.composer import Composer
from gui.widgets.file_pane import FilePane
from gui.widgets.find_bar import FindBar
from gui.widgets.pictures import (
    READABLE,
    WaitingPictures,
    holds_pictures,
    not_added,
    pictures_in,
)
from gui.widgets.session_list import SessionList
from gui.widgets.snug_button import SnugButton
from gui.widgets.status import SessionStatusBar
from gui.workspace import Workspace, connection_test_client
from gui.zoom_wheel import ZoomWheel

log = logging.getLogger(__name__)
# How often the window looks for what another Tripane (a terminal's `tripane run`, another window)
# recorded: the session list, and the session shown. One indexed query each time.
FOLLOW_MS = 1500
START_NOTE_S = 30  # how long a word said at the start stays in the status bar
RETRIED_AT_ONCE_SHOWN_MS = 20_000  # how long the why of a retry made at once stays in the status bar
UNREADABLE_NOTE = "A file of this session changed outside Tripane and cannot be read now"
QUESTION_AFTER_TYPING_POLL_MS = 300  # how often a question held while the person types looks for a pause
DELETE_LISTED = 8  # sessions named in the confirmation of a deletion of many (the rest counted)
# How a session nothing runs was left, as its end is asked ("… is not running: it was interrupted …").
LEFT_AS = {"running": "was interrupted mid-run", "paused": "is paused", "waiting": "waits for your answer"}
ALERT_SHOWN_MS = 15_000  # a run of another session that ended, said in the status bar
UNEXPECTED_QUIET_S = 60  # between two notices of an unexpected error (each is in the log)
NO_SESSION = ("<p><b>No session is open.</b></p>"
              "<p>Pick one on the left, or start one with <b>New</b> (Ctrl+N): a task for the agent and the "
              "folder it may work in.</p>"
              "<p>As the agent works, its plan, what it learns and what it does fill the three panes on the "
              "right. Edit the plan at any time (Ctrl+E): the agent reads your change at its next step.</p>")
COMPOSER_HINT = "Message the agent — it reads it at its next step (Ctrl+Enter to send; paste a screenshot to show it)"
COMPOSER_HINT_ELSEWHERE = ("Another Tripane runs this session (a terminal or another window): it is shown here as "
                           "it runs; message the agent there, or here once that run stops")
LIST_CHANGING_EVENTS = ("human_question", "human_answer", "session_paused", "session_resumed", "session_ended",
                        "user_message")


def dropped_folder(data) -> Path | None:
    """The one local folder a drag carries, if that is what it carries."""
    urls = data.urls() if data.hasUrls() else []
    if len(urls) != 1 or not urls[0].isLocalFile():
        return None
    path = Path(urls[0].toLocalFile())
    return path if path.is_dir() else None


INSPECTOR_REFRESH_MS = 400  # the open inspector takes in a running session's new requests at most this often

# A question of a session another Tripane runs is that one's to ask: this one cannot record an answer.
ASKED_ELSEWHERE = ("Another Tripane runs this session (a terminal's tripane run, or another window): answer its "
                   "question there. Once that run stops, it is asked here.")


class MainWindow(QMainWindow):
    question_shown = Signal(object)  # the QuestionDialog, for tests and screenshots
    closed = Signal()
    attention_requested = Signal(str, str)  # title, message: the window was not in front

    def __init__(self, workspace: Workspace, settings: AppSettings, client_factory: Callable[[], ModelClient],
                 prefs: Preferences | None = None):
        super().__init__()
        self.setObjectName("main_window")
        self._waiting = 0  # sessions waiting for the person (the title says how many)
        self.setWindowTitle("Tripane")
        self.setWindowIcon(app_icon())
        self.workspace = workspace
        self.settings = settings
        self.prefs = prefs or settings.load()
        self.client_factory = client_factory
        self.connection_client_factory: Callable[[], ModelClient] = connection_test_client
        self.keeper = TaskKeeper()
        self.session: Session | None = None
        self.bridges: dict[str, SessionBridge] = {}
        # The open questions' dialogs, by session and question: each session numbers its own (q15 in two)
        self.dialogs: dict[tuple[str, str], QuestionDialog] = {}
        # Questions that came while the person typed in the window, shown once they pause.
        self.typing_watch = TypingWatch(self)
        self.caret_rest = CaretRest(QApplication.instance(), self)  # (it blinks all day otherwise)
        self._held_questions: list[tuple[Session, HumanQuestion]] = []
        self._questions_after_typing = QTimer(self, singleShot=True, interval=QUESTION_AFTER_TYPING_POLL_MS)
        self._questions_after_typing.timeout.connect(self._ask_after_typing)
        self._plan_edit_answers: dict[str, tuple[str, str]] = {}  # session → the 3-Strike question a plan save answers
        self.inspector: ContextInspector | None = None
        self._task_not_started = ""  # a task typed in the New session window, closed without starting
        self._inspector_refresh: QTimer | None = None
        self._activity, self._activity_detail = "idle", ""
        self._elsewhere = False  # the session shown is run by another Tripane
        self._follow_problem = ""  # why other Tripanes' changes cannot be followed now, once said
        self._outside_problem = ""  # why an edit made outside Tripane cannot be taken in, once said
        self._start_note: tuple[str, float] = ("", 0.0)  # said at the start, and until when (say_at_start)
        self._shut_down = False
        self._opening: str | None = None  # the session being opened to be shown, while its log is replayed
        self._quit_confirmed = False  # closing while a run works was confirmed (or needs no asking)
        self.shutdown_done: asyncio.Future | None = None
        self._tray: QSystemTrayIcon | None = None
        self._alerted_session = ""  # the session the tray's last message is about
        self._unexpected_told = float("-inf")
        self._watched_runs: set[asyncio.Task] = set()
        self.warm_up: asyncio.Task | None = None
        self.memory_loading: asyncio.Task | None = None
        self.memory_search: MemorySearchDialog | None = None
        self.spending: SpendingDialog | None = None
        self.histories = FileHistories(self)
        self.reflections = Reflections(self)
        self.asides = Asides(self)
        self.going_back = GoingBackFlow(self)
        self.mentions = MentionSearch(self.keeper, self.workspace.store)

        self.sessions = SessionList()
        self.chat = ChatView()
        self.chat_find = FindBar("the conversation", finder := ConversationFinder(self.chat))
        finder.report = self.chat_find.show_found
        finder.too_far_back = self._find_in_progress
        self.composer = Composer()
        self.composer.setObjectName("composer")
        self.composer.setAccessibleName("Message to the agent")
        self.composer.setPlaceholderText(COMPOSER_HINT)
        self.composer.show_lines(3.5)
        self.composer.setTabChangesFocus(True)  # Tab goes on to Send; a message needs no tab characters
        self.composer.sent = self._messages_sent
        self.composer.workdir = self._shown_workdir
        self.composer.give = self._give_to_shown_session
        self.chat.workdir = self._shown_workdir  # (a file tool's card opens its file)
        self.pictures = WaitingPictures()
        self.composer.pictures_given.connect(self.take_pictures)
        self.composer.told.connect(lambda said: self.statusBar().showMessage(said, 10_000))
        known = {row.id for row in self.workspace.store.sessions()}
        self.drafts = Drafts(self.composer, self.settings.q, known.__contains__, self.workspace.data_dir)
        self.pane_edits = PaneEdits(self.settings.q, known.__contains__, self.workspace.data_dir,
                                    self._open_pane_edits, self)
        self.panes = {
            PLAN: FilePane(PLAN, "Task Plan", self.keeper, editable=True, pinnable=True),
            FINDINGS: FilePane(FINDINGS, "Findings", self.keeper, editable=True),
            PROGRESS: FilePane(PROGRESS, "Progress", self.keeper, log=True),
        }
        self.typing_watch.watch(self.composer, self.sessions.search, self.chat_find,
                                *(field for pane in self.panes.values() for field in (pane.editor, pane.find_bar)))
        self._last_session_pending = True  # until shown after the first frame, or the person acts first
        self.setAcceptDrops(True)
        self._build_layout()
        self._build_actions()
        self._connect()
        self.setStatusBar(status := SessionStatusBar())
        self.status = status
        self.announcer = Announcer(self)
        status.messageChanged.connect(self.announcer.status_message)
        for bar in (self.chat_find, *(pane.find_bar for pane in self.panes.values())):
            bar.told.connect(self.announcer.once_settled)
        self.sessions.found_told.connect(self.announcer.once_settled)
        self.status.question_clicked.connect(self.show_open_question)
        self.status.cost_clicked.connect(self.open_spending)
        self.status.model_clicked.connect(self.change_model)
        self.status.show_state(None)
        self._show_no_session()
        self._restore_layout()
        self.refresh_sessions()
        self._update_controls()
        self._sessions_seen = self.workspace.sessions_signature()
        self._follow_timer = QTimer(self)
        self._follow_timer.setInterval(FOLLOW_MS)
        self._follow_timer.timeout.connect(self._follow_others)
        self._follow_timer.start()

    def start_warm_up(self) -> None:
        """Load the model library and the tokenizer in the background, once the window is up, so
        the first turn does not wait for them (and their one-time import is not felt mid-run)."""
        if self._shut_down:
            return
        if self.warm_up is None and self.prefs.configured:
            self.warm_up = self.keeper.run(prepare_tokenizer(self.prefs.model), name="warm-up",
                                           on_failure=lambda error: log.info("warm-up failed: %s", error))
        if self.memory_loading is None:
            self.memory_loading = self.keeper.run(self.workspace.load_memory(), name="memory",
                                                  on_success=lambda _m: (self._show_memory_status(),
                                                                         self.reflections.memory_ready()),
                                                  on_failure=self._memory_failed)

    def _show_memory_status(self) -> None:
        memory = self.workspace.long_memory
        status = memory.status() if memory is not None else None
        self.status.show_memory(status, self.workspace.memory_problem)
        if self.memory_search is not None:
            self.memory_search.show_status(status, self.workspace.memory_problem)

    def _memory_failed(self, error: BaseException) -> None:
        log.warning("long-term memory could not be loaded: %s", error)
        self.workspace.memory_problem = f"long-term memory could not be loaded: {error}"
        self._show_memory_status()

    def open_memory_search(self) -> MemorySearchDialog:
        if self.memory_search is None:
            self.memory_search = MemorySearchDialog(self)
            self.memory_search.search_requested.connect(self._search_memory)
            self.memory_search.open_folder_requested.connect(self.open_memory_folder)
        self._show_memory_status()
        bring_to_front(self.memory_search)
        self.memory_search.query.setFocus()
        return self.memory_search

    def open_spending(self) -> SpendingDialog:
        if self.spending is None:
            self.spending = SpendingDialog(self)
            self.spending.period_changed.connect(lambda _days: self._read_spending())
            self.spending.session_chosen.connect(self.show_session)
        self._read_spending()
        bring_to_front(self.spending)
        return self.spending

    def _read_spending(self) -> None:
        dialog = self.spending
        assert dialog is not None
        self.keeper.in_thread(spending, self.workspace.store, since_days(dialog.days()),
                              self.workspace.data_dir / "memory", name="spending",
                              on_success=dialog.show_spending, on_failure=dialog.show_failure, owner=dialog)

    def open_memory_folder(self) -> None:
        folder = self.workspace.data_dir / "memory"
        folder.mkdir(parents=True, exist_ok=True)
        self.open_folder(folder, "Long-term memory")

    def open_folder(self, folder: Path, what: str) -> None:
        """The folder in the desktop's file manager, or where it is when none opens it."""
        open_on_desktop(folder, self, f"No file manager could open the folder. {what} is in:\n{folder}")

    def open_session_folder(self) -> None:
        if self.session is not None:  # the three files, offload/, compaction/ and the exports
            self.open_folder(self.session.dir, "The session's files")

    def open_session_file(self, name: str) -> QMessageBox | None:
        """One of the three files in the program the desktop opens Markdown with (the person's
        editor): a save there is taken in within a moment (_take_outside_edits), as the pane's own."""
        if self.session is None:
            return None
        path = self.session.file_path(name)
        return open_file(path, self)

    def open_working_folder(self) -> None:
        if (workdir := self._shown_workdir()) is not None:
            self.open_folder(workdir, "The agent's working folder")

    def move_work_folder(self) -> QFileDialog | None:
        """Give the session its work folder's new place (moved, renamed, or the session imported
        from another computer): the agent works there from its next step on."""
        session = self.session
        if session is None:
            return None
        now = Path(session.state.workdir)
        dialog = QFileDialog(self, "The work folder's new place", str(now if now.is_dir() else now.parent
                                                                       if now.parent.is_dir() else Path.home()))
        dialog.setFileMode(QFileDialog.FileMode.Directory)
        dialog.setOption(QFileDialog.Option.ShowDirsOnly)
        dialog.fileSelected.connect(lambda folder, s=session: self._move_work_folder(s, folder))
        open_once(dialog)
        return dialog

    def _move_work_folder(self, session: Session, folder: str) -> None:
        try:
            moved = session.move_workdir(folder)
        except (CannotRun, ValueError) as refused:
            self.tell(capitalized(str(refused)))
            return
        except (StoreError, OSError) as exc:
            self.tell(f"The work folder could not be moved: {as_disk_full(exc, session.dir) or exc}",
                      QMessageBox.Icon.Warning)
            return
        if moved is not None:
            self.statusBar().showMessage(f"The agent works in {moved.workdir} from now on: Resume (Ctrl+R) or a "
                                         "message goes on there.", 10_000)

    def tell_refusal(self, refused: BaseException) -> QMessageBox:
        """Why a run cannot start; for a work folder that is gone, with the way to its new place."""
        box = self.tell(str(refused))
        if isinstance(refused, WorkFolderMissing):
            choose = box.addButton("Choose its new place…", QMessageBox.ButtonRole.ActionRole)
            choose.clicked.connect(self.move_work_folder)
        return box

    def open_log_folder(self) -> None:
        folder = log_path(self.workspace.data_dir).parent
        folder.mkdir(parents=True, exist_ok=True)
        self.open_folder(folder, "The log")

    def _search_memory(self, query: str) -> None:
        dialog = self.memory_search
        memory = self.workspace.long_memory
        if dialog is None:
            return
        if memory is None:
            dialog.show_failure(RuntimeError(self.workspace.memory_problem or "long-term memory is still loading"))
            return
        self.keeper.run(memory.asearch(query, top_k=10, threshold=MIN_SCORE),
                        on_success=lambda hits: (dialog.show_hits(query, hits), self._show_memory_status()),
                        on_failure=dialog.show_failure)

    # --- building -------------------------------------------------------------------------------

    def _build_layout(self) -> None:
        self.send_button, self.pause_button = SnugButton("Send"), SnugButton("Pause")
        self.resume_button, self.stop_button = SnugButton("Resume"), SnugButton("Stop")
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        for button, tip in ((self.send_button, "Ctrl+Enter"), (self.pause_button, "Ctrl+P"),
                            (self.resume_button, "Ctrl+R"), (self.stop_button, "Esc")):
            button.setToolTip(tip)
            buttons.addWidget(button)
        center = QWidget()
        column = QVBoxLayout(center)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.chat, 1)
        column.addWidget(self.chat_find)
        column.addWidget(self.composer)
        column.addWidget(self.pictures)
        column.addLayout(buttons)
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.setObjectName("panes_splitter")
        for pane in self.panes.values():
            self.right.addWidget(pane)
        self.main_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.main_splitter.setObjectName("main_splitter")
        self.main_splitter.addWidget(self.sessions)
        self.main_splitter.addWidget(center)
        self.main_splitter.addWidget(self.right)
        self.main_splitter.setStretchFactor(1, 3)
        self.main_splitter.setStretchFactor(2, 2)
        self.main_splitter.setSizes([240, 640, 480])
        self.setCentralWidget(self.main_splitter)
        for splitter in (self.main_splitter, self.right):
            in_reading_order(splitter)

    def _build_actions(self) -> None:
        self.actions_by_name = build_menus(self)
        self.actions_by_name["sessions_list"].setCheckable(True)
        self.actions_by_name["sessions_list"].setChecked(True)
        self._show_text_size()
        bind_session_list(self)

    def _session_context_menu(self, position) -> QMenu | None:
        return session_context_menu(self, position)

    def _connect(self) -> None:
        QApplication.styleHints().colorSchemeChanged.connect(self.desktop_scheme_changed)
        if (hints := accessibility_hints()) is not None:  # (Qt 6.10 and later)
            hints.contrastPreferenceChanged.connect(self.desktop_scheme_changed)
        self.zoom_wheel = ZoomWheel(self.change_text_size, self)
        self.zoom_wheel.watch(self.chat.viewport(), self.sessions.list.viewport(), self.composer.viewport(),
                              *(view.viewport() for pane in self.panes.values() for view in (pane.viewer, pane.editor)))
        self.sessions.session_selected.connect(self.show_session)
        self.sessions.session_chosen.connect(lambda _id: self.composer.setFocus())  # (Enter in the search)
        self.sessions.search_left.connect(self.composer.setFocus)
        self.sessions.new_requested.connect(self.new_session)
        self.sessions.rename_requested.connect(lambda _id: self.rename_session())
        self.sessions.delete_requested.connect(self.delete_session)
        self.sessions.search_changed.connect(lambda text: (self.refresh_sessions(), self.mentions.search(text)))
        self.mentions.changed.connect(self.refresh_sessions)
        self.mentions.changed.connect(self._show_where_the_shown_session_says_it)
        self.send_button.clicked.connect(self.send_message)
        self.pause_button.clicked.connect(self.pause)
        self.resume_button.clicked.connect(self.resume)
        self.stop_button.clicked.connect(self.end_session)
        self.chat.tool_stop_requested.connect(self.stop_command)
        self.chat.left_stopped.connect(self.left_running_stopped)
        self.chat.history_requested.connect(self.histories.show)
        self.chat.reflection_requested.connect(self.reflections.show)
        self.chat.learned_requested.connect(self.reflections.show_strategies)
        self.chat.changes_requested.connect(self.show_work_changes)
        self.chat.aside_requested.connect(self.asides.show_earlier)
        self.chat.go_back_requested.connect(self.going_back.ask)
        for pane in self.panes.values():
            pane.save_requested.connect(self.on_pane_save_requested)
            pane.pin_requested.connect(self.on_pane_pin_requested)
            pane.history_requested.connect(self.histories.show)
            pane.open_requested.connect(self.open_session_file)
            pane.edit_changed.connect(self.pane_edits.changed)

    # --- layout memory --------------------------------------------------------------------------

    def _restore_layout(self) -> None:
        geometry = self.settings.layout("geometry")
        if geometry is None or not self.restoreGeometry(geometry):
            fit_to_screen(self, 1360, 820)
            center_on_screen(self)
        for key, splitter in (("main_splitter", self.main_splitter), ("panes_splitter", self.right)):
            state = self.settings.layout(key)
            if state is not None:
                splitter.restoreState(state)
        self.show_sessions_list(bool(self.prefs.sessions_list))

    def save_layout(self) -> None:
        """What the window looks like as it closes, the session on screen included."""
        self.prefs.last_session = self._opening or (self.session.id if self.session is not None else "")
        self.prefs.sessions_list = int(not self.sessions.isHidden())
        self.settings.save(self.prefs)
        self.settings.save_layout("geometry", self.saveGeometry())
        self.settings.save_layout("main_splitter", self.main_splitter.saveState())
        self.settings.save_layout("panes_splitter", self.right.saveState())
        self.settings.q.sync()

    # --- sessions -------------------------------------------------------------------------------

    def _follow_others(self) -> None:
        """Show what other processes did: sessions they created or changed, and the records of the
        session shown when this window is not the one running it."""
        if self._shut_down:
            return
        try:
            seen = self.workspace.sessions_signature()
            if seen != self._sessions_seen:
                self._sessions_seen = seen
                self.refresh_sessions()
            session = self.session
            if session is not None and not session.running:
                session.follow()  # each record reaches the views, and the controls, through the bridge
                if session.run_elsewhere() != self._elsewhere:  # that run began or ended
                    ended_there = self._elsewhere
                    self._update_controls()
                    self.refresh_sessions()  # (an interrupted one in the list is looked at seldom)
                    if ended_there and session.state.open_question is not None:  # still asking: here now
                        self.show_question(session, session.state.open_question)
        except StoreError as exc:  # e.g. the database is locked for longer than the busy timeout
            # Said once while it lasts, not every 1.5 s: a later version running the session shown
            # (an event this one cannot read) filled the log with the same line, and told no one.
            if str(exc) != self._follow_problem:
                self._follow_problem = str(exc)
                log.warning("could not follow other Tripanes' changes: %s", exc)
                self.statusBar().showMessage(f"Other Tripanes' changes are not shown: {exc}")
        else:
            self._follow_problem = ""
        self._take_outside_edits()

    def _take_outside_edits(self) -> None:
        """The shown session's plan or findings edited in another editor: recorded now, so the
        panes show it and a save here made on the text before it is a conflict, not an overwrite."""
        session = self.session
        if session is None:
            return
        try:
            session.take_outside_edits()
            problem = "; ".join(f"{name}: {why}" for name, why in session.memory.unreadable.items())
        except (StoreError, SessionBusy, OSError) as exc:
            problem = str(exc)
        if problem and problem != self._outside_problem:  # said once while it lasts, as above
            log.warning("session %s: an edit made outside Tripane could not be taken in: %s", session.id, problem)
            self.statusBar().showMessage(f"{UNREADABLE_NOTE} ({problem}); it is read again in a moment.")
        elif not problem and self.statusBar().currentMessage().startswith(UNREADABLE_NOTE):  # read since
            self.statusBar().clearMessage()
        self._outside_problem = problem

    def find(self) -> None:
        """Find in the pane that has the focus, or in the conversation (from it or the message
        box), or else among the sessions."""
        focus = QApplication.focusWidget()
        pane = self.focused_pane()
        in_conversation = focus is not None and any(
            w is focus or w.isAncestorOf(focus) for w in (self.chat, self.chat_find, self.composer))
        if pane is not None:
            pane.find_bar.open()
        elif in_conversation and self.session is not None:
            self.chat_find.open()
        else:
            self.find_session()

    def _find_in_progress(self, text: str) -> None:
        """The conversation's find met the text only in events older than the view keeps: the
        Progress pane, which logs every step, is searched for it (the focus stays in the bar)."""
        pane = self.panes[PROGRESS]
        pane.find_bar.show_text(text)
        where = "the Progress pane shows where" if pane.find_bar.property("found") == "yes" else (
            "the Progress pane does not have it either; `tripane show` lists every event")
        self.statusBar().showMessage(f"“{text}” is only in events older than the conversation shows: {where}.", 10_000)

    def focused_pane(self) -> FilePane | None:
        """The plan, findings or progress pane that has the keyboard focus, if one has."""
        focus = QApplication.focusWidget()
        return next((pane for pane in self.panes.values() if focus is not None and pane.isAncestorOf(focus)), None)

    def show_session_beside(self, step: int) -> None:
        """The session above (-1) or below (1) the one shown in the list, as tabs go: to look in on
        several runs from the keyboard."""
        ids = self.sessions.ids()
        current = self.sessions.current_id()
        index = ids.index(current) + step if current in ids else 0
        if 0 <= index < len(ids):
            self.sessions.go_to_row(index)

    def find_session(self) -> None:
        bring_to_front(self)  # (pressed in another of Tripane's windows, a question's)
        self.show_sessions_list(True)
        self.sessions.search.setFocus()
        self.sessions.search.selectAll()

    def toggle_sessions_list(self) -> None:
        self.show_sessions_list(self.sessions.isHidden())

    def show_sessions_list(self, shown: bool) -> None:
        """The list on the left, or more room for the conversation (a narrow screen)."""
        self.sessions.setVisible(shown)  # hidden with the focus in it, Qt moves the focus on
        self.actions_by_name["sessions_list"].setChecked(shown)

    def _show_no_session(self) -> None:
        self.chat.show_placeholder(NO_SESSION)
        self.pictures.show_for("", None)
        self._update_title()
        self._update_controls()  # (the shown one deleted mid-run: its Send, Pause and Stop with it)

    def refresh_sessions(self) -> None:
        current = self._opening or (self.session.id if self.session else None)
        search = self.sessions.search.text()
        mentioning = self.mentions.mentioning(search)
        rows = self.workspace.sessions()
        drafted = (set(self.drafts.waiting) | {session_id for session_id, _ in self.pane_edits.waiting}  # (a plan edit)
                   | self.pictures.waiting_elsewhere())
        matching = rows_matching(rows, search, mentioning)
        serving = {session.id for session in self.workspace.opened() if session.serves_the_person}
        self.sessions.show_rows(matching, current, mentioning, drafted, serving)
        self.sessions.show_found(search, len(matching), len(rows), self.mentions.searching(search))
        self._waiting = sum(1 for row in rows if row.status == "waiting")
        self._enable_answering()
        shown = self.session.id if self.session is not None else None
        self._update_title(next((row.title for row in rows if row.id == shown), ""))

    def _show_where_the_shown_session_says_it(self) -> None:
        """The session shown is among those the search found by what they say: as opening one of
        them does, its conversation shows where (searching for an error seen in it, the person
        would otherwise find its row marked and nothing more, clicking the row being no change)."""
        search = self.sessions.search.text()
        if self.session is not None and self.session.id in self.mentions.mentioning(search):
            self.chat_find.show_text(search.strip())

    def _update_title(self, shown_title: str = "") -> None:
        """The session shown (its title as the list has it), and how many wait for the person: the
        taskbar says it while Tripane is behind other windows."""
        waiting = f"({self._waiting} waiting for you) " if self._waiting else ""
        self.setWindowTitle(waiting + (f"{isolated(shown_title)} — Tripane" if shown_title else "Tripane"))

    def after_first_frame(self) -> None:
        """Markdown's parser is made ready on a worker thread while the session shown at the last
        closing is opened, so that its conversation does not import it on the Qt thread."""
        if self._shut_down:  # closed within its first 50 ms (a test harness does)
            return
        self.keeper.in_thread(warm_markdown, name="markdown")
        check_markers()
        self.show_last_session()
        self.keep_copies_under_budget()

    def keep_copies_under_budget(self) -> None:
        """On a worker thread: the oldest sessions' copies of their work folders removed while all
        take more than Settings allows (core/copies.py). At the start, and as each session starts
        (which may soon copy its own)."""
        self.keeper.run(self.workspace.keep_copies_under_budget(self.prefs.copies_mb), name="copies of work folders")

    def show_last_session(self) -> None:
        """The session that was shown when Tripane last closed, if it is still there."""
        last, pending = self.prefs.last_session, self._last_session_pending
        self._last_session_pending = False
        if pending and not self._shut_down and self.session is None and last and last in self.sessions.ids():
            self.show_session(last)
        elif pending and self.session is None and self._opening is None and self.prefs.configured:
            self.announce_no_session()  # (on a first run, once the welcome is closed: open_settings)

    def announce_no_session(self) -> None:
        """What the empty conversation says, for a screen reader (the keys are in the sessions' search)."""
        self.announcer.say(html_said(NO_SESSION).replace("\n", " "))

    def show_session(self, session_id: str) -> None:
        """Show the session: at once if it is open already, else once its log is replayed in the
        background (the session on screen stays until then; the status bar says what is coming)."""
        self._last_session_pending = False  # the person chose: the last one is no longer wanted
        if self._opening == session_id:
            return
        self._stop_opening()  # the person chose another one meanwhile
        if self.session is not None and self.session.id == session_id:
            return
        session = self.workspace.already_open(session_id)
        if session is not None:
            self._present(session)
            return
        self._opening = session_id
        self._update_controls()  # the session's commands wait for the one chosen
        opening = f"Opening {self._title_of(session_id)} …"
        self.statusBar().showMessage(opening)
        if self.session is None:  # rather than "No session is open"
            self.chat.show_placeholder(f"<p><b>{html.escape(opening)}</b></p>")

        def opened(session: Session) -> None:
            if self._opening == session_id and not self._shut_down:
                self._stop_opening()
                self._present(session)

        def failed(error: BaseException) -> None:
            if self._opening != session_id:
                return
            self._stop_opening()
            self.refresh_sessions()  # the list's selection goes back to the session on screen
            if not isinstance(error, (StoreError, ValueError)):
                raise error  # a bug: the error hook reports it
            if self.prefs.last_session == session_id:  # not tried again at every start, said each time
                self.prefs.last_session = ""
                self.settings.save_one(self.prefs, "last_session")
            self.tell(f"The session {session_id} cannot be opened:\n\n{error}")

        self.keeper.run(self.workspace.load(session_id), on_success=opened, on_failure=failed, name="open session")

    def say_at_start(self, note: str) -> None:
        """A word for the status bar at the start (a database read back, a data folder on a network
        drive), kept its START_NOTE_S: opening the last session, which clears the bar as it shows
        a session, wiped it before it could be read."""
        self._start_note = (note, time.monotonic() + START_NOTE_S)
        self._clear_status()

    def _clear_status(self) -> None:
        """The status bar's message gone (another session's retry, an opening done), but for the word
        said at the start while its time lasts."""
        self.statusBar().clearMessage()
        note, until = self._start_note
        if note and (left := until - time.monotonic()) > 0:
            self.statusBar().showMessage(note, int(left * 1000))

    def _stop_opening(self) -> None:
        """No session is waited for any more: its load, if any, finishes unseen."""
        if self._opening is not None:
            self._opening = None
            self._update_controls()
            self._clear_status()
            if self.session is None:
                self._show_no_session()

    def _title_of(self, session_id: str) -> str:
        try:
            return f"“{self.workspace.title(session_id)}”"
        except StoreError:
            return session_id

    def _present(self, session: Session) -> None:
        check_markers()  # before the panes and the chat render its files' markers
        self._watch(session)
        self._keep_pane_edits()  # the session shown before: its edits wait for it
        self.session = session
        self.announcer.session_shown()
        self.drafts.take(session.id)
        bridge = self.bridges[session.id]  # (what it does now: it may have run while another was shown)
        self._activity, self._activity_detail = (bridge.activity, bridge.detail) if session.running else ("idle", "")
        self._clear_status()  # e.g. the other session's retry
        if self._activity == "retrying":  # …or this one's
            self.statusBar().showMessage(f"↻ {self._activity_detail}")
        self.chat.show_records(session.records, folder=session.dir)
        if not session.running:  # (a dev server kept for the person: its card offers to stop it again)
            self.chat.show_left_running()
        self.chat.mark_refused_pictures(*session.pictures_refused())
        self.pictures.show_for(session.id, session.dir, lambda: session.state.model, session.sees_pictures,
                               lambda: (p for r in session.records for p in getattr(r.event, "pictures", ())))
        if self.inspector is not None and self.inspector.isVisible():
            self._fill_inspector(session)
        if session.running and bridge.thinking:  # the reply it is writing now, from its start
            self.chat.stream_reasoning(bridge.thinking)
        if session.running and bridge.writing:
            self.chat.stream(bridge.writing)
        search = self.sessions.search.text()
        if session.id in self.mentions.mentioning(search):  # found by what it says: shown where it says it
            self.chat_find.show_text(search.strip())
        else:  # what was found was in the conversation shown before
            self.chat_find.setVisible(False)
        for call_id, started in session.running_tools().items():  # their cards count from then
            self.chat.tool_output(call_id, "", started)
            if printed := bridge.output.get(call_id):  # with what they printed so far
                self.chat.tool_output(call_id, printed)
        for name, pane in self.panes.items():
            pane.bind(lambda name=name, session=session: session.read_file(name),
                      (lambda name=name, session=session: session.state.pins.get(name, ())) if name == PLAN else None,
                      lambda name=name, session=session: session.file_author(name))
            if kept := self.pane_edits.take(session.id, name):
                pane.take_up_edit(*kept)
        self.refresh_sessions()  # and the title
        self._update_controls()
        # Kept now, not only as the window closes: after a crash or a kill, Tripane opens on the
        # session it was showing, its question asked again.
        self.prefs.last_session = session.id
        self.settings.save_one(self.prefs, "last_session")
        question = session.state.open_question
        if question is not None:
            self.show_question(session, question)
        self.going_back.shown(session)
        self._let_go_of_idle_sessions()

    def _let_go_of_idle_sessions(self) -> None:
        """The sessions looked at before, but the last few, freed with their bridges (a window left
        open all day held every session it had shown), unless a window of their own shows them."""
        shown = ({self.session.id} if self.session is not None else set()) | {sid for sid, _ in self.dialogs} \
            | {s.id for s, _ in self._held_questions} | {sid for sid, _ in self.histories.open} \
            | set(self.asides.dialogs) | set(self.reflections.due) | {d.session.id for d in self._work_changes_dialogs()}
        for session_id in self.workspace.let_go(shown):
            if (bridge := self.bridges.pop(session_id, None)) is not None:
                bridge.detach()
                bridge.deleteLater()

    def _open_pane_edits(self) -> dict[tuple[str, str], tuple[str, int]]:
        """The shown session's edits of its plan and findings not saved yet."""
        if self.session is None:
            return {}
        return {(self.session.id, name): edit for name, pane in self.panes.items()
                if (edit := pane.unsaved_edit()) is not None}

    def _keep_pane_edits(self) -> None:
        for (session_id, name), (text, version) in self._open_pane_edits().items():
            self.pane_edits.keep(session_id, name, text, version)

    def _shown_workdir(self) -> Path | None:
        state = self.session.state if self.session is not None else None
        return Path(state.workdir) if state is not None and state.config is not None else None

    def _messages_sent(self) -> list[str]:
        """The person's messages to the shown session, oldest first (Up in the message box), a long
        one whole, as they sent it, not as the conversation keeps it."""
        if self.session is None:
            return []
        return [whole_message(record.event, self.session.dir) for record in self.session.records
                if isinstance(record.event, UserMessage)]

    def _watch(self, session: Session) -> None:
        if session.id in self.bridges:
            return
        bridge = SessionBridge(session, self)
        bridge.record_added.connect(lambda record, s=session: self.on_bridge_record_added(s, record))
        bridge.text_streamed.connect(lambda text, s=session: s is self.session and self.chat.stream(text))
        bridge.reasoning_streamed.connect(
            lambda text, s=session: s is self.session and self.chat.stream_reasoning(text))
        bridge.tool_output.connect(
            lambda call_id, text, s=session: s is self.session and self.chat.tool_output(call_id, text))
        bridge.activity_changed.connect(
            lambda activity, detail, s=session: self.on_bridge_activity_changed(s, activity, detail))
        self.bridges[session.id] = bridge

    def new_session(self, folder: Path | None = None) -> NewSessionDialog | None:
        """The New session dialog; `folder`: its work folder (a folder dropped on the window)."""
        if not self.prefs.configured:
            self.open_settings(first_run=True)
            return None
        self._learn_from_sessions()
        dialog = NewSessionDialog(self.prefs, self, self.keeper, self.connection_client_factory, folder_notes=lambda folder: (
            folder_notes(self.workspace.store, self.workspace.data_dir, folder)))
        if self._task_not_started:  # typed, then closed without starting (Esc by mistake, say)
            dialog.task.setPlainText(self._task_not_started)
            dialog.task.moveCursor(QTextCursor.MoveOperation.End)
        if folder is not None:
            dialog.workdir.setText(str(folder))
            dialog.task.setFocus()

        def finished(result: int) -> None:
            if result and dialog.config:
                self._task_not_started = ""
                self.start_session(dialog.config)
            elif not dialog.filled_in_like:  # (another session's task is not the person's draft)
                self._task_not_started = dialog.task.toPlainText() if dialog.task.toPlainText().strip() else ""
        dialog.finished.connect(finished)
        open_once(dialog)
        return dialog

    def new_session_like(self) -> NewSessionDialog | None:
        """The New session dialog filled in as the open session runs now (its task, folder, model
        and effort, approvals): to run a task again from the start, or a close variant of it."""
        if self.session is None or self.session.state.config is None:
            return None
        dialog = self.new_session()
        if dialog is not None:
            dialog.fill_in_like(self.session.state, self.session.dir)
        return dialog

    # A folder dragged from the file manager onto the window starts a session in it.

    def dragEnterEvent(self, event) -> None:
        if dropped_folder(event.mimeData()) is not None or self._takes_pictures(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        folder = dropped_folder(event.mimeData())
        if folder is not None:
            event.acceptProposedAction()
            self.new_session(folder)
        elif self._takes_pictures(event.mimeData()):  # on the conversation, say, not just on the message box
            event.acceptProposedAction()
            self.take_pictures(pictures_in(event.mimeData())[0])

    def _takes_pictures(self, source: QMimeData) -> bool:
        return self.session is not None and self.composer.isEnabled() and holds_pictures(source)

    def start_session(self, config: SessionConfig) -> Session | None:
        try:
            session = self.workspace.create(config)
        except (ValueError, StoreError) as exc:
            self.tell(f"The session could not be started:\n\n{exc}")
            return None
        self.prefs.remember_workdir(Path(config.workdir))
        self.prefs.remember_model(config.model, config.api_base)
        self.settings.save(self.prefs)
        self._watch(session)
        self.session = None
        self.show_session(session.id)
        if self._start(session):
            # The keys go where the run is steered, or stopped (Esc), from: not back to the search,
            # where the window starts and where Esc only leaves the search.
            self.composer.setFocus()
        self.keep_copies_under_budget()
        return session

    def _start(self, session: Session, begin: Callable[[], object] | None = None) -> bool:
        """Start (or `begin` otherwise, as a resume does) the session's run and watch it; False
        when it was refused, and the person told why."""
        try:
            (begin or session.start)()
        except CannotRun as refused:
            self.tell_refusal(refused)
            return False
        self._watch_run(session)
        self.refresh_sessions()  # listed as running now that it runs, not as interrupted before it did
        return True

    def _watch_run(self, session: Session) -> None:
        """Refresh the controls when the session's current run ends (once per run)."""
        task = session.task
        if task is not None and not task.done() and task not in self._watched_runs:
            self._watched_runs.add(task)
            task.add_done_callback(lambda done, s=session: (self._watched_runs.discard(done),
                                                            self.on_session_run_finished(s, done)))

    def on_session_run_finished(self, session: Session, run: asyncio.Task | None = None) -> None:
        if self._shut_down:
            return
        self.refresh_sessions()
        if session is self.session:
            self._update_controls()
            self.chat.run_stopped()
        error = run.exception() if run is not None and not run.cancelled() else None
        if isinstance(error, DiskFull):  # the run stopped where it was, as a crash would: say why
            self.alert(error.what, "Run stopped: the disk is full", session.id)
            self.tell(f"{self._title_of(session.id)} stopped. {error.what}\n\nFree some space, then press "
                      "Resume (Ctrl+R) to go on from there.", QMessageBox.Icon.Warning)
        elif error is not None:
            raise error  # a bug: the error hook reports it

    def export_session(self) -> None:
        session = self.session
        if session is None:
            return
        save_file_dialog(self, "Export the session as a zip", Path.home() / f"tripane-{session.id}.zip",
                         "Zip archives (*.zip)", lambda path: self.export_to(session, path))

    def import_session(self) -> QFileDialog:
        """A session someone exported (Session → Export, `tripane export`), to read here or go on with."""
        dialog = QFileDialog(self, "Import a session", str(Path.home()), "Tripane exports (*.zip)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(lambda path: self.import_from(Path(path)))
        open_once(dialog)
        return dialog

    def import_from(self, source: Path) -> None:
        self.statusBar().showMessage(f"Importing {source.name}…")
        data_dir = self.workspace.data_dir

        def imported(session_id: str) -> None:
            self.statusBar().clearMessage()
            self.refresh_sessions()
            self.show_session(session_id)
        # A store of its own: this one's connection serves the window meanwhile.
        self.keeper.in_thread(import_with_own_store, self.workspace.store.path, data_dir, source,
                              on_success=imported, on_failure=lambda error: (self.statusBar().clearMessage(),
                                                                             self.tell(str(error))))

    def export_to(self, session: Session, target: Path) -> None:
        self.statusBar().showMessage(f"Exporting to {target}…")  # a session with large outputs takes a while
        self.keeper.in_thread(write_export, list(session.records), session.dir, session.id, target,
                              self.workspace.title(session.id), self.workspace.data_dir / "memory",
                              on_success=lambda path: self.statusBar().showMessage(f"Exported to {path}", 8000),
                              on_failure=lambda error: self.tell(f"The export failed: {error}"))

    def show_summary(self) -> None:
        """The session at a glance: time, turns, tool calls and failures, questions, cost, changes
        (counted on a worker thread: a long session has thousands of events)."""
        session = self.session
        if session is None:
            return
        records, title = list(session.records), self.workspace.title(session.id)
        self.keeper.in_thread(lambda: summary_rows(summarize(records)), name="session summary",
                              on_success=lambda rows: self._show_summary(title, rows),
                              on_failure=lambda error: self.tell(f"The summary could not be made: {error}"))

    def _show_summary(self, title: str, rows: list[tuple[str, str]]) -> SummaryDialog:
        dialog = SummaryDialog(title, rows, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        bring_to_front(dialog)
        return dialog

    def copy_as_markdown(self) -> None:
        """The conversation as a Markdown transcript, on the clipboard: to paste into an issue, a
        pull request or a chat."""
        session = self.session
        if session is None:
            return
        QApplication.clipboard().setText(transcript(list(session.records), self.workspace.title(session.id)))
        self.statusBar().showMessage("The conversation is on the clipboard as Markdown.", 8000)

    def change_model(self) -> ChangeModelDialog | None:
        """The shown session goes on with another model (its own is gone, refused, too weak or too dear)."""
        session = self.session
        if session is None:
            return None
        dialog = ChangeModelDialog(session.state, self.prefs, self.keeper, self.connection_client_factory, self)

        def changed(done: bool) -> None:
            if not done:
                return
            self._update_controls()  # the model in the status bar
            model = session.state.model
            self.prefs.remember_model(model, session.state.api_base)
            self.settings.save(self.prefs)
            if session.running:
                self.statusBar().showMessage(f"The next request goes to {model}.", 8000)
            elif session.state.ended:
                self.statusBar().showMessage(f"{model} takes over: send a message to go on.", 12000)
            else:
                self.statusBar().showMessage(f"{model} takes over: Resume (Ctrl+R) goes on.", 12000)

        def chosen(result: int) -> None:
            if result:
                self.keeper.run(session.change_model(*dialog.chosen()), on_success=changed,
                                on_failure=lambda error: self.tell(f"The model was not changed: {error}",
                                                                   QMessageBox.Icon.Warning))
        dialog.finished.connect(chosen)
        open_once(dialog)
        return dialog

    def rename_session(self) -> None:
        session_id = self.sessions.current_id()
        if not session_id:
            return
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Rename session")
        dialog.setLabelText("Name:")
        dialog.setTextValue(self.workspace.title(session_id))
        dialog.textValueSelected.connect(lambda title: self._rename(session_id, title))
        open_once(dialog)

    def _rename(self, session_id: str, title: str) -> None:
        try:
            self.workspace.rename(session_id, title)
        except ValueError as exc:
            self.tell(str(exc))
        self.refresh_sessions()  # and the title

    def delete_session(self) -> None:
        """The sessions selected in the list (else the current one), after the person confirms."""
        ids = self.sessions.chosen_ids()
        if not ids:
            return
        titles = [self.workspace.store.session(session_id).title for session_id in ids]
        running = [session_id for session_id in ids
                   if (open_ := self.workspace.already_open(session_id)) is not None and open_.running]
        if len(ids) == 1:
            question = f"Delete “{titles[0]}”?"
            its = "Its event log, the three files, its offloaded outputs and the copies kept"
            stopped = ("It is running: its run is stopped first, and a command it runs now with it.\n\n"
                       if running else "")
        else:
            shown = "\n".join(f"• {isolated(one_line(title, 70))}" for title in titles[:DELETE_LISTED])
            more = f"\n• … and {len(ids) - DELETE_LISTED:,} more" if len(ids) > DELETE_LISTED else ""
            question = f"Delete these {len(ids):,} sessions?\n\n{shown}{more}"
            its = "Their event logs, their three files, offloaded outputs and the copies kept"
            stopped = (f"{len(running):,} of them {'is' if len(running) == 1 else 'are'} running: their runs are "
                       "stopped first, and the commands they run now with them.\n\n" if running else "")
        box = QMessageBox(QMessageBox.Icon.Warning, "Delete session" if len(ids) == 1 else "Delete sessions",
                          f"{question}\n\n{stopped}{its} to put the work folder's files back are removed; the "
                          "work folder is not touched. This cannot be undone.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda result: result == QMessageBox.StandardButton.Yes and self._delete(ids))
        open_once(box)

    def _delete(self, ids: list[str]) -> None:
        self._last_session_pending = False  # it may be one being deleted
        shown_id = self.session.id if self.session is not None else None
        for session_id in ids:
            self._forget(session_id)
        if shown_id in ids:
            self.session = None
            for pane in self.panes.values():
                pane.bind(None)
            self.status.show_state(None)
            self._show_no_session()
            self.announce_no_session()

        def done(refusals: list[tuple[str, str]]) -> None:  # e.g. another Tripane runs one: it is kept
            self.statusBar().clearMessage()
            self.refresh_sessions()
            if refusals:
                self.tell("\n\n".join(message for _id, message in refusals))
            if shown_id in {session_id for session_id, _message in refusals}:
                self.show_session(shown_id)
        self.keeper.run(self._delete_each(ids), on_success=done,
                        on_failure=lambda error: done([(ids[0], str(error))]))

    async def _delete_each(self, ids: list[str]) -> list[tuple[str, str]]:
        """Delete them in turn, the window answering between two (hundreds may be selected); the
        refusals, by session."""
        refusals: list[tuple[str, str]] = []
        for number, session_id in enumerate(ids, 1):
            if len(ids) > 1:
                self.statusBar().showMessage(f"Deleting sessions… {number:,} of {len(ids):,}")
            try:
                await self.workspace.delete(session_id)
            except (SessionBusy, StoreError, OSError) as exc:
                refusals.append((session_id, str(exc)))
            await asyncio.sleep(0)
        return refusals

    def _forget(self, session_id: str) -> None:
        """What the window keeps of a session being deleted: its questions, drafts, dialogs."""
        self._held_questions = [(s, q) for s, q in self._held_questions if s.id != session_id]
        if self._opening == session_id:
            self._stop_opening()
        bridge = self.bridges.pop(session_id, None)
        if bridge is not None:
            bridge.detach()
        for sid, qid in [key for key in self.dialogs if key[0] == session_id]:
            self._take_question_away(sid, qid)
        self.drafts.forget(session_id)
        self.pane_edits.forget(session_id)
        self.histories.forget(session_id)
        self.asides.forget(session_id)
        for dialog in self._work_changes_dialogs():  # its originals go with the session's folder
            if dialog.session.id == session_id:
                dialog.close()

    def _take_question_away(self, session_id: str, qid: str) -> None:
        """Its question answered, or its session deleted: the dialog will not be shown again."""
        dialog = self.dialogs.pop((session_id, qid), None)
        if dialog is not None:
            dialog.close()
            dialog.deleteLater()

    # --- what the core reports ------------------------------------------------------------------

    def on_bridge_record_added(self, session: Session, record: Record) -> None:
        event = record.event
        if isinstance(event, HumanQuestion):
            self.show_question(session, event)
        elif isinstance(event, HumanAnswer):
            self._take_question_away(session.id, event.qid)
        elif isinstance(event, SessionEnded):
            self._alert_run_ended(session, event)
            self.reflections.run_ended(session)
            # The run's questions end with it (a run stopped while it asked for an approval): an
            # answer to one left open would have gone to a run that is over.
            for sid, qid in [key for key in self.dialogs if key[0] == session.id]:
                if qid not in session.state.open_questions:
                    self._take_question_away(sid, qid)
        if event.kind in LIST_CHANGING_EVENTS:
            self.refresh_sessions()
        if isinstance(event, FileChanged):
            self.histories.file_changed(session.id, event.file)
        if may_have_changed_files(event):
            for dialog in self._work_changes_dialogs():  # the list it shows is of the work folder now
                if dialog.session is session:
                    dialog.reload()
        if session is not self.session:
            return
        self.chat.add_record(record)
        self.announcer.record(event)
        if isinstance(event, (AssistantMessage, ModelChanged)):  # (a request's pictures refused; another model)
            self.chat.mark_refused_pictures(*session.pictures_refused())
        if isinstance(event, (AssistantMessage, Compaction)) and self.inspector is not None \
                and self.inspector.isVisible():  # (a step or more at once: one refresh)
            self._inspector_refresh.start()
        if isinstance(event, (FileChanged, PinsChanged)) and event.file in self.panes:
            self.panes[event.file].refresh()
        self._update_controls()

    def _look_up_deprecation(self, model: str, api_base: str | None) -> None:
        """Whether the shown model's provider deprecates it soon, or has (the status bar then says
        so): litellm's map, read once per model in a worker thread."""
        known = self.status.deprecations
        if (model, api_base) in known:
            return
        known[(model, api_base)] = ""  # until the map says otherwise

        def found(day: str) -> None:
            known[(model, api_base)] = day
            if day:
                self._update_controls()
        self.keeper.in_thread(deprecation_near, model, api_base, on_success=found, name="deprecation day")

    def on_bridge_activity_changed(self, session: Session, activity: str, detail: str = "") -> None:
        if session is not self.session:
            return
        if activity == "retrying":
            # The part of the reply already shown is dropped: the retry streams the reply anew.
            self.chat.discard_live()
            self.statusBar().showMessage(f"↻ {detail}")
        elif self._activity == "retrying":
            if activity == "thinking" and detail:  # asked again at once: why stays a while
                self.statusBar().showMessage(f"↻ {detail}", RETRIED_AT_ONCE_SHOWN_MS)
            else:
                self.statusBar().clearMessage()
        self._activity, self._activity_detail = activity, detail
        self._update_controls()

    def _update_controls(self) -> None:
        session = self.session
        state = session.state if session else None
        has = session is not None
        running = has and session.running
        # Another Tripane (a terminal's `tripane run`, another window) drives it: this one follows.
        elsewhere = self._elsewhere = has and not running and not state.ended and session.run_elsewhere()
        # Logged as running, run by no process: Tripane closed, or was killed, mid-run.
        interrupted = has and not running and not elsewhere and state.status == "running"
        if interrupted:  # a call it was making reads unfinished, not "…" as if it still ran
            self.chat.run_stopped()
        paused = has and state.status == "paused"
        # Asked to pause: it does so after the step it is in, which a slow model's reply makes minutes.
        pausing = running and not paused and session.control.pause_requested
        self.status.show_state(state, "elsewhere" if elsewhere else INTERRUPTED if interrupted else self._activity,
                               self._activity_detail, pausing=pausing)
        self.status.follow_activity(self.bridges.get(session.id) if running and state.status == "running" else None,
                                    pausing=pausing)
        if has and state.config is not None:
            self._look_up_deprecation(state.model, state.api_base)
        for widget in (self.send_button, self.composer):
            widget.setEnabled(has and not elsewhere)
        self.composer.setPlaceholderText(COMPOSER_HINT_ELSEWHERE if elsewhere else COMPOSER_HINT_GONE_BACK
                                         if has and state.status == BRANCHED else COMPOSER_HINT)
        self.pause_button.setEnabled(running and not paused and not pausing)
        goes_on = has and (not state.ended or state.status == ENDED_ON_ERROR)  # (an error's cause fixed)
        self.resume_button.setEnabled(goes_on and not elsewhere and (paused or pausing or not running))
        # Stop also ends a session nothing runs (interrupted; paused or asking since a restart),
        # which otherwise waited to be resumed, and counted among those waiting, ever after. Esc
        # stops only a run: pressed in passing, it asked to end a session.
        endable = has and not running and not elsewhere and not state.ended and self._opening is None
        self.stop_button.setEnabled(running or endable)
        self.stop_button.setToolTip("Esc" if not endable else "End this session where it is: nothing runs it now")
        # The menu and the shortcuts offer what the buttons offer: Ctrl+P on an ended session would
        # otherwise hold the run a later message starts.
        for name, button in (("send", self.send_button), ("pause", self.pause_button),
                             ("resume", self.resume_button), ("picture", self.send_button)):
            self.actions_by_name[name].setEnabled(button.isEnabled())
        self.actions_by_name["stop"].setEnabled(running)
        self.actions_by_name["end_session"].setEnabled(endable)
        # While another session is being opened (chosen in the list, or right-clicked there), the
        # session's commands wait for it: they would act on the one still on screen.
        settled = has and self._opening is None
        self._enable_answering()
        for name in ("edit_plan", "edit_findings", "pin_plan", "save_edit", "compact", "inspector", "export",
                     "rename", "delete", "session_folder", "working_folder", "new_like", "copy_markdown",
                     "file_history", "summary", "work_changes", "stop_left", "go_back"):
            self.actions_by_name[name].setEnabled(settled)
        self.actions_by_name["change_model"].setEnabled(settled and not elsewhere)
        self.actions_by_name["ask_helper"].setEnabled(settled and not elsewhere)
        self.actions_by_name["move_workdir"].setEnabled(settled and not elsewhere)
        working = running and state.status not in ("paused", "waiting") and not state.ended
        self.actions_by_name["reflect"].setEnabled(settled and not elsewhere and not working
                                                   and session.id not in self.reflections.working)

    def _enable_answering(self) -> None:
        """Answer the question: the shown session's, or the one that waits for the person longest
        (none shown, or it asks nothing)."""
        self.actions_by_name["question"].setEnabled(self._opening is None and (self.session is not None
                                                                               or self._waiting > 0))

    # --- the person in the loop -----------------------------------------------------------------

    def show_question(self, session: Session, question: HumanQuestion, asked: bool = False) -> None:
        """`asked`: the person asked for it (Ctrl+Shift+A), so it is shown even as they type."""
        if question.qid in session.state.answers:
            return
        if session.run_elsewhere():  # asked where it runs (a terminal's `tripane run`), and answered there
            return
        if (shown := self.dialogs.get((session.id, question.qid))) is not None:
            # Closed with Esc or its close button, to answer later: brought back, as it was.
            shown.show()
            shown.raise_()
            shown.activateWindow()
            return
        title = self.workspace.title(session.id)
        if not asked and self.typing_watch.typing():  # it would take the keys typed (gui/typing_watch.py)
            if (session, question) not in self._held_questions:
                self._held_questions.append((session, question))
            self._questions_after_typing.start()
            self.statusBar().showMessage(f"? {isolated(one_line(title, 60))}: a question for you, shown when you pause typing",
                                         ALERT_SHOWN_MS)
            return
        workdir = session.state.workdir if session.state.config else ""
        config = session.state.config
        dialog = QuestionDialog(question, title, self, session_id=session.id, workdir=str(workdir),
                                answer_wait_min=config.answer_wait_min if config else 0)
        dialog.text.give = session.keep_given  # (a file that cannot go as text: a copy, kept now)
        dialog.answered.connect(lambda qid, choice, text, s=session, d=dialog: self.answer(s, qid, choice, text,
                                                                                         d.pictures.held()))
        dialog.plan_edit_requested.connect(lambda qid, text, s=session: self.edit_plan_to_answer(s, qid, text))
        self.dialogs[session.id, question.qid] = dialog
        dialog.show()
        cascade_over(dialog, list(self.dialogs.values()))
        dialog.raise_()
        self.alert(f"{title}: {question.question}", session_id=session.id)
        self.question_shown.emit(dialog)

    def _ask_after_typing(self) -> None:
        """The questions held while the person typed, once they pause."""
        if self.typing_watch.typing():
            self._questions_after_typing.start()
            return
        held, self._held_questions = self._held_questions, []
        for session, question in held:
            self.show_question(session, question)

    def show_open_question(self) -> None:
        """The question the shown session waits on, again (its dialog may have been closed); or,
        when it asks nothing, the session that has waited longest (the title counts them)."""
        session = self.session
        if session is not None and session.state.open_question is not None and session.run_elsewhere():
            self.statusBar().showMessage(ASKED_ELSEWHERE, 8000)
        elif session is not None and session.state.open_question is not None:
            self.show_question(session, session.state.open_question, asked=True)
        elif (waiting := self._longest_waiting()) is not None:
            self.show_session(waiting.id)  # its question is asked as it is shown
        else:
            self.statusBar().showMessage("No session is waiting for an answer.", 4000)

    def _longest_waiting(self) -> SessionRow | None:
        """Of the other sessions waiting for the person, the one that has waited longest."""
        shown = self.session.id if self.session is not None else None
        waiting = [row for row in self.workspace.sessions() if row.status == "waiting" and row.id != shown]
        return min(waiting, key=lambda row: row.updated, default=None)

    def edit_plan_to_answer(self, session: Session, qid: str, hint: str) -> None:
        """3-Strike's "Edit the plan": the plan opens in its editor, and the person's save both
        sends the edit (the agent reads it as a diff) and answers the question; till then the agent
        waits, as for any answer."""
        self.show_session(session.id)  # (open already: it is waiting on this question)
        pane = self.panes[PLAN]
        if self.session is not session:  # another one still opening: the question is asked again
            if (dialog := self.dialogs.get((session.id, qid))) is not None:
                dialog.show()
            return
        self._plan_edit_answers[session.id] = (qid, hint)
        self.raise_()
        self.activateWindow()  # the dialog, which had the keys, is hidden: Ctrl+S is the window's
        pane.set_editing(True)
        pane.notice.setText("The agent waits for your edit of the plan: Save (Ctrl+S) sends it and answers its "
                            "3-Strike question (Cancel, then Ctrl+Shift+A, to answer otherwise).")
        pane.notice.setVisible(True)

    def answer(self, session: Session, qid: str, choice: str, text: str,
               pictures: tuple[tuple[bytes, str], ...] = ()) -> None:
        """`pictures`: shown with the answer (each one's bytes and suffix), kept in the session first."""
        dialog = self.dialogs.get((session.id, qid))

        def answered(_result) -> None:
            if not session.running and not session.state.ended:
                self._start(session)  # e.g. a question left open when the app was closed
            self._update_controls()

        def failed(error: BaseException) -> None:
            if dialog is not None:
                dialog.show()  # (hidden while the person edited the plan that answers it)
                dialog.show_error(str(error))
        try:
            shown = tuple(session.keep_picture(data, suffix) for data, suffix in pictures)
        except (ValueError, OSError) as error:
            return failed(error)
        self.keeper.run(session.answer(qid, choice, text, shown), on_success=answered, on_failure=failed)

    def bring_to_front(self) -> None:
        """Tripane was launched again over this data folder: this window is the one wanted."""
        if self._shut_down:  # a request that came in just before the listener closed
            return
        if self.isMinimized() or not self.isVisible():
            self.showNormal()
        self.raise_()
        # Its own windows stay above it (a window manager keeps them there, but not every desktop
        # has one): the settings, the questions waiting for the person; a modal one gets the keys.
        own = [d for d in self.findChildren(QDialog) if d.isWindow() and d.isVisible()]
        modal = QApplication.activeModalWidget()
        for dialog in sorted(own, key=lambda d: d is modal):
            dialog.raise_()
        (modal if modal in own else self).activateWindow()

    def alert(self, message: str, title: str = "Tripane needs you", session_id: str = "") -> None:
        """The taskbar entry flashes and the tray says why, unless the person is looking already. A
        click on the tray's message shows the session it is about (`session_id`); a person in the
        window looking at another session reads it in the status bar."""
        if self.isActiveWindow():
            if session_id and (self.session is None or self.session.id != session_id):
                self.statusBar().showMessage(f"{isolated(title)} — {isolated(message[:200])}", ALERT_SHOWN_MS)
            return
        QApplication.alert(self)
        self.attention_requested.emit(title, message)
        if QSystemTrayIcon.isSystemTrayAvailable():
            if self._tray is None:
                self._tray = QSystemTrayIcon(app_icon(), self)
                self._tray.activated.connect(lambda _reason: self.bring_to_front())
                self._tray.messageClicked.connect(self._show_alerted_session)
                self._tray.show()
            self._alerted_session = session_id
            self._tray.showMessage(title, message[:200], QSystemTrayIcon.MessageIcon.Information, 8000)

    def _show_alerted_session(self) -> None:
        self.bring_to_front()
        if self._alerted_session and self._alerted_session in self.sessions.ids():
            self.show_session(self._alerted_session)

    def _alert_run_ended(self, session: Session, ended: SessionEnded) -> None:
        """A long run finished while the person looked elsewhere: they want to know, and how."""
        title = self.workspace.title(session.id)
        summary = f": {ended.summary.strip()}" if ended.summary.strip() else ""
        self.alert(f"{title}{summary}", run_ended_title(ended.status), session.id)

    # --- steering -------------------------------------------------------------------------------

    def send_message(self) -> None:
        session, text = self.session, self.composer.toPlainText().strip()
        if session is None or not (text or self.pictures.waiting(session.id)):
            return
        self.composer.clear()
        pictures = self.pictures.take(session.id)

        def refused(exc: BaseException) -> None:
            self.pictures.give_back(session.id, pictures)
            self.tell_refusal(exc)

        def sent(_result) -> None:
            self._watch_run(session)
            self._update_controls()
            if len(text) > session.message_limit():  # (the chat shows where: the notice in it is the agent's)
                self.statusBar().showMessage(f"Your message is long ({len(text):,} characters): the agent reads its "
                                             "start and end, and the rest from a file kept in the session.", 15_000)
        self.keeper.run(session.send(text, pictures), on_success=sent, on_failure=refused)

    def choose_pictures(self) -> QFileDialog:
        """Pictures to go with the message, chosen from the disk (a paste or a drop does as much)."""
        workdir = self._shown_workdir()
        dialog = QFileDialog(self, "Show the agent a picture", str(workdir or Path.home()),
                             f"Pictures ({' '.join(f'*{suffix}' for suffix in READABLE)})")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFiles)
        dialog.filesSelected.connect(lambda paths: self.take_pictures([QImage(path) for path in paths]))
        open_once(dialog)
        return dialog

    def _give_to_shown_session(self, source: Path) -> str:
        """A file dropped on the message box that cannot go as text, kept for the shown session's
        agent (core/given_files.py); how the agent names it."""
        if self.session is None:
            raise NotGiven("no session is open to give it to")
        return self.session.keep_given(source)

    def take_pictures(self, images: list[QImage]) -> None:
        """Pictures pasted or dropped on the message box: kept in the shown session, to go with
        the message."""
        if self.session is None or not self.composer.isEnabled():
            self.statusBar().showMessage("Open a session to show its agent a picture.", 10_000)
            return
        if problems := self.pictures.add(self.session.keep_picture, images):
            self.statusBar().showMessage(not_added(problems), 15_000)
        self.composer.setFocus()  # (to write what the picture shows: from the file dialog, too)

    def pause(self) -> None:
        if self.session is not None:
            self.session.pause()
            self._update_controls()

    def resume(self) -> None:
        session = self.session
        if session is None or session.state.ended and session.state.status != ENDED_ON_ERROR:
            return
        if self._start(session, session.resume):
            self._update_controls()

    def stop(self) -> None:
        if self.session is not None and self.session.running:
            self.session.stop()

    def end_session(self) -> None:
        """The Stop button: a run stops; a session nothing runs is ended where it is, once the
        person says so (it can be taken up again by a message, as any ended session)."""
        session = self.session
        if session is None or session.running:
            self.stop()
            return
        left = LEFT_AS.get(session.state.status, "stopped where it was")
        box = QMessageBox(QMessageBox.Icon.Question, "End the session? — Tripane",
                          f"{self._title_of(session.id)} is not running: it {left}. End it where it is? A call it "
                          "left open is closed as stopped; a message to it later goes on from there.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self)
        box.button(QMessageBox.StandardButton.Yes).setText("End it")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.finished.connect(lambda result: result == QMessageBox.StandardButton.Yes and self._end_unrun(session))
        open_once(box)

    def _end_unrun(self, session: Session) -> None:
        try:
            session.stop_unrun()
        except (SessionBusy, StoreError) as exc:
            self.tell(f"{self._title_of(session.id)} could not be ended:\n\n{exc}")
        self.refresh_sessions()
        if session is self.session:
            self._update_controls()

    def stop_command(self, call_id: str) -> None:
        """Stop one running command of the shown session; the run goes on."""
        if self.session is None or not self.session.stop_tool(call_id):
            self.statusBar().showMessage("That command has already ended.", 5000)

    def stop_left_running(self) -> None:
        """Session → Stop what the agent left running (a dev server), as its cards' Stop it would."""
        if not self.chat.stop_all_left():
            self.statusBar().showMessage("Nothing the agent left running in the background runs now.", 5000)

    def left_running_stopped(self, call_id: str) -> None:
        """The person stopped what a command left running (its card did): the session records it."""
        if self.session is not None:
            self.keeper.run(self.session.left_running_stopped(call_id), name="what a command left running, stopped",
                            on_success=lambda _none: self.refresh_sessions())  # (no longer "left running")

    def compact(self) -> None:
        if self.session is not None:
            self.session.request_compaction()
            self.statusBar().showMessage("The context will be compacted at the next step (findings are flushed first).", 6000)

    # --- editing the files ----------------------------------------------------------------------

    def save_edit(self) -> None:
        for pane in self.panes.values():
            if pane.editing:
                pane.save()
                return

    def on_pane_save_requested(self, name: str, text: str, base_version: int) -> None:
        session, pane = self.session, self.panes[name]
        if session is None:
            return
        try:
            session.edit_file(name, text, base_version)
        except WriteRefused as refused:
            self._resolve_conflict(session, name, text, refused)
            return
        except ValueError as exc:
            pane.notice.setText(str(exc))
            pane.notice.setVisible(True)
            return
        except (StoreError, OSError) as exc:  # a full disk, a file made read-only: the text stays here
            problem = as_disk_full(exc, session.dir) or exc
            if isinstance(problem, OSError) and problem.strerror:
                problem = f"{problem.strerror}: {problem.filename}." if problem.filename else f"{problem.strerror}."
            pane.notice.setText(f"Not saved. {problem} Your text is still here: save again once that is fixed.")
            pane.notice.setVisible(True)
            return
        pane.saved()
        # (Only the plan's save answers: saving the findings meanwhile leaves the question waiting.)
        qid, hint = self._plan_edit_answers.pop(session.id, ("", "")) if name == PLAN else ("", "")
        if qid and qid not in session.state.answers:
            self.answer(session, qid, "edit_plan", hint)

    def _resolve_conflict(self, session: Session, name: str, mine: str, refused: WriteRefused) -> None:
        dialog = ConflictDialog(name, mine, refused.current_text, refused.current_version, self,
                                author=session.file_author(name))
        pane = self.panes[name]

        def chosen(_result) -> None:
            if dialog.choice == KEEP_MINE:
                self.on_pane_save_requested(name, mine, refused.current_version)
            elif dialog.choice == MERGE:
                pane.continue_from(merge_text(mine, refused.current_text), refused.current_version)
            elif dialog.choice:  # the agent's version: the person chose to drop theirs
                pane.set_editing(False)
                pane.refresh(now=True)
        dialog.finished.connect(chosen)
        open_once(dialog)

    def on_pane_pin_requested(self, name: str) -> None:
        session = self.session
        if session is None:
            return
        text, _ = session.read_file(name)
        dialog = PinDialog(text, session.state.pins.get(name, ()), self)

        def chosen(result: int) -> None:
            if result:
                try:
                    session.pin(name, dialog.chosen())
                except (ValueError, StoreError) as exc:
                    self.tell(str(exc))
        dialog.finished.connect(chosen)
        open_once(dialog)

    def report_unexpected(self, error: BaseException) -> None:
        """An error nobody caught (already in the log): say so, at most once a minute."""
        if self._shut_down or not qt_alive(self):
            return
        now = time.monotonic()
        if now - self._unexpected_told < UNEXPECTED_QUIET_S:
            return
        self._unexpected_told = now
        self.tell(f"Something went wrong inside Tripane: {type(error).__name__}: {error}\n\nNothing was lost: every "
                  "step of your sessions is in their event log. The details are in the log file (Help → Open log "
                  f"folder):\n{log_path(self.workspace.data_dir)}", QMessageBox.Icon.Warning)

    def show_shortcuts(self) -> CommandsWindow:
        """F1: the commands and their keys, found by typing and run with Enter."""
        shown = next((w for w in self.findChildren(CommandsWindow) if w.isVisible()), None)
        if shown is None:  # F1 again raises the list rather than opening a second one
            shown = CommandsWindow(command_rows(self.actions_by_name), self)
        bring_to_front(shown)
        shown.filter.setFocus()
        return shown

    def show_about(self) -> QMessageBox:
        return self._rich_box("About Tripane", about_html(self.workspace.data_dir))

    def _rich_box(self, title: str, text: str) -> QMessageBox:
        box = self.tell(text)
        box.setWindowTitle(title)
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return box

    def tell(self, message: str, icon: QMessageBox.Icon = QMessageBox.Icon.Information) -> QMessageBox:
        """A message box that does not block (no nested event loop under the shared asyncio loop)."""
        box = QMessageBox(icon, "Tripane", message, QMessageBox.StandardButton.Ok, self)
        open_once(box)
        return box

    # --- other windows --------------------------------------------------------------------------

    def _learn_from_sessions(self) -> None:
        """The work folders and models of sessions started from the terminal, offered beside the
        window's own (a person who began with `tripane run` met an empty Settings and list)."""
        try:
            self.prefs.learn_from_sessions(self.workspace.lately_used(RECENT_WORKDIRS))
        except StoreError as exc:  # (the list says what is wrong with the database)
            log.warning("the sessions' folders and models were not read: %s", exc)

    def open_settings(self, first_run: bool = False) -> SettingsDialog:
        self._learn_from_sessions()
        data_before = self.prefs.data_path()
        embedding_before = read_config(self.workspace.data_dir).get("embedding_model", "")
        dialog = SettingsDialog(self.prefs, self.keeper, self.connection_client_factory, first_run=first_run,
                                parent=self, embedding_model=embedding_before,
                                approvals=FolderApprovals(self.workspace.data_dir), data_dir=self.workspace.data_dir)

        def saved(result: int) -> None:
            if result:
                self.settings.save(self.prefs)
                embedding = dialog.embedding_model.text().strip()
                if embedding != embedding_before:
                    write_config(self.workspace.data_dir, embedding_model=embedding,
                                 api_base=self.prefs.api_base if embedding else "")
                    self.tell("Long-term memory will use " + (embedding or "the offline embedding model") +
                              " from the next start of Tripane; its index is then rebuilt once.")
                apply_theme(QApplication.instance(), self.prefs.theme)
                STAY_AWAKE.set_enabled(bool(self.prefs.keep_awake))  # (for the runs at work now too)
                self.start_warm_up()
                self.keep_copies_under_budget()  # (a lower cap applies at once)
                if self.prefs.data_path() != data_before:
                    self.tell(f"Sessions will be kept in {self.prefs.data_path()} "
                                            "from the next start of Tripane.")
            if first_run and self.session is None and self._opening is None:
                self.announce_no_session()  # (kept back while the window was under the welcome)
        dialog.finished.connect(saved)
        open_once(dialog)
        return dialog

    def change_text_size(self, direction: int) -> None:
        """One step larger (1), smaller (-1), or back to the platform's size (0); remembered."""
        self.prefs.text_scale = next_step(self.prefs.text_scale, direction)
        self.settings.save(self.prefs)
        for pane in self.panes.values():
            pane.remember_place()
        apply_text_size(QApplication.instance(), self.prefs.text_scale)
        self.chat.rerender()  # headings are sized in the HTML; the rest follows the font
        for pane in self.panes.values():
            pane.rerender()
        self._show_text_size()

    def _show_text_size(self) -> None:
        # In the View menu rather than the status bar: a message there shown while the new font
        # lays the bar out again lands on top of the model and turn labels.
        scale = self.prefs.text_scale
        self.actions_by_name["actual_text"].setText("&Actual text size" + (f" (now {scale:.0%})" if scale != 1.0 else ""))

    def toggle_theme(self) -> None:
        """The other of light and dark than the one shown, in high contrast if it is (a theme that
        followed the desktop stops)."""
        self.prefs.theme = OTHER_THEME[shown_theme(self.prefs.theme)]
        self.settings.save(self.prefs)
        apply_theme(QApplication.instance(), self.prefs.theme)

    def desktop_scheme_changed(self) -> None:
        """The desktop went light or dark, or into high contrast or out: so does a window that follows it."""
        if self.prefs.theme == "system" and not self._shut_down:  # a closed window no longer decides
            apply_theme(QApplication.instance(), self.prefs.theme)

    def show_work_changes(self) -> WorkChangesDialog | None:
        """What the agent changed in the shown session's work folder, and a way to put files back."""
        session = self.session
        if session is None:
            return None
        dialog = next((d for d in self._work_changes_dialogs() if d.session is session), None)
        if dialog is None:
            dialog = WorkChangesDialog(self.keeper, session, self.workspace.title(session.id), self)
            dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.reload()
        bring_to_front(dialog)
        return dialog

    def _work_changes_dialogs(self) -> list[WorkChangesDialog]:
        return [d for d in self.findChildren(WorkChangesDialog) if qt_alive(d) and d.isVisible()]

    def open_inspector(self) -> ContextInspector | None:
        session = self.session
        if session is None:
            return None
        if self.inspector is None:
            self.inspector = ContextInspector(self)
            self._inspector_refresh = QTimer(self.inspector)
            self._inspector_refresh.setSingleShot(True)
            self._inspector_refresh.setInterval(INSPECTOR_REFRESH_MS)
            self._inspector_refresh.timeout.connect(self._refresh_inspector)
        self.inspector.summary.setText("Assembling the context (the first time loads the tokenizer)…")
        self._fill_inspector(session)
        bring_to_front(self.inspector)
        return self.inspector

    def _fill_inspector(self, session: Session) -> None:
        """The inspector shows the session shown: its requests and its context as the next request
        would send it (the answer of an assembly begun for another session is dropped)."""
        inspector = self.inspector
        assert inspector is not None
        inspector.session_id = session.id
        inspector.setWindowTitle(f"Context inspector — {self.workspace.title(session.id)} — Tripane")
        inspector.show_requests(session.records)

        def assembled(context, sid=session.id) -> None:
            if qt_alive(inspector) and inspector.session_id == sid:
                inspector.show_context(context)
        self.keeper.run(session.inspect_context(), on_success=assembled, on_failure=inspector.show_failure)

    def _refresh_inspector(self) -> None:
        """The open inspector follows the session shown, and its requests as they are made."""
        if self.inspector is not None and self.inspector.isVisible() and self.session is not None:
            self._fill_inspector(self.session)

    # --- closing --------------------------------------------------------------------------------

    def close_now(self) -> None:
        """Close without asking (a signal, a test, the selftest): runs stop where they are."""
        self._quit_confirmed = True
        self.close()

    def desktop_session_ending(self, *_manager) -> None:
        """The person logs out or shuts down: the quit question must not stand in the way (a run
        continues with Resume at the next start, as after any close)."""
        self._quit_confirmed = True

    def _confirm_quit(self, working: int, kept: list[str]) -> QMessageBox:
        said = []
        if working:
            runs, each = ("A run is", "It") if working == 1 else (f"{working} runs are", "Each")
            said.append(f"{runs} in progress. {each} stops where it is, and Resume (Ctrl+R) continues it from there "
                        "when you open Tripane again.")
        if kept:
            named = ", ".join(f"`{one_line(command, 60)}`" for command in kept[:3]) + (", …" if len(kept) > 3 else "")
            said.append(f"What the agent left running for you in the background stops with Tripane: {named}.")
        box = QMessageBox(QMessageBox.Icon.Question, "Quit Tripane?", "\n\n".join([*said, "Quit anyway?"]),
                          QMessageBox.StandardButton.Cancel, self)
        quit_button = box.addButton("Quit", QMessageBox.ButtonRole.AcceptRole)
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.buttonClicked.connect(lambda button: button is quit_button and self.close_now())
        open_once(box)
        return box

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.ActivationChange and self.isActiveWindow() and not self._shut_down:
            # Back from another editor: its save is shown at once, not at the next look (FOLLOW_MS).
            self._take_outside_edits()
        elif event.type() == QEvent.Type.WindowStateChange and not self._shut_down:
            self._quiet_while_minimized()

    def _quiet_while_minimized(self) -> None:
        """Minimized, the window stops looking for other Tripanes' changes (it woke the computer
        every FOLLOW_MS for no one), and the conversation stops drawing the reply being streamed;
        shown again, it looks at once, then every FOLLOW_MS, and the reply is drawn as it is now."""
        if self.isMinimized():
            self._follow_timer.stop()
            return
        if not self._follow_timer.isActive():
            self._follow_timer.start()
            self._follow_others()
        self.chat.shown_again()

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._shut_down:
            event.accept()
            return
        event.ignore()
        # Asked first while the agent is at work (not while it waits for the person or is paused):
        # closing by mistake would stop a long run mid-step.
        working = [s for s in self.workspace.opened() if s.running and s.state.status == "running"]
        # And while a server the agent started runs on for the person, who may be trying it.
        kept = [command for s in self.workspace.opened() for command in s.kept_running()]
        if (working or kept) and not self._quit_confirmed:
            self._confirm_quit(len(working), kept)
            return
        self._shut_down = True
        self.save_layout()
        self.drafts.save()
        self.pane_edits.save()
        # Gone from the screen at once: closing the sessions and the store may wait seconds for
        # work no one can interrupt (the memory index loading on a worker thread, a few seconds
        # after a start), and a window that stays after Quit looks hung. The process ends when
        # the shutdown has. A launch meanwhile opens a window of its own, not this one again.
        self.hide()
        self.caret_rest.stop()
        if self._tray is not None:
            self._tray.hide()
        for listener in self.findChildren(InstanceServer):
            listener.close()
        for dialog in list(self.dialogs.values()):
            dialog.close()
        for pane in self.panes.values():
            pane.bind(None)  # no render may start once the loop winds down
        self.mentions.stop()  # nor a search typed just before
        self.keeper.cancel_all()
        self.shutdown_done = asyncio.ensure_future(self._shutdown())

    async def _shutdown(self) -> None:
        """Stop driving the sessions (their logs stay as they are: a restart continues them)."""
        for bridge in self.bridges.values():
            bridge.detach()
        try:
            await self.workspace.close()
        finally:
            # A long close (a memory index still loading) may outlive the widget when its owner
            # deletes it meanwhile (a test harness does); then there is no one left to tell.
            if qt_alive(self):
                self.closed.emit()


def bring_to_front(window: QWidget) -> None:
    """Show a tool window (or the one already open) above the main window, with the keyboard:
    raised alone, a window shown before stays behind the typing."""
    window.show()
    window.raise_()
    window.activateWindow()
