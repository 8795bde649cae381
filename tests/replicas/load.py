"""Client load on toolhost replicas behind a balancer, with the official MCP Python SDK
(`mcp` 2.x); tests/e2e/replicas.rs starts the replicas and HAProxy, drives this script
and asserts what it prints.

    python load.py BALANCER_URL TOKEN WORKERS REPLICA_URL...

1. Approval across replicas: a 2026-07-28 client whose HTTP requests go to the replicas
   in turn calls `calc.divide`, which needs approval. The question (`input_required`)
   comes from one replica and the retry carrying the answer reaches the next one, which
   takes it only if both seal questions with the same key.
2. Load: WORKERS clients through the balancer, alternately on the 2026-07-28 revision (no
   session) and on a session (`legacy`: initialize, then the session id), each writing a
   key of its own per call with `app.run` until a line `stop` arrives on stdin. A call
   that fails (a broken connection, a session its new replica does not know, an error
   answer) is made again on a new client until it succeeds, within a minute; each such
   retry is counted. Writing a key is idempotent, so a call that ran but whose answer
   was lost may run twice; a key still being retried when `stop` arrives is reported
   as unsettled (it may or may not have been written).

Prints `{"progress": N}` lines while calls complete, then one `{"summary": …}` line.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp.types as types
from mcp.client.client import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

CALL_TIMEOUT = 20.0
GIVE_UP_AFTER = 60.0
PROGRESS_EVERY = 50


def log(message: dict[str, Any]) -> None:
    print(json.dumps(message), flush=True)


class Alternating(httpx2.AsyncBaseTransport):
    """Sends each request to the next replica in turn, and records which answered what."""

    def __init__(self, replicas: list[str]) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.replicas = [httpx2.URL(url) for url in replicas]
        self.turn = 0
        self.answered_by: list[str] = []
        self.sent: list[tuple[dict[str, str], bytes]] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        replica = self.replicas[self.turn % len(self.replicas)]
        self.turn += 1
        request.url = request.url.copy_with(host=replica.host, port=replica.port)
        self.answered_by.append(f"{replica.host}:{replica.port}")
        body = await request.aread()
        self.sent.append((dict(request.headers), body))
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def approve(_context: Any, _params: Any) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"approve": True})


async def approval_across_replicas(replicas: list[str], token: str) -> dict[str, Any]:
    transport = Alternating(replicas)
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, transport=transport, timeout=30.0)
    async with http:
        server = streamable_http_client(replicas[0], http_client=http)
        async with Client(server, mode="2026-07-28", elicitation_callback=approve) as client:
            result = await client.call_tool("calc.divide", {"dividend": 6, "divisor": 3})
        # The retry that carried the answer, sent again as it was to every replica: an
        # answer approves one call, wherever a replay lands.
        retried = [(headers, body) for headers, body in transport.sent if b"inputResponses" in body]
        replays = []
        for headers, body in retried[-1:]:
            for replica in replicas:
                headers = {k: v for k, v in headers.items() if k.lower() not in ("host", "content-length")}
                answer = await http.post(replica, content=body, headers=headers)
                replays.append(answer.text[:2000])
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "answered_by": transport.answered_by,
        "replays": replays,
    }


class Worker:
    """One client of the load: a key per call, retried on a new client until written."""

    def __init__(self, index: int, mode: str, url: str, token: str, stats: "Stats") -> None:
        self.index, self.mode, self.url, self.token, self.stats = index, mode, url, token, stats

    async def run(self, stop: threading.Event) -> None:
        n = 0
        first_try: float | None = None
        while not stop.is_set():
            try:
                # A client per connection: a call that fails ends it, the retry opens another.
                async with AsyncExitStack() as stack:
                    http = await stack.enter_async_context(
                        create_mcp_http_client(headers={"Authorization": f"Bearer {self.token}"})
                    )
                    server = streamable_http_client(self.url, http_client=http, terminate_on_close=False)
                    client = await stack.enter_async_context(Client(server, mode=self.mode))
                    while not stop.is_set():
                        first_try = first_try or time.monotonic()
                        await self.write(client, f"w{self.index}-{n}", first_try)
                        n, first_try = n + 1, None
            except BaseException as error:  # noqa: BLE001 - every failure of a call is retried
                if isinstance(error, (KeyboardInterrupt, SystemExit)):
                    raise
                self.stats.exception(error)
                self.stats.retries[self.mode] += 1
                if first_try is not None and time.monotonic() - first_try > GIVE_UP_AFTER:
                    self.stats.failed.append(f"w{self.index}-{n}")
                    n, first_try = n + 1, None
                await anyio.sleep(0.05)
        if first_try is not None:
            # Stopped while retrying: the last try may have written the key unanswered.
            self.stats.unsettled.append(f"w{self.index}-{n}")

    async def write(self, client: Client, key: str, first_try: float) -> None:
        """Writes `key`; raises when the call did not succeed."""
        arguments = {"ops": [{"op": "set", "bucket": "calls", "key": key, "value": {"worker": self.index}}]}
        with anyio.fail_after(CALL_TIMEOUT):
            result = await client.call_tool("app.run", arguments)
        results = (result.structured_content or {}).get("results", [])
        if result.is_error or not results or "ok" not in results[0]:
            self.stats.error_answer(key, str(result.content)[:300])
            raise RuntimeError(f"{key}: an error answer")
        self.stats.written(key, self.mode, time.monotonic() - first_try)


class Stats:
    def __init__(self) -> None:
        self.keys: list[str] = []
        self.calls = {"2026-07-28": 0, "legacy": 0}
        self.retries = {"2026-07-28": 0, "legacy": 0}
        self.latencies: list[float] = []
        self.failed: list[str] = []
        self.unsettled: list[str] = []
        self.error_answers: list[str] = []
        self.exceptions: dict[str, int] = {}

    def written(self, key: str, mode: str, took: float) -> None:
        self.keys.append(key)
        self.calls[mode] += 1
        self.latencies.append(took)
        if len(self.keys) % PROGRESS_EVERY == 0:
            log({"progress": len(self.keys)})

    def error_answer(self, key: str, text: str) -> None:
        self.error_answers.append(f"{key}: {text}")

    def exception(self, error: BaseException) -> None:
        kind = type(error).__name__
        if self.exceptions.get(kind, 0) < 3:  # the first few of each kind, for whoever reads the log
            print(f"load.py: {kind}: {error!r}"[:500], file=sys.stderr, flush=True)
        self.exceptions[kind] = self.exceptions.get(kind, 0) + 1

    def summary(self) -> dict[str, Any]:
        ordered = sorted(self.latencies)
        at = lambda p: round(ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000, 2) if ordered else None
        return {
            "keys": self.keys,
            "calls": self.calls,
            "retries": self.retries,
            "failed": self.failed,
            "unsettled": self.unsettled,
            "error_answers": self.error_answers[:20],
            "exceptions": self.exceptions,
            "p50_ms": at(0.50),
            "p99_ms": at(0.99),
            "max_ms": round(ordered[-1] * 1000, 2) if ordered else None,
        }


def watch_stdin(stop: threading.Event) -> None:
    for line in sys.stdin:
        if line.strip() == "stop":
            break
    stop.set()


async def run(balancer: str, token: str, workers: int, replicas: list[str]) -> dict[str, Any]:
    approval = await approval_across_replicas(replicas, token)
    log({"approval": approval})
    stats = Stats()
    stop = threading.Event()
    threading.Thread(target=watch_stdin, args=(stop,), daemon=True).start()
    started = time.monotonic()
    async with anyio.create_task_group() as group:
        for index in range(workers):
            mode = "2026-07-28" if index % 2 == 0 else "legacy"
            group.start_soon(Worker(index, mode, balancer, token, stats).run, stop)
    summary = stats.summary()
    summary["seconds"] = round(time.monotonic() - started, 2)
    return summary


def main() -> None:
    if len(sys.argv) < 5:
        raise SystemExit(__doc__)
    balancer, token, workers, replicas = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    log({"summary": anyio.run(run, balancer, token, workers, replicas)})


if __name__ == "__main__":
    main()
