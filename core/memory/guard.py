"""What long-term memory must never hold: secrets, temporary values, unverified claims.

Every write into `memory/` passes through `check`. A refusal is an explanation the agent can act
on (rephrase without the value), never a silent drop: a fact that is refused is not half-written.
"""

from __future__ import annotations

import math
import re
from collections import Counter

# Well-known credential shapes. The names go into the refusal so the agent knows what it tripped on.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("an API key (sk-…)", re.compile(r"\bsk-(?:ant-|proj-|or-)?[A-Za-z0-9_-]{16,}")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{30,}")),
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("a bearer token", re.compile(r"\bBearer\s+[A-Za-z0-9._~+/-]{16,}=*", re.I)),
    ("a JSON web token", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")),
    ("a password or secret assignment",
     re.compile(r"\b(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)"
                r"\s*[:=]\s*['\"]?[^\s'\"]{6,}", re.I)),
    ("credentials in a URL", re.compile(r"\b[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.I)),
)

# Values that are only true for a moment: writing them down makes the memory lie tomorrow.
TEMPORARY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a temporary path", re.compile(r"(?:^|[\s'\"(])(?:/tmp/|/var/folders/|%TEMP%|\\Temp\\|/private/tmp/)\S*", re.I)),
    ("a process id", re.compile(r"\b(?:pid|process id)\s*[:=#]?\s*\d{2,}\b", re.I)),
    ("a one-time code", re.compile(r"\b(?:otp|one[- ]time (?:code|password)|verification code)\b", re.I)),
)

# Hedges that mark a claim as not verified by an action.
UNVERIFIED = re.compile(
    r"\b(?:unverified|not verified|not yet verified|probably|i think|i guess|i assume|maybe|might be|"
    r"seems to|rumou?red|untested)\b", re.I)

# A long token with mixed character classes and high entropy looks like a key even without a prefix.
_TOKEN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")


class MemoryRefused(ValueError):
    """The text cannot go into long-term memory; the message says why and what to do instead."""


def check(text: str, *, fact: bool = False) -> None:
    """Raise MemoryRefused if `text` holds a secret, a temporary value, or (for facts) a hedge."""
    for what, pattern in SECRET_PATTERNS:
        if pattern.search(text):
            raise MemoryRefused(f"Refused: the text contains what looks like {what}. Secrets never go into "
                                "memory (API keys live in the OS keyring). Write the fact without the value.")
    for token in _TOKEN.findall(text):
        if _looks_random(token):
            # The value is not repeated: this message goes into the event log.
            raise MemoryRefused("Refused: the text contains a long random string that looks like a key or token. "
                                "Secrets never go into memory; write the fact without the value.")
    for what, pattern in TEMPORARY_PATTERNS:
        if pattern.search(text):
            raise MemoryRefused(f"Refused: the text contains {what}, which will not be true later. "
                                "Record what stays true (the cause, the fix, the rule) instead.")
    if fact:
        hedge = UNVERIFIED.search(text)
        if hedge:
            raise MemoryRefused(f"Refused: {hedge.group(0)!r} marks this as unverified. MEMORY.md keeps only "
                                "facts an action confirmed; verify it first, or put it in findings.md.")


def _looks_random(token: str) -> bool:
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    if classes < 2 or "_" in token.strip("_") and token.replace("_", "").isalpha():
        return False  # snake_case identifiers and plain words are not keys
    counts = Counter(token)
    entropy = -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())
    return entropy > 4.0
