"""Rules of the method that are decided by code, not left to the model."""

from __future__ import annotations

import re

from core.events import command_output
from core.text import one_line
from core.tools.shell import TIMED_OUT

_HEX = re.compile(r"\b0x[0-9a-f]+\b|\b[0-9a-f]{8,}\b")
_NUMBER = re.compile(r"\d+")
_QUOTED = re.compile(r"'[^']{0,200}'|\"[^\"]{0,200}\"")
_SPACE = re.compile(r"\s+")
SIGNATURE_MESSAGE_CHARS = 160


def describe_failure(tool: str, message: str) -> str:
    """A failure as people and the model read it: the tool and its message's first line (for a
    failed command, also its last line, which says what broke). The signature is for counting."""
    lines = _meaningful_lines(message, undecorated=True)
    text = lines[0] if lines else "(no message)"
    if _of_a_command(lines):
        text = f"{text} … {lines[-1]}"
    return f"{tool or 'the model'} failed: {one_line(text, SIGNATURE_MESSAGE_CHARS)}".rstrip(".")


# Of a failed command's output, the person is shown at most this much of its end.
FAILURE_TAIL_LINES, FAILURE_TAIL_CHARS = 8, 600


def failure_lines(message: str, chars: int = FAILURE_TAIL_CHARS) -> list[str]:
    """A failure's message in a few lines, as the person reads it where it is one of several (the
    errors that made 3-Strike): a command's first line, which only says how it ended, then the end
    of its output, where what broke is (an exception, pytest's summary) after whatever it printed
    first (a deprecation warning), "…" standing for the lines left out; any other failure's
    message from its start, up to `chars`; each line as indented as it was."""
    lines = _meaningful_lines(message, undecorated=True, indented=True)
    if not lines:
        return ["(no message)"]
    if not _of_a_command(lines):
        kept, used = [], 0
        for line in lines:
            if used + len(line) > chars:
                kept.append(one_line(line, max(chars - used, 40)) if not kept else "…")
                break
            kept.append(line)
            used += len(line)
        return kept
    head, rest = lines[0], lines[1:]
    tail: list[str] = []
    used = 0
    for line in reversed(rest):
        if len(tail) == FAILURE_TAIL_LINES or used + len(line) > chars:
            break
        tail.insert(0, line)
        used += len(line)
    if not tail:  # one very long last line: its end
        tail = ["…" + rest[-1][-chars:].lstrip()]
    return [head] + (["…"] if len(tail) < len(rest) else []) + tail


def failure_excerpt(message: str, limit: int) -> str:
    """A failure's message on one line of at most `limit` characters (the latest steps the person
    is shown at the turn threshold, the trace the reflection reads): for a command, its first line
    and as much of the end of its output as fits, which says what broke."""
    lines = _meaningful_lines(message, undecorated=True)
    flat = " ".join(" ".join(lines).split())
    if not _of_a_command(lines) or len(flat) <= limit:
        return one_line(flat, limit) if lines else "(no message)"
    head = one_line(lines[0], limit // 2)
    return f"{head} … {_end_of(lines[1:], limit - len(head) - 3)}"


def output_excerpt(output: str, limit: int) -> str:
    """A command's output on one line of at most `limit` characters: its end, where a command
    says how it went ("12 passed", "Build succeeded"), after whatever it printed first."""
    lines = _meaningful_lines(output, undecorated=True)
    flat = " ".join(" ".join(lines).split())
    return flat if len(flat) <= limit else f"… {_end_of(lines, limit - 2)}"


def _end_of(lines: list[str], room: int) -> str:
    """As much of the end of `lines` as fits in `room` characters, on one line, from a word on."""
    tail = " · ".join(" ".join(line.split()) for line in lines)[-room:]  # (· where a line ended)
    if " " in tail[: room // 3]:  # start at a word, never half one
        tail = tail[tail.index(" ") + 1:]
    return tail.lstrip("· ")


def failures_grouped(messages: list[str]) -> list[tuple[list[str], int]]:
    """Failures as the person reads them (failure_lines), those in a row that differ only in their
    numbers (a test run's time) as one, the latest of them, with how many times it happened."""
    groups: list[tuple[list[str], int]] = []
    for message in messages:
        lines = failure_lines(message)
        if groups and _masked(groups[-1][0]) == _masked(lines):
            groups[-1] = (lines, groups[-1][1] + 1)
        else:
            groups.append((lines, 1))
    return groups


def _masked(lines: list[str]) -> str:
    return _NUMBER.sub("<n>", _HEX.sub("<h>", "\n".join(lines)))


# Of a long message, only this much at each end is looked at: splitting a failed command's 64 MB
# output into lines to find its first and last took a third of a second on the event loop.
SIGNATURE_EDGE_CHARS = 4000


def _meaningful_lines(message: str, undecorated: bool = False, indented: bool = False) -> list[str]:
    """A failure's non-blank lines, stripped (`indented`: on the right only, as a traceback's
    caret under the code it points at needs), of its two ends only if it is long; without what
    Tripane added to a command's output for the agent (the files it changed, and how). Undecorated
    for the person: without the rules of ===, ___ or !!! a test runner draws around its words."""
    text = command_output(message)
    if len(text) > 2 * SIGNATURE_EDGE_CHARS:
        text = f"{text[:SIGNATURE_EDGE_CHARS]}\n{text[-SIGNATURE_EDGE_CHARS:]}"
    lines = (_undecorated(line) if undecorated else line for line in text.splitlines())
    return [line.rstrip() if indented else line.strip() for line in lines if line.strip()]


def _undecorated(line: str) -> str:
    bare = _RULE.sub("", line)
    return bare.strip() if bare != line else line  # (the words a rule was drawn around, not its place)


_RULE = re.compile(r"([=_!*#~+-])\1{3,}")


# A command's failure begins by saying only how it ended (its exit code, its time running out, the
# person stopping it); what broke is at the end of its output.
_COMMAND_ENDINGS = ("command failed", TIMED_OUT.lower(), "stopped by the person")


def _of_a_command(lines: list[str]) -> bool:
    return len(lines) > 1 and lines[0].lower().startswith(_COMMAND_ENDINGS)


# The end of what a failure's diagnosis tells the agent; the person, who is the one asked, reads it without.
DIAGNOSIS_FOR_THE_AGENT = " The same failure once more stops the run for the person."


# ErrorDiagnosed.signature of a diagnosis of the work the person put back (core/agent/put_back_diagnosis.py).
PUT_BACK = "put_back:"
# What such a diagnosis is of, in the agent's words and in the person's.
PUT_BACK_FOR_THE_AGENT, PUT_BACK_FOR_THE_PERSON = "the work the person put back", "the work you put back"


def put_back_signature(seq: int) -> str:
    """The diagnosis signature of the FilesPutBack recorded at `seq`."""
    return f"{PUT_BACK}{seq}"


def of_put_back(signature: str) -> bool:
    """Whether a diagnosis (its ErrorDiagnosed.signature) is of work put back, not of a failure."""
    return signature.startswith(PUT_BACK)


def for_the_person(diagnosis: str) -> str:
    """A failure's diagnosis as the agent was told it (ErrorDiagnosed.text), for the person."""
    text = diagnosis.strip().removeprefix("[").removesuffix("]").replace(DIAGNOSIS_FOR_THE_AGENT, "")
    return text.replace(f"diagnosis of {PUT_BACK_FOR_THE_AGENT} —", f"diagnosis of {PUT_BACK_FOR_THE_PERSON} —", 1)


def diagnosis_due(count: int, limit: int, message: str = "") -> bool:
    """Whether a failure counted `count` times is diagnosed at once (core/agent/diagnosis.py): at
    its last occurrence before the person is asked (3-Strike, at `limit`), and not at its first,
    which the model mostly mends by itself — unless a command ran out of time (`message`): each try
    of it costs its whole timeout. With a limit of 2 the person is asked at the second."""
    if count >= limit:
        return False
    return (count == 1 and message.startswith(TIMED_OUT)) or 2 <= count == limit - 1


MODEL_FAILURE_CHARS = 1000


def failure_notice(tool: str, message: str) -> str:
    """A failure as the chat and the terminal show it: a tool's in one line (its card and the
    progress log hold all of it), the model's own whole — an empty reply, a call written as text, a
    reply cut off, a provider's refusal have no card, and their second half says what to do."""
    if tool:
        return describe_failure(tool, message)
    return f"the model failed: {one_line(message, MODEL_FAILURE_CHARS)}".rstrip(".")


def error_signature(tool: str, error_type: str, message: str) -> str:
    """Group errors that are 'the same failure': same tool, same type, same message up to details.

    Numbers, hex ids and quoted values are masked so that 'line 12' and 'line 14', or two temp
    file names, count as one failure; the message's first meaningful line is what is compared.
    """
    lines = _meaningful_lines(message)  # (of a long output, the lines compared are at its two ends)
    head = lines[0] if lines else ""
    # For failed commands the first line is only "exit code N": the last line says what broke. (Not
    # for a command out of time: what it printed last differs from try to try, its failure does not.)
    if len(lines) > 1 and head.lower().startswith("command failed"):
        head = f"{head} / {lines[-1]}"
    normal = head.lower()
    normal = _QUOTED.sub("<q>", normal)
    normal = _HEX.sub("<h>", normal)
    normal = _NUMBER.sub("<n>", normal)
    normal = _SPACE.sub(" ", normal)[:SIGNATURE_MESSAGE_CHARS]
    return f"{tool or 'model'}:{error_type}:{normal}"


def error_type(signature: str) -> str:
    """The type part of an error_signature ("error", "interrupted", "malformed_arguments", …)."""
    parts = signature.split(":", 2)
    return parts[1] if len(parts) == 3 else ""
