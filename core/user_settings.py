"""The person's agent settings, shared by the window and the command line.

Chosen once in the window's Settings (model, server, thresholds, budgets, data folder), they are
also what `tripane run` uses when no --model is given and where every `tripane` command looks for
sessions. They live in a JSON file in the user's config folder, not in QSettings: core never
imports Qt, and on Windows QSettings is the registry. API keys are never here (the keyring).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path

from core.memory.working import atomic_write
from core.paths import APP_NAME, default_data_dir

log = logging.getLogger(__name__)

FILE_NAME = "settings.json"
CONFIG_DIR_VARIABLE = "TRIPANE_CONFIG_DIR"  # another folder for the file (tests, a portable install)
# The shared settings and their defaults; each value read back is of its default's type.
SHARED: dict[str, str | int | float] = {
    "model": "", "api_base": "", "context_window": 0, "summary_model": "", "helper_model": "", "reasoning_effort": "", "approval": "ask",
    "max_turns": 100, "warn_turn": 7, "danger_turn": 30, "strike_limit": 3,
    "diagnose_errors": 1,  # 1: a failure that happens again is diagnosed at once (core/agent/diagnosis.py)
    "copy_work_folder": 1,  # 1: the work folder is copied before the first shell command (core/snapshot.py)
    "copies_mb": 2048,  # what the sessions' copies of work folders take in all, at most (core/copies.py); 0: no cap
    "budget_tokens": 0, "budget_usd": 0.0, "data_dir": "",
    "reflect_after_tasks": 0,  # 1: each task that ends is reflected on (core/memory/reflection.py)
    "review_days": 0,  # 1: a finished day's work is reviewed across its tasks (core/memory/review.py)
    "answer_wait_min": 0,  # minutes a question with a fallback waits for the person (SessionStarted)
    "keep_awake": 1,  # 1: the computer does not sleep for idleness while an agent works (core/stay_awake.py)
    "search_provider": "", "search_api_base": "",  # the agent's web_search (core/web_search.py); "": none
}


def settings_file() -> Path:
    override = os.environ.get(CONFIG_DIR_VARIABLE)
    if override:
        return Path(override) / FILE_NAME
    import platformdirs

    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)) / FILE_NAME


def read_settings(path: Path | None = None) -> dict[str, str | int | float]:
    """The saved settings that are there and readable. A missing file gives {}; a hand-broken one
    gives what can be read of it, logged, so that no command refuses to start over it."""
    path = path or settings_file()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("the settings in %s cannot be read (%s); the defaults are used", path, exc)
        return {}
    if not isinstance(raw, dict):
        log.warning("the settings in %s are not a JSON object; the defaults are used", path)
        return {}
    found = {}
    for key, default in SHARED.items():
        if key in raw and not isinstance(raw[key], (dict, list, bool)):
            try:
                found[key] = type(default)(raw[key])
            except (TypeError, ValueError):
                log.warning("the setting %s in %s is not a %s; its default is used", key, path, type(default).__name__)
    return found


def write_settings(values: Mapping[str, object], path: Path | None = None) -> None:
    """Save the shared settings among `values`, whole or not at all. The file's settings this
    version does not know are kept as they were: a later version's, when the person went back to
    this one, are there again when they return to it."""
    path = path or settings_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps({**_unknown_settings(path), **{key: values[key] for key in SHARED if key in values}},
                                  indent=2, ensure_ascii=False) + "\n")


def _unknown_settings(path: Path) -> dict[str, object]:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # (none yet, or unreadable: read_settings said so)
        return {}
    return {key: value for key, value in raw.items() if key not in SHARED} if isinstance(raw, dict) else {}


def data_dir_from(saved: str) -> Path:
    """The data folder a saved setting names, or the platform's (TRIPANE_DATA_DIR, if set)."""
    return Path(saved).expanduser() if saved.strip() else default_data_dir()


def saved_data_dir() -> Path:
    return data_dir_from(str(read_settings().get("data_dir", "")))
