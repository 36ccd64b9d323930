"""Go on with another model: the session's model, server and window, for the rest of it."""

from __future__ import annotations

from core.agent.state import SessionState
from core.session import check_window
from gui.dialogs.forms import context_window_spin, error_label, model_combo
from gui.qt import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen, grow_with_content
from gui.settings import Preferences
from gui.widgets.wrapped_label import WrappedLabel

WHAT_STAYS = ("The conversation, the plan, the findings and the work folder stay as they are; the next "
              "request goes to this model. A model with a smaller window compacts the context first, and "
              "the provider's cache starts again (the first request is billed in full).")


class ChangeModelDialog(QDialog):
    def __init__(self, state: SessionState, prefs: Preferences, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("change_model")
        self.setWindowTitle("Change model — Tripane")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        # The session's own, the one chosen in Settings (where a fix is usually made first), and
        # the ones used lately.
        self.model = model_combo(state.model, [state.model, prefs.model, *(m for m, _ in prefs.models_used())])
        self.model.lineEdit().selectAll()
        form.addRow("Model:", self.model)
        self.api_base = QLineEdit(state.api_base or "")
        self.api_base.setPlaceholderText("only for local or self-hosted servers")
        form.addRow("API base:", self.api_base)
        self.context_window = context_window_spin(state.context_window or 0)
        form.addRow("Context window:", self.context_window)
        layout.addLayout(form)
        self.prefs = prefs
        self.model.textActivated.connect(self._server_of)
        note = WrappedLabel(WHAT_STAYS)
        note.setObjectName("muted")
        layout.addWidget(note)
        self.error = error_label()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        buttons.addButton("Change model", QDialogButtonBox.ButtonRole.AcceptRole).setDefault(True)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        fit_to_screen(self, 560, self.sizeHint().height())
        grow_with_content(self)

    def _server_of(self, model: str) -> None:
        """A model picked from the list brings its server along (a local model's address)."""
        self.api_base.setText(self.prefs.server_of(model))

    def chosen(self) -> tuple[str, str | None, int | None]:
        return (self.model.currentText().strip(), self.api_base.text().strip() or None,
                self.context_window.value() or None)

    def _accept(self) -> None:
        model, _api_base, window = self.chosen()
        if not model:
            self.error.setText("Enter a model.")
            return
        try:
            check_window(window)
        except ValueError as exc:
            self.error.setText(f"{str(exc)[:1].upper()}{str(exc)[1:]}.")
            return
        self.accept()
