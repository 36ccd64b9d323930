"""Files the person gives the agent from outside the work folder that cannot go in a message as text:
a customer's support bundle from Downloads, a database, a 40 MB log. A copy is kept in the session's
offload/given/, which the file tools read as `offload:given/NAME` (an archive's files as
`offload:given/bundle.zip/logs/app.log`), and the message names it so.

Before, only the file's path went in, with "copy it into the work folder": the agent reads nothing
outside it, and the person had to put a customer's files in their project to have them read.
"""

from __future__ import annotations

import filecmp
import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from core.offload import folder_of
from core.store import as_disk_full
from core.tools.context import OFFLOAD_SCHEME

GIVEN_FOLDER = "given"  # of the session's offload/
GIVEN_MAX_BYTES = 256 * 2**20  # copied as it is dropped, the window waiting (about a second here): more, by its path


class NotGiven(ValueError):
    """Why a file cannot be given as a copy (said to the person)."""


def givable(source: Path) -> None:
    """NotGiven when `source` is not a file that can be copied for the agent."""
    try:
        if not source.is_file():
            raise NotGiven(f"{source.name} is not a file")
        size = source.stat().st_size
    except OSError as exc:
        raise NotGiven(f"{source.name} could not be read ({exc.strerror or exc})") from None
    if size > GIVEN_MAX_BYTES:
        raise NotGiven(f"{source.name} is {size:,} bytes, more than Tripane copies for the agent "
                       f"({GIVEN_MAX_BYTES // 2**20} MB): copy it into the work folder, where the agent can read it")


def given_name(source: Path, taken: Iterable[str]) -> str:
    """The name the copy of `source` is kept under: its own, or with -2, -3, … before its suffix when
    another file given to the session has it (app.log from two machines)."""
    taken = set(taken)
    name, number = source.name, 2
    stem, dot, suffix = name.partition(".")
    while name in taken:
        name = f"{stem}-{number}{dot}{suffix}"
        number += 1
    return name


def hold_given(held: list[tuple[Path, str]], source: Path) -> str:
    """For a session not made yet (the New session's task, `tripane run --give`): `source` added to
    `held` (each file and the name its copy will be kept under, copied as the session is made:
    SessionConfig.given), once however often it is given; the name of its copy. NotGiven when it
    cannot be given."""
    givable(source)
    if kept := next((name for path, name in held if path == source), None):
        return kept
    name = given_name(source, (name for _, name in held))
    held.append((source, name))
    return name


def named(name: str) -> str:
    """How the agent names the copy kept as `name`."""
    return f"{OFFLOAD_SCHEME}{GIVEN_FOLDER}/{name}"


def mention(source: Path | str, kept: str) -> str:
    """How a message names a file given to the agent: its path, and its copy's (`kept`)."""
    return f"`{source}` (copied for the agent as `{kept}`)"


def given_names(session_dir: Path) -> list[str]:
    """The names of the copies kept for the session's agent (not one half made: .NAME.part)."""
    folder = folder_of(session_dir) / GIVEN_FOLDER
    return sorted(path.name for path in folder.iterdir() if not path.name.startswith(".")) if folder.is_dir() else []


def copy_given(session_dir: Path, source: Path) -> str:
    """A copy of `source` for the agent of the session (core.session.Session.keep_given): the one
    kept already when the same file was given before (dropped twice), else a new one; how the
    agent names it."""
    givable(source)
    folder = folder_of(session_dir) / GIVEN_FOLDER
    size = source.stat().st_size
    for name in given_names(session_dir):
        kept = folder / name
        if kept.stat().st_size == size and filecmp.cmp(source, kept, shallow=False):
            return named(name)
    return keep_given(session_dir, source, given_name(source, given_names(session_dir)))


def keep_given(session_dir: Path, source: Path, name: str) -> str:
    """A copy of `source` kept in the session's offload/given/ as `name` (whole or not at all: a copy
    cut short by a full disk would pass for the file); how the agent names it. NotGiven, or the
    OSError of a full disk."""
    givable(source)
    folder = folder_of(session_dir) / GIVEN_FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    kept, partial = folder / name, folder / f".{name}.part"
    try:
        shutil.copyfile(source, partial)
        os.replace(partial, kept)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        if full := as_disk_full(exc, folder):  # (the disk, not the file: said as such)
            raise full from exc
        raise NotGiven(f"{source.name} could not be copied ({exc.strerror or exc})") from None
    return named(name)
