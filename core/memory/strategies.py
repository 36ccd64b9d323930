"""Reflections kept, and what they add up to (seed 002, sections 3.3 and 4.3).

Each reflection is a YAML file in the data folder's memory/reflections/, named after its session.
A strategy suggested with HIGH or MEDIUM confidence is a candidate; once reflections on three
different sessions have suggested it (one experience is not a rule), it becomes a lesson in
MEMORY.md, with where it came from, and every later task's memory search finds it. A lesson that
may contradict an entry there is flagged for the person to confirm, not decided silently. The
preferences the reflections saw the person show become beliefs with a confidence. `overview`
says all of it, with the skills, for the person.

"The same" is judged by meaning where long-term memory has vectors, by shared words elsewhere.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from core.memory.embedding import similarity
from core.memory.guard import MemoryRefused
from core.memory.layers import VARIANTS, Entry
from core.memory.longterm import LongTermMemory, claims_contradict, word_overlap
from core.memory.reflection import (
    Preference,
    ReflectionUnreadable,
    Report,
    Strategy,
    load,
    parse,
)
from core.memory.variants import (
    DROP_VARIANT,
    TEST_VARIANT,
    TESTING,
    Variant,
    variant_of,
)
from core.memory.working import atomic_write
from core.text import counted, sentence

REFLECTIONS = "reflections"
PROMOTE_AT = 3  # reflections on different sessions
# Word overlap (Jaccard) at which two strategies are one: a strategy said again in another order
# shares 0.8 and more of its words; one about another thing in the same words ("list the folder that
# holds the CI cache first", "… the docs site first") 0.6.
SAME_BY_WORDS = 0.7
# Calibrated vector similarity at which they are: paraphrases of one strategy score 0.97 and more
# with the offline model, while different strategies about the same work ("run the failing test
# alone", "list the folder before reading files") reach 0.83 to 0.94.
SAME_BY_MEANING = 0.95
MADE_BY_YOU = "you from"  # a lesson's source when the person made it of a strategy (no comma: MEMORY.md's syntax)
URGENT = "urgent: "  # before the source of a lesson made at once, as urgent, by fewer reflections


@dataclass(frozen=True)
class Kept:
    """A reflection as its file holds it."""

    path: Path
    session_id: str
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
    def urgent(self) -> bool:
        """One of its reflections says it prevents harm, with HIGH confidence (the emergency channel)."""
        return any(strategy.at_once for strategy, _ in self.suggestions)

    @property
    def due(self) -> bool:
        return self.lesson is None and (len(self.sessions) >= PROMOTE_AT or self.urgent)


@dataclass(frozen=True)
class Promotion:
    candidate: Candidate
    lesson: Entry | None  # None: refused (why says why)
    contradicts: tuple[Entry, ...] = ()
    why: str = ""


def reflections_dir(memory: LongTermMemory) -> Path:
    return memory.files.root / REFLECTIONS


def save(memory: LongTermMemory, session_id: str, model: str, reply: str, report: Report | None,
         when: datetime.datetime | None = None, heading: str = "") -> Path:
    """The reflection's file: the report as YAML, or the reply as it came when it is not one.
    `heading`: what it is, when not a reflection on the session (a day's review)."""
    when = when or datetime.datetime.now()
    folder = reflections_dir(memory)
    folder.mkdir(parents=True, exist_ok=True)
    # After the highest number there, not the count: a report deleted by hand leaves a gap, and
    # counting would write the next one over the last.
    taken = (re.match(re.escape(session_id) + r"-(\d+)\.", path.name) for path in folder.glob(f"{session_id}-*"))
    number = 1 + max((int(match.group(1)) for match in taken if match), default=0)
    header = f"# {heading or f'Reflection on session {session_id}'}, {when:%Y-%m-%d %H:%M}, by {model}\n"
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
            meta = load(text)
            report = parse(text, meta)
        except ReflectionUnreadable:
            report, meta = None, {}
        session = str(meta.get("session") or re.sub(r"-\d+$", "", path.stem))
        found.append(Kept(path, session, report))
    return found


def candidates(memory: LongTermMemory, reflections: list[Kept] | None = None) -> list[Candidate]:
    """The strategies suggested with HIGH or MEDIUM confidence, each once with every suggestion of it."""
    reflections = kept(memory) if reflections is None else reflections
    suggestions = [(s, k) for k in reflections if k.report for s in k.report.strategies if s.counts]
    lessons = memory.lessons()
    # Each suggestion is compared as itself and as the lesson it would make (with its "when"): a
    # lesson made of it reads like the second, one written by hand or by the agent like the first.
    texts = [s.text for s, _ in suggestions] + [lesson_text(s) for s, _ in suggestions] + [e.text for e in lessons]
    same = _sameness(memory, texts)
    known = len(suggestions) * 2  # where the lessons start in texts
    groups = [(members[0], Candidate([suggestions[i] for i in members])) for members in _grouped(len(suggestions), same)]
    for first, candidate in groups:  # a lesson it would contradict is not it: that is for the person to settle
        forms = ((first, candidate.strategy.text), (first + len(suggestions), lesson_text(candidate.strategy)))
        candidate.lesson = next((e for j, e in enumerate(lessons, known)
                                 if any(same(i, j) and not memory.contradicts(text, e) for i, text in forms)), None)
    return [c for _, c in groups]


# The person's preferences (seed 002, section 4.3): each reflection's signal moves a belief's
# confidence toward its strength, (confidence × evidence + strength) / (evidence + 1); one that says
# the opposite counts as a contradiction instead. A belief is told to the agent above BELIEVED, from
# two signals or one said outright; with contradictions past TO_CONFIRM of its evidence it is the
# person's to confirm, and told to nobody.
STRENGTHS = {"HIGH": 0.9, "MEDIUM": 0.7, "LOW": 0.4}
BELIEVED, CONFIRMED, TO_CONFIRM = 0.6, 0.9, 0.3


@dataclass
class Belief:
    signals: list[tuple[Preference, Kept]] = field(default_factory=list)  # oldest first
    confidence: float = 0.0
    evidence: int = 0
    contradictions: int = 0

    @property
    def text(self) -> str:
        return self.signals[0][0].text

    @property
    def to_confirm(self) -> bool:
        return self.evidence > 0 and self.contradictions / self.evidence > TO_CONFIRM

    @property
    def believed(self) -> bool:
        said_outright = any(p.strength == "HIGH" for p, _ in self.signals)
        return (self.confidence > BELIEVED and (self.evidence >= 2 or said_outright)) and not self.to_confirm


def beliefs(memory: LongTermMemory, reflections: list[Kept] | None = None) -> list[Belief]:
    """What the reflections say the person wants, each preference once with its confidence, most
    confident first."""
    reflections = kept(memory) if reflections is None else reflections
    signals = [(p, k) for k in reflections if k.report for p in k.report.preferences]
    # Looser than for strategies: a preference said again is short and worded freely ("keep commits
    # small", "make small commits": 0.90), and its opposite must meet it to count against it.
    same = _sameness(memory, [p.text for p, _ in signals], by_words=0.5, by_meaning=0.9)
    found = []
    for members in _grouped(len(signals), same):
        belief = Belief([signals[i] for i in members])
        for preference, _ in belief.signals:
            if preference is not belief.signals[0][0] and claims_contradict(preference.text, belief.text):
                belief.contradictions += 1
                continue
            strength = STRENGTHS.get(preference.strength, STRENGTHS["LOW"])
            belief.confidence = (belief.confidence * belief.evidence + strength) / (belief.evidence + 1)
            belief.evidence += 1
        found.append(belief)
    return sorted(found, key=lambda b: -b.confidence)


def _grouped(count: int, same) -> list[list[int]]:
    """The indexes 0…count-1 in groups, oldest first: each joins the first group whose first member
    `same` says it is, else starts one."""
    groups: list[list[int]] = []
    for i in range(count):
        group = next((members for members in groups if same(members[0], i)), None)
        if group is None:
            groups.append([i])
        else:
            group.append(i)
    return groups


def lesson_text(strategy: Strategy) -> str:
    return strategy.text + (f" (when: {strategy.when})" if strategy.when else "")


def _sameness(memory: LongTermMemory, texts: list[str], by_words: float = SAME_BY_WORDS,
              by_meaning: float = SAME_BY_MEANING):
    embedder = memory.index.embedder
    if embedder is None or not texts:
        return lambda i, j: word_overlap(texts[i], texts[j]) >= by_words
    vectors = memory.index.text_vectors(texts)
    return lambda i, j: similarity(embedder, float(vectors[i] @ vectors[j])) >= by_meaning


def promote_due(memory: LongTermMemory) -> list[Promotion]:
    """Make a lesson of each candidate three sessions' reflections suggested and MEMORY.md lacks."""
    done = []
    for candidate in candidates(memory):
        if not candidate.due:
            continue
        text = lesson_text(candidate.strategy)
        source = "reflections on " + " + ".join(candidate.sessions)  # no commas: MEMORY.md's entry syntax
        if len(candidate.sessions) < PROMOTE_AT:  # the emergency channel made it one
            source = URGENT + source
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
    return [e.text for e in memory.lessons()]


def make_lesson(memory: LongTermMemory, rel_path: str, index: int) -> Promotion:
    """The person makes a lesson of a kept reflection's strategy now, without waiting for three
    sessions' reflections (or of one the reflection was not sure of). Its lesson if it is one
    already. Raises ValueError when the reflection or the strategy is not there any more, and
    MemoryRefused as MEMORY.md's writer does."""
    path = memory.files.root / rel_path
    reflections = kept(memory)
    this = next((k for k in reflections if k.path == path and k.report is not None), None)
    if this is None or not 0 <= index < len(this.report.strategies):
        raise ValueError(f"the reflection {rel_path} has no strategy {index + 1} (was its file changed?)")
    strategy = this.report.strategies[index]
    candidate = next((c for c in candidates(memory, reflections)
                      if any(k.path == path and s == strategy for s, k in c.suggestions)), None)
    if candidate is not None and candidate.lesson is not None:
        return Promotion(candidate, candidate.lesson)
    candidate = candidate or Candidate([(strategy, this)])
    entry, contradicts = memory.remember(lesson_text(strategy), kind="lesson",
                                         source=f"{MADE_BY_YOU} reflections on {' + '.join(candidate.sessions)}")
    candidate.lesson = entry
    memory.refresh()
    return Promotion(candidate, entry, tuple(contradicts))


LinkFor = Callable[[str, int], str]  # (a reflection's path in memory/, a strategy's index) -> a link


def page(memory: LongTermMemory, rel_path: str, promotions: list[Promotion] | tuple[Promotion, ...] = (),
         lesson_link: LinkFor | None = None) -> str:
    """A kept reflection as Markdown, for the person: the report, and where each of its strategies
    stands now (a lesson, how many sessions' reflections suggested it, or not counted). With
    `lesson_link`, each strategy that is not a lesson links to making it one. Raises OSError when
    the file is gone."""
    from core.memory.reflection import describe

    path = memory.files.root / rel_path
    text = path.read_text(encoding="utf-8", errors="replace")
    heading, _, body = text.partition("\n")
    heading = heading.removeprefix("# ").strip()
    if path.suffix != ".yaml":
        return f"*{heading}.*\n\nThe reply could not be read as a report; here it is as it came:\n\n```\n{body}\n```"
    try:
        report = parse(text)
    except ReflectionUnreadable as exc:  # changed by hand since
        return f"*{heading}.*\n\n{exc}\n\n```\n{body}\n```"
    found = candidates(memory)
    standing = []
    for index, strategy in enumerate(report.strategies):
        candidate = next((c for c in found for s, k in c.suggestions if k.path == path and s == strategy), None)
        if not strategy.counts:
            said = "low confidence: kept in this report, not counted toward a lesson"
        elif candidate is None:
            said = "not counted (its file changed?)"
        elif candidate.lesson is not None:
            said = f"lesson {candidate.lesson.id} in MEMORY.md"
            if candidate.lesson.source.startswith(URGENT):
                said += ", made at once as urgent"
        else:
            said = (f"suggested in {len(candidate.sessions)} of the {PROMOTE_AT} sessions' reflections it takes to "
                    "become a lesson")
        link = (f" [Make it a lesson now]({lesson_link(rel_path, index)})"
                if lesson_link and not (candidate and candidate.lesson) else "")
        standing.append(f"*{said}*{link}")
    notes = []
    for promotion in promotions:
        if promotion.lesson is None:
            notes.append(f"- “{promotion.candidate.strategy.text}” could not become a lesson: {promotion.why}")
        notes.extend(f"- Lesson {promotion.lesson.id} may contradict {other.id} “{other.text}”: confirm one of them "
                     "in MEMORY.md" for other in promotion.contradicts)
    to_confirm = ("\n\n### To confirm\n" + "\n".join(notes)) if notes else ""
    return f"*{heading}.*\n\n{describe(report, standing)}{to_confirm}"


SkillLinkFor = Callable[[str, str], str]  # (a skill's slug, the status to set) -> a link


def overview(memory: LongTermMemory, lesson_link: LinkFor | None = None, skill_link: SkillLinkFor | None = None) -> str:
    """What the agent has learned, as Markdown: the lessons in force (from reflections, the agent or
    the person), the strategies on their way to becoming one (most suggested first, each linking to
    making it a lesson now), and the skills with their status and record."""
    reflections = kept(memory)
    found = candidates(memory, reflections)
    unread = sum(k.report is None for k in reflections)
    parts = [f"*{counted(len(reflections), 'reflection')} kept in memory/{REFLECTIONS}/"
             + (f", {unread} of them not readable as a report" if unread else "")
             + f". A strategy becomes a lesson once the reflections on {PROMOTE_AT} different sessions suggest it;"
             " the lessons that bear on a task are quoted to the agent at its start.*"]
    suggested = {c.lesson.id: len(c.sessions) for c in found if c.lesson is not None}
    lessons = memory.lessons()
    if lessons:
        parts.append("### Lessons (MEMORY.md)\n" + "\n".join(
            f"- **{e.text}** — *{e.id}, {_origin(e, suggested.get(e.id))}, {e.day}*" for e in lessons))

    def line(candidate: Candidate) -> str:
        strategy = candidate.strategy
        when = f" When: {sentence(strategy.when)}" if strategy.when else ""
        first, where = candidate.suggestions[0]
        index = where.report.strategies.index(first) if where.report else 0
        rel = where.path.relative_to(memory.files.root).as_posix()
        link = f" [Make it a lesson now]({lesson_link(rel, index)})" if lesson_link else ""
        return f"- **{strategy.text}**{when} — *{len(candidate.sessions)} of {PROMOTE_AT} sessions*{link}"

    waiting = sorted((c for c in found if c.lesson is None), key=lambda c: -len(c.sessions))
    if waiting:
        parts.append("### Strategies on their way\n" + "\n".join(map(line, waiting)))
    elif not lessons:
        parts.append("No lesson yet, and no strategy suggested with high or medium confidence. Reflect on a task "
                     "(Session → Reflect on the task…), or have each task reflected on as it ends (Settings → "
                     "Supervision).")
    if preferences := beliefs(memory, reflections):
        def belief_line(belief: Belief) -> str:
            said = ("to confirm: it was contradicted" if belief.to_confirm else "confirmed" if belief.confidence > CONFIRMED
                    else "told to the agent" if belief.believed else "not yet told to the agent")
            return (f"- **{belief.text}** — *confidence {belief.confidence:.2f} from {counted(belief.evidence, 'signal')}"
                    + (f", {belief.contradictions} contradicting" if belief.contradictions else "") + f"; {said}*")

        parts.append("### What you showed you want (from reflections)\n" + "\n".join(map(belief_line, preferences)))
    if contradictions := memory.contradictions():
        parts.append("### To confirm (MEMORY.md)\nEntries that may contradict each other: keep the true one and "
                     "delete or supersede the other in MEMORY.md (Open memory folder).\n\n"
                     + "\n".join(f"- {line}" for line in contradictions))
    skills = memory.files.skills()

    def skill_line(skill) -> str:
        change = ("active", "Take it back") if skill.status == "deprecated" else ("deprecated", "Retire it")
        link = f" [{change[1]}]({skill_link(skill.slug, change[0])})" if skill_link else ""
        variant = variant_of(memory.files, skill.slug)
        return (f"- **{skill.name}** — *{skill.status}" + (f" ({skill.why})" if skill.why else "")
                + f"; {skill.successes} of {skill.uses} uses succeeded"
                + (f", latest first {' '.join(skill.recent)}" if skill.recent else "") + f"* · skills/{skill.slug}.md{link}"
                + (f"  \n  {variant_line(variant, skill_link)}" if variant else ""))  # a line of its own, in the item

    if skills:
        parts.append("### Skills\n" + "\n".join(map(skill_line, skills)))
    return "\n\n".join(parts)


def variant_line(variant: Variant, skill_link: SkillLinkFor | None = None) -> str:
    """A skill's variant as the person reads it: what changes, where its test stands, what they can do."""
    proposal = variant.proposal

    def link(words: str, action: str) -> str:
        return f" [{words}]({skill_link(variant.slug, action)})" if skill_link else ""

    where = f"skills/{VARIANTS}/{variant.slug}.md"
    if variant.status == TESTING:
        return (f"*Variant on test*, {proposal.words()} — original {variant.original.words()}; variant "
                f"{variant.variant.words()} · {where}{link('Stop the test', DROP_VARIANT)}")
    why = f" Why: {proposal.why.rstrip('.')}." if proposal.why else ""
    risk = f" Risk: {proposal.risk.rstrip('.')}." if proposal.risk else ""
    return (f"*Variant waiting for you*, {proposal.words()}.{why}{risk} · {where}"
            f"{link('Test it', TEST_VARIANT)}{link('Set it aside', DROP_VARIANT)}")


def _origin(lesson: Entry, sessions: int | None) -> str:
    """Where a lesson came from, in words: the reflections that suggested it, the person, a session."""
    if lesson.source.startswith(MADE_BY_YOU):
        return f"made a lesson by you from the {lesson.source.removeprefix(MADE_BY_YOU).strip()}"
    if lesson.source.startswith(URGENT):
        return f"made a lesson at once, as urgent, from the {lesson.source.removeprefix(URGENT).strip()}"
    if sessions:
        return suggested_in(sessions)
    return f"from {lesson.source}"


def suggested_in(sessions: int) -> str:
    """How many sessions' reflections suggested a strategy, in words."""
    return f"suggested in {counted(sessions, 'session')}' reflections" if sessions != 1 else \
        "suggested in one session's reflection"
