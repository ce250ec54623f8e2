"""A living store: how a reader fares while other processes write, on a 10k-item store.

* **app**: another process commits a source → the app (Textual's headless harness) shows it in
  its header and its Sources table: p50 / p95 of the delay, measured from the writer's commit;
* **mcp**: ``recall`` through ``mnemoscope mcp`` over stdio (the SDK's client, a round trip) against
  the engine's own recall on the same store, alternated query by query;
* **contention**: recall p50 / p95 while another process ingests continuously (a 20-turn
  conversation at a time, as an agent remembers them), against idle rounds before and after;
* **locked**: recall while another process holds a write transaction open, against idle.

Usage::

    python3 bench/live_bench.py                   # every section, 10,000 items
    python3 bench/live_bench.py --only mcp,locked --queries 50
    python3 bench/live_bench.py --json

The store is built once (as ``bench/app_bench.py`` builds it) and kept in the user cache folder;
each section works on a fresh copy, since the writers add to it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from app_bench import QUERIES, build_store  # noqa: E402  (the same store and questions as the app bench)

SECTIONS = ("app", "mcp", "contention", "locked")

# Remember 20-turn conversations one after another until the stop file appears; print when each
# one's transaction committed (the ingest goes on after that: the index and areas take it in).
WRITER = r"""
import contextlib, os, sys, time
sys.path.insert(0, {root!r})
from mnemoscope.engine import Memory
from mnemoscope.engine.records import Item, ParsedSource, Source
mem = Memory({store!r}, client="python")
mem.warm_up()
begin, n, told = mem.store.transaction, 0, set()

@contextlib.contextmanager
def transaction():
    with begin() as conn:
        yield conn
    if not mem.store.conn.in_transaction and n not in told:
        told.add(n)
        print("committed", n, time.time(), flush=True)

mem.store.transaction = transaction
print("ready", flush=True)
while not os.path.exists({stop!r}):
    turns = [Item(text=f"Conversation {{n}}: Maya told Dan about bridge {{k}} of the trip to Porto number {{n}}.",
                  kind="turn", key=str(k), position=k, speaker="Maya" if k % 2 else "Dan") for k in range(20)]
    mem.ingest_parsed([ParsedSource(Source(name=f"agent/conversation-{{n}}", kind="conversation",
                                           content_hash=f"live-{{n}}"), turns)])
    n += 1
    time.sleep({pause})
"""

# Hold a write transaction open for a few seconds, then roll it back.
HOLDER = r"""
import sqlite3, sys, time
conn = sqlite3.connect({store!r}, isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("INSERT OR REPLACE INTO kv (key, value) VALUES ('bench.lock', 'held')")
print("held", flush=True)
time.sleep({hold})
conn.execute("ROLLBACK")
"""


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": statistics.median(ordered), "p95": ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
            "max": ordered[-1], "n": len(ordered)}


class Background:
    """A helper process (a writer, a lock holder) that runs until its stop file appears."""

    def __init__(self, script: str, store: Path, **values: Any) -> None:
        self.stop = Path(tempfile.mkdtemp(prefix="live-bench-")) / "stop"
        self.process = subprocess.Popen([sys.executable, "-c", script.format(root=str(ROOT), store=str(store),
                                                                             stop=str(self.stop), **values)],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
        first = self.process.stdout.readline()
        if not first:
            raise SystemExit(f"helper failed: {self.process.stderr.read()}")

    def lines(self) -> list[str]:
        self.stop.touch()
        out, err = self.process.communicate(timeout=120)
        if self.process.returncode:
            raise SystemExit(f"helper failed: {err}")
        return out.splitlines()


def query(k: int) -> str:
    return QUERIES[k % len(QUERIES)] + ("" if k < len(QUERIES) else f" {k}")


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def timed_with_cpu(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall and this process's CPU milliseconds: on a shared machine the CPU a recall needs
    says what following costs, whatever share of the cores the process got meanwhile."""
    cpu = time.process_time()
    wall = timed(fn)
    return wall, (time.process_time() - cpu) * 1000


# -- sections ----------------------------------------------------------------------------------


def mcp_round_trip(store: Path, n: int, strategy: str) -> dict[str, Any]:
    """The engine's recall and the MCP server's, alternated query by query on one store."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from mnemoscope.engine import Memory

    mem = Memory(store)
    mem.warm_up()

    async def run() -> tuple[list[float], list[float], list[float], list[float]]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "mnemoscope", "mcp", "--store", str(store)],
                                       cwd=str(ROOT))
        engine, server, ping, client_cpu = [], [], [], []
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for k in range(3):  # both sides load their areas and caches first
                await session.call_tool("recall", {"query": query(k), "strategy": strategy})
                mem.recall(query(k), strategy=strategy)
            for k in range(n):
                engine.append(timed(lambda: mem.recall(query(k), strategy=strategy)))
                started, cpu = time.perf_counter(), time.process_time()
                result = await session.call_tool("recall", {"query": query(k), "strategy": strategy})
                server.append((time.perf_counter() - started) * 1000)
                client_cpu.append((time.process_time() - cpu) * 1000)
                if result.is_error:
                    raise SystemExit(result.content[0].text)
                started = time.perf_counter()
                await session.send_ping()  # the transport alone: two processes, a pipe each way
                ping.append((time.perf_counter() - started) * 1000)
        return engine, server, ping, client_cpu

    engine, server, ping, client_cpu = asyncio.run(run())
    inside = asyncio.run(in_process(mem, n, strategy))
    mem.close()
    return {"strategy": strategy, "engine_ms": percentiles(engine), "mcp_ms": percentiles(server),
            "ping_ms": percentiles(ping), "client_cpu_ms": percentiles(client_cpu),
            "added_p50_ms": statistics.median(server) - statistics.median(engine),
            "server_added_p50_ms": inside}


async def in_process(mem: Any, n: int, strategy: str) -> float:
    """The server's own share of a round trip, without the transport: its tool call (validation,
    the worker thread, the answer's conversion) against the engine's recall, alternated."""
    from mnemoscope.app.mcp_server import build_server

    server = build_server(mem)
    engine, tool = [], []
    for k in range(n):
        engine.append(timed(lambda: mem.recall(query(k), strategy=strategy)))
        started = time.perf_counter()
        await server.call_tool("recall", {"query": query(k), "strategy": strategy})
        tool.append((time.perf_counter() - started) * 1000)
    return statistics.median(tool) - statistics.median(engine)


def contention(store: Path, n: int, strategy: str, refresh_interval: float | None = None) -> dict[str, Any]:
    """Recall idle; while another process remembers conversations non-stop into *another* store
    (the same CPU taken, nothing to follow: on a shared machine this separates the cost of
    following a writer from the cost of sharing the CPU); while it does so into this store; and
    idle again. The reader takes in other processes' commits before a recall at most every
    ``refresh_interval`` (the store's setting by default; 0: before every recall)."""
    from mnemoscope.engine import Memory

    other = store.with_name(store.stem + "-other.db")
    shutil.copy(store, other)
    mem = Memory(store, **({} if refresh_interval is None else {"refresh_interval": refresh_interval}))
    mem.warm_up()
    for k in range(3):
        mem.recall(query(k), strategy=strategy)

    cpu: dict[str, list[float]] = {"idle": [], "other_store": [], "ingesting": []}

    def recalls(phase: str) -> list[float]:
        timings = [timed_with_cpu(lambda: mem.recall(query(k), strategy=strategy)) for k in range(n)]
        cpu[phase] += [c for _, c in timings]
        return [w for w, _ in timings]

    idle = recalls("idle")
    elsewhere = Background(WRITER, other, pause=0.0)
    control = recalls("other_store")
    elsewhere.lines()
    writer = Background(WRITER, store, pause=0.0)
    busy = recalls("ingesting")
    commits = sum(line.startswith("committed") for line in writer.lines())
    mem.refresh()
    followed = mem.index.n_items
    idle += recalls("idle")
    mem.close()
    return {"strategy": strategy, "refresh_interval_s": mem.settings.refresh_interval, "idle_ms": percentiles(idle),
            "other_store_ms": percentiles(control), "ingesting_ms": percentiles(busy),
            "cpu_ms": {phase: percentiles(values) for phase, values in cpu.items()},
            "sources_committed_meanwhile": commits, "items_followed": followed,
            "p95_ratio": percentiles(busy)["p95"] / percentiles(idle)["p95"],
            "p95_ratio_to_other_store": percentiles(busy)["p95"] / percentiles(control)["p95"]}


def locked(store: Path, n: int, strategies: list[str], hold: float = 3.0) -> dict[str, Any]:
    """Recall while another process holds the write lock (for ``hold`` seconds), against idle."""
    from mnemoscope.engine import Memory

    mem = Memory(store)
    mem.warm_up()
    out: dict[str, Any] = {}
    for strategy in strategies:
        for k in range(3):
            mem.recall(query(k), strategy=strategy)
        idle = [timed(lambda: mem.recall(query(k), strategy=strategy)) for k in range(n)]
        holder = Background(HOLDER, store, hold=hold)
        held, errors = [], []
        while holder.process.poll() is None:
            try:
                held.append(timed(lambda: mem.recall(query(len(held)), strategy=strategy)))
            except Exception as exc:  # noqa: BLE001 - a recall refused behind the lock is the finding
                errors.append(str(exc).splitlines()[0])
        holder.lines()
        out[strategy] = {"idle_ms": percentiles(idle), "while_held_ms": percentiles(held), "errors": errors[:3],
                         "hold_s": hold}
    mem.close()
    return out


# -- the command -------------------------------------------------------------------------------


def main() -> None:
    from platformdirs import user_cache_path

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--store", type=Path, default=None, help="store to copy (built if missing)")
    parser.add_argument("--queries", type=int, default=100, help="recalls per measure")
    parser.add_argument("--commits", type=int, default=40, help="commits the app must show (section app)")
    parser.add_argument("--strategy", default="fused")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated: {', '.join(SECTIONS)}")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown section {unknown[0]!r}; choose from {', '.join(SECTIONS)}")
    source = args.store or user_cache_path("mnemoscope") / f"app-bench-{args.items}.db"
    if not source.exists():
        print(f"building a {args.items:,}-item store at {source} …", file=sys.stderr, flush=True)
        build_store(source, args.items)

    report: dict[str, Any] = {"items": args.items, "store": str(source), "load_average": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="live-bench-") as tmp:
        for section in sections:
            store = Path(tmp) / f"{section}.db"
            shutil.copy(source, store)
            if section == "app":
                from live_app import app_follows  # noqa: PLC0415  (Textual only when this section runs)

                report["app"] = app_follows(store, args.commits, WRITER, Background)
            elif section == "mcp":
                report["mcp"] = mcp_round_trip(store, args.queries, args.strategy)
            elif section == "contention":
                report["contention"] = [contention(store, args.queries, args.strategy),
                                        contention(store, args.queries, args.strategy, refresh_interval=0.0)]
            else:
                report["locked"] = locked(store, max(10, args.queries // 2), [args.strategy, "hybrid"])
    report["load_average_after"] = os.getloadavg()
    print(json.dumps(report, indent=1) if args.json else text(report))


def text(report: dict[str, Any]) -> str:
    def ms(p: dict[str, float]) -> str:
        return f"p50 {p['p50']:.1f} / p95 {p['p95']:.1f} ms"

    lines = [f"Mnemoscope live bench: {report['items']:,} items; load average {report['load_average'][0]:.1f} → "
             f"{report['load_average_after'][0]:.1f}"]
    if "app" in report:
        a = report["app"]
        lines.append(f"  another process commits → the app's header and Sources show it: p50 {a['delay_s']['p50']:.2f} s / "
                     f"p95 {a['delay_s']['p95']:.2f} s, the Sources table p50 {a['sources_table_delay_s']['p50']:.2f} s / "
                     f"p95 {a['sources_table_delay_s']['p95']:.2f} s ({a['delay_s']['n']} commits); a poll tick at "
                     f"{a['tick_store_items']:,} items: p50 {a['tick_us']['p50']:.0f} µs, p95 {a['tick_us']['p95']:.0f} µs")
    if "mcp" in report:
        m = report["mcp"]
        lines.append(f"  MCP recall round trip over stdio ({m['strategy']}): {ms(m['mcp_ms'])}; engine recall {ms(m['engine_ms'])}; "
                     f"added at p50 {m['added_p50_ms']:.1f} ms, of which the server's own work {m['server_added_p50_ms']:.1f} ms "
                     f"(in process) and the pipes, the client's checks and two processes' scheduling the rest (a ping: p50 "
                     f"{m['ping_ms']['p50']:.1f} ms; the client's CPU per call: p50 {m['client_cpu_ms']['p50']:.1f} ms)")
    for c in report.get("contention", []):
        lines.append(f"  recall ({c['strategy']}, following at most every {c['refresh_interval_s']:g} s) while another "
                     f"process ingests into this store: {ms(c['ingesting_ms'])}; into another store {ms(c['other_store_ms'])}; "
                     f"idle {ms(c['idle_ms'])}; p95 ratio {c['p95_ratio']:.2f} to idle, {c['p95_ratio_to_other_store']:.2f} "
                     f"to another store ({c['sources_committed_meanwhile']} sources committed meanwhile, "
                     f"{c['items_followed']:,} items followed); CPU per recall: ingesting {ms(c['cpu_ms']['ingesting'])}, "
                     f"idle {ms(c['cpu_ms']['idle'])}")
    if "locked" in report:
        for strategy, r in report["locked"].items():
            lines.append(f"  recall ({strategy}) while another process holds a write transaction for {r['hold_s']:g} s: "
                         f"{ms(r['while_held_ms'])}, max {r['while_held_ms']['max']:.1f} ms over {r['while_held_ms']['n']} "
                         f"recalls; idle {ms(r['idle_ms'])}" + (f"; errors: {r['errors']}" if r["errors"] else ""))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
