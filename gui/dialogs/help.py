"""The Help menu's texts: the commands and their keyboard shortcuts, read from the window's own
actions so the list cannot drift from them, and what a bug report needs (version, folders, platform)."""

from __future__ import annotations

import html
import platform
import sys
from pathlib import Path

from core.build import version_text
from core.logs import log_path
from gui.qt import QAction, QKeySequence, qVersion

# Keys bound to a widget rather than to a menu action.
WIDGET_SHORTCUTS = (("Delete the selected session (in the session list)", ("Delete",)),
                    ("The start / the end of the conversation (in it)", ("Ctrl+Home", "Ctrl+End")),
                    ("The messages you sent (in the empty message box)", ("Up", "Down")),
                    ("A question window's button, a dialog's field (its letter underlined while Alt is held)",
                     ("Alt+letter",)),
                    ("Send what you typed in a question window, with its button", ("Ctrl+Return",)))


def native(keys: QKeySequence | str) -> str:
    """Keys as this platform writes them (⌘ on macOS for Ctrl); words (Alt+letter) as they are."""
    return QKeySequence(keys).toString(QKeySequence.SequenceFormat.NativeText) if keys != "Alt+letter" else keys


def command_rows(actions: dict[str, QAction]) -> list[tuple[str, str, str, QAction | None]]:
    """The rows of F1's list (gui/dialogs/commands.py): each menu command, with its menu and its
    keys, in the menus' order; then the keys widgets take themselves."""
    from gui.menus import COMMANDS

    rows: list[tuple[str, str, str, QAction | None]] = [
        (menu.replace("&", ""), actions[name].text().replace("&", ""), native(actions[name].shortcut()), actions[name])
        for menu, *_, name in COMMANDS if name in actions]
    rows += [("", what, " / ".join(map(native, keys)), None) for what, keys in WIDGET_SHORTCUTS
             if not (keys == ("Alt+letter",) and sys.platform == "darwin")]  # (Qt gives buttons none there, as the Mac)
    return rows


def about_html(data_dir: Path) -> str:
    return (f"<b>Tripane {html.escape(version_text())}</b><br>A desktop supervisor for LLM agents.<br><br>"
            f"Sessions: {html.escape(str(data_dir))}<br>"
            f"Log: {html.escape(str(log_path(data_dir)))}<br><br>"
            f"Python {platform.python_version()} · Qt {qVersion()} · {html.escape(platform.platform())}")
