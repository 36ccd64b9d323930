"""The session's events: frozen, tagged dataclasses with one deterministic JSON codec.

Everything Tripane shows or sends to a model is derived from a log of these. The payloads carry no
wall-clock time: the store stamps each record, and the model never sees the stamp, so replaying a
log always yields the same context bytes.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union

from core.text import storable

EVENT_TYPES: dict[str, type[Event]] = {}


class EventDecodeError(ValueError):
    """A stored record could not be turned back into an event."""


class UnknownEventKind(EventDecodeError):
    """A stored record of a kind this version does not have: a later version recorded it."""


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kind:
            if cls.kind in EVENT_TYPES:
                raise TypeError(f"event kind {cls.kind!r} registered twice")
            EVENT_TYPES[cls.kind] = cls


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    # The arguments exactly as the model produced them: malformed JSON survives into the log, and
    # the error the agent is told quotes what it actually sent.
    arguments: str

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a JSON object (none sent: an empty one); ValueError when they are not one."""
        arguments = json.loads(self.arguments) if self.arguments.strip() else {}
        if not isinstance(arguments, dict):
            raise ValueError("the arguments must be a JSON object")
        return arguments

    def command_line(self) -> str:
        """A command's line, as the call gave it ("" when its arguments hold none)."""
        try:
            return str(self.parsed_arguments().get("command", ""))
        except ValueError:
            return ""

    def readable_arguments(self) -> str:
        """The arguments as a person reads them (progress.md, the terminal, a transcript): letters
        as themselves where the model or its provider escaped them ("\\u89e3\\u6790" for 解析, \\u00e9
        for é); malformed ones as they came."""
        try:
            readable = json.dumps(self.parsed_arguments(), ensure_ascii=False)
        except ValueError:
            return self.arguments
        return readable if storable(readable) else self.arguments  # (a file name's byte that is not UTF-8)

    def sendable_arguments(self) -> str:
        """The arguments as the history sends them back: as they came when they are a JSON object.
        Anthropic's and Gemini's APIs (and litellm's conversions to them) take only an object, so
        one request with a malformed call in its history was refused, and so was every later one:
        such a call goes back as `{}`, beside the error that quotes what was sent."""
        try:
            self.parsed_arguments()
        except ValueError:
            return "{}"
        return self.arguments if self.arguments.strip() else "{}"


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.cost_usd + other.cost_usd,
        )


@dataclass(frozen=True)
class SessionStarted(Event):
    kind: ClassVar[str] = "session_started"
    task: str
    model: str
    workdir: str
    api_base: str | None = None
    max_turns: int = 100
    approval: str = "ask"  # ask | all | none: who decides on risky tools, fixed for the session
    context_window: int | None = None  # tokens; None: the model's own (litellm's map, or asked of Ollama)
    reserve_output: int = 4096
    summary_model: str | None = None  # a cheaper model for compaction summaries; None: the same
    reasoning_effort: str = ""  # low | medium | high; "": the model's own way (core/reasoning.py)
    # A cheaper model that can call tools, for the research helpers (delegate_research, the person's
    # Ask a helper); None: the session's model, which also reads when this one fails.
    helper_model: str | None = None
    keep_turns: int = 5  # turns kept verbatim by a compaction
    warn_turn: int = 7
    danger_turn: int = 30
    strike_limit: int = 3
    # A failure that happens again is diagnosed at once by the summary model (core/agent/diagnosis.py).
    diagnose_errors: bool = True
    # Before the first shell command the work folder is copied, so what commands change can be seen
    # and put back (core/snapshot.py).
    copy_work_folder: bool = True
    budget_tokens: int = 0  # prompt + completion tokens after which the person is asked; 0: no cap
    budget_usd: float = 0.0  # the same for cost in US dollars; 0: no cap
    # Minutes a question the agent asked with a fallback (human_ask) waits for the person before
    # the agent goes on with that fallback; 0: it waits for them. Other questions always wait.
    answer_wait_min: int = 0
    # The workdir's AGENTS.md (or CLAUDE.md) as it was at the start, followed for the session.
    instructions_file: str = ""
    instructions: str = ""
    # Those of folders within it (packages/web/AGENTS.md), told as the agent reads or writes their
    # files (core/context/project.py); off with the work folder's, when the person turns those off.
    folder_instructions: bool = True
    # The instructions files of the folders within it, found at the start (named in the facts).
    instruction_files: tuple[str, ...] = ()
    # The work folder's git branch and changes not committed at the start ("": not a repository).
    git: str = ""
    # Pictures given with the task (a screenshot of the bug): paths in the session folder.
    pictures: tuple[str, ...] = ()
    # Other sessions at work in the same folder (or one within it, or around it) at the start, as
    # the agent is told of them: "“Fix the parser” (running)" (core/alongside.py).
    alongside: tuple[str, ...] = ()
    # What other sessions' commands left running there for the person as their tasks ended done (a
    # dev server), still running at the start: "`npm run dev` (left by “Start the dev server”)".
    served: tuple[str, ...] = ()
    # The tool servers whose tools it is given (core/tool_servers), listed before its first request;
    # None: those ticked in Settings then.
    tool_servers: tuple[str, ...] | None = None


@dataclass(frozen=True)
class UserMessage(Event):
    kind: ClassVar[str] = "user_message"
    text: str  # a long one's start and end, around a notice naming its file (core/offload.py)
    offload_path: str | None = None  # where a long one is kept whole
    size: int = 0  # a long one's length, in characters
    pictures: tuple[str, ...] = ()  # shown with it: their paths in the session folder (core/pictures.py)


@dataclass(frozen=True)
class AssistantMessage(Event):
    kind: ClassVar[str] = "assistant_message"
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    turn: int = 0
    # Per-request context figures (prefix reuse, zone sizes); filled by the context engine.
    metrics: dict[str, Any] = field(default_factory=dict)
    # A reasoning model's thinking before this reply: for the person to read; sent back only to
    # a provider that requires it (core/reasoning.py).
    reasoning: str = ""
    # Claude's thinking as it sent it, signed: sent back to Claude, which requires it.
    thinking_blocks: tuple[dict[str, Any], ...] = ()
    # OpenRouter's reasoning details: sent back to the same model there (core/reasoning.py).
    reasoning_details: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class FileSeen:
    """A work-folder file as a tool read or wrote it: what the agent knows of it (core/tools/seen.py)."""

    path: str  # relative to the work folder, with "/"
    mtime_ns: int
    size: int


@dataclass(frozen=True)
class ToolResult(Event):
    kind: ClassVar[str] = "tool_result"
    call_id: str
    name: str
    ok: bool
    content: str
    offload_path: str | None = None  # relative to the session folder
    size: int = 0  # characters of the full output, offloaded or not
    # For information tools (reads, lists, searches, fetches): the full output's hash, so that an
    # identical output later can point here instead of repeating it.
    digest: str = ""
    # The call whose identical output is still in the context: this result points to it instead
    # of repeating it (an unchanged re-read).
    same_as: str = ""
    # The file a file tool read or wrote, as it left it: a reopened session knows it again.
    seen: FileSeen | None = None
    # Pictures it opened for a model that sees them (file_read of an image): paths in the session
    # folder, shown to the model after the results of its turn (core/pictures.py).
    pictures: tuple[str, ...] = ()

    @property
    def shown(self) -> str:
        """The output as the person reads it: the line that tells the agent which files a command
        changed (and how, for those it knew) is left off, as the person is shown those on their
        own (CommandChangedFiles)."""
        return command_output(self.content)


@dataclass(frozen=True)
class FileChanged(Event):
    kind: ClassVar[str] = "file_changed"
    file: str  # task_plan.md | findings.md | progress.md
    author: str  # agent | user | external | core
    version: int
    diff: str
    sha256: str
    size: int = 0  # bytes on disk: lets a reopened session cut off an append the log never saw

    @property
    def tells_the_agent(self) -> bool:
        """An edit of the plan or findings the agent did not make: it is told, as a diff. (Edits of
        progress.md, the log of what it did, are not news it acts on.)"""
        return self.author in ("user", "external") and self.file != "progress.md"


@dataclass(frozen=True)
class PinsChanged(Event):
    kind: ClassVar[str] = "pins_changed"
    file: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class HumanQuestion(Event):
    kind: ClassVar[str] = "human_question"
    qid: str
    reason: str  # ask_user | three_strike | danger_turn | approval | budget
    question: str
    options: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HumanAnswer(Event):
    kind: ClassVar[str] = "human_answer"
    qid: str
    choice: str
    text: str = ""  # a long one's start and end, around a notice naming its file (core/offload.py)
    offload_path: str | None = None  # where a long one is kept whole
    size: int = 0  # a long one's length, in characters
    pictures: tuple[str, ...] = ()  # shown with it (a screenshot of what the agent asked about)


@dataclass(frozen=True)
class ErrorRecorded(Event):
    kind: ClassVar[str] = "error"
    signature: str
    message: str
    attempt: int
    tool: str = ""
    # Whether 3-Strike counts it. The agent's failures count; the provider's (unreachable, a refused
    # key) do not: each ends the run, and the person's next message, once it is fixed, answers it.
    counts: bool = True


@dataclass(frozen=True)
class Danger(Event):
    kind: ClassVar[str] = "danger"
    turn: int
    level: str  # warn | stop
    limit: int = 0  # the turn at which the person is asked (0 in events written before it was kept)


@dataclass(frozen=True)
class FlushRequested(Event):
    """The silent turn before a compaction: the agent saves what matters before history is cut."""

    kind: ClassVar[str] = "flush_requested"
    text: str


@dataclass(frozen=True)
class Compaction(Event):
    kind: ClassVar[str] = "compaction"
    summary: str
    first_seq: int  # the compacted range of events; everything after last_seq is kept verbatim
    last_seq: int
    flush_done: bool
    tokens_before: int = 0
    tokens_after: int = 0
    # What writing the summary cost, and which model wrote it ("": none could, the summary is a
    # list of the calls): the session's spending counts it, as its budget does.
    usage: Usage = field(default_factory=Usage)
    summary_model: str = ""


@dataclass(frozen=True)
class WindowLearned(Event):
    """The provider refused a request over the model's window and said how large the window is:
    smaller than the one assumed (a local server started with a fixed context no model map knows).
    The context is budgeted for it from here on, and again when the session reopens."""

    kind: ClassVar[str] = "window_learned"
    window: int
    assumed: int


@dataclass(frozen=True)
class ModelChanged(Event):
    """The person chose another model for the session (the one it had is gone, refused, too weak
    or too dear for what is left). Its requests go to this model, at this server, from the next
    one on, budgeted for its window; the fixed prompt stays as it was, byte for byte."""

    kind: ClassVar[str] = "model_changed"
    model: str
    api_base: str | None = None
    context_window: int | None = None  # None: the model's own
    previous: str = ""
    reasoning_effort: str | None = None  # None: as it was
    server_changed: bool | None = None  # api_base is not the one before (None: an older log, which did not say)


@dataclass(frozen=True)
class WorkdirMoved(Event):
    """The person gave the session its work folder's new place (the folder was moved or renamed,
    or the session was imported from another computer). Tools work there from the next call on;
    the fixed prompt stays as it was, byte for byte, and the agent is told in the history."""

    kind: ClassVar[str] = "workdir_moved"
    workdir: str
    previous: str


@dataclass(frozen=True)
class FilesPutBack(Event):
    """The person put files the agent changed back as they were before the session
    (core/originals.py). The agent is told in the history: what it read of them is gone."""

    kind: ClassVar[str] = "files_put_back"
    paths: tuple[str, ...]  # written back as they were (relative to the work folder)
    removed: tuple[str, ...] = ()  # the agent had created them: removed
    reason: str = ""  # the person's why, for the agent (and the reflection)
    # Of paths and removed: those that came back from the copy made before the agent's first
    # command (core/snapshot.py), as they were then; the others, as before the session.
    from_copy: tuple[str, ...] = ()

    def split(self, paths: tuple[str, ...]) -> tuple[list[str], list[str]]:
        """`paths` (paths or removed) as (those from before the session, those from the copy)."""
        return [p for p in paths if p not in self.from_copy], [p for p in paths if p in self.from_copy]


@dataclass(frozen=True)
class SessionBranched(Event):
    """The last event of a session begun from an earlier point of another (core/branch.py): the
    person went back there to take another way. The events before it are the other session's, up
    to that point, as they were recorded; the run waits for the person's message."""

    kind: ClassVar[str] = "session_branched"
    source: str  # the session it went back from, which stays as it was
    back_to: str  # the time of the point (of the last event taken over), ISO 8601 UTC
    step: int = 0  # the agent's step (turn) the session takes first from there
    source_title: str = ""
    # The work folder's files the agent changed after that point, written back as they were then
    # (relative to the work folder), and those removed (made after it).
    put_back: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    # Files changed after it that could not be put back, each with why; or all of them, the
    # person having chosen to leave the files as they are (left_as_they_are).
    not_put_back: tuple[str, ...] = ()
    left_as_they_are: bool = False
    # Whose session number each event taken over had when it was first recorded: (before_seq,
    # session), the earliest first; the tool results' framing is drawn by it (core/context/history.py).
    framed_as: tuple[tuple[int, str], ...] = ()


@dataclass(frozen=True)
class ServerTool:
    """One tool a tool server offered (core/tool_servers), as the agent is given it."""

    server: str
    name: str  # as the server calls it
    offered_as: str  # as the model calls it (mcp_<server>_<name>, unique, 64 characters at most)
    description: str
    parameters: str  # its input's JSON schema, as JSON text: byte for byte what every request sends
    read_only: bool = False  # the server says it changes nothing: it runs without asking


@dataclass(frozen=True)
class ServerToolsListed(Event):
    """The tools of the person's tool servers, listed before the session's first request: from here
    on they are the session's tools, byte for byte, whatever a server offers later (the prefix
    stays as the provider's cache holds it). A server that could not be reached is named with why."""

    kind: ClassVar[str] = "server_tools_listed"
    tools: tuple[ServerTool, ...] = ()
    failed: tuple[tuple[str, str], ...] = ()  # (server, why)


def framed_as(records) -> tuple[tuple[int, str], ...]:
    """How a session begun from another's point frames the events it took over: its own (the
    last) SessionBranched's framed_as; () for a session begun from nothing. (One gone back in again
    holds the first one's SessionBranched among the events it took over.)"""
    return next((r.event.framed_as for r in reversed(records) if isinstance(r.event, SessionBranched)), ())


AGENT_FILES_NAMED = 20  # of those a command changed, in what the agent reads; the rest are counted
FILES_CHANGED_LINE = "[files this command changed in the work folder: "  # how that line begins
# After it, how those of them the agent had read or written changed (core/diffs.py diff_told).
COMMAND_DIFF_HEAD = "How those you had read or written changed (-: before the command, +: after):"


def command_output(content: str) -> str:
    """A command's result (or failure) without what Tripane added at its end for the agent: the
    files the command changed, and how (ToolContext.after_command)."""
    head, found, rest = content.rpartition("\n" + FILES_CHANGED_LINE)
    _line, _, after = rest.partition("\n")
    return head if found and (not after or after.startswith(COMMAND_DIFF_HEAD)) else content


@dataclass(frozen=True)
class ChangedFiles(Event):
    """Files of the work folder that changed, found against the copy made before the first command
    and its index of the folder as the agent last left it (core/snapshot.py). Each list holds at
    most COMMAND_FILES_LISTED paths (core/snapshot.py); `more` counts the rest."""

    changed: tuple[str, ...] = ()
    created: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    more: int = 0
    within: str = ""  # the deepest folder all its files are in, those only counted too ("" for the top)

    def count(self) -> int:
        return len(self.changed) + len(self.created) + len(self.deleted) + self.more

    def paths(self) -> set[str]:
        """The files named (not those only counted in `more`)."""
        return {*self.changed, *self.created, *self.deleted}

    def without(self, paths: set[str]) -> ChangedFiles | None:
        """These files but `paths` (None when none is left to name)."""
        left = dataclasses.replace(self, **{how: tuple(p for p in getattr(self, how) if p not in paths)
                                            for how in ("changed", "created", "deleted")})
        return left if left.paths() else None

    def words(self, listed: int = 12) -> str:
        """"settings.toml, made.txt (created), old.log (deleted) and 3 more"."""
        named = [*self.changed, *(f"{p} (created)" for p in self.created), *(f"{p} (deleted)" for p in self.deleted)]
        more = self.count() - min(listed, len(named))
        where = f", all in {self.within}/" if self.within else ""
        return ", ".join(named[:listed]) + (f" and {more:,} more{where}" if more > 0 else "")


@dataclass(frozen=True)
class CommandChangedFiles(ChangedFiles):
    """The files a shell command changed, found against the folder as it was just before it:
    recorded after its ToolResult, whose output ends with them for the agent (for_the_agent)."""

    kind: ClassVar[str] = "command_changed_files"
    call_id: str = ""

    def for_the_agent(self) -> str:
        """The line that ends the command's result: a formatter or a generator rewrites files its
        output never names, and the agent would otherwise work on from the old."""
        return f"{FILES_CHANGED_LINE}{self.words(AGENT_FILES_NAMED)}]"


@dataclass(frozen=True)
class FilesChangedOutside(ChangedFiles):
    """Files that changed since the agent's last step, not by its tools: the person's editor,
    another program, a process a command left running. Looked for at each turn and before each
    tool that writes: in the whole folder once it is copied (the first command); before, or without
    a copy, among the files the agent read or wrote (core/tools/seen.py). Told to the agent, which
    would otherwise go on from what it read before, and to the person."""

    kind: ClassVar[str] = "files_changed_outside"
    # Processes the agent's commands had left running then (a dev server, a watcher): the changes
    # may be theirs, and each step would otherwise blame the person for a log the server writes.
    background: int = 0
    # How the files the agent had read or written changed: unified diff lines under each one's name
    # ("--- calc.py"), capped (core/diffs.py diff_told); "" without the copy to diff against.
    diff: str = ""
    # Other sessions at work in the folder then (core/alongside.py): the changes may be their agents'.
    alongside: tuple[str, ...] = ()

    def other_agents(self) -> str:
        """The other sessions' agents at work in the folder: "the agent of “Fix the parser” (running) in
        this folder too"."""
        return f"the agent{'s' * (len(self.alongside) > 1)} of {' and '.join(self.alongside)} in this folder too"

    def by(self, whose: str = "your") -> str:
        """Who may have made the changes: "the person, or another program"; with another session's
        agent at work in the folder, "the person, the agent of “Fix the parser” (running), …"; with
        processes running in the background, "…, or a process your commands left running"."""
        who = ["the person", *([self.other_agents()] if self.alongside else []), "another program"]
        if self.background:
            who.append(f"a process {whose} commands left running")
        return f"{', '.join(who[:-1])}, or {who[-1]}"


@dataclass(frozen=True)
class MemoryRecalled(Event):
    """Long-term memory brought into the context at task start: appended, never in the prefix."""

    kind: ClassVar[str] = "memory_recalled"
    text: str  # the message the agent sees ("" when there was nothing to bring)
    skills: tuple[str, ...] = ()  # slugs of the skills injected (their success record is updated at the end)
    lessons: tuple[str, ...] = ()  # ids of the MEMORY.md lessons quoted
    variants: tuple[str, ...] = ()  # of `skills`, those given the steps of their variant on test


@dataclass(frozen=True)
class ReflectionWritten(Event):
    """A reflection on the work since the last one, kept in the data folder's memory/reflections/
    (core/memory/reflection.py). For the person and long-term memory: not in the agent's context."""

    kind: ClassVar[str] = "reflection"
    path: str  # relative to the data folder's memory/ folder
    model: str
    usage: Usage = field(default_factory=Usage)
    achieved: str = ""  # yes | partly | no | "" (not said, or the reply could not be read)
    strategies: int = 0  # suggested
    lessons: tuple[str, ...] = ()  # ids of the MEMORY.md lessons its strategies became
    error: str = ""  # why the reply could not be read as a report; the reply is kept at `path` all the same
    # A variant of a skill the task followed, proposed by one more request (core/memory/variants.py):
    # what came of it, in words; "" when no skill followed had earned one.
    variant: str = ""


@dataclass(frozen=True)
class ErrorDiagnosed(Event):
    """Seed 002's error reflection: a failure that happened again, diagnosed at once by the summary
    model (core/agent/diagnosis.py). Its text reaches the agent's context as a note, before its next
    step; an empty text (no model could write one: `error` says why) reaches nothing."""

    kind: ClassVar[str] = "error_diagnosed"
    signature: str  # the failure's (ErrorRecorded)
    attempt: int  # the failure's count when it was diagnosed
    text: str = ""  # what the agent is told
    cause: str = ""  # A-D, the reflection's kinds of error (core/memory/reflection.py ERROR_KINDS)
    model: str = ""
    usage: Usage = field(default_factory=Usage)
    memory: tuple[str, ...] = ()  # the long-term memory passages shown to the model ("path:line")
    error: str = ""


@dataclass(frozen=True)
class Consulted:
    """What one of a research helper's reads came to (its content is not kept: the report is)."""

    ok: bool
    size: int  # characters of the output
    error: str = ""  # the start of the error, when it failed


@dataclass(frozen=True)
class ResearchStep(Event):
    """One model call of a research helper the agent delegated a question to (delegate_research,
    core/agent/research.py). For the person and the session's spending: the helper's reads never
    enter the agent's context, only its report does, as the delegate call's result."""

    kind: ClassVar[str] = "research_step"
    call_id: str  # the agent's delegate_research call
    step: int  # 1, 2, … within that call
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    consulted: tuple[Consulted, ...] = ()  # one per call, in order
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    final: bool = False  # this reply is the report
    spent: Usage = field(default_factory=Usage)  # on the final step: what the whole research cost
    # The person asked it, aside from the agent (Session.ask_helper): `call_id` is then no call of
    # the agent's, and the first step holds the question.
    for_person: bool = False
    question: str = ""
    # On a first step the session's model took: why the helpers' model the person chose could not.
    fell_back: str = ""
    part: int = 0  # of a deep research (core/agent/deep_research.py), its parts run at once: 1, 2, …
    helper: int = 0  # of the questions one reply delegated, researched at once: 1, 2, … (0: it alone)


@dataclass(frozen=True)
class SessionPaused(Event):
    kind: ClassVar[str] = "session_paused"


@dataclass(frozen=True)
class SessionResumed(Event):
    kind: ClassVar[str] = "session_resumed"
    # When the run had stopped with nobody stopping it (Tripane closed, killed or crashed mid-run):
    # the time of its last record then. Empty: a run the person paused goes on.
    interrupted_at: str = ""


@dataclass(frozen=True)
class BackgroundStopped(Event):
    """What the agent's commands had left running in the background (a dev server) was stopped:
    as the run ended, or, when a killed Tripane's run never ended, as the next one began. The
    person who asked for a server to try finds it gone, and the agent, going on, thinks it runs."""

    kind: ClassVar[str] = "background_stopped"
    commands: tuple[str, ...]  # the command lines that started them ("" when not known)
    interrupted: bool = False  # stopped as a run began: the run that left them was cut short
    # Who stopped it, when not the run: "person" (from the window), "quit" (Tripane quit while it
    # ran on for the person, see BackgroundKept).
    by: str = ""


@dataclass(frozen=True)
class BackgroundKept(Event):
    """The task ended done with what the agent's commands had left running in the background (a
    dev server) still running, in a window: it runs on for the person to try, until they stop it
    or quit Tripane (BackgroundStopped then). The agent, should the session go on, is told it runs."""

    kind: ClassVar[str] = "background_kept"
    commands: tuple[str, ...]  # the command lines that started them
    call_ids: tuple[str, ...]  # the calls that ran them, in the same order


@dataclass(frozen=True)
class SessionEnded(Event):
    kind: ClassVar[str] = "session_ended"
    status: str  # done | capped | aborted | error
    summary: str = ""


# How an end is said to the person: "aborted" is kept in the log, and a run the person stopped read
# as one that failed ("Ended: aborted" after their own Stop).
ENDED_WORDS = {"aborted": "stopped", "branched": "went back"}


def ended_word(status: str) -> str:
    """A session's end (SessionEnded.status, or a row's "ended:STATUS") as the person reads it."""
    status = status.removeprefix("ended:")
    return ENDED_WORDS.get(status, status)


def shown_status(status: str) -> str:
    """A session row's status as a list shows it: "ended:stopped" for "ended:aborted"."""
    return f"ended:{ended_word(status)}" if status.startswith("ended:") else status


# The events' fields that hold what a conversation says (messages, thinking, outputs, questions,
# errors, summaries), beside the task and each call's arguments: what its searches look in.
SAID_FIELDS = ("text", "reasoning", "content", "question", "message", "summary")


@dataclass(frozen=True)
class Record:
    """An event as stored: its place in the session's log and when it was written."""

    session_id: str
    seq: int
    ts: str
    event: Event


# --- codec -------------------------------------------------------------------------------------


def to_data(event: Event) -> dict[str, Any]:
    return dataclasses.asdict(event)


def encode(event: Event) -> str:
    """The one JSON form of an event: sorted keys, no whitespace, UTF-8 text kept as is."""
    return json.dumps(to_data(event), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def decode(kind: str, text: str) -> Event:
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise UnknownEventKind(f"unknown event kind {kind!r}")
    try:
        return _build(cls, json.loads(text))
    except (TypeError, ValueError, KeyError) as exc:
        raise EventDecodeError(f"cannot decode {kind!r} event: {exc}") from exc


# How each field of a dataclass is rebuilt from its JSON value (None: taken as it is), worked out
# once per class from its type hints: a replay decodes thousands of events of a dozen classes.
Converter = Callable[[Any], Any]
_FIELDS: dict[type, dict[str, Converter | None]] = {}


def _build(cls: type, data: dict[str, Any]) -> Any:
    fields = _FIELDS.get(cls)
    if fields is None:
        hints = typing.get_type_hints(cls)
        fields = _FIELDS[cls] = {f.name: _converter(hints[f.name]) for f in dataclasses.fields(cls)}
    kwargs = {}
    for name, value in data.items():
        if name in fields:  # a field a later version dropped is ignored
            convert = fields[name]
            kwargs[name] = value if convert is None else convert(value)
    return cls(**kwargs)


def _converter(hint: Any) -> Converter | None:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        convert = _converter(inner[0]) if len(inner) == 1 else None
        return None if convert is None else (lambda value: None if value is None else convert(value))
    if origin is tuple:
        item = _converter(typing.get_args(hint)[0])
        return tuple if item is None else (lambda value: tuple(item(v) for v in value))
    if dataclasses.is_dataclass(hint):
        return lambda value: _build(hint, value) if isinstance(value, dict) else value
    return None
