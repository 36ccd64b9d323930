"""Rules of the method that are decided by code, not left to the model."""

from __future__ import annotations

import re

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
    text = message
    if len(text) > 2 * SIGNATURE_EDGE_CHARS:  # a long output: the lines compared are at its two ends
        text = f"{text[:SIGNATURE_EDGE_CHARS]}\n{text[-SIGNATURE_EDGE_CHARS:]}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    text = lines[0] if lines else "(no message)"
    if text.lower().startswith("command failed") and len(lines) > 1:
        text = f"{text} … {lines[-1]}"
    return f"{tool or 'the model'} failed: {one_line(text, SIGNATURE_MESSAGE_CHARS)}".rstrip(".")


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


# Of a long message, only this much at each end is looked at: splitting a failed command's 64 MB
# output into lines to find its first and last took a third of a second on the event loop.
SIGNATURE_EDGE_CHARS = 4000


def error_signature(tool: str, error_type: str, message: str) -> str:
    """Group errors that are 'the same failure': same tool, same type, same message up to details.

    Numbers, hex ids and quoted values are masked so that 'line 12' and 'line 14', or two temp
    file names, count as one failure; the message's first meaningful line is what is compared.
    """
    text = message
    if len(text) > 2 * SIGNATURE_EDGE_CHARS:  # a long output: the lines compared are at its two ends
        text = f"{text[:SIGNATURE_EDGE_CHARS]}\n{text[-SIGNATURE_EDGE_CHARS:]}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    head = lines[0] if lines else ""
    # For failed commands the first line is only "exit code N": the last line says what broke.
    if lines and head.lower().startswith("command failed") and len(lines) > 1:
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
