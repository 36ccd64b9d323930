"""The model, its server, its API key and Test connection: the rows Settings, Change model and New
session share.

Change model had only the model and the server: a session moved to another provider whose key was
not stored failed at its next request, and the key could be typed only in Settings, where it was
kept under the Settings model's name (typed there for Claude while Settings held an OpenAI model,
it replaced the OpenAI key)."""

from __future__ import annotations

import os
from collections.abc import Callable

from core.llm import ModelClient, ModelError, is_loopback, is_ollama
from core.model_names import api_base_problem, model_string_problem
from core.providers import Connection, check_connection
from core.secrets import (
    NoKeyring,
    cloud_of,
    hold_api_key,
    key_name,
    key_source,
    key_variable,
    keyring_backend,
    set_api_key,
)
from core.text import capitalized
from gui.announcer import said_with
from gui.dialogs.forms import model_combo, suggest_model_names
from gui.qt import (
    QFormLayout,
    QLabel,
    QLineEdit,
    QObject,
    QPushButton,
    QSpinBox,
    Qt,
    QTimer,
    QWidget,
)
from gui.settings import Preferences
from gui.tasks import TaskKeeper, loop_running
from gui.theme import restyle
from gui.widgets.wrapped_label import WrappedLabel

KEYRING_NOTE = "Keys are stored in the system keyring, never in a file."
UNTIL_CLOSED = "kept only until Tripane closes"  # a key typed where no keyring can store it
# The keyring is asked which key a model would get once typing pauses, not at every keystroke.
KEY_LOOKUP_DELAY_MS = 400


def why_no_key(model: str, api_base: str | None) -> str:
    """Why the model's requests take no key ("" when they take one): its server is on this
    computer, or it signs in as its cloud does (Bedrock, Vertex AI)."""
    if is_ollama(model) or is_loopback(api_base):
        return "none needed by a server on this computer"
    cloud = cloud_of(model)
    return f"none needed: {cloud}'s own sign-in on this computer is used" if cloud else ""


def key_placeholder(model: str, api_base: str, source: str, can_store: bool = True) -> str:
    """What the empty API key field says: which key the model's requests take now (see key_source),
    and, with no keyring to store one in, for how long one pasted is kept."""
    name = key_name(model or "openai/", api_base)
    if source == "held":
        return "a key is held until Tripane closes: leave empty to keep it"
    if source == "keyring":
        return f"a key is stored for {name}: leave empty to keep it"
    if source == "environment":
        return f"leave empty to use {key_variable(model)} from the environment"
    needless = why_no_key(model, api_base)
    if needless:
        return needless
    if not can_store:
        return f"none for {name} yet: paste its key here (see below)"
    return f"none stored for {name} yet: paste its key here"


class ConnectionFields(QObject):
    """The widgets, and the work behind them: storing a typed key (on a worker thread) and testing
    the connection. The dialog lays the widgets out and says what goes wrong in its error line."""

    def __init__(self, dialog: QWidget, error: QLabel, prefs: Preferences, keeper: TaskKeeper,
                 client_factory: Callable[[], ModelClient], *, model: str, api_base: str, offered: list[str],
                 again: str, follow_model: bool = False):
        """`follow_model`: the server follows the model as it is typed, too (the one it was used at,
        none for a model never used): a new session's, where a model typed over a local one must
        not go to the local server."""
        super().__init__(dialog)
        self.dialog, self.error, self.keeper, self.client_factory = dialog, error, keeper, client_factory
        self.again = again  # how to go on once a key could not be stored: "Save again to go on."
        self.model = model_combo(model, offered)
        suggest_model_names(keeper, dialog, self.model)
        # A model used before brings the server it was used at (a local model's address).
        (self.model.currentTextChanged if follow_model else self.model.textActivated).connect(
            lambda chosen: self.api_base.setText(prefs.server_of(chosen.strip())))
        self.api_base = QLineEdit(api_base)
        self.api_base.setPlaceholderText("only for local or self-hosted servers")
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("leave empty to keep the stored key")
        self.key_note = WrappedLabel(KEYRING_NOTE)
        self.test_button = QPushButton("Test connection")
        self.test_button.clicked.connect(self._on_test_clicked)
        self.test_result = QLabel("")
        self.test_result.setObjectName("test_result")
        self.test_result.setWordWrap(True)
        self.busy_button: QPushButton | None = None  # the dialog's own (Save), off while a key is stored
        self._window_field: QSpinBox | None = None  # the dialog's Context window (follow_window)
        self._passed: Connection | None = None  # the last test's answer, while it is shown
        self._keyring_problem: str | None = None
        self._form: QFormLayout | None = None  # the form the rows are in, once added
        self._lookup = QTimer(self)
        self._lookup.setSingleShot(True)
        self._lookup.setInterval(KEY_LOOKUP_DELAY_MS)
        # Not for a dialog closed meanwhile (or never shown): its answer would go nowhere; nor once
        # the event loop has stopped (a test's teardown met "no current event loop" here).
        self._lookup.timeout.connect(lambda: self.dialog.isVisible() and loop_running() and self._look_up_the_key())
        self.model.currentTextChanged.connect(self._lookup.start)
        self.api_base.textChanged.connect(self._lookup.start)
        self._look_up_the_key()
        keeper.in_thread(keyring_backend, on_success=self._show_keyring, owner=dialog)  # it may ask over D-Bus

    def add_rows(self, form: QFormLayout, between: QWidget | None = None) -> None:
        """Model, API base, API key with what is said of it, Test connection; `between`: a line of
        the dialog's own before the test (Settings: whether Ollama runs here)."""
        self._form = form
        form.addRow("Model:", self.model)
        form.addRow("API base:", self.api_base)
        form.addRow("API key:", self.api_key)
        form.addRow("", self.key_note)
        if between is not None:
            form.addRow("", between)
        form.addRow(self.test_button, self.test_result)

    def chosen(self) -> tuple[str, str | None]:
        return self.model.currentText().strip(), self.api_base.text().strip() or None

    def model_problem(self) -> str:
        """Why the model typed cannot be one (a server's address pasted there), or the API base one
        (no http://); "" when they may be."""
        return model_string_problem(self.model.currentText()) or api_base_problem(self.api_base.text())

    def _look_up_the_key(self) -> None:
        model, api_base = self.chosen()

        def found(source: str) -> None:
            if self.chosen() == (model, api_base):  # not retyped meanwhile
                self.api_key.setPlaceholderText(key_placeholder(model, api_base or "", source,
                                                                can_store=not self._keyring_problem))

        self.keeper.in_thread(key_source, model or "openai/", api_base, on_success=found, owner=self.dialog,
                              name="look up the API key")

    def _on_test_clicked(self) -> None:
        self._passed = None
        if problem := self.model_problem():
            self.test_result.setText(f"✗ {problem}")
            return
        self.test_button.setEnabled(False)
        # Disabling the focused button moves the focus on (to Context window, its text selected, where
        # a keystroke would replace it); it comes back when the test ends, unless the person moved it.
        self._focus_moved_to = self.dialog.focusWidget()
        self.test_result.setText("Testing…")
        self.store_key_then(self._test_connection, on_refused=self._test_ended)

    def _test_connection(self) -> None:
        work = check_connection(self.client_factory(), *self.chosen())
        self.keeper.run(work, on_success=self._test_passed, on_failure=self._test_failed, owner=self.dialog)

    def _test_ended(self) -> None:
        self.test_button.setEnabled(True)
        if self.dialog.focusWidget() is self._focus_moved_to:
            self.test_button.setFocus(Qt.FocusReason.OtherFocusReason)

    def follow_window(self, spin: QSpinBox) -> None:
        """The dialog's Context window: a test's answer says the window set there, as it is set."""
        self._window_field = spin
        spin.valueChanged.connect(lambda _value: self._passed is not None and self._show_passed(self._passed))

    def _test_passed(self, connection: Connection) -> None:
        self._test_ended()
        self._show_passed(connection)

    def _show_passed(self, connection: Connection) -> None:
        self._passed = connection
        set_here = self._window_field.value() if self._window_field is not None else 0
        self.test_result.setText(f"✓ Connected. The model replied: {connection.said[:80]} "
                                 f"{connection.details(set_here=set_here)}")

    def _test_failed(self, error: BaseException) -> None:
        self._test_ended()
        self._passed = None
        message = str(error) if isinstance(error, ModelError) else f"{type(error).__name__}: {error}"
        self.test_result.setText(f"✗ {message}")

    def _show_keyring(self, backend: tuple[str, str | None]) -> None:
        """Said before a key is typed, not after: with no keyring, the key goes in the environment."""
        self._keyring_problem = backend[1]
        if self._keyring_problem:
            self._lookup.start()  # the field says so too
            self._say_where_the_key_goes()
            self.model.currentTextChanged.connect(self._say_where_the_key_goes)  # its provider's variable
            self.api_base.textChanged.connect(self._say_where_the_key_goes)  # none for a server here

    def _say_where_the_key_goes(self) -> None:
        """With no keyring, a key typed is held until Tripane closes, and one kept across starts must
        come from the environment: a warning until the model's provider variable is there, and then
        plainly that it is (a red line about a key that is in fact set sends the person looking for
        a problem they do not have). A server of the person's own is sent its own key alone, never
        an environment variable's: for it, a key typed at each start is the only way."""
        # Its row is hidden where there is nothing to say but where keys go (New session), and for
        # a model that takes no key to keep anywhere: a cloud signed in to as the cloud is (Bedrock,
        # Vertex AI), a server on this computer.
        if self._form is not None:
            self._form.setRowVisible(self.key_note, not why_no_key(*self.chosen()))
        problem = self._keyring_problem or ""
        problem = capitalized(problem)
        variable = self._key_variable()
        if os.environ.get(variable) and not self.chosen()[1]:
            self.key_note.setObjectName("")
            self.key_note.setText(f"✓ {variable} is set in Tripane's environment: the agent uses that key. "
                                  f"({problem}, so a key typed here would be {UNTIL_CLOSED}.)")
        else:
            self.key_note.setObjectName("warning")
            self.key_note.setText(f"{problem}, so a key typed here is {UNTIL_CLOSED}: {self._to_keep_it()}.")
        restyle(self.key_note)  # in the warning's colour, or back to the plain one
        said_with(self.api_key, (self.key_note,), self.dialog)

    def _to_keep_it(self) -> str:
        """How a key is kept across starts with no keyring: the provider's variable, or, for a
        server of the person's own (never sent a variable's key), not at all."""
        if self.chosen()[1]:
            return "it is asked for again at the next start"
        return f"to keep it, set the provider's environment variable ({self._key_variable()}, …) where Tripane starts"

    def _key_variable(self) -> str:
        model = self.model.currentText().strip()
        return key_variable(model if model and not self.model_problem() else "openai/")

    def store_key_then(self, then: Callable[[], None], on_refused: Callable[[], None] = lambda: None) -> None:
        """Store a typed key in the keyring, then go on. On a worker thread: a locked keyring asks
        for its password over D-Bus (or the macOS keychain shows its prompt), and the window must
        not freeze while the person answers it."""
        key = self.api_key.text().strip()
        if not key:
            then()
            return
        # Said on the dialog's button, which is off meanwhile (no second press storing the key
        # twice); Cancel stays. Not in the error line: nothing is wrong.
        busy = self.busy_button
        label = busy.text() if busy is not None else ""
        if busy is not None:
            busy.setEnabled(False)
            busy.setText("Storing the key…")

        def done() -> None:
            if busy is not None:
                busy.setText(label)
                busy.setEnabled(True)

        def stored(_none: None) -> None:
            done()
            self.error.clear()
            self.api_key.clear()
            self._lookup.start()  # now stored: the field says so
            if self.dialog.isVisible():  # not closed (Esc) meanwhile
                then()

        def refused(problem: BaseException) -> None:
            done()
            self.api_key.clear()
            hold_api_key(name, key)  # for this run: the person gave it to be used
            self._lookup.start()  # the field says so
            if self._keyring_problem:  # said before it was typed (the note under the field): go on
                self.error.clear()
                if self.dialog.isVisible():
                    then()
                return
            reason = str(problem) if isinstance(problem, NoKeyring) else f"{type(problem).__name__}: {problem}"
            # A keyring runs here, but refused (locked, its prompt dismissed): it is the way to keep it.
            self.error.setText(f"The key could not be stored ({reason}), so it is {UNTIL_CLOSED}: to keep it, type "
                               f"it again once the keyring opens. {self.again}")
            on_refused()

        name = key_name(*self.chosen())  # the server's own
        self.keeper.in_thread(set_api_key, name, key,
                              on_success=stored, on_failure=refused, name="store the API key", owner=self.dialog)
