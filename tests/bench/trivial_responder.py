"""The floor of the stdio transport: an MCP "server" that does no work at all.

It answers `initialize` and every `tools/call` with a fixed result of the same shape
toolhost sends, one JSON line per request, flushing after each. A benchmark measures
toolhost's stdio server against it in the same run: the difference is what toolhost
itself costs beyond reading a line, parsing it, and writing one back.
"""

import json
import sys

RESULT = {
    "content": [{"type": "text", "text": "{\"value\":3.0}"}],
    "structuredContent": {"value": 3.0},
    "isError": False,
}


def main():
    out = sys.stdout
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:
            continue
        if message.get("method") == "initialize":
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "trivial", "version": "0"},
            }
        else:
            result = RESULT
        out.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
