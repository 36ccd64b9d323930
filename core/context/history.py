"""Events → provider messages, append-only.

Each event adds messages at the end and never changes earlier ones, so every request is the
previous request plus a suffix (the KV-cache's best case). The one ordering rule providers impose —
tool results must directly follow the assistant message that called the tools — is kept by holding
back notes (a person's plan edit, say) while calls are still open.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from core.events import (
    AGENT_FILES_NAMED,
    AssistantMessage,
    BackgroundKept,
    BackgroundStopped,
    Compaction,
    ErrorDiagnosed,
    ErrorRecorded,
    FileChanged,
    FilesChangedOutside,
    FilesPutBack,
    FlushRequested,
    HumanAnswer,
    HumanQuestion,
    MemoryRecalled,
    Record,
    SessionBranched,
    SessionStarted,
    ToolCall,
    ToolResult,
    UserMessage,
    WorkdirMoved,
)
from core.offload import shown_task
from core.paths import named_files
from core.pictures import PICTURE_TOKENS, PICTURES_KEY, with_pictures_named
from core.reasoning import THINKING_MODEL, passes_reasoning_back
from core.text import one_line

Message = dict[str, Any]

# Answers to these reach the model as the result of the tool call that raised them.
ANSWERED_IN_TOOL_RESULT = ("ask_user", "approval")

# A reply the person stopped mid-way is kept as far as it came (AgentLoop._keep_stopped_reply),
# marked so in its metrics, and followed by this note.
STOPPED_BY_PERSON = "stopped_by_person"
STOPPED_NOTE = "[The person stopped your reply above before you finished it.]"


# What the person's answer to 3-Strike asks of the agent, where its name alone would not say it.
STRIKE_ANSWERS = {
    "skip_step": " (leave the failing step: mark it skipped in the plan and go on with the next)",
    "edit_plan": " (the person edits the plan: go on from the plan as they leave it, their diff above or to come)",
}

class OutputSeen(NamedTuple):
    """An information tool's output in the context now: an identical one can point to it."""
    call_id: str
    turn: int
    seq: int  # of its event; providers may reuse call ids
    offload_path: str | None
    content: str  # as the model saw it (an offloaded output's excerpt): shown again if needed


# Equivalent framings of a successful tool result. Which one a result gets is drawn from its
# session and sequence number: reproducible on replay, yet varied enough that the model does not
# fall into imitating its own recent pattern (seed 001). Never applied to anything already sent.
OBSERVATION_FRAMES = (
    "{content}",
    "Output of {name}:\n{content}",
    "[{name} result]\n{content}",
    "{name} returned:\n{content}",
)


def message_text(message: Message) -> str:
    """What of a message is tokenized: its text, any tool calls, and thinking sent back."""
    parts = [message.get("reasoning_content") or "", message.get("content") or ""]
    for call in message.get("tool_calls") or ():
        parts.append(call["function"]["name"] + call["function"]["arguments"])
    return "\n".join(parts)


def message_tokens(message: Message, count_tokens: Callable[[str], int]) -> int:
    """What a message takes of the context: its text, its pictures (estimated), its overhead."""
    return (count_tokens(message_text(message)) + MESSAGE_OVERHEAD_TOKENS
            + PICTURE_TOKENS * len(message.get(PICTURES_KEY) or ()))


def reply_message(text: str, tool_calls: tuple[ToolCall, ...], model: str, api_base: str | None,
                  reasoning: str = "", thinking_blocks: tuple[dict[str, Any], ...] = (),
                  reasoning_details: tuple[dict[str, Any], ...] = ()) -> Message:
    """A model's reply as the next request sends it back."""
    message: Message = {"role": "assistant", "content": text or None}
    if tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.sendable_arguments()}}
            for c in tool_calls
        ]
        if reasoning and passes_reasoning_back(model, api_base):
            message["reasoning_content"] = reasoning
    elif not text:
        message["content"] = "(empty reply)"
    # Claude's signed thinking goes with its reply; a request to another provider drops it
    # (core/llm.py). Not counted: Claude does not count it, but in the reply whose calls the
    # request answers.
    if thinking_blocks:
        message["thinking_blocks"] = [dict(block) for block in thinking_blocks]
        message[THINKING_MODEL] = model
    if reasoning_details:  # OpenRouter's, likewise for the model that wrote them
        message["reasoning_details"] = [dict(detail) for detail in reasoning_details]
        message[THINKING_MODEL] = model
    return message


def recorded_by(record: Record, framed_as: tuple[tuple[int, str], ...] = ()) -> str:
    """The session that recorded `record` first: its own, or, for an event a session begun from
    another's point took over (`framed_as`, SessionBranched's), that one's. What the model reads of
    such an event is written as that session wrote it: the new session's requests open byte for
    byte as the other's did there."""
    return next((session for before, session in framed_as if record.seq < before), record.session_id)


def _observation(record: Record, content: str, framed_as: tuple[tuple[int, str], ...] = ()) -> str:
    """A successful tool result as the model reads it, in the frame drawn for its event (by the
    session that recorded it: recorded_by)."""
    frame = random.Random(f"{recorded_by(record, framed_as)}:{record.seq}").choice(OBSERVATION_FRAMES)
    return frame.format(name=record.event.name, content=content)


# Chat templates add a few tokens of framing per message.
MESSAGE_OVERHEAD_TOKENS = 4


UNCOUNTED = -1
STOPPED_COMMAND_CHARS = 200  # of a command whose background processes were stopped at a resume


@dataclass
class History:
    messages: list[Message] = field(default_factory=list)
    seqs: list[int] = field(default_factory=list)  # the event each message came from
    # Counted once per message, lazily by the context engine (the tokenizer is not loaded during
    # a replay), so a request costs counting only what is new.
    tokens: list[int] = field(default_factory=list)
    _counted: int = 0
    _open_calls: set[str] = field(default_factory=set)
    _held: list[tuple[int, Message]] = field(default_factory=list)
    _questions: dict[str, HumanQuestion] = field(default_factory=dict)
    _seq: int = 0
    _api_base: str | None = None  # the session's, for where thinking is sent back (core.reasoning)
    total_tokens: int = 0
    pictures_held: int = 0  # how many pictures these messages show (each counted PICTURE_TOKENS)
    generation: int = 0  # changes when a compaction rewrites the history; append-only otherwise
    _outputs_in_view: dict[str, OutputSeen] = field(default_factory=dict)  # by digest
    # Results that point to an earlier identical output, by their seq: (digest, record, as seen).
    _pointers: dict[int, tuple[str, Record, OutputSeen]] = field(default_factory=dict)
    _turn: int = 0
    # The latest move of the work folder, as the agent was told it, and its event: restated after a
    # compaction that summarised it away (the fixed prompt still names the first place).
    _moved: tuple[str, int] = ("", 0)
    # How many of these messages the last request held (from its metrics; None before any request,
    # after a compaction, or in a log written before it was kept): a reopened session's next
    # request is compared with that one, as it would have been without the restart.
    last_request_held: int | None = None
    framed_as: tuple[tuple[int, str], ...] = ()  # SessionBranched.framed_as, set before the first record

    def _append(self, message: Message, seq: int | None = None) -> None:
        self.messages.append(message)
        self.seqs.append(self._seq if seq is None else seq)
        self.tokens.append(UNCOUNTED)
        self.pictures_held += len(message.get(PICTURES_KEY) or ())

    def picture_in_view(self, picture: str) -> bool:
        """Whether the model has this picture (pictures/0001.png) in its context (not compacted away)."""
        return any(picture in message.get(PICTURES_KEY, ()) for message in (*self.messages, *(m for _, m in self._held)))

    def output_in_view(self, digest: str) -> OutputSeen | None:
        """The earlier output with this digest, if the model still has it (not compacted away)."""
        return self._outputs_in_view.get(digest) if digest else None

    def count(self, count_tokens: Callable[[str], int]) -> None:
        """Count the messages appended since the last call."""
        for index in range(self._counted, len(self.messages)):
            if self.tokens[index] == UNCOUNTED:
                self.tokens[index] = message_tokens(self.messages[index], count_tokens)
                self.total_tokens += self.tokens[index]
        self._counted = len(self.messages)

    def apply(self, record: Record) -> None:
        event = record.event
        self._seq = record.seq
        match event:
            case SessionStarted():
                self._api_base = event.api_base
                self._note(
                    f"# Task\n{shown_task(event.task)}\n\nWorkdir: {event.workdir}\n"
                    "Start by reading task_plan.md (recited below), then fill in its phases and steps.",
                    event.pictures,
                )
            case UserMessage():
                self._note(event.text, event.pictures)
            case FlushRequested():
                self._note(event.text)
            case MemoryRecalled() if event.text:
                self._note(event.text)
            case AssistantMessage():
                self._turn = event.turn
                held = event.metrics.get("history_sent")
                self.last_request_held = held if isinstance(held, int) and 0 <= held <= len(self.messages) else None
                if event.tool_calls:
                    self._open_calls = {c.id for c in event.tool_calls}
                self._append(reply_message(event.text, event.tool_calls, event.model, self._api_base,
                                           event.reasoning, event.thinking_blocks, event.reasoning_details))
                if event.metrics.get(STOPPED_BY_PERSON):
                    self._note(STOPPED_NOTE)
            case ToolResult():
                content = _observation(record, event.content, self.framed_as) if event.ok else f"ERROR: {event.content}"
                self._append({"role": "tool", "tool_call_id": event.call_id, "content": content})
                if event.pictures:  # (a tool's message takes no image: they follow the turn's results)
                    self._held.append((self._seq, self._picture_message(
                        f"[The picture your {event.name} call {event.call_id} opened:]", event.pictures)))
                seen = OutputSeen(event.call_id, self._turn, record.seq, event.offload_path, event.content)
                if event.digest and event.same_as:
                    self._pointers[record.seq] = (event.digest, record, seen)
                elif event.digest:
                    self._outputs_in_view.setdefault(event.digest, seen)
                self._open_calls.discard(event.call_id)
                if not self._open_calls and self._held:
                    for seq, held in self._held:
                        self._append(held, seq)
                    self._held.clear()
            case Compaction():
                self._compact(event, recorded_by(record, self.framed_as))  # (whose log has those events too)
            case FileChanged() if event.tells_the_agent:
                who = "The person" if event.author == "user" else "Someone outside Tripane"
                self._note(
                    f"[{who} edited {event.file}; it is now version {event.version}. Their changes win: "
                    f"build on them.]\n```diff\n{event.diff}```"
                )
            case HumanQuestion():
                self._questions[event.qid] = event
            case HumanAnswer():
                question = self._questions.get(event.qid)
                if question is not None and question.reason not in ANSWERED_IN_TOOL_RESULT:
                    detail = f"\n{event.text.strip()}" if event.text.strip() else ""
                    meaning = STRIKE_ANSWERS.get(event.choice, "") if question.reason == "three_strike" else ""
                    self._note(
                        f"[The person answered the {question.reason.replace('_', ' ')} question "
                        f"\"{question.question.splitlines()[0]}\": {event.choice}{meaning}]{detail}",
                        event.pictures,
                    )
            case WorkdirMoved():
                told = (f"[The person moved the work folder: it is now {event.workdir} (it was {event.previous}; "
                        "the instructions above still name the old place). Paths relative to the work folder "
                        "are unchanged; your tools work in the new place from now on.]")
                self._moved = (told, record.seq)
                self._note(told)
            case BackgroundStopped():
                self._note(background_stopped_for_the_agent(event))
            case BackgroundKept():
                self._note(background_kept_for_the_agent(event))
            case FilesPutBack():
                self._note(put_back_for_the_agent(event))
            case SessionBranched():
                self._note(branched_for_the_agent(event))
            case FilesChangedOutside():
                how = (f"\nHow those you had read or written changed (-: as you left them, +: now):\n{event.diff}"
                       if event.diff else "")
                self._note(f"[Files of the work folder changed since your last step, not by your tools (by "
                           f"{event.by()}): {event.words(AGENT_FILES_NAMED)}. What you read of them before is "
                           f"stale: read a file again before you change it.]{how}")
            case ErrorDiagnosed() if event.text:
                self._note(event.text)
            case ErrorRecorded() if not event.tool:
                self._note(f"[Tripane error, attempt {event.attempt}: {event.signature}] {event.message}")

    def _note(self, text: str, pictures: tuple[str, ...] = ()) -> None:
        message = self._picture_message(text, pictures)
        if self._open_calls:
            self._held.append((self._seq, message))
        else:
            self._append(message)

    @staticmethod
    def _picture_message(text: str, pictures: tuple[str, ...]) -> Message:
        """The person's message (or what a tool opened) with its pictures, named in its text."""
        message: Message = {"role": "user", "content": with_pictures_named(text, pictures)}
        if pictures:
            message[PICTURES_KEY] = list(pictures)  # (made images at the provider's door: core/pictures.py)
        return message

    def _compact(self, event: Compaction, session_id: str) -> None:
        """Restart the history as [task][summary][everything after the compacted range].

        The one deliberate break of the cache: it happens once per compaction, never per turn.
        The task message (the first) stays, so the request still opens the same way.
        """
        keep = [i for i, seq in enumerate(self.seqs) if seq > event.last_seq]
        summary = {"role": "user", "content": (
            f"[Compacted history: events {event.first_seq}–{event.last_seq} of session {session_id} are "
            "summarised below. Nothing was deleted: the full log is in Tripane's event log "
            f"(`tripane show {session_id}`), and findings.md and progress.md hold the details.]\n\n"
            f"{event.summary.strip()}"
        )}
        moved, moved_seq = self._moved
        if moved and moved_seq <= event.last_seq:  # the move was summarised: where the folder is stays said
            summary["content"] += f"\n\n{moved}"
        old = list(zip(self.messages, self.seqs, self.tokens))
        self.messages, self.seqs, self.tokens, self.total_tokens, self._counted = [], [], [], 0, 0
        self.pictures_held = 0
        self.generation += 1
        self.last_request_held = None
        if old and old[0][1] < event.first_seq:
            first_message, first_seq, first_tokens = old[0]
            self._restore(first_message, first_seq, first_tokens)
        self._append(summary, event.last_seq)
        for index in keep:
            self._restore(*old[index])
        kept = set(self.seqs)
        in_view = {d: seen for d, seen in self._outputs_in_view.items() if seen.seq in kept}
        self._pointers = {seq: pointer for seq, pointer in self._pointers.items() if seq in kept}
        for index, seq in enumerate(self.seqs):  # a kept pointer whose output went: show the output
            digest, record, pointer = self._pointers.get(seq, ("", None, None))
            target = self._outputs_in_view.get(digest)
            if record is None or target is None or target.seq in kept:
                continue
            self.messages[index] = {**self.messages[index], "content": _observation(record, target.content, self.framed_as)}
            self.total_tokens -= max(0, self.tokens[index])
            self.tokens[index] = UNCOUNTED
            del self._pointers[seq]
            in_view.setdefault(digest, pointer._replace(content=target.content, offload_path=target.offload_path))
        self._outputs_in_view = in_view

    def _restore(self, message: Message, seq: int, tokens: int) -> None:
        self.messages.append(message)
        self.seqs.append(seq)
        self.tokens.append(tokens)
        self.pictures_held += len(message.get(PICTURES_KEY) or ())
        if tokens != UNCOUNTED:
            self.total_tokens += tokens


def put_back_for_the_agent(event: FilesPutBack) -> str:
    """What the agent reads when the person put files back as they were before the session."""
    (kept, copied), (created, since) = event.split(event.paths), event.split(event.removed)
    parts = [f"{what}: {named_files(paths, AGENT_FILES_NAMED)}" for what, paths in (
        ("put these files of the work folder back as they were before this session", kept),
        ("put these back as they were before your first shell command", copied),
        ("removed these files you had created", created),
        ("removed these files, created since your first shell command", since)) if paths]
    why = f" Their reason: {event.reason}" if event.reason else ""
    return (f"[The person {'; and '.join(parts)}. Your changes to them are undone: read a file again before you "
            f"change it, and do not redo what they undid unless they ask.]{why}")


def branched_for_the_agent(event: SessionBranched) -> str:
    """What the agent reads when the person took the session back to this point, to go another way."""
    if event.left_as_they_are:
        files = (" They left the work folder's files as they are now: those you changed after this point may hold "
                 "those later changes; read a file again before you change it.")
    else:
        files = "".join(f" {what}: {named_files(paths, AGENT_FILES_NAMED)}." for what, paths in (
            ("The work folder's files you changed after this point are as they were here again", event.put_back),
            ("Those you made after it are removed", event.removed),
            ("These changed after it and could not be put back, so they are not as here: read them again before "
             "you change them", event.not_put_back)) if paths)
    return (f"[The person went back to this point of the session, to take another way from here: what you did "
            f"after it is not yours to build on, and they will tell you what they want now.{files}]")


def background_stopped_for_the_agent(event: BackgroundStopped) -> str:
    """What the agent reads when what its commands had left running in the background (told to
    run until the run ends) was stopped: at the run's end, or as a run a killed Tripane cut short
    goes on."""
    when = ("The person stopped what your commands had left running in the background" if event.by == "person" else
            "Tripane quit, and what your commands had left running in the background for the person was stopped"
            if event.by == "quit" else
            "Tripane stopped mid-run, and this run goes on from there. What your commands had left running in the "
            "background was stopped now, as the end of that run would have stopped it" if event.interrupted else
            "Your last run has ended, and what your commands had left running in the background was stopped with it")
    return f"[{when}: {_started_by(event.commands)}. Start it again if you still need it.]"


def background_kept_for_the_agent(event: BackgroundKept) -> str:
    """What the agent reads when its task ended with what its commands had left running still
    running, left so for the person."""
    return (f"[Your task ended with what your commands had left running in the background still running: "
            f"{_started_by(event.commands)}. It runs on for the person to try, until they stop it or quit Tripane; "
            "stop it yourself when it is no longer needed.]")


def _started_by(commands: tuple[str, ...]) -> str:
    return "; ".join(f"what `{one_line(command, STOPPED_COMMAND_CHARS)}` started" if command
                     else "what an earlier command started" for command in commands)
