"""A file's history (core/memory/history.py): reading a file's versions from the log and rebuilding
one from the diffs, both on a worker thread in the window (gui/dialogs/file_history.py).

The session: a progress.md of APPENDS entries (each a turn's record, ~400 characters) and a plan
rewritten REWRITES times (a step ticked each time), written through the real WorkingMemory and
logged in a real store.

    python benchmarks/history.py [--appends 5000] [--rewrites 200] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.memory.history import file_versions, rebuilt, text_at  # noqa: E402
from core.memory.working import PLAN, PROGRESS, WorkingMemory  # noqa: E402
from core.store import Store  # noqa: E402

ENTRY = ("### Turn {n}: shell_run — ✓ ok\n**Arguments**: {{\"command\": \"python -m pytest -q tests/test_{n}.py\"}}\n"
         "**Result**:\n```\n........................................ [100%]\n40 passed in 1.{n}s\n```\n")


def build(folder: Path, appends: int, rewrites: int) -> tuple[Store, str, dict[str, str]]:
    store = Store(folder / "tripane.db")
    session_id = "s1"
    store.create_session(session_id, task="Port the parser", model="openai/gpt-4o-mini")
    memory = WorkingMemory(folder / "session")
    for change in memory.create(title="Port the parser", task="Port the parser to Rust"):
        store.append(session_id, change)
    steps = [f"{n}. [ ] Port module {n}" for n in range(1, rewrites + 1)]
    for n in range(appends):
        store.append(session_id, memory.append(PROGRESS, ENTRY.format(n=n), author="core"))
        if n % max(1, appends // rewrites) == 0 and n // max(1, appends // rewrites) < rewrites:
            done = n // max(1, appends // rewrites)
            steps[done] = steps[done].replace("[ ]", "[x]")
            plan = memory.read(PLAN)[0].split("## Execution Plan")[0] + "## Execution Plan\n" + "\n".join(steps) + "\n"
            store.append(session_id, memory.write(PLAN, plan, base_version=memory.version(PLAN), author="agent"))
    return store, session_id, {name: memory.read(name)[0] for name in (PLAN, PROGRESS)}


def timed(function, repeat: int = 5) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--appends", type=int, default=5000)
    parser.add_argument("--rewrites", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = {}
    with tempfile.TemporaryDirectory() as folder:
        store, session_id, now = build(Path(folder), args.appends, args.rewrites)
        for name, key in ((PROGRESS, "progress"), (PLAN, "plan")):
            read_ms, versions = timed(lambda name=name: file_versions(store, session_id, name))
            newest_ms, newest = timed(lambda versions=versions: text_at(versions, versions[-1].version))
            middle = versions[len(versions) // 2].version
            middle_ms, _ = timed(lambda versions=versions: text_at(versions, middle))
            # What the dialog asks for a version: its text and what changed since (a diff against the newest).
            since_ms, _ = timed(lambda versions=versions: rebuilt(versions, middle))
            assert newest == now[name], f"{name}: the newest version rebuilt is not the file"
            figures[key] = {"versions": len(versions), "bytes": len(now[name].encode("utf-8")),
                            "read_ms": round(read_ms, 1), "rebuild_newest_ms": round(newest_ms, 1),
                            "rebuild_middle_ms": round(middle_ms, 1), "with_since_middle_ms": round(since_ms, 1)}
        store.close()
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"{'file':<10} {'versions':>9} {'bytes':>11} {'read (ms)':>10} {'rebuild newest':>15} {'middle':>8} "
          f"{'middle + since':>15}")
    for key, row in figures.items():
        print(f"{key:<10} {row['versions']:>9,} {row['bytes']:>11,} {row['read_ms']:>10} "
              f"{row['rebuild_newest_ms']:>15} {row['rebuild_middle_ms']:>8} {row['with_since_middle_ms']:>15}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
