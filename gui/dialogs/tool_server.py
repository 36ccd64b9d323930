"""Add or change one tool server: its name, the command that starts it, its environment (secret
values kept in the keyring when Settings are saved), and how long a call may take."""

from __future__ import annotations

from core.secrets import SECRET_NAME
from core.tool_servers.config import (
    DEFAULT_TIMEOUT_S,
    NAME,
    VARIABLE,
    ServerConfig,
    split_command,
)
from gui.dialogs.forms import error_label
from gui.mnemonics import give_labels_keys
from gui.qt import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)
from gui.screen_fit import fit_to_screen, grow_with_content
from gui.widgets.wrapped_label import WrappedLabel

KEPT = "(kept in the keyring)"  # a secret's value as its line shows it: left so, it stays as it is
ABOUT = ("The command starts a program that gives the agent more tools over the Model Context Protocol (MCP), "
         "as in its README: <code>npx -y @modelcontextprotocol/server-github</code>, "
         "<code>uvx mcp-server-git</code>, <code>docker run -i --rm …</code>. It runs in the session's work folder. "
         "It is given your PATH and home folder, not your other keys; give it what it needs below, one NAME=value a "
         "line. A value whose name says it is secret (TOKEN, KEY, PASSWORD, …) is kept in the keyring, never in a "
         "file.")


class ToolServerDialog(QDialog):
    def __init__(self, server: ServerConfig | None, taken: set[str], parent: QWidget | None = None,
                 keyring_problem: str | None = None):
        """`keyring_problem`: why no secret can be kept on this computer (None: they can)."""
        super().__init__(parent)
        self.setObjectName("tool_server")
        self.setWindowTitle(("Change tool server" if server else "Add tool server") + " — Tripane")
        self.before = server
        self.taken = taken - ({server.name} if server else set())
        self.server: ServerConfig | None = None  # as accepted
        self.secrets: dict[str, str] = {}  # typed values of its secret variables, by name
        layout = QVBoxLayout(self)
        about = WrappedLabel(ABOUT)
        about.setObjectName("muted")
        layout.addWidget(about)
        form = QFormLayout()
        self.name = QLineEdit(server.name if server else "")
        self.name.setPlaceholderText("e.g. github (its tools are named mcp_github_…)")
        form.addRow("Name:", self.name)
        self.command = QLineEdit(server.command_line() if server else "")
        self.command.setPlaceholderText("npx -y @modelcontextprotocol/server-filesystem .")
        form.addRow("Command:", self.command)
        self.env = QPlainTextEdit(_env_text(server))
        self.env.setPlaceholderText("GITHUB_PERSONAL_ACCESS_TOKEN=ghp_…\nLOG_LEVEL=info")
        self.env.setTabChangesFocus(True)
        self.env.setAccessibleName("Environment")
        self.env.setFixedHeight(self.env.fontMetrics().lineSpacing() * 5 + 12)
        form.addRow("Environment:", self.env)
        if keyring_problem:  # said before a token is typed, not after it is lost
            self.no_keyring = WrappedLabel(f"{keyring_problem[0].upper()}{keyring_problem[1:]}, so a secret typed here "
                                           "is kept only until Tripane closes. To keep one, set the variable in the "
                                           "environment Tripane starts from: the server is given it from there.")
            self.no_keyring.setObjectName("error")
            form.addRow("", self.no_keyring)
        self.timeout = QSpinBox()
        self.timeout.setRange(5, 3600)
        self.timeout.setSuffix(" s")
        self.timeout.setValue(server.timeout_s if server else DEFAULT_TIMEOUT_S)
        self.timeout.setToolTip("How long one call may take before the agent is told it did not answer.")
        form.addRow("A call may take:", self.timeout)
        self.enabled = QCheckBox("Give its tools to new sessions")
        self.enabled.setChecked(server.enabled if server else True)
        form.addRow("", self.enabled)
        layout.addLayout(form)
        self.error = error_label()
        layout.addWidget(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        give_labels_keys(self)
        fit_to_screen(self, 560)
        grow_with_content(self)
        (self.command if server else self.name).setFocus()

    def _accept(self) -> None:
        name = self.name.text().strip()
        if not NAME.fullmatch(name):
            return self._refuse(self.name, "Name it with letters, digits, - and _ (32 at most, beginning with a letter "
                                           "or digit): its tools are named after it.")
        if name in self.taken:
            return self._refuse(self.name, f"There is a server named {name} already: choose another name.")
        try:
            command = split_command(self.command.text().strip())
        except ValueError:
            return self._refuse(self.command, "The command has a quote that is not closed.")
        if not command:
            return self._refuse(self.command, "Type the command that starts the server, as its README gives it.")
        clear: list[tuple[str, str]] = []
        secret: list[str] = []
        self.secrets = {}
        kept = set(self.before.secret_env) if self.before and self.before.name == name else set()
        for number, line in enumerate(self.env.toPlainText().splitlines(), 1):
            if not line.strip():
                continue
            variable, equals, value = line.strip().partition("=")
            variable = variable.strip()
            if not equals or not variable or any(c.isspace() for c in variable):
                return self._refuse(self.env, f"Line {number} of the environment is not NAME=value.")
            if not SECRET_NAME.search(variable) or VARIABLE.fullmatch(value.strip()):  # (${NAME}: named, not given)
                clear.append((variable, value))
                continue
            if value.strip() == KEPT and variable not in kept:
                return self._refuse(self.env, f"Type {variable}'s value: none is kept for {name}.")
            if value.strip() != KEPT:
                if not value:
                    return self._refuse(self.env, f"Type {variable}'s value, or remove its line.")
                self.secrets[variable] = value
            secret.append(variable)
        self.server = ServerConfig(name=name, command=command[0], args=tuple(command[1:]), env=tuple(clear),
                                   secret_env=tuple(dict.fromkeys(secret)), enabled=self.enabled.isChecked(),
                                   timeout_s=self.timeout.value())
        self.accept()

    def _refuse(self, field: QWidget, why: str) -> None:
        self.error.setText(why)
        field.setFocus()


def _env_text(server: ServerConfig | None) -> str:
    if server is None:
        return ""
    lines = [f"{variable}={value}" for variable, value in server.env]
    lines += [f"{variable}={KEPT}" for variable in server.secret_env]
    return "\n".join(lines)
