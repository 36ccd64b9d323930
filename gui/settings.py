"""The window's settings, in QSettings (per user, per platform); the agent's settings also in
core.user_settings' file, which the command line reads. API keys are not here: keyring."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from core.user_settings import (
    SHARED,
    data_dir_from,
    read_settings,
    settings_file,
    write_settings,
)
from gui.qt import QByteArray, QSettings

log = logging.getLogger(__name__)

RECENT_WORKDIRS = 8
RECENT_MODELS = 8


def newest_first(lines: str, entry: str, same: Callable[[str], bool], limit: int) -> str:
    """A list kept one per line, newest first: `entry` on top, an older line for the same thing
    (`same`) dropped, at most `limit` lines."""
    others = [line for line in lines.splitlines() if line.strip() and not same(line)]
    return "\n".join([entry, *others][:limit])


@dataclass
class Preferences:
    model: str = ""
    api_base: str = ""
    context_window: int = 0  # tokens; 0: the model's own (for Ollama: its length, at most 16,384)
    summary_model: str = ""  # a cheaper model for compaction summaries; "": the model itself
    helper_model: str = ""  # a cheaper model that can call tools, for the research helpers; "": the model itself
    reasoning_effort: str = ""  # low | medium | high; "": the model's own way (core/reasoning.py)
    approval: str = "ask"
    max_turns: int = 100
    warn_turn: int = 7
    danger_turn: int = 30
    strike_limit: int = 3
    diagnose_errors: int = 1  # 1: a failure that happens again is diagnosed at once (core/agent/diagnosis.py)
    copy_work_folder: int = 1  # 1: the work folder is copied before the first shell command (core/snapshot.py)
    copies_mb: int = 2048  # what the sessions' copies of work folders take in all, at most (core/copies.py); 0: no cap
    budget_tokens: int = 0
    budget_usd: float = 0.0
    data_dir: str = ""
    answer_wait_min: int = 0  # minutes before the agent goes on with its fallback; 0: it waits for the person
    keep_awake: int = 1  # 1: the computer does not sleep for idleness while an agent works (core/stay_awake.py)
    reflect_after_tasks: int = 0  # 1: reflect on each task as it ends (an int: an INI file has no bools)
    review_days: int = 0  # 1: review a finished day's work when the window first opens after it
    search_provider: str = ""  # the agent's web_search: litellm's name of it (core/web_search.py); "": none
    search_api_base: str = ""  # a SearXNG server's address
    theme: str = "system"  # system (the desktop's light or dark mode, and contrast) | light | dark | contrast-light | contrast-dark
    text_scale: float = 1.0  # × the platform's font size (View → Larger / Smaller text)
    workdir: str = ""  # the folder last used for a new session
    recent_workdirs: str = ""  # folders used for new sessions, newest first, one per line
    recent_models: str = ""  # models sessions used, newest first, one per line: "model<TAB>api_base"
    last_session: str = ""  # the session shown when Tripane closed: shown again at the next start
    sessions_list: int = 1  # 0 while View → Show sessions list is off (an int: an INI file has no bools)

    @property
    def configured(self) -> bool:
        return bool(self.model.strip())

    def recent_folders(self) -> list[str]:
        """The work folders used lately that still exist, newest first."""
        listed = [line for line in self.recent_workdirs.splitlines() if line.strip()]
        return [folder for folder in listed if Path(folder).is_dir()]

    def remember_workdir(self, folder: Path) -> None:
        self.workdir = str(folder)
        self.recent_workdirs = newest_first(self.recent_workdirs, self.workdir, lambda line: Path(line) == folder,
                                            RECENT_WORKDIRS)

    def models_used(self) -> list[tuple[str, str]]:
        """The models sessions used lately, newest first, each with the server it was used at."""
        pairs = (line.split("\t", 1) for line in self.recent_models.splitlines() if line.strip())
        return [(pair[0], pair[1] if len(pair) > 1 else "") for pair in pairs]

    def remember_model(self, model: str, api_base: str | None) -> None:
        self.recent_models = newest_first(self.recent_models, f"{model}\t{api_base or ''}",
                                          lambda line: line.split("\t", 1)[0] == model, RECENT_MODELS)

    def learn_from_sessions(self, used: list[tuple[str, str, str]]) -> None:
        """The work folders and models (with their servers) of the data folder's latest sessions,
        newest first, as (workdir, model, api_base): those of sessions started from the terminal,
        which the window never saw, are offered too, after the ones it remembers. What it
        remembers stays as it is: a server the person chose since is not replaced by an older
        session's."""
        folders = [line for line in self.recent_workdirs.splitlines() if line.strip()]
        models = self.models_used()
        for workdir, model, api_base in used:
            if workdir and not any(Path(folder) == Path(workdir) for folder in folders):
                folders.append(workdir)
            if model and all(known != model for known, _ in models):
                models.append((model, api_base))
        self.recent_workdirs = "\n".join(folders[:RECENT_WORKDIRS])
        self.recent_models = "\n".join(f"{model}\t{api_base}" for model, api_base in models[:RECENT_MODELS])

    def server_of(self, model: str) -> str:
        """The server a model is reached at: the one it was last used at or chosen at in Settings,
        whichever came last (a server corrected in New session is offered again, not the Settings
        typo it corrected); "" for a provider's own (another model does not go to a local server)."""
        used = next((api_base for used, api_base in self.models_used() if used == model), None)
        if used is not None:
            return used
        return self.api_base if model == self.model else ""

    def data_path(self) -> Path:
        return data_dir_from(self.data_dir)

    def shared(self) -> dict[str, object]:
        """The settings the command line uses too."""
        return {key: value for key, value in asdict(self).items() if key in SHARED}


class AppSettings:
    def __init__(self, qsettings: QSettings | None = None):
        """`qsettings`: an INI file instead of the user's settings (tests, `tripane gui --settings`);
        the shared settings are then in a JSON file beside it, not the user's."""
        self.q = qsettings or QSettings("Tripane", "Tripane")
        self.shared_file = Path(qsettings.fileName()).with_suffix(".json") if qsettings else settings_file()

    def load(self) -> Preferences:
        prefs = Preferences()
        for field in fields(Preferences):
            stored = self.q.value(f"prefs/{field.name}")
            if stored is None:
                continue
            try:  # a hand-edited or older settings file must not stop the app from starting
                setattr(prefs, field.name, type(getattr(prefs, field.name))(stored))
            except (TypeError, ValueError):
                pass
        shared = read_settings(self.shared_file)
        chosen_here = (prefs.model, prefs.api_base)
        for name, value in shared.items():
            setattr(prefs, name, value)
        if prefs.configured and (prefs.model, prefs.api_base) != chosen_here:
            # The file was edited since (by hand: a server moved to another port): its choice is
            # the newest, or New session would offer the model's server last used here again.
            prefs.remember_model(prefs.model, prefs.api_base)
        if not shared and prefs.configured:  # chosen before the file existed: the command line gets them too
            self._share(prefs)
        return prefs

    def save(self, prefs: Preferences) -> None:
        for name, value in asdict(prefs).items():
            self.q.setValue(f"prefs/{name}", value)
        self.q.sync()
        self._share(prefs)

    def _share(self, prefs: Preferences) -> None:
        try:
            write_settings(prefs.shared(), self.shared_file)
        except OSError as exc:  # the window keeps them in QSettings; only the command line misses them
            log.warning("the settings could not be saved for the command line in %s: %s", self.shared_file, exc)

    def save_one(self, prefs: Preferences, name: str) -> None:
        """One preference, written to disk at once (the session on screen, kept through a crash)."""
        self.q.setValue(f"prefs/{name}", getattr(prefs, name))
        self.q.sync()
        if name in SHARED:
            self._share(prefs)

    def layout(self, key: str) -> QByteArray | None:
        value = self.q.value(f"layout/{key}")
        return value if isinstance(value, QByteArray) else None

    def save_layout(self, key: str, state: QByteArray) -> None:
        self.q.setValue(f"layout/{key}", state)
