"""Where Tripane keeps things: the user's data folder and the bundled resources."""

from __future__ import annotations

import os
from functools import cache
from importlib import resources
from pathlib import Path

APP_NAME = "Tripane"
DB_NAME = "tripane.db"


def missing_work_folder(workdir: str | Path) -> str | None:
    """What to tell the person when a session's work folder is gone, or None while it is there."""
    if Path(workdir).is_dir():
        return None
    return (f"The work folder {workdir} is not there any more (moved, renamed, or on a drive that is not "
            "connected). Put it back and continue, or give the session the folder's new place (Session → Move "
            "work folder…, or tripane resume ID --workdir FOLDER); this session's history and files are kept.")


def default_data_dir() -> Path:
    override = os.environ.get("TRIPANE_DATA_DIR")
    if override:
        return Path(override)
    import platformdirs  # only needed when no folder was given

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


# Held by the process that runs a session (or writes to it), in the session's folder. The OS frees it
# when that process dies, so a crash leaves nothing to clean up.
RUN_LOCK = ".run.lock"


def session_dir(data_dir: Path, session_id: str) -> Path:
    return data_dir / "sessions" / session_id


@cache
def resource_text(*parts: str) -> str:
    node = resources.files("resources")
    for part in parts:  # one at a time: a frozen app's MultiplexedPath.joinpath takes a single name
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")
