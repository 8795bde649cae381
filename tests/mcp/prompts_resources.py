"""Drives a toolbox's prompts, resources and completions through `toolhost serve` (stdio)
with the official MCP Python SDK (`mcp` 2.x `Client`); prints what it saw as one JSON
object for tests/e2e/prompts_resources.rs.

    python prompts_resources.py TOOLHOST_BIN TOOLS_DIR

TOOLS_DIR holds the `conformance` example toolbox with its manifest, which declares the
suite's fixture prompts and resources. Two clients connect: one in the session protocol
(`legacy`) subscribes to `test://watched-resource`, then this script edits the manifest
and waits for `notifications/resources/updated`; one in the stateless protocol
(2026-07-28) listens for the same change with `subscriptions/listen`.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp.shared.exceptions import MCPError

OVERALL_TIMEOUT = 120.0
WATCHED = "test://watched-resource"


def dump(model: Any) -> Any:
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def error_of(request: Any) -> dict[str, Any]:
    try:
        await request
    except MCPError as error:
        return {"code": error.error.code, "message": error.error.message}
    return {"code": None, "message": "no error"}


def edit_manifest(tools_dir: str, old: str, new: str) -> None:
    """Replaces the manifest at once, as a deployment does (a rename, never a half-written file)."""
    manifest = Path(tools_dir) / "conformance" / "conformance.toml"
    edited = manifest.with_suffix(".edited")
    edited.write_text(manifest.read_text().replace(old, new))
    os.replace(edited, manifest)


async def session_client(server: StdioServerParameters, tools_dir: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    updated = anyio.Event()
    notified: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            notified.append(f"updated {message.params.uri}")
            updated.set()
        elif isinstance(message, (types.ResourceListChangedNotification, types.PromptListChangedNotification)):
            notified.append(message.method)

    async with Client(server, mode="legacy", message_handler=on_message, cache=None) as client:
        capabilities = client.server_capabilities
        out["capabilities"] = dump(capabilities)
        out["prompts"] = dump(await client.list_prompts())
        out["prompt"] = dump(
            await client.get_prompt(
                "conformance.test_prompt_with_arguments", {"arg1": "{{arg2}}", "arg2": "two"}
            )
        )
        out["image_prompt"] = dump(await client.get_prompt("conformance.test_prompt_with_image"))
        out["missing_argument"] = await error_of(client.get_prompt("conformance.test_prompt_with_arguments", {}))
        out["unknown_prompt"] = await error_of(client.get_prompt("conformance.no_such_prompt"))
        prompt_ref = types.PromptReference(type="ref/prompt", name="conformance.test_prompt_with_arguments")
        out["completed"] = dump(await client.complete(prompt_ref, {"name": "arg1", "value": "TE"}))
        out["resources"] = dump(await client.list_resources())
        out["templates"] = dump(await client.list_resource_templates())
        out["text"] = dump(await client.read_resource("test://static-text"))
        out["binary"] = dump(await client.read_resource("test://static-binary"))
        out["template"] = dump(await client.read_resource("test://template/a%20b/data"))
        out["unknown_resource"] = await error_of(client.read_resource("test://nothing-here"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out["unknown_subscription"] = await error_of(client.subscribe_resource("test://nothing-here"))
            await client.subscribe_resource(WATCHED)
        # What the first load announced arrived long ago; from here on, only the edit's notices.
        notified.clear()
        edit_manifest(tools_dir, "Watched resource content.", "Watched resource content, edited.")
        with anyio.move_on_after(20):
            await updated.wait()
        out["notified"] = notified
        out["watched"] = dump(await client.read_resource(WATCHED))
    return out


async def stateless_client(server: StdioServerParameters, tools_dir: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with Client(server, cache=None) as client:
        out["protocol"] = client.protocol_version
        out["watched"] = dump(await client.read_resource(WATCHED))
        async with client.listen(resource_subscriptions=[WATCHED], prompts_list_changed=True) as subscription:
            edit_manifest(tools_dir, "Watched resource content, edited.", "Watched resource content, edited twice.")
            events = []
            with anyio.move_on_after(20):
                async for event in subscription:
                    events.append(repr(event))
                    break
            out["events"] = events
        out["watched_after"] = dump(await client.read_resource(WATCHED))
    return out


async def run(toolhost: str, tools_dir: str) -> dict[str, Any]:
    env = {key: value for key, value in os.environ.items() if key in ("HOME", "PATH", "TOOLHOST_CACHE_DIR")}
    server = StdioServerParameters(command=toolhost, args=["serve", tools_dir], env=env)
    with anyio.fail_after(OVERALL_TIMEOUT):
        return {
            "session": await session_client(server, tools_dir),
            "stateless": await stateless_client(server, tools_dir),
        }


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    _, toolhost, tools_dir = sys.argv
    print(json.dumps(anyio.run(run, toolhost, tools_dir), default=str))


if __name__ == "__main__":
    main()
