"""Start a session: the task, the folder the agent may work in, and the model."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from core.agent.state import SessionState
from core.context.project import INSTRUCTION_FILES
from core.given_files import GIVEN_FOLDER, given_names, hold_given, named
from core.llm import ModelClient
from core.offload import folder_of
from core.paths import HOME_FOLDER_NOTE, is_home_folder
from core.session import SessionConfig, check_window
from core.text import capitalized
from core.tool_servers.config import read_servers
from gui.announcer import said_with
from gui.dialogs.connection import ConnectionFields
from gui.dialogs.forms import (
    add_row_for,
    approval_combo,
    budget_usd_spin,
    context_window_spin,
    effort_combo,
    error_label,
    folder_row,
    on_ctrl_enter,
)
from gui.mnemonics import give_labels_keys
from gui.qt import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    Qt,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen, grow_with_content
from gui.settings import Preferences
from gui.tasks import TaskKeeper
from gui.widgets.pictures import PictureBox, PicturesToGo, not_added, text_for
from gui.workspace import connection_test_client

HOME_NOTE = f"This is {HOME_FOLDER_NOTE}. A project's own folder keeps its work there."


def proposed_workdir(last_used: str, cwd: Path, from_terminal: bool) -> str:
    """The folder a new session offers first. `tripane` typed in a project's folder means that
    project, as `tripane run` does; a launcher's folder (home, a drive's root, the install folder)
    means nothing, so then the folder last used, or home."""
    if from_terminal and cwd.is_dir() and cwd != Path.home() and cwd.parent != cwd:
        return str(cwd)
    return last_used or str(Path.home())


def started_from_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed, or replaced by something that is no file
        return False


class NewSessionDialog(QDialog):
    def __init__(self, prefs: Preferences, parent: QWidget | None = None, keeper: TaskKeeper | None = None,
                 client_factory: Callable[[], ModelClient] = connection_test_client,
                 folder_notes: Callable[[Path], str] = lambda _folder: ""):
        """`folder_notes`: what the person is told of other sessions in a folder (at work there, or
        what they left running there; core.alongside.folder_notes)."""
        super().__init__(parent)
        self.setObjectName("new_session")
        self.setWindowTitle("New session — Tripane")
        self.prefs = prefs
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.task = PictureBox()
        self.task.setPlaceholderText("What should the agent do? Be specific about the result you expect. "
                                     "A screenshot pasted here goes with it. (Ctrl+Enter to start)")
        self.task.show_lines(5.5)
        self.task.setTabChangesFocus(True)  # Tab goes on to the folder, as in any form
        form.addRow("Task:", self.task)
        self.pictures = PicturesToGo()  # (under the task, while there are any)
        self.task.pictures_given.connect(self._take_pictures)
        # A file from elsewhere that cannot go as text (a support bundle): held, its copy made with
        # the session. (The file, the name of its copy.)
        self.given: list[tuple[Path, str]] = []
        self.task.give = self._give
        # (a dropped file that goes by its path; a scan's pages show under the task, in no red line)
        self.task.refused.connect(lambda said: self.error.setText(said))
        form.addRow("", self.pictures)
        # The folders used lately, newest first, to pick from; any other is typed or browsed to.
        self.recent = QComboBox()
        self.recent.setEditable(True)
        self.recent.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.recent.addItems(prefs.recent_folders())
        self.recent.setToolTip("The folder the agent may work in; the list holds the ones used lately")
        self.workdir = self.recent.lineEdit()
        self.task.workdir = lambda: Path(self.workdir.text().strip()).expanduser() if self.workdir.text().strip() else None
        # (The window's last folder; before it ever started a session, the terminal's latest.)
        last_used = prefs.workdir or next(iter(prefs.recent_folders()), "")
        self.workdir.setText(proposed_workdir(last_used, Path.cwd(), started_from_terminal()))
        add_row_for(form, "Work folder:", folder_row(self.workdir, "The folder the agent may work in", self.recent),
                    self.recent)
        # Home is what a first start offers: said, as the agent may then change any of the person's files.
        self.folder_note = QLabel(HOME_NOTE)
        self.folder_note.setObjectName("warning")
        self.folder_note.setWordWrap(True)
        form.addRow("", self.folder_note)
        # Another session's agent at work there: said, as two agents undo each other's work.
        self.folder_notes = folder_notes
        self.alongside_note = QLabel()
        self.alongside_note.setObjectName("warning")
        self.alongside_note.setWordWrap(True)
        form.addRow("", self.alongside_note)
        self.form = form
        self.workdir.textChanged.connect(self._show_folder_note)
        # The model, the server it goes to and its key, as in Settings: a model other than the
        # Settings one goes to the server it was used at (none: its provider's own), shown and
        # editable; one whose key is not stored yet says so, and takes it here.
        self.error = error_label()
        self.connection = connection = ConnectionFields(
            self, self.error, prefs, keeper or TaskKeeper(), client_factory, model=prefs.model,
            api_base=prefs.server_of(prefs.model), offered=[prefs.model, *(model for model, _ in prefs.models_used())],
            again="Start again to go on.", follow_model=True)
        self.model, self.api_base, self.api_key = connection.model, connection.api_base, connection.api_key
        connection.add_rows(form)
        form.setRowVisible(connection.key_note, False)  # shown when there is more to say than where keys are kept
        # Settings' window goes with the Settings model only, as on the command line: another model
        # starts at its own. Here so that Test connection's "set Context window" can be done here.
        self.context_window = context_window_spin(0)
        form.addRow("Context window:", self.context_window)
        self.connection.follow_window(self.context_window)
        self.model.currentTextChanged.connect(self._offer_window)
        self._offer_window(self.model.currentText())
        self.reasoning_effort = effort_combo(prefs.reasoning_effort)
        form.addRow("Reasoning effort:", self.reasoning_effort)
        self.approval = approval_combo(prefs.approval)
        form.addRow("Approvals:", self.approval)
        self.budget_usd = budget_usd_spin(prefs.budget_usd)  # this session's: Settings holds the usual one
        form.addRow("Budget cap, cost:", self.budget_usd)
        self.instructions = QCheckBox()
        self.instructions.setChecked(True)
        self.instructions.setToolTip("Instructions a project keeps for coding agents. They become part of the "
                                     "agent's rules for this session, as the file is when the session starts. A "
                                     "subfolder's own (packages/web/AGENTS.md) are told to the agent when it first "
                                     "lists that folder or reads or writes a file in it.")
        form.addRow("Project rules:", self.instructions)
        # What else the agent gets: the tool servers ticked in Settings, each to untick for this one.
        self.tool_servers: dict[str, QCheckBox] = {}
        if servers := [server.name for server in read_servers() if server.enabled]:
            row = QHBoxLayout()
            for name in servers:
                box = self.tool_servers[name] = QCheckBox(name)
                box.setChecked(True)
                box.setToolTip(f"Give the agent the tools of the tool server {name} (Settings → Tool servers)")
                row.addWidget(box)
            row.addStretch(1)
            form.addRow("Tool servers:", row)
        self.workdir.textChanged.connect(self._show_instructions)
        self._show_instructions()
        layout.addLayout(form)
        self._show_folder_note()  # (once in the dialog: shown before, a parentless label is a window of its own)
        layout.addWidget(self.error)
        self.create_folder = QPushButton("Create the folder and start")
        self.create_folder.setVisible(False)
        self.create_folder.clicked.connect(self._create_folder)
        self.workdir.textChanged.connect(lambda _text: self.create_folder.setVisible(False))
        layout.addWidget(self.create_folder, 0, Qt.AlignmentFlag.AlignLeft)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Start")
        connection.busy_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.config: SessionConfig | None = None
        self.filled_in_like = False  # with another session's task and settings (fill_in_like)
        give_labels_keys(self)  # (Alt and a label's letter: its field)
        on_ctrl_enter(self, self._accept)
        fit_to_screen(self, 620, 320)
        grow_with_content(self)

    def fill_in_like(self, state: SessionState, session_dir: Path | None = None) -> None:
        """The fields as the session `state` runs now: its task and folder, the model it has now
        (after any change) at its server, its reasoning effort and approvals. The files its task
        gave the agent (copies in `session_dir`) are given again, from those copies."""
        config = state.config
        assert config is not None
        self.filled_in_like = True
        self.task.setPlainText(config.task)
        if session_dir is not None:
            kept = folder_of(session_dir) / GIVEN_FOLDER
            self.given = [(kept / name, name) for name in given_names(session_dir) if named(name) in config.task]
        self.workdir.setText(state.workdir)  # where it was moved, if it was
        self.model.setCurrentText(state.model)
        self.api_base.setText(state.api_base or "")  # after the model, whose server the field follows
        self.context_window.setValue(state.context_window or 0)  # (and whose window)
        self.reasoning_effort.setCurrentIndex(max(0, self.reasoning_effort.findData(state.reasoning_effort)))
        self.approval.setCurrentIndex(max(0, self.approval.findData(config.approval)))
        self.budget_usd.setValue(config.budget_usd)
        for name, box in self.tool_servers.items():  # (None: it had those on in Settings then)
            box.setChecked(config.tool_servers is None or name in config.tool_servers)
        self.task.setFocus()

    def _offer_window(self, model: str) -> None:
        self.context_window.setValue(self.prefs.context_window if model.strip() == self.prefs.model.strip() else 0)

    def _take_pictures(self, images: list) -> None:
        self.error.setText(not_added(self.pictures.add(images)))

    def _give(self, source: Path) -> str:
        """A file that cannot go in the task as text, held to be copied into the session as it is
        made; how its agent will name the copy."""
        return named(hold_given(self.given, source))  # (once: dropped again, or made again at a second Start)

    def _create_folder(self) -> None:
        folder = Path(self.workdir.text()).expanduser()
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            self.error.setText(f"The folder {folder} could not be created: {exc.strerror or exc}.")
            return
        self.create_folder.setVisible(False)
        self.error.setText("")
        self._accept()

    def _show_folder_note(self) -> None:
        folder = Path(self.workdir.text().strip() or ".")
        self.form.setRowVisible(self.folder_note, is_home_folder(folder))
        self.alongside_note.setText(self.folder_notes(folder) if self.workdir.text().strip() else "")
        self.form.setRowVisible(self.alongside_note, bool(self.alongside_note.text()))
        said_with(self.recent, (self.folder_note, self.alongside_note), self, own=self.recent.toolTip())

    def _show_instructions(self) -> None:
        """Say which instructions file the agent will follow in the chosen folder, if any."""
        folder = Path(self.workdir.text()).expanduser()
        found = next((name for name in INSTRUCTION_FILES if (folder / name).is_file()), None)
        self.instructions.setEnabled(found is not None)
        self.instructions.setText(f"Follow the folder's {found}" if found else
                                  f"None in this folder ({' or '.join(INSTRUCTION_FILES)})")

    def _accept(self) -> None:
        prefs = self.prefs
        try:
            model = self.model.currentText().strip()
            if not model:
                raise ValueError("Choose a model first (Settings, Ctrl+,).")
            if problem := self.connection.model_problem():
                raise ValueError(problem)
            try:
                check_window(self.context_window.value() or None)
            except ValueError as exc:
                raise ValueError(f"{capitalized(str(exc))}.") from None
            workdir = Path(self.workdir.text()).expanduser()
            if not workdir.is_dir():
                self.create_folder.setVisible(not workdir.exists())  # a new project's: made here
                raise ValueError(f"The work folder {workdir} does not exist." if not workdir.exists()
                                 else f"{workdir} is a file, not a folder.")
            # The summary and helper models chosen in Settings go with its model only, as on the
            # command line; another model goes to its own server, not the Settings model's.
            settings_model = model == prefs.model.strip()
            task = text_for(self.task, workdir).strip()
            self.config = SessionConfig(
                task=task, model=model, workdir=workdir,
                api_base=self.api_base.text().strip() or None,
                context_window=self.context_window.value() or None,
                summary_model=(prefs.summary_model.strip() or None) if settings_model else None,
                helper_model=(prefs.helper_model.strip() or None) if settings_model else None,
                reasoning_effort=self.reasoning_effort.currentData(),
                max_turns=prefs.max_turns, approval=self.approval.currentData(),
                warn_turn=prefs.warn_turn, danger_turn=prefs.danger_turn, strike_limit=prefs.strike_limit,
                diagnose_errors=bool(prefs.diagnose_errors), copy_work_folder=bool(prefs.copy_work_folder),
                budget_tokens=prefs.budget_tokens, budget_usd=self.budget_usd.value(),
                answer_wait_min=prefs.answer_wait_min, project_instructions=self.instructions.isChecked(),
                pictures=self.pictures.held(),
                given=tuple((str(path), name) for path, name in self.given if named(name) in task),
                tool_servers=tuple(name for name, box in self.tool_servers.items() if box.isChecked())
                if self.tool_servers else None,
            )
        except ValueError as exc:
            self.error.setText(str(exc).replace("the task is empty", "Describe the task first."))
            return
        self.connection.store_key_then(self.accept)
