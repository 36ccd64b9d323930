"""Commands the person allowed in a work folder: later sessions there run them without asking.

"Always allow this command" is an answer to one session's question, but the same test command
comes back in every session in that folder. The answer is kept here, in the data folder
(`approvals.json`), by work folder, as approval keys (core.agent.state.approval_key: the tool and
the command's text). Settings lists them and removes them. A file that cannot be read is set aside
(renamed), never overwritten, and nothing is allowed from it.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from filelock import FileLock

from core.memory.working import atomic_write

log = logging.getLogger(__name__)

FILE_NAME = "approvals.json"


class FolderApprovals:
    def __init__(self, data_dir: Path):
        self.path = Path(data_dir) / FILE_NAME

    def _read(self) -> dict[str, list[str]]:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
            folders = raw["folders"]
            if not isinstance(folders, dict) or not all(
                    isinstance(keys, list) and all(isinstance(k, str) for k in keys) for keys in folders.values()):
                raise ValueError("not a map of folders to lists of commands")
            return folders
        except FileNotFoundError:
            return {}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            aside = self.path.with_name(f"{FILE_NAME}.unreadable")
            log.warning("%s cannot be read (%s): set aside as %s; no command is allowed from it",
                        self.path, exc, aside.name)
            try:
                os.replace(self.path, aside)
            except OSError:
                pass
            return {}

    def allowed(self, folder: Path | str) -> frozenset[str]:
        return frozenset(self._read().get(_key(folder), ()))

    def everything(self) -> dict[str, list[str]]:
        """Folder → the approval keys allowed there, as stored."""
        return self._read()

    def allow(self, folder: Path | str, approval: str) -> None:
        with self._changing():
            folders = self._read()
            keys = folders.setdefault(_key(folder), [])
            if approval not in keys:
                keys.append(approval)
                self._write(folders)

    def revoke(self, folder: Path | str, approval: str) -> None:
        with self._changing():
            folders = self._read()
            keys = folders.get(_key(folder), [])
            if approval in keys:
                keys.remove(approval)
                if not keys:
                    del folders[_key(folder)]
                self._write(folders)

    def _changing(self) -> FileLock:
        """Held while the file is read and written again: the window and a terminal's `tripane
        resume` may both allow a command at once, and neither must drop the other's."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.path.with_name(f"{FILE_NAME}.lock")), timeout=10)

    def _write(self, folders: dict[str, list[str]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, json.dumps({"folders": folders}, indent=2, ensure_ascii=False, sort_keys=True) + "\n")


def _key(folder: Path | str) -> str:
    return str(Path(folder).expanduser().resolve())


def describe(approval: str) -> str:
    """An approval key as a person reads it: "shell_run: pytest -q"."""
    tool, _, what = approval.partition("\n")
    name, sep, value = what.partition("=")
    return f"{tool}: {value}" if sep and name in ("command", "url") else f"{tool}: {what}"
