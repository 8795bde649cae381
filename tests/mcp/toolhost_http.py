"""Starts `toolhost serve DIR --http 127.0.0.1:0` for the SDK clients in this directory
(`client.py`, `approval.py`) and stops it afterwards."""

from __future__ import annotations

import re
import subprocess
import threading
from contextlib import asynccontextmanager

import anyio


@asynccontextmanager
async def http_server(toolhost: str, tools_dir: str):
    """Starts `toolhost serve DIR --http 127.0.0.1:0` and yields its endpoint URL."""
    process = subprocess.Popen(
        [toolhost, "serve", tools_dir, "--http", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    found = threading.Event()
    url: list[str] = []
    stderr_lines: list[str] = []

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            stderr_lines.append(line.rstrip("\n"))
            match = re.search(r"(http://\S+)", line)
            if match and not found.is_set():
                url.append(match.group(1))
                found.set()
        found.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        await anyio.to_thread.run_sync(lambda: found.wait(60))
        if not url:
            raise RuntimeError(f"the server printed no address; stderr: {stderr_lines}")
        yield url[0], process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
