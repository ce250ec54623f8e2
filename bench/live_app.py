"""The ``app`` section of ``bench/live_bench.py``: another process commits → the app shows it.

The app runs under Textual's headless harness on the Sources screen of a 10k-item store. A
writer process remembers one 20-turn conversation a second and prints the wall-clock time of each
commit; the app's side notes when its header counts, and its Sources table, first show each new
source. Also the cost of one poll tick (``Services.changed_elsewhere``) on a store of 1M items,
whose rows are written with plain SQL (the tick reads none of them: it asks SQLite's
``PRAGMA data_version``).
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from platformdirs import user_cache_path


def million_item_store(n_items: int = 1_000_000) -> Path:
    """A store with ``n_items`` item rows (built once, kept in the user cache folder)."""
    from mnemoscope.engine import Memory

    path = user_cache_path("mnemoscope") / f"live-bench-{n_items}.db"
    if path.exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    Memory(path, extensions=False).close()  # the schema
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO sources (name, kind, content_hash, created_at, updated_at) VALUES ('rows', 'document', 'x', 0, 0)")
        conn.execute("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
                     "INSERT INTO items (source_id, key, position, kind, text) SELECT 1, i, i, 'chunk', 'row ' || i FROM n",
                     (n_items,))
    return path


def tick_cost(store: Path, n: int = 2000) -> dict[str, float]:
    """Microseconds one look at the store costs the app's UI thread."""
    from mnemoscope.engine.store.activity import ChangeWatch

    watch = ChangeWatch(store)
    costs = []
    for _ in range(n):
        started = time.perf_counter()
        watch.changed()
        costs.append((time.perf_counter() - started) * 1e6)
    watch.close()
    costs.sort()
    return {"p50": statistics.median(costs), "p95": costs[int(0.95 * len(costs))], "n": n}


def warming(app: Any) -> bool:
    return any(w.group == "warm-up" and not w.is_finished for w in app.workers)


def app_follows(store: Path, commits: int, writer_script: str, background: Callable[..., Any]) -> dict[str, Any]:
    from textual.widgets import DataTable

    from mnemoscope.app.services import Services
    from mnemoscope.app.tui import make_app

    shown_header: dict[int, float] = {}
    shown_table: dict[int, float] = {}

    async def run() -> list[str]:
        app = make_app(Services(store, label="bench"), offer_demo=False, show_timings=False, animate=False)
        async with app.run_test(size=(120, 40)) as pilot:
            while not (app.store_stats and app.store_stats.sources) or app.tasks or warming(app):
                await pilot.pause(0.01)  # the areas load behind the first screen: measure the steady state
            await app.switch_mode("sources")
            while app.tasks:
                await pilot.pause(0.01)
            base = app.store_stats.sources
            table = app.screen.query_one("#sources-table", DataTable)
            writer = background(writer_script, store, pause=1.0)
            while len(shown_header) < commits or len(shown_table) < commits:
                now = time.time()
                n = (app.store_stats.sources if app.store_stats else base) - base
                shown_header.update((k, now) for k in range(n) if k not in shown_header)
                m = table.row_count - base
                shown_table.update((k, now) for k in range(m) if k not in shown_table)
                await asyncio.sleep(0.005)
            return writer.lines()

    lines = asyncio.run(run())
    committed = {int(parts[1]): float(parts[2]) for parts in (line.split() for line in lines) if parts[0] == "committed"}
    header = sorted(shown_header[k] - committed[k] for k in range(commits))
    table = sorted(shown_table[k] - committed[k] for k in range(commits))
    return {"delay_s": {"p50": statistics.median(header), "p95": header[int(0.95 * len(header))], "n": len(header)},
            "sources_table_delay_s": {"p50": statistics.median(table), "p95": table[int(0.95 * len(table))]},
            "tick_us": tick_cost(million_item_store()), "tick_store_items": 1_000_000}
