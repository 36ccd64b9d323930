"""Going back to an earlier step of a session (core/branch.py): how long finding what the files
were then takes (the dialog waits for it), how long making the new session takes, and what the
file tools now pay before each write to keep the file as it was (originals/steps.jsonl).

The session: TURNS steps of the agent's, each a file_edit of one of FILES source files (~4 KB) and
its result, a progress.md entry per step and the plan rewritten every 25 steps, logged through the
real WorkingMemory and store, the file tools' keeping done as they do it (core/originals.py).
Going back is to before the step TURNS - 10: ten steps' files come back.

    python benchmarks/going_back.py [--turns 2500] [--files 200] [--json]
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

from core.branch import go_back, going_back, step_seq  # noqa: E402
from core.events import AssistantMessage, SessionStarted, ToolCall, ToolResult  # noqa: E402
from core.memory.working import PLAN, PROGRESS, WorkingMemory  # noqa: E402
from core.originals import Originals  # noqa: E402
from core.paths import session_dir  # noqa: E402
from core.store import Store  # noqa: E402

ENTRY = "### Turn {n}: file_edit — ✓ ok\n**Arguments**: {{\"path\": \"src/m{f}.py\"}}\n**Result**: Edited.\n"
BACK = 10  # steps gone back over


def build(data_dir: Path, work: Path, turns: int, files: int) -> tuple[Store, str, list[float]]:
    """The session, and how long each keeping of a file before its write took (ms)."""
    store = Store(data_dir / "tripane.db")
    session_id = "s1"
    store.create_session(session_id, task="Port the parser", model="openai/gpt-4o-mini")
    folder = session_dir(data_dir, session_id)
    store.append(session_id, SessionStarted(task="Port the parser", model="openai/gpt-4o-mini", workdir=str(work)))
    memory = WorkingMemory(folder)
    for change in memory.create(title="Port the parser", task="Port the parser"):
        store.append(session_id, change)
    originals, kept_ms = Originals(folder), []
    for f in range(files):
        (work / "src").mkdir(parents=True, exist_ok=True)
        (work / "src" / f"m{f}.py").write_text("".join(f"def f{i}():\n    return {i}\n" for i in range(160)),
                                                encoding="utf-8")
    for n in range(1, turns + 1):
        f = n % files
        call = ToolCall(f"c{n}", "file_edit", json.dumps({"path": f"src/m{f}.py", "old": "x", "new": "y"}))
        store.append(session_id, AssistantMessage(f"Step {n}.", (call,), turn=n))
        target = work / "src" / f"m{f}.py"
        started = time.perf_counter()
        originals.keep(f"src/m{f}.py", target, call.id)
        kept_ms.append((time.perf_counter() - started) * 1000)
        target.write_text(target.read_text(encoding="utf-8") + f"# step {n}\n", encoding="utf-8")
        store.append(session_id, ToolResult(call.id, "file_edit", True, f"Edited src/m{f}.py."))
        store.append(session_id, memory.append(PROGRESS, ENTRY.format(n=n, f=f), author="core"))
        if n % 25 == 0:
            plan = memory.read(PLAN)[0] + f"- step {n} done\n"
            store.append(session_id, memory.write(PLAN, plan, base_version=memory.version(PLAN), author="agent"))
    return store, session_id, kept_ms


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=2500)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        data_dir, work = Path(folder) / "data", Path(folder) / "work"
        data_dir.mkdir()
        store, session_id, kept_ms = build(data_dir, work, args.turns, args.files)
        records = store.records(session_id)
        started = time.perf_counter()
        plan = going_back(store, data_dir, session_id, step_seq(records, args.turns - BACK + 1))
        found_s = time.perf_counter() - started
        started = time.perf_counter()
        new_id = go_back(store, data_dir, plan)
        made_s = time.perf_counter() - started
        assert len(plan.as_then) == min(BACK, args.files) and not plan.not_put_back, plan.not_put_back
        figures = {
            "turns": args.turns, "events": len(records), "files_put_back": len(plan.as_then),
            "find_s": round(found_s, 2), "make_s": round(made_s, 2),
            "events_taken_over": len(store.records(new_id)) - 1,
            "keep_before_write_ms_median": round(statistics.median(kept_ms), 2),
            "keep_before_write_ms_p99": round(sorted(kept_ms)[int(len(kept_ms) * 0.99) - 1], 2),
            "steps_kept_mb": round(sum(p.stat().st_size for p in Originals(session_dir(data_dir, session_id)).dir
                                       .iterdir()) / 2**20, 1),
        }
        store.close()
    if args.json:
        print(json.dumps(figures))
        return 0
    print(f"A session of {figures['turns']:,} steps ({figures['events']:,} events), going back {BACK} steps:")
    print(f"  what the files were then: {figures['find_s']} s; the new session made "
          f"({figures['events_taken_over']:,} events taken over, {figures['files_put_back']} files put back): "
          f"{figures['make_s']} s")
    print(f"  each file tool's write keeps the file first: median {figures['keep_before_write_ms_median']} ms, "
          f"p99 {figures['keep_before_write_ms_p99']} ms; all kept: {figures['steps_kept_mb']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
