"""What toolhost adds to a call of an upstream MCP server, measured with the official
Python SDK client in one run:

    python upstream_overhead.py TOOLHOST CALLS

1. `add` called CALLS times on `upstream_server.py` directly over stdio;
2. the same tool called CALLS times as `py.add` through `toolhost serve` over stdio,
   with `upstream_server.py` as its `[[upstream]]` (the whole pipeline: policy, input
   and output validation, limits, audit, then the upstream call);
3. the time from the upstream's `notifications/tools/list_changed` (sent by its `grow`
   tool before it answers) to toolhost's client hearing `list_changed`, repeated.

Prints one JSON object with p50/p99 in microseconds for both paths and the overhead.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

HERE = Path(__file__).resolve().parent
SERVER = HERE / "upstream_server.py"
WARM_UP = 50


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def summary(samples: list[float]) -> dict[str, float]:
    return {
        "p50_us": round(percentile(samples, 0.50), 1),
        "p99_us": round(percentile(samples, 0.99), 1),
        "mean_us": round(statistics.fmean(samples), 1),
    }


async def timed_calls(session: ClientSession, name: str, calls: int) -> list[float]:
    for _ in range(WARM_UP):
        await session.call_tool(name, {"a": 1, "b": 2})
    samples = []
    for i in range(calls):
        started = time.perf_counter()
        result = await session.call_tool(name, {"a": i, "b": 1})
        samples.append((time.perf_counter() - started) * 1e6)
        if result.is_error or result.structured_content != {"result": i + 1}:
            raise SystemExit(f"{name} answered {result}")
    return samples


class ListChanged:
    def __init__(self) -> None:
        self.heard = anyio.Event()
        self.at = 0.0

    async def handle(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.at = time.perf_counter()
            self.heard.set()


async def run(toolhost: str, calls: int) -> dict[str, Any]:
    events = tempfile.NamedTemporaryFile(prefix="upstream-events-", delete=False).name
    env = {key: value for key, value in os.environ.items() if key in ("HOME", "PATH")}
    direct = StdioServerParameters(command=sys.executable, args=[str(SERVER), "stdio", events], env=env)
    async with stdio_client(direct) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            direct_samples = await timed_calls(session, "add", calls)

    with tempfile.TemporaryDirectory() as work:
        config = Path(work) / "toolhost.toml"
        config.write_text(
            "[[upstream]]\nname = \"py\"\n"
            f"command = {json.dumps(sys.executable)}\n"
            f"args = [{json.dumps(str(SERVER))}, \"stdio\", {json.dumps(events)}]\n"
            "env = [\"HOME\"]\n"
            # Confined as by default, granted what the Python server reads and writes.
            f"sandbox = {{ read = {json.dumps(sorted({sys.prefix, sys.base_prefix, str(HERE)}))}, "
            f"write = {json.dumps([os.path.dirname(events)])} }}\n"
        )
        through = StdioServerParameters(
            command=toolhost,
            args=["serve", "--config", str(config), str(Path(work) / "no-tools")],
            env={**env, "TOOLHOST_DATA_DIR": str(Path(work) / "data")},
            cwd=work,
        )
        heard = ListChanged()
        async with stdio_client(through) as (read, write):
            async with ClientSession(read, write, message_handler=heard.handle) as session:
                await session.initialize()
                with anyio.fail_after(30):
                    while not any(tool.name == "py.add" for tool in (await session.list_tools()).tools):
                        await anyio.sleep(0.05)
                through_samples = await timed_calls(session, "py.add", calls)
                # `grow` sends list_changed upstream, then answers; toolhost re-lists
                # the server and tells its own client.
                list_changed_ms = []
                for _ in range(5):
                    heard.heard = anyio.Event()
                    started = time.perf_counter()
                    await session.call_tool("py.grow", {})
                    with anyio.fail_after(10):
                        await heard.heard.wait()
                    list_changed_ms.append(round((heard.at - started) * 1e3, 2))
    os.unlink(events)
    direct_summary, through_summary = summary(direct_samples), summary(through_samples)
    return {
        "calls": calls,
        "direct": direct_summary,
        "through_toolhost": through_summary,
        "overhead_p50_us": round(through_summary["p50_us"] - direct_summary["p50_us"], 1),
        "overhead_p99_us": round(through_summary["p99_us"] - direct_summary["p99_us"], 1),
        "grow_call_to_client_list_changed_ms": list_changed_ms,
    }


def main() -> None:
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    toolhost = str(Path(sys.argv[1]).resolve())
    print(json.dumps(anyio.run(run, toolhost, int(sys.argv[2]))))


if __name__ == "__main__":
    main()
