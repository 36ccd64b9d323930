"""The Help menu's texts: the keyboard shortcuts, read from the window's own actions so the list
cannot drift from them, and what a bug report needs (version, folders, platform)."""

from __future__ import annotations

import html
import platform
import sys
from collections.abc import Iterable
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


def shortcuts_html(actions: Iterable[QAction]) -> str:
    rows = [(action.text().replace("&", ""), native(action.shortcut()))
            for action in actions if not action.shortcut().isEmpty()]
    rows += [(what, " / ".join(map(native, keys))) for what, keys in WIDGET_SHORTCUTS
             if not (keys == ("Alt+letter",) and sys.platform == "darwin")]  # (Qt gives buttons none there, as the Mac)
    cells = "".join(f"<tr><td>{html.escape(what)}</td><td>&nbsp;&nbsp;<b>{html.escape(keys)}</b></td></tr>"
                    for what, keys in rows)
    return f"<table>{cells}</table>"


def about_html(data_dir: Path) -> str:
    return (f"<b>Tripane {html.escape(version_text())}</b><br>A desktop supervisor for LLM agents.<br><br>"
            f"Sessions: {html.escape(str(data_dir))}<br>"
            f"Log: {html.escape(str(log_path(data_dir)))}<br><br>"
            f"Python {platform.python_version()} · Qt {qVersion()} · {html.escape(platform.platform())}")
