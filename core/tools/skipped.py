"""Which folders and files listing and searching pass over, as a developer's tools do.

Walking everything, `file_list` of a JavaScript project listed 500 entries of node_modules (it
sorts before src) and stopped there; `file_search` ground through a virtual environment's
site-packages and returned its matches before the project's. Passed over, as ripgrep and git pass
them over: hidden folders (.git, .venv), dependency and cache folders (node_modules, __pycache__,
a folder holding pyvenv.cfg or CACHEDIR.TAG: virtual environments, Cargo's target/), and what the
project's .gitignore files exclude. A path given explicitly is still listed, searched and read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

DEPENDENCY_FOLDERS = {"node_modules": "dependencies", "bower_components": "dependencies"}
# Passed over without a word: no task is about them, and a Python project has one in every folder,
# which filled the note's names and left out the folders the agent may need.
UNSAID_FOLDERS = {"__pycache__"}
MARKER_FILES = {"pyvenv.cfg": "a virtual environment", "CACHEDIR.TAG": "a cache folder"}
MAX_NAMED = 5  # folders named in the note; the rest are counted
MAX_GITIGNORE_BYTES = 256 * 1024  # a generated one larger than this is not a person's list


@dataclass
class Skipper:
    """Decides, folder by folder of a walk inside `workdir`, what to pass over, and remembers the
    folders it passed over near the top (to tell the agent how to reach them)."""

    workdir: Path
    skipped: dict[str, str] = field(default_factory=dict)  # folder (from the workdir, with "/") → why
    folders_skipped: int = 0
    files_ignored: int = 0
    gitignore: bool = True  # off for a walk of a folder .gitignore excludes: the agent asked for it
    # Tripane's own data folder, when the work folder holds it (a home folder does): its database
    # and every session's files are no part of the project (None: not checked). Resolved, as the
    # walk's folders are.
    data_dir: Path | None = None
    _top: Path | None = None  # the git repository's top folder (the workdir outside one)
    _specs: dict[Path, pathspec.GitIgnoreSpec | None] = field(default_factory=dict)
    _in_folder: dict[Path, list[tuple[Path, pathspec.GitIgnoreSpec]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.data_dir is not None:
            self.data_dir = self.data_dir.resolve()

    def start(self, root: Path) -> None:
        """Before a walk of `root`: a folder asked for by its path is walked, even one .gitignore
        excludes (its files too)."""
        self._top = next((p for p in (self.workdir, *self.workdir.parents) if (p / ".git").exists()), self.workdir)
        # By .gitignore itself, not by _why_skipped, whose first answer for node_modules is
        # "dependencies": node_modules/ asked for by its path was still walked with its own
        # .gitignore line on, which passed over every folder in it.
        if root != self.workdir and self._gitignored(root.parent, root.name):
            self.gitignore = False

    def folders_to_walk(self, folder: Path, names: list[str]) -> list[str]:
        """Of `folder`'s subfolders `names`, those to walk into, sorted."""
        kept = []
        for name in sorted(names):
            if name.startswith(".") or name in UNSAID_FOLDERS:
                continue  # tools' storage (.git, .venv, .idea): skipped without a word, as always
            why = self._why_skipped(folder, name)
            if why is None:
                kept.append(name)
            else:
                self.folders_skipped += 1
                if len(self.skipped) < MAX_NAMED:
                    self.skipped[_relative(folder / name, self.workdir) + "/"] = why  # as a path to give
        return kept

    def file_ignored(self, path: Path) -> bool:
        if not self.gitignore:
            return False
        ignored = any(spec.match_file(_relative(path, base)) for base, spec in self._specs_over(path.parent))
        self.files_ignored += ignored
        return ignored

    def note(self, verb: str) -> str:
        """What was passed over, for the end of the tool's answer ("" when nothing was)."""
        if not self.skipped and not self.files_ignored:
            return ""
        parts = [f"{name} ({why})" for name, why in self.skipped.items()]
        if (more := self.folders_skipped - len(self.skipped)) > 0:
            parts.append(f"{more:,} more folder{'s' * (more != 1)}")
        if self.files_ignored:
            parts.append(f"{self.files_ignored:,} file{'s' * (self.files_ignored != 1)} .gitignore excludes")
        return (f"[not {verb}: {', '.join(parts)}. Give a folder's path to {verb.removesuffix('ed')} it "
                "if the task is about it]")

    def _why_skipped(self, folder: Path, name: str) -> str | None:
        if name in DEPENDENCY_FOLDERS:
            return DEPENDENCY_FOLDERS[name]
        path = folder / name
        if self.data_dir is not None and path == self.data_dir:
            return "Tripane's own data folder"
        for marker, why in MARKER_FILES.items():
            if (path / marker).is_file():
                return why
        if self.gitignore and self._gitignored(folder, name):
            return ".gitignore"
        return None

    def _gitignored(self, folder: Path, name: str) -> bool:
        return any(spec.match_file(_relative(folder / name, base) + "/") for base, spec in self._specs_over(folder))

    def _specs_over(self, folder: Path) -> list[tuple[Path, pathspec.GitIgnoreSpec]]:
        """The .gitignore rules that apply in `folder`: its own and its parents', from the top of the
        git repository (or the workdir, outside one) down."""
        if folder not in self._in_folder:
            above = self._specs_over(folder.parent) if folder != self._top and folder.parent != folder else []
            if folder not in self._specs:
                self._specs[folder] = _load(folder / ".gitignore")
            own = self._specs[folder]
            self._in_folder[folder] = above + [(folder, own)] if own is not None else above
        return self._in_folder[folder]


def _load(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_GITIGNORE_BYTES:
            return None
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    spec = pathspec.GitIgnoreSpec.from_lines(lines)
    return spec if len(spec) else None


def _relative(path: Path, base: Path) -> str:
    return os.path.relpath(path, base).replace(os.sep, "/")
