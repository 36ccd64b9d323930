"""Go on with another model: the session's model, server and window, for the rest of it."""

from __future__ import annotations

from collections.abc import Callable

from core.agent.state import SessionState
from core.llm import ModelClient
from core.session import check_window
from core.text import capitalized
from gui.dialogs.connection import ConnectionFields
from gui.dialogs.forms import context_window_spin, effort_combo, error_label
from gui.mnemonics import give_labels_keys
from gui.qt import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen, grow_with_content
from gui.settings import Preferences
from gui.tasks import TaskKeeper
from gui.widgets.wrapped_label import WrappedLabel

WHAT_STAYS = ("The conversation, the plan, the findings and the work folder stay as they are; the next "
              "request goes to this model. A model with a smaller window compacts the context first, and "
              "the provider's cache starts again (the first request is billed in full).")


class ChangeModelDialog(QDialog):
    def __init__(self, state: SessionState, prefs: Preferences, keeper: TaskKeeper,
                 client_factory: Callable[[], ModelClient], parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("change_model")
        self.setWindowTitle("Change model — Tripane")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.error = error_label()
        # The session's own, the one chosen in Settings (where a fix is usually made first), and
        # the ones used lately. Another provider's model needs its key: typed here, it is stored
        # under that provider's (or server's) name, as in Settings.
        self.connection = connection = ConnectionFields(
            self, self.error, prefs, keeper, client_factory, model=state.model, api_base=state.api_base or "",
            offered=[state.model, prefs.model, *(m for m, _ in prefs.models_used())],
            again="Change model again to go on.")
        self.model, self.api_base, self.api_key = connection.model, connection.api_base, connection.api_key
        self.model.lineEdit().selectAll()
        connection.add_rows(form)
        self.context_window = context_window_spin(state.context_window or 0)
        form.addRow("Context window:", self.context_window)
        self.connection.follow_window(self.context_window)
        self.reasoning_effort = effort_combo(state.reasoning_effort)
        form.addRow("Reasoning effort:", self.reasoning_effort)
        layout.addLayout(form)
        note = WrappedLabel(WHAT_STAYS)
        note.setObjectName("muted")
        layout.addWidget(note)
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        change = buttons.addButton("Change model", QDialogButtonBox.ButtonRole.AcceptRole)
        change.setDefault(True)
        connection.busy_button = change
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        give_labels_keys(self)  # (Alt and a label's letter: its field)
        fit_to_screen(self, 600)
        grow_with_content(self)

    def chosen(self) -> tuple[str, str | None, int | None, str]:
        return (*self.connection.chosen(), self.context_window.value() or None, self.reasoning_effort.currentData())

    def _accept(self) -> None:
        model, _api_base, window, _effort = self.chosen()
        if not model:
            self.error.setText("Enter a model.")
            return
        if problem := self.connection.model_problem():
            self.error.setText(problem)
            return
        try:
            check_window(window)
        except ValueError as exc:
            self.error.setText(f"{capitalized(str(exc))}.")
            return
        self.connection.store_key_then(self.accept)
