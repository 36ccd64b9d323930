"""The long-term memory layers as Markdown files in the data folder.

    memory/daily/YYYY-MM-DD.md   episodic: one entry per task or burst of tool calls
    memory/MEMORY.md             semantic: facts and preferences, each with its source session
    memory/skills/<name>.md      procedural: triggers, steps, tools, success record, versions

Plain Markdown, so the person can read and edit every layer; the index (index.py) is derived from
these files and can be rebuilt from them at any time. Every write passes `guard.check`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

from filelock import FileLock

from core.memory.guard import MemoryRefused, check
from core.memory.working import atomic_write
from core.text import counted, one_line

MEMORY_FILE = "MEMORY.md"
SECTIONS = {"fact": "Facts", "preference": "Preferences", "lesson": "Lessons"}
CONTRADICTIONS = "Contradictions to confirm"
MEMORY_TEMPLATE = (
    "# Long-term memory\n\n"
    "Facts and preferences that outlive one session. Each entry names the session it came from.\n"
    "New information is added, and marks what it supersedes; nothing is silently overwritten.\n\n"
    + "".join(f"## {title}\n\n" for title in SECTIONS.values())
    + f"## {CONTRADICTIONS}\n\n"
)
# - [m12] The CI runs on Python 3.11 — source: 20261122-101500-ab12, 2026-11-22 — supersedes m3
ENTRY = re.compile(r"^- \[(?P<id>m\d+)\] (?P<text>.*?) — source: (?P<source>[^,]+), (?P<day>\d{4}-\d{2}-\d{2})"
                   r"(?P<rest>.*)$")


@dataclass(frozen=True)
class Entry:
    id: str
    text: str
    source: str
    day: str
    section: str
    superseded_by: str | None
    supersedes: str | None
    line: int


@dataclass(frozen=True)
class Episode:
    """One task or burst of tool calls, as it goes into the daily log."""

    title: str
    asked: str
    done: str
    failed: tuple[str, ...]
    tool_calls: int
    errors: int
    minutes: float
    session_id: str
    status: str
    answers: tuple[str, ...] = ()  # questions put to the person with their answers (options.answer_line)
    # Failures diagnosed as they happened again (core/agent/diagnosis.py): what was wrong and what
    # to try, where the next diagnosis of a failure like it looks first.
    diagnosed: tuple[str, ...] = ()


ASKED_THE_PERSON = "- The person was asked: "
DIAGNOSED = "- Diagnosed: "

# A skill's life (seed 002, section 4.1): a new one, or a new version, is on trial for its first
# TRIAL_USES uses; it becomes active if PASS_RATE of them succeeded, deprecated if not. An active skill
# that fails FAILURES_TO_DEPRECATE times in a row is deprecated. A deprecated skill is neither offered
# nor followed; the person sets it back by writing "active" under its Status.
TRIAL_USES = 3
PASS_RATE = 0.6
FAILURES_TO_DEPRECATE = 5
STATUSES = ("probation", "active", "deprecated")
# The latest results, shown latest first in the success record; as many as seed 002's mutations
# judge a skill by ("a success rate of 0.85 over its latest 20 uses", variants.py).
RECENT_KEPT = 20
REPORT_KEPT_CHARS = 6_000  # of a research report in the daily log: the advised 400 words fit, a runaway does not
VARIANTS = "variants"  # skills/variants/<slug>.md: a variant of the skill, tried against it (variants.py)
_TRIAL = re.compile(r"trial: (\d+) of \d+ uses?, (\d+) succeeded")
_RECENT = re.compile(r"latest first: ([✓✗ ]+)")
_TRIAL_PASSED = re.compile(r"passed its trial at use (\d+): (\d+) of (\d+) uses succeeded")


@dataclass
class Skill:
    name: str
    slug: str
    triggers: list[str]
    steps: list[str]
    tools: list[str]
    uses: int = 0
    successes: int = 0
    versions: list[str] = field(default_factory=list)
    status: str = "probation"
    why: str = ""  # what the status line says after the status
    trial_uses: int = 0  # uses since the trial began (probation only)
    trial_successes: int = 0
    recent: str = ""  # the latest results, latest first: "✗✓✓"
    tried: list[str] = field(default_factory=list)  # variants tried against it and set aside, with why

    @property
    def usable(self) -> bool:
        return self.status != "deprecated"

    def record(self, succeeded: bool) -> str:
        """Count one use; the new status's reason when the use changed it, else ""."""
        self.uses += 1
        self.successes += int(succeeded)
        self.recent = ("✓" if succeeded else "✗") + self.recent[: RECENT_KEPT - 1]
        if self.status == "probation":
            self.trial_uses += 1
            self.trial_successes += int(succeeded)
            if self.trial_uses < TRIAL_USES:
                self.why = self._trial_words()
                return ""
            return self._end_trial(self.trial_successes, self.trial_uses)
        return self._deprecated_by_failures()

    def _end_trial(self, successes: int, uses: int, taken_back: str = "") -> str:
        """The trial's verdict (the use that ended it is named: a success it counted may be taken
        back, and the trial judged again)."""
        passed = successes / uses >= PASS_RATE
        self.status = "active" if passed else "deprecated"
        self.why = (f"{'passed' if passed else 'failed'} its trial at use {self.uses}: {successes} of {uses} uses "
                    f"succeeded{taken_back}")
        return self.why

    def take_back_success(self) -> str:
        """The latest use was counted a success, and was not one: the person undid its work. It is
        counted a failure instead, in the trial too while the skill is on trial. The new status's
        reason when that changes it, else ""."""
        if not self.recent.startswith("✓") or not self.successes:
            return ""
        self.successes -= 1
        self.recent = "✗" + self.recent[1:]
        if self.status == "probation" and self.trial_successes:
            self.trial_successes -= 1
            self.why = self._trial_words()
            return ""
        ended = _TRIAL_PASSED.match(self.why)
        if self.status == "active" and ended and int(ended.group(1)) == self.uses:  # the use that passed it
            successes, uses = int(ended.group(2)) - 1, int(ended.group(3))
            said = self._end_trial(successes, uses, taken_back=" (a success taken back)")
            return said if self.status != "active" else ""
        return self._deprecated_by_failures()

    def _deprecated_by_failures(self) -> str:
        if self.status == "active" and self.recent.startswith("✗" * FAILURES_TO_DEPRECATE):
            self.status, self.why = "deprecated", f"{FAILURES_TO_DEPRECATE} failed uses in a row"
            return self.why
        return ""

    def on_trial(self) -> None:
        """A new version: on trial again, its record so far kept."""
        self.status, self.trial_uses, self.trial_successes = "probation", 0, 0
        self.why = self._trial_words()

    def _trial_words(self) -> str:
        return f"trial: {self.trial_uses} of {TRIAL_USES} uses, {self.trial_successes} succeeded"

    def to_markdown(self) -> str:
        recent = f"; latest first: {' '.join(self.recent)}" if self.recent else ""
        lines = [f"# Skill: {self.name}", "", "## Triggers", *(f"- {t}" for t in self.triggers), "",
                 "## Steps", *(f"{i}. {s}" for i, s in enumerate(self.steps, 1)), "",
                 "## Tools", ", ".join(self.tools) or "(none)", "",
                 "## Status", self.status + (f" — {self.why}" if self.why else ""), "",
                 "## Success record", f"{self.successes} of {self.uses} uses succeeded{recent}", "",
                 "## Versions", *(f"- {v}" for v in self.versions), ""]
        if self.tried:
            lines += ["## Variants tried", *(f"- {t}" for t in self.tried), ""]
        return "\n".join(lines)


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug[:60] or "skill"


def sections_of(text: str) -> dict[str, list[str]]:
    """A file's `## Heading` sections (headings lower-cased), each as its non-blank lines, stripped."""
    sections: dict[str, list[str]] = {}
    current = ""
    for line in text.splitlines():
        heading = re.match(r"^##\s+(.+?)\s*$", line)
        if heading:
            current = heading.group(1).lower()
            sections[current] = []
        elif current and line.strip():
            sections[current].append(line.strip())
    return sections


def list_items(lines: list[str]) -> list[str]:
    """A section's list items without their bullets or numbers."""
    return [re.sub(r"^(?:[-*]|\d+[.)])\s+", "", item) for item in lines]


def parse_skill(text: str, slug: str) -> Skill:
    """A skill file as the person or the agent wrote it; unknown sections are ignored."""
    name_match = re.search(r"^#\s+(?:Skill:\s*)?(.+)$", text, re.M)
    sections = sections_of(text)

    def items(key: str) -> list[str]:
        return list_items(sections.get(key, []))

    record = " ".join(sections.get("success record", []))
    numbers = re.match(r"(\d+) of (\d+)", record)
    recent = _RECENT.search(record)
    tools = [t.strip() for t in ",".join(items("tools")).split(",") if t.strip() and t.strip() != "(none)"]
    skill = Skill(name=name_match.group(1).strip() if name_match else slug, slug=slug, triggers=items("triggers"),
                  steps=items("steps"), tools=tools, successes=int(numbers.group(1)) if numbers else 0,
                  uses=int(numbers.group(2)) if numbers else 0, versions=items("versions"),
                  recent=recent.group(1).replace(" ", "")[:RECENT_KEPT] if recent else "",
                  tried=items("variants tried"))
    status_line = " ".join(sections.get("status", []))
    said = status_line.split(maxsplit=1)[0].strip(".,;:—-").lower() if status_line.strip() else ""
    if said in STATUSES:
        skill.status, skill.why = said, status_line.split("—", 1)[1].strip() if "—" in status_line else ""
        trial = _TRIAL.search(status_line)
        if said == "probation" and trial:
            skill.trial_uses, skill.trial_successes = int(trial.group(1)), int(trial.group(2))
    else:  # written before skills had a status, or by hand without one: it earned its place, or is on trial
        skill.status = "active" if skill.uses >= TRIAL_USES and skill.successes / skill.uses >= PASS_RATE else "probation"
        skill.trial_uses, skill.trial_successes = (0, 0) if skill.status == "active" else (skill.uses, skill.successes)
        skill.why = skill._trial_words() if skill.status == "probation" else ""
    return skill


class MemoryFiles:
    def __init__(self, root: Path):
        self.root = root
        self.daily_dir = root / "daily"
        self.skills_dir = root / "skills"
        self.memory_path = root / MEMORY_FILE

    def ensure(self) -> None:
        self.daily_dir.mkdir(parents=True, exist_ok=True)
        self.skills_dir.mkdir(parents=True, exist_ok=True)
        if not self.memory_path.exists():
            self.memory_path.write_text(MEMORY_TEMPLATE, encoding="utf-8")

    def _lock(self) -> FileLock:
        """One writer at a time across processes (the window and a `tripane run` share the folder)."""
        self.root.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.root / ".memory.lock"), timeout=30)

    def markdown_files(self) -> list[Path]:
        """Every file the index covers."""
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.rglob("*.md") if p.is_file())

    def relative(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    # --- episodic --------------------------------------------------------------------------------

    def daily_path(self, day: date) -> Path:
        return self.daily_dir / f"{day:%Y-%m-%d}.md"

    def append_episode(self, episode: Episode, when: datetime | None = None) -> Path:
        when = when or datetime.now()
        failed = "".join(f"- Failed: {item}\n" for item in episode.failed)
        failed += "".join(f"{DIAGNOSED}{one_line(item, 700)}\n" for item in episode.diagnosed)
        failed += "".join(f"{ASKED_THE_PERSON}{one_line(item, 700)}\n" for item in episode.answers)
        # A burst that stopped mid-task (a question, a compaction) says where it stands, not what is done.
        done = "Done" if episode.status in ("done", "capped", "aborted", "error") else "Where it stands"
        entry = (f"\n## {when:%H:%M} – {one_line(episode.title, 100)}\n"
                 f"- Asked: {one_line(episode.asked, 300)}\n"
                 f"- {done}: {one_line(episode.done, 600)}\n{failed}"
                 f"- {counted(episode.tool_calls, 'tool call')}, {counted(episode.errors, 'error')}, "
                 f"{episode.minutes:.0f} min; ended {episode.status}; session {episode.session_id}\n")
        return self._append_daily(entry, when)

    def append_reflection(self, title: str, lines: list[str], session_id: str, kept_at: str,
                          when: datetime | None = None) -> Path:
        """A reflection's digest in today's daily log, where memory search finds it (the report's
        YAML file is not indexed): what went wrong and why, what it suggests. `kept_at`: the report's
        file name (a path would read as a random token to the guard)."""
        when = when or datetime.now()
        body = "".join(f"- {one_line(line, 600)}\n" for line in lines)
        entry = (f"\n## {when:%H:%M} – Reflection on: {one_line(title, 100)}\n{body}"
                 f"- session {session_id}; the report is {kept_at} in the reflections folder\n")
        return self._append_daily(entry, when)

    def append_research(self, question: str, report: str, *, steps: int, reads: int, session_id: str,
                        asked_by: str, when: datetime | None = None) -> Path:
        """A research helper's report in today's daily log (seed 002, section 6.2: what research found
        is kept in episodic memory), where a later task's memory search finds it. Quoted, so that its
        headings stay inside the entry; cut at REPORT_KEPT_CHARS."""
        when = when or datetime.now()
        text = report.strip()
        if len(text) > REPORT_KEPT_CHARS:
            text = text[:REPORT_KEPT_CHARS].rstrip() + " … (cut here)"
        quoted = "\n".join(f"> {line}".rstrip() for line in text.splitlines())
        entry = (f"\n## {when:%H:%M} – Research: {one_line(question, 100)}\n"
                 f"- Asked: {one_line(question, 300)} (asked by {asked_by})\n"
                 f"- {steps} step{'s' * (steps != 1)}, {reads} read{'s' * (reads != 1)}; session {session_id}\n\n"
                 f"{quoted}\n")
        return self._append_daily(entry, when)

    def _append_daily(self, entry: str, when: datetime) -> Path:
        try:
            check(entry)
        except MemoryRefused:
            entry = _redact_lines(entry)  # the entry is still written, without the offending lines
        self.ensure()
        path = self.daily_path(when.date())
        with self._lock(), path.open("a", encoding="utf-8") as fh:
            if fh.tell() == 0:
                fh.write(f"# {when:%Y-%m-%d}\n")
            fh.write(entry)
        return path

    # --- semantic --------------------------------------------------------------------------------

    def entries(self) -> list[Entry]:
        if not self.memory_path.exists():
            return []
        found, section = [], ""
        for number, line in enumerate(self.memory_path.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("## "):
                section = line[3:].strip()
                continue
            match = ENTRY.match(line)
            if match:
                rest = match.group("rest")
                by = re.search(r"superseded by (m\d+)", rest)
                of = re.search(r"supersedes (m\d+)", rest)
                found.append(Entry(match.group("id"), match.group("text"), match.group("source").strip(),
                                   match.group("day"), section, by.group(1) if by else None,
                                   of.group(1) if of else None, number))
        return found

    def remember(self, text: str, *, kind: str, source: str, supersedes: str | None = None,
                 contradicts: list[Entry] | None = None, today: date | None = None) -> Entry:
        """Add one entry; mark the one it supersedes; flag contradictions. Raises MemoryRefused."""
        text = one_line(text, 500)
        if not text:
            raise MemoryRefused("Refused: the fact is empty.")
        if kind not in SECTIONS:
            raise MemoryRefused(f"Refused: kind must be one of {', '.join(SECTIONS)}, not {kind!r}.")
        check(text, fact=True)
        with self._lock():
            self.ensure()
            existing = self.entries()
            by_id = {e.id: e for e in existing}
            if supersedes and supersedes not in by_id:
                raise MemoryRefused(f"Refused: there is no entry {supersedes} to supersede; "
                                    f"search memory for the entry's id first.")
            same = [e for e in existing if e.text.casefold() == text.casefold() and e.superseded_by is None]
            if same:
                return same[0]  # already known: adding it twice would only make duplicates to merge later
            new_id = f"m{max((int(e.id[1:]) for e in existing), default=0) + 1}"
            day = f"{today or date.today():%Y-%m-%d}"
            suffix = f" — supersedes {supersedes}" if supersedes else ""
            lines = self.memory_path.read_text(encoding="utf-8").splitlines()
            if supersedes:
                old = by_id[supersedes]
                lines[old.line - 1] += f" — superseded by {new_id}"
            lines = _insert_in_section(lines, SECTIONS[kind], f"- [{new_id}] {text} — source: {source}, {day}{suffix}")
            for other in contradicts or ():
                if other.id != supersedes:
                    lines = _insert_in_section(lines, CONTRADICTIONS,
                                               f"- {new_id} may contradict {other.id}: “{text}” vs “{other.text}”")
            atomic_write(self.memory_path, "\n".join(lines) + "\n")
            return next(e for e in self.entries() if e.id == new_id)

    def archive_superseded(self) -> list[Entry]:
        """Move MEMORY.md's superseded entries to archive/MEMORY.md (appended, with the day): kept,
        out of the file the agent and the person read. Returns the entries moved."""
        with self._lock():
            gone = [e for e in self.entries() if e.superseded_by is not None]
            if not gone:
                return []
            numbers = {e.line for e in gone}
            lines = self.memory_path.read_text(encoding="utf-8").splitlines()
            archive = self.root / "archive" / MEMORY_FILE
            archive.parent.mkdir(parents=True, exist_ok=True)
            with archive.open("a", encoding="utf-8") as fh:
                if fh.tell() == 0:
                    fh.write("# Superseded entries of MEMORY.md\n\nMoved here by `tripane memory doctor --apply` "
                             "when MEMORY.md grew past 50 KB.\n")
                fh.write(f"\n## Moved {date.today():%Y-%m-%d}\n" + "".join(f"{lines[n - 1]}\n" for n in sorted(numbers)))
            atomic_write(self.memory_path, "\n".join(line for i, line in enumerate(lines, 1) if i not in numbers) + "\n")
            return gone

    # --- procedural ------------------------------------------------------------------------------

    def skills(self) -> list[Skill]:
        if not self.skills_dir.is_dir():
            return []
        return [parse_skill(p.read_text(encoding="utf-8", errors="replace"), p.stem)
                for p in sorted(self.skills_dir.glob("*.md"))]

    def skill_path(self, slug: str) -> Path:
        return self.skills_dir / f"{slug}.md"

    def variant_path(self, slug: str) -> Path:
        return self.skills_dir / VARIANTS / f"{slug}.md"

    def save_skill(self, name: str, triggers: list[str], steps: list[str], tools: list[str], *,
                   source: str, change: str, today: date | None = None) -> Skill:
        """Create a skill, or write its next version with a line of history. Raises MemoryRefused."""
        triggers = [one_line(t, 200) for t in triggers if t.strip()]
        steps = [one_line(s, 400) for s in steps if s.strip()]
        if not name.strip() or not triggers or not steps:
            raise MemoryRefused("Refused: a skill needs a name, at least one trigger and at least one step.")
        check("\n".join([name, *triggers, *steps, change]))
        with self._lock():
            self.ensure()
            slug = slugify(name)
            path = self.skill_path(slug)
            old = parse_skill(path.read_text(encoding="utf-8"), slug) if path.exists() else None
            versions = list(old.versions) if old else []
            day = f"{today or date.today():%Y-%m-%d}"
            versions.append(f"v{len(versions) + 1} {day} (session {source}): {one_line(change, 200) or 'first version'}")
            skill = Skill(name=one_line(name, 80), slug=slug, triggers=triggers, steps=steps,
                          tools=[t.strip() for t in tools if t.strip()], uses=old.uses if old else 0,
                          successes=old.successes if old else 0, versions=versions, recent=old.recent if old else "",
                          tried=list(old.tried) if old else [])
            skill.on_trial()  # a new skill, or a changed one, proves itself again
            variant = self.variant_path(slug)
            if variant.exists():  # it was a variant of the steps that are gone: its test means nothing now
                variant.unlink()
                skill.tried.append(f"{day}: a variant's test ended when v{len(versions)} changed the skill")
            atomic_write(path, skill.to_markdown())
            return skill

    def set_skill_status(self, slug: str, status: str) -> Skill:
        """The person's word on a skill: "active" (taken back, or trusted without a trial) or
        "deprecated" (retired: neither offered nor followed). Raises ValueError for another status
        or a skill that is not there."""
        if status not in ("active", "deprecated"):
            raise ValueError(f"a skill is set active or deprecated, not {status!r}")
        path = self.skill_path(slug)
        with self._lock():
            if not path.exists():
                raise ValueError(f"there is no skill {slug!r} (skills/{slug}.md)")
            skill = parse_skill(path.read_text(encoding="utf-8"), slug)
            skill.status, skill.why = status, "set by you"
            skill.trial_uses = skill.trial_successes = 0
            atomic_write(path, skill.to_markdown())
            return skill

    def record_skill_use(self, slug: str, succeeded: bool) -> str:
        """Count a task that followed the skill; its new status and why when this use changed it
        ("active — passed its trial: …"), else ""."""
        return self._change_skill(slug, lambda skill: skill.record(succeeded))

    def take_back_skill_success(self, slug: str) -> str:
        """The latest task that followed the skill, counted a success, was not one (Skill.take_back_success)."""
        return self._change_skill(slug, Skill.take_back_success)

    def _change_skill(self, slug: str, change: Callable[[Skill], str]) -> str:
        path = self.skill_path(slug)
        with self._lock():
            if not path.exists():
                return ""
            skill = parse_skill(path.read_text(encoding="utf-8"), slug)
            changed = change(skill)
            atomic_write(path, skill.to_markdown())
            return f"{skill.status} — {changed}" if changed else ""


def _insert_in_section(lines: list[str], title: str, line: str) -> list[str]:
    """Append `line` at the end of section `title` (created at the end of the file if absent)."""
    heading = f"## {title}"
    if heading not in lines:
        return [*lines, "", heading, "", line]
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("## ")), len(lines))
    last = max((i for i in range(start, end) if lines[i].strip()), default=start)
    gap = [""] if last + 1 < len(lines) and lines[last + 1].startswith("## ") else []
    return [*lines[: last + 1], line, *gap, *lines[last + 1:]]


def _redact_lines(text: str) -> str:
    kept = []
    for line in text.splitlines(keepends=True):
        try:
            check(line)
            kept.append(line)
        except MemoryRefused:
            kept.append("- (a line was left out: it held a secret or a temporary value)\n")
    return "".join(kept)
