"""An MCP server (the official Python SDK's low-level `Server`) that lists exactly the
tools a JSON file declares, over stdio: names, descriptions and schemas as given, none
of them checked, as a server written elsewhere may list them.

    python declared_tools_server.py TOOLS.json

TOOLS.json is a list of `{"name", "description", "inputSchema"}` objects. A call of
any of them answers with its name as text.
"""

import json
import sys

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

with open(sys.argv[1], encoding="utf-8") as declared:
    TOOLS = [types.Tool.model_validate(tool) for tool in json.load(declared)]


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])


server = Server("declared-tools", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


anyio.run(main)
