"""Assembly of each request, its token budget, and how much of it the provider can serve from cache.

    [stable prefix]  system prompt + all tool schemas, byte-identical for the whole session
    [history]        append-only (see history.py)
    [tail anchor]    regenerated every turn: plan recitation, warnings, turn k of N

Token counts are taken once per message when it is appended, so assembling a request costs time
in proportion to what is new, not to the length of the history.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.context.history import (
    MESSAGE_OVERHEAD_TOKENS,
    History,
    Message,
    message_text,
    message_tokens,
)
from core.pictures import PICTURE_TOKENS

BUDGET_SHARE = 0.75  # of the window; the rest is a safety margin (seed 002, step 1)
FIXED_ZONE_SHARE = 0.15  # the most of the budget the prefix may take (seed 002, step 2: 10-15 %)


@dataclass(frozen=True)
class Zone:
    name: str  # prefix | history | tail
    tokens: int
    messages: list[Message]


@dataclass(frozen=True)
class Assembled:
    messages: list[Message]
    zones: tuple[Zone, ...]
    tokens: int
    budget: int
    prefix_reuse: float  # longest common token prefix with the previous request ÷ this request
    # Messages ending a part that the next request repeats byte for byte: the prefix, where the
    # previous request's history ended (so a turn that added many blocks still finds the cache
    # written there; Claude looks back only 20 blocks from a marker) and where this history ends,
    # before the tail and any side call's extra messages.
    cache_breakpoints: tuple[int, ...] = (0,)
    history_sent: int = 0  # the history's messages in this request

    def metrics(self) -> dict[str, Any]:
        return {"prompt_tokens_est": self.tokens, "budget": self.budget,
                "prefix_reuse": round(self.prefix_reuse, 4), "history_sent": self.history_sent,
                "zones": {zone.name: zone.tokens for zone in self.zones}}


# The output reserve takes at most this share of the window: 4,096 tokens of an 8k local model's
# window would leave the history almost nothing, though agent replies rarely need that much.
MAX_RESERVE_SHARE = 1 / 8


def budget_for(window: int, reserve_output: int) -> int:
    """Tokens a request may fill: window × 0.75 − the reserved output (seed 002, step 1)."""
    reserve = min(reserve_output, int(window * MAX_RESERVE_SHARE))
    return max(1024, int(window * BUDGET_SHARE) - reserve)


@dataclass(frozen=True)
class FixedZone:
    """The stable prefix's content: the system prompt and the tool schemas."""
    name: str
    system_prompt: str
    tools: list[dict[str, Any]]

    def tokens(self, count_tokens: Callable[[str], int]) -> int:
        return count_tokens(self.system_prompt) + count_tokens(tools_json(self.tools)) + MESSAGE_OVERHEAD_TOKENS


def choose_fixed_zone(variants: list[FixedZone], budget: int, count_tokens: Callable[[str], int]) -> FixedZone:
    """The fullest variant (richest rules, fullest tool documentation) that fits the fixed zone's
    share of the budget; the leanest one when none does. The choice depends only on the model's
    window and the texts, so a reopened session makes it again, byte for byte."""
    for zone in variants:
        if zone.tokens(count_tokens) <= budget * FIXED_ZONE_SHARE:
            return zone
    return variants[-1]


def tools_json(tools: list[dict[str, Any]]) -> str:
    return json.dumps(tools, sort_keys=True, separators=(",", ":"))


@dataclass
class ContextEngine:
    system_prompt: str
    tools: list[dict[str, Any]]
    count_tokens: Callable[[str], int]
    encode: Callable[[str], list[int]]
    budget: int
    _prefix_tokens: int = 0
    _previous: _Sent | None = None

    def __post_init__(self) -> None:
        self._prefix_tokens = FixedZone("", self.system_prompt, self.tools).tokens(self.count_tokens)

    @property
    def prefix_tokens(self) -> int:
        return self._prefix_tokens

    @property
    def system_message(self) -> Message:
        return {"role": "system", "content": self.system_prompt}

    def assemble(self, history: History, tail: str, extra: list[Message] | None = None,
                 remember: bool = True, pictures_shown: bool = True) -> Assembled:
        """The request for this turn. `remember=False` for side calls (reboot) that must not count.
        `pictures_shown`: whether the model is shown the history's pictures; a model that is not
        reads a line instead, and they take none of its window (a small one, as local text-only
        models have, compacted early for pictures it never got)."""
        history.count(self.count_tokens)
        tail_message = {"role": "user", "content": tail}
        extra = extra or []
        unseen = 0 if pictures_shown else PICTURE_TOKENS * history.pictures_held
        middle_tokens = history.total_tokens - unseen + sum(message_tokens(m, self.count_tokens) for m in extra)
        tail_tokens = self.count_tokens(tail) + MESSAGE_OVERHEAD_TOKENS
        messages = [self.system_message, *history.messages, *extra, tail_message]
        total = self._prefix_tokens + middle_tokens + tail_tokens
        # (both sides of the ratio as history.tokens counts them, pictures and all)
        reuse = self._common_prefix(history, messages) / (total + unseen) if total + unseen else 0.0
        breakpoints = self._cache_breakpoints(history)
        if remember:
            self._previous = _Sent(messages, history.generation, len(history.messages), history.total_tokens)
        zones = (
            Zone("prefix", self._prefix_tokens, [self.system_message]),
            Zone("history", middle_tokens, messages[1:-1]),
            Zone("tail", tail_tokens, [tail_message]),
        )
        return Assembled(messages, zones, total, self.budget, reuse, breakpoints, len(history.messages))

    def assume_sent(self, history: History, held: int) -> None:
        """A reopened session: the last request, sent before the restart, held the prefix and the
        first `held` messages of this history. The next request is measured (and its cache markers
        placed) against it, as if the process had never stopped; its tail does not matter, being
        where the next request differs anyway."""
        placeholder_tail = {"role": "user", "content": ""}
        self._previous = _Sent([self.system_message, *history.messages[:held], placeholder_tail],
                               history.generation, held, NOT_COUNTED_YET)

    def _cache_breakpoints(self, history: History) -> tuple[int, ...]:
        previous = self._previous
        ends = [len(history.messages)]
        if previous is not None and previous.generation == history.generation:
            ends.insert(0, previous.history_len)
        return (0, *sorted({end for end in ends if 0 < end <= len(history.messages)}))

    def _common_prefix(self, history: History, messages: list[Message]) -> int:
        """Tokens this request shares, from its start, with the previous one.

        While the history only grows, the previous request is this one's history up to where the
        previous tail stood: that part is known without looking at it, and only the message now in
        the old tail's place is compared token by token. After a compaction, the requests are
        compared message by message from the start.
        """
        previous = self._previous
        if previous is None:
            return 0
        if previous.generation == history.generation and previous.history_len <= len(history.messages):
            index = 1 + previous.history_len
            held_tokens = (previous.history_tokens if previous.history_tokens != NOT_COUNTED_YET
                           else sum(history.tokens[:previous.history_len]))  # counted by now
            return self._prefix_tokens + held_tokens + self._shared_tokens(previous.messages[index], messages[index])
        common = 0
        for index, message in enumerate(messages[:-1]):
            if index >= len(previous.messages):
                break
            if message is not previous.messages[index] and message != previous.messages[index]:
                return common + self._shared_tokens(previous.messages[index], message)
            common += self._prefix_tokens if index == 0 else history.tokens[index - 1]
        return common

    def _shared_tokens(self, old: Message, new: Message) -> int:
        same = 0
        for a, b in zip(self.encode(message_text(old)), self.encode(message_text(new))):
            if a != b:
                break
            same += 1
        return same


NOT_COUNTED_YET = -1  # a reopened session's last request: its tokens are summed at the next request


@dataclass(frozen=True)
class _Sent:
    messages: list[Message]
    generation: int
    history_len: int
    history_tokens: int
