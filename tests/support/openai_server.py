"""A scripted OpenAI-compatible chat server on 127.0.0.1, so tests run litellm's real code path.

It also answers Anthropic's Messages API (POST .../messages), the format litellm speaks to Claude,
so the prompt-caching markers Tripane asks litellm for can be seen as Anthropic receives them,
Gemini's generateContent (POST .../models/NAME:streamGenerateContent, with Gemini 3's thought
signatures on its calls), and Ollama's /api/chat (streamed JSON lines) and /api/show (the model's
trained context length). Each refuses what its provider refuses of a conversation's structure.

Replies are chosen by a script from the request (by default: by the number of assistant messages
in it, so a resumed session gets the replies the original run would have). It streams SSE chunks
with tool-call deltas and a final usage chunk that reports cached tokens, like OpenAI does.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Turn:
    text: str = ""
    tool_calls: tuple[tuple[str, str, str], ...] = ()  # (id, name, raw JSON arguments)
    prompt_tokens: int = 100
    cached_tokens: int = 0
    cache_write_tokens: int = 0  # Anthropic's format only: prompt tokens written to the cache
    delay_s: float = 0.0  # silence before the reply
    # A streamed reply that breaks off after this many chunks: the server goes silent for stall_s
    # (then gives up), or, with stall_s 0, drops the connection.
    break_after: int | None = None
    stall_s: float = 0.0
    pace_s: float = 0.0  # the silence between two pieces of a streamed reply (a slow model's)
    # A reasoning model's thinking, streamed before the text in a field of its own (as DeepSeek's API
    # and vLLM's reasoning parsers send it), under this name; in Anthropic's format, a request that
    # asks for thinking gets it as a signed thinking block.
    reasoning: str = ""
    reasoning_field: str = "reasoning_content"
    # OpenRouter's reasoning details, streamed as it streams them: a text one in two pieces.
    reasoning_details: tuple[dict, ...] = ()
    # "length": the reply stopped at the output limit; "content_filter": a filter or refusal stopped
    # it; default: stop or tool_calls.
    finish_reason: str = ""


@dataclass(frozen=True)
class Failure:
    status: int
    message: str = "scripted failure"
    retry_after: str = "0"  # the Retry-After header of a 429, in seconds
    code: str | int | None = None  # the error's code and type in OpenAI's shape (default: the status)


def _failure_body(failure: Failure, path: str) -> dict[str, Any]:
    """A failure in the shape the provider whose API the path is sends it."""
    code = failure.code or failure.status
    if path.endswith("/messages"):  # Anthropic's: {"type": "error", "error": {"type": …, "message": …}}
        return {"type": "error", "error": {"type": str(code), "message": failure.message}}
    if path.split("?")[0].lower().endswith("generatecontent"):  # Gemini's
        return {"error": {"code": failure.status, "message": failure.message, "status": str(code)}}
    return {"error": {"message": failure.message, "type": str(code), "code": code}}


def tool(name: str, call_id: str | None = None, raw: str | None = None, **arguments: Any) -> tuple[str, str, str]:
    return (call_id or f"call_{name}", name, raw if raw is not None else json.dumps(arguments, sort_keys=True))


Script = Callable[[dict[str, Any]], "Turn | Failure"]


def replies_in(request: dict[str, Any]) -> int:
    """How many replies of the model the request's conversation holds, in any of the formats."""
    if "contents" in request:  # Gemini's
        return sum(1 for c in request["contents"] if c.get("role") == "model")
    return sum(1 for m in request["messages"] if m.get("role") == "assistant")


def positional(steps: Sequence[Turn | Failure | Callable[[dict], Turn | Failure]],
               default: Turn | None = None) -> Script:
    def script(request: dict[str, Any]) -> Turn | Failure:
        index = replies_in(request)
        if index >= len(steps):
            return default or Turn(tool_calls=(tool("task_done", summary="script exhausted"),))
        step = steps[index]
        return step(request) if callable(step) else step
    return script


@dataclass
class ScriptedServer:
    script: Script = None  # type: ignore[assignment]  # chat replies; an embeddings-only server has none
    requests: list[dict[str, Any]] = field(default_factory=list)
    # /v1/embeddings: the scripted embedding model (texts -> vectors), or a Failure to answer with.
    embed: Callable[[list[str]], list[list[float]]] | Failure | None = None
    # /api/show: the context length an Ollama model was trained for; None: the server cannot say.
    ollama_context_length: int | None = 131_072
    ollama_capabilities: tuple[str, ...] = ("completion", "tools")  # /api/show's: "vision" sees pictures
    # The context the server was started with, said the way `served_as` says it ("vllm": /v1/models,
    # "llamacpp": /props, "lmstudio": /api/v1/models, "lmstudio-v0": /api/v0/models); None: the
    # server does not say.
    served_window: int | None = None
    served_as: str = "vllm"
    served_key: str | None = None  # the key it requires (vLLM's --api-key), if any
    served_vision: bool = False  # whether the page `served_as` names says the model sees pictures
    gets: list[str] = field(default_factory=list)  # the paths asked with GET
    betas: list[str] = field(default_factory=list)  # each Messages API request's anthropic-beta header
    # Gemini's thought signatures handed out with calls, which Gemini 3 wants back with each.
    signatures: list[str] = field(default_factory=list)
    # HTTPS with this certificate and key (files), which no computer trusts unless told to: as a
    # company network's TLS inspection presents its own.
    tls: tuple[str, str] | None = None
    # One whole JSON reply to a streamed request too, as a gateway that ignores "stream": true does.
    answers_whole: bool = False
    port: int = 0  # 0: any free one; a given one to come back on, as a server restarted does
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"{'https' if self.tls else 'http'}://{host}:{port}/v1"

    def __enter__(self) -> ScriptedServer:
        server = _QuietServer(("127.0.0.1", self.port), _handler(self))
        server.daemon_threads = True
        if self.tls:
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*self.tls)
            server.socket = context.wrap_socket(server.socket, server_side=True)
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client closing a kept-alive connection, or giving up on a stalled reply, is expected
        # here; the traceback socketserver would print for it is noise in the tests' output.
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


def _handler(owner: ScriptedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            owner.gets.append(self.path)
            window, style = owner.served_window, owner.served_as
            if owner.served_key and self.headers.get("Authorization") != f"Bearer {owner.served_key}":
                self._send_json(401, {"error": "a valid API key is required"})
            elif self.path == "/v1/models":
                entry = {"id": "served-model", "object": "model", "owned_by": "scripted"}
                if window and style == "vllm":
                    entry["max_model_len"] = window
                self._send_json(200, {"object": "list", "data": [entry]})
            elif self.path == "/props" and window and style == "llamacpp":
                self._send_json(200, {"default_generation_settings": {"n_ctx": window}, "total_slots": 1,
                                      "modalities": {"vision": owner.served_vision, "audio": False}})
            elif self.path == "/api/v1/models" and window and style == "lmstudio":
                self._send_json(200, {"models": [
                    {"type": "llm", "key": "other-model", "loaded_instances": [], "max_context_length": 32_768,
                     "capabilities": {"vision": not owner.served_vision, "trained_for_tool_use": True}},
                    {"type": "llm", "key": "served-model", "max_context_length": 131_072, "loaded_instances": [
                        {"id": "served-model", "config": {"context_length": window, "flash_attention": True}},
                        {"id": "served-model:2", "config": {"context_length": window * 2}}],
                     "capabilities": {"vision": owner.served_vision, "trained_for_tool_use": True}}]})
            elif self.path == "/api/v0/models" and window and style == "lmstudio-v0":
                self._send_json(200, {"object": "list", "data": [
                    {"id": "other-model", "type": "vlm" if not owner.served_vision else "llm", "state": "not-loaded",
                     "max_context_length": 32_768},
                    {"id": "served-model", "type": "vlm" if owner.served_vision else "llm", "state": "loaded",
                     "max_context_length": 131_072, "loaded_context_length": window}]})
            else:
                self._send_json(404, {"error": f"no {self.path} here"})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            owner.requests.append(body)
            if self.path.endswith("/embeddings"):
                self._embeddings(body)
                return
            if self.path.endswith("/api/show"):
                length = owner.ollama_context_length
                if length is None:
                    self._send_json(404, {"error": f"model '{body.get('model')}' not found"})
                else:
                    self._send_json(200, {"model_info": {"general.architecture": "llama",
                                                         "llama.context_length": length},
                                          "capabilities": list(owner.ollama_capabilities)})
                return
            if owner.served_key and self.headers.get("Authorization") != f"Bearer {owner.served_key}":
                self._send_json(401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                                "code": "invalid_api_key"}})
                return
            step = owner.script(body)
            if isinstance(step, Failure):
                self._send_json(step.status, _failure_body(step, self.path), retry_after=step.retry_after)
                return
            if step.delay_s:
                time.sleep(step.delay_s)
            if self.path.split("?")[0].lower().endswith("generatecontent"):  # Gemini's
                model = self.path.split("/models/", 1)[-1].split(":", 1)[0]
                problem = _gemini_problem(body, model)
                if problem:
                    self._send_json(400, {"error": {"code": 400, "message": problem, "status": "INVALID_ARGUMENT"}})
                    return
                reply = _gemini_reply(step, model, owner.signatures)
                if "alt=sse" in self.path:
                    self._send_body(200, "text/event-stream", f"data: {json.dumps(reply)}\r\n\r\n".encode())
                else:
                    self._send_json(200, reply)
                return
            if self.path.endswith("/messages"):
                owner.betas.append(self.headers.get("anthropic-beta", ""))
                problem = _anthropic_problem(body) or _anthropic_thinking_problem(body)
                if problem:  # what Anthropic refuses, this server refuses, with Anthropic's error shape
                    self._send_json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                                     "message": problem}})
                    return
                self._send_events(_anthropic_events(body, step, owner.betas[-1]))
            elif self.path.endswith("/api/chat") and body.get("think") and not _ollama_thinks(body.get("model", "")):
                self._send_json(400, {"error": f"registry.ollama.ai/library/{body.get('model')} does not support thinking"})
            elif self.path.endswith("/api/chat"):
                self._send_body(200, "application/x-ndjson",
                                b"".join(json.dumps(line).encode() + b"\n" for line in _ollama_lines(body, step)))
            elif body.get("stream") and not owner.answers_whole:
                self._stream(body, step)
            else:
                self._send_json(200, _completion(body, step))

        def _embeddings(self, body: dict) -> None:
            if isinstance(owner.embed, Failure) or owner.embed is None:
                failure = owner.embed or Failure(404, "this server has no embedding model")
                self._send_json(failure.status, {"error": {"message": failure.message, "type": "scripted",
                                                           "code": failure.status}})
                return
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            vectors = owner.embed(texts)
            tokens = sum(len(t.split()) for t in texts)
            self._send_json(200, {"object": "list", "model": body.get("model", ""),
                                  "data": [{"object": "embedding", "index": i, "embedding": v}
                                           for i, v in enumerate(vectors)],
                                  "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

        def _send_json(self, status: int, payload: dict, retry_after: str = "0") -> None:
            self._send_body(status, "application/json", json.dumps(payload).encode(), retry_after)

        def _stream(self, body: dict, step: Turn) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for index, chunk in enumerate(_chunks(body, step)):
                if index == step.break_after:
                    time.sleep(step.stall_s)
                    self.close_connection = True  # the client has given up, or sees the connection drop
                    return
                if index and step.pace_s:
                    time.sleep(step.pace_s)
                self._write_chunk(f"data: {json.dumps(chunk)}\n\n".encode())
            self._write_chunk(b"data: [DONE]\n\n")
            self._write_chunk(b"")

        def _send_events(self, events: list[dict]) -> None:
            self._send_body(200, "text/event-stream",
                            b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events))

        def _send_body(self, status: int, content_type: str, data: bytes, retry_after: str = "0") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("Retry-After", retry_after)
            self.end_headers()
            self.wfile.write(data)

        def _write_chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    return Handler


def _usage(step: Turn) -> dict:
    completion = max(1, len(step.text) // 4 + 10 * len(step.tool_calls))
    return {"prompt_tokens": step.prompt_tokens, "completion_tokens": completion,
            "total_tokens": step.prompt_tokens + completion,
            "prompt_tokens_details": {"cached_tokens": step.cached_tokens}}


def _finish(step: Turn) -> str:
    return step.finish_reason or ("tool_calls" if step.tool_calls else "stop")


def _completion(body: dict, step: Turn) -> dict:
    message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
    if step.tool_calls:
        message["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                                 for i, n, a in step.tool_calls]
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": body.get("model"),
            "choices": [{"index": 0, "message": message, "finish_reason": _finish(step)}],
            "usage": _usage(step)}


def _chunks(body: dict, step: Turn) -> list[dict]:
    def chunk(delta: dict, finish: str | None = None) -> dict:
        return {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0,
                "model": body.get("model"), "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    out = [chunk({"role": "assistant", "content": ""})]
    for start in range(0, len(step.reasoning), 8):
        out.append(chunk({step.reasoning_field: step.reasoning[start:start + 8], "content": None}))
    # OpenRouter's: a text detail in two pieces, each with the reasoning it holds; the others (an
    # encrypted one, say) with the first call, as Gemini's thought signature comes with its call.
    with_call = [detail for detail in step.reasoning_details if not isinstance(detail.get("text"), str)]
    for detail in step.reasoning_details:
        if isinstance(detail.get("text"), str):
            half = len(detail["text"]) // 2
            for piece in (detail["text"][:half], detail["text"][half:]):
                out.append(chunk({"reasoning": piece, "reasoning_details": [{**detail, "text": piece}]}))
    text = step.text
    for start in range(0, len(text), 8):
        out.append(chunk({"content": text[start:start + 8]}))
    for index, (call_id, name, arguments) in enumerate(step.tool_calls):
        half = len(arguments) // 2
        out.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": arguments[:half]}}],
                          **({"reasoning_details": with_call} if with_call and index == 0 else {})}))
        out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[half:]}}]}))
    out.append(chunk({}, _finish(step)))
    out.append({"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": 0,
                "model": body.get("model"), "choices": [], "usage": _usage(step)})
    return out


def _anthropic_events(body: dict, step: Turn, betas: str = "") -> list[dict]:
    """A streamed Messages API reply: text, then each tool call as a tool_use block. The prompt's
    cached part is reported as Anthropic does, as cache reads beside the uncached input."""
    blocks: list[tuple[dict, list[dict]]] = []
    thinks = _thinks_now(body, betas)
    if thinks and step.reasoning.startswith(REDACTED):  # thinking Claude's safety systems encrypted
        blocks.append(({"type": "redacted_thinking", "data": _encrypted(step.reasoning[len(REDACTED):], body)}, []))
    elif thinks:  # a signed thinking block first, as Claude sends it
        thought = step.reasoning or "Let me think about what comes next."
        if _adaptive(body) and (body.get("thinking") or {}).get("display") != "summarized":
            thought = ""  # adaptive thinking is shown only when asked to be ("omitted" by default)
        blocks.append(({"type": "thinking", "thinking": ""}, [{"type": "thinking_delta", "thinking": thought},
                                                              {"type": "signature_delta", "signature": _signed(thought, body)}]))
    if step.text:
        blocks.append(({"type": "text", "text": ""}, [{"type": "text_delta", "text": step.text}]))
    for call_id, name, arguments in step.tool_calls:
        blocks.append(({"type": "tool_use", "id": call_id, "name": name, "input": {}},
                       [{"type": "input_json_delta", "partial_json": arguments}]))
    usage = {"input_tokens": step.prompt_tokens - step.cached_tokens - step.cache_write_tokens, "output_tokens": 1,
             "cache_read_input_tokens": step.cached_tokens, "cache_creation_input_tokens": step.cache_write_tokens}
    events: list[dict] = [{"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": body.get("model"), "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": usage}}]
    for index, (start, deltas) in enumerate(blocks):
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events.extend({"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas)
        events.append({"type": "content_block_stop", "index": index})
    stop_reason = {"length": "max_tokens", "content_filter": "refusal"}.get(step.finish_reason) or ("tool_use" if step.tool_calls else "end_turn")
    events.append({"type": "message_delta", "delta": {"stop_reason": stop_reason,
                                                      "stop_sequence": None},
                   "usage": {"output_tokens": _usage(step)["completion_tokens"]}})
    events.append({"type": "message_stop"})
    return events


def _ollama_thinks(model: str) -> bool:
    """Whether an Ollama model has the thinking capability (Ollama refuses `think` to one without)."""
    return any(family in model for family in ("qwen3", "deepseek-r1", "gpt-oss", "magistral"))


def _ollama_lines(body: dict, step: Turn) -> list[dict]:
    """A streamed /api/chat reply: the text, then the tool calls (arguments as objects), then done."""
    def line(message: dict, done: bool = False, **extra) -> dict:
        return {"model": body.get("model"), "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": "", **message}, "done": done, **extra}

    lines = [line({"content": step.text})] if step.text else []
    if step.tool_calls:
        lines.append(line({"tool_calls": [{"function": {"name": name, "arguments": json.loads(arguments)}}
                                          for _, name, arguments in step.tool_calls]}))
    lines.append(line({}, True, done_reason="stop", prompt_eval_count=step.prompt_tokens,
                      eval_count=_usage(step)["completion_tokens"]))
    return lines


def _anthropic_problem(body: dict) -> str | None:
    """The structural rules of Anthropic's Messages API that a context builder can break: the
    conversation starts with the user and alternates, every tool_result answers a tool_use of the
    assistant message just before it, each tool_use has an id of its own, no text block is empty,
    and at most four blocks carry cache_control."""
    messages = body.get("messages") or []
    if not messages or messages[0].get("role") != "user":
        return "messages: the first message must use the user role"
    marks = sum(1 for block in body.get("system") or [] if isinstance(block, dict) and "cache_control" in block)
    previous_uses: set[str] = set()
    all_uses: set[str] = set()
    for index, message in enumerate(messages):
        if index and message.get("role") == messages[index - 1].get("role"):
            return f"messages.{index}: roles must alternate between user and assistant"
        blocks = message["content"] if isinstance(message["content"], list) else []
        if message["content"] == "" or any(b.get("type") == "text" and not b.get("text") for b in blocks):
            return f"messages.{index}: text content blocks must be non-empty"
        uses = [block.get("id") for block in blocks if block.get("type") == "tool_use"]
        if len(set(uses)) < len(uses) or all_uses & set(uses):
            return f"messages.{index}: `tool_use` ids must be unique"
        all_uses.update(uses)
        marks += sum(1 for block in blocks if "cache_control" in block)
        if message["role"] == "user":
            answered = {block.get("tool_use_id") for block in blocks if block.get("type") == "tool_result"}
            if answered - previous_uses:
                return (f"messages.{index}: unexpected tool_use_id found in tool_result blocks: "
                        f"{sorted(answered - previous_uses)}. Each tool_result block must have a corresponding "
                        "tool_use block in the previous message.")
            if previous_uses - answered:
                return (f"messages.{index}: tool_use ids were found without tool_result blocks immediately "
                        f"after: {sorted(previous_uses - answered)}")
            previous_uses = set()
        else:
            previous_uses = {block.get("id") for block in blocks if block.get("type") == "tool_use"}
    if marks > 4:
        return f"A maximum of 4 blocks with cache_control may be provided. Found {marks}."
    return None


# Claude models that think unasked (litellm's map: thinking_on_by_default, thinking_always_on), and
# adaptively: they decide when, between calls too. Claude 4 asked with a budget ("enabled") thinks
# again after tool results only with the interleaved-thinking beta; without it, only after a
# message of the person's ("Claude will not output another thinking block until after the next
# non-tool_result user turn").
THINKS_UNASKED = ("claude-sonnet-5", "claude-sonnet-5-5", "claude-fable-5-1")
INTERLEAVED_BETA = "interleaved-thinking-2025-05-14"


def _thinks(body: dict) -> bool:
    """Whether thinking is on for the request (asked for, or the model's own)."""
    kind = (body.get("thinking") or {}).get("type")
    return kind in ("enabled", "adaptive") or (kind is None and body.get("model") in THINKS_UNASKED)


def _adaptive(body: dict) -> bool:
    return _thinks(body) and (body.get("thinking") or {}).get("type") in (None, "adaptive")


def _answers_calls(messages: list[dict]) -> bool:
    last = messages[-1] if messages else {}
    return last.get("role") == "user" and any(isinstance(b, dict) and b.get("type") == "tool_result"
                                              for b in last.get("content") or [])


def _thinks_now(body: dict, betas: str) -> bool:
    """Whether this reply starts with thinking."""
    return _thinks(body) and (_adaptive(body) or INTERLEAVED_BETA in betas
                              or not _answers_calls(body.get("messages") or []))


def _signed(thought: str, body: dict) -> str:
    """The signature this server gives a thinking text; Claude checks its own the same way. It is
    the model's own: another Claude model refuses it ("Invalid signature in thinking block")."""
    return "sig-" + hashlib.sha256(f"{body.get('model')}\n{thought}".encode()).hexdigest()[:24]


REDACTED = "[redacted]"  # a Turn's reasoning that starts so is sent as a redacted_thinking block


def _encrypted(thought: str, body: dict) -> str:
    """A redacted block's opaque data; '!' keeps it out of the base64 alphabet, as Claude's is."""
    return f"enc!{thought.encode().hex()}!{_signed(thought, body)}"


def _decrypts(data: str, body: dict) -> bool:
    try:
        _, payload, signature = data.split("!")
        return signature == _signed(bytes.fromhex(payload).decode(), body)
    except ValueError:
        return False


def _anthropic_thinking_problem(body: dict) -> str | None:
    """Claude's rules for thinking: a budget of at least 1,024 tokens below max_tokens, no forced
    tool, thinking blocks sent back unchanged, and — with thinking on — the reply whose tool_use a
    request answers starts with its thinking; with thinking off, no final assistant message holds
    thinking."""
    messages = body.get("messages") or []
    for index, message in enumerate(messages):
        blocks = message["content"] if isinstance(message["content"], list) else []
        for position, block in enumerate(blocks):
            if block.get("type") == "thinking" and block.get("signature") != _signed(block.get("thinking", ""), body):
                return f"messages.{index}.content.{position}: Invalid `signature` in `thinking` block"
            if block.get("type") == "redacted_thinking" and not _decrypts(block.get("data", ""), body):
                return f"messages.{index}.content.{position}: Invalid `data` in `redacted_thinking` block"
    last = messages[-1] if messages else {}
    if not _thinks(body):
        if last.get("role") == "assistant" and any(isinstance(b, dict) and b.get("type") == "thinking"
                                                   for b in last.get("content") or []):
            return (f"messages.{len(messages) - 1}.content.0: When thinking is disabled, an `assistant` message in the "
                    "final position cannot contain `thinking`. To use thinking blocks, enable `thinking` in your request.")
        return None
    budget = (body.get("thinking") or {}).get("budget_tokens")
    if not _adaptive(body) and (not isinstance(budget, int) or budget < 1024):
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    if isinstance(budget, int) and body.get("max_tokens", 0) <= budget:
        return "`max_tokens` must be greater than `thinking.budget_tokens`."
    if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        return "Thinking may not be enabled when tool_choice forces tool use."
    if _answers_calls(messages) and len(messages) > 1:
        first = (messages[-2].get("content") or [{}])[0]
        if first.get("type") not in ("thinking", "redacted_thinking"):
            return (f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                    f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must start with a "
                    "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend "
                    "you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`.")
    return None


def _gemini_reply(step: Turn, model: str, signatures: list[str]) -> dict:
    """A generateContent reply: text, then each call as a functionCall part; a thinking model's
    first call of a reply carries a thought signature (Gemini signs only the first of parallel calls)."""
    parts: list[dict] = [{"text": step.text}] if step.text else []
    for index, (_call_id, name, arguments) in enumerate(step.tool_calls):
        try:
            args = json.loads(arguments)
        except ValueError:  # Gemini parses the call itself: what it cannot parse, it does not send
            return {"candidates": [{"content": {"role": "model"}, "finishReason": "MALFORMED_FUNCTION_CALL",
                                    "finishMessage": f"Malformed function call: call:{name}{arguments}", "index": 0}],
                    "usageMetadata": {"promptTokenCount": step.prompt_tokens, "totalTokenCount": step.prompt_tokens},
                    "modelVersion": model}
        part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
        if index == 0 and _signs_calls(model):
            signatures.append(f"c2lnbmVkLXt{len(signatures)}")
            part["thoughtSignature"] = signatures[-1]
        parts.append(part)
    finish = {"length": "MAX_TOKENS", "content_filter": "SAFETY"}.get(step.finish_reason, "STOP")
    completion = _usage(step)["completion_tokens"]
    usage = {"promptTokenCount": step.prompt_tokens, "candidatesTokenCount": completion,
             "totalTokenCount": step.prompt_tokens + completion}
    if step.cached_tokens:
        usage["cachedContentTokenCount"] = step.cached_tokens
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
            "usageMetadata": usage, "modelVersion": model}


def _signs_calls(model: str) -> bool:
    return model.startswith("gemini-3")


# Field names Gemini's Schema object knows; any other in a function declaration's parameters is
# refused ("Invalid JSON payload received. Unknown name ...").
_GEMINI_SCHEMA_FIELDS = {"type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems",
                         "properties", "required", "minProperties", "maxProperties", "minLength", "maxLength",
                         "pattern", "example", "anyOf", "propertyOrdering", "default", "items", "minimum",
                         "maximum"}


def _unknown_schema_field(schema: Any, where: str) -> str | None:
    if not isinstance(schema, dict):
        return None
    for name, value in schema.items():
        if name not in _GEMINI_SCHEMA_FIELDS:
            return f"{where}: Unknown name \"{name}\""
        if name == "properties":
            for prop, sub in value.items():
                found = _unknown_schema_field(sub, f"{where}.properties[{prop}]")
                if found:
                    return found
        elif name == "items":
            found = _unknown_schema_field(value, f"{where}.items")
            if found:
                return found
        elif name == "anyOf":
            for i, sub in enumerate(value):
                found = _unknown_schema_field(sub, f"{where}.anyOf[{i}]")
                if found:
                    return found
    return None


def _gemini_problem(body: dict, model: str) -> str | None:
    """What Gemini refuses of a request's structure: an unknown schema field in a declaration, a
    content without parts, a call turn that does not follow the person or function responses, a
    different number of responses than calls, and, for Gemini 3, a call of the current turn
    (since the person last wrote) without the thought signature it came with."""
    for t, declared in enumerate(body.get("tools") or []):
        for f, function in enumerate(declared.get("functionDeclarations") or declared.get("function_declarations") or []):
            found = _unknown_schema_field(function.get("parameters"), f"tools[{t}].function_declarations[{f}].parameters")
            if found:
                return f"Invalid JSON payload received. {found}: Cannot find field."
    contents = body.get("contents") or []
    if not contents:
        return "* GenerateContentRequest.contents: contents is not specified"
    current_turn = 0
    for index, content in enumerate(contents):
        parts = content.get("parts") or []
        if not parts:
            return f"* GenerateContentRequest.contents[{index}].parts: contents.parts must not be empty."
        if content.get("role") == "user" and any("text" in part for part in parts):
            current_turn = index
        calls = [part for part in parts if "functionCall" in part or "function_call" in part]
        if calls:
            previous = contents[index - 1] if index else None
            if previous is None or previous.get("role") != "user":
                return ("Please ensure that function call turn comes immediately after a user turn or after a "
                        "function response turn.")
            following = contents[index + 1]["parts"] if index + 1 < len(contents) else None
            if following is not None:
                responses = [part for part in following if "functionResponse" in part or "function_response" in part]
                if len(responses) != len(calls):
                    return ("Please ensure that the number of function response parts is equal to the number of "
                            "function call parts of the function call turn.")
    if _signs_calls(model):
        for index, content in enumerate(contents[current_turn:], start=current_turn):
            calls = [part for part in content.get("parts") or [] if "functionCall" in part or "function_call" in part]
            if calls and not (calls[0].get("thoughtSignature") or calls[0].get("thought_signature")):
                name = (calls[0].get("functionCall") or calls[0].get("function_call"))["name"]
                return ("Function call is missing a thought_signature in functionCall parts. This is required for "
                        f"tools to work correctly. Additional data, function call `default_api:{name}` , "
                        f"position {index + 1}.")
    return None
