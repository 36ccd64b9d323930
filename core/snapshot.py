"""The work folder as it was before the session's first shell command: what commands changed can
be seen, and put back.

The file tools keep each file they change (core/originals.py), but a command may touch any file (a
formatter, `sed -i`, a build, `rm`), and which ones is not known before it runs. So before the
first command of a session the whole work folder is copied, the way git copies it: into a private
repository in the session's folder (snapshot.git), never the person's own (whose history, index,
hooks and settings are not touched). Git keeps each file once, compressed, and says quickly which
files differ from it afterwards. Files the work folder's .gitignore leaves out (build outputs,
node_modules, virtual environments) are not copied, nor listed, and neither are those of
ALWAYS_LEFT_OUT in a folder without one; a folder too large to copy, or a computer without git,
keeps nothing, and the changes window says why.

What is copied is the files' bytes as they are: conversions git would make (line endings,
filters) are turned off for this repository, so what comes back is what was there.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Collection, Sequence
from pathlib import Path

from core.diffs import DIFFED_FILES, TOLD_DIFF_CONTEXT, bytes_diff_lines
from core.events import CommandChangedFiles, FilesChangedOutside
from core.memory.working import atomic_write
from core.originals import Change, bytes_now, write_back
from core.paths import common_folder, data_dir_of, folder_of, remove_folder, within
from core.store import now_iso

SNAPSHOT_DIR = "snapshot.git"
# Beside the copy's own index: the folder as the agent last left it (mark()), to tell what the next
# command alone changed, and what changed while the agent was not at work on it. (Its name is from
# when it was marked before commands only.)
MARKED_INDEX = "before-command.index"
COMMAND_FILES_LISTED = 200  # of each kind, in a CommandChangedFiles event; the rest are counted
NOTE_NAME = "snapshot.json"  # in the session's folder: the snapshot's tree, or why there is none
MAX_FILES = 20_000
MAX_BYTES = 300 * 1024 * 1024
GIT_TIMEOUT_S = 120
COPY_REF = "refs/tripane/copy"  # the copy's tree
# The folder as each mark() found it, a tree of git's per change: a session can be taken back to an
# earlier step with the files as they were then (core/branch.py). MARKS_NAME, in the git folder,
# says when; pack() gives each a ref (MARKS_REF/<tree>), as repack keeps only what a ref reaches.
MARKS_REF = "refs/tripane/marks"
MARKS_NAME = "marks.jsonl"  # one line per mark that changed something: {"at": ISO time, "tree": …}
# Loose, each of git's objects is a file of its own, and takes a disk block however small: a copy of
# 5,000 files took 22 MB on disk (6.6 MB of bytes), packed 5.7 MB in 25 files.
PACK_LOOSE_OBJECTS = 256
# git's modes of a file that may be run, a symbolic link, and another repository
EXECUTABLE_MODE, LINK_MODE, GITLINK_MODE = "100755", "120000", "160000"
Held = tuple[str | None, bytes | None]  # how the copy holds a path: git's mode, and its bytes (None: not there)
# Why an imported session has no copy (core/export.py).
NOT_EXPORTED = ("the copy of the work folder made before the first command stays on the computer the session "
                "was exported from")
# Every conversion off: the bytes kept are the bytes read, and come back as they were.
NO_CONVERSIONS = "* -text -eol -filter -ident -working-tree-encoding -diff\n"
# Left out besides what the work folder's .gitignore leaves out, for a folder without one (a folder
# of data, a script or two): what tools make and make again — a virtual environment or
# node_modules the agent installs holds thousands of files, which would be copied, listed as a
# command's changes and looked through at every step; caches; files a file manager leaves.
ALWAYS_LEFT_OUT = "\n".join([
    ".venv/", "venv/", "node_modules/", "__pycache__/", "*.py[co]", ".pytest_cache/", ".mypy_cache/",
    ".ruff_cache/", ".tox/", ".nox/", ".DS_Store", "Thumbs.db", "desktop.ini", "",
])

log = logging.getLogger(__name__)


class SnapshotFailed(OSError):
    """Git could not make or read the copy."""


class WorkFolderSnapshot:
    """A session's copy of its work folder from before its first command, in `session_dir`."""

    def __init__(self, session_dir: Path):
        self.git_dir = session_dir / SNAPSHOT_DIR
        self.note_path = session_dir / NOTE_NAME

    # --- taking it --------------------------------------------------------------------------------

    def take(self, workdir: Path) -> None:
        """Copy the work folder, unless this session did (or found it could not). Blocking: a
        large folder takes seconds; call it from a worker thread."""
        if not self.due:
            return
        if not git_installed():
            self._write_note({"not_kept": "git is not installed on this computer"})
            return
        remove_folder(self.git_dir)  # a copy left half made by a killed process
        try:
            # (no template: git's sample hooks would take 70 KB of every copy)
            self._git(workdir, "init", "--quiet", "--bare", "--template=", str(self.git_dir), bare_init=True)
            (self.git_dir / "info").mkdir(exist_ok=True)
            (self.git_dir / "info" / "attributes").write_text(NO_CONVERSIONS, encoding="utf-8")
            (self.git_dir / "info" / "exclude").write_text(ALWAYS_LEFT_OUT + self._data_folder_within(workdir),
                                                            encoding="utf-8")
            if too_large := self._too_large(workdir):
                remove_folder(self.git_dir)
                self._write_note({"not_kept": too_large})
                return
            # (an unreadable file is left out, and the rest copied: git says so, and exits with 1)
            self._git(workdir, "add", "--all", "--ignore-errors", ".", allowed=(0, 1))
            tree = self._git(workdir, "write-tree").decode().strip()
            self._git(workdir, "update-ref", COPY_REF, tree)  # reachable: pack() keeps what it holds
            nested = self._repositories_within(workdir)
        except SnapshotFailed as exc:
            remove_folder(self.git_dir)
            self._write_note({"not_kept": f"git could not copy the work folder: {exc}"})
            return
        shutil.copyfile(self.git_dir / "index", self.git_dir / MARKED_INDEX)
        self._write_note({"tree": tree, "put_back": [], "nested": nested})
        self._keep_mark(tree)

    def _data_folder_within(self, workdir: Path) -> str:
        """Tripane's data folder, as the copy leaves it out, when the work folder holds it (a home
        folder does): the copy would hold its own growing self, and every step Tripane's own
        writes, the database and this session's files, were told the agent as changed by another."""
        inside = within(data_dir_of(self.git_dir.parent), workdir)
        if inside is None or not inside.parts:
            return ""
        return "/" + re.sub(r"([\\*?\[\]!# ])", r"\\\1", inside.as_posix()) + "/\n"

    def _repositories_within(self, workdir: Path) -> list[str]:
        """The folders of the work folder that are git repositories of their own (a clone, a
        submodule): git copies such a folder as a reference to its repository's commit, never its
        files, so what changes in them is not told, nor put back."""
        listed = self._git(workdir, "ls-files", "--stage", "-z")
        return [entry.split(b"\t", 1)[1].decode("utf-8", "surrogateescape") for entry in listed.split(b"\0")
                if entry.startswith(GITLINK_MODE.encode() + b" ") and b"\t" in entry]

    def _too_large(self, workdir: Path) -> str:
        """Why the folder is too large to copy ("" when it is not), from the files git would copy."""
        listed = self._git(workdir, "ls-files", "--others", "--exclude-standard", "-z").split(b"\0")
        paths = [p.decode("utf-8", "surrogateescape") for p in listed if p]
        if len(paths) > MAX_FILES:
            return f"the work folder has more than {MAX_FILES:,} files outside its .gitignore"
        size = 0
        for path in paths:
            try:
                size += (workdir / path).stat().st_size
            except OSError:
                continue
            if size > MAX_BYTES:
                return f"the work folder holds more than {MAX_BYTES // 2**20} MB outside its .gitignore"
        return ""

    # --- reading it -------------------------------------------------------------------------------

    @property
    def due(self) -> bool:
        """Whether take() has yet to copy the folder (or find that it cannot)."""
        return not self.note_path.exists()

    @property
    def why_not(self) -> str:
        """Why commands' changes are not kept ("" when they are, or no command ran yet)."""
        return str(self._note().get("not_kept", ""))

    @property
    def nested(self) -> list[str]:
        """The git repositories within the work folder, whose files the copy does not hold."""
        return [str(path) for path in self._note().get("nested", [])]

    @property
    def taken(self) -> bool:
        return bool(self._note().get("tree"))

    def size(self) -> int:
        """What the copy takes on disk (0: none kept), its files' blocks where the system says.
        Blocking: one stat per file of git's."""
        total = 0
        for path in self.git_dir.rglob("*"):
            try:
                found = path.stat()
            except OSError:  # (removed meanwhile)
                continue
            if stat.S_ISREG(found.st_mode):
                blocks = getattr(found, "st_blocks", None)  # (not on Windows)
                total += blocks * 512 if blocks is not None else found.st_size
        return total

    def pack(self) -> bool:
        """Pack the copy's objects into one file, when many are loose (PACK_LOOSE_OBJECTS): the
        same bytes in a quarter of the disk, and a copy read and removed faster. Blocking: seconds
        for a large copy; not while the session runs a command. Whether it packed; SnapshotFailed."""
        if not (tree := self._note().get("tree")):
            return False
        loose = sum(1 for _ in itertools.islice((self.git_dir / "objects").glob("[0-9a-f][0-9a-f]/*"),
                                                PACK_LOOSE_OBJECTS))
        if loose < PACK_LOOSE_OBJECTS:
            return False
        self._git(self.git_dir, "update-ref", COPY_REF, tree)  # (a copy made before the ref was)
        # The marks' trees, reachable: repack keeps what a ref reaches, and drops the rest it packs.
        trees = dict.fromkeys(tree for _, tree in self.marks())
        if trees:
            self._git(self.git_dir, "update-ref", "--stdin",
                      given="".join(f"update {MARKS_REF}/{tree} {tree}\n" for tree in trees).encode())
        self._git(self.git_dir, "repack", "-a", "-d", "-q")
        self._git(self.git_dir, "pack-refs", "--all")
        return True

    def size_words(self) -> str:
        """What the copy takes on disk: "5.9 MB"."""
        return size_words(self.size())

    def release(self, why: str) -> None:
        """Remove the copy to free its space; what commands changed is no longer listed, for `why`
        (written first: a removal cut short leaves a copy that is not read as whole)."""
        self._write_note({"not_kept": why, "released": True})
        remove_folder(self.git_dir)

    def changes(self, workdir: Path) -> list[Change]:
        """The files that differ from the copy, and those put back since; none without a copy."""
        note = self._note()
        if not note.get("tree"):
            return []
        found = {path: Change(path, how != "created", True, "gone" if how == "deleted" else "changed", by_command=True)
                 for path, how in self._differing(workdir, note).items()}
        for path in note.get("put_back", []):
            if path not in found:
                existed = self._mode(workdir, note["tree"], path) is not None
                found[path] = Change(path, existed, True, "as before", by_command=True)
        return sorted(found.values(), key=lambda change: change.path)

    def mark(self, workdir: Path, paths: Sequence[str] = ()) -> None:
        """The folder as the agent leaves it now (after take(): before and after each command,
        after each file tool), against which what changes next is told; or only `paths` (files
        the person put back, whose news the agent has). Blocking; SnapshotFailed when git cannot."""
        if not self.taken:
            return
        if paths:  # (as they are now: there, or gone; given on stdin, as a command line has a limit)
            self._git(workdir, "update-index", "--add", "--remove", "-z", "--stdin", index=self._marked,
                      given="\0".join(paths).encode("utf-8", "surrogateescape"))
        else:  # (an unreadable file is left out, and the rest read: git exits with 1)
            self._git(workdir, "add", "--all", "--ignore-errors", ".", allowed=(0, 1), index=self._marked)
        self._keep_mark(self._git(workdir, "write-tree", index=self._marked).decode().strip())

    def _keep_mark(self, tree: str) -> None:
        """The folder as marked (`tree`, whose objects `git add` wrote), kept with its time when it
        differs from the last kept: a line of MARKS_NAME (refs reach them at pack())."""
        marks = self.marks()
        if marks and marks[-1][1] == tree:
            return
        with open(self.git_dir / MARKS_NAME, "a", encoding="utf-8") as kept:
            kept.write(json.dumps({"at": now_iso(), "tree": tree}) + "\n")

    def marks(self) -> list[tuple[str, str]]:
        """(time, tree) of each kept mark, oldest first; a line cut short by a killed process is
        passed over."""
        try:
            lines = (self.git_dir / MARKS_NAME).read_text(encoding="utf-8").splitlines()
        except OSError:
            return []
        found = []
        for line in lines:
            try:
                mark = json.loads(line)
                found.append((str(mark["at"]), str(mark["tree"])))
            except (ValueError, KeyError, TypeError):
                continue
        return found

    def tree_at(self, stamp: str) -> str | None:
        """The folder as the agent had left it at `stamp` (an event's time): the tree of the last
        mark kept by then; None when none was (before the copy, or a copy older than the marks)."""
        kept = [tree for at, tree in self.marks() if at <= stamp]
        return kept[-1] if kept else None

    def command_changes(self, workdir: Path, call_id: str) -> CommandChangedFiles | None:
        """After a command: what it changed since mark(), or None when nothing (or no copy)."""
        found = self._since_mark(workdir)
        return None if found is None else CommandChangedFiles(call_id=call_id, **found)

    def outside_changes(self, workdir: Path) -> FilesChangedOutside | None:
        """What changed since mark(), when the agent was not at work on the folder (thinking,
        waiting for the person): none of it was the agent's. None when nothing (or no copy)."""
        found = self._since_mark(workdir)
        return None if found is None else FilesChangedOutside(**found)

    def diffs_since_mark(self, workdir: Path, paths: Sequence[str]) -> dict[str, list[str]]:
        """How each of `paths` (changed since mark(), by a command or outside the agent's tools)
        differs from the folder as marked: unified diff lines (- as marked, + now), by path; a file
        not marked, or gone, is left out. Blocking; before mark(), which takes the changes in."""
        found = {}
        for path in paths[:DIFFED_FILES]:  # (a git call each)
            if (now := bytes_now(workdir, path)) is None:
                continue
            try:
                before = self._git(workdir, "cat-file", "blob", f":{path}", index=self._marked)
            except SnapshotFailed:  # not in the index: it was not there when the agent left the folder
                continue
            if lines := bytes_diff_lines(before, now, context=TOLD_DIFF_CONTEXT, name=path):
                found[path] = lines
        return found

    def _since_mark(self, workdir: Path) -> dict | None:
        note = self._note()  # (read once: this runs at every turn)
        if not note.get("tree") or not self._marked.exists():
            return None
        kinds: dict[str, list[str]] = {"changed": [], "created": [], "deleted": []}
        for path, how in self._differing(workdir, note, index=self._marked).items():
            kinds[how].append(path)
        if not any(kinds.values()):
            return None
        more = sum(max(0, len(paths) - COMMAND_FILES_LISTED) for paths in kinds.values())
        within = common_folder(folder_of(path) for paths in kinds.values() for path in paths) if more else ""
        return {"more": more, "within": within,
                **{how: tuple(paths[:COMMAND_FILES_LISTED]) for how, paths in kinds.items()}}

    @property
    def _marked(self) -> Path:
        return self.git_dir / MARKED_INDEX

    def _differing(self, workdir: Path, note: dict, index: Path | None = None) -> dict[str, str]:
        """path → changed | created | deleted: the work folder against the index (the copy's, or
        `index`), in git's order (by path). `note`: the copy's (_note), for the repositories within."""
        out = self._git(workdir, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                        "--ignore-submodules=all", index=index)
        found: dict[str, str] = {}
        nested = set(note.get("nested", []))
        for entry in out.split(b"\0"):
            if len(entry) < 4:
                continue
            # The index holds the copy (never committed: its first column says "added"); the
            # second column compares the work folder with it.
            code, path = entry[:2].decode(), entry[3:].decode("utf-8", "surrogateescape")
            if path.endswith("/") or path in nested:  # a git repository of its own: not copied (take)
                continue
            if code == "??":
                found[path] = "created"
            elif code[1] == "D":
                found[path] = "deleted"
            elif code[1] in "MT":
                found[path] = "changed"
        return found

    def before(self, workdir: Path, path: str) -> bytes | None:
        """The file's bytes in the copy (a link's: where it points); None when it was not there."""
        return self._held(workdir, path)[1]

    def write_held(self, workdir: Path, path: str, held: Held) -> None:
        """The work folder's `path` as `held` (held_many) says: its bytes written, a symbolic link
        made again, or the file removed."""
        mode, data = held
        if mode == GITLINK_MODE:
            raise ValueError(f"{path} is a git repository of its own: the copy does not hold its files")
        if mode == LINK_MODE:
            write_back(workdir, path, None, link_to=os.fsdecode(data))
        else:
            write_back(workdir, path, data, executable=None if mode is None else mode == EXECUTABLE_MODE)

    def put_back(self, workdir: Path, path: str, held: Held | None = None) -> Change:
        """The work folder's `path` as it was in the copy: its bytes written back (a symbolic link
        made again), or the file removed when it was not there. `held`: how the copy holds it, read
        before with others (held_many)."""
        held = held if held is not None else self._held(workdir, path)
        self.write_held(workdir, path, held)
        data = held[1]
        note = self._note()
        if path not in note.setdefault("put_back", []):
            note["put_back"].append(path)
            self._write_note(note)
        return Change(path, data is not None, True, "as before", by_command=True)

    def held_many(self, workdir: Path, paths: Collection[str], tree: str | None = None) -> dict[str, Held]:
        """How the copy (or another of its trees: a mark's) holds each of `paths`, read with two
        runs of git in all: one for each file took two, and putting back 600 files a formatter
        changed took seconds."""
        wanted = set(paths)
        modes: dict[str, tuple[str, str]] = {}  # path → (mode, object)
        for entry in self._git(workdir, "ls-tree", "-r", "-z", "--full-tree", tree or self._tree()).split(b"\0"):
            info, _, name = entry.partition(b"\t")
            path = name.decode("utf-8", "surrogateescape")
            if info and path in wanted:
                mode, _, rest = info.decode().partition(" ")
                modes[path] = (mode, rest.partition(" ")[2])
        blobs = [path for path, (mode, _) in modes.items() if mode != GITLINK_MODE]
        found = self._blobs(workdir, [modes[path][1] for path in blobs]) if blobs else []
        held: dict[str, Held] = {path: (None, None) for path in wanted}
        held |= {path: (mode, None) for path, (mode, _) in modes.items()}
        held |= {path: (modes[path][0], data) for path, data in zip(blobs, found)}
        return held

    def _blobs(self, workdir: Path, objects: list[str]) -> list[bytes]:
        """The bytes of git's `objects`, in order, from one `git cat-file --batch`."""
        out = self._git(workdir, "cat-file", "--batch", given="".join(f"{o}\n" for o in objects).encode())
        found, at = [], 0
        for name in objects:  # each: "<object> blob <size>\n<bytes>\n" ("<object> missing\n": a copy damaged)
            header_end = out.find(b"\n", at)
            header = out[at:header_end].split(b" ")
            if header_end < 0 or len(header) != 3 or not header[2].isdigit():
                said = out[at:header_end if header_end >= 0 else None][:120].decode("utf-8", "replace")
                raise SnapshotFailed(f"git could not read the copy of a file ({said})")
            size = int(header[2])
            found.append(out[header_end + 1:header_end + 1 + size])
            at = header_end + 1 + size + 1
        return found

    def _held(self, workdir: Path, path: str) -> Held:
        """How the copy holds `path` (its mode: see _mode) and its bytes; (None, None): it does not."""
        tree = self._tree()
        mode = self._mode(workdir, tree, path)
        if mode is None or mode == GITLINK_MODE:  # (another repository's commit: no bytes here)
            return mode, None
        return mode, self._git(workdir, "cat-file", "blob", f"{tree}:{path}")

    def _tree(self) -> str:
        tree = self._note().get("tree")
        if not tree:
            raise ValueError("the work folder was not copied before the first command")
        return str(tree)

    def _mode(self, workdir: Path, tree: str, path: str) -> str | None:
        """How the copy (its `tree`) holds `path`: git's mode ("100644" a file, LINK_MODE a symbolic
        link, GITLINK_MODE another repository), or None when it does not."""
        listed = self._git(workdir, "ls-tree", "-z", "--full-tree", tree, "--", path)
        for entry in listed.split(b"\0"):
            info, _, name = entry.partition(b"\t")
            if info and name.decode("utf-8", "surrogateescape") == path:
                return info.split(b" ", 1)[0].decode()
        return None

    # --- git --------------------------------------------------------------------------------------

    def _git(self, workdir: Path, *args: str, bare_init: bool = False, allowed: tuple[int, ...] = (0,),
             index: Path | None = None, given: bytes | None = None) -> bytes:
        where = [] if bare_init else [f"--git-dir={self.git_dir}", f"--work-tree={workdir}"]
        # Settings of the person's that would change what is kept or run code: off, for this copy.
        # (The repository is Tripane's own, in the person's data folder: git's check of who owns a
        # repository guards against others', and a work folder on a shared drive would trip it.)
        settings = ["-c", "core.autocrlf=false", "-c", "core.safecrlf=false", "-c", "core.fsmonitor=false",
                    "-c", "core.hooksPath=", "-c", "safe.directory=*", "-c", "gc.auto=0"]
        try:
            done = subprocess.run(["git", *settings, *where, *args], cwd=workdir, capture_output=True, input=given,
                                  timeout=GIT_TIMEOUT_S, env=git_environment(index),
                                  creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise SnapshotFailed(str(exc)) from exc
        if done.returncode not in allowed:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SnapshotFailed(said[-1] if said else f"git {args[0]} failed ({done.returncode})")
        return done.stdout

    def _note(self) -> dict:
        try:
            note = json.loads(self.note_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return note if isinstance(note, dict) else {}

    def _write_note(self, note: dict) -> None:
        self.note_path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.note_path, json.dumps(note, indent=1, ensure_ascii=False))


def size_words(size: int) -> str:
    """"5.9 MB", "2.1 GB", "12 KB"."""
    if size >= 2**30:
        return f"{size / 2**30:.1f} GB"
    return f"{size / 2**20:.1f} MB" if size >= 2**20 / 10 else f"{max(1, round(size / 1024))} KB"


def git_installed() -> bool:
    """Whether git can run here. On macOS /usr/bin/git is there without it: a stand-in that opens
    the offer to install Apple's command line tools; those are asked for without running it."""
    git = shutil.which("git")
    if git is None:
        return False
    if sys.platform == "darwin" and os.path.realpath(git) == "/usr/bin/git":
        try:
            return subprocess.run(["xcode-select", "-p"], capture_output=True, timeout=10).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False
    return True


def git_environment(index: Path | None = None) -> dict[str, str]:
    """The environment without GIT_* variables: a GIT_DIR or GIT_INDEX_FILE of the person's shell
    would point git at their repository. `index`: another index of the copy's."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    environment["GIT_TERMINAL_PROMPT"] = "0"
    if index is not None:
        environment["GIT_INDEX_FILE"] = str(index)
    return environment
