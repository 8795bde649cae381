"""A hostile MCP server on stdio, written as raw JSON-RPC (the standard library only, so
that it can break the protocol's expectations in ways an SDK would not let it): for
toolhost's tests of what bounds an upstream server.

    python hostile_upstream.py MODE EVENTS

It appends a line to the file EVENTS for what toolhost asked (`initialize`,
`tools/list`, `called NAME`) and, in `stubborn` mode, the process ids it holds. MODE:

- `endless-cursor`: every `tools/list` page holds one new tool and a new `nextCursor`;
- `many-tools`: one page of 100,000 tools;
- `big-listing`: 64 pages, each of 4 tools with 200 KiB descriptions;
- `silent-initialize`: never answers anything;
- `silent-list`: initializes, then never answers `tools/list`;
- `deep-schema`: a tool whose input schema nests 200 levels deep, beside a plain one;
- `flood`: sends `notifications/tools/list_changed` every millisecond, its list unchanged;
- `names`: tools named as MCP allows and toolhost's own rule does not;
- `stubborn`: ignores SIGTERM and end of input, and starts a child that does too;
- `huge-answer`: the tool `huge` answers with 20 MiB of text, its `id` last (as the
  TypeScript SDK writes it), the tool `small` with a few bytes;
- `probe`: the tool `probe` tries what its arguments name (`read` a file, `write`
  one, `connect` to a loopback port, `spawn` that many `sleep` processes, `allocate`
  that many MiB) and answers with what happened to each, as JSON text.
"""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

MODE, EVENTS = sys.argv[1], sys.argv[2]
write_lock = threading.Lock()


def event(line: str) -> None:
    with open(EVENTS, "a", encoding="utf-8") as events:
        events.write(line + "\n")


def send(message: dict) -> None:
    with write_lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def tool(name: str, description: str = "A tool.", schema: dict | None = None) -> dict:
    return {"name": name, "description": description, "inputSchema": schema or {"type": "object"}}


def deep_schema(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


NAMES = [
    "printEnv",
    "getTinyImage",
    "get.weather",
    "get_weather",
    "Get-Weather",
    "a_very_long_tool_name_that_goes_well_past_the_limit_of_toolhost",
    "123start",
    "UPPER",
    "plain",
]


def list_page(cursor: str | None) -> dict:
    if MODE == "endless-cursor":
        page = int(cursor or "0")
        return {"tools": [tool(f"t{page}")], "nextCursor": str(page + 1)}
    if MODE == "many-tools":
        return {"tools": [tool(f"t{i}") for i in range(100_000)]}
    if MODE == "big-listing":
        page = int(cursor or "0")
        tools = [tool(f"t{page}-{i}", "d" * 200 * 1024) for i in range(4)]
        return {"tools": tools, **({"nextCursor": str(page + 1)} if page < 63 else {})}
    if MODE == "deep-schema":
        return {"tools": [tool("plain"), tool("deep", schema=deep_schema(200))]}
    if MODE == "names":
        return {"tools": [tool(name, f"The tool `{name}`.") for name in NAMES]}
    if MODE == "huge-answer":
        return {"tools": [tool("huge"), tool("small")]}
    if MODE == "probe":
        return {"tools": [tool("probe")]}
    return {"tools": [tool("plain")]}


def flood() -> None:
    while True:
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        time.sleep(0.001)


def stubborn() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    grandchild = subprocess.Popen(
        [sys.executable, "-c", "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(3600)"],
        stdin=subprocess.DEVNULL,
    )
    event(f"pids {os.getpid()} {grandchild.pid}")


def attempt(action) -> str:
    try:
        return str(action())
    except BaseException as e:  # the refusal is the answer
        return f"{type(e).__name__}: {e}"


def spawn(count: int) -> int:
    started = []
    try:
        for _ in range(count):
            started.append(subprocess.Popen(["sleep", "30"], stdin=subprocess.DEVNULL))
    except OSError:
        pass
    for process in started:
        process.kill()
        process.wait()
    return len(started)


def probe(arguments: dict) -> dict:
    found = {}
    if "read" in arguments:
        found["read"] = attempt(lambda: len(open(arguments["read"], "rb").read()))
    if "write" in arguments:
        found["write"] = attempt(lambda: open(arguments["write"], "w").write("written"))
    if "connect" in arguments:
        found["connect"] = attempt(lambda: socket.create_connection(("127.0.0.1", arguments["connect"]), 2).close())
    if "spawn" in arguments:
        found["spawn"] = spawn(arguments["spawn"])
    if "allocate" in arguments:
        found["allocate"] = attempt(lambda: len(bytearray(arguments["allocate"] << 20)))
    return found


def call(request_id, name: str, arguments: dict) -> None:
    if MODE == "huge-answer" and name == "huge":
        # `id` after the result, as the TypeScript SDK writes it.
        result = {"content": [{"type": "text", "text": "h" * (20 << 20)}]}
        send({"jsonrpc": "2.0", "result": result, "id": request_id})
        return
    text = json.dumps(probe(arguments)) if MODE == "probe" else name
    send({"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}})


def main() -> None:
    if MODE == "stubborn":
        stubborn()
    for line in sys.stdin:
        message = json.loads(line)
        method, request_id = message.get("method"), message.get("id")
        if method:
            event(method)
        if MODE == "silent-initialize" or request_id is None:
            continue
        if method == "initialize":
            capabilities = {"tools": {"listChanged": True}}
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "serverInfo": {"name": f"hostile-{MODE}", "version": "1"},
            }
            send({"jsonrpc": "2.0", "id": request_id, "result": result})
            if MODE == "flood":
                threading.Thread(target=flood, daemon=True).start()
        elif method == "tools/list":
            if MODE == "silent-list":
                continue
            cursor = (message.get("params") or {}).get("cursor")
            send({"jsonrpc": "2.0", "id": request_id, "result": list_page(cursor)})
        elif method == "tools/call":
            name = message["params"]["name"]
            event(f"called {name}")
            call(request_id, name, message["params"].get("arguments") or {})
        else:
            send({"jsonrpc": "2.0", "id": request_id, "result": {}})
    if MODE == "stubborn":
        # End of input does not end it.
        while True:
            time.sleep(3600)


main()
