"""Drives the client's powers through `toolhost serve` with the official MCP Python SDK
(`mcp` 2.x `Client`): content blocks, a tool asking the person (elicitation) and the
client's model (sampling), and a tool's log lines; prints what it saw as one JSON object
for tests/e2e/client_powers.rs.

    python client_powers.py TRANSPORT TOOLHOST_BIN TOOLS_DIR

TRANSPORT is `stdio` or `http`; the clients speak the session protocol (`legacy`: a
tool's questions reach them during the call). TOOLS_DIR holds the `conformance` example toolbox,
granted `elicit`, `sample` and `log`. Three clients call it: one that answers every
question and sampling request, one that declines the question and declared no sampling,
and one that set its log level to `error`.
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


def blocks_of(result: Any) -> list[dict[str, Any]]:
    return [block.model_dump(mode="json", by_alias=True, exclude_none=True) for block in result.content]


def summary(result: Any) -> dict[str, Any]:
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    return {"is_error": bool(result.is_error), "text": text, "blocks": blocks_of(result)}


class Answering:
    """A client whose person accepts every form and whose model answers every request."""

    def __init__(self, action: str) -> None:
        self.action = action
        self.asked: list[dict[str, Any]] = []
        self.sampled: list[dict[str, Any]] = []
        self.logged: list[dict[str, Any]] = []

    async def elicit(self, _context: Any, params: Any) -> types.ElicitResult:
        self.asked.append({"message": params.message, "schema": params.requested_schema})
        if self.action == "accept":
            return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})
        return types.ElicitResult(action=self.action)

    async def sample(self, _context: Any, params: Any) -> types.CreateMessageResult:
        self.sampled.append(params.model_dump(mode="json", by_alias=True, exclude_none=True))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="the answer is four"),
            model="test-model",
            stop_reason="endTurn",
        )

    async def log(self, params: Any) -> None:
        self.logged.append({"level": params.level, "logger": params.logger, "data": params.data})


async def exercise(server: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    answering = Answering("accept")
    async with Client(
        server,
        mode="legacy",
        elicitation_callback=answering.elicit,
        sampling_callback=answering.sample,
        logging_callback=answering.log,
    ) as client:
        out["mixed"] = summary(await client.call_tool("conformance.test_multiple_content_types", {}))
        out["audio"] = summary(await client.call_tool("conformance.test_audio_content", {}))
        out["sampled"] = summary(await client.call_tool("conformance.test_sampling", {"prompt": "what is 2+2?"}))
        out["elicited"] = summary(await client.call_tool("conformance.test_elicitation", {"message": "who are you?"}))
        out["logging"] = summary(await client.call_tool("conformance.test_tool_with_logging", {}))
        # Lines may trail the answer by a notification or two over HTTP.
        with anyio.move_on_after(5):
            while len(answering.logged) < 3:
                await anyio.sleep(0.05)
    out["answering"] = {"asked": answering.asked, "sampled": answering.sampled, "logged": answering.logged}

    declining = Answering("decline")
    async with Client(
        server, mode="legacy", elicitation_callback=declining.elicit, logging_callback=declining.log
    ) as client:
        out["declined"] = summary(await client.call_tool("conformance.test_elicitation", {"message": "who?"}))
        out["no_sampling"] = summary(await client.call_tool("conformance.test_sampling", {"prompt": "2+2?"}))
        await client.set_logging_level("error")
        out["quiet_logging"] = summary(await client.call_tool("conformance.test_tool_with_logging", {}))
        await anyio.sleep(0.5)
    out["declining"] = {"asked": declining.asked, "logged": declining.logged}

    async with Client(server, mode="legacy") as client:
        out["no_elicitation"] = summary(await client.call_tool("conformance.test_elicitation", {"message": "?"}))
    return out


async def run(transport: str, toolhost: str, tools_dir: str) -> dict[str, Any]:
    with anyio.fail_after(OVERALL_TIMEOUT):
        if transport == "stdio":
            env = {key: value for key, value in os.environ.items() if key in ("HOME", "PATH", "TOOLHOST_CACHE_DIR")}
            params = StdioServerParameters(command=toolhost, args=["serve", tools_dir], env=env)
            return await exercise(params)
        if transport == "http":
            async with http_server(toolhost, tools_dir) as (url, _process):
                return await exercise(url)
    raise SystemExit(f"unknown transport {transport!r} (stdio or http)")


def main() -> None:
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    _, transport, toolhost, tools_dir = sys.argv
    print(json.dumps(anyio.run(run, transport, toolhost, tools_dir), default=str))


if __name__ == "__main__":
    main()
