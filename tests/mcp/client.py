"""Drives `toolhost serve` with the official MCP Python SDK (`mcp` 2.x) and prints what it
saw as one JSON object on stdout; tests/e2e/mcp.rs asserts on it.

    python client.py stdio TOOLHOST_BIN TOOLS_DIR REPLACEMENT_WASM TARGET_WASM
    python client.py http  TOOLHOST_BIN TOOLS_DIR REPLACEMENT_WASM TARGET_WASM

The script initializes a session, lists the tools, makes a successful call, tool errors,
an invalid-input call and a call to an unknown tool, then replaces TARGET_WASM with the
bytes of REPLACEMENT_WASM and waits for `notifications/tools/list_changed`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

import anyio
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from toolhost_http import http_server

NOTIFICATION_TIMEOUT = 60.0
OVERALL_TIMEOUT = 180.0


class Observed:
    """What the session's message handler saw."""

    def __init__(self) -> None:
        self.list_changed = anyio.Event()
        self.list_changed_count = 0
        self.notifications: list[str] = []
        self.stream_errors: list[str] = []

    async def handle(self, message: Any) -> None:
        if isinstance(message, Exception):
            # A line on the server's stdout that is not JSON-RPC lands here.
            self.stream_errors.append(repr(message))
            return
        method = getattr(message, "method", None)
        self.notifications.append(str(method))
        if method == "notifications/tools/list_changed":
            self.list_changed_count += 1
            self.list_changed.set()


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def call_summary(result: Any) -> dict[str, Any]:
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": text_of(result),
    }


async def exercise(session: ClientSession, observed: Observed, replacement: str, target: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    init = await session.initialize()
    out["protocol_version"] = init.protocol_version
    out["server_name"] = init.server_info.name
    out["list_changed_capability"] = bool(init.capabilities.tools and init.capabilities.tools.list_changed)

    listed = await session.list_tools()
    out["tools"] = {
        tool.name: {
            "title": tool.title,
            "description": tool.description,
            "input_schema": tool.input_schema,
            "output_schema": tool.output_schema,
        }
        for tool in listed.tools
    }

    out["add"] = call_summary(await session.call_tool("math.add", {"numbers": [1, 2, 3]}))
    out["divide_by_zero"] = call_summary(await session.call_tool("math.divide", {"dividend": 1, "divisor": 0}))
    out["fail"] = call_summary(await session.call_tool("hostile.fail", {"message": "told to fail"}))
    out["trap"] = call_summary(await session.call_tool("hostile.trap", {}))
    out["invalid_input"] = call_summary(await session.call_tool("math.add", {"numbers": "not a list"}))
    # A guest that writes to its stdout: in stdio mode none of it may reach the stream.
    out["stdout_flood"] = call_summary(await session.call_tool("hostile.log_flood", {"bytes": 4096}))
    # Other accepted name forms resolve too.
    out["add_full_name"] = call_summary(await session.call_tool("math/add", {"numbers": [2, 2]}))

    try:
        await session.call_tool("math.ad", {"numbers": [1]})
        out["unknown"] = {"raised": False}
    except MCPError as error:
        out["unknown"] = {"raised": True, "code": error.code, "message": error.message, "data": error.data}

    # Replace a component on disk the way deploys do: write beside it, rename over it.
    # A server that is still starting may already have said list_changed for components
    # it loaded after this session began: wait for a notification that comes after now.
    before = sorted(tool.name for tool in listed.tools)
    observed.list_changed = anyio.Event()
    partial = target + ".partial-write"
    shutil.copyfile(replacement, partial)
    os.replace(partial, target)
    received = False
    listed_again = listed
    with anyio.move_on_after(NOTIFICATION_TIMEOUT):
        while True:
            await observed.list_changed.wait()
            observed.list_changed = anyio.Event()
            received = True
            listed_again = await session.list_tools()
            if sorted(tool.name for tool in listed_again.tools) != before:
                break
    out["list_changed_received"] = received
    out["list_changed_count"] = observed.list_changed_count
    out["tools_after_change"] = sorted(tool.name for tool in listed_again.tools)
    out["add_after_change"] = call_summary(await session.call_tool("math.add", {"numbers": [4, 5]}))
    out["notifications"] = observed.notifications
    out["stream_errors"] = observed.stream_errors
    return out


async def run(mode: str, toolhost: str, tools_dir: str, replacement: str, target: str) -> dict[str, Any]:
    observed = Observed()
    with anyio.fail_after(OVERALL_TIMEOUT):
        if mode == "stdio":
            params = StdioServerParameters(
                command=toolhost,
                args=["serve", tools_dir],
                env={key: value for key, value in os.environ.items() if key in ("HOME", "PATH", "XDG_CACHE_HOME", "TOOLHOST_CACHE_DIR")},
            )
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write, message_handler=observed.handle) as session:
                    result = await exercise(session, observed, replacement, target)
        elif mode == "http":
            async with http_server(toolhost, tools_dir) as (url, _process):
                async with streamable_http_client(url) as (read, write):
                    async with ClientSession(read, write, message_handler=observed.handle) as session:
                        result = await exercise(session, observed, replacement, target)
                        result["url"] = url
        else:
            raise SystemExit(f"unknown mode {mode!r} (stdio or http)")
    result["transport"] = mode
    return result


def main() -> None:
    if len(sys.argv) != 6:
        raise SystemExit(__doc__)
    _, mode, toolhost, tools_dir, replacement, target = sys.argv
    result = anyio.run(run, mode, toolhost, tools_dir, replacement, target)
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
