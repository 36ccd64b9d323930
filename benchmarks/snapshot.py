"""The copy of the work folder made before a session's first command (core/snapshot.py): how long
it takes (the first command waits for it), what it costs on disk, what every command then pays to
be told with the files it changed, how long the changes window takes to read what differs, and
how long marking the folder as a command left it takes (the folder kept as at each step, for going
back to one), what packing the copy (once the session is not in use) takes and saves, how long putting back
the 600 files a formatter changed takes, and what each turn pays to
find what changed outside the agent, with the copy or, without one, among the files the agent read
(core/tools/seen.py).

The folder: FILES source-like text files (~SIZE bytes each, in folders of 50), and a .gitignore'd
build folder of the same size, which must cost nothing.

    python benchmarks/snapshot.py [--files 5000] [--size 4000] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.snapshot import SNAPSHOT_DIR, WorkFolderSnapshot  # noqa: E402
from core.tools.seen import SeenFiles  # noqa: E402
from core.work_changes import WorkChanges  # noqa: E402

SEEN_FILES = 1000  # files the agent read, in a long session without a copy
PUT_BACK_FILES = 600  # files a formatter changed, all put back at once from the changes window

WORDS = ("def", "return", "self", "value", "parser", "token", "if", "else", "for", "in", "import", "class")


def make_folder(root: Path, files: int, size: int) -> int:
    """Write the work folder; the bytes written outside .gitignore."""
    rng = random.Random(7)
    written = 0
    (root / ".gitignore").write_text("build/\n", encoding="utf-8")
    for n in range(files):
        for base in (root / "src", root / "build"):
            folder = base / f"pkg{n // 50}"
            folder.mkdir(parents=True, exist_ok=True)
            text = "\n".join(" ".join(rng.choice(WORDS) for _ in range(8)) for _ in range(size // 40))
            (folder / f"module{n}.py").write_text(text, encoding="utf-8")
            written += len(text) if base.name == "src" else 0
    return written


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--size", type=int, default=4000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("git") is None:
        sys.exit("git is not installed: the copy is made by git")
    with tempfile.TemporaryDirectory() as tmp:
        work, session = Path(tmp) / "work", Path(tmp) / "session"
        work.mkdir()
        source_bytes = make_folder(work, args.files, args.size)
        copy = WorkFolderSnapshot(session)
        started = time.perf_counter()
        copy.take(work)
        take_s = time.perf_counter() - started
        assert copy.taken, copy.why_not
        started = time.perf_counter()
        copy.mark(work)  # before each command
        mark_s = time.perf_counter() - started
        for n in range(0, args.files, max(1, args.files // 20)):  # a formatter touched 20 files
            path = work / "src" / f"pkg{n // 50}" / f"module{n}.py"
            path.write_text(path.read_text(encoding="utf-8") + "\n# formatted\n", encoding="utf-8")
        started = time.perf_counter()
        told = copy.command_changes(work, "c1")  # after it
        told_s = time.perf_counter() - started
        assert told is not None and told.count() == 20, told
        started = time.perf_counter()
        copy.mark(work)  # as the command left it (the folder kept as at this step: core/branch.py)
        mark_changed_s = time.perf_counter() - started
        started = time.perf_counter()
        outside = copy.outside_changes(work)  # at each turn, and before each tool that writes
        outside_s = time.perf_counter() - started
        assert outside is None, outside
        changes = WorkChanges(session)
        started = time.perf_counter()
        listed = changes.changes(work)
        list_s = time.perf_counter() - started
        started = time.perf_counter()
        diff = changes.diff(work, listed[0])
        diff_s = time.perf_counter() - started
        disk_before = copy.size()
        started = time.perf_counter()
        packed = copy.pack()  # when the session is no longer in use (core/copies.py)
        pack_s = time.perf_counter() - started
        assert packed and copy.changes(work) == listed
        seen = SeenFiles(work)
        for path in sorted((work / "src").rglob("*.py"))[:SEEN_FILES]:
            seen.saw(path.resolve())
        started = time.perf_counter()
        assert seen.news() is None
        seen_s = time.perf_counter() - started
        formatted = [f"src/pkg{n // 50}/module{n}.py" for n in range(min(PUT_BACK_FILES, args.files))]
        for path in formatted:  # a formatter run over the package: all of it put back
            (work / path).write_text((work / path).read_text(encoding="utf-8") + "\n# reformatted\n", encoding="utf-8")
        put_back = WorkChanges(session)
        started = time.perf_counter()
        put_back.read_ahead(work, formatted)
        for path in formatted:
            put_back.put_back(work, path)
        put_back_s = time.perf_counter() - started
        assert not any((work / path).read_text(encoding="utf-8").endswith("# reformatted\n") for path in formatted)
        figures = {
            "files": args.files, "source_mb": round(source_bytes / 2**20, 1),
            "take_s": round(take_s, 2), "copy_mb": round(folder_bytes(session / SNAPSHOT_DIR) / 2**20, 1),
            "disk_mb": round(disk_before / 2**20, 1), "pack_s": round(pack_s, 2),
            "packed_disk_mb": round(copy.size() / 2**20, 1),
            "mark_ms": round(mark_s * 1000, 1), "command_changes_ms": round(told_s * 1000, 1),
            "mark_changed_ms": round(mark_changed_s * 1000, 1),
            "outside_ms": round(outside_s * 1000, 1),
            "listed": len(listed), "list_ms": round(list_s * 1000, 1), "diff_ms": round(diff_s * 1000, 1),
            "diff_lines": len(diff), "seen_files": min(SEEN_FILES, args.files), "seen_ms": round(seen_s * 1000, 1),
            "put_back_files": len(formatted), "put_back_s": round(put_back_s, 2),
        }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"{figures['files']:,} files, {figures['source_mb']} MB outside .gitignore (and as much ignored)")
    print(f"  copy before the first command: {figures['take_s']} s, {figures['copy_mb']} MB of files, "
          f"{figures['disk_mb']} MB of disk blocks")
    print(f"  packed once the session is not in use: {figures['pack_s']} s, then {figures['packed_disk_mb']} MB "
          "of disk blocks")
    print(f"  each command: {figures['mark_ms']} ms before it, {figures['command_changes_ms']} ms after it "
          f"(what it changed), {figures['mark_changed_ms']} ms to mark the folder as it left it")
    print(f"  each turn, and before each tool that writes: {figures['outside_ms']} ms to find what changed "
          "outside the agent")
    print(f"  what differs ({figures['listed']} files): {figures['list_ms']} ms; one file's diff: {figures['diff_ms']} ms")
    print(f"  putting back {figures['put_back_files']:,} files a formatter changed: {figures['put_back_s']} s")
    print(f"  without a copy, each turn: {figures['seen_ms']} ms to look at the {figures['seen_files']:,} files the "
          "agent read")


if __name__ == "__main__":
    main()
