"""Reflection (core/memory/reflection.py, core/memory/strategies.py): what a reflection costs besides
its one model request. The window does all of it on worker threads; these are the figures that say
whether a long session or years of reflections would keep the person waiting.

- the trace of a long session (TURNS turns, each a call and its result, a failure in ten): the time
  to build it, and its size against the cap the request is held to;
- reading every kept reflection and grouping their strategies (REFLECTIONS files, three strategies
  each, a third of them said again in other words), by meaning with the offline embedding model and
  by shared words: the first time (embedding every strategy) and again (the sentence cache warm);
- the page a reflection is shown as, over the same files;
- the person's preferences made beliefs (two signals a reflection), and the memory recalled at a
  task's start, which reads them all.

    python benchmarks/reflection.py [--turns 2000] [--reflections 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.events import (  # noqa: E402
    AssistantMessage,
    Record,
    SessionEnded,
    SessionStarted,
    ToolCall,
    ToolResult,
)
from core.memory import strategies  # noqa: E402
from core.memory.longterm import LongTermMemory  # noqa: E402
from core.memory.reflection import TRACE_CHARS, Preference, Report, Strategy, trace  # noqa: E402

TOPICS = ["the failing test", "the config loader", "the release notes", "the database migration", "the CI cache",
          "the date parser", "the import of CSV files", "the API client", "the docs site", "the logging setup"]
PREFERENCES = ["Keep each fix in its own small commit", "Answer in French", "Run the whole suite before saying done",
               "Never push to main", "Use pytest -q", "Write findings in short bullet points", "Ask before deleting files"]
ACTIONS = ["Run {t} alone before changing code", "Read {t} before editing it", "List the folder that holds {t} first",
           "Write a finding about {t} as soon as it is understood", "Ask the person before deleting anything in {t}"]


def session_records(turns: int) -> list[Record]:
    records, seq = [], 0

    def add(event) -> None:
        nonlocal seq
        seq += 1
        records.append(Record("s1", seq, "2026-11-26T07:00:00+00:00", event))

    add(SessionStarted(task="Port the parser to Rust, module by module", model="openai/gpt-4o-mini", workdir="/w"))
    for turn in range(1, turns + 1):
        call = ToolCall(f"c{turn}", "shell_run", json.dumps({"command": f"cargo test -p parser_{turn}"}))
        add(AssistantMessage(f"Porting module {turn}; running its tests.", (call,), turn=turn))
        failed = turn % 10 == 0
        add(ToolResult(call.id, "shell_run", not failed,
                       ("error[E0308]: mismatched types " * 8) if failed else "test result: ok. 40 passed " * 20))
    add(SessionEnded("done", "Every module ported; the tests pass."))
    return records


def seconds(function) -> tuple[float, object]:
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def seed(memory: LongTermMemory, count: int) -> None:
    for number in range(count):
        picks = [(number * 3 + k) % (len(TOPICS) * len(ACTIONS)) for k in range(3)]
        said = []
        for pick in picks:
            text = ACTIONS[pick % len(ACTIONS)].format(t=TOPICS[pick // len(ACTIONS)])
            if number % 3 == 0:
                text = f"Always {text[0].lower()}{text[1:]}"  # the same strategy in other words
            said.append(Strategy(text, "the task touches it", confidence="MEDIUM"))
        wants = (Preference(PREFERENCES[number % len(PREFERENCES)], strength="MEDIUM"),
                 Preference(PREFERENCES[(number * 7) % len(PREFERENCES)], strength="HIGH"))
        strategies.save(memory, f"s{number}", "m", "", Report("yes", "", strategies=tuple(said), preferences=wants))


def grouping(folder: Path, count: int, with_vectors: bool) -> dict[str, float | int]:
    embedder = None
    if with_vectors:
        from core.memory.embedding import LocalEmbedder

        embedder = LocalEmbedder()
    memory = LongTermMemory(folder, embedder)
    try:
        seed(memory, count)
        first, found = seconds(lambda: strategies.candidates(memory))
        again, _ = seconds(lambda: strategies.candidates(memory))
        path = strategies.kept(memory)[-1].path.relative_to(memory.files.root).as_posix()
        page, _ = seconds(lambda: strategies.page(memory, path))
        believed, held = seconds(lambda: strategies.beliefs(memory))
        recall, _ = seconds(lambda: memory.recall_for_task("Make the failing date tests pass"))
        return {"candidates": len(found), "first_s": round(first, 3), "again_s": round(again, 3),
                "page_s": round(page, 3), "beliefs": len(held), "beliefs_s": round(believed, 3),
                "recall_s": round(recall, 3)}
    finally:
        memory.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--reflections", type=int, default=300)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    records = session_records(args.turns)
    took, text = seconds(lambda: trace(records))
    figures: dict[str, object] = {"turns": args.turns, "events": len(records), "trace_ms": round(took * 1000, 1),
                                  "trace_chars": len(text), "trace_cap": TRACE_CHARS}
    with tempfile.TemporaryDirectory() as words, tempfile.TemporaryDirectory() as meaning:
        figures["reflections"] = args.reflections
        figures["by_words"] = grouping(Path(words), args.reflections, with_vectors=False)
        figures["by_meaning"] = grouping(Path(meaning), args.reflections, with_vectors=True)
    if args.json:
        print(json.dumps(figures))
        return
    print(f"trace of {args.turns:,} turns ({len(records):,} events): {figures['trace_ms']} ms, "
          f"{figures['trace_chars']:,} characters (cap {TRACE_CHARS:,})")
    for way in ("by_words", "by_meaning"):
        found = figures[way]
        print(f"{args.reflections:,} reflections grouped {way.replace('_', ' ')}: {found['candidates']} strategies; "
              f"first {found['first_s']} s, again {found['again_s']} s; a reflection's page {found['page_s']} s; "
              f"{found['beliefs']} beliefs {found['beliefs_s']} s; the recall at a task's start {found['recall_s']} s")


if __name__ == "__main__":
    main()
