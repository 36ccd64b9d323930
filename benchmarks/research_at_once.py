"""Research helpers at once: how long a deep research, and two questions delegated in one reply,
keep the agent waiting, with their helpers at work at the same time and one after another.

The real loop, store and files, with a scripted model that takes LATENCY seconds to answer each
request, as a provider does. A deep research of PARTS parts (each part: a read, then its report),
and a reply delegating two questions (each: a read, then a report). "One after another" is the same
code with its helpers awaited in turn (core.agent.control.all_at_once swapped for a loop), which is
how Tripane ran them before.

    python benchmarks/research_at_once.py [--latency 0.3] [--parts 4] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.agent import deep_research, loop  # noqa: E402
from core.agent.research import READING_TOOLS  # noqa: E402
from core.events import ToolResult  # noqa: E402
from core.scripted import ScriptedModel, call, reply  # noqa: E402
from core.session import Session, SessionConfig  # noqa: E402
from core.store import Store  # noqa: E402


class Slow(ScriptedModel):
    """The agent delegates, then ends; each helper reads its file, then reports; every request takes
    `latency` seconds."""

    def __init__(self, first_reply, side, latency: float):
        super().__init__([first_reply, reply("", call("task_done", summary="ok"))], side_replies=side)
        self.latency = latency

    async def complete(self, request, *args, **kwargs):
        await asyncio.sleep(self.latency)
        if request.tools and len(request.tools) == len(READING_TOOLS):
            self.requests.append(request)
            asked = request.messages[1]["content"]
            if len(request.messages) == 2:
                name = asked.split("part-", 1)[1].split("?", 1)[0] if "part-" in asked else "0"
                return reply("", call("file_read", call_id="r", path=f"part_{name}.txt"))
            return reply("Found what the part asked.")
        return await super().complete(request, *args, **kwargs)


async def one_after_another(awaitables):
    return [await awaitable for awaitable in awaitables]


async def waited(first_reply, side, latency: float, parts: int) -> float:
    """Seconds from the delegating reply to the last delegate call's result."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        work = folder / "work"
        work.mkdir()
        for number in range(parts + 1):
            (work / f"part_{number}.txt").write_text(f"part {number}\n", encoding="utf-8")
        store = Store(folder / "tripane.db")
        session = Session.create(store, folder / "data", SessionConfig(task="Research", model="scripted", workdir=work),
                                 Slow(first_reply, side, latency))
        assert await session.run() == "done"
        records = session.records
        delegated = next(r for r in records if r.event.kind == "assistant_message")
        results = [r for r in records if isinstance(r.event, ToolResult) and r.event.name == "delegate_research"]
        assert results and all(r.event.ok for r in results), [r.event.content for r in results]
        store.close()
        seconds = (_stamp(results[-1].ts) - _stamp(delegated.ts))
        return round(seconds, 2)


def _stamp(ts: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(ts).timestamp()


def cases(parts: int) -> dict[str, tuple]:
    questions = "\n".join(f'  - "What is in part-{n}?"' for n in range(1, parts + 1))
    deep = reply("", call("delegate_research", call_id="d", question="What is in every part?", kind="deep"))
    two = reply("", call("delegate_research", call_id="d1", question="What is in part-1?"),
                call("delegate_research", call_id="d2", question="What is in part-2?"))
    return {"deep research": (deep, lambda: [reply(f"parts:\n{questions}"), reply("Combined.")]),
            "two delegations": (two, lambda: [])}


async def measure(latency: float, parts: int) -> list[dict]:
    rows = []
    for name, (first, side) in cases(parts).items():
        at_once = await waited(first, side(), latency, parts)
        swapped = (deep_research.all_at_once, loop.all_at_once)
        deep_research.all_at_once = loop.all_at_once = one_after_another
        try:
            in_turn = await waited(first, side(), latency, parts)
        finally:
            deep_research.all_at_once, loop.all_at_once = swapped
        rows.append({"case": name, "latency_s": latency, "parts": parts if name == "deep research" else 2,
                     "at_once_s": at_once, "one_after_another_s": in_turn,
                     "ratio": round(at_once / in_turn, 2) if in_turn else None})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.3, help="seconds each model request takes")
    parser.add_argument("--parts", type=int, default=4, help="parts of the deep research (2-4)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    started = time.monotonic()
    rows = asyncio.run(measure(args.latency, args.parts))
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{'case':<18} {'helpers':>7} {'at once s':>10} {'in turn s':>10} {'ratio':>6}")
    for row in rows:
        print(f"{row['case']:<18} {row['parts']:>7} {row['at_once_s']:>10.2f} {row['one_after_another_s']:>10.2f} "
              f"{row['ratio']:>6.2f}")
    print(f"(each model request takes {args.latency} s; measured in {time.monotonic() - started:.1f} s)")


if __name__ == "__main__":
    main()
