"""Long-term memory: the layers on disk, their index, and what the loop and the tools ask of them.

One LongTermMemory per data folder and process, shared by every session. The blocking parts
(embedding, indexing) are plain methods; callers on the event loop use the `a…` variants, which run
them in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import NamedTuple

from core.memory.config import read_config
from core.memory.embedding import Embedder, choose_embedder, similarity
from core.memory.guard import MemoryRefused, check
from core.memory.index import Hit, MemoryIndex, SourceFile, SyncReport
from core.memory.layers import (
    ASKED_THE_PERSON,
    CONTRADICTIONS,
    DIAGNOSED,
    SECTIONS,
    TRIAL_USES,
    VARIANTS,
    Entry,
    Episode,
    MemoryFiles,
    Skill,
)
from core.text import word_set
from core.tools.context import confine
from core.tools.registry import ToolError

log = logging.getLogger(__name__)

INJECT_SKILL, OFFER_SKILL = 0.8, 0.6
# A lesson is recalled for a task from this calibrated similarity of the task to it (a task and the
# lesson about its kind of work score 0.57-0.71 with the offline model; unrelated pairs up to 0.51),
# the best LESSONS_RECALLED of them. Without vectors none is: words alone match too loosely here.
RECALL_LESSON, LESSONS_RECALLED = 0.55, 3
PREFERENCES_TOLD = 8  # the person's preferences the reflections are most sure of, told at every task start
KEEP_DAILY_DAYS = 30
ARCHIVE = "archive"
# Seed 002's bound on semantic memory (about 12,000 tokens): past it, the doctor's --apply moves the
# superseded entries to archive/MEMORY.md, and the duplicates are the person's to merge.
MEMORY_MAX_BYTES = 50_000
_DAY_FILE = re.compile(r"^daily/(\d{4}-\d{2}-\d{2})\.md$")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
_NEGATION = re.compile(r"\b(?:not|never|no|don't|doesn't|isn't|aren't|cannot|can't|won't|without)\b", re.I)


@dataclass(frozen=True)
class MemoryStatus:
    vectors: str  # how vectors are searched, in words: the backend, and why when it was a choice
    embedder: str
    chunks: int
    notice: str | None  # the fallback in use, in words; None when everything runs as designed
    backend: str = ""  # sqlite-vec | exact | none, for views that act on it
    lessons: int = 0  # in force in MEMORY.md
    skills: int = 0  # not deprecated

    def learned(self) -> str:
        """What the agent learned, in a few words: "3 lessons, 1 skill"."""
        return f"{self.lessons:,} lesson{'' if self.lessons == 1 else 's'}, {self.skills:,} skill{'' if self.skills == 1 else 's'}"

    def describe(self) -> str:
        plural = "" if self.chunks == 1 else "s"
        text = (f"{self.learned()} in use; {self.chunks:,} chunk{plural} indexed; {self.embedder}; "
                f"vector search: {self.vectors}")
        return f"{text}. Note: {self.notice}" if self.notice else text


@dataclass(frozen=True)
class SkillMatch:
    skill: Skill
    similarity: float

    @property
    def injected(self) -> bool:
        return self.similarity >= INJECT_SKILL


class Recall(NamedTuple):
    """What long-term memory brings to a task's start: the message (None: nothing), the skills
    matched, the lessons quoted, the skills whose variant on test this task was given instead."""

    text: str | None
    matches: list[SkillMatch]
    lessons: list[Entry]
    variants: tuple[str, ...] = ()


@dataclass
class DoctorReport:
    duplicates: list[tuple[Entry, Entry, float]] = field(default_factory=list)
    superseded: list[Entry] = field(default_factory=list)
    contradictions: list[str] = field(default_factory=list)
    old_logs: list[str] = field(default_factory=list)  # daily logs past KEEP_DAILY_DAYS, not yet summarised
    summarised: list[str] = field(default_factory=list)
    memory_bytes: int = 0  # MEMORY.md's size
    archived: list[Entry] = field(default_factory=list)  # superseded entries moved to archive/MEMORY.md

    @property
    def oversized(self) -> bool:
        return self.memory_bytes > MEMORY_MAX_BYTES

    @property
    def clean(self) -> bool:
        return not (self.duplicates or self.superseded or self.contradictions or self.old_logs or self.oversized)


class LongTermMemory:
    def __init__(self, data_dir: Path, embedder: Embedder | None = None, *, embedder_note: str = "",
                 vectors: str = "auto"):
        self.files = MemoryFiles(Path(data_dir) / "memory")
        self.files.ensure()
        self.embedder_note = embedder_note or (embedder.name if embedder else "keywords only")
        self.index = MemoryIndex(self.files.root / "index.sqlite", embedder, vectors=vectors)

    @classmethod
    def open(cls, data_dir: Path, *, api_key=None, vectors: str | None = None) -> LongTermMemory:
        """The memory of a data folder, with the embedding model chosen for it (memory/config.json),
        so the window and the command line always search with the same vectors."""
        config = read_config(data_dir)
        embedder, note = choose_embedder(config.get("embedding_model") or None, config.get("api_base") or None,
                                         api_key)
        return cls(data_dir, embedder, embedder_note=note, vectors=vectors or config.get("vectors") or "auto")

    def close(self) -> None:
        self.index.close()

    def status(self) -> MemoryStatus:
        notice = self.index.notice
        if self.index.embedder is None:
            notice = self.embedder_note
        backend = self.index.backend
        reason = f" ({self.index.backend_reason})" if self.index.backend_reason else ""
        return MemoryStatus(backend + reason, self.embedder_note, self.index.count(), notice, backend,
                            len(self.lessons()), sum(skill.usable for skill in self.files.skills()))

    # --- index -----------------------------------------------------------------------------------

    def sources(self) -> list[SourceFile]:
        found = []
        for path in self.files.markdown_files():
            rel = self.files.relative(path)
            if rel.startswith((f"daily/{ARCHIVE}/", f"{ARCHIVE}/", f"skills/{VARIANTS}/")):
                # The originals of summarised logs and superseded entries: kept, not searched. A
                # skill's variant on test: a task given the original must not find the other side.
                continue
            day = _DAY_FILE.match(rel)
            layer = ("daily" if rel.startswith("daily/") else "memory" if rel == "MEMORY.md"
                     else "skill" if rel.startswith("skills/") else "other")
            found.append(SourceFile(rel, path, layer, day.group(1) if day else ""))
        return found

    def refresh(self) -> SyncReport:
        return self.index.sync(self.sources())

    async def arefresh(self) -> SyncReport:
        return await asyncio.to_thread(self.refresh)

    # --- reading ---------------------------------------------------------------------------------

    def search(self, query: str, *, top_k: int = 8, threshold: float = 0.0, half_life_days: float | None = None,
               mode: str = "hybrid") -> list[Hit]:
        if not query.strip():
            raise ValueError("the search query is empty")
        self.refresh()
        return self.index.search(query, top_k=top_k, threshold=threshold, half_life_days=half_life_days, mode=mode)

    async def asearch(self, query: str, **kwargs) -> list[Hit]:
        return await asyncio.to_thread(lambda: self.search(query, **kwargs))

    def get(self, path: str, from_line: int = 1, lines: int = 80) -> str:
        """Lines of a memory file, numbered; the path is relative to the memory folder."""
        try:
            target = confine(self.files.root, path, "the memory folder")
        except ToolError:
            target = None
        if target is None or target.suffix != ".md":
            raise ValueError(f"{path!r} is not a memory file; paths look like MEMORY.md, "
                             "daily/2026-11-22.md or skills/<name>.md")
        if not target.is_file():
            raise FileNotFoundError(f"there is no memory file {path!r}")
        all_lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
        start = max(1, from_line)
        chosen = all_lines[start - 1:start - 1 + max(1, lines)]
        body = "\n".join(f"{start + i:>5}  {line}" for i, line in enumerate(chosen))
        more = len(all_lines) - (start - 1 + len(chosen))
        tail = f"\n… {more} more lines (from_line={start + len(chosen)})" if more > 0 else ""
        return f"{path} (lines {start}–{start + len(chosen) - 1} of {len(all_lines)})\n{body}{tail}"

    def recent_logs(self, today: date | None = None) -> list[str]:
        today = today or date.today()
        days = (today, today - timedelta(days=1))
        return [self.files.relative(p) for p in (self.files.daily_path(d) for d in days) if p.exists()]

    # --- writing ---------------------------------------------------------------------------------

    def remember(self, text: str, *, kind: str, source: str, supersedes: str | None = None) -> tuple[Entry, list[Entry]]:
        """Add a fact; returns it and the entries it may contradict (flagged in MEMORY.md)."""
        candidates = [e for e in self.files.entries() if e.superseded_by is None and e.id != supersedes]
        contradicts = [e for e in candidates if self.contradicts(text, e)]
        entry = self.files.remember(text, kind=kind, source=source, supersedes=supersedes, contradicts=contradicts)
        return entry, contradicts

    def contradicts(self, text: str, other: Entry) -> bool:
        return claims_contradict(text, other.text)

    def save_skill(self, name: str, triggers: list[str], steps: list[str], tools: list[str], *, source: str,
                   change: str = "") -> Skill:
        return self.files.save_skill(name, triggers, steps, tools, source=source, change=change)

    def write_episode(self, episode: Episode) -> Path:
        return self.files.append_episode(episode)

    # --- skills for a task -----------------------------------------------------------------------

    def skills_for(self, task: str) -> list[SkillMatch]:
        """Skills whose trigger conditions match the task, best first (offered from 0.6, injected from
        0.8); a deprecated skill is neither."""
        skills = [s for s in self.files.skills() if s.triggers and s.usable]
        if not skills or self.index.embedder is None:
            return self._skills_by_words(task, skills)
        embedder = self.index.embedder
        task_vector = embedder.query(task)
        matches = []
        for skill in skills:
            vectors = self.index.text_vectors(skill.triggers)  # cached: embedded once, not at every task
            best = similarity(embedder, float((vectors @ task_vector).max()))
            if best >= OFFER_SKILL:
                matches.append(SkillMatch(skill, round(best, 3)))
        return sorted(matches, key=lambda m: -m.similarity)

    def _skills_by_words(self, task: str, skills: list[Skill]) -> list[SkillMatch]:
        matches = [SkillMatch(s, round(max(word_overlap(task, t) for t in s.triggers), 3)) for s in skills]
        return sorted((m for m in matches if m.similarity >= OFFER_SKILL), key=lambda m: -m.similarity)

    def lessons(self) -> list[Entry]:
        """MEMORY.md's lessons in force (the reflections', the agent's, the person's), oldest first."""
        return [e for e in self.files.entries() if e.section == SECTIONS["lesson"] and e.superseded_by is None]

    def contradictions(self) -> list[str]:
        """The entries MEMORY.md lists as possibly contradicting each other, for the person to settle."""
        text = self.files.memory_path.read_text(encoding="utf-8") if self.files.memory_path.exists() else ""
        section = text.split(f"## {CONTRADICTIONS}", 1)
        if len(section) != 2:
            return []
        lines = section[1].split("\n## ", 1)[0].splitlines()  # up to the next section, if one follows
        return [line[2:] for line in lines if line.startswith("- ")]

    def lessons_for(self, task: str) -> list[Entry]:
        """The lessons in force that bear on the task, most alike first."""
        embedder = self.index.embedder
        lessons = self.lessons()
        if embedder is None or not lessons:
            return []
        scores = self.index.text_vectors([e.text for e in lessons]) @ embedder.query(task)
        ranked = sorted(((similarity(embedder, float(score)), e) for score, e in zip(scores, lessons)),
                        key=lambda pair: -pair[0])
        return [e for score, e in ranked[:LESSONS_RECALLED] if score >= RECALL_LESSON]

    def recall_for_task(self, task: str) -> Recall:
        """The message that brings long-term memory into a new task's context, or None if there is
        nothing to bring: matching skills (injected or offered), lessons that bear on it and where
        recent daily logs are. A skill with a variant on test gives every other task the variant's
        steps (variants.py)."""
        from core.memory.strategies import beliefs  # (it builds on this module)
        from core.memory.variants import give_out

        matches = self.skills_for(task)
        lessons = self.lessons_for(task)
        wants = [b for b in beliefs(self) if b.believed and _storable(b.text)][:PREFERENCES_TOLD]
        logs = self.recent_logs()
        if not matches and not lessons and not wants and not logs:
            return Recall(None, [], [])
        parts = ["[Long-term memory for this task. Search more with memory_search; read files with memory_get.]"]
        variants = []
        for match in matches:
            skill = match.skill
            if match.injected:
                variant = give_out(self.files, skill.slug)
                if variant is not None:
                    variants.append(skill.slug)
                steps = "\n".join(f"{i}. {s}" for i, s in enumerate(variant.proposal.steps if variant else skill.steps, 1))
                trial = f"; on trial, use {skill.trial_uses + 1} of {TRIAL_USES}" if skill.status == "probation" else ""
                parts.append(f"\n## Skill to follow: {skill.name} (match {match.similarity:.2f}; "
                             f"{skill.successes} of {skill.uses} uses succeeded{trial})\n{steps}\n"
                             f"Tools: {', '.join(skill.tools) or 'any'}")
            else:
                parts.append(f"\n## Skill for reference: {skill.name} (match {match.similarity:.2f}) — "
                             f"memory_get(path=\"skills/{skill.slug}.md\") if it fits.")
        if lessons:
            parts.append("\n## Lessons that may apply (MEMORY.md)\n" + "\n".join(f"- [{e.id}] {e.text}" for e in lessons))
        if wants:
            parts.append("\n## What the person wants (learned from reflections on earlier tasks)\n"
                         + "\n".join(f"- {b.text} (confidence {b.confidence:.2f})" for b in wants))
        if logs:
            parts.append("\n## Recent daily logs\n" + "\n".join(f"- {p}" for p in logs))
        return Recall("\n".join(parts), matches, lessons, tuple(variants))

    # --- lifecycle -------------------------------------------------------------------------------

    def doctor(self, *, apply: bool = False, today: date | None = None) -> DoctorReport:
        """Find duplicate, superseded and contradicting entries (proposals for the person), and daily
        logs past 30 days, and MEMORY.md past seed 002's bound. With `apply`, those logs are summarised
        (their originals move to daily/archive/), and past the bound the superseded entries move to
        archive/MEMORY.md."""
        report = DoctorReport()
        entries = self.files.entries()
        active = [e for e in entries if e.superseded_by is None]
        report.superseded = [e for e in entries if e.superseded_by is not None]
        for i, first in enumerate(active):
            for second in active[i + 1:]:
                score = word_overlap(first.text, second.text)
                if score >= 0.8:
                    report.duplicates.append((first, second, round(score, 2)))
        report.contradictions = self.contradictions()
        report.old_logs = [source.path for source in self._logs_to_summarise(today)]
        path = self.files.memory_path
        report.memory_bytes = path.stat().st_size if path.exists() else 0
        if apply:
            report.summarised = self.summarise_old_logs(today=today)
            report.old_logs = []
            if report.oversized and report.superseded:
                report.archived = self.files.archive_superseded()
                report.superseded = []
                report.memory_bytes = path.stat().st_size
                self.refresh()
        return report

    def summarise_old_logs(self, today: date | None = None) -> list[str]:
        """Summarise daily logs past 30 days (originals to daily/archive/); returns their paths."""
        done = []
        for source in self._logs_to_summarise(today):
            self._summarise_log(source.path)
            done.append(source.path)
        if done:
            self.refresh()
        return done

    def _logs_to_summarise(self, today: date | None) -> list[SourceFile]:
        cutoff = (today or date.today()) - timedelta(days=KEEP_DAILY_DAYS)
        return [source for source in self.sources()
                if source.layer == "daily" and source.day and date.fromisoformat(source.day) < cutoff
                and not (self.files.daily_dir / ARCHIVE / source.absolute.name).exists()]  # not summarised before

    def _summarise_log(self, rel: str) -> None:
        """Keep each entry's heading, request and failures; move the full log to daily/archive/."""
        path = self.files.root / rel
        text = path.read_text(encoding="utf-8")
        kept = []
        for line in text.splitlines():
            if line.startswith("#") or line.startswith(("- Asked:", "- Failed:", ASKED_THE_PERSON, DIAGNOSED)):
                kept.append(line)
            elif line.startswith(("- Done:", "- Where it stands:")):
                kept.append(line if len(line) <= 200 else line[:199] + "…")
        archive = self.files.daily_dir / ARCHIVE / path.name
        archive.parent.mkdir(parents=True, exist_ok=True)
        path.replace(archive)
        summary = "\n".join(kept) + f"\n\n(Summary; the full log is daily/{ARCHIVE}/{path.name}.)\n"
        path.write_text(summary, encoding="utf-8")


def _storable(text: str) -> bool:
    """Whether memory's guard lets the text in (no secret, no temporary value): what a reflection
    wrote is the model's, and goes to the agent only on the terms the agent's own writes do."""
    try:
        check(text)
    except MemoryRefused:
        return False
    return True


def claims_contradict(first: str, second: str) -> bool:
    """Same subject, different claim: alike in words, unlike in numbers or negation."""
    if first.casefold() == second.casefold() or word_overlap(first, second) < 0.5:
        return False
    numbers_differ = set(_NUMBER.findall(first)) != set(_NUMBER.findall(second))
    negation_differs = bool(_NEGATION.search(first)) != bool(_NEGATION.search(second))
    return numbers_differ or negation_differs


def word_overlap(first: str, second: str) -> float:
    """Share of words in common (Jaccard), ignoring the entry metadata and case (Chinese and
    Japanese by their pairs of characters: see core.text.word_set)."""
    a, b = word_set(first), word_set(second)
    return len(a & b) / len(a | b) if a and b else 0.0


__all__ = ["LongTermMemory", "MemoryRefused", "MemoryStatus", "SkillMatch", "DoctorReport", "Episode"]
