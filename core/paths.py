"""Where Tripane keeps things: the user's data folder and the bundled resources."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from pathlib import Path, PurePosixPath

APP_NAME = "Tripane"
DB_NAME = "tripane.db"


def missing_work_folder(workdir: str | Path) -> str | None:
    """What to tell the person when a session's work folder is gone, or None while it is there."""
    if Path(workdir).is_dir():
        return None
    return (f"The work folder {workdir} is not there any more (moved, renamed, or on a drive that is not "
            "connected). Put it back and continue, or give the session the folder's new place (Session → Move "
            "work folder…, or tripane resume ID --workdir FOLDER); this session's history and files are kept.")


def common_folder(folders: Iterable[str]) -> str:
    """The deepest folder that holds all of `folders` (relative, with "/"; "" or "." is the top)."""
    common: list[str] = []
    for parts in zip(*(PurePosixPath(folder).parts for folder in folders)):
        if len(set(parts)) != 1:
            break
        common.append(parts[0])
    return "/".join(common)


def named_files(paths: Sequence[str], listed: int) -> str:
    """The first `listed` of `paths`, then how many more and the folder all are in: the names of the
    600 files a formatter changed filled the chat, the progress file and the agent's context."""
    more = len(paths) - listed
    if more <= 0:
        return ", ".join(paths)
    where = common_folder(folder_of(path) for path in paths)
    return (", ".join(paths[:listed]) + f" and {more:,} more ({len(paths):,} files"
            + (f", all in {where}/" if where else "") + ")")


def shortened_path(path: str, limit: int) -> str:
    """`path` in at most `limit` characters, its file's name kept: the folders lose their middle
    ("litellm/llms/…/adapters/transformation.py"), and only a name longer than the limit itself
    is cut, in its middle. Cut at the end, a tool card's path lost the name it was about."""
    if len(path) <= limit:
        return path
    separator = "\\" if "\\" in path and "/" not in path else "/"
    folder, _, name = path.rpartition(separator)
    room = limit - len(name) - 2  # (for "…" and the separator)
    if not folder or room < 4:
        half = (limit - 1) // 2
        return path[:half] + "…" + path[len(path) - (limit - 1 - half):]
    head = (room + 1) // 2
    return folder[:head] + "…" + folder[len(folder) - (room - head):] + separator + name


def folder_of(path: str) -> str:
    """A relative file path's folder ("." for one at the top)."""
    return PurePosixPath(path).parent.as_posix()


def remove_folder(folder: Path) -> None:
    """Delete `folder` and all in it, as far as it can be (what cannot is left). A read-only file
    is made writable first: Windows will not delete one, and git writes its objects read-only."""
    import shutil
    import stat
    import sys

    def writable_then_again(function, path, _error) -> None:
        try:
            os.chmod(path, stat.S_IWRITE | stat.S_IREAD)
            function(path)
        except OSError:
            pass

    if sys.version_info >= (3, 12):  # (onerror is deprecated there; the handler takes both)
        shutil.rmtree(folder, onexc=writable_then_again)
    else:
        shutil.rmtree(folder, onerror=writable_then_again)


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


def data_dir_of(session_folder: Path) -> Path:
    """The data folder a session's folder (session_dir's) is in."""
    return session_folder.parent.parent


HOME_FOLDER_NOTE = "your home folder: the agent may read and change any of your files"  # ("This is …")


def is_home_folder(folder: Path) -> bool:
    """Whether `folder` is the person's home folder (the work folder a first start offers)."""
    try:
        return folder.expanduser().resolve() == Path.home().resolve()
    except (OSError, RuntimeError):  # (a path that cannot be resolved, or no home: not it)
        return False


def within(path: Path, folder: Path) -> Path | None:
    """`path` relative to `folder` (both resolved) when it is in it, or is it; else None."""
    try:
        return path.resolve().relative_to(folder.resolve())
    except ValueError:
        return None


@cache
def resource_text(*parts: str) -> str:
    node = resources.files("resources")
    for part in parts:  # one at a time: a frozen app's MultiplexedPath.joinpath takes a single name
        node = node.joinpath(part)
    return node.read_text(encoding="utf-8")
