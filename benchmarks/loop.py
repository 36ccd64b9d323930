"""The agent core's own per-turn overhead, model time excluded (a zero-latency scripted model).

A turn here is what a real one costs the core: assemble the context, record the assistant message,
run one small tool (file_read), record its result, append to progress.md (atomic write + fsync).
Prints the median, p90 and max per-turn time in windows around 100 and 1,000 logged events.
Target: median under 5 ms per turn at 1,000 events.

    python benchmarks/loop.py [--events 1000] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.events import AssistantMessage, Record  # noqa: E402
from core.scripted import ScriptedModel, call, reply  # noqa: E402
from core.session import Session, SessionConfig  # noqa: E402
from core.store import Store  # noqa: E402

WINDOW_TURNS = 30


async def measure(target_events: int, folder: Path) -> dict:
    workdir = folder / "work"
    workdir.mkdir()
    (workdir / "module.py").write_text("".join(f"def f{i}(): return {i}\n" for i in range(200)), encoding="utf-8")
    store = Store(folder / "tripane.db")
    model = ScriptedModel([], default=reply("Reading.", call("file_read", path="module.py", limit=50)))
    config = SessionConfig(task="benchmark", model="scripted", workdir=workdir, max_turns=100_000,
                           warn_turn=100_000, danger_turn=100_000)
    session = Session.create(store, folder, config, model)
    stamps: list[tuple[int, float]] = []  # (events so far, time) at every assistant message

    def on_record(notice) -> None:
        if isinstance(notice, Record) and isinstance(notice.event, AssistantMessage):
            stamps.append((notice.seq, time.perf_counter()))
            if notice.seq >= target_events + WINDOW_TURNS * 4:
                session.stop()

    session.subscribe(on_record)
    await session.run()
    store.close()
    turns = [(seq, (b - a) * 1000) for (seq, a), (_, b) in zip(stamps, stamps[1:])]
    result = {}
    for mark in sorted({100, target_events}):
        window = [ms for seq, ms in turns if seq >= mark][:WINDOW_TURNS]
        window.sort()
        result[mark] = {
            "median_ms": round(statistics.median(window), 3),
            "p90_ms": round(window[int(len(window) * 0.9) - 1], 3),
            "max_ms": round(window[-1], 3),
            "turns": len(window),
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = asyncio.run(measure(args.events, Path(tmp)))
    if args.json:
        print(json.dumps(result))
        return
    print(f"{'events':>8} {'median ms/turn':>15} {'p90':>8} {'max':>8} {'turns':>6}")
    for mark, row in result.items():
        print(f"{mark:>8} {row['median_ms']:>15.3f} {row['p90_ms']:>8.3f} {row['max_ms']:>8.3f} {row['turns']:>6}")
    verdict = "meets" if result[max(result)]["median_ms"] < 5 else "MISSES"
    print(f"target: median < 5 ms per turn at {max(result)} events — {verdict}")


if __name__ == "__main__":
    main()
