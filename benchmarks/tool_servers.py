"""Tool servers (MCP, core/tool_servers): what a person waits for and what a session pays.

- start: a server's process started and its tools listed, as before a session's first request
  (a Python server: most of it is the interpreter starting);
- several: SERVERS servers listed side by side, as the pool does (the first request waits for all);
- call: a small call's round trip through the running server (median, p99 of CALLS);
- large: a call whose result is LARGE_CHARS characters, read as one line of JSON;
- tokens: about how many tokens the servers' tool descriptions add to every request.

The server is the scripted one of the tests (tests/support/tool_server.py), a real child process
speaking MCP over stdio; nothing is reached over the network.

    python benchmarks/tool_servers.py [--calls 500] [--servers 4] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.tool_servers.config import ServerConfig  # noqa: E402
from core.tool_servers.pool import ServerPool  # noqa: E402
from core.tool_servers.tools import offered_tools, request_tokens  # noqa: E402

SCRIPT = str(ROOT / "tests" / "support" / "tool_server.py")
LARGE_CHARS = 5_000_000


def server(name: str) -> ServerConfig:
    return ServerConfig(name=name, command=sys.executable, args=(SCRIPT,))


async def measure(calls: int, servers: int, folder: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    one = ServerPool(lambda: [server("demo")])
    started = time.perf_counter()
    listed = await one.list_all(folder)
    figures["start_and_list_ms"] = (time.perf_counter() - started) * 1000
    figures["tools"] = len(listed.tools)
    figures["request_tokens"] = request_tokens(offered_tools(listed.tools, ()))
    times = []
    for n in range(calls):
        began = time.perf_counter()
        await one.call("demo", "echo", {"text": f"call {n}"}, folder)
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    figures["call_median_ms"] = statistics.median(times)
    figures["call_p99_ms"] = times[int(len(times) * 0.99) - 1]
    began = time.perf_counter()
    result = await one.call("demo", "huge", {"chars": LARGE_CHARS}, folder)
    figures["large_call_ms"] = (time.perf_counter() - began) * 1000
    assert len(result["content"][0]["text"]) == LARGE_CHARS
    await one.close_all()

    many = ServerPool(lambda: [server(f"s{n}") for n in range(servers)])
    began = time.perf_counter()
    listed = await many.list_all(folder)
    figures["several_start_and_list_ms"] = (time.perf_counter() - began) * 1000
    assert not listed.failed, listed.failed
    await many.close_all()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        figures = asyncio.run(measure(args.calls, args.servers, Path(tmp)))
    if args.json:
        print(json.dumps(figures, indent=1))
        return
    print(f"one server started and its {figures['tools']:.0f} tools listed: {figures['start_and_list_ms']:.0f} ms")
    print(f"{args.servers} servers started and listed side by side: {figures['several_start_and_list_ms']:.0f} ms")
    print(f"a small call: median {figures['call_median_ms']:.2f} ms, p99 {figures['call_p99_ms']:.2f} ms "
          f"({args.calls} calls)")
    print(f"a call returning {LARGE_CHARS:,} characters: {figures['large_call_ms']:.0f} ms")
    print(f"the tools' descriptions in every request: about {figures['request_tokens']:.0f} tokens")


if __name__ == "__main__":
    main()
