"""A session's state, derived only from its event log.

Nothing here is kept anywhere else: reopening a session folds its events through `apply` and the
loop continues exactly where it was — turn count, strikes, open question, approvals, model.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from core.agent.rules import describe_failure, diagnosis_due, put_back_signature
from core.events import (
    AssistantMessage,
    Compaction,
    Danger,
    ErrorDiagnosed,
    ErrorRecorded,
    Event,
    FileChanged,
    FilesPutBack,
    HumanAnswer,
    HumanQuestion,
    MemoryRecalled,
    ModelChanged,
    PinsChanged,
    Record,
    ReflectionWritten,
    ResearchStep,
    ServerTool,
    ServerToolsListed,
    SessionBranched,
    SessionEnded,
    SessionPaused,
    SessionResumed,
    SessionStarted,
    ToolResult,
    Usage,
    UserMessage,
    WindowLearned,
    WorkdirMoved,
)
from core.memory.working import FINDINGS
from core.secrets import provider_of

DEFAULT_CONTINUE_TURNS = 10


@dataclass
class FileInfo:
    version: int
    sha256: str
    size: int
    author: str = ""  # who wrote this version: agent | user | external | core


@dataclass
class SessionState:
    session_id: str
    config: SessionStarted | None = None
    started: str = ""  # when the session started (ISO time of its first event)
    last_seq: int = 0
    turn: int = 0
    status: str = "new"  # new | running | paused | waiting | ended:<status>
    model: str = ""
    # Where the model is served and how much it reads: the session's start, until the person
    # chooses another model (ModelChanged).
    api_base: str | None = None
    context_window: int | None = None
    reasoning_effort: str = ""  # the session's start, or the person's latest change of model
    moved_to: str = ""  # the work folder's new place, when the person gave one (WorkdirMoved)
    usage: Usage = field(default_factory=Usage)
    strikes: dict[str, int] = field(default_factory=dict)
    # Each counted failure's latest occurrence as a reader understands it (the signature itself is
    # masked — "<q>", "<n>" — and means little to the model or the person).
    strike_latest: dict[str, str] = field(default_factory=dict)
    actions_since_finding: int = 0
    info_tools: frozenset[str] = frozenset()
    pending_calls: dict[str, str] = field(default_factory=dict)  # call id -> tool name
    # The questions waiting for the person, oldest first: the run's (one at a time) and a research
    # helper's, which may come while the person's own helper, aside, asks too.
    open_questions: dict[str, HumanQuestion] = field(default_factory=dict)
    questions: dict[str, HumanQuestion] = field(default_factory=dict)
    always_allowed: set[str] = field(default_factory=set)  # tools the person allowed for the session
    always_allowed_calls: set[str] = field(default_factory=set)  # approval_key()s of calls they allowed
    danger_limit: int = 0
    budget_tokens: int = 0  # the current caps (0: none); a "continue" answer raises them
    budget_usd: float = 0.0
    warned: bool = False
    answers: dict[str, tuple[HumanAnswer, int]] = field(default_factory=dict)  # qid -> (answer, seq)
    strike_due: str | None = None  # a signature that reached the limit and was not yet asked about
    diagnosis_due: str | None = None  # a signature that happened again and was not yet diagnosed
    diagnosed: set[str] = field(default_factory=set)  # signatures diagnosed since their count began
    put_back_due: int | None = None  # the seq of files the person put back, not yet diagnosed
    halt_requested: bool = False  # the person answered "stop" to a question
    files: dict[str, FileInfo] = field(default_factory=dict)
    pins: dict[str, tuple[str, ...]] = field(default_factory=dict)
    last_metrics: dict = field(default_factory=dict)
    last_reply_model: str = ""  # the model that wrote the last reply (last_metrics are of its request)
    memory_recalled: bool = False
    learned_window: int = 0  # the model's window as the provider stated it (0: none stated)
    injected_skills: tuple[str, ...] = ()
    injected_variants: tuple[str, ...] = ()  # of those, the ones followed in their variant on test
    server_tools: tuple[ServerTool, ...] = ()  # the tool servers' tools it was given (ServerToolsListed)
    servers_listed: bool = False  # whether they were listed (then never again: the prefix holds them)

    @property
    def ended(self) -> bool:
        return self.status.startswith("ended")

    @property
    def open_question(self) -> HumanQuestion | None:
        """The question the person is asked now: the latest of those waiting."""
        return next(reversed(self.open_questions.values()), None)

    @property
    def runs_question(self) -> HumanQuestion | None:
        """The open question of the run, if it has one (not one the person's own helper asks)."""
        return next((q for q in reversed(self.open_questions.values()) if not asked_aside(q)), None)

    def apply(self, record: Record) -> None:
        self.last_seq = record.seq
        if isinstance(record.event, SessionStarted):
            self.started = record.ts
        self._apply(record.event)
        if isinstance(record.event, HumanAnswer):
            self.answers[record.event.qid] = (record.event, record.seq)

    @property
    def workdir(self) -> str:
        """Where the agent works: the session's work folder, or its new place once moved."""
        assert self.config is not None
        return self.moved_to or self.config.workdir

    def question_for_call(self, call_id: str) -> HumanQuestion | None:
        """The question asked about this call itself (not one of its research helper's reads)."""
        for question in reversed(self.questions.values()):
            if question.context.get("call_id") == call_id and not asked_by_helper(question):
                return question
        return None

    def _apply(self, event: Event) -> None:  # noqa: C901 - one branch per event kind reads best
        match event:
            case SessionStarted():
                self.config = event
                self.model, self.api_base, self.context_window = event.model, event.api_base, event.context_window
                self.reasoning_effort = event.reasoning_effort
                self.danger_limit = event.danger_turn
                self.budget_tokens, self.budget_usd = event.budget_tokens, event.budget_usd
                self.status = "running"
            case UserMessage():
                if self.ended:
                    self.status = "running"
            case AssistantMessage():
                self.turn += 1
                self.usage = self.usage + event.usage
                self.pending_calls = {c.id: c.name for c in event.tool_calls}
                self.last_metrics = event.metrics
                self.last_reply_model = event.model
            case ToolResult():
                self.pending_calls.pop(event.call_id, None)
                if event.name in self.info_tools and event.ok:
                    self.actions_since_finding += 1
            case FileChanged():
                self.files[event.file] = FileInfo(event.version, event.sha256, event.size, event.author)
                if event.file == FINDINGS and event.author in ("agent", "user"):
                    self.actions_since_finding = 0
            case PinsChanged():
                self.pins[event.file] = event.lines
            case Compaction() | ReflectionWritten() | ResearchStep():  # their requests are the session's spending too
                self.usage = self.usage + event.usage
            case WindowLearned():
                self.learned_window = event.window
            case WorkdirMoved():
                self.moved_to = event.workdir
            case ModelChanged():
                self.model, self.api_base, self.context_window = event.model, event.api_base, event.context_window
                if event.reasoning_effort is not None:
                    self.reasoning_effort = event.reasoning_effort
                self.learned_window = 0  # stated by the server of the model before
            case MemoryRecalled():
                self.memory_recalled = True
                self.injected_skills, self.injected_variants = event.skills, event.variants
            case ErrorRecorded():
                self.strikes[event.signature] = event.attempt
                self.strike_latest[event.signature] = describe_failure(event.tool, event.message)
                if self.config and event.counts and event.attempt >= self.config.strike_limit:
                    self.strike_due = event.signature
                if self.config and event.counts and self.config.diagnose_errors:
                    # once, until the person is asked about it (a timeout is diagnosed at its first)
                    if event.signature not in self.diagnosed and diagnosis_due(
                            event.attempt, self.config.strike_limit, event.message):
                        self.diagnosis_due = event.signature
                    elif event.signature == self.diagnosis_due:  # past it: 3-Strike asks the person
                        self.diagnosis_due = None
            case ErrorDiagnosed():
                self.usage = self.usage + event.usage
                self.diagnosed.add(event.signature)
                if event.signature == self.diagnosis_due:
                    self.diagnosis_due = None
                if self.put_back_due is not None and event.signature == put_back_signature(self.put_back_due):
                    self.put_back_due = None
            case FilesPutBack() if self.config and self.config.diagnose_errors and (event.paths or event.removed):
                self.put_back_due = self.last_seq  # (the latest: it tells the agent what stands now)
            case Danger():
                if event.level == "warn":
                    self.warned = True
            case HumanQuestion():
                if not asked_aside(event):  # the run asks one at a time: a new one is the one it waits for
                    self.open_questions = {qid: q for qid, q in self.open_questions.items() if asked_aside(q)}
                    self.status = "waiting"  # (the person's own helper asks aside: the run goes on as it was)
                self.open_questions[event.qid] = event
                self.questions[event.qid] = event
                if event.reason == "three_strike":
                    self.strike_due = None
            case HumanAnswer():
                self._answer(event)
            case ServerToolsListed():
                self.server_tools, self.servers_listed = event.tools, True
                # A read-only one looks something up, as a file read does: the 2-Action Rule counts it.
                self.info_tools = self.info_tools | {tool.offered_as for tool in event.tools if tool.read_only}
            case SessionPaused():
                self.status = "paused"
            case SessionResumed():
                self.status = "running"
            case SessionBranched():  # taken over up to a point: nothing is under way, nothing asked
                self.status = "ended:branched"  # (core/branch.py BRANCHED)
                self.open_questions, self.pending_calls = {}, {}
                self.halt_requested, self.strike_due, self.diagnosis_due = False, None, None
            case SessionEnded():
                self.status = f"ended:{event.status}"
                self.open_questions = {qid: q for qid, q in self.open_questions.items() if asked_aside(q)}
                self.halt_requested = False
                self.diagnosis_due = None  # the task is over: a message after it starts afresh

    def failure(self, signature: str) -> str:
        """A counted failure as a reader understands it: the tool and its latest message."""
        return self.strike_latest.get(signature, signature)

    def _answer(self, answer: HumanAnswer) -> None:
        question = self.questions.get(answer.qid)
        if (answered := self.open_questions.pop(answer.qid, None)) is not None and not asked_aside(answered):
            self.status = "running"
        if question is None:
            return
        if answer.choice == "stop" and question.reason in ("three_strike", "danger_turn", "budget"):
            self.halt_requested = True
        if question.reason == "three_strike":
            self.strikes.pop(question.context.get("signature", ""), None)
            self.diagnosed.discard(question.context.get("signature", ""))
            if answer.choice == "change_model" and answer.text.strip():
                model = answer.text.strip()
                if provider_of(model) != provider_of(self.model):  # not served where the other one was
                    self.api_base, self.context_window, self.learned_window = None, None, 0
                self.model = model
        elif question.reason == "danger_turn" and answer.choice in ("continue", "guidance"):
            self.danger_limit = self.turn + continue_turns(answer)
        elif question.reason == "budget" and answer.choice == "continue":
            self._raise_budget(answer)
        elif question.reason == "approval" and answer.choice == "always":
            self.always_allowed.add(question.context.get("tool", ""))
        elif question.reason == "approval" and answer.choice == "always_call":
            self.always_allowed_calls.add(approval_key(question.context.get("tool", ""),
                                                       question.context.get("arguments", "")))

    def allowed_without_asking(self, tool: str, arguments: str) -> bool:
        return tool in self.always_allowed or approval_key(tool, arguments) in self.always_allowed_calls

    @property
    def tokens_used(self) -> int:
        return self.usage.prompt_tokens + self.usage.completion_tokens

    @property
    def over_budget(self) -> bool:
        return bool((self.budget_tokens and self.tokens_used >= self.budget_tokens)
                    or (self.budget_usd and self.usage.cost_usd >= self.budget_usd))

    def _raise_budget(self, answer: HumanAnswer) -> None:
        """Grant what the answer names ("$2 more", "50,000 more tokens"), else as much again as
        the session started with, counted from what is used now."""
        assert self.config is not None
        tokens, usd = more_budget(answer.text, self.config.budget_tokens if self.budget_tokens else 0,
                                  self.config.budget_usd if self.budget_usd else 0.0)
        if self.budget_tokens:
            self.budget_tokens = self.tokens_used + tokens
        if self.budget_usd:
            self.budget_usd = self.usage.cost_usd + usd


def asked_by_helper(question: HumanQuestion) -> bool:
    """Whether a research helper asks it, about one of its reads (core/agent/delegation.py)."""
    return "helper" in question.context


def asked_aside(question: HumanQuestion) -> bool:
    """Whether the research helper of the person's own question asks it (Session.ask_helper)."""
    return bool(question.context.get("aside"))


def continue_turns(answer: HumanAnswer) -> int:
    """How many more turns a 'continue' answer grants: a number in the text, else the default."""
    number = re.search(r"\d+", answer.text)  # the first number: "10 more turns. Fix the 2 tests" → 10
    return max(1, int(number.group())) if answer.choice == "continue" and number else DEFAULT_CONTINUE_TURNS


_DOLLARS = re.compile(r"\$\s*(\d[\d,]*(?:\.\d+)?)")
_TOKENS = re.compile(r"(\d[\d,]*)\s*(?:more\s+)?tokens", re.I)
_NUMBER = re.compile(r"^\s*(\d[\d,]*(?:\.\d+)?)\b")


def more_budget(text: str, tokens: int, usd: float) -> tuple[int, float]:
    """How much more a budget question's "continue" grants, for the caps in force (a cap of 0 is
    none): what its text names — "$2 more", "50,000 more tokens", or a bare number for the only
    cap there is — else `tokens` and `usd`, as much again as the session started with."""
    def number(match: re.Match | None) -> float | None:
        return float(match.group(1).replace(",", "")) if match else None

    dollars, counted = number(_DOLLARS.search(text)), number(_TOKENS.search(text))
    if dollars is None and counted is None and bool(tokens) != bool(usd):  # "2" for the one cap
        bare = number(_NUMBER.match(text))
        dollars, counted = (bare, None) if usd else (None, bare)
    return (int(counted) if counted and tokens else tokens), (dollars if dollars and usd else usd)


def more_budget_words(tokens: int, usd: float) -> str:
    """A grant in the words `more_budget` reads: "$2.00 more and 50,000 more tokens"."""
    return " and ".join(part for part in (
        (f"${usd:.2f} more" if usd >= 0.01 else f"${usd:.4f} more") if usd else "",
        f"{tokens:,} more tokens" if tokens else "") if part)


# What makes two calls the same call for "always allow this call": a command's or a page's text
# (not its timeout), else all the arguments.
APPROVED_BY = ("command", "url")


def approved_part(arguments: str) -> tuple[str, str] | None:
    """The argument that says what a call does (("command", "pytest -q")), if it has one."""
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    return next(((key, parsed[key]) for key in APPROVED_BY if isinstance(parsed.get(key), str)), None)


def approval_key(tool: str, arguments: str) -> str:
    """A call as the person approved it: the tool and what it does, however the model spelled the
    JSON (key order, spaces) and whatever else it passed (a command's timeout)."""
    part = approved_part(arguments)
    if part is not None:
        return f"{tool}\n{part[0]}={part[1]}"
    try:
        return f"{tool}\n{json.dumps(json.loads(arguments or '{}'), sort_keys=True, ensure_ascii=False)}"
    except ValueError:
        return f"{tool}\n{arguments}"
