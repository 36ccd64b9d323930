"""Events → provider messages, append-only.

Each event adds messages at the end and never changes earlier ones, so every request is the
previous request plus a suffix (the KV-cache's best case). The one ordering rule providers impose —
tool results must directly follow the assistant message that called the tools — is kept by holding
back notes (a person's plan edit, say) while calls are still open.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.events import (
    AssistantMessage,
    ErrorRecorded,
    FileChanged,
    HumanAnswer,
    HumanQuestion,
    Record,
    SessionStarted,
    ToolResult,
    UserMessage,
)
from core.memory.working import PROGRESS

Message = dict[str, Any]

# Answers to these reach the model as the result of the tool call that raised them.
ANSWERED_IN_TOOL_RESULT = ("ask_user", "approval")


@dataclass
class History:
    messages: list[Message] = field(default_factory=list)
    _open_calls: set[str] = field(default_factory=set)
    _held: list[Message] = field(default_factory=list)
    _questions: dict[str, HumanQuestion] = field(default_factory=dict)

    def apply(self, record: Record) -> None:
        event = record.event
        match event:
            case SessionStarted():
                self._note(
                    f"# Task\n{event.task.strip()}\n\nWorkdir: {event.workdir}\n"
                    "Start by reading task_plan.md (recited below), then fill in its phases and steps."
                )
            case UserMessage():
                self._note(event.text)
            case AssistantMessage():
                message: Message = {"role": "assistant", "content": event.text or None}
                if event.tool_calls:
                    message["tool_calls"] = [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                        for c in event.tool_calls
                    ]
                    self._open_calls = {c.id for c in event.tool_calls}
                elif not event.text:
                    message["content"] = "(empty reply)"
                self.messages.append(message)
            case ToolResult():
                content = event.content if event.ok else f"ERROR: {event.content}"
                self.messages.append({"role": "tool", "tool_call_id": event.call_id, "content": content})
                self._open_calls.discard(event.call_id)
                if not self._open_calls and self._held:
                    self.messages.extend(self._held)
                    self._held.clear()
            case FileChanged() if event.author in ("user", "external") and event.file != PROGRESS:
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
                    self._note(
                        f"[The person answered the {question.reason.replace('_', ' ')} question "
                        f"\"{question.question.splitlines()[0]}\": {event.choice}]{detail}"
                    )
            case ErrorRecorded() if not event.tool:
                self._note(f"[Tripane error, attempt {event.attempt}: {event.signature}] {event.message}")

    def _note(self, text: str) -> None:
        message = {"role": "user", "content": text}
        if self._open_calls:
            self._held.append(message)
        else:
            self.messages.append(message)
