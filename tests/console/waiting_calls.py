"""Makes tool calls that wait for an operator's approval at the console, with the official
MCP Python SDK over Streamable HTTP, and prints what each call ended in as one JSON object.

    python waiting_calls.py SERVER_URL AGENT_TOKEN CALLS_JSON

SERVER_URL is the MCP endpoint (`http://127.0.0.1:PORT/mcp`), AGENT_TOKEN a `[[token]]` of
the server, CALLS_JSON a JSON list of `{"name": TOOL, "arguments": {...}}`. The client
declares no elicitation capability: it cannot ask a person itself, so the approval each
call needs is given (or refused) at the operator's console while the calls wait, all at
once. Prints `{"results": [{"is_error", "structured", "text"}, ...]}` in the order of
CALLS_JSON, or `{"error": REPR}` and exits 1.
"""

from __future__ import annotations

import json
import sys
import os
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mcp"))

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from client import call_summary  # noqa: E402

OVERALL_TIMEOUT = 300.0


async def run(server_url: str, token: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    results: list[Any] = [None] * len(calls)
    headers = {"Authorization": f"Bearer {token}"}
    with anyio.fail_after(OVERALL_TIMEOUT):
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0)) as http_client:
            async with streamable_http_client(server_url, http_client=http_client) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()

                    async def call(index: int) -> None:
                        spec = calls[index]
                        result = await session.call_tool(spec["name"], spec.get("arguments") or {})
                        results[index] = call_summary(result)

                    async with anyio.create_task_group() as group:
                        for index in range(len(calls)):
                            group.start_soon(call, index)
    return {"results": results}


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    _, server_url, token, calls_json = sys.argv
    try:
        result = anyio.run(run, server_url, token, json.loads(calls_json))
    except BaseException as error:  # noqa: BLE001 - any failure is reported as JSON
        if isinstance(error, (KeyboardInterrupt, SystemExit)):
            raise
        print(json.dumps({"error": repr(error)}))
        sys.stdout.flush()
        sys.exit(1)
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
