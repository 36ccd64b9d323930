"""Delegated research (core/agent/research.py): what handing a survey to a helper saves the agent.

One deterministic task on a generated project of FILES Python files: find every caller of one
function (CALLERS of the files call it), record them, then go on with FOLLOW_UP more turns of work.
Two ways through the real loop, store and files, with a scripted model:

- direct:    the agent searches and reads each caller itself; all it read stays in its context;
- delegated: the agent hands the same question to a research helper (delegate_research), which
             does the same search and reads in its own context; the agent gets its report.

Per way: the agent's context at its first request and when the survey is over (tokens, as its
requests held them; the difference is what the survey added),
prompt tokens over every request (the agent's and the helper's), and billed input priced as
benchmarks/context.py prices it: each request against the previous one of the same context
(the agent's, or the helper's), cached × 0.1 + (prompt − cached) × 1.25.

    python benchmarks/research.py [--files 60] [--callers 12] [--follow-up 20] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import context as context_bench  # noqa: E402  (benchmarks/context.py: the common measure)

from core.agent.research import MAX_STEPS, READING_TOOLS  # noqa: E402
from core.events import AssistantMessage, ToolResult  # noqa: E402
from core.llm import ModelRequest  # noqa: E402
from core.scripted import ScriptedModel, call, reply  # noqa: E402
from core.session import Session, SessionConfig  # noqa: E402
from core.store import Store  # noqa: E402

TARGET = "price_total"
READS_PER_REPLY = 3  # a model reads a few files in one reply (more when the helper's steps would not do)


def make_project(folder: Path, files: int, callers: int, rng: random.Random) -> list[tuple[str, int]]:
    """A package of `files` modules of 150-250 lines; `callers` of them call TARGET once. Returns
    (path, line) of each call."""
    words = "invoice ledger tax rate line order customer discount currency report export batch".split()
    calling = set(rng.sample(range(files), callers))
    found = []
    for index in range(files):
        lines = [f'"""The {rng.choice(words)} {rng.choice(words)} module."""', "", "from decimal import Decimal", ""]
        while len(lines) < rng.randint(150, 250):
            name = f"{rng.choice(words)}_{rng.choice(words)}_{len(lines)}"
            lines += [f"def {name}(items, rate=Decimal('0.{rng.randint(1, 99):02d}')):",
                      f'    """Work out the {rng.choice(words)} of the {rng.choice(words)} for each item."""',
                      "    result = []", "    for item in items:",
                      f"        result.append(item.{rng.choice(words)} * rate)", "    return result", ""]
        if index in calling:
            at = rng.randrange(8, len(lines) - 4)
            lines[at:at] = ["def grand_total(lines):", f"    return {TARGET}(lines) + sum(l.tax for l in lines)", ""]
            found.append((f"billing/module_{index:03d}.py", at + 2))
        path = folder / "billing" / f"module_{index:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sorted(found)


def survey_replies(found: list[tuple[str, int]]) -> list:
    """The survey as a model does it: one search, then the lines around each call, a few a reply
    (the same both ways, in as many replies as the helper has steps for)."""
    steps = [reply("Searching for the callers.", call("file_search", "s0", query=f"{TARGET}("))]
    per_reply = max(READS_PER_REPLY, -(-len(found) // (MAX_STEPS - 2)))
    for start in range(0, len(found), per_reply):
        steps.append(reply("", *(call("file_read", f"r{start + i}", path=path, offset=max(1, line - 20), limit=60)
                                 for i, (path, line) in enumerate(found[start:start + per_reply]))))
    return steps


def report(found: list[tuple[str, int]]) -> str:
    lines = "\n".join(f"- {path}:{line}: `return {TARGET}(lines) + sum(l.tax for l in lines)` in grand_total()"
                      for path, line in found)
    return f"{TARGET} is called in {len(found)} places, each from a grand_total() that adds the tax after it:\n{lines}"


def follow_up(found: list[tuple[str, int]], turns: int) -> list:
    """The work after the survey, the same both ways: findings, then small reads and edits."""
    steps = [reply("", call("findings_add", "f0", title=f"Callers of {TARGET}", body=report(found)))]
    for turn in range(turns):
        path, line = found[turn % len(found)]
        steps.append(reply("", call("file_read", f"u{turn}", path=path, offset=line, limit=3)))
    return steps + [reply("", call("task_done", summary="Callers listed and checked."))]


class Routed(ScriptedModel):
    """The agent's requests and the helper's (it has only the reading tools), each answered from
    their own script; the helper writes its report when it has read all, or when told to."""

    def __init__(self, agent: list, helper: list, report_text: str):
        super().__init__([])
        self.agent, self.helper_steps, self.report = list(agent), list(helper), report_text

    def helper(self, request: ModelRequest) -> bool:
        return len(request.tools) == len(READING_TOOLS)

    async def complete(self, request, on_text=None, on_retry=None, on_reasoning=None, on_call=None):
        self.requests.append(request)
        if not self.helper(request):
            return self.agent.pop(0)
        told_to_report = request.tool_choice == "none"
        return self.helper_steps.pop(0) if self.helper_steps and not told_to_report else reply(self.report)


async def run(way: str, folder: Path, found: list[tuple[str, int]], follow: int) -> dict:
    survey = survey_replies(found)
    if way == "direct":
        model = Routed(survey + follow_up(found, follow), [], "")
    else:
        question = f"Find every call of {TARGET}( in the project, with the line of each."
        model = Routed([reply("", call("delegate_research", "d0", question=question, bring_back="path:line of each"))]
                       + follow_up(found, follow), survey, report(found))
    store = Store(folder / f"{way}.db")
    try:
        config = SessionConfig(task=f"List every caller of {TARGET} and check each", model=context_bench.TOKENIZER,
                               workdir=folder / "project", approval="all", max_turns=500, danger_turn=500)
        session = Session.create(store, folder / way, config, model)
        status = await session.run()
        assert status == "done", status
        agent = [r for r in model.requests if not model.helper(r)]
        helper = [r for r in model.requests if model.helper(r)]
        replies = [r.event for r in session.records if isinstance(r.event, AssistantMessage)]
        after = next(i for i, message in enumerate(replies) if any(c.name == "findings_add" for c in message.tool_calls))
        delegated = [r.event.content for r in session.records
                     if isinstance(r.event, ToolResult) and r.event.name == "delegate_research"]
        cut = re.search(r"reported early: ([^)]+)", delegated[0]) if delegated else None
        return {"strategy": way, "agent_requests": len(agent), "helper_requests": len(helper),
                "helper_reported_early": cut.group(1) if cut else "",
                "agent_context_at_start": replies[0].metrics["prompt_tokens_est"],
                # the request that records the finding is the first one after the survey
                "agent_context_after_survey": replies[after].metrics["prompt_tokens_est"],
                "agent_context_at_end": replies[-1].metrics["prompt_tokens_est"],
                **_priced(agent, helper)}
    finally:
        store.close()


def _priced(*contexts: list[ModelRequest]) -> dict:
    prompt = billed = 0.0
    for requests in contexts:
        if not requests:
            continue
        tools = len(context_bench.tokens_of(json.dumps(requests[0].tools, sort_keys=True)))
        for tokens, cached in context_bench.prompt_and_cached([r.messages for r in requests], tools):
            prompt += tokens
            billed += cached * 0.1 + (tokens - cached) * 1.25
    return {"prompt_tokens": int(prompt), "billed_input": round(billed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--callers", type=int, default=12)
    parser.add_argument("--follow-up", type=int, default=20)
    parser.add_argument("--json", action="store_true", help="only the JSON lines")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        found = make_project(folder / "project", args.files, args.callers, random.Random(7))
        rows = [asyncio.run(run(way, folder, found, args.follow_up)) for way in ("direct", "delegated")]
    for row in rows:
        print(json.dumps(row))
    if args.json:
        return
    direct, delegated = rows
    print(f"\n{args.files} files, {args.callers} callers, {args.follow_up} turns after the survey")
    print(f"{'':>12} {'agent reqs':>10} {'helper reqs':>11} {'ctx after survey':>16} {'ctx at end':>10} "
          f"{'prompt tokens':>13} {'billed input':>12}")
    for row in rows:
        print(f"{row['strategy']:>12} {row['agent_requests']:>10} {row['helper_requests']:>11} "
              f"{row['agent_context_after_survey']:>16,} {row['agent_context_at_end']:>10,} "
              f"{row['prompt_tokens']:>13,} {row['billed_input']:>12,}")
    added = [row["agent_context_after_survey"] - row["agent_context_at_start"] for row in rows]
    print(f"\nwhat the survey added to the agent's context: {added[0]:,} tokens direct, {added[1]:,} delegated "
          f"({added[1] / added[0]:.2f})")
    print(f"delegated ÷ direct: context after the survey {delegated['agent_context_after_survey'] / direct['agent_context_after_survey']:.2f}, "
          f"prompt tokens {delegated['prompt_tokens'] / direct['prompt_tokens']:.2f}, "
          f"billed input {delegated['billed_input'] / direct['billed_input']:.2f}")


if __name__ == "__main__":
    main()
