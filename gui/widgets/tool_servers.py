"""Settings' Tool servers page: the MCP servers whose tools new sessions are given, added, changed,
imported from another client, turned on and off, and checked (started, their tools listed).
Changes take effect when the settings are saved; typed secrets go to the keyring then."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from core.secrets import forget_key, keyring_backend
from core.text import counted
from core.tool_servers.config import (
    ServerConfig,
    ServersFileError,
    other_clients_files,
    read_servers,
    save_secret,
    secret_key,
    servers_file,
    servers_of_file,
    write_servers,
)
from core.tool_servers.pool import ServerPool
from core.tool_servers.tools import offered_tools, request_tokens
from gui.qt import (
    QFileDialog,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    Qt,
    QVBoxLayout,
    QWidget,
)
from gui.tasks import TaskKeeper
from gui.widgets.whole_lines import WholeLines
from gui.widgets.wrapped_label import WrappedLabel

log = logging.getLogger(__name__)

INTRO = ("Programs that give the agent more tools over the Model Context Protocol (MCP): a database's, an issue "
         "tracker's, your company's documentation. New sessions are given the tools of the servers ticked; a session "
         "keeps the tools it began with. A tool its server marks as changing nothing runs without asking; any other "
         "is asked about as a command is.")


class ToolServersPage(QWidget):
    def __init__(self, keeper: TaskKeeper, error: Callable[[str], None], parent: QWidget | None = None):
        super().__init__(parent)
        self.keeper = keeper
        self.say_error = error
        self.servers: list[ServerConfig] = read_servers()
        self.typed: dict[tuple[str, str], str] = {}  # (server, variable) → a secret typed, kept on save
        self.forgotten: set[tuple[str, str]] = set()  # secrets of servers removed or renamed, dropped on save
        self.checked: dict[str, str] = {}  # what a check found, by server
        self.changed = False
        self.keyring_problem: str | None = None  # why secrets cannot be kept here (None: they can)
        keeper.in_thread(keyring_backend, on_success=lambda found: setattr(self, "keyring_problem", found[1]),
                         owner=self)
        layout = QVBoxLayout(self)
        intro = WrappedLabel(INTRO)
        intro.setObjectName("muted")
        layout.addWidget(intro)
        self.list = QListWidget()
        self.list.setObjectName("tool_servers")
        self.list.setAccessibleName("Tool servers")
        self.list.setItemDelegate(WholeLines(self.list))
        # A long command wraps rather than scrolling sideways out of sight.
        self.list.setWordWrap(True)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setSpacing(2)
        self.list.itemChanged.connect(self._ticked)
        self.list.itemDoubleClicked.connect(lambda _item: self.edit())
        self.list.currentItemChanged.connect(lambda *_: self._enable())
        layout.addWidget(self.list, 1)
        self.note = WrappedLabel("")  # what an import brought
        self.note.setObjectName("muted")
        self.note.hide()
        layout.addWidget(self.note)
        row = QHBoxLayout()
        self.add_button = self._button(row, "A&dd…", self.add, "Add a server by the command that starts it")
        self.edit_button = self._button(row, "C&hange…", self.edit, "Change the selected server (or double-click it)")
        self.remove_button = self._button(row, "R&emove", self.remove, "Remove the selected server, and its secrets "
                                                                       "from the keyring when the settings are saved")
        self.import_button = self._button(row, "&Import…", self.import_from_file,
                                          "The servers of another MCP client's file: Claude Desktop's "
                                          "claude_desktop_config.json, Cursor's or VS Code's mcp.json, a project's "
                                          ".mcp.json")
        row.addStretch(1)
        self.check_button = self._button(row, "Chec&k", self.check, "Start the servers ticked (and the one selected) "
                                                                    "in your home folder and list their tools")
        layout.addLayout(row)
        self._fill()

    @staticmethod
    def _button(row: QHBoxLayout, text: str, do: Callable[[], object], tip: str) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.clicked.connect(lambda: do())
        row.addWidget(button)
        return button

    # --- the list --------------------------------------------------------------------------------

    def _fill(self, current: str | None = None) -> None:
        self.list.blockSignals(True)
        self.list.clear()
        for server in self.servers:
            found = self.checked.get(server.name)
            item = QListWidgetItem(f"{server.name}\n    {server.command_line()}" + (f"\n    {found}" if found else ""))
            item.setData(Qt.ItemDataRole.UserRole, server.name)
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if server.enabled else Qt.CheckState.Unchecked)
            item.setToolTip(found or "Tick it to give its tools to new sessions")
            self.list.addItem(item)
            if server.name == current:
                self.list.setCurrentItem(item)
        if self.list.count() == 0:
            placeholder = QListWidgetItem("None yet: Add a server by its command, or Import those of another client "
                                          f"(they are kept in {servers_file()})")
            placeholder.setFlags(Qt.ItemFlag.NoItemFlags)
            self.list.addItem(placeholder)
        self.list.blockSignals(False)
        self._enable()

    def _enable(self) -> None:
        chosen = self.selected() is not None
        self.edit_button.setEnabled(chosen)
        self.remove_button.setEnabled(chosen)
        self.check_button.setEnabled(bool(self.servers))

    def selected(self) -> ServerConfig | None:
        item = self.list.currentItem()
        name = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        return next((server for server in self.servers if server.name == name), None)

    def _ticked(self, item: QListWidgetItem) -> None:
        name = item.data(Qt.ItemDataRole.UserRole)
        on = item.checkState() == Qt.CheckState.Checked
        self.servers = [replace(s, enabled=on) if s.name == name else s for s in self.servers]
        self.changed = True

    # --- changes ---------------------------------------------------------------------------------

    def add(self):
        return self._open_editor(None)

    def edit(self):
        server = self.selected()
        return self._open_editor(server) if server is not None else None

    def _open_editor(self, server: ServerConfig | None):
        from gui.dialogs.tool_server import ToolServerDialog  # (only when asked for)

        dialog = ToolServerDialog(server, {s.name for s in self.servers}, self, self.keyring_problem)
        dialog.accepted.connect(lambda: self._edited(server, dialog.server, dialog.secrets))
        dialog.open()
        return dialog

    def _edited(self, before: ServerConfig | None, server: ServerConfig | None, secrets: dict[str, str]) -> None:
        if server is None:
            return
        if before is not None and before.name != server.name:  # renamed: what is kept under its old name goes
            self.forgotten.update((before.name, variable) for variable in before.secret_env)  # (the dialog asked
            self.typed = {key: value for key, value in self.typed.items() if key[0] != before.name}  # for them again)
        if before is not None:
            self.forgotten.update((server.name, variable) for variable in before.secret_env
                                  if variable not in server.secret_env and before.name == server.name)
        for variable, value in secrets.items():
            self.typed[(server.name, variable)] = value
            self.forgotten.discard((server.name, variable))
        self.servers = ([server if s is before else s for s in self.servers] if before is not None
                        else [*self.servers, server])
        self.checked.pop(server.name, None)
        self.changed = True
        self._fill(server.name)

    def remove(self) -> None:
        server = self.selected()
        if server is None:
            return
        self.servers = [s for s in self.servers if s is not server]
        self.forgotten.update((server.name, variable) for variable in server.secret_env)
        self.typed = {key: value for key, value in self.typed.items() if key[0] != server.name}
        self.changed = True
        self._fill()

    def import_from_file(self) -> QFileDialog:
        """Choose another client's file (opened where the first one found on this computer is)."""
        found = other_clients_files()
        dialog = QFileDialog(self, "Import the tool servers of another MCP client", str(found[0] if found else Path.home()),
                             "MCP settings (*.json);;All files (*)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.fileSelected.connect(lambda path: self.import_file(Path(path)))
        dialog.open()
        return dialog

    def import_file(self, source: Path) -> None:
        try:
            found = servers_of_file(source)
        except ServersFileError as exc:
            self.say_error(f"Nothing imported: {exc}")
            return
        names = {server.name for server in found.servers}
        self.servers = [s for s in self.servers if s.name not in names] + found.servers
        self.typed.update(found.secrets)
        self.forgotten.difference_update(found.secrets)
        self.changed = bool(found.servers) or self.changed
        skipped = f" Skipped: {'; '.join(found.skipped)}." if found.skipped else ""
        self.note.setText(f"Imported {counted(len(found.servers), 'server')} from {source.name}; they are kept when "
                          f"you save the settings.{skipped}" if found.servers else
                          f"No server to import from {source.name}.{skipped}")
        self.note.show()
        self._fill(found.servers[0].name if found.servers else None)

    # --- checking --------------------------------------------------------------------------------

    def check(self):
        """Start the servers as they are here (typed secrets included) and say what each offers."""
        chosen = self.selected()
        servers = [s for s in self.servers if s.enabled or s is chosen]  # (an unticked one: when selected)
        if not servers:
            return None
        pool = ServerPool(lambda: [replace(s, enabled=True) for s in servers], self.typed)
        self.check_button.setEnabled(False)
        self.check_button.setText("Checking…")
        for server in servers:
            self.checked[server.name] = "… starting"
        self._fill(chosen.name if chosen else None)

        async def listed():
            try:
                return await pool.list_all(Path.home())
            finally:
                await pool.close_all()

        def done(found) -> None:
            offered = offered_tools(found.tools, ())
            failed = dict(found.failed)
            for server in servers:
                tools = [tool for tool in offered if tool.server == server.name]
                self.checked[server.name] = (
                    f"✗ {failed[server.name]}" if server.name in failed else
                    f"✓ {counted(len(tools), 'tool')}, about {request_tokens(tools):,} tokens in each request: "
                    f"{', '.join(tool.offered_as for tool in tools)}")
            self._checked(chosen)

        def failed(exc: BaseException) -> None:
            log.warning("checking the tool servers failed", exc_info=exc)
            for server in servers:
                self.checked[server.name] = f"✗ {exc}"
            self._checked(chosen)
        return self.keeper.run(listed(), done, failed, owner=self)

    def _checked(self, chosen: ServerConfig | None) -> None:
        self.check_button.setText("Chec&k")
        self._fill(chosen.name if chosen else None)

    # --- saving ----------------------------------------------------------------------------------

    def store_then(self, then: Callable[[], None], on_refused: Callable[[str], None]) -> None:
        """Keep the typed secrets in the keyring and drop the forgotten ones (on a worker thread: a
        locked keyring asks for its password), write the servers' file, then go on."""
        if not self.changed and not self.typed and not self.forgotten:
            then()
            return
        typed, forgotten, servers = dict(self.typed), set(self.forgotten), list(self.servers)

        def keep() -> list[str]:
            for server, variable in forgotten:
                forget_key(secret_key(server, variable))
            held = [f"{variable} ({server})" for (server, variable), value in typed.items()
                    if save_secret(server, variable, value)]
            write_servers(servers)
            return held

        def kept(held: list[str]) -> None:
            self.typed, self.forgotten, self.changed = {}, set(), False
            if held:
                log.warning("no keyring: %s held until Tripane quits", ", ".join(held))
            then()

        self.keeper.in_thread(keep, on_success=kept, on_failure=lambda exc: on_refused(
            f"The tool servers could not be saved: {exc}"), owner=self)
