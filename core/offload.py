"""Long texts kept whole in a session's offload/ folder, and what of them stays in the context.

A tool's long output and a long message from the person (a pasted log or file) are kept whole
there, where `offload:NAME` reads them, and the conversation keeps their start and their end
around a notice naming the file. Sent whole, a 2 MB paste went into every request after it, over
any model's window: the session could go no further.
"""

from __future__ import annotations

import functools
from itertools import count
from pathlib import Path

from core import big_text
from core.events import UserMessage
from core.text import fences_closed

MESSAGE_OFFLOAD_CHARS = 20_000  # the person's messages longer than this are offloaded (about 5,000 tokens)
MESSAGE_KEEP_CHARS = 6_000  # what of them stays in the conversation: their start and their end


OFFLOAD_FOLDER = "offload"  # of a session's folder


def folder_of(session_dir: Path) -> Path:
    """The session's offload/ folder, which `offload:NAME` in a file tool's path reads."""
    return session_dir / OFFLOAD_FOLDER


def save(session_dir: Path, name: str, text: str) -> str:
    """`text` kept whole as offload/NAME in the session's folder; its path there."""
    folder = folder_of(session_dir)
    folder.mkdir(parents=True, exist_ok=True)
    big_text.write(folder / name, text)
    return f"offload/{name}"


def _start(text: str, chars: int) -> str:
    """The first `chars` of `text`, cut after a line break if one comes in their second half."""
    head = text[:chars]
    if (cut := head.rfind("\n")) > chars // 2:
        head = head[: cut + 1]
    return head.rstrip("\n")


def excerpt(content: str, name: str, keep_chars: int, what: str = "output") -> str:
    """What stays in the context of an offloaded text: its start and its end, cut at line breaks,
    around a notice naming the file. The end matters as much as the start: a test run's or a
    build's verdict is in its last lines, and a person's question after a pasted log."""
    head_chars = keep_chars * 7 // 10
    head = _start(content, head_chars)
    tail = content[len(content) - (keep_chars - head_chars):]
    if (cut := tail.find("\n")) != -1 and cut < len(tail) // 2:
        tail = tail[cut + 1:]
    lines = big_text.count(content, "\n") + (not content.endswith("\n"))
    notice = (f"… [{len(content):,} characters, {lines:,} lines; whole {what} in offload:{name}; start and end "
              f"shown. Read any part with file_read(path=\"offload:{name}\", offset=LINE).]")
    return f"{head}\n{notice}\n{tail}"


def message_limit(budget_tokens: int | None) -> int:
    """The longest message of the person's taken whole: for a small window, less. A message takes
    at most a quarter of the `budget_tokens` a request may fill (about four characters a token),
    when they are known."""
    return MESSAGE_OFFLOAD_CHARS if budget_tokens is None else min(MESSAGE_OFFLOAD_CHARS, budget_tokens)


def person_message(text: str, session_dir: Path, budget_tokens: int | None = None,
                   pictures: tuple[str, ...] = ()) -> UserMessage:
    """A message from the person as it is recorded: whole, or offloaded when it is long; with the
    pictures they showed (kept in the session folder already: core/pictures.py)."""
    kept, path, size = persons_text(text, session_dir, budget_tokens, "message")
    return UserMessage(kept, offload_path=path, size=size, pictures=pictures)


def persons_text(text: str, session_dir: Path, budget_tokens: int | None, what: str) -> tuple[str, str | None, int]:
    """What the person wrote (a message, an answer: `what`) as the conversation keeps it: whole,
    or, when it is long, its start and end, kept whole in offload/WHAT-NNNN.txt. The text kept,
    the file's path in the session folder (None: whole) and the whole's length (0: whole)."""
    limit = message_limit(budget_tokens)
    if len(text) <= limit:
        return text, None, 0
    folder = folder_of(session_dir)
    name = next(name for n in count(1) if not (folder / (name := f"{what}-{n:04d}.txt")).exists())
    path = save(session_dir, name, text)
    keep = min(MESSAGE_KEEP_CHARS, limit * 3 // 10)
    return excerpt(text, name, keep, what), path, len(text)


def whole_message(message: UserMessage, session_dir: Path) -> str:
    """A message of the person's as they sent it: a long one read back from its file (its excerpt
    if the file is gone or unreadable)."""
    if not message.offload_path:
        return message.text
    return _kept_file(session_dir / message.offload_path) or message.text


@functools.lru_cache(maxsize=8)  # Up, pressed again and again, reads each once (a file is never rewritten)
def _kept_file(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


# A task longer than this (a pasted specification) is kept whole in offload/task.md, and the plan's
# Goal, recited to the agent at every step, holds its start and points there.
TASK_BRIEF_CHARS = 1_500
TASK_FILE = "task.md"


def save_task(session_dir: Path, task: str) -> None:
    """A long task kept whole, where the plan's Goal and the conversation point (before either)."""
    if len(task.strip()) > TASK_BRIEF_CHARS:
        save(session_dir, TASK_FILE, task.strip())


def task_brief(task: str) -> str:
    """The task as the plan's Goal holds it: whole, or a long one's start and where the rest is."""
    task = task.strip()
    if len(task) <= TASK_BRIEF_CHARS:
        return task
    return (f"{fences_closed(_start(task, TASK_BRIEF_CHARS).rstrip())}\n… [the task goes on: {len(task):,} characters in all, whole in offload:{TASK_FILE}; "
            f"read it with file_read(path=\"offload:{TASK_FILE}\")]")


def shown_task(task: str) -> str:
    """The task as the conversation shows it: whole, or a very long one's start and end (as a long
    message of the person's), the whole of it in offload/task.md."""
    task = task.strip()
    return task if len(task) <= MESSAGE_OFFLOAD_CHARS else excerpt(task, TASK_FILE, MESSAGE_KEEP_CHARS, "task")
