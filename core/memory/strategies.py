"""Reflections kept, and their strategies becoming lessons (seed 002, section 3.3).

Each reflection is a YAML file in the data folder's memory/reflections/, named after its session.
A strategy suggested with HIGH or MEDIUM confidence is a candidate; once reflections on three
different sessions have suggested it (one experience is not a rule), it becomes a lesson in
MEMORY.md, with where it came from, and every later task's memory search finds it. A lesson that
may contradict an entry there is flagged for the person to confirm, not decided silently.

"Suggested it" is judged by meaning where long-term memory has vectors, by shared words elsewhere.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from core.memory.embedding import similarity
from core.memory.guard import MemoryRefused
from core.memory.layers import SECTIONS, Entry
from core.memory.longterm import LongTermMemory, word_overlap
from core.memory.reflection import ReflectionUnreadable, Report, Strategy, parse
from core.memory.working import atomic_write

REFLECTIONS = "reflections"
PROMOTE_AT = 3  # reflections on different sessions
SAME_BY_WORDS = 0.5  # word overlap (Jaccard) at which two strategies are one
SAME_BY_MEANING = 0.8  # calibrated vector similarity at which they are


@dataclass(frozen=True)
class Kept:
    """A reflection as its file holds it."""

    path: Path
    session_id: str
    day: str
    model: str
    report: Report | None  # None: the reply could not be read as a report (it is kept as it came)


@dataclass
class Candidate:
    """One strategy, as the reflections that suggested it put it (oldest first)."""

    suggestions: list[tuple[Strategy, Kept]] = field(default_factory=list)
    lesson: Entry | None = None  # the lesson it already is

    @property
    def strategy(self) -> Strategy:
        return self.suggestions[0][0]

    @property
    def sessions(self) -> list[str]:
        return list(dict.fromkeys(kept.session_id for _, kept in self.suggestions))

    @property
    def due(self) -> bool:
        return self.lesson is None and len(self.sessions) >= PROMOTE_AT


@dataclass(frozen=True)
class Promotion:
    candidate: Candidate
    lesson: Entry | None  # None: refused (why says why)
    contradicts: tuple[Entry, ...] = ()
    why: str = ""


def reflections_dir(memory: LongTermMemory) -> Path:
    return memory.files.root / REFLECTIONS


def save(memory: LongTermMemory, session_id: str, model: str, reply: str, report: Report | None,
         when: datetime.datetime | None = None) -> Path:
    """The reflection's file: the report as YAML, or the reply as it came when it is not one."""
    when = when or datetime.datetime.now()
    folder = reflections_dir(memory)
    folder.mkdir(parents=True, exist_ok=True)
    number = 1 + sum(1 for _ in folder.glob(f"{session_id}-*"))
    header = f"# Reflection on session {session_id}, {when:%Y-%m-%d %H:%M}, by {model}\n"
    if report is None:
        path = folder / f"{session_id}-{number}.unreadable.txt"
        atomic_write(path, header + reply)
    else:
        path = folder / f"{session_id}-{number}.yaml"
        meta = yaml.safe_dump({"session": session_id, "day": f"{when:%Y-%m-%d}", "model": model},
                              sort_keys=False, allow_unicode=True)
        atomic_write(path, header + meta + report.to_yaml())
    return path


def kept(memory: LongTermMemory) -> list[Kept]:
    """Every reflection kept, oldest first; a file damaged by hand is read as unreadable, not fatal."""
    folder = reflections_dir(memory)
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.glob("*.yaml"), key=lambda p: (p.stat().st_mtime, p.name)):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            report = parse(text)
            meta = yaml.safe_load(text)
        except ReflectionUnreadable:
            report, meta = None, {}
        session = str(meta.get("session") or re.sub(r"-\d+$", "", path.stem))
        found.append(Kept(path, session, str(meta.get("day") or ""), str(meta.get("model") or ""), report))
    return found


def candidates(memory: LongTermMemory, reflections: list[Kept] | None = None) -> list[Candidate]:
    """The strategies suggested with HIGH or MEDIUM confidence, each once with every suggestion of it."""
    reflections = kept(memory) if reflections is None else reflections
    suggestions = [(s, k) for k in reflections if k.report for s in k.report.strategies if s.counts]
    lessons = [e for e in memory.files.entries() if e.section == SECTIONS["lesson"] and e.superseded_by is None]
    texts = [s.text for s, _ in suggestions] + [e.text for e in lessons]
    same = _sameness(memory, texts)
    groups: list[tuple[int, Candidate]] = []  # (the index of its first suggestion, it)
    for i, (strategy, where) in enumerate(suggestions):
        group = next((c for first, c in groups if same(first, i)), None)
        if group is None:
            group = Candidate()
            groups.append((i, group))
        group.suggestions.append((strategy, where))
    for first, candidate in groups:  # a lesson it would contradict is not it: that is for the person to settle
        candidate.lesson = next((e for j, e in enumerate(lessons, len(suggestions))
                                 if same(first, j) and not memory.contradicts(candidate.strategy.text, e)), None)
    return [c for _, c in groups]


def _sameness(memory: LongTermMemory, texts: list[str]):
    embedder = memory.index.embedder
    if embedder is None or not texts:
        return lambda i, j: word_overlap(texts[i], texts[j]) >= SAME_BY_WORDS
    vectors = memory.index.text_vectors(texts)
    return lambda i, j: similarity(embedder, float(vectors[i] @ vectors[j])) >= SAME_BY_MEANING


def promote_due(memory: LongTermMemory) -> list[Promotion]:
    """Make a lesson of each candidate three sessions' reflections suggested and MEMORY.md lacks."""
    done = []
    for candidate in candidates(memory):
        if not candidate.due:
            continue
        strategy = candidate.strategy
        text = strategy.text + (f" (when: {strategy.when})" if strategy.when else "")
        source = "reflections on " + " + ".join(candidate.sessions)  # no commas: MEMORY.md's entry syntax
        try:
            entry, contradicts = memory.remember(text, kind="lesson", source=source)
        except MemoryRefused as exc:
            done.append(Promotion(candidate, None, why=str(exc)))
            continue
        candidate.lesson = entry
        done.append(Promotion(candidate, entry, tuple(contradicts)))
    if done:
        memory.refresh()
    return done


def active_lessons(memory: LongTermMemory) -> list[str]:
    """What the reflecting model is told the agent already follows (so it does not suggest it again)."""
    return [e.text for e in memory.files.entries() if e.section == SECTIONS["lesson"] and e.superseded_by is None]
