"""What the bearer token of ``mnemoscope mcp --http`` costs a request.

Every HTTP request passes :class:`app.mcp_http.BearerOnly` (one Authorization header, compared
in constant time) before the SDK sees it. Two measures, each alternated A B B A against the same
path without the check:

* **check**: the ASGI call alone, through ``BearerOnly`` to an app that answers at once, against
  that app called directly, with the headers a real client sends (µs per request);
* **recall**: ``recall`` through the SDK's own HTTP client against two servers on copies of the
  demo store, one behind the check (the token sent) and one without it (ms per round trip).

Usage::

    python3 bench/mcp_token_cost.py                 # both, 20 rounds of recall
    python3 bench/mcp_token_cost.py --rounds 50 --json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUERIES = ("how do I know the dough is ready", "what did Maya adopt", "alpine weather", "what is attention",
           "retrieval augmented generation", "where does Maya work")

# One server on STORE at PORT, behind the token when one is given (argv: store, port, token or "").
SERVER = r"""
import sys
sys.path.insert(0, {root!r})
import anyio, uvicorn
from mnemoscope.engine import Memory
from mnemoscope.app.mcp_server import build_server
from mnemoscope.app.mcp_http import HOST, BearerOnly
store, port, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
server = build_server(Memory(store))
app = server.streamable_http_app(host=HOST)
app = BearerOnly(app, token) if token else app
anyio.run(uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning")).serve)
"""


def check_cost(rounds: int, calls: int) -> dict[str, float]:
    """µs per request through BearerOnly and directly, medians of ``rounds`` A B B A rounds."""
    from mnemoscope.app.mcp_http import BearerOnly

    token = secrets.token_urlsafe(32)

    async def answer(scope: Any, receive: Any, send: Any) -> None:
        return None

    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [
        (b"host", b"127.0.0.1:8000"), (b"accept", b"application/json, text/event-stream"),
        (b"content-type", b"application/json"), (b"user-agent", b"python-httpx/0.28"),
        (b"mcp-protocol-version", b"2025-06-18"), (b"mcp-session-id", secrets.token_hex(16).encode()),
        (b"authorization", f"Bearer {token}".encode()), (b"content-length", b"120")]}
    guarded = BearerOnly(answer, token)

    async def timed(app: Any) -> float:
        started = time.perf_counter()
        for _ in range(calls):
            await app(scope, None, None)
        return (time.perf_counter() - started) / calls * 1e6

    async def run() -> dict[str, list[float]]:
        out: dict[str, list[float]] = {"token": [], "none": []}
        for _ in range(rounds):
            for name in ("token", "none", "none", "token"):
                out[name].append(await timed(guarded if name == "token" else answer))
        return out

    times = asyncio.run(run())
    return {name: statistics.median(values) for name, values in times.items()}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(store: Path, token: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(root=str(ROOT)), str(store), str(port), token],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, port
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start: {server.stderr.read().decode()[-2000:]}")
            time.sleep(0.2)


async def recall_cost(stores: dict[str, Path], rounds: int) -> dict[str, list[float]]:
    """ms per recall round trip on each server, A B B A by round, every query each time."""
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    token = secrets.token_urlsafe(32)
    servers = {name: start(store, token if name == "token" else "") for name, store in stores.items()}
    times: dict[str, list[float]] = {name: [] for name in servers}
    try:
        sessions = {}
        async with AsyncExitStack() as stack:
            for name, (_, port) in servers.items():
                client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"} if name == "token" else {},
                                            timeout=60)
                await stack.enter_async_context(client)
                read, write = await stack.enter_async_context(
                    streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=client))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                for query in QUERIES:  # warm: the areas loaded, the caches filled
                    await session.call_tool("recall", {"query": query})
                sessions[name] = session
            for _ in range(rounds):
                for name in ("token", "none", "none", "token"):
                    for query in QUERIES:
                        started = time.perf_counter()
                        result = await sessions[name].call_tool("recall", {"query": query})
                        times[name].append((time.perf_counter() - started) * 1000)
                        assert not result.is_error, result
    finally:
        for server, _ in servers.values():
            server.terminate()
            server.wait(timeout=30)
    return times


def demo_stores(folder: Path) -> dict[str, Path]:
    """Two copies of a store of the demo content, one per server."""
    from mnemoscope.engine import Memory

    first = folder / "token.db"
    with Memory(first) as mem:
        mem.ingest([ROOT / "assets" / "demo"])
    second = folder / "none.db"
    shutil.copyfile(first, second)
    return {"token": first, "none": second}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    check = check_cost(rounds=25, calls=20_000)
    with tempfile.TemporaryDirectory(prefix="mnemoscope-token-") as tmp:
        os.chmod(tmp, 0o700)
        times = asyncio.run(recall_cost(demo_stores(Path(tmp)), args.rounds))
    recall = {name: {"p50_ms": statistics.median(values), "p95_ms": statistics.quantiles(values, n=20)[-1],
                     "n": len(values)} for name, values in times.items()}
    report = {"check_us": check, "recall": recall}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"check: {check['token']:.2f} µs per request through BearerOnly, {check['none']:.2f} µs without"
              f" (+{check['token'] - check['none']:.2f} µs)")
        for name, figures in recall.items():
            print(f"recall over HTTP, {'with the token' if name == 'token' else 'no check'}: p50 {figures['p50_ms']:.2f} ms,"
                  f" p95 {figures['p95_ms']:.2f} ms ({figures['n']} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
