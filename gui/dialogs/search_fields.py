"""Settings → Web search: the provider the agent's web_search uses, its key (kept in the keyring,
as a model's) or the address of a SearXNG server of the person's own, and a test search."""

from __future__ import annotations

import os
from collections.abc import Callable

from core.model_names import api_base_problem
from core.secrets import NoKeyring, hold_api_key, set_api_key, stored_key
from core.web_search import PROVIDERS, SearchFailed, SearchSetup, provider_named, search
from gui.dialogs.connection import UNTIL_CLOSED
from gui.qt import (
    QComboBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QObject,
    QPushButton,
    QWidget,
)
from gui.settings import Preferences
from gui.tasks import TaskKeeper
from gui.widgets.wrapped_label import WrappedLabel

TEST_QUERY = "Tripane agent supervisor"
NONE_CHOSEN = "None: the agent cannot search the web"


class SearchFields(QObject):
    def __init__(self, prefs: Preferences, keeper: TaskKeeper, dialog: QWidget, error: QLabel):
        super().__init__(dialog)
        self.keeper, self.dialog, self.error = keeper, dialog, error
        self.provider = QComboBox()
        self.provider.addItem(NONE_CHOSEN, "")
        for provider in PROVIDERS:
            self.provider.addItem(provider.label, provider.name)
        self.provider.setCurrentIndex(max(0, self.provider.findData(prefs.search_provider)))
        self.api_key = QLineEdit()
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_base = QLineEdit(prefs.search_api_base)
        self.api_base.setPlaceholderText("the server's address, as http://localhost:8888")
        self.note = WrappedLabel("")
        self.test_button = QPushButton("Test search")
        self.test_button.clicked.connect(self._test)
        self.test_result = QLabel("")
        self.test_result.setObjectName("search_test_result")
        self.test_result.setWordWrap(True)
        self.provider.currentIndexChanged.connect(self._follow)
        self._follow()

    def add_rows(self, form: QFormLayout) -> None:
        intro = WrappedLabel("The agent's web_search finds pages it does not know the address of (documentation, "
                             "papers, issues), through the search service chosen here; it reads them with web_fetch.")
        form.addRow(intro)
        form.addRow("Search with:", self.provider)
        form.addRow("API key:", self.api_key)
        form.addRow("Server:", self.api_base)
        form.addRow("", self.note)
        form.addRow(self.test_button, self.test_result)

    def chosen(self) -> SearchSetup | None:
        provider = provider_named(self.provider.currentData() or "")
        return SearchSetup(provider, self.api_base.text().strip()) if provider else None

    def problem(self) -> str:
        """Why what is chosen cannot be searched with ("" when it can be tried)."""
        setup = self.chosen()
        if setup is None or not setup.provider.own_server:
            return ""
        if not setup.api_base:
            return "Web search: give the SearXNG server's address (as http://localhost:8888)."
        return f"Web search: {problem}" if (problem := api_base_problem(setup.api_base)) else ""

    def save(self, prefs: Preferences) -> None:
        setup = self.chosen()
        prefs.search_provider = setup.provider.name if setup else ""
        prefs.search_api_base = self.api_base.text().strip()

    def _follow(self) -> None:
        """The fields the chosen provider takes, and what is said of its key."""
        setup = self.chosen()
        own = bool(setup and setup.provider.own_server)
        self.api_base.setEnabled(own)
        self.api_key.setEnabled(bool(setup) and not own)
        self.test_button.setEnabled(bool(setup))
        self.test_result.clear()
        if setup is None:
            self.api_key.setPlaceholderText("")
            self.note.setText("")
            return
        provider = setup.provider
        if own:
            self.api_key.setPlaceholderText("none: a SearXNG server takes none")
            self.note.setText(f"Your SearXNG server must give JSON results: “json” listed under search → formats "
                              f"in its settings.yml ({provider.site}).")
            return
        self.note.setText(f"A key from {provider.site}. It is stored in the system keyring, never in a file"
                          + (f"; {provider.variable} in Tripane's environment is used when none is stored."
                             if provider.variable else "."))
        self.keeper.in_thread(stored_key, provider.key_name, on_success=lambda key: self._say_key(provider, key),
                              owner=self.dialog, name="look up the search key")

    def _say_key(self, provider, key: str | None) -> None:
        if self.chosen() is None or self.chosen().provider != provider:
            return  # another chosen meanwhile
        if key:
            self.api_key.setPlaceholderText("stored in the keyring: leave empty to keep it")
        elif os.environ.get(provider.variable):
            self.api_key.setPlaceholderText(f"{provider.variable} is set: leave empty to use it")
        else:
            self.api_key.setPlaceholderText(f"paste the key from {provider.site}")

    def store_key_then(self, then: Callable[[], None]) -> None:
        """Store a typed key in the keyring (on a worker thread: a locked keyring may ask for its
        password), then go on; where none can keep it, it is held until Tripane closes, and said so."""
        setup, key = self.chosen(), self.api_key.text().strip()
        if setup is None or setup.provider.own_server or not key:
            then()
            return
        name = setup.provider.key_name

        def stored(_none: None) -> None:
            self.api_key.clear()
            if self.dialog.isVisible():
                then()

        def refused(problem: BaseException) -> None:
            hold_api_key(name, key)  # for this run: the person gave it to be used
            self.api_key.clear()
            reason = str(problem) if isinstance(problem, NoKeyring) else f"{type(problem).__name__}: {problem}"
            self.error.setText(f"Web search: the key could not be stored ({reason}), so it is {UNTIL_CLOSED}.")
            if self.dialog.isVisible():
                then()

        self.keeper.in_thread(set_api_key, name, key, on_success=stored, on_failure=refused,
                              name="store the search key", owner=self.dialog)

    def _test(self) -> None:
        if problem := self.problem():
            self.test_result.setText(f"✗ {problem.removeprefix('Web search: ')}")
            return
        self.test_button.setEnabled(False)
        self.test_result.setText("Searching…")
        work = search(TEST_QUERY, 3, self.chosen(), key=self.api_key.text().strip())
        self.keeper.run(work, on_success=self._found, on_failure=self._failed, owner=self.dialog)

    def _found(self, results) -> None:
        self.test_button.setEnabled(True)
        first = f": “{results[0].title}”, {results[0].url}" if results else ""
        self.test_result.setText(f"✓ It answered with {len(results)} result{'s' * (len(results) != 1)}{first}")

    def _failed(self, error: BaseException) -> None:
        self.test_button.setEnabled(True)
        said = str(error) if isinstance(error, SearchFailed) else f"{type(error).__name__}: {error}"
        self.test_result.setText(f"✗ {said}")
