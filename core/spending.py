"""What the models cost, over all sessions: by day, by model, by session (`tripane spending`, and
View → Spending in the window).

Read from the event log: each reply's usage (its AssistantMessage), each compaction summary's
(its Compaction), each reflection's (its ReflectionWritten), each research helper's step (its
ResearchStep) and each diagnosis of a failure (its ErrorDiagnosed); and, belonging to no session, each day's review (memory/reviews.jsonl); as the
provider reported them and
litellm priced them. A model litellm has no price for (a local server) counts its tokens at $0.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from core.store import Store
from core.text import counted, money

KINDS = ("assistant_message", "compaction", "reflection", "research_step", "error_diagnosed")
REVIEW_COSTS = "reviews.jsonl"  # in memory/: one line per request of a day's review (core/memory/review.py)
REVIEW = "day-"  # a day's review's "session", in its kept report and in the groups: day-2026-11-25
# The model each kind's usage belongs to: the reply's, the summary's writer, the reflection's, the helper's.
_MODEL_OF = {"assistant_message": "$.model", "compaction": "$.summary_model", "reflection": "$.model",
             "research_step": "$.model", "error_diagnosed": "$.model"}


@dataclass
class Spent:
    """Requests, tokens and cost of one group (a day, a model, a session, or all of them)."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, prompt: int, completion: int, cached: int, cost: float) -> None:
        self.requests += 1
        self.prompt_tokens += prompt
        self.completion_tokens += completion
        self.cached_tokens += cached
        self.cost_usd += cost

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Request:
    """One model request as the log holds it."""

    day: datetime.date  # local
    session_id: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    cost_usd: float


@dataclass
class Spending:
    since: datetime.date | None  # None: everything in the log
    total: Spent = field(default_factory=Spent)
    by_day: dict[datetime.date, Spent] = field(default_factory=dict)
    by_model: dict[str, Spent] = field(default_factory=dict)
    by_session: dict[str, Spent] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # the sessions', for people

    def over(self) -> str:
        """What the requests were for, counted: "3 sessions and 1 day's review"."""
        reviews = sum(key.startswith(REVIEW) for key in self.by_session)
        sessions = len(self.by_session) - reviews
        said = f"{sessions:,} session{'s' * (sessions != 1)}"
        return said + (f" and {reviews:,} " + ("day's review" if reviews == 1 else "days' reviews") if reviews else "")

    def days_newest_first(self) -> list[tuple[datetime.date, Spent]]:
        return sorted(self.by_day.items(), reverse=True)

    def unpriced(self) -> list[str]:
        """The models whose tokens cost $0: litellm has no price for them."""
        return sorted(model for model, spent in self.by_model.items() if spent.tokens and not spent.cost_usd)

    def add(self, request: Request) -> None:
        figures = (request.prompt_tokens, request.completion_tokens, request.cached_tokens, request.cost_usd)
        self.total.add(*figures)
        for groups, key in ((self.by_day, request.day), (self.by_model, request.model),
                            (self.by_session, request.session_id)):
            groups.setdefault(key, Spent()).add(*figures)  # type: ignore[attr-defined]


def requests(store: Store, since: datetime.date | None = None) -> Iterable[Request]:
    """Every request with a usage from `since` (a local day) on. An event the file no longer holds
    whole (a damaged database) is passed over: the rest is still counted."""
    # Stamps are UTC: a local day starts up to 14 hours either side; the exact cut is made below.
    after = "" if since is None else (datetime.datetime.combine(since, datetime.time()) -
                                      datetime.timedelta(days=1)).isoformat()
    # A session begun from an earlier point of another (core/branch.py) holds that one's events up
    # to its SessionBranched: their requests were made, and paid, once, by the other.
    taken_over = dict(store.read("SELECT session_id, seq FROM events WHERE kind = 'session_branched'", []))
    for kind in KINDS:
        rows = store.read(
            "SELECT session_id, seq, ts, json_extract(data, ?), json_extract(data, '$.usage.prompt_tokens'), "
            "json_extract(data, '$.usage.completion_tokens'), json_extract(data, '$.usage.cached_tokens'), "
            "json_extract(data, '$.usage.cost_usd') FROM events WHERE kind = ? AND ts >= ? AND json_valid(data)",
            [_MODEL_OF[kind], kind, after])
        for session_id, seq, ts, model, prompt, completion, cached, cost in rows:
            if not (prompt or completion):  # a summary nobody wrote; a reply recorded without usage
                continue
            if seq < taken_over.get(session_id, 0):
                continue
            day = local_day(ts)
            if since is None or day >= since:
                yield Request(day, session_id, model or "(unknown model)", int(prompt or 0), int(completion or 0),
                              int(cached or 0), float(cost or 0.0))


def review_requests(memory_root: Path, since: datetime.date | None = None) -> Iterable[Request]:
    """The requests of the days' reviews, from `since` on; a line damaged by hand is passed over."""
    path = memory_root / REVIEW_COSTS
    if not path.exists():
        return
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            data = json.loads(line)
            usage, day = data["usage"], local_day(str(data["at"]))
            request = Request(day, f"{REVIEW}{data['day']}", str(data["model"]), int(usage["prompt_tokens"]),
                              int(usage["completion_tokens"]), int(usage.get("cached_tokens", 0)),
                              float(usage.get("cost_usd", 0.0)))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if since is None or day >= since:
            yield request


def local_day(stamp: str) -> datetime.date:
    return datetime.datetime.fromisoformat(stamp).astimezone().date()


def spending(store: Store, since: datetime.date | None = None, memory_root: Path | None = None) -> Spending:
    """What was spent from `since` on: the sessions' requests, and those of the days' reviews kept in
    `memory_root` (the data folder's memory/) when it is given."""
    result = Spending(since)
    reviews = review_requests(memory_root, since) if memory_root is not None else ()
    for request in (*requests(store, since), *reviews):
        result.add(request)
    # Read apart, as the requests are: this runs on a worker thread, and the store's own connection
    # serves the window meanwhile (CI once listed the sessions by their ids, as if this query had
    # come back empty: the likely cause, not reproduced).
    result.titles = {sid: title for sid, title in store.read("SELECT id, title FROM sessions", [])
                     if sid in result.by_session}
    result.titles.update({key: f"Review of the work of {key.removeprefix(REVIEW)}" for key in result.by_session
                          if key.startswith(REVIEW)})
    return result


def since_days(days: int | None, today: Callable[[], datetime.date] = datetime.date.today) -> datetime.date | None:
    """The first day of the last `days` days, today included; None (all) for no number."""
    return None if not days else today() - datetime.timedelta(days=days - 1)


def known_cost(cost: float, prompt_tokens: int) -> str | None:
    """What requests cost, as `money` says it; None where they were made but cost nothing at
    litellm's prices: it has no price for the model, and "$0.0000" would say it was free."""
    return money(cost) if cost or not prompt_tokens else None


DEAREST_SESSIONS = 10  # in the text report; --json has them all


def figures(spent: Spent) -> str:
    return f"{money(spent.cost_usd):>10}  {spent.tokens:>13,} tokens  {spent.requests:>6,} request{'s' * (spent.requests != 1)}"


def report(spent: Spending, today: datetime.date | None = None) -> str:
    """The text `tripane spending` prints."""
    today = today or datetime.date.today()
    period = "in the whole log" if spent.since is None else (
        f"today ({today})" if spent.since == today else f"from {spent.since} to {today}")
    if not spent.total.requests:
        return f"No model requests {period}."
    total = spent.total
    cached = (f"; {total.cached_tokens / total.prompt_tokens:.0%} of the prompt tokens were read from the provider's "
              "cache" if total.prompt_tokens and total.cached_tokens else "")
    lines = [f"Spent {period}: {money(total.cost_usd)}, {total.tokens:,} tokens in {counted(total.requests, 'request')}{cached}.",
             "", "By day"]
    lines += [f"  {day}  {figures(s)}" for day, s in spent.days_newest_first()]
    lines += ["", "By model"]
    width = max(map(len, spent.by_model))
    lines += [f"  {model:<{width}}  {figures(s)}" for model, s in dearest(spent.by_model)]
    shown = dearest(spent.by_session)[:DEAREST_SESSIONS]
    lines += ["", "By session" + (f" (the {len(shown)} dearest of {len(spent.by_session)})"
                                  if len(spent.by_session) > len(shown) else "")]
    width = max((len(session_id) for session_id, _ in shown), default=0)  # a day's review's key is shorter
    lines += [f"  {session_id:<{width}}  {figures(s)}  {spent.titles.get(session_id, '')}" for session_id, s in shown]
    if spent.unpriced():
        lines += ["", "$0 is a model litellm has no price for (a local server), or one its provider gives free."]
    return "\n".join(lines)


def dearest(groups: dict[str, Spent]) -> list[tuple[str, Spent]]:
    return sorted(groups.items(), key=lambda item: (-item[1].cost_usd, -item[1].tokens, item[0]))


def as_json(spent: Spending) -> dict:
    def row(spent_in: Spent, **key: str) -> dict:
        return {**key, "requests": spent_in.requests, "prompt_tokens": spent_in.prompt_tokens,
                "completion_tokens": spent_in.completion_tokens, "cached_tokens": spent_in.cached_tokens,
                "cost_usd": round(spent_in.cost_usd, 6)}
    return {"since": spent.since.isoformat() if spent.since else None, "total": row(spent.total),
            "by_day": [row(s, day=day.isoformat()) for day, s in spent.days_newest_first()],
            "by_model": [row(s, model=model) for model, s in dearest(spent.by_model)],
            "by_session": [row(s, session=sid, title=spent.titles.get(sid, "")) for sid, s in dearest(spent.by_session)]}
