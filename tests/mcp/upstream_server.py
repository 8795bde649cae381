"""An MCP server written with the official Python SDK (`MCPServer`, FastMCP before 2.x),
for toolhost's upstream tests: toolhost connects to it as a client and serves its tools.

    python upstream_server.py stdio EVENTS
    python upstream_server.py http EVENTS PORT

The server appends a line to the file EVENTS when it starts (`started`), for some tool
calls (`called NAME`) and for every cancelled `slow` (`cancelled slow`): what toolhost
did, seen from upstream.
(Arguments, not the environment: toolhost gives a child only the variables listed.)
"""

import asyncio
import base64
import json
import os
import urllib.parse
import sys
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("upstream-test")


def event(line: str) -> None:
    with open(sys.argv[2], "a", encoding="utf-8") as events:
        events.write(line + "\n")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, idempotentHint=True))
def add(a: int, b: int) -> int:
    """Adds two integers."""
    event("called add")
    return a + b


@server.tool(structured_output=False)
def echo(text: str) -> str:
    """Says the text back, as text content only."""
    event("called echo")
    return text


@server.tool()
def fail(message: str) -> str:
    """Always fails with the message (a ToolError: the SDK passes its text on)."""
    raise ToolError(message)


@server.tool()
def wrong_output() -> int:
    """Declares an integer and returns a string."""
    return "not a number"  # type: ignore[return-value]


@server.tool()
def lies() -> dict[str, Any]:
    """Declares `{"value": number}` and returns a string there."""
    return {"value": "not a number"}


# The SDK checks a return value against the type it derived the schema from, not
# against the schema it lists: a server whose listed schema is not its code's (edited
# by hand, generated elsewhere) sends what its code returns. toolhost checks the schema.
server._tool_manager.get_tool("lies").fn_metadata.output_schema = {
    "type": "object",
    "properties": {"value": {"type": "number"}},
    "required": ["value"],
}


@server.tool()
async def slow(seconds: float) -> str:
    """Sleeps, then answers; says when it was cancelled."""
    event("called slow")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        event("cancelled slow")
        raise
    return "done"


@server.tool()
async def steps(count: int, ctx: Context) -> str:
    """Reports progress `count` times (in halves: 0.5, 1.0, 1.5, ...), then answers."""
    for step in range(1, count + 1):
        await ctx.report_progress(step / 2, count / 2, f"step {step} of {count}")
        await asyncio.sleep(0.15)
    return f"{count} steps"


@server.tool()
def environment() -> list[str]:
    """The names of the server's environment variables."""
    return sorted(os.environ)


@server.tool()
def variable(name: str) -> str:
    """The value of one of the server's environment variables ("" when it is not set)."""
    return os.environ.get(name, "")


@server.tool()
def header(name: str, ctx: Context) -> str:
    """The value of one header of the HTTP request that made this call ("" on stdio)."""
    request = ctx.request_context.request
    if request is None:
        return ""
    value = request.headers.get(name, "")
    event(f"header {name}: {value}")
    return value


def quoted_authorization(ctx: Context) -> str:
    """The request's Authorization header in each form a careless server may quote it."""
    request = ctx.request_context.request
    value = request.headers.get("authorization", "") if request is not None else ""
    escaped = json.dumps(value).replace("/", "\\/")
    line = base64.b64encode(f"Authorization: {value}\r\n".encode()).decode()
    return f"you sent {value} {escaped} {urllib.parse.quote(value, safe='')} {line}"


@server.tool()
def echo_authorization(ctx: Context) -> str:
    """Answers with the request's Authorization header, quoted in several forms."""
    return quoted_authorization(ctx)


@server.tool()
def refuse_authorization(ctx: Context) -> str:
    """Fails quoting the request's Authorization header."""
    raise ToolError(quoted_authorization(ctx))


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `extra` and tells the client its tools changed."""

    def extra() -> str:
        """A tool added at run time."""
        return "extra"

    server.add_tool(extra)
    await ctx.request_context.session.send_tool_list_changed()
    return "grown"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool()
def crash() -> str:
    """Ends the server's process at once."""
    os._exit(3)


if __name__ == "__main__":
    event("started")
    if sys.argv[1] == "stdio":
        server.run("stdio")
    else:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[3]))
