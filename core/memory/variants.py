"""Variants of a skill that works, tried against it (seed 002, section 4.2: "mutations" with A/B tests).

A skill that has done well (ELIGIBLE_USES uses or more, ELIGIBLE_RATE of its latest results
succeeded) may get a variant when a task that followed it is reflected on: one more request to the
reflecting model proposes a change of one kind (a number tuned, the steps reordered, a step
replaced, a new strategy). The variant is kept in skills/variants/<slug>.md, one per skill, and the
next tasks the skill fits alternate between the two: the first the original, the next the variant.
Once each side has ARM_USES uses the test is judged: the variant replaces the skill's steps if it
succeeded more often, or as often in clearly fewer turns; it is set aside if it did worse, or when
MOST_ARM_USES uses each showed no difference. A new strategy (kind D) is the seed's high risk: it
waits for the person to let it be tested. Every verdict is a line of skills/variants/results.jsonl
and of the skill's own file.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date

from core.events import Usage
from core.llm import ModelClient, ModelRequest
from core.memory.guard import MemoryRefused, check
from core.memory.layers import (
    VARIANTS,
    MemoryFiles,
    Skill,
    list_items,
    parse_skill,
    sections_of,
)
from core.memory.working import atomic_write
from core.paths import resource_text
from core.side_writers import first_reply
from core.text import one_line

log = logging.getLogger(__name__)

ELIGIBLE_USES = 10
ELIGIBLE_RATE = 0.85
ARM_USES = 3  # each side's uses before the test is judged
MOST_ARM_USES = 6  # each side's uses after which an undecided test ends, the skill kept as it was
MIN_IMPROVEMENT = TOLERANCE = 0.1  # of the success rate
FEWER_TURNS = 0.8  # as often successful in at most this share of the turns: better; in 1/FEWER_TURNS: worse
KINDS = {"A": "a number tuned", "B": "the steps reordered", "C": "a step replaced", "D": "a new strategy"}
NEEDS_YOU = "D"  # the seed's high risk: tested only once the person lets it be
TESTING, AWAITING = "testing", "waiting for you"
TEST_VARIANT, DROP_VARIANT = "test-variant", "drop-variant"  # what the person can say of one (links, CLI)
RESULTS = "results.jsonl"
LEARNED = "What the agent learned"  # where the person tests or sets aside a variant (the window's View menu)
STEPS_KEPT = 30


class VariantUnreadable(ValueError):
    """The model's reply is not the variants asked for."""


@dataclass
class Arm:
    """One side of a test: the tasks that followed it, how many succeeded, their turns in all."""

    uses: int = 0
    successes: int = 0
    turns: int = 0

    @property
    def rate(self) -> float:
        return self.successes / self.uses if self.uses else 0.0

    @property
    def mean_turns(self) -> float:
        return self.turns / self.uses if self.uses else 0.0

    def words(self) -> str:
        if not self.uses:
            return "not used yet"
        return f"{self.successes} of {self.uses} succeeded, {self.mean_turns:.1f} turns on average"


@dataclass(frozen=True)
class Proposal:
    kind: str
    change: str
    steps: tuple[str, ...]
    why: str = ""
    risk: str = ""
    verify: str = ""

    def words(self) -> str:
        return f"{KINDS[self.kind]}: {self.change}"


@dataclass
class Variant:
    slug: str
    name: str  # the skill's
    proposal: Proposal
    status: str = TESTING
    proposed: str = ""  # when, in which session, by which model
    given: int = 0  # tasks the test has had: an even count gives the next one the original, odd the variant
    original: Arm = field(default_factory=Arm)
    variant: Arm = field(default_factory=Arm)

    def to_markdown(self) -> str:
        p = self.proposal
        status = (f"{TESTING} — the tasks the skill fits alternate between the skill and this variant"
                  if self.status == TESTING else f"{AWAITING} — a new strategy is tested once you let it be")
        return "\n".join([
            f"# Variant of skill: {self.name}", "",
            "## Change", f"{p.kind} ({KINDS[p.kind]}): {p.change}", "",
            "## Why", p.why or "(not said)", "", "## Risk", p.risk or "(not said)", "",
            "## How to verify", p.verify or "(not said)", "",
            "## Steps", *(f"{i}. {s}" for i, s in enumerate(p.steps, 1)), "",
            "## Test", status, f"- given: {self.given}", *(_arm_line(name, arm) for name, arm in
                                                          (("original", self.original), ("variant", self.variant))), "",
            "## Proposed", self.proposed or "(not said)", ""])


def _arm_line(name: str, arm: Arm) -> str:
    return (f"- {name}: {arm.uses} use{'s' * (arm.uses != 1)}, {arm.successes} succeeded, "
            f"{arm.turns} turn{'s' * (arm.turns != 1)}")


_ARM = re.compile(r"^(original|variant): (\d+) uses?, (\d+) succeeded, (\d+) turns?$")


def parse_variant(text: str, slug: str) -> Variant:
    sections = sections_of(text)
    name = re.search(r"^#\s+Variant of skill:\s*(.+)$", text, re.M)
    change = " ".join(sections.get("change", []))
    kind = change[:1] if change[:1] in KINDS else "D"  # unknown: treated as the riskiest
    change = re.sub(r"^[A-D] \([^)]*\):\s*", "", change)

    def said(key: str) -> str:
        value = " ".join(sections.get(key, []))
        return "" if value == "(not said)" else value

    proposal = Proposal(kind, change, tuple(list_items(sections.get("steps", []))), said("why"), said("risk"),
                        said("how to verify"))
    test = sections.get("test", [])
    variant = Variant(slug, name.group(1).strip() if name else slug, proposal, proposed=said("proposed"),
                      status=AWAITING if test and test[0].startswith(AWAITING) else TESTING)
    for line in list_items(test[1:]):
        if line.startswith("given:") and line[6:].strip().isdigit():
            variant.given = int(line[6:].strip())
        elif arm := _ARM.match(line):
            setattr(variant, arm.group(1), Arm(int(arm.group(2)), int(arm.group(3)), int(arm.group(4))))
    return variant


# --- which skills, and the request --------------------------------------------------------------

def eligible(skill: Skill) -> bool:
    """Seed 002's precondition: a skill in use with enough uses, most of the latest of them successes."""
    recent = skill.recent
    return (skill.status == "active" and skill.uses >= ELIGIBLE_USES and bool(recent)
            and recent.count("✓") / len(recent) >= ELIGIBLE_RATE)


def variant_request(model: str, api_base: str | None, skill: Skill, reflection: Sequence[str],
                    tools: Sequence[str], window: int | None = None, earlier: Sequence[str] = ()) -> ModelRequest:
    """No output cap, as for the reflection: a reasoning model spends some of it thinking.
    `earlier`: what the reflections on earlier tasks that followed the skill said, a task a line
    (seed 002's "recent execution data": what the successes and the failures had in common)."""
    said = "\n".join(f"- {line}" for line in reflection) or "(nothing in particular)"
    before = "\n".join(f"- {line}" for line in earlier) or "(none reflected on)"
    return ModelRequest(model=model, api_base=api_base, window=window, messages=[
        {"role": "system", "content": resource_text("prompts", "variant.md")},
        {"role": "user", "content": f"## The skill\n{skill.to_markdown()}\n## The reflection on the latest task "
                                    f"that followed it\n{said}\n\n## Earlier tasks that followed it, latest first\n"
                                    f"{before}\n\n## The agent's tools\n{', '.join(tools)}"},
    ])


EARLIER_TASKS = 6  # reflected on, of those that followed the skill before, in a variant request
EARLIER_LINE_CHARS = 500


def earlier_tasks(kept: Sequence, sessions: set[str], session_id: str) -> list[str]:
    """What the kept reflections (strategies.Kept, oldest first) on `sessions` — other than
    `session_id`'s — said, a task a line, latest first."""
    from core.memory.reflection import digest

    lines = []
    for reflection in reversed(kept):
        if reflection.report is None or reflection.session_id == session_id or reflection.session_id not in sessions:
            continue
        lines.append(one_line(" · ".join(digest(reflection.report)[:3]), EARLIER_LINE_CHARS))
        if len(lines) == EARLIER_TASKS:
            break
    return lines


def proposals(reply: str) -> list[Proposal]:
    """The variants in the model's reply, best first. Raises VariantUnreadable."""
    from core.memory.reflection import ReflectionUnreadable, load

    try:
        data = load(reply)
    except ReflectionUnreadable as exc:
        raise VariantUnreadable(str(exc).replace("The reflection", "The reply")) from exc
    items = data.get("variants") if isinstance(data, dict) else data
    found = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind = str(item.get("kind") or "").strip().upper()[:1]
        change = one_line(str(item.get("change") or ""), 400)
        steps = tuple(one_line(str(s), 400) for s in item.get("steps") or [] if isinstance(s, (str, int, float))
                      and str(s).strip())[:STEPS_KEPT] if isinstance(item.get("steps"), list) else ()
        if kind in KINDS and change and steps:
            found.append(Proposal(kind, change, steps, *(one_line(str(item.get(key) or ""), 400)
                                                         for key in ("why", "risk", "verify"))))
    if not found:
        raise VariantUnreadable(f"The reply has no variant with a kind, a change and steps: "
                                f"{one_line(reply, 200) or '(an empty reply)'}")
    return found


def chosen(found: Sequence[Proposal], skill: Skill) -> Proposal | None:
    """The one to test: the best that changes the steps, one of the lower risks before a new strategy."""
    changed = [p for p in found if list(p.steps) != skill.steps]
    return next((p for p in changed if p.kind != NEEDS_YOU), changed[0] if changed else None)


async def propose_for(files: MemoryFiles, followed: Sequence[str], reflection: Sequence[str], tools: Sequence[str],
                      client: ModelClient, writers: list[tuple[str, str | None]], windows: dict[str, int | None],
                      session_id: str, earlier: Callable[[str], Sequence[str]] = lambda slug: ()) -> tuple[str, Usage]:
    """After a reflection on a task that followed skills: a variant of the first of them that has
    earned one and has none yet, from the reflecting model (`earlier`: what the reflections on the
    earlier tasks that followed a skill said, by its slug). (What came of it for the person, "" when
    no skill was due; what the request cost.) A failure is said, never raised: the reflection stands."""
    skills = await asyncio.to_thread(files.skills)
    skill = next((s for s in skills if s.slug in followed and eligible(s) and not files.variant_path(s.slug).exists()),
                 None)
    if skill is None:
        return "", Usage()
    before = await asyncio.to_thread(earlier, skill.slug)
    reply, writer, failures = await first_reply(client, writers, lambda model, api_base: variant_request(
        model, api_base, skill, reflection, tools, windows.get(model), before))
    if reply is None:
        log.warning("no variant of skill %s: %s", skill.slug, "; ".join(failures))
        return f"no variant of the skill “{skill.name}” could be proposed: {'; '.join(failures)}", Usage()
    try:
        proposal = chosen(proposals(reply.text), skill)
        if proposal is None:
            raise VariantUnreadable("every variant proposed had the skill's steps unchanged")
        variant = await asyncio.to_thread(propose, files, skill, proposal,
                                          f"{date.today():%Y-%m-%d}, session {session_id}, by {writer}")
    except (VariantUnreadable, MemoryRefused) as exc:
        log.warning("no variant of skill %s: %s", skill.slug, exc)
        return f"no variant of the skill “{skill.name}”: {str(exc).rstrip('.')}", reply.usage
    if variant is None:  # another process proposed one meanwhile
        return "", reply.usage
    waits = f" (it waits for you in View → {LEARNED})" if variant.status == AWAITING else ""
    return f"a variant of the skill “{skill.name}” to test, {proposal.words()}{waits}", reply.usage


# --- on disk ------------------------------------------------------------------------------------

def variant_of(files: MemoryFiles, slug: str) -> Variant | None:
    path = files.variant_path(slug)
    return parse_variant(path.read_text(encoding="utf-8", errors="replace"), slug) if path.is_file() else None


def propose(files: MemoryFiles, skill: Skill, proposal: Proposal, proposed: str) -> Variant | None:
    """Keep the variant to test (or, a new strategy, to ask about); None if the skill has one
    already. Raises MemoryRefused when it holds a secret or a temporary value."""
    check("\n".join([proposal.change, proposal.why, proposal.risk, proposal.verify, *proposal.steps]))
    with files._lock():
        path = files.variant_path(skill.slug)
        if path.exists():
            return None
        variant = Variant(skill.slug, skill.name, proposal, AWAITING if proposal.kind == NEEDS_YOU else TESTING,
                          proposed)
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, variant.to_markdown())
        return variant


def give_out(files: MemoryFiles, slug: str) -> Variant | None:
    """A task is about to follow the skill: the variant when it is this task's turn to have it."""
    with files._lock():
        variant = variant_of(files, slug)
        if variant is None or variant.status != TESTING or not variant.proposal.steps:  # (emptied by hand)
            return None
        variant.given += 1
        atomic_write(files.variant_path(slug), variant.to_markdown())
        return variant if variant.given % 2 == 0 else None


def record_use(files: MemoryFiles, slug: str, succeeded: bool, turns: int, *, on_variant: bool) -> str:
    """A task that followed the skill (or its variant) ended: its record, the test's, and the
    verdict once there is one. What changed, in words ("" when nothing did)."""
    said = "" if on_variant else files.record_skill_use(slug, succeeded)
    with files._lock():
        variant = variant_of(files, slug)
        if variant is None or variant.status != TESTING:
            return said
        arm = variant.variant if on_variant else variant.original
        arm.uses, arm.successes, arm.turns = arm.uses + 1, arm.successes + int(succeeded), arm.turns + turns
        return _judged(files, variant, said)


def take_back_success(files: MemoryFiles, slug: str, *, on_variant: bool) -> str:
    """The latest task that followed the skill (or its variant), counted a success, was not one:
    the person undid its work. Counted a failure, in the skill's record and in its variant's test
    (which may then end). What changed, in words ("" when nothing did)."""
    said = "" if on_variant else files.take_back_skill_success(slug)
    with files._lock():
        variant = variant_of(files, slug)
        if variant is None or variant.status != TESTING:
            return said
        arm = variant.variant if on_variant else variant.original
        if not arm.successes:
            return said
        arm.successes -= 1
        return _judged(files, variant, said)


def _judged(files: MemoryFiles, variant: Variant, said: str) -> str:
    """The test's record written, and its verdict once it has one (under files._lock())."""
    verdict = judge(variant)
    if verdict is None:
        atomic_write(files.variant_path(variant.slug), variant.to_markdown())
        return said
    return _settle(files, variant, *verdict)


def judge(variant: Variant) -> tuple[bool, str] | None:
    """(keep it?, why) once the test can say; None while it cannot yet."""
    original, tried = variant.original, variant.variant
    each = min(original.uses, tried.uses)
    if each < ARM_USES:
        return None
    if tried.rate > original.rate + MIN_IMPROVEMENT:
        return True, "it succeeded more often"
    if tried.rate < original.rate - TOLERANCE:
        return False, "it succeeded less often"
    if tried.successes and tried.mean_turns <= original.mean_turns * FEWER_TURNS:  # (failing faster is no gain)
        return True, "it succeeded as often in fewer turns"
    if tried.mean_turns * FEWER_TURNS >= original.mean_turns:
        return False, "it succeeded as often in more turns"
    if each >= MOST_ARM_USES:
        return False, f"after {each} uses each it did no better"
    return None


def decide(files: MemoryFiles, slug: str, test: bool, today: date | None = None) -> Variant:
    """The person's word: test the variant that waits for them, or set it aside (also during its
    test). Raises ValueError when the skill has no variant."""
    with files._lock():
        variant = variant_of(files, slug)
        if variant is None:
            raise ValueError(f"the skill {slug!r} has no variant (skills/{VARIANTS}/{slug}.md)")
        if not test:
            _settle(files, variant, False, "set aside by you", today)
            return variant
        variant.status = TESTING
        atomic_write(files.variant_path(slug), variant.to_markdown())
        return variant


def _settle(files: MemoryFiles, variant: Variant, keep: bool, why: str, today: date | None = None) -> str:
    """Apply a verdict (the memory lock held): the skill takes the variant's steps as its next
    version, or notes it tried the variant; the variant's file goes; the results log has a line."""
    day = f"{today or date.today():%Y-%m-%d}"
    test = f"variant {variant.variant.words()}; original {variant.original.words()}"
    skill_path = files.skill_path(variant.slug)
    if skill_path.exists():
        skill = parse_skill(skill_path.read_text(encoding="utf-8"), variant.slug)
        if keep:
            skill.steps = list(variant.proposal.steps)
            skill.versions.append(f"v{len(skill.versions) + 1} {day}: a tested variant kept, "
                                  f"{variant.proposal.words()} — {why} ({test})")
        else:
            used = variant.original.uses or variant.variant.uses
            skill.tried.append(f"{day}: {variant.proposal.words()} — {why}" + (f" ({test})" if used else ""))
        atomic_write(skill_path, skill.to_markdown())
    files.variant_path(variant.slug).unlink(missing_ok=True)
    with (files.skills_dir / VARIANTS / RESULTS).open("a", encoding="utf-8") as results:
        results.write(json.dumps({"day": day, "skill": variant.slug, "kept": keep, "why": why,
                              "kind": variant.proposal.kind, "change": variant.proposal.change,
                              "original": asdict(variant.original), "variant": asdict(variant.variant)},
                             ensure_ascii=False, sort_keys=True) + "\n")
    return f"its variant ({variant.proposal.words()}) was {'kept' if keep else 'set aside'}: {why}"
