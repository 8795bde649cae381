"""Drives approval and progress through `toolhost serve` with the official MCP Python SDK
(`mcp` 2.x `Client`), and prints what it saw as one JSON object; tests/e2e/mcp.rs asserts.

    python approval.py TRANSPORT MODE TOOLHOST_BIN TOOLS_DIR

TRANSPORT is `stdio` or `http`; MODE is `legacy` (initialize handshake, a session: the
server asks with `elicitation/create` during the call) or `2026-07-28` (stateless: the
server answers `input_required` and the SDK retries with the answer).

In TOOLS_DIR, `math/divide` must require approval. The script calls it twice with an
elicitation callback that approves once and declines once, once from a client without
elicitation, and calls `math/count_primes` with a progress callback.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client
from toolhost_http import http_server

OVERALL_TIMEOUT = 180.0


def text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def summary(result: Any) -> dict[str, Any]:
    return {"is_error": bool(result.is_error), "structured": result.structured_content, "text": text_of(result)}


class Person:
    """The elicitation callback: answers the questions it is given, in order."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, _context: Any, params: Any) -> types.ElicitResult:
        self.asked.append({"message": params.message, "schema": params.requested_schema})
        answer = self.answers.pop(0) if self.answers else "decline"
        if answer == "approve":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action=answer)


async def exercise(server: Any, mode: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    person = Person(["approve", "decline", "cancel"])
    async with Client(server, mode=mode, elicitation_callback=person) as client:
        out["protocol_version"] = client.protocol_version
        out["approved"] = summary(await client.call_tool("math.divide", {"dividend": 6, "divisor": 3}))
        out["declined"] = summary(await client.call_tool("math.divide", {"dividend": 1, "divisor": 1}))
        out["cancelled"] = summary(await client.call_tool("math.divide", {"dividend": 1, "divisor": 1}))
        # A tool that needs no approval asks nobody.
        out["unasked"] = summary(await client.call_tool("math.add", {"numbers": [1, 2]}))
        out["asked"] = person.asked

        reports: list[dict[str, Any]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reports.append({"progress": progress, "total": total, "message": message})

        out["primes"] = summary(
            await client.call_tool("math.count_primes", {"below": 10_000_000}, progress_callback=on_progress)
        )
        out["progress"] = reports

    async with Client(server, mode=mode) as plain:
        out["no_elicitation"] = summary(await plain.call_tool("math.divide", {"dividend": 6, "divisor": 3}))
    return out


async def run(transport: str, mode: str, toolhost: str, tools_dir: str) -> dict[str, Any]:
    with anyio.fail_after(OVERALL_TIMEOUT):
        if transport == "stdio":
            env = {key: value for key, value in os.environ.items() if key in ("HOME", "PATH", "TOOLHOST_CACHE_DIR")}
            params = StdioServerParameters(command=toolhost, args=["serve", tools_dir], env=env)
            return await exercise(params, mode)
        if transport == "http":
            async with http_server(toolhost, tools_dir) as (url, _process):
                return await exercise(url, mode)
    raise SystemExit(f"unknown transport {transport!r} (stdio or http)")


def main() -> None:
    if len(sys.argv) != 5:
        raise SystemExit(__doc__)
    _, transport, mode, toolhost, tools_dir = sys.argv
    result = anyio.run(run, transport, mode, toolhost, tools_dir)
    print(json.dumps(result, default=str))


if __name__ == "__main__":
    main()
