"""The real litellm code path against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import pytest

from core.events import AssistantMessage, ErrorRecorded, ToolResult
from core.llm import LiteLLMClient, ModelError, ModelRequest
from tests.core.helpers import events_of, make_session
from tests.support.openai_server import Failure, ScriptedServer, Turn, positional, tool


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


async def test_rate_limit_then_success_is_retried():
    attempts = []

    def script(request):
        attempts.append(1)
        return Failure(429, "Rate limit reached") if len(attempts) == 1 else Turn(text="fine")

    with ScriptedServer(script) as server:
        reply = await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                                     api_base=server.url))
    assert reply.text == "fine" and len(attempts) == 2


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


async def test_unreachable_server_is_a_connection_error():
    with pytest.raises(ModelError) as failed:
        await client().complete(ModelRequest("openai/scripted", [{"role": "user", "content": "hi"}],
                                             api_base="http://127.0.0.1:9/v1", timeout_s=5))
    assert failed.value.kind in ("connection", "timeout", "server")


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


async def test_a_model_name_without_a_provider_says_how_to_write_it():
    with pytest.raises(ModelError) as failed:
        await client().complete(ModelRequest("gpt-nonexistent-9", [{"role": "user", "content": "hi"}],
                                             api_base="http://127.0.0.1:9/v1"))
    assert failed.value.kind == "unknown_model" and not failed.value.retryable
    assert "Write it as provider/model" in str(failed.value)
