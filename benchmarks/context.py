"""How three ways of building the context fare on one deterministic 60-turn trajectory.

- tripane: this engine, run for real (the agent loop, real files, shell, a local web server,
  one user plan edit, one compaction), with a scripted model;
- naive:   the full history resent every turn, nothing offloaded, the current plan and status
  regenerated at the top of the system prompt (the common pattern);
- rewrite: the history rewritten in place every turn — tool outputs older than the last three turns
  cut to their first 300 characters (as GenericAgent's compress step does) — plan in a tail.

All three are measured the same way. For each request, `cached` = tokens in the longest common
prefix with the previous request; billed input = cached × 0.1 + (prompt − cached) × 1.25, as a
caching provider bills it; cached_share = all cached ÷ all prompt tokens (the seeds' hit rate,
weighted by tokens, where prefix_reuse is the mean over requests). Prints one JSON line per strategy, a table, then tripane's assembly time
at 100, 1,000 and 10,000 events. Targets: tripane prefix_reuse ≥ 0.97, billed_input ≤ 0.2 × naive,
assembly median ≤ 2 ms at 1,000 events.

    python benchmarks/context.py
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from functools import lru_cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.context.engine import ContextEngine, budget_for  # noqa: E402
from core.context.history import History, message_text  # noqa: E402
from core.context.tail import build_tail  # noqa: E402
from core.events import AssistantMessage, Record, ToolResult  # noqa: E402
from core.llm import ModelReply, count_tokens, encode_tokens  # noqa: E402
from core.memory.working import PLAN  # noqa: E402
from core.paths import resource_text  # noqa: E402
from core.scripted import ScriptedModel, call, reply  # noqa: E402
from core.session import Session, SessionConfig  # noqa: E402
from core.store import Store  # noqa: E402
from core.tools.builtin import builtin_registry  # noqa: E402

TOKENIZER = "gpt-4o-mini"
TURNS = 60
EDIT_TURN, COMPACT_TURN = 24, 44


# --- the trajectory ------------------------------------------------------------------------------

def make_workdir(folder: Path, rng: random.Random) -> None:
    words = "parser token buffer index cache retry session config handler stream queue".split()
    for i in range(12):
        body = []
        for j in range(rng.randint(60, 180)):
            name = f"{rng.choice(words)}_{rng.choice(words)}_{j}"
            body.append(f"def {name}(value, limit={rng.randint(1, 99)}):\n    return value[:limit]  # {rng.choice(words)}\n")
        (folder / f"module_{i}.py").write_text("".join(body), encoding="utf-8")
    for i in range(8):
        lines = [f"tests/test_module_{i}.py::test_case_{k} {'PASSED' if rng.random() > 0.1 else 'FAILED'}"
                 for k in range(rng.randint(80, 400))]
        failure = "" if i % 3 else ("\n_____ test_case_7 _____\nAssertionError: expected 3, got 4\n" * 5)
        (folder / f"testrun_{i}.log").write_text("\n".join(lines) + failure + "\n", encoding="utf-8")


def make_pages(rng: random.Random) -> dict[str, bytes]:
    words = "the cache prefix model token request provider billing latency context window agent".split()
    pages = {}
    for i in range(5):
        paragraphs = "".join(f"<p>{' '.join(rng.choice(words) for _ in range(80))}</p>" for _ in range(rng.randint(20, 60)))
        pages[f"/doc{i}"] = f"<html><body><h1>Doc {i}</h1>{paragraphs}</body></html>".encode()
    return pages


def script(box: list[Session]) -> list:
    steps = []
    for turn in range(TURNS):
        kind = turn % 6
        if turn == EDIT_TURN:
            steps.append(_user_edits_plan(box))
        elif turn == COMPACT_TURN:
            steps.append(_compaction_asked(box))
        elif turn == COMPACT_TURN + 1:  # the flush turn
            steps.append(reply("", call("findings_add", title="Before compaction", body="Tests in module 2 fail on rounding.")))
        elif turn in (9, 31):  # two errors: kept in the history, below the 3-Strike limit
            steps.append(reply("", call("file_read", call_id=f"t{turn}", path=f"missing_{turn}.py")))
        elif kind in (0, 3):
            steps.append(reply("Reading the module.", call("file_read", call_id=f"t{turn}", path=f"module_{turn % 12}.py", limit=2000)))
        elif kind == 1:
            steps.append(reply("", call("shell_run", call_id=f"t{turn}", command=f"cat testrun_{turn % 8}.log")))
        elif kind == 2:
            steps.append(reply("", call("web_fetch", call_id=f"t{turn}", url=f"{{site}}/doc{turn % 5}")))
        elif kind == 4:
            steps.append(reply("", call("findings_add", call_id=f"t{turn}", title=f"Turn {turn}", body="Noted the relevant functions.")))
        else:
            steps.append(reply("", call("file_write", call_id=f"t{turn}", path=f"notes_{turn}.md", content=f"Turn {turn}: checked.\n")))
    steps.append(reply("", call("task_done", summary="done")))
    return steps


def _user_edits_plan(box):
    def step(request):
        session = box[0]
        text, version = session.read_file(PLAN)
        session.edit_file(PLAN, text + "\n- Person: fix module 2 before anything else\n", base_version=version)
        return reply("", call("file_list", call_id="edit-turn"))
    return step


def _compaction_asked(box):
    def step(request):
        box[0].request_compaction()
        return reply("", call("file_list", call_id="compact-turn"))
    return step


def serve(pages: dict[str, bytes]) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            body = pages.get(self.path, b"")
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


async def run_tripane(folder: Path) -> tuple[Session, ScriptedModel, list[float]]:
    rng = random.Random(7)
    work = folder / "work"
    work.mkdir()
    make_workdir(work, rng)
    server = serve(make_pages(rng))
    site = f"http://127.0.0.1:{server.server_address[1]}"
    box: list[Session] = []
    steps = script(box)
    for i, step in enumerate(steps):  # point web_fetch at the local server
        if isinstance(step, ModelReply) and step.tool_calls and step.tool_calls[0].name == "web_fetch":
            url = json.loads(step.tool_calls[0].arguments)["url"].replace("{site}", site)
            steps[i] = reply("", call("web_fetch", call_id=step.tool_calls[0].id, url=url))
    model = ScriptedModel(steps, side_replies=[ModelReply("Goal: fix the failing tests. Done: read modules 0-11, "
                                                          "ran the test logs. Pending: module 2 rounding.")])
    store = Store(folder / "tripane.db")
    config = SessionConfig(task="Find and fix the failing tests in this project.", model=TOKENIZER, workdir=work,
                           approval="all", max_turns=200, danger_turn=1000, warn_turn=1000, keep_turns=5)
    session = Session.create(store, folder, config, model)
    box.append(session)
    timings: list[float] = []
    loop_obj = session._agent_loop()
    original = loop_obj.assemble

    async def timed(*args, **kwargs):
        await loop_obj._ensure_engine()
        start = time.perf_counter()
        result = await original(*args, **kwargs)
        if kwargs.get("remember", True):
            timings.append((time.perf_counter() - start) * 1000)
        return result
    loop_obj.assemble = timed

    def no_questions(notice) -> None:  # the trajectory must run unattended; a question is a bug here
        if isinstance(notice, Record) and notice.event.kind == "human_question":
            print(f"benchmark trajectory asked a question: {notice.event.question}", file=sys.stderr)
            session.stop()
    session.subscribe(no_questions)
    await session.run()
    server.shutdown()
    return session, model, timings


# --- the other two strategies, from the same trajectory -------------------------------------------

def trajectory(session: Session) -> list[dict]:
    """Per turn: the assistant message, its raw results (never offloaded, re-reads in full), notes
    that followed."""
    turns: list[dict] = []
    outputs: dict[str, str] = {}
    for record in session.records:
        event = record.event
        if isinstance(event, AssistantMessage) and not event.metrics.get("flush"):
            turns.append({"assistant": event, "results": [], "notes": []})
        elif isinstance(event, ToolResult) and turns:
            content = (session.dir / event.offload_path).read_text(encoding="utf-8") if event.offload_path else event.content
            content = outputs[event.same_as] if event.same_as else content
            outputs[event.call_id] = content
            turns[-1]["results"].append((event, content))
        elif event.kind == "file_changed" and event.author == "user" and turns:
            turns[-1]["notes"].append(f"The person edited {event.file}:\n{event.diff}")
    return turns


def assistant_message(event: AssistantMessage) -> dict:
    message = {"role": "assistant", "content": event.text or None}
    if event.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in event.tool_calls]
    return message


def naive_requests(session: Session, turns: list[dict], system: str) -> tuple[list[list[dict]], list[float]]:
    plan = session.read_file(PLAN)[0]
    history: list[dict] = [{"role": "user", "content": session.state.config.task}]
    requests, timings = [], []
    for k, turn in enumerate(turns):
        start = time.perf_counter()
        status = f"Turn {k + 1} of 200. Progress: {k} steps done, {len(history)} messages so far.\n\n{plan}\n\n"
        requests.append([{"role": "system", "content": status + system}, *history])
        timings.append((time.perf_counter() - start) * 1000)
        history.append(assistant_message(turn["assistant"]))
        for event, content in turn["results"]:
            history.append({"role": "tool", "tool_call_id": event.call_id, "content": content})
        history.extend({"role": "user", "content": note} for note in turn["notes"])
    return requests, timings


def rewrite_requests(session: Session, turns: list[dict], system: str) -> tuple[list[list[dict]], list[float]]:
    plan = session.read_file(PLAN)[0]
    requests, timings = [], []
    for k in range(len(turns)):
        start = time.perf_counter()
        messages = [{"role": "system", "content": system}, {"role": "user", "content": session.state.config.task}]
        for j, turn in enumerate(turns[:k]):
            messages.append(assistant_message(turn["assistant"]))
            for event, content in turn["results"]:
                cut = content if j >= k - 3 else content[:300] + " …[truncated]"
                messages.append({"role": "tool", "tool_call_id": event.call_id, "content": cut})
            messages.extend({"role": "user", "content": note} for note in turn["notes"])
        messages.append({"role": "user", "content": f"Turn {k + 1}.\n{plan}"})
        requests.append(messages)
        timings.append((time.perf_counter() - start) * 1000)
    return requests, timings


# --- the common measure ---------------------------------------------------------------------------

@lru_cache(maxsize=None)
def tokens_of(text: str) -> tuple[int, ...]:
    return tuple(encode_tokens(TOKENIZER, text))


def prompt_and_cached(requests: list[list[dict]], tools_tokens: int) -> list[tuple[int, int]]:
    """Per request: its tokens, and those in its longest common prefix with the previous request."""
    figures, previous = [], None
    for messages in requests:
        encoded = [tokens_of(json.dumps(m["role"]) + message_text(m)) for m in messages]
        prompt = tools_tokens + sum(len(e) for e in encoded)
        cached = 0
        if previous is not None:
            cached = tools_tokens
            for old, new in zip(previous, encoded):
                if old == new:
                    cached += len(new)
                    continue
                for a, b in zip(old, new):
                    if a != b:
                        break
                    cached += 1
                break
        previous = encoded
        figures.append((prompt, cached))
    return figures


def measure(name: str, requests: list[list[dict]], tools_tokens: int, timings: list[float]) -> dict:
    figures = prompt_and_cached(requests, tools_tokens)
    reuse = [cached / prompt for prompt, cached in figures]
    prompt_total = sum(prompt for prompt, _ in figures)
    cached_total = sum(cached for _, cached in figures)
    billed = sum(cached * 0.1 + (prompt - cached) * 1.25 for prompt, cached in figures)
    ordered = sorted(timings)
    return {"strategy": name, "turns": len(requests), "prefix_reuse": round(statistics.mean(reuse[1:]), 4),
            "prompt_tokens": prompt_total, "billed_input": round(billed),
            # The seeds' hit rate (seed 001, Task 0.2): cached ÷ prompt tokens over the whole run.
            "cached_share": round(cached_total / prompt_total, 4),
            "assembly_ms_median": round(statistics.median(ordered), 3),
            "assembly_ms_p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 3)}


def reuse_by_stretch(requests: list[list[dict]], tools_tokens: int) -> str:
    """Mean prefix reuse before the compaction, at the request that follows it, and after: where
    the mean is lost. The compacted request is the first with fewer messages than the one before."""
    reuse = [cached / prompt for prompt, cached in prompt_and_cached(requests, tools_tokens)]
    at = next((i for i in range(1, len(requests)) if len(requests[i]) < len(requests[i - 1])), None)
    if at is None:
        return f"no compaction; mean {statistics.mean(reuse[1:]):.3f}"
    after = reuse[at + 1:] or [float("nan")]
    return (f"before the compaction {statistics.mean(reuse[1:at]):.3f} ({at - 1} requests), the compacted request "
            f"{reuse[at]:.3f}, after it {statistics.mean(after):.3f} ({len(after)} requests)")


def new_tokens_by_kind(requests: list[list[dict]]) -> dict[str, float]:
    """Where each request's uncached tokens come from (mean per request, after the first): what
    the prefix reuse is made of. The last message of a tripane request is its tail."""
    totals = {"assistant": 0, "tool results": 0, "tail": 0, "other": 0}
    for previous, messages in zip(requests, requests[1:]):
        start = next((i for i, (a, b) in enumerate(zip(previous, messages)) if a != b), len(previous))
        for index in range(start, len(messages)):
            m = messages[index]
            kind = ("tail" if index == len(messages) - 1 else
                    {"assistant": "assistant", "tool": "tool results"}.get(m["role"], "other"))
            totals[kind] += len(tokens_of(json.dumps(m["role"]) + message_text(m)))
    return {kind: round(n / max(1, len(requests) - 1)) for kind, n in totals.items()}


def assembly_at_scale(sizes=(100, 1_000, 10_000)) -> dict[int, float]:
    """Median time to assemble the next request when the log already holds N events."""
    from core.agent.state import SessionState
    from core.events import SessionStarted, ToolCall
    from core.events import ToolResult as Result
    tools = builtin_registry().schemas()
    engine = ContextEngine(resource_text("prompts", "system.md"), tools, lambda t: count_tokens(TOKENIZER, t),
                           lambda t: encode_tokens(TOKENIZER, t), budget_for(10**9, 0))
    history, state = History(), SessionState("bench")
    seq = 0

    def add(event) -> None:
        nonlocal seq
        seq += 1
        record = Record("bench", seq, "", event)
        history.apply(record)
        state.apply(record)

    add(SessionStarted(task="benchmark", model=TOKENIZER, workdir="."))
    plan = resource_text("templates", "task_plan.md")
    results = {}
    for size in sizes:
        times = []
        while seq < size:
            add(AssistantMessage("", (ToolCall(f"c{seq}", "file_read", '{"path": "a.py"}'),), turn=state.turn + 1))
            add(Result(f"c{seq - 1}", "file_read", True, f"def f{seq}(): return {seq}\n" * 20))
            start = time.perf_counter()
            engine.assemble(history, build_tail(state, plan, 1))
            times.append((time.perf_counter() - start) * 1000)
        results[size] = round(statistics.median(times[-20:]), 3)
    return results


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        session, model, tripane_timings = asyncio.run(run_tripane(Path(tmp)))
        sent = [r for r in model.requests if r.tools and r.tool_choice != "none"]
        main_requests = [r.messages for r in sent]
        # All three strategies send the same system prompt and tools: the ones this engine chose.
        system, tools = main_requests[0][0]["content"], sent[0].tools
        tools_tokens = len(tokens_of(json.dumps(tools, sort_keys=True)))
        turns = trajectory(session)
        naive, naive_t = naive_requests(session, turns, system)
        rewrite, rewrite_t = rewrite_requests(session, turns, system)
        rows = [measure("tripane", main_requests, tools_tokens, tripane_timings),
                measure("naive", naive, tools_tokens, naive_t),
                measure("rewrite", rewrite, tools_tokens, rewrite_t)]
        compactions = sum(1 for r in session.records if r.event.kind == "compaction")
    for row in rows:
        print(json.dumps(row))
    print(f"\n{'strategy':<9} {'turns':>5} {'reuse':>7} {'cached':>7} {'prompt tok':>11} {'billed':>10} "
          f"{'asm p50 ms':>10} {'asm p99 ms':>10}")
    for r in rows:
        print(f"{r['strategy']:<9} {r['turns']:>5} {r['prefix_reuse']:>7.3f} {r['cached_share']:>7.3f} {r['prompt_tokens']:>11,} "
              f"{r['billed_input']:>10,} {r['assembly_ms_median']:>10.3f} {r['assembly_ms_p99']:>10.3f}")
    tripane, naive_row = rows[0], rows[1]
    ratio = tripane["billed_input"] / naive_row["billed_input"]
    # Four places: at three, 0.9698 printed as 0.970 beside its target of 0.97, which it misses.
    reuse = tripane["prefix_reuse"]
    print(f"\ntripane compactions: {compactions}; billed_input tripane/naive = {ratio:.3f} (target ≤ 0.2, "
          f"{'met' if ratio <= 0.2 else 'not met'}); prefix_reuse {reuse:.4f} (target ≥ 0.97, "
          f"{'met' if reuse >= 0.97 else 'not met'})")
    print("tripane prefix_reuse by stretch: " + reuse_by_stretch(main_requests, tools_tokens))
    split = new_tokens_by_kind(main_requests)
    print("tripane uncached tokens per request, mean: " + ", ".join(f"{k} {v:,}" for k, v in split.items()))
    scale = assembly_at_scale()
    print("tripane assembly, median ms for the next request: " + ", ".join(f"{n:,} events: {ms}" for n, ms in scale.items()))
    print(json.dumps({"assembly_ms_at_events": scale}))


if __name__ == "__main__":
    main()
