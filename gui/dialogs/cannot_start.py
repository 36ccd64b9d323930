"""What Tripane offers when its data folder cannot be opened at start.

Someone who starts Tripane from a menu has no `--data-dir` to type: the dialog offers, for a
damaged database, to set it aside (renamed beside itself, nothing deleted) and start a new one;
for any problem, another folder or another try; or to quit, changing nothing.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from core import salvage
from core.store import DamagedDatabase, StoreError, set_aside
from gui.qt import QApplication, QFileDialog, QMessageBox, Qt
from gui.settings import AppSettings

log = logging.getLogger(__name__)

SET_ASIDE, OTHER_FOLDER, TRY_AGAIN, QUIT = "set_aside", "other_folder", "try_again", "quit"
TITLE = "Tripane cannot start"


def describe(error: Exception, data_dir: Path) -> str:
    """The problem in words, without the command-line advice the terminal gets."""
    if isinstance(error, StoreError):
        return error.what
    if isinstance(error, OSError):
        where = error.filename or data_dir
        return f"The data folder cannot be used: {error.strerror or error} ({where})."
    return str(error)


def problem_box(error: Exception, data_dir: Path) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Critical, TITLE, describe(error, data_dir))
    damaged = isinstance(error, DamagedDatabase)
    lines = ["Nothing was changed."]
    if damaged:
        lines.append(f"“Set it aside” renames it {error.path.name}.damaged-DATE in the same folder (nothing is "
                     "deleted) and starts a new database, with the sessions that can still be read from it. Your "
                     "sessions' files stay in their folders.")
    lines.append(f"Data folder: {data_dir}")
    box.setInformativeText("\n\n".join(lines))
    choices = [(SET_ASIDE, "Set it aside and read back what it holds", QMessageBox.ButtonRole.AcceptRole)] if damaged else \
        [(TRY_AGAIN, "Try again", QMessageBox.ButtonRole.AcceptRole)]
    choices += [(OTHER_FOLDER, "Choose another folder…", QMessageBox.ButtonRole.ActionRole),
                (QUIT, "Quit", QMessageBox.ButtonRole.RejectRole)]
    buttons = [box.addButton(text, role) for _, text, role in choices]
    for button, (choice, _, _) in zip(buttons, choices):
        button.setProperty("choice", choice)
    box.setDefaultButton(buttons[0])
    box.setEscapeButton(buttons[-1])
    return box


def ask(error: Exception, data_dir: Path) -> str:
    box = problem_box(error, data_dir)
    box.exec()
    clicked = box.clickedButton()
    return (clicked.property("choice") if clicked is not None else None) or QUIT


def read_back(aside: Path, database: Path) -> str:
    """Put what the damaged database, set aside, still holds into a new one in its place."""
    QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # a large log takes a few seconds
    try:
        saved = salvage.read_back(aside, database)
    except Exception:  # the new database is still there to start with: the window opens on it
        log.exception("reading back the damaged database failed")
        return "nothing could be read back from it (the log file says why)"
    finally:
        QApplication.restoreOverrideCursor()
    return saved.words()


def how_to_go_on(error: Exception, data_dir: Path, settings: AppSettings,
                 remember_folder: bool) -> tuple[Path, str] | None:
    """The data folder to try next and a note for the window (what was done), or None to quit.
    A folder chosen here is remembered unless the folder came from the command line."""
    while True:
        choice = ask(error, data_dir)
        if choice == SET_ASIDE and isinstance(error, DamagedDatabase):
            try:
                aside = set_aside(error.path)
            except OSError as exc:  # Windows: another program has it open
                error = StoreError(f"{error.path} could not be set aside: {exc.strerror or exc}. "
                                   "Close any program that has it open.")
                continue
            return data_dir, f"The damaged database was set aside as {aside.name}; {read_back(aside, error.path)}."
        if choice == OTHER_FOLDER:
            folder = QFileDialog.getExistingDirectory(None, "A data folder for Tripane", str(data_dir.parent))
            if not folder:
                continue
            if not remember_folder:
                return Path(folder), ""
            settings.save(replace(settings.load(), data_dir=folder))
            return Path(folder), f"Tripane keeps its sessions in {folder} from now on (Settings → Application)."
        if choice == TRY_AGAIN:
            return data_dir, ""
        return None
