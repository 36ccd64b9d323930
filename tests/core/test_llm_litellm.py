"""The real litellm code path against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from dataclasses import replace as dataclass_replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from core.context.engine import budget_for
from core.events import (
    AssistantMessage,
    Compaction,
    ErrorRecorded,
    SessionEnded,
    ToolResult,
    WindowLearned,
)
from core.journal import StatusChanged, TextDelta
from core.llm import (
    HOSTED_SILENCE_S,
    INTERLEAVED_THINKING,
    LOCAL_SILENCE_S,
    LiteLLMClient,
    ModelError,
    ModelRequest,
    classify,
    load_litellm,
    needs_cache_markers,
    provider_words,
    silence_allowed,
    window_in,
)
from core.render import render
from core.session import Session
from tests.core.helpers import (
    events_of,
    make_session,
    person_edits_plan,
    wait_for_question,
)
from tests.support.local_site import send_page, serving
from tests.support.openai_server import (
    REDACTED,
    Failure,
    Script,
    ScriptedServer,
    Turn,
    positional,
    tool,
)


def client() -> LiteLLMClient:
    return LiteLLMClient(backoff_s=0.01, retries=2)


async def test_a_task_runs_end_to_end_through_litellm(store, data_dir, workdir):
    (workdir / "data.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    script = positional([
        Turn(text="I will read the data first.", tool_calls=(tool("file_read", path="data.csv"),), prompt_tokens=900),
        Turn(tool_calls=(tool("findings_add", title="data.csv", body="Two columns a, b; one row."),),
             prompt_tokens=1000, cached_tokens=896),
        Turn(tool_calls=(tool("file_write", path="sum.txt", content="3\n"),), prompt_tokens=1100, cached_tokens=1000),
        Turn(tool_calls=(tool("task_done", summary="sum.txt holds 3"),), prompt_tokens=1200, cached_tokens=1100),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/gpt-4o-mini", api_base=server.url)
        deltas = []
        session.subscribe(lambda notice: deltas.append(notice.text) if hasattr(notice, "text") and not hasattr(notice, "seq") else None)
        assert await session.run() == "done"

    assert (workdir / "sum.txt").read_text(encoding="utf-8") == "3\n"
    assert "".join(deltas) == "I will read the data first."
    messages = events_of(session, AssistantMessage)
    assert [m.usage.cached_tokens for m in messages] == [0, 896, 1000, 1100]
    assert all(m.usage.prompt_tokens > 0 and m.usage.cost_usd > 0 for m in messages)  # priced from the bundled map
    assert "Two columns a, b" in session.read_file("findings.md")[0]
    # What reached the server: all tools every time, streaming with usage, and the tail last.
    first, last = server.requests[0], server.requests[-1]
    assert first["stream"] is True and first["stream_options"] == {"include_usage": True}
    assert [t["function"]["name"] for t in first["tools"]] == [t["function"]["name"] for t in last["tools"]]
    assert first["messages"][0] == last["messages"][0]  # the system prompt, byte for byte
    assert last["messages"][-1]["content"].startswith("[Tripane — turn 4")
    assert "cache_control" not in json.dumps(server.requests)  # OpenAI caches prefixes unasked
    assert "num_ctx" not in json.dumps(server.requests)  # a fixed window: nothing to size


def tools_required(body: dict) -> bool:
    """Whether the request obliges the model to call a tool: OpenAI's "required", Anthropic's
    "any", Gemini's function-calling mode ANY."""
    gemini = (body.get("toolConfig") or body.get("tool_config") or {})
    mode = (gemini.get("functionCallingConfig") or gemini.get("function_calling_config") or {}).get("mode")
    return body.get("tool_choice") in ("required", {"type": "any"}) or mode == "ANY"


def asks_to_flush(body: dict) -> bool:
    """Whether the request is a flush turn, by its instruction (Claude while thinking is not
    obliged to call a tool: it refuses thinking with a forced tool)."""
    return "[Tripane: context compaction]" in json.dumps(body["messages"][-1])


def reading_script(reads: int, is_flush: Callable[[dict], bool] = tools_required):
    """An agent reading wide.txt 20 lines a turn, `reads` times, then done; a flush turn (tools
    required: OpenAI's "required", Anthropic's "any") records a finding; a summary request gets one."""
    served = []

    def script(body):
        if not body.get("tools"):
            return Turn(text="Goal: read wide.txt. Done: some rows. Pending: the rest.")
        if is_flush(body):
            return Turn(tool_calls=(tool("findings_add", f"f{len(served)}", title="Rows", body="All alike."),))
        served.append(body)
        if len(served) <= reads:
            return Turn(tool_calls=(tool("file_read", f"r{len(served)}", path="wide.txt",
                                         offset=1 + (len(served) - 1) * 20, limit=20),))
        return Turn(tool_calls=(tool("task_done", "done", summary="read"),))
    return script


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-5", "gemini/gemini-3-pro-preview"])
async def test_a_compacted_conversation_stays_one_claude_and_gemini_accept(store, data_dir, workdir, model):
    """The scripted server refuses what Anthropic refuses (roles out of turn, a tool_result without
    its tool_use, a tool_use left unanswered, more than four cache marks) and what Gemini refuses
    (a call turn out of place, unequal call and response counts, a signature missing); compactions
    restart the history in the middle of the conversation, and a flush turn is a turn of its own."""
    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(200)),
                                      encoding="utf-8")
    with ScriptedServer(reading_script(reads=8)) as server:
        session = make_session(store, data_dir, workdir, client(), model=model,
                               api_base=server.url, context_window=8_000, reserve_output=1000)
        assert await session.run() == "done"
    assert len(events_of(session, Compaction)) >= 2
    assert not [r for r in events_of(session, ToolResult) if not r.ok]
    assert not [e for e in events_of(session, ErrorRecorded) if e.signature.startswith("model:")]
    # each flush obliged the model to call a tool, in the provider's own terms
    assert sum(tools_required(body) for body in server.requests) >= len(events_of(session, Compaction))


@pytest.mark.parametrize("model, effort, thinking", [
    ("anthropic/claude-sonnet-4-5", "low", {"type": "enabled", "budget_tokens": 1024}),
    # Claude that thinks unasked (Sonnet 5) or always (Fable 5.1, which takes no forced tool at
    # all): asked only to show its thinking, which it omits by default.
    ("anthropic/claude-sonnet-5", "", {"type": "adaptive", "display": "summarized"}),
    ("anthropic/claude-fable-5-1", "", {"type": "adaptive", "display": "summarized"}),
])
async def test_claude_thinking_through_compactions_is_sent_back_where_it_must_be(store, data_dir, workdir, model,
                                                                                  effort, thinking):
    """With thinking on, each flush and each restarted history still sends Claude the signed
    thinking of the reply whose calls it answers (the server refuses the request otherwise), and
    the flush turn asks for its call without forcing it (Claude refuses a forced tool while it
    thinks). Claude thinks at each step, and the person sees it."""
    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(200)),
                                      encoding="utf-8")
    with ScriptedServer(reading_script(reads=8, is_flush=asks_to_flush)) as server:
        session = make_session(store, data_dir, workdir, client(), model=model,
                               api_base=server.url, context_window=8_000, reserve_output=1000,
                               reasoning_effort=effort)
        assert await session.run() == "done"
    assert len(events_of(session, Compaction)) >= 2
    assert not [e for e in events_of(session, ErrorRecorded) if e.signature.startswith("model:")]
    with_tools = [body for body in server.requests if body.get("tools")]
    assert all(body["thinking"] == thinking for body in with_tools)
    assert not any(tools_required(body) for body in with_tools)
    assert sum(asks_to_flush(body) for body in with_tools) >= 2
    assert all(m.reasoning for m in events_of(session, AssistantMessage))


async def test_a_session_whose_model_is_gone_goes_on_with_the_one_the_person_chooses(store, data_dir, workdir):
    """The provider no longer knows the session's model: the run ends, and the person chooses
    another model (at another server, with a smaller window); a message continues the same session
    there, budgeted for the new window, with the fixed prompt unchanged. Reopened, it keeps it."""
    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(200)),
                                      encoding="utf-8")
    gone = positional([], default=Failure(404, "The model `gpt-4-32k` has been deprecated"))
    with ScriptedServer(gone) as old, ScriptedServer(reading_script(reads=6)) as new:
        session = make_session(store, data_dir, workdir, client(), model="openai/gpt-4-32k", api_base=old.url)
        assert await session.run() == "error"
        assert "does not know this model" in events_of(session, SessionEnded)[-1].summary

        assert await session.change_model("openai/served-model", new.url, context_window=8_000)
        assert store.find_session(session.id).model == "openai/served-model"  # as the session list shows it
        assert not await session.change_model("openai/served-model", new.url, context_window=8_000)  # the same
        await session.send("Go on with the other model.")
        assert await session.wait() == "done"
    assert {body["model"] for body in new.requests} == {"served-model"} and len(old.requests) == 1
    assert {m.model for m in events_of(session, AssistantMessage)} == {"openai/served-model"}
    assert new.requests[0]["messages"][0] == old.requests[0]["messages"][0]  # the fixed prompt, byte for byte
    assert events_of(session, Compaction)  # budgeted for 8,000 tokens, not the 32k of the model before
    assert "Model changed by the person" in session.read_file("progress.md")[0]
    reopened = Session.open(store, data_dir, session.id, client())
    assert (reopened.state.model, reopened.state.api_base, reopened.state.context_window) == (
        "openai/served-model", new.url, 8_000)
    with pytest.raises(ValueError, match="at least 4,096"):
        await reopened.change_model("openai/tiny", context_window=2_048)


@pytest.mark.parametrize("message, window", [
    ("This model's maximum context length is 16,385 tokens. However, your messages resulted in 17,012", 16385),
    ("the model is loaded with context length of only 4096 tokens, which is not enough", 4096),  # LM Studio
    ('{"code":400,"message":"the request exceeds the available context size","n_ctx":8192}', 8192),  # llama.cpp
    ("prompt is too long: 210000 tokens > 200000 maximum", 200000),  # Anthropic
    ("the context is too long", None),
])
def test_the_window_an_overflow_message_states_is_read(message, window):
    assert window_in(message) == window


async def test_a_request_a_proxy_finds_too_large_is_cured_by_a_compaction(store, data_dir, workdir):
    """nginx before a self-hosted server takes bodies of 1 MB by default (client_max_body_size):
    a long context was refused with 413, and the run ended on an unknown error. It is an overflow
    like a window's: compacted once, and the run goes on."""
    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(400)),
                                      encoding="utf-8")
    limit, refused, reads = 60_000, [], reading_script(reads=12)

    def script(body):
        if len(json.dumps(body)) > limit:
            refused.append(len(json.dumps(body)))
            return Failure(413, "Request Entity Too Large")
        return reads(body)

    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/local-model", api_base=server.url)
        assert await session.run() == "done"
    assert refused and events_of(session, Compaction)


async def test_a_request_still_too_large_after_a_compaction_is_compacted_to_its_last_two_turns(store, data_dir,
                                                                                            workdir):
    """A body limit far under the window: the turns a compaction keeps (five) were still refused,
    and the run ended on the error. A second compaction keeps the last two turns alone."""
    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(400)),
                                      encoding="utf-8")
    reads, sizes, refused = reading_script(reads=12), [], []
    limit = [10**9]  # set once eight turns show how large the prefix is and how much each read adds

    def script(body):
        size = len(json.dumps(body))
        if size > limit[0]:
            refused.append(size)
            return Failure(413, "Request Entity Too Large")
        if body.get("tools") and not tools_required(body):
            sizes.append(size)
            if len(sizes) == 8:  # room for the prefix and three and a half reads
                limit[0] = sizes[0] + int(3.5 * (sizes[7] - sizes[0]) / 7)
        return reads(body)

    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/local-model", api_base=server.url)
        assert await session.run() == "done"
    assert refused
    compactions = events_of(session, Compaction)
    assert len(compactions) >= 2 and all(c.tokens_after < c.tokens_before for c in compactions)


async def test_a_server_window_smaller_than_assumed_is_learned_from_its_overflow(store, data_dir, workdir):
    """A local server started with a fixed context (vLLM, llama.cpp, LM Studio) that no model map
    knows: Tripane budgets for 128k, the server refuses the first request over its window and says
    how large it is. Tripane compacts (flush first), budgets for that window from then on, and
    compacts before the next overflow instead of after it."""
    (workdir / "wide.txt").write_text("".join(f"row {i}: " + "word " * 40 + "\n" for i in range(400)),
                                      encoding="utf-8")
    limit, refused, reads = 16_000, [], reading_script(reads=12)

    def script(body):
        size = len(json.dumps(body["messages"]) + json.dumps(body.get("tools", []))) // 4
        if size > limit:
            refused.append(size)
            return Failure(400, f"This model's maximum context length is {limit:,} tokens. However, you "
                                f"requested {size} tokens in the messages. Please reduce the length.")
        return reads(body)

    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/local-model", api_base=server.url)
        assert await session.run() == "done"
        # Reopened (after a restart), the session budgets for the stated window from its first request.
        reopened = Session.open(store, data_dir, session.id, client())
        await reopened.send("Read the last rows once more.")
        assert await reopened.wait() == "done"
    assert len(refused) == 2  # the turn over the window, and its flush turn (larger still)
    learned = [r for r in session.records if isinstance(r.event, WindowLearned)]
    assert [(r.event.window, r.event.assumed) for r in learned] == [(limit, 128_000)]
    assert render(learned[0]) == ("  ⇲ the provider says the model's window is 16,000 tokens, not the 128,000 "
                                  "assumed: the context is budgeted for it from now on")
    assert "over the model's window: 16,000 tokens, not the 128,000 assumed" in session.read_file("progress.md")[0]
    assert events_of(reopened, AssistantMessage)[-1].metrics["budget"] == budget_for(limit, 4096)
    compactions = events_of(session, Compaction)
    assert len(compactions) >= 2
    # The flush turn is always tried first; at the overflow it could not run, later ones did.
    kinds = [r.event.kind for r in session.records]
    assert kinds.count("flush_requested") == len(compactions)
    assert kinds.index("flush_requested") < kinds.index("compaction")
    assert [c.flush_done for c in compactions] == [False] + [True] * (len(compactions) - 1)
    assert "without the flush turn: the context was over the model's window" in render(
        next(r for r in session.records if r.event is compactions[0]))
    budgets = [m.metrics["budget"] for m in events_of(session, AssistantMessage)]
    assert budgets[0] == budget_for(128_000, 4096) and budgets[-1] == budget_for(limit, 4096)


@pytest.mark.parametrize("served_as, served_window, expected", [
    ("vllm", 24_576, 24_576),  # --max-model-len, in /v1/models
    ("llamacpp", 8_192, 8_192),  # a slot's n_ctx, in /props
    ("lmstudio", 12_000, 12_000),  # a loaded instance's context, in /api/v1/models (LM Studio 0.4 on)
    ("lmstudio-v0", 12_000, 12_000),  # the loaded context, in /api/v0/models (before 0.4)
    ("vllm", None, 128_000),  # the server does not say: litellm's default
])
async def test_a_local_server_is_asked_the_window_it_was_started_with(store, data_dir, workdir, served_as,
                                                                     served_window, expected):
    """vLLM, llama.cpp and LM Studio fix the context when they start, often far below the model's
    trained length; budgeting for 128k meant the first long request overflowed."""
    script = positional([Turn(tool_calls=(tool("file_list", "t1"),)),
                         Turn(tool_calls=(tool("task_done", "t2", summary="ok"),))])
    with ScriptedServer(script, served_window=served_window, served_as=served_as) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/served-model", api_base=server.url)
        assert await session.run() == "done"
    assert [m.metrics["budget"] for m in events_of(session, AssistantMessage)] == [budget_for(expected, 4096)] * 2
    assert len(server.gets) <= 4  # asked once, at the start


@pytest.mark.parametrize("trained, configured, expected", [
    (131_072, None, 16_384),  # a long-context model: what a laptop can hold (Ollama allocates it all)
    (8_192, None, 8_192),  # a short one: all of it
    (None, None, 16_384),  # the server cannot say
    (131_072, 32_768, 32_768),  # the person's choice
])
async def test_ollama_is_asked_for_the_context_the_session_budgets_for(store, data_dir, workdir, trained,
                                                                       configured, expected):
    """Ollama drops the start of a prompt longer than its context, silently, and its default context
    is a few thousand tokens: Tripane's system prompt would be the first thing lost."""
    script = positional([Turn(text="Listing.", tool_calls=(tool("file_list", "t1"),)),
                         Turn(tool_calls=(tool("task_done", "t2", summary="ok"),))])
    with ScriptedServer(script, ollama_context_length=trained) as server:
        session = make_session(store, data_dir, workdir, client(), model="ollama_chat/llama3.1",
                               api_base=server.url.removesuffix("/v1"), context_window=configured)
        assert await session.run() == "done"
    chats = [body for body in server.requests if "messages" in body]
    assert [chat["options"]["num_ctx"] for chat in chats] == [expected, expected]
    assert [m.metrics["budget"] for m in events_of(session, AssistantMessage)] == [budget_for(expected, 4096)] * 2


def as_blocks(content) -> list:
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def cached_view(body: dict) -> list[tuple[str, str]]:
    """A Messages API request as Anthropic's cache sees it: tools, system and message blocks in
    order, each with whether it carries a cache marker."""
    blocks = [("tools", json.dumps(body["tools"], sort_keys=True), False)]
    blocks += [("system", b["text"], "cache_control" in b) for b in as_blocks(body["system"])]
    for message in body["messages"]:
        for block in as_blocks(message["content"]):
            plain = {k: v for k, v in block.items() if k != "cache_control"}
            blocks.append((message["role"], json.dumps(plain, sort_keys=True), "cache_control" in block))
    return blocks


@pytest.mark.parametrize("model, marked", [
    ("anthropic/claude-sonnet-4-5", True), ("anthropic/claude-3-5-haiku-latest", True),
    ("bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0", True), ("vertex_ai/claude-3-5-sonnet@20240620", True),
    ("openrouter/anthropic/claude-3.5-sonnet", True),
    ("openai/gpt-4o-mini", False), ("deepseek/deepseek-chat", False), ("ollama_chat/llama3.1", False),
    ("openai/claude-sonnet-4-5", False),  # Claude behind an OpenAI-compatible gateway: its format, its caching
])
def test_only_claude_in_anthropics_format_needs_cache_markers(model, marked):
    assert needs_cache_markers(model) is marked


async def test_claude_is_told_to_cache_the_prefix_and_the_history_before_the_tail(store, data_dir, workdir):
    """Anthropic caches a prompt only up to a block marked cache_control: unmarked, Tripane's
    byte-stable prefix would be billed in full on every turn."""
    (workdir / "notes.txt").write_text("alpha\n" * 50, encoding="utf-8")
    script = positional([
        Turn(text="Reading the notes.", tool_calls=(tool("file_read", "t1", path="notes.txt"),), prompt_tokens=3000,
             cache_write_tokens=2900),
        Turn(tool_calls=(tool("findings_add", "t2", title="Notes", body="Fifty alphas."),),
             prompt_tokens=3400, cached_tokens=2900, cache_write_tokens=400),
        Turn(tool_calls=(tool("task_done", "t3", summary="read"),), prompt_tokens=3500, cached_tokens=3300,
             cache_write_tokens=100),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="anthropic/claude-sonnet-4-5",
                               api_base=server.url)
        assert await session.run() == "done"

    views = [cached_view(body) for body in server.requests]
    marks = [[i for i, (_, _, marked) in enumerate(view) if marked] for view in views]
    for view, marked in zip(views, marks):
        # The system prompt (with the tools before it) and the last block before the tail, which
        # is the request's last block.
        assert marked[0] == 1 and marked[-1] == len(view) - 2
        assert json.loads(view[-1][1])["text"].startswith("[Tripane — turn")
    # Where one request wrote the cache, the next repeats every block up to it and marks it
    # again: a cache read, however many blocks the turn added.
    for before, after, marked_before, marked_after in zip(views, views[1:], marks, marks[1:]):
        end = marked_before[-1]
        assert [b[:2] for b in after[:end + 1]] == [b[:2] for b in before[:end + 1]]
        assert marked_after == [1, end, len(after) - 2]
    usage = [m.usage for m in events_of(session, AssistantMessage)]
    assert [(u.prompt_tokens, u.cached_tokens) for u in usage] == [(3000, 0), (3400, 2900), (3500, 3300)]
    # Priced as Anthropic bills: cache reads at a tenth of the input price, writes at 1.25 times.
    price = load_litellm().get_model_info("anthropic/claude-sonnet-4-5")
    second = usage[1]
    expected = (100 * price["input_cost_per_token"] + 2900 * price["cache_read_input_token_cost"]
                + 400 * price["cache_creation_input_token_cost"]
                + second.completion_tokens * price["output_cost_per_token"])
    assert second.cost_usd == pytest.approx(expected)


async def test_rate_limit_then_success_is_retried():
    attempts = []

    def script(request):
        attempts.append(1)
        return Failure(429, "Rate limit reached") if len(attempts) == 1 else Turn(text="fine")

    with ScriptedServer(script) as server:
        reply = await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                     api_base=server.url))
    assert reply.text == "fine" and len(attempts) == 2


async def test_a_rate_limited_call_waits_as_long_as_the_provider_asks():
    replies = iter([Failure(429, "Rate limit reached", retry_after="1"), Turn(text="fine")])
    retries = []
    with ScriptedServer(lambda request: next(replies)) as server:
        reply = await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                     api_base=server.url), None, retries.append)
    assert reply.text == "fine"
    [retry] = retries
    assert retry.error.kind == "rate_limit" and retry.error.retry_after_s == 1.0
    assert retry.delay_s == 1.0  # the backoff alone would have come back after about 0.01 s
    assert "Trying again in 1 s (attempt 2 of 3)." in retry.describe()


@pytest.mark.parametrize("model, failure", [
    ("openai/gpt-4o-mini", Failure(429, "You exceeded your current quota, please check your plan and billing "
                                        "details.", code="insufficient_quota")),
    ("anthropic/claude-sonnet-4-5", Failure(400, "Your credit balance is too low to access the Anthropic API. "
                                                 "Please go to Plans & Billing to upgrade or purchase credits.")),
    ("openrouter/openai/gpt-4o-mini", Failure(402, "Insufficient credits. Add more using "
                                                   "https://openrouter.ai/credits")),
    ("openai/deepseek-chat", Failure(402, "Insufficient Balance")),  # DeepSeek's API
])
async def test_an_account_out_of_credit_is_said_so_at_once_not_retried_as_a_rate_limit(model, failure):
    with ScriptedServer(positional([], default=failure)) as server:
        with pytest.raises(ModelError) as caught:
            await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=server.url))
    assert len(server.requests) == 1  # waiting does not bring credit back
    assert caught.value.kind == "billing" and not caught.value.retryable
    assert "no credit left" in str(caught.value) and "then send a message to go on" in str(caught.value)


ACCESS = " Check what the key's account or project may use, or choose another model (Session → Change model)."


# Each in its provider's own error shape, as litellm passes it on (Anthropic's as the repr of the
# body's bytes); the person reads the provider's words, not JSON.
@pytest.mark.parametrize("model, failure, kind, said", [
    ("anthropic/claude-sonnet-4-5", Failure(529, "Overloaded", code="overloaded_error"), "overloaded",
     "The provider is overloaded for now."),
    ("gemini/gemini-2.5-flash", Failure(503, "The model is overloaded. Please try again later.", code="UNAVAILABLE"),
     "overloaded", "The provider is overloaded for now (The model is overloaded. Please try again later)"),
    ("anthropic/claude-sonnet-4-5", Failure(403, "Your API key does not have permission to use the specified "
                                                 "resource.", code="permission_error"), "permission",
     "The provider refused access: Your API key does not have permission to use the specified resource." + ACCESS),
    ("openai/gpt-4o-mini", Failure(403, "Project `proj_abc` does not have access to model `gpt-5`",
                                   code="model_not_found"), "permission",
     "The provider refused access: Project `proj_abc` does not have access to model `gpt-5`." + ACCESS),
    ("gemini/gemini-2.5-flash", Failure(403, "Permission denied: Consumer 'api_key:x' has been suspended.",
                                        code="PERMISSION_DENIED"), "permission",
     "The provider refused access: Permission denied: Consumer 'api_key:x' has been suspended." + ACCESS),
    ("anthropic/claude-sonnet-4-5", Failure(400, "messages.1: tool_use ids must be unique",
                                            code="invalid_request_error"), "bad_request",
     "The provider rejected the request: messages.1: tool_use ids must be unique"),
    ("gemini/gemini-2.5-flash", Failure(400, "API key not valid. Please pass a valid API key.",
                                        code="INVALID_ARGUMENT"), "auth",
     "The server at {url} refused the API key (API key not valid. Please pass a valid API key): it takes its own "
     "(the one it was started with, as vLLM's --api-key, or a gateway's), typed for it in API key (Settings, or "
     "Session → Change model for a session; from the command line, --api-key-env names the variable holding it)."),
])
async def test_a_providers_refusal_is_said_in_its_own_words_and_retried_only_when_it_may_pass(model, failure, kind,
                                                                                             said):
    with ScriptedServer(positional([], default=failure)) as server:
        with pytest.raises(ModelError) as caught:
            await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=server.url))
    assert (caught.value.kind, str(caught.value)) == (kind, said.replace("{url}", server.url))
    # An overloaded provider may have room soon, and is waited for twice as many times (the client
    # tries 2 times again, so 4); a refusal is final.
    assert len(server.requests) == (5 if kind == "overloaded" else 1)


async def test_an_overloaded_provider_is_waited_out_longer_than_a_broken_one():
    retries = []
    def busy(request):  # four times overloaded, then room
        return Failure(529, "Overloaded", code="overloaded_error") if len(server.requests) <= 4 else Turn(
            text="room again")

    with ScriptedServer(busy) as server:
        reply = await client().complete(ModelRequest("anthropic/claude-sonnet-4-5", [{"role": "user", "content": "hi"}],
                                                     api_base=server.url), None, retries.append)
    assert reply.text == "room again" and len(server.requests) == 5
    assert [r.describe().split(". ")[-1] for r in retries][-1] == "Trying again now (attempt 5 of 5)."


def test_the_providers_words_are_taken_out_of_an_error_body_in_any_of_its_forms():
    body = '{"type": "error", "error": {"type": "invalid_request_error", "message": "It’s gone"}}'
    as_bytes = repr(body.encode())  # b'{"type": …, "message": "It\\xe2\\x80\\x99s gone"}}'
    assert provider_words(f"AnthropicError - {as_bytes}") == "It’s gone"
    assert provider_words(f"Gateway said {body}") == "Gateway said: It’s gone"
    assert provider_words('{"error": "quota spent"}') == "quota spent"
    assert provider_words("Incorrect API key provided") == "Incorrect API key provided"
    assert provider_words("bad {not json}") == "bad {not json}"  # left as it is
    assert provider_words('{"error": {"code": 500}}') == '{"error": {"code": 500}}'  # no words in it


async def test_a_free_tier_quota_that_passes_is_still_a_rate_limit():
    replies = iter([Failure(429, "You exceeded your current quota, please check your plan and billing details. "
                                 "Quota exceeded for metric: generate_content_free_tier_requests, limit: 10"),
                    Turn(text="fine")])
    with ScriptedServer(lambda request: next(replies)) as server:
        reply = await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                     api_base=server.url))
    assert reply.text == "fine" and len(server.requests) == 2


async def test_persistent_server_errors_become_a_plain_model_error():
    with ScriptedServer(lambda request: Failure(500, "upstream exploded")) as server:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                 api_base=server.url))
    assert failed.value.kind == "server" and len(server.requests) == 3  # 1 try + 2 retries


async def test_bad_key_is_not_retried_and_says_so():
    with ScriptedServer(lambda request: Failure(401, "Incorrect API key provided")) as server:
        with pytest.raises(ModelError, match="refused the API key") as failed:
            await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                 api_base=server.url))
    assert failed.value.kind == "auth" and len(server.requests) == 1


# The OpenAI SDK says "Connection error."; litellm's own HTTP client (DeepSeek, Groq, Mistral, xAI,
# hosted vLLM) says "Cannot connect to host", which litellm files as the provider's internal error.
@pytest.mark.parametrize("model, cause", [("openai/scripted", "Connection error"),
                                          ("deepseek/deepseek-chat", "Cannot connect to host 127.0.0.1:{port}")])
async def test_unreachable_server_is_a_connection_error_that_names_the_address(model, cause):
    with socket.socket() as probe:  # a port on this machine that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    retries = []
    with pytest.raises(ModelError) as failed:
        await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}],
                                             api_base=f"http://127.0.0.1:{port}/v1", timeout_s=5), None, retries.append)
    assert failed.value.kind == "connection" and failed.value.retryable
    said = str(failed.value)
    assert said.startswith(f"Could not reach the server at http://127.0.0.1:{port}/v1 ({cause.format(port=port)}")
    assert said.endswith("): is it running, and is the API base right?")
    assert "litellm" not in said and "Exception" not in said and "ssl:<" not in said  # not its classes, nor repr
    assert retries[0].describe().endswith("is the API base right? Trying again now (attempt 2 of 3).")


@pytest.mark.parametrize("model", ["openai/scripted", "deepseek/deepseek-chat"])
async def test_a_proxy_that_cannot_be_reached_is_named_with_its_variable_and_no_proxy_goes_around_it(
        model, monkeypatch):
    # A proxy variable left from the company's network: the server was running, and the person read
    # "is it running, and is the API base right?".
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}"
    for variable in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy",
                     "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HTTP_PROXY", dead)
    with ScriptedServer(lambda request: Turn("hello")) as server:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=server.url,
                                                 timeout_s=10))
        said = str(failed.value)
        assert failed.value.kind == "connection" and server.requests == []
        assert said.startswith(f"Could not reach the server at {server.url} through the proxy {dead} that "
                               "HTTP_PROXY names (")
        assert said.endswith("): is the proxy reachable from here? If it is not needed now, start Tripane without "
                             "HTTP_PROXY (or with the server's host in NO_PROXY).")
        # The advice, taken: Tripane started again with the server's host in NO_PROXY.
        done = completed_in_a_new_process(model, server.url, NO_PROXY="127.0.0.1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("hello")


def test_a_server_not_reached_through_this_computers_proxy_settings_says_how_to_go_around_them(monkeypatch):
    import urllib.request

    for variable in ("HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY", "https_proxy", "http_proxy", "all_proxy",
                     "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(urllib.request, "getproxies", lambda: {"http": "http://proxy.corp:8080"})  # (the registry's)
    litellm = load_litellm()
    refused = litellm.APIConnectionError("Connection error.", llm_provider="openai", model="served-model")
    said = str(classify(litellm, refused, 10, "http://127.0.0.1:11434/v1", "openai/served-model"))
    assert said.startswith("Could not reach the server at http://127.0.0.1:11434/v1 through the proxy "
                           "http://proxy.corp:8080 that this computer's proxy settings name (")
    assert said.endswith("): is the proxy reachable from here? For a server on this computer or your own network, "
                         "set HTTPS_PROXY and HTTP_PROXY to it in the environment Tripane starts from, and servers on "
                         "this computer (and those NO_PROXY names) are reached directly.")


BLOCK_PAGE = (b"<!DOCTYPE html><html><head><title>Access Denied</title></head><body><h1>Access denied by "
              b"corporate policy</h1><p>Category: AI tools</p></body></html>")


def answering(body: bytes, status: int = 200, content_type: str = "text/html; charset=utf-8",
              asked: list[bytes] | None = None) -> type[BaseHTTPRequestHandler]:
    """A server that answers every request with `body` and `status`, whatever was asked (each
    request's body goes to `asked`): a network filter's page, a proxy's, a server's own error."""
    class Answering(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_POST(self) -> None:
            request = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if asked is not None:
                asked.append(request)
            send_page(self, body, content_type, status=status)
    return Answering


def a_web_page(status: int, asked: list[bytes]) -> type[BaseHTTPRequestHandler]:
    """BLOCK_PAGE with `status`: a network filter's, a hotel's sign-in page, or a web page's address
    given as the API base."""
    return answering(BLOCK_PAGE, status, asked=asked)


@pytest.mark.parametrize("model", ["openai/scripted", "deepseek/deepseek-chat", "anthropic/claude-sonnet-4-5"])
@pytest.mark.parametrize("status", [200, 403])
async def test_a_web_page_answering_instead_of_the_api_is_said_so(model, status):
    # Answered 200, it streamed no chunk: an empty reply of the model's, it seemed. Answered 403,
    # its HTML was shown as it came, under "Check what the key's account or project may use".
    asked: list[bytes] = []
    with serving(a_web_page(status, asked)) as address:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=f"{address}/v1"))
    assert failed.value.kind == "not_an_api" and not failed.value.retryable and len(asked) == 1
    said = str(failed.value)
    page = (" (HTTP 403: Access Denied — Access denied by corporate policy — Category: AI tools)"
            if status == 403 else "")
    assert said == (f"The server at {address}/v1 answered with a web page, not the model's API{page}. A network's "
                    "sign-in page (a hotel's, an airport's) or filter (a company's) may stand in between, or the API "
                    "base is a web page's address rather than its API's (an OpenAI-compatible one ends in /v1).")


@pytest.mark.parametrize("model", ["openai/Qwen/Qwen3-8B", "hosted_vllm/Qwen/Qwen3-8B"])
async def test_an_api_base_without_the_apis_path_is_said_to_be_wrong_not_the_model(model):
    # vLLM at http://127.0.0.1:8000 given without /v1: its 404 for /chat/completions was read as
    # "The provider does not know this model: Error code: 404."
    with serving(answering(b'{"detail": "Not Found"}', 404, "application/json")) as address:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=address))
    assert failed.value.kind == "not_found"
    assert str(failed.value) == (f"The server at {address} has no such address for the model's API (Not Found): is the "
                                 f"API base right? An OpenAI-compatible server's ends in /v1: {address}/v1.")


async def test_an_api_base_without_its_scheme_is_refused_before_any_request():
    # From a settings file written by hand, or a session from before the fields refused it.
    retries = []
    with pytest.raises(ModelError) as failed:
        await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                             api_base="127.0.0.1:8000/v1"), None, retries.append)
    assert failed.value.kind == "bad_api_base" and not failed.value.retryable and retries == []
    assert str(failed.value) == ("The API base 127.0.0.1:8000/v1 lacks its http:// (or https://): "
                                 "http://127.0.0.1:8000/v1, for instance.")


WHOLE_REPLY = {"id": "r1", "object": "chat.completion", "created": 1, "model": "m",
               "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                   "role": "assistant", "content": "Reading both.",
                   "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "file_read",
                                                                                  "arguments": '{"path": "a.py"}'}},
                                  {"id": "c2", "type": "function", "function": {"name": "file_read",
                                                                                  "arguments": '{"path": "b.py"}'}}]}}],
               "usage": {"prompt_tokens": 50, "completion_tokens": 12, "total_tokens": 62}}


@pytest.mark.parametrize("model", ["openai/scripted", "hosted_vllm/scripted"])
async def test_a_server_that_answers_a_streamed_request_whole_is_asked_for_whole_replies(model):
    # A gateway that ignores "stream": true answers with one JSON reply: its words were lost, and
    # the run read the model's empty reply, again and again.
    asked: list[bytes] = []
    shown: list[str] = []
    whole = answering(json.dumps(WHOLE_REPLY).encode(), content_type="application/json", asked=asked)
    with serving(whole) as address:
        llm = client()
        for _ in range(2):
            reply = await llm.complete(ModelRequest(model, [{"role": "user", "content": "hi"}],
                                                    api_base=f"{address}/v1"),
                                       shown.append)
            assert reply.text == "Reading both." and reply.usage.prompt_tokens == 50
            assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
                ("c1", "file_read", '{"path": "a.py"}'), ("c2", "file_read", '{"path": "b.py"}')]
    assert [json.loads(body).get("stream", False) for body in asked] == [True, False, False]  # once more, then at once
    assert shown == ["Reading both.", "Reading both."]  # (the person sees its words, as streamed ones)


@pytest.mark.parametrize("message, said", [
    ("The model is overloaded. Please try again later.",
     "The provider is overloaded for now (The model is overloaded. Please try again later)"),
    ("CUDA out of memory. Tried to allocate 2.00 GiB",
     "The provider had an internal error: CUDA out of memory. Tried to allocate 2.00 GiB"),
])
async def test_an_error_the_server_sends_within_its_stream_is_its_own_not_a_connection_failure(message, said):
    # vLLM and gateways send an error as a stream's event; through the OpenAI SDK, litellm calls it
    # a connection error, and the person read "Could not reach the server … is it running?".
    event = b"data: " + json.dumps({"error": {"message": message, "code": 503}}).encode() + b"\n\n"
    with serving(answering(event, content_type="text/event-stream")) as address:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                 api_base=f"{address}/v1"))
    assert failed.value.retryable and str(failed.value) == said


NGINX_413 = (b"<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity "
             b"Too Large</h1></center><hr><center>nginx</center></body></html>")


async def test_a_proxys_413_page_says_the_request_is_too_large_for_it():
    with serving(answering(NGINX_413, 413)) as address:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                 api_base=f"{address}/v1"))
    assert failed.value.kind == "context_window"  # (an overflow: the run compacts, once, and goes on)
    assert str(failed.value) == (
        f"The request is larger than the server at {address}/v1 takes (HTTP 413: 413 Request Entity Too Large — "
        "nginx): a proxy before it may limit a request's size (nginx's client_max_body_size). Raise that limit, or "
        "set a smaller Context window for this model.")


@pytest.mark.parametrize("model, path", [("ollama_chat/llama3.1", ""), ("openai/llama3.1", "/v1")])
async def test_a_model_ollama_has_not_downloaded_says_how_to_pull_it(model, path):
    with serving(answering(b'{"error": "model \'llama3.1\' not found, try pulling it first"}', 404,
                           "application/json")) as address:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=address + path))
    assert failed.value.kind == "not_found" and not failed.value.retryable
    assert str(failed.value) == (f"The Ollama server at {address + path} does not have llama3.1 yet: download it "
                                 "there with `ollama pull llama3.1` (or in Ollama's app), then send a message to go "
                                 "on.")


async def test_a_whole_session_runs_through_a_gateway_that_never_streams(store, data_dir, workdir):
    script = positional([
        Turn(text="Writing it.", tool_calls=(tool("file_write", path="a.txt", content="one\n"),)),
        Turn(tool_calls=(tool("file_read", path="a.txt"),)),
        Turn(tool_calls=(tool("task_done", summary="written and read"),)),
    ])
    with ScriptedServer(script, answers_whole=True) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/gateway-model", api_base=server.url)
        assert await session.run() == "done"
    assert (workdir / "a.txt").read_text(encoding="utf-8") == "one\n"
    assert events_of(session, AssistantMessage)[0].text == "Writing it."
    streamed = [request.get("stream", False) for request in server.requests if request.get("tools")]
    assert streamed[:2] == [True, False] and not any(streamed[2:])  # (found out once, then asked whole)


async def test_a_gateways_error_page_is_the_providers_error_and_tried_again():
    asked: list[bytes] = []
    with serving(a_web_page(502, asked)) as address:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest("deepseek/deepseek-chat", [{"role": "user", "content": "hi"}],
                                                 api_base=f"{address}/v1"))
    assert failed.value.kind == "server" and failed.value.retryable and len(asked) == 3  # (1 try, 2 again)
    assert str(failed.value) == ("The provider had an internal error: Access Denied — Access denied by corporate "
                                 "policy — Category: AI tools")


TLS = (str(Path(__file__).resolve().parents[1] / "data" / "tls" / "cert.pem"),
       str(Path(__file__).resolve().parents[1] / "data" / "tls" / "key.pem"))


# The OpenAI SDK's httpx and litellm's own aiohttp client (DeepSeek, Groq, Mistral, …) both.
@pytest.mark.parametrize("model", ["openai/scripted", "deepseek/deepseek-chat"])
async def test_a_certificate_this_computer_does_not_trust_is_said_so_with_what_to_do(model, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    # A company's TLS inspection presents its own certificate: the server was reached, and the
    # person read "Could not reach the server … is it running, and is the API base right?".
    with ScriptedServer(lambda request: Turn("hello"), tls=TLS) as server:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=server.url))
    assert failed.value.kind == "certificate" and not failed.value.retryable
    assert server.requests == []  # (refused before a request was made)
    assert str(failed.value) == (
        f"The server at {server.url} was reached, but its certificate is not trusted on this computer (self-signed "
        "certificate). On a network that inspects encrypted traffic, as many companies' do, that network's "
        "certificate authority belongs among this computer's trusted certificates (its IT department puts it there; "
        "then try again), or set SSL_CERT_FILE to its file, then start Tripane again.")


@pytest.mark.parametrize("named, said", [
    ("missing.pem", "which is not a file"),
    ("other.pem", "which does not hold the authority that signed it"),
])
async def test_an_ssl_cert_file_already_set_is_named_with_what_is_wrong_with_it(named, said, tmp_path, monkeypatch):
    # It said "set SSL_CERT_FILE …" of a variable that was set, to a file missing or the wrong one.
    from core.llm import classify, load_litellm

    (tmp_path / "other.pem").write_text("", encoding="utf-8")  # (a file that holds no authority)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    with ScriptedServer(lambda request: Turn("hello"), tls=TLS) as server:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest("deepseek/deepseek-chat", [{"role": "user", "content": "hi"}],
                                                 api_base=server.url))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / named))  # (as it was when the request failed)
    told = classify(load_litellm(), failed.value.__cause__, None, server.url, "deepseek/deepseek-chat")
    assert told.kind == "certificate"
    assert str(told).endswith(f"SSL_CERT_FILE names {tmp_path / named}, {said}: set it to the file of the certificate "
                              "authority of the network you are on, then start Tripane again.")


def completed_in_a_new_process(model: str, api_base: str, **environment: str):
    """One request through Tripane's client in a process started with `environment` added (as
    Tripane started again is): its finished process, the reply's text on stdout."""
    import os
    import subprocess
    import sys

    code = ("import asyncio, sys\nfrom core.llm import LiteLLMClient, ModelRequest\n"
            "async def main():\n"
            "    reply = await LiteLLMClient(api_key=lambda model, base=None: 'k', retries=0).complete(\n"
            "        ModelRequest(sys.argv[1], [{'role': 'user', 'content': 'hi'}], api_base=sys.argv[2]))\n"
            "    print(reply.text)\n"
            "asyncio.run(main())\n")
    return subprocess.run([sys.executable, "-c", code, model, api_base], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parents[2], env={**os.environ, **environment})


def test_with_ssl_cert_file_set_as_said_the_server_is_trusted():
    """The advice, taken: Tripane started again with SSL_CERT_FILE naming the certificate."""
    with ScriptedServer(lambda request: Turn("hello over TLS"), tls=TLS) as server:
        done = completed_in_a_new_process("openai/scripted", server.url, SSL_CERT_FILE=TLS[0])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("hello over TLS")


@pytest.mark.parametrize("model, how", [
    ("vertex_ai/claude-sonnet-4-5", "gcloud auth application-default login"),
    ("vertex_ai/gemini-2.5-flash", "gcloud auth application-default login"),
    ("bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0", "aws configure"),
])
async def test_a_cloud_never_signed_in_to_is_said_so_with_how_and_not_waited_on(signed_out, model, how):
    """Bedrock and Vertex AI sign in with the cloud's own credentials. With none on the computer,
    litellm calls it an internal error, a lost connection or a refused key: the person is told to
    sign in, and how, at once. (The endpoint is one of one's own, on this computer: nothing is
    sent to it unsigned, and no key stands in for the sign-in.)"""
    with ScriptedServer(positional([Turn(text="ok")])) as server:
        with pytest.raises(ModelError) as caught:
            await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=server.url))
    assert caught.value.kind == "no_key" and not caught.value.retryable
    assert "sign-in was found" in str(caught.value) and how in str(caught.value)
    assert not server.requests


def test_a_library_a_provider_needs_missing_from_the_installation_is_said_so_not_retried():
    litellm = load_litellm()
    missing = litellm.InternalServerError("Google Cloud SDK not found. Install it with: pip install 'litellm[google]' "
                                          "or pip install google-cloud-aiplatform", llm_provider="vertex_ai",
                                          model="gemini-2.5-flash")
    error = classify(litellm, missing, model="vertex_ai/gemini-2.5-flash")
    assert error.kind == "setup" and not error.retryable
    assert "A library vertex_ai needs is missing" in str(error) and "google-cloud-aiplatform" in str(error)


@pytest.mark.parametrize("model, variable", [("anthropic/claude-3-5-haiku-latest", "ANTHROPIC_API_KEY"),
                                             ("openai/gpt-4o-mini", "OPENAI_API_KEY"),
                                             ("gemini/gemini-2.5-flash", "GEMINI_API_KEY")])
async def test_a_key_never_given_is_said_so_not_taken_for_a_broken_or_unreachable_provider(model, variable,
                                                                                           monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    litellm = load_litellm()
    # litellm and the SDKs check for a key before they send anything (an address on this machine
    # all the same); they call its absence an internal error (OpenAI), a lost connection (Gemini)
    # and a refused key (Anthropic).
    with pytest.raises(Exception) as raised:
        await litellm.acompletion(model=model, messages=[{"role": "user", "content": "hi"}],
                                  api_base="http://127.0.0.1:9", num_retries=0, timeout=5)
    error = classify(litellm, raised.value, model=model)
    assert error.kind == "no_key" and not error.retryable
    assert str(error) == (f"No API key for {model.split('/')[0]}: store one in Tripane (Settings, or Session → "
                          f"Change model for a session) or set {variable} in the environment Tripane starts from.")


async def test_a_server_of_ones_choosing_that_wants_a_key_is_told_to_get_its_own():
    # The server is sent a placeholder, never the environment's OpenAI key: the variable is no fix.
    with ScriptedServer(positional([], default=Failure(401, "Missing API key. Pass it as a Bearer token."))) as server:
        with pytest.raises(ModelError) as caught:
            await client().complete(ModelRequest("openai/gpt-4o-mini", [{"role": "user", "content": "hi"}],
                                                 api_base=server.url))
    assert caught.value.kind == "no_key" and len(server.requests) == 1
    assert str(caught.value) == (f"No API key for the server at {server.url}: store one in Tripane (Settings, or "
                                 "Session → Change model for a session); from the command line, --api-key-env names "
                                 "the variable holding it.")


async def test_a_refused_key_says_the_providers_words_without_litellms_class_names():
    with ScriptedServer(lambda request: Failure(401, "Incorrect API key provided")) as server:
        with pytest.raises(ModelError) as failed:
            await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                 api_base=server.url))
    assert str(failed.value) == (f"The server at {server.url} refused the API key (Incorrect API key provided): it "
                                 "takes its own (the one it was started with, as vLLM's --api-key, or a gateway's), "
                                 "typed for it in API key (Settings, or Session → Change model for a session; from the command line, "
                                 "--api-key-env names the variable holding it).")
    assert "litellm." not in str(failed.value)


def first_then(first: Turn, then: Turn):
    """A script whose first request gets `first` and every later one (the retries) `then`."""
    calls = []

    def script(request):
        calls.append(request)
        return first if len(calls) == 1 else then
    return script


def test_a_server_on_the_persons_own_hardware_may_stay_silent_longer_than_a_hosted_one():
    """A local model reading a long context is silent for minutes before its first word."""
    assert silence_allowed("openai/gpt-5.4-mini", None) == HOSTED_SILENCE_S
    assert silence_allowed("openai/coder", "https://gpu.example.com/v1") == HOSTED_SILENCE_S
    assert silence_allowed("openai/coder", "http://8.8.8.8:8000/v1") == HOSTED_SILENCE_S
    assert silence_allowed("openai/coder", "http://[2001:4860::8888]:8000/v1") == HOSTED_SILENCE_S
    for model, api_base in (("ollama/qwen3", None), ("ollama_chat/qwen3", None),
                            ("openai/coder", "http://127.0.0.1:8080/v1"), ("openai/coder", "http://localhost:1234/v1"),
                            # a GPU box on the person's own network
                            ("openai/coder", "http://192.168.1.20:8000/v1"), ("openai/coder", "http://10.0.0.5:11434"),
                            ("openai/coder", "http://gpu-box:8000/v1"), ("openai/coder", "http://gpu-box.local:8000/v1"),
                            ("openai/coder", "http://[fe80::1]:8000/v1")):
        assert silence_allowed(model, api_base) == LOCAL_SILENCE_S > HOSTED_SILENCE_S, api_base


async def test_a_local_server_reading_its_prompt_is_waited_for(monkeypatch):
    monkeypatch.setattr("core.llm.HOSTED_SILENCE_S", 0.5)
    monkeypatch.setattr("core.llm.LOCAL_SILENCE_S", 5.0)
    with ScriptedServer(lambda request: Turn(text="read it all", delay_s=1.5)) as server:
        reply = await LiteLLMClient(retries=0).complete(
            ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}], api_base=server.url))
    assert reply.text == "read it all" and len(server.requests) == 1


async def test_a_silent_provider_is_a_timeout_that_says_how_long_it_waited():
    with ScriptedServer(lambda request: Turn(text="late", delay_s=3)) as server:
        with pytest.raises(ModelError) as failed:
            await LiteLLMClient(retries=0, timeout_s=0.5).complete(
                ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}], api_base=server.url))
    assert failed.value.kind == "timeout" and failed.value.retryable
    assert str(failed.value) == "The provider did not answer within 0.5 s."
    assert len(server.requests) == 1  # no retry hidden below ours


@pytest.mark.parametrize("stall_s, kind, says", [
    (3, "timeout", "The provider stopped in the middle of its reply: nothing more came for 0.5 s."),
    (0, "connection", "The provider's reply broke off in the middle: the connection closed before the reply was "
                      "complete."),
])
async def test_a_reply_that_breaks_off_midway_is_tried_again_and_the_person_is_told(stall_s, kind, says):
    text = "A reply long enough to arrive in several pieces."
    script = first_then(Turn(text=text, break_after=3, stall_s=stall_s), Turn(text=text))
    streamed, retries = [], []
    with ScriptedServer(script) as server:
        reply = await LiteLLMClient(retries=2, backoff_s=0.01, timeout_s=0.5).complete(
            ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}], api_base=server.url),
            streamed.append, retries.append)
    assert reply.text == text and len(server.requests) == 2
    [retry] = retries
    assert retry.error.kind == kind and str(retry.error).startswith(says)
    assert "MidStreamFallbackError" not in str(retry.error)  # litellm's wrapper is not the person's business
    assert (retry.attempt, retry.attempts) == (2, 3)
    assert retry.describe().startswith(says) and retry.describe().endswith("(attempt 2 of 3).")
    # The first two pieces came before the break; the whole reply came again after it.
    assert "".join(streamed) == text[:16] + text


async def test_a_tool_calls_arguments_are_told_as_they_stream():
    """A slow model writing a long file_write takes minutes over its arguments: they are told in
    pieces as they come, with the call's name, so a view can say so."""
    content = "line of the file\n" * 200
    script = positional([Turn(tool_calls=(tool("file_write", path="notes.md", content=content),))])
    pieces: list[tuple[str, str]] = []
    with ScriptedServer(script) as server:
        reply = await LiteLLMClient(retries=0).complete(
            ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}], api_base=server.url),
            on_call=lambda name, piece: pieces.append((name, piece)))
    [call] = reply.tool_calls
    assert len(pieces) >= 2 and {name for name, _ in pieces} == {"file_write"}
    assert "".join(piece for _, piece in pieces) == call.arguments


async def test_a_session_rides_out_a_broken_reply_and_records_it_once(store, data_dir, workdir):
    done = Turn(text="Checked.", tool_calls=(tool("task_done", summary="ok"),))
    script = first_then(Turn(text="Checked.", tool_calls=done.tool_calls, break_after=2, stall_s=3), done)
    notices = []
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, LiteLLMClient(retries=2, backoff_s=0.01, timeout_s=0.5),
                               model="openai/scripted", api_base=server.url)
        session.subscribe(notices.append)
        assert await session.run() == "done"
    [retrying] = [n for n in notices if isinstance(n, StatusChanged) and n.activity == "retrying"]
    assert retrying.detail.startswith("The provider stopped in the middle of its reply")
    assert "attempt 2 of 3" in retrying.detail
    # The view was told to start the reply afresh: after the notice, the reply streams whole.
    after = notices[notices.index(retrying) + 1:]
    assert "".join(n.text for n in after if isinstance(n, TextDelta)).startswith("Checked.")
    assert [m.text for m in events_of(session, AssistantMessage)] == ["Checked."]
    assert not events_of(session, ErrorRecorded)  # a failure that passed is not the agent's error


async def test_malformed_tool_json_from_the_wire_is_survived(store, data_dir, workdir):
    script = positional([
        Turn(tool_calls=(tool("file_list", raw='{"path": "."'),)),
        Turn(tool_calls=(tool("task_done", summary="ok"),)),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/scripted", api_base=server.url)
        assert await session.run() == "done"
    result = events_of(session, ToolResult)[0]
    assert not result.ok and "not valid JSON" in result.content
    assert events_of(session, ErrorRecorded)[0].attempt == 1
    # The model saw its own malformed call and the error in the next request.
    second = server.requests[1]["messages"]
    assert any(m.get("role") == "tool" and "not valid JSON" in m["content"] for m in second)


async def test_remote_providers_are_refused_under_tests():
    with pytest.raises(ModelError, match="only models on 127.0.0.1"):
        await client().complete(ModelRequest("openai/gpt-4o", [{"role": "user", "content": "hi"}]))


async def test_a_model_name_without_a_provider_says_how_to_write_it(models_of_2026_11_25):
    with pytest.raises(ModelError) as failed:
        await client().complete(ModelRequest("gpt-nonexistent-9", [{"role": "user", "content": "hi"}],
                                             api_base="http://127.0.0.1:9/v1"))
    assert failed.value.kind == "unknown_model" and not failed.value.retryable
    assert "Write it as provider/model" in str(failed.value) and "Did you mean" not in str(failed.value)
    with pytest.raises(ModelError) as failed:  # mistyped, and without its provider
        await client().complete(ModelRequest("gpt-4o-mni", [{"role": "user", "content": "hi"}],
                                             api_base="http://127.0.0.1:9/v1"))
    assert str(failed.value).startswith("Tripane cannot tell which provider serves gpt-4o-mni: write it as "
                                        "provider/model. Did you mean openai/gpt-4o-mini or ")


def test_a_model_the_provider_does_not_know_is_answered_with_the_names_it_may_have_meant(models_of_2026_11_25):
    litellm = load_litellm()
    gone = litellm.NotFoundError("The model `gpt-4o-mni` does not exist", model="gpt-4o-mni", llm_provider="openai")
    said = str(classify(litellm, gone, model="openai/gpt-4o-mni"))
    assert said.startswith("The provider does not know this model: ") and "Did you mean openai/gpt-4o-mini" in said
    # a server of one's own serves what it has: litellm's map says nothing of it
    assert "Did you mean" not in str(classify(litellm, gone, api_base="http://127.0.0.1:8080/v1",
                                              model="openai/gpt-4o-mni"))


def test_a_model_gone_after_its_deprecation_day_is_said_to_be_retired(monkeypatch):
    import core.model_names

    litellm = load_litellm()
    day = litellm.model_cost["claude-sonnet-4-5"]["deprecation_date"]
    gone = litellm.NotFoundError("model: claude-sonnet-4-5", model="claude-sonnet-4-5", llm_provider="anthropic")
    monkeypatch.setattr(core.model_names, "today", lambda: "2099-01-01")
    said = str(classify(litellm, gone, model="anthropic/claude-sonnet-4-5"))
    assert said.startswith("The provider no longer serves this model: ")
    assert f"Its provider deprecated it on {day}" in said and "Session → Change model" in said
    monkeypatch.setattr(core.model_names, "today", lambda: "2000-01-01")  # not deprecated yet: another cause
    assert str(classify(litellm, gone, model="anthropic/claude-sonnet-4-5")).startswith(
        "The provider does not know this model: ")


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_a_reasoning_models_thinking_is_shown_apart_and_never_sent_back(store, data_dir, workdir, field):
    thinking = "The task is small: write the file, then finish. " * 20
    script = positional([
        # in a field of its own (DeepSeek's API, vLLM's reasoning parser, OpenRouter's name for it) ...
        Turn(reasoning=thinking, reasoning_field=field, text="Writing it.",
             tool_calls=(tool("file_write", path="out.txt", content="hi\n"),)),
        # ... or inside the text, as llama.cpp and many local setups of Qwen3 send it
        Turn(text=f"<think>\n{thinking}\n</think>\n\nAll written.", tool_calls=(tool("task_done", summary="written"),)),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/scripted", api_base=server.url)
        live = {False: [], True: []}
        session.subscribe(lambda notice: live[notice.reasoning].append(notice.text)
                          if isinstance(notice, TextDelta) else None)
        assert await session.run() == "done"

    replies = events_of(session, AssistantMessage)
    assert [m.text for m in replies] == ["Writing it.", "All written."]
    assert [m.reasoning.strip() for m in replies] == [thinking.strip()] * 2  # kept, for the person
    assert "".join(live[False]) == "Writing it.All written."  # the answer streams as the answer
    assert "".join(live[True]).count("The task is small") == 40  # the thinking streams apart
    sent_back = json.dumps(server.requests[-1]["messages"])
    assert "Writing it." in sent_back and "The task is small" not in sent_back
    first_reply = next(r for r in session.records if isinstance(r.event, AssistantMessage))
    assert "agent: (thought 180 words) Writing it. → file_write" in render(first_reply)


async def test_a_reply_that_is_only_thinking_is_an_empty_reply_the_agent_is_told_of(store, data_dir, workdir):
    script = positional([Turn(text="<think>I should check the tests, then"),  # cut off at the output limit
                         Turn(tool_calls=(tool("task_done", summary="done"),))])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openai/scripted", api_base=server.url)
        assert await session.run() == "done"
    error = events_of(session, ErrorRecorded)[0]
    assert "held only its thinking" in error.message
    assert events_of(session, AssistantMessage)[0].reasoning == "I should check the tests, then"


async def test_deepseeks_thinking_of_a_turn_that_called_tools_is_sent_back_as_it_requires(store, data_dir, workdir):
    thinking = "Write the file first; the test reads it."
    script = positional([
        Turn(reasoning=thinking, tool_calls=(tool("file_write", path="out.txt", content="hi\n"),)),
        Turn(reasoning="Done now.", text="Written.", tool_calls=(tool("task_done", summary="written"),)),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="deepseek/deepseek-reasoner",
                               api_base=server.url)
        assert await session.run() == "done"
    sent = [m for m in server.requests[-1]["messages"] if m["role"] == "assistant"]
    assert sent[-1]["reasoning_content"] == thinking  # DeepSeek answers 400 without it

    # The session goes on with another provider's model: it is sent no thinking at all.
    request = ModelRequest("openai/scripted", session.journal.history.messages)
    with ScriptedServer(positional([Turn(text="fine")])) as other:
        await client().complete(dataclass_replace(request, api_base=other.url))
    assert "reasoning_content" not in json.dumps(other.requests[0]["messages"])


HALF_A_CALL = Turn(tool_calls=(tool("file_write", raw='{"path": "big.py", "content": "def main():\\n    print('),),
                   finish_reason="length")


@pytest.mark.parametrize("model", ["openai/scripted", "anthropic/claude-sonnet-4-5"])
@pytest.mark.parametrize("stopped, kind, told", [
    (HALF_A_CALL, "cut_off_arguments", "write a long file in parts"),  # the output limit, mid-arguments
    (Turn(text="Here is how the exploit", finish_reason="content_filter"), "filtered",
     "content filter stopped your reply"),  # OpenAI's filter, Claude's refusal
])
async def test_a_reply_the_provider_stopped_short_reaches_the_agent_as_such(store, data_dir, workdir, model,
                                                                           stopped, kind, told):
    script = positional([stopped, Turn(tool_calls=(tool("task_done", summary="went on"),))])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model=model, api_base=server.url)
        assert await session.run() == "done"
    error = events_of(session, ErrorRecorded)[0]
    assert error.signature.split(":")[1] == kind and told in error.message
    assert not (workdir / "big.py").exists() and events_of(session, SessionEnded)[-1].summary == "went on"


@pytest.mark.parametrize("model", ["openai/scripted", "anthropic/claude-sonnet-4-5"])
async def test_calls_from_a_server_that_repeats_or_omits_ids_each_get_their_own_result(store, data_dir, workdir,
                                                                                   model):
    (workdir / "a.txt").write_text("alpha\n")
    (workdir / "b.txt").write_text("beta\n")
    script = positional([  # ids counted from 0 in each reply, as some servers do, then none at all
        Turn(tool_calls=(tool("file_read", "call_0", path="a.txt"),)),
        Turn(tool_calls=(tool("file_read", "call_0", path="b.txt"),)),
        Turn(tool_calls=(("", "file_read", '{"path": "a.txt"}'), ("", "file_read", '{"path": "b.txt"}'))),
        Turn(tool_calls=(tool("task_done", "call_0", summary="read"),)),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model=model, api_base=server.url)
        assert await session.run() == "done"
    calls = [c for m in events_of(session, AssistantMessage) for c in m.tool_calls]
    assert len({c.id for c in calls}) == len(calls) == 5 and all(calls)
    results = {r.call_id: r.content for r in events_of(session, ToolResult)}
    assert ["alpha" in results[calls[0].id], "beta" in results[calls[1].id],
            "alpha" in results[calls[2].id], "beta" in results[calls[3].id]] == [True] * 4
    sent = server.requests[-1]["messages"]
    if model.startswith("openai"):  # each result follows its own call in what the provider is sent
        ids = [c["id"] for m in sent if m["role"] == "assistant" for c in m.get("tool_calls") or ()]
        assert len(set(ids)) == len(ids) == 4


def every_kind_of_turn(workdir) -> Script:
    """A command whose output is offloaded (approved first), a malformed call, an empty reply,
    parallel calls (one failing), a question to the person, then done."""
    (workdir / "a.txt").write_text("alpha\n")
    return positional([
        Turn(text="Counting first.", tool_calls=(tool("shell_run", "s1", command="seq 1 30000"),)),
        Turn(tool_calls=(("m1", "file_write", '{"path": "b.txt", "content": "unfinished'),)),
        Turn(),  # an empty reply
        Turn(tool_calls=(tool("file_read", "p1", path="a.txt"), tool("file_read", "p2", path="missing.txt"))),
        Turn(tool_calls=(tool("human_ask", "q1", question="Which format?", options=["md", "txt"]),)),
        Turn(text="Done.", tool_calls=(tool("task_done", "d1", summary="counted"),)),
    ])


async def live_through_every_kind_of_turn(session: Session) -> None:
    """The person's part in it: a message and a plan edit while the command waits for approval,
    the approval, the answer."""
    session.start()
    approval = await wait_for_question(session, timeout=30)
    await session.send("Keep the numbers in order.")
    person_edits_plan(session, lambda text: text + "\n- Pinned by the person: numbers stay in order.\n")
    await session.approve(approval.qid, approved=True)
    question = await wait_for_question(session, timeout=30)
    assert question.qid != approval.qid
    await session.answer(question.qid, "md")
    assert await session.wait() == "done"


async def test_a_claude_session_with_every_kind_of_turn_stays_one_anthropic_accepts(store, data_dir, workdir):
    """Approvals, the person's message and plan edit, a command's output offloaded, a malformed
    call, an empty reply, parallel calls (one failing), a question to the person: every request
    goes to a server that refuses what Anthropic refuses."""
    with ScriptedServer(every_kind_of_turn(workdir)) as server:
        session = make_session(store, data_dir, workdir, client(), model="anthropic/claude-sonnet-4-5",
                               api_base=server.url, approval="ask")
        await live_through_every_kind_of_turn(session)
    refused = [e for e in events_of(session, ErrorRecorded) if "bad_request" in e.signature or "rejected" in e.message]
    assert not refused and len(server.requests) == 6
    last = json.dumps(server.requests[-1]["messages"])
    assert "Keep the numbers in order" in last and "numbers stay in order" in last and "md" in last
    assert events_of(session, ToolResult)[0].ok and "offload" in last  # the long output went to a file



@pytest.mark.parametrize("model, refusal", [
    ("ollama_chat/gemma3:4b", "registry.ollama.ai/library/gemma3:4b does not support tools"),
    ("openai/local", "tools param requires --jinja flag"),  # llama.cpp
    ("openai/local", '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'),
])
async def test_a_model_its_server_runs_without_tools_fails_the_connection_test_saying_how_to_fix_it(model, refusal):
    # By module: pytest would collect a test_connection imported here.
    from core import providers

    with ScriptedServer(positional([], default=Failure(400, refusal))) as server:
        base = server.url.removesuffix("/v1") if model.startswith("ollama") else server.url
        with pytest.raises(ModelError) as caught:
            await providers.test_connection(client(), model, base)
    assert caught.value.kind == "no_tools" and not caught.value.retryable
    assert "cannot call tools" in str(caught.value) and "--jinja" in str(caught.value) and refusal in str(caught.value)
    assert [t["function"]["name"] for t in server.requests[0]["tools"]] == ["task_done"]


async def test_a_reasoning_model_out_of_test_tokens_while_thinking_passes_the_connection_test():
    from core import providers

    thinking = Turn(reasoning="The user wants the single word ready. I should", finish_reason="length")
    with ScriptedServer(positional([], default=thinking)) as server:
        said = await providers.test_connection(client(), "openai/local-reasoner", server.url)
    assert said == "(it was still thinking when the test's 8-token limit stopped it: the connection works)"
    assert server.requests[0]["max_tokens"] == 8


@pytest.mark.parametrize("model", ["gemini/gemini-2.5-flash", "gemini/gemini-3-pro-preview"])
async def test_a_gemini_session_with_every_kind_of_turn_stays_one_gemini_accepts(store, data_dir, workdir, model):
    """The Claude test's turns, through litellm's conversion to Gemini's generateContent, against
    a server that refuses what Gemini refuses; Gemini 3 gets back the thought signature that came
    with each call (without it: a 400, or a placeholder that Google says degrades the model)."""
    with ScriptedServer(every_kind_of_turn(workdir)) as server:
        # Not diagnosed when it comes again: the server's replies are in order, for the agent's turns.
        session = make_session(store, data_dir, workdir, client(), model=model, api_base=server.url,
                               approval="ask", diagnose_errors=False)
        await live_through_every_kind_of_turn(session)
    errors = events_of(session, ErrorRecorded)
    refused = [e for e in errors if e.signature.startswith("model:") and "empty_reply" not in e.signature]
    assert not refused and len(server.requests) == 6
    # Gemini sends nothing for a call it cannot parse (MALFORMED_FUNCTION_CALL): the agent is told
    # it may have been that, and to make a long call in parts; then the scripted empty reply.
    empty = [e for e in errors if "empty_reply" in e.signature]
    assert len(empty) == 2 and "smaller parts" in empty[0].message
    last = json.dumps(server.requests[-1]["contents"])
    assert "Keep the numbers in order" in last and "numbers stay in order" in last and "md" in last
    assert events_of(session, ToolResult)[0].ok and "offload" in last  # the long output went to a file
    sent_back = [part.get("thoughtSignature") for content in server.requests[-1]["contents"]
                 for part in content["parts"] if "function_call" in part or "functionCall" in part]
    if model.startswith("gemini/gemini-3"):
        # each reply's first call with its own signature (the second of the parallel pair has none);
        # four replies called tools, the last (task_done) after the last request
        assert [s for s in sent_back if s] == server.signatures[:-1] and len(server.signatures) == 4
    else:
        assert not any(sent_back) and not server.signatures


async def test_claude_asked_to_think_is_sent_its_signed_thinking_back_and_shown_it(store, data_dir, workdir):
    """Claude with a reasoning effort: its thinking is asked for (a budget), shown apart from its
    answer, kept with its signature, and sent back as Claude requires (the server refuses a reply
    whose calls are answered without it, and any thinking changed on the way)."""
    script = positional([
        Turn(reasoning="The file comes first.", tool_calls=(tool("file_write", path="out.txt", content="hi\n"),)),
        Turn(reasoning=f"{REDACTED}Now check it.", tool_calls=(tool("file_read", path="out.txt"),)),
        Turn(reasoning="It is right.", text="Done.", tool_calls=(tool("task_done", summary="written"),)),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="anthropic/claude-sonnet-4-5",
                               api_base=server.url, reasoning_effort="high")
        assert await session.run() == "done"
    assert not events_of(session, ErrorRecorded)
    assert [r["thinking"]["budget_tokens"] for r in server.requests] == [4096] * 3
    assert all(INTERLEAVED_THINKING in betas for betas in server.betas)  # thinks after each result too
    # its whole output, as without an effort: not the budget + 4,096 (litellm's), which cut off a
    # file written in one call at 4,096 tokens
    whole = load_litellm().get_model_info("anthropic/claude-sonnet-4-5")["max_output_tokens"]
    assert whole > 4096 + 4096 and [r["max_tokens"] for r in server.requests] == [whole] * 3
    replies = events_of(session, AssistantMessage)
    assert [m.metrics["effort_sent"] for m in replies] == ["high"] * 3
    # (a redacted block, encrypted by Claude's safety systems, has no text to show)
    assert [m.reasoning for m in replies] == ["The file comes first.", "", "It is right."]
    assert replies[0].thinking_blocks[0]["signature"].startswith("sig-")
    assert "(thought, hidden by the provider)" in render(next(r for r in session.records if r.event is replies[1]))
    last = server.requests[-1]["messages"]
    sent = [m["content"][0] for m in last if m["role"] == "assistant"]
    assert [(b["type"], b.get("thinking")) for b in sent] == [("thinking", "The file comes first."),
                                                               ("redacted_thinking", None)]

    # Reopened from its log, the session sends the same thinking (a crash loses none of it).
    reopened = Session.open(store, data_dir, session.id, client())
    assert reopened.journal.history.messages == session.journal.history.messages
    assert reopened.state.reasoning_effort == "high"

    # The session goes on with another provider's model: it is sent none of Claude's thinking.
    with ScriptedServer(positional([Turn(text="fine")])) as other:
        await client().complete(ModelRequest("openai/scripted", session.journal.history.messages, api_base=other.url))
    assert "thinking_blocks" not in json.dumps(other.requests[0]["messages"])
    assert "The file comes first" not in json.dumps(other.requests[0]["messages"])


async def test_claude_on_azure_thinks_between_calls_and_is_sent_its_thinking_back(store, data_dir, workdir):
    """Claude in Microsoft's cloud (azure_ai/, Anthropic's format): its thinking goes back as on
    Anthropic's own API, and it is asked to think after each call's result too."""
    script = positional([
        Turn(reasoning="Write it first.", tool_calls=(tool("file_write", path="a.txt", content="a"),)),
        Turn(reasoning="Check it.", tool_calls=(tool("file_read", path="a.txt"),)),
        Turn(reasoning="Fine.", tool_calls=(tool("task_done", summary="written"),)),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="azure_ai/claude-sonnet-4-5",
                               api_base=server.url, reasoning_effort="low")
        assert await session.run() == "done"
    assert not events_of(session, ErrorRecorded)
    assert [m.reasoning for m in events_of(session, AssistantMessage)] == ["Write it first.", "Check it.", "Fine."]
    assert "Check it." in json.dumps(server.requests[-1]["messages"])
    assert all(INTERLEAVED_THINKING in betas for betas in server.betas)


@pytest.mark.parametrize("model, effort, thinking", [
    ("anthropic/claude-sonnet-4-5", "medium", {"type": "enabled", "budget_tokens": 2048}),
    # a session changed to a Claude that thinks unasked, in the middle of the agent's work
    ("anthropic/claude-sonnet-5", "", {"type": "adaptive", "display": "summarized"}),
])
async def test_claude_asked_to_think_mid_work_thinks_at_once_and_never_while_a_tool_is_forced(model, effort,
                                                                                              thinking):
    """Thinking switched on in the middle of the agent's work: the reply whose calls the request
    answers has no thinking, which Claude refuses with thinking on. That one request goes with
    those calls written out as text, and thinks; the history keeps the calls. A forced tool (the
    flush turn) refuses thinking too: the tool is then asked for, not forced."""
    answered = [{"role": "user", "content": "Write it."},
                {"role": "assistant", "content": "Writing.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "file_write", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "written"}]
    tools = [{"type": "function", "function": {"name": "file_write", "parameters": {"type": "object"}}}]
    request = ModelRequest(model, answered, tools=tools, reasoning_effort=effort)
    with ScriptedServer(positional([Turn(text="ok")] * 2)) as server:
        await client().complete(dataclass_replace(request, api_base=server.url))
        await client().complete(dataclass_replace(request, messages=answered[:1], tool_choice="required",
                                                  api_base=server.url))
    assert [r.get("thinking") for r in server.requests] == [thinking] * 2
    sent = json.dumps(server.requests[0]["messages"])
    assert "tool_use" not in sent and "[I called file_write with {}]" in sent and "[Result of file_write]" in sent
    assert answered[1]["tool_calls"]  # the history as it was
    assert server.requests[1]["tool_choice"] == {"type": "auto"}


@pytest.mark.parametrize("model, effort, interleaves", [
    ("anthropic/claude-sonnet-4-5", "high", True), ("anthropic/claude-opus-4-5", "low", True),
    ("anthropic/claude-sonnet-4-5", "", False),  # not asked to think: nothing to interleave
    ("anthropic/claude-sonnet-5", "high", False),  # adaptive: thinks between calls unasked
    ("anthropic/claude-3-7-sonnet-latest", "low", False),  # Claude 3.7 has no interleaved thinking
])
async def test_claude_4_asked_for_a_budget_is_asked_to_think_between_calls_and_litellm_fetches_nothing(
        monkeypatch, model, effort, interleaves):
    """Claude 4 asked for a thinking budget thinks once per message of the person's, not after each
    call's result, unless asked to interleave (a beta header): an agent's run is one message and
    dozens of calls. litellm checks a beta header against a list it fetches from GitHub unless told
    to use its own copy: nothing but the model's server is looked up."""
    import litellm.anthropic_beta_headers_manager as betas

    monkeypatch.setattr(betas, "_BETA_HEADERS_CONFIG", None)  # as on a first request
    looked_up = []
    real_getaddrinfo = socket.getaddrinfo
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *a, **k: looked_up.append(host) or real_getaddrinfo(host, *a, **k))
    with ScriptedServer(positional([Turn(text="ok")])) as server:
        await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=server.url,
                                             reasoning_effort=effort))
    assert (INTERLEAVED_THINKING in server.betas[0]) is interleaves
    assert set(looked_up) <= {"127.0.0.1"}


@pytest.mark.parametrize("model, sent", [("openai/gpt-5", "high"), ("openai/o3-mini", "high"),
                                         ("openai/gpt-4o-mini", None),  # no reasoning: nothing to ask
                                         ("openai/my-own-model", "high")])  # unknown: as an OpenAI model
async def test_a_reasoning_effort_goes_to_the_models_that_take_one(model, sent):
    with ScriptedServer(positional([Turn(text="ok")])) as server:
        await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=server.url,
                                             reasoning_effort="high"))
    assert server.requests[0].get("reasoning_effort") == sent


@pytest.mark.parametrize("model, asked", [
    ("gemini/gemini-2.5-flash", lambda body: body["generationConfig"]["thinkingConfig"]["thinkingBudget"] == 1024),
    ("gemini/gemini-3-pro-preview", lambda body: body["generationConfig"]["thinkingConfig"]["thinkingLevel"] == "low"),
    ("ollama_chat/qwen3", lambda body: body["think"] is True),
])
async def test_a_reasoning_effort_reaches_each_provider_in_its_own_terms(model, asked):
    with ScriptedServer(positional([Turn(text="ok")])) as server:
        reply = await client().complete(ModelRequest(model, [{"role": "user", "content": "hi"}], api_base=server.url,
                                                     reasoning_effort="low"))
    assert reply.text == "ok" and asked(server.requests[0])


async def test_a_model_its_server_cannot_make_think_goes_on_without_being_asked_again(store, data_dir, workdir):
    """The person's effort is for any model that can think: an Ollama model without the capability
    (Ollama answers 400 "does not support thinking") works on, asked once."""
    script = positional([Turn(tool_calls=(tool("file_write", path="a.txt", content="a"),)),
                         Turn(tool_calls=(tool("task_done", summary="written"),))])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="ollama_chat/llama3.1:8b",
                               api_base=server.url.removesuffix("/v1"), reasoning_effort="high")
        assert await session.run() == "done"
    assert not events_of(session, ErrorRecorded)
    chats = [body for body in server.requests if "messages" in body]
    assert [body.get("think") for body in chats] == [True, None, None]
    assert [m.metrics["effort_sent"] for m in events_of(session, AssistantMessage)] == ["", ""]  # not taken


def test_a_refused_reasoning_effort_is_told_apart_from_other_refusals():
    litellm = load_litellm()
    refusal = litellm.BadRequestError("OpenAIException - Unsupported parameter: 'reasoning_effort' is not "
                                      "supported with this model.", model="gpt-4.1", llm_provider="openai")
    assert classify(litellm, refusal).kind == "no_reasoning"
    other = litellm.BadRequestError("Unsupported parameter: 'temperature'", model="o3", llm_provider="openai")
    assert classify(litellm, other).kind == "bad_request"


async def test_changing_the_reasoning_effort_is_recorded_and_kept_with_the_model(store, data_dir, workdir):
    session = make_session(store, data_dir, workdir, client(), model="anthropic/claude-sonnet-4-5")
    changed = await session.change_model("anthropic/claude-sonnet-4-5", reasoning_effort="low")
    assert changed is not None and session.state.reasoning_effort == "low"
    assert await session.change_model("anthropic/claude-sonnet-4-5") is None  # nothing changes: no event
    await session.change_model("anthropic/claude-opus-4-1")  # another model: the effort stays
    assert session.state.reasoning_effort == "low"
    with pytest.raises(ValueError, match="low, medium or high"):
        await session.change_model("anthropic/claude-opus-4-1", reasoning_effort="extreme")
    with pytest.raises(ValueError, match="low, medium or high"):
        make_session(store, data_dir, workdir, client(), reasoning_effort="max")


async def test_claudes_thinking_goes_back_only_to_the_claude_model_that_wrote_it(store, data_dir, workdir):
    """A thinking block's signature is its model's own: after a change from one Claude model to
    another, the other is sent none of the first one's thinking (it would refuse the request)."""
    script = positional([
        Turn(reasoning="Write it first.", tool_calls=(tool("file_write", path="a.txt", content="a"),)),
        Turn(reasoning="Then finish.", tool_calls=(tool("task_done", summary="written"),)),
        Turn(reasoning="Check it.", tool_calls=(tool("file_read", path="a.txt"),)),
        Turn(reasoning="Fine.", text="Checked.", tool_calls=(tool("task_done", summary="checked"),)),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="anthropic/claude-sonnet-4-5",
                               api_base=server.url, reasoning_effort="low")
        assert await session.run() == "done"
        await session.change_model("anthropic/claude-opus-4-1", server.url)
        await session.send("Check it, please.")
        assert await session.wait() == "done"
    assert not events_of(session, ErrorRecorded)
    assert [body["model"] for body in server.requests] == ["claude-sonnet-4-5"] * 2 + ["claude-opus-4-1"] * 2
    assert all("thinking" in body for body in server.requests)  # opus thinks from its first request
    to_opus = json.dumps(server.requests[2]["messages"])
    assert "Write it first" not in to_opus and "Then finish" not in to_opus
    assert "Check it." in json.dumps(server.requests[3]["messages"])  # its own, sent back
    assert "thinking_model" not in json.dumps(server.requests)  # Tripane's note of the writer stays home


async def test_openrouter_reasoning_details_go_back_with_their_reply_and_only_to_their_model(store, data_dir, workdir):
    """OpenRouter asks for each reply's reasoning_details back with it (Gemini 3 there refuses a
    request whose calls come without their encrypted thinking); they are streamed in pieces, and
    mean nothing to another model."""
    (workdir / "a.txt").write_text("alpha\n", encoding="utf-8")
    encrypted = {"type": "reasoning.encrypted", "data": "c2lnbmVkLXRoaW5raW5n", "id": "call_read",
                 "format": "google-gemini-v1", "index": 1}
    thought = {"type": "reasoning.text", "text": "I should read a.txt before answering.", "format": "google-gemini-v1",
               "index": 0}
    script = positional([
        Turn(reasoning_details=(thought, encrypted), tool_calls=(("call_read", "file_read", '{"path": "a.txt"}'),)),
        Turn(tool_calls=(tool("file_read", path="a.txt"),)),
        Turn(tool_calls=(tool("task_done", summary="read it"),)),
    ])
    with ScriptedServer(script) as server:
        session = make_session(store, data_dir, workdir, client(), model="openrouter/google/gemini-3-pro-preview",
                               api_base=server.url)
        session.start()
        while len(server.requests) < 2:
            await asyncio.sleep(0.01)
        await session.change_model("openrouter/openai/gpt-5-mini", server.url)
        assert await session.wait() == "done"

    def sent_back(request: dict) -> list:
        return [m.get("reasoning_details") for m in request["messages"] if m["role"] == "assistant" and m.get("tool_calls")]

    # The pieces joined, as the model wrote them, with the reply whose call the next request answers.
    assert sent_back(server.requests[1]) == [[thought, encrypted]]
    assert "thinking_model" not in json.dumps(server.requests[1])  # Tripane's own mark is never sent
    assert events_of(session, AssistantMessage)[0].reasoning_details == (thought, encrypted)
    # Another model (here through OpenRouter as well) is not sent the first model's.
    assert sent_back(server.requests[2]) == [None, None]


async def test_the_same_model_moved_to_another_server_is_said_so(store, data_dir, workdir):
    from core.render import model_change_note

    session = make_session(store, data_dir, workdir, client(), model="openai/test", api_base="http://127.0.0.1:8000/v1")
    moved = await session.change_model("openai/test", "http://127.0.0.1:8001/v1")  # the server restarted elsewhere
    assert model_change_note(moved) == "server of openai/test set to http://127.0.0.1:8001/v1 by the person"
    assert "Server of openai/test set to http://127.0.0.1:8001/v1, from the next request on." in session.read_file(
        "progress.md")[0]
    both = await session.change_model("openai/test", None, reasoning_effort="low")
    assert model_change_note(both) == "server of openai/test set to its provider's own, reasoning effort low by the person"
    effort = await session.change_model("openai/test", reasoning_effort="high")
    assert model_change_note(effort) == "reasoning effort of openai/test set to high by the person"
    other = await session.change_model("openai/other", "http://127.0.0.1:8002/v1")
    assert model_change_note(other) == "model changed by the person from openai/test to openai/other at http://127.0.0.1:8002/v1"
