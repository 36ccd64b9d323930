"""A scripted MCP tool server, run as a real child process over stdio (`python tool_server.py …`):
the one fake in tests of Tripane's tool servers is the server's behaviour, never the transport.

Options (argv): --shop offers a shop database's tools instead (read_query, write_query,
describe_table: for the screenshots); --banner prints a line that is not JSON before anything else; --pages N lists the
tools N at a time; --no-lookup leaves the read-only tool out (a server whose tools changed);
--die-at-start exits before answering; --ask-roots asks the client for its roots at initialize and
reports them through `echo`.
Tools: echo (text back, with its arguments), lookup (read-only), fail (an isError result), picture
(a 1×1 PNG), slow (sleeps `seconds`, cancellable), crash (the process exits), env (the value of
one of its environment variables), note (writes notes.txt in its folder), huge (`chars` characters
of text).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="

TOOLS = [
    {"name": "echo", "description": "Echo the text back.",
     "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                     "properties": {"text": {"type": "string", "description": "What to echo."}},
                     "required": ["text"]}},
    {"name": "lookup", "description": "Look a word up (changes nothing).", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"word": {"type": "string"}}, "required": ["word"]}},
    {"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}},
    {"name": "picture", "description": "A tiny picture.", "inputSchema": {"type": "object", "properties": {}}},
    {"name": "slow", "description": "Sleeps.", "inputSchema": {"type": "object",
                                                              "properties": {"seconds": {"type": "number"}}}},
    {"name": "crash", "description": "Ends the server.", "inputSchema": {"type": "object"}},
    {"name": "env", "description": "An environment variable's value.",
     "inputSchema": {"type": "object", "properties": {"variable": {"type": "string"}}}},
    {"name": "note", "description": "Writes notes.txt in its folder.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "huge", "description": "Much text.",
     "inputSchema": {"type": "object", "properties": {"chars": {"type": "integer"}}}},
]

# --shop: a shop's orders database instead (for the screenshots): its tools as a real one's would be.
SHOP_TOOLS = [
    {"name": "read_query", "description": "Run a SELECT query on the shop's orders database and return the rows.",
     "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]}},
    {"name": "write_query", "description": "Run an UPDATE, INSERT or DELETE on the shop's orders database.",
     "inputSchema": {"type": "object", "properties": {"sql": {"type": "string"}}, "required": ["sql"]}},
    {"name": "describe_table", "description": "The columns of a table.", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"table": {"type": "string"}}, "required": ["table"]}},
]
SHOP_ROWS = [{"id": 2, "customer": "Ben", "subtotal": 80.0, "discount": 0.25, "total": 45.0, "expected": 60.0},
             {"id": 4, "customer": "Dee", "subtotal": 200.0, "discount": 0.1, "total": 162.0, "expected": 180.0}]

args = sys.argv[1:]
lock = threading.Lock()
cancelled: set = set()
roots: list = []
offered: set = set()


def send(message: dict) -> None:
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def text(value: str, error: bool = False) -> dict:
    return {"content": [{"type": "text", "text": value}], "isError": error}


def call(request_id, name: str, arguments: dict) -> None:
    if name not in offered:
        send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32602, "message": f"Unknown tool: {name}"}})
    elif name == "read_query":
        result = text("\n".join(json.dumps(row) for row in SHOP_ROWS))
    elif name == "write_query":
        result = text("2 rows changed")
    elif name == "describe_table":
        result = text("id integer\ncustomer text\nsubtotal real\ndiscount real\ntotal real")
    elif name == "echo":
        result = text(f"echo: {arguments.get('text')} (arguments {json.dumps(arguments, sort_keys=True)}; "
                      f"roots {roots}; cwd {os.getcwd()})")
    elif name == "lookup":
        result = text(f"{arguments.get('word')}: a word")
    elif name == "fail":
        result = text("the database is locked", error=True)
    elif name == "picture":
        result = {"content": [{"type": "text", "text": "here:"}, {"type": "image", "data": PNG, "mimeType": "image/png"}]}
    elif name == "slow":
        deadline = time.monotonic() + float(arguments.get("seconds", 30))
        while time.monotonic() < deadline:
            if request_id in cancelled:
                sys.stderr.write(f"cancelled {request_id}\n")
                sys.stderr.flush()
                return
            time.sleep(0.01)
        result = text("slept")
    elif name == "crash":
        sys.stderr.write("fatal: the index is corrupt\n")
        sys.stderr.flush()
        os._exit(3)
    elif name == "env":
        result = text(f"{arguments.get('variable')}={os.environ.get(str(arguments.get('variable')), '(unset)')}")
    elif name == "note":
        with open("notes.txt", "w", encoding="utf-8") as notes:
            notes.write(str(arguments.get("text")))
        result = text("noted")
    elif name == "huge":
        result = text("x" * int(arguments.get("chars", 100_000)))
    send({"jsonrpc": "2.0", "id": request_id, "result": result})


def main() -> None:
    if "--die-at-start" in args:
        sys.stderr.write("cannot open the config file\n")
        sys.exit(2)
    if "--banner" in args:
        print("Demo server v1 starting…", flush=True)
    tools = [t for t in (SHOP_TOOLS if "--shop" in args else TOOLS)
             if not ("--no-lookup" in args and t["name"] == "lookup")]
    offered.update(t["name"] for t in tools)
    page = int(args[args.index("--pages") + 1]) if "--pages" in args else len(tools)
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": request_id, "result": {
                "protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                "serverInfo": {"name": "demo", "version": "1.0"}}})
            if "--ask-roots" in args:
                send({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"})
        elif method == "tools/list":
            start = int(message.get("params", {}).get("cursor") or 0)
            answer = {"tools": tools[start:start + page]}
            if start + page < len(tools):
                answer["nextCursor"] = str(start + page)
            send({"jsonrpc": "2.0", "id": request_id, "result": answer})
        elif method == "tools/call":
            params = message["params"]
            threading.Thread(target=call, args=(request_id, params["name"], params.get("arguments") or {}),
                             daemon=True).start()
        elif method == "notifications/cancelled":
            cancelled.add(message["params"]["requestId"])
        elif request_id == "r1" and "result" in message:
            roots.extend(root["uri"] for root in message["result"]["roots"])
        elif request_id is not None and method:
            send({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no such method"}})


if __name__ == "__main__":
    main()
