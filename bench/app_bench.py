"""The app's speed on a 10k-item store, measured with Textual's test harness (headless).

* **cold start**: a fresh Python process → the Query screen shown, the store open, its counts in
  the header and the query box focused (wall clock from before the process is spawned); then a
  query is sent at once, and the time to its rendered results is reported too (the engine loads
  its graph, topic tree and ranker behind the usable screen, so that query may wait for them);
* **query → rendered results**: Enter in the query box → the hits table filled and painted
  (``QueryScreen.last_render_ms``: from the submit to the first refresh after the rows landed);
* **each screen's first paint** (``--screens``): in every cold-started process, once the engine has
  warmed up, its key pressed → the screen shown with every task it started finished, in wall time
  and in the UI thread's CPU time (what a person feels as a frozen screen); then on Sources the
  biggest source selected and its items table scrolled to its end (and, for a source of more than
  one page, the next page and the last page shown, then the Home and End keys pressed), and on
  Topics the first topic with children expanded.

Usage::

    python bench/app_bench.py                      # 10,000 items, 5 cold starts, 30 queries per strategy
    python bench/app_bench.py --items 2000 --runs 3 --queries 10
    python bench/app_bench.py --json               # one JSON object instead of the table
    python bench/app_bench.py --store big.db --runs 3 --queries 10 --screens   # an existing store, every screen
    python bench/app_bench.py --store big.db --cached-bytecode   # start as an installed app: bytecode cached
    python bench/app_bench.py --store big.db --cold store       # each start with the store's files not in the page cache
    python bench/app_bench.py --store big.db --cold all         # the WHOLE MACHINE's page cache dropped (root; everyone feels it)
    python bench/app_bench.py --store old.db --queries 0 --code ../base   # another checkout's cold starts (an A/B)

The report says how each start had its modules' bytecode, read from the files (read from a valid
.pyc, compiled and written, or compiled), and how much it read from the disk (/proc/self/io).

The store is built once (synthetic turns made from the LoCoMo data by ``engine.eval.bench``) and
kept at ``--store`` (default: the user cache folder) so later runs measure the app, not ingest.
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUERIES = [
    "what did Caroline do at the support group", "when did Melanie paint a sunrise", "sourdough starter",
    "camping trip with the kids", "adoption agencies", "what books does she read", "charity race",
    "pottery class", "LGBTQ counseling", "family road trip", "favourite painting", "dog walking schedule",
    "who went to the concert", "weekend hiking plans", "new job interview", "birthday party", "music festival",
    "school presentation", "volunteering at the shelter", "moving to a new city",
]

CHILD = r"""
import sys, time, asyncio, json
t_start = time.time()
sys.path.insert(0, {root!r})
from mnemoscope.app.services import Services
from mnemoscope.app.tui import make_app
from mnemoscope.app.widgets.chrome import SCREENS, StoreHeader

async def main():
    app = make_app(Services({store!r}, label="bench"), offer_demo=False, show_timings=False, animate=False)
    async with app.run_test(size=(100, 32)) as pilot:
        shown = None
        while True:
            screen = app.screen
            if screen.is_modal:  # a dialog instead of the Query screen (the store cannot be opened): say which
                print("DIALOG", json.dumps([getattr(screen, "title_text", type(screen).__name__),
                                            getattr(screen, "body", "")]), flush=True)
                return
            if shown is None and getattr(screen, "NAME", "") == "query" and app.focused is not None \
                    and app.focused.id == "query-input":
                shown = time.time()  # painted, the query box takes keys; the store may still be opening
            if shown is not None and not app.tasks and screen.query_one(StoreHeader).counts:
                break  # the header has its counts: the next frame (≤ 1/60 s) paints them
            await asyncio.sleep(0.005)  # not pilot.pause(): that makes the app work, competing with the opening
        ready, ready_cpu = time.time(), time.process_time()
        items = app.store_stats.items
        with open("/proc/self/io") as io:  # what the start read from the disk, not from the page cache
            read_bytes = next(int(l.split()[1]) for l in io if l.startswith("read_bytes"))
        # a person who types a query the moment the screen is usable: when do the results show?
        screen.last_render_ms = None
        app.focused.value = {query!r}
        await pilot.press("enter")
        while screen.last_render_ms is None:
            await asyncio.sleep(0.002)
        print("READY", ready, t_start, shown, app.open_seconds, time.time(), ready_cpu, flush=True)
        print("READ", read_bytes, flush=True)
        print("ITEMS", items, flush=True)
        print("BYTECODE", json.dumps(bytecode_used(t_start, {root!r})), flush=True)
        if {screens!r}:
            await tour(app, pilot)

def bytecode_used(t_start, root):
    # each imported module's bytecode as this start had it, from the files themselves: read (a
    # valid .pyc older than the start: Python reads it), written (compiled now and saved) or
    # compiled (no valid .pyc: compiled from source, not saved); the project's apart
    import importlib.util, os
    counts = dict(project=dict(read=0, written=0, compiled=0), other=dict(read=0, written=0, compiled=0))
    for module in list(sys.modules.values()):
        spec = getattr(module, "__spec__", None)
        if spec is None or not spec.cached or not (spec.origin or "").endswith(".py"):
            continue
        source = os.stat(spec.origin)
        try:
            with open(spec.cached, "rb") as pyc:
                head = pyc.read(16)
            written = os.stat(spec.cached).st_mtime
        except OSError:
            head, written = b"", 0.0
        flags = int.from_bytes(head[4:8], "little")
        valid = len(head) == 16 and head[:4] == importlib.util.MAGIC_NUMBER and (flags != 0 or (
            int.from_bytes(head[8:12], "little") == int(source.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(head[12:16], "little") == source.st_size & 0xFFFFFFFF))
        how = "compiled" if not valid else "read" if written < t_start else "written"
        counts["project" if spec.origin.startswith(root + os.sep) else "other"][how] += 1
    return counts

async def settled(app):
    # every task's result is on screen and the app's own workers (warm-up, stats) are done; a
    # widget's long-lived worker (the Ingest screen's directory tree loader) never ends; then one frame
    while app.tasks or any(w.is_running and w.node is app for w in app.workers):
        await asyncio.sleep(0.002)
    await asyncio.sleep(1 / 60)

async def timed(app, pilot, label, act):
    # wall and UI-thread CPU from an action to a settled screen (this coroutine runs on the UI thread)
    wall, ui_cpu = time.perf_counter(), time.thread_time()
    await act()
    await settled(app)
    print("SCREEN", label, time.perf_counter() - wall, time.thread_time() - ui_cpu, flush=True)

async def tour(app, pilot):
    from textual.widgets import DataTable, Tree
    await settled(app)  # the engine warmed up: each screen is timed on its own
    for mode, key, _title in SCREENS:
        if mode != "query":
            await timed(app, pilot, mode, lambda: pilot.press(key))
        if mode == "sources":
            screen = app.screen
            biggest = max(screen.sources, key=lambda s: screen.counts.get(s.id) or 0)
            async def select():
                screen.select_source(biggest.id)
            await timed(app, pilot, "sources:select-biggest", select)
            items = screen.query_one("#items-table", DataTable)
            items.focus()
            async def page_end():
                items.move_cursor(row=items.row_count - 1)
            await timed(app, pilot, "sources:scroll-to-end", page_end)
            print("ROWS sources", screen.counts.get(biggest.id), items.row_count, flush=True)
            if items.row_count < (screen.counts.get(biggest.id) or 0):  # a source of more than one page
                await timed(app, pilot, "sources:next-page", lambda: pilot.press("right_square_bracket"))
                pages = (screen.counts[biggest.id] - 1) // items.row_count
                async def last_page():
                    screen.action_page(pages - 1)  # the deepest offset: what paging by position costs most
                await timed(app, pilot, "sources:last-page", last_page)
                print("ROWS sources-last-page", screen.page_start, items.row_count, flush=True)
                # what a person presses: Home and End (the source's first and last item)
                await timed(app, pilot, "sources:home-key", lambda: pilot.press("home"))
                await timed(app, pilot, "sources:end-key", lambda: pilot.press("end"))
                print("ROWS sources-after-end", screen.page_start, items.cursor_row, flush=True)
        if mode == "topics":
            tree = app.screen.query_one("#topic-tree", Tree)
            node = next((n for n in tree.root.children if n.allow_expand and not n.is_expanded), None)
            if node is not None:
                async def expand():
                    node.expand()
                await timed(app, pilot, "topics:expand", expand)
                shown = app.screen.nodes.get(node.data)  # the tree may have been rebuilt meanwhile
                print("ROWS topics", len(tree.root.children), len(shown.children) if shown else 0, flush=True)

asyncio.run(main())
"""


def build_store(path: Path, n_items: int) -> float:
    from mnemoscope.engine import Memory
    from mnemoscope.engine.eval.bench import DEFAULT_DATA, synthetic_corpus

    started = time.perf_counter()
    path.parent.mkdir(parents=True, exist_ok=True)
    sources, _ = synthetic_corpus(n_items, DEFAULT_DATA)
    with Memory(path) as mem:
        mem.ingest_parsed(sources)
        items = mem.stats().items
    if items < n_items:
        raise SystemExit(f"built only {items} items")
    return time.perf_counter() - started


@dataclass
class ColdStart:
    """One cold start as the child reported it."""

    times: dict[str, float]  # wall clock from the spawn (s), of which the interpreter's start, …
    paints: dict[str, tuple[float, float]]  # with ``screens``: each screen's (wall s, UI-thread CPU s)
    rows: dict[str, str]  # the row counts the tour saw (what the Sources and Topics measures were taken on)
    bytecode: dict[str, dict[str, int]]  # project / other modules: how many had their bytecode read, written, compiled
    items: int  # the store's items, as the app's header counted them


def evict(store: Path, everything: bool = False) -> None:
    """Take the store and its side files out of the page cache (POSIX_FADV_DONTNEED, after a sync:
    dirty pages stay), as after hours unread; with ``everything``, the whole page cache (the
    interpreter's and the libraries' files too; root only, and every process on the machine feels it)."""
    os.sync()
    if everything:
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return
    for part in store.parent.glob(glob.escape(store.name) + "*"):
        if part.is_file():
            with open(part, "rb") as file:
                os.posix_fadvise(file.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


def cold_start(store: Path, screens: bool, env: dict[str, str] | None = None, cold: str = "",
               code: Path = ROOT) -> ColdStart:
    """Spawn a fresh interpreter (in ``env``, else this process's environment) on the app of the
    checkout ``code`` (another commit's, for an A/B in one harness); ``cold``: "store" takes the
    store's files out of the page cache first, "all" the whole page cache (:func:`evict`)."""
    if cold:
        evict(store, everything=cold == "all")
    spawned = time.time()
    child = CHILD.format(root=str(code), store=str(store), query=QUERIES[0], screens=screens)
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=600, cwd=code,
                         env=env)
    lines = out.stdout.splitlines()
    dialog = next((json.loads(l.split(maxsplit=1)[1]) for l in lines if l.startswith("DIALOG ")), None)
    if dialog is not None:
        raise SystemExit(f"cold start of {code} showed a dialog, not the Query screen: {dialog[0]}: {dialog[1]}")
    line = next((l for l in lines if l.startswith("READY")), None)
    if line is None or out.returncode != 0:
        raise SystemExit(f"cold start failed:\n{out.stdout}\n{out.stderr}")
    _tag, ready, child_start, shown, opened, answered, cpu = line.split()
    read = next(l for l in lines if l.startswith("READ ")).split()[1]
    times = {"total_s": float(ready) - spawned, "interpreter_s": float(child_start) - spawned,
             "shown_s": float(shown) - spawned, "open_s": float(opened), "answered_s": float(answered) - spawned,
             "cpu_s": float(cpu), "read_mb": int(read) / 1e6}
    paints = {label: (float(wall), float(ui_cpu))
              for _tag, label, wall, ui_cpu in (l.split() for l in lines if l.startswith("SCREEN "))}
    rows = {label: counts for _tag, label, counts in (l.split(maxsplit=2) for l in lines if l.startswith("ROWS "))}
    bytecode = json.loads(next(l for l in lines if l.startswith("BYTECODE ")).split(maxsplit=1)[1])
    items = int(next(l for l in lines if l.startswith("ITEMS ")).split()[1])
    return ColdStart(times, paints, rows, bytecode, items)


def bytecode_env(cached: Path | None) -> tuple[dict[str, str] | None, str]:
    """The cold starts' environment, and what it asks of their modules' bytecode. ``cached``: a
    folder of its own keeps every module's bytecode (an installed app's case: its bytecode is
    written at install or first start); None: as this environment has it. What the starts
    actually did is read from the files (:func:`describe_bytecode`): PYTHONDONTWRITEBYTECODE
    stops Python writing bytecode, not reading it, and the test suite compiles the project's
    modules beside the code."""
    if cached is None:
        unset = "" if os.environ.get("PYTHONDONTWRITEBYTECODE") else "un"
        return None, f"as the environment has it (PYTHONDONTWRITEBYTECODE {unset}set)"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cached)
    return env, f"cached in {cached}"


def describe_bytecode(counts: dict[str, dict[str, int]]) -> str:
    """How a start had its modules' bytecode, in words: the project's modules, then the rest."""
    parts = []
    for group in ("project", "other"):
        n = counts[group]
        total = sum(n.values())
        parts.append(f"{group} modules: {n['read']} of {total} read from cached bytecode, {n['compiled']} compiled "
                     f"from source, {n['written']} compiled and written")
    return "; ".join(parts)


def screen_medians(tours: list[dict[str, tuple[float, float]]]) -> dict[str, dict[str, float]]:
    """Per screen (and per step of the Sources/Topics tours), the medians over the cold starts."""
    labels = [label for label in tours[0]] if tours else []
    return {label: {"wall_median_s": statistics.median(t[label][0] for t in tours if label in t),
                    "ui_cpu_median_s": statistics.median(t[label][1] for t in tours if label in t),
                    "wall_max_s": max(t[label][0] for t in tours if label in t)}
            for label in labels}


async def query_latencies(store: Path, n: int, strategies: list[str], mode: str) -> dict[str, dict[str, float]]:
    from textual.widgets import DataTable, Select

    from mnemoscope.app.services import Services
    from mnemoscope.app.tui import make_app

    app = make_app(Services(store, label="bench"), offer_demo=False, show_timings=False, animate=False)
    results: dict[str, dict[str, float]] = {}
    async with app.run_test(size=(100, 32)) as pilot:
        while not (app.store_stats and app.store_stats.items) or app.tasks:
            await pilot.pause(0.01)
        screen = app.screen
        box = screen.query_one("#query-input")
        table = screen.query_one("#hits", DataTable)
        screen.query_one("#query-mode", Select).value = mode

        async def one(text: str) -> tuple[float, float]:
            screen.last_render_ms = None
            box.value = text
            box.focus()
            await pilot.press("enter")
            while screen.last_render_ms is None:
                await pilot.pause(0.001)
            assert screen.recall is not None and screen.recall.query == text
            return screen.last_render_ms, screen.recall.timings.get("total_ms", 0.0)

        first, _ = await one("first query of the session")
        for strategy in strategies:
            screen.query_one("#query-strategy", Select).value = strategy
            await pilot.pause()
            await one("warm up " + strategy)
            rendered, engine = [], []
            for k in range(n):
                r, e = await one(QUERIES[k % len(QUERIES)] + ("" if k < len(QUERIES) else f" {k}"))
                rendered.append(r)
                engine.append(e)
            rendered.sort()
            results[strategy] = {
                "median_ms": statistics.median(rendered), "p95_ms": rendered[int(0.95 * (len(rendered) - 1))],
                "max_ms": rendered[-1], "engine_median_ms": statistics.median(engine), "rows": table.row_count,
            }
        results["_first_query"] = {"ms": first}
    return results


def main() -> None:
    from platformdirs import user_cache_path

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--store", type=Path, default=None, help="store to use (built if missing)")
    parser.add_argument("--runs", type=int, default=5, help="cold starts to time")
    parser.add_argument("--queries", type=int, default=30, help="queries per strategy")
    parser.add_argument("--strategies", default="hybrid,fused,bm25")
    parser.add_argument("--mode", default="pro")
    parser.add_argument("--screens", action="store_true", help="also time each screen's first paint in every cold start")
    parser.add_argument("--cached-bytecode", action="store_true",
                        help="start as an installed app does, every module's bytecode cached (one untimed start fills it)")
    parser.add_argument("--cold", choices=("store", "all"), default="",
                        help="before each cold start, take the store's files out of the page cache (a store not read "
                             "for hours); 'all' empties the WHOLE MACHINE's page cache (drop_caches, root only): every "
                             "process of everyone on the machine reads its files from the disk again")
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the checkout whose app the cold starts run (default: this one; another commit's for an "
                             "A/B, with --queries 0: the query latencies run this checkout's code)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.runs < 1:  # the report is the cold starts' medians
        parser.error("--runs: at least one cold start to time")
    if args.queries and args.code.resolve() != ROOT:
        # this process opens the store with its own code for the queries: on an older checkout's
        # store it would migrate it, and that checkout's next start refuses the store
        parser.error("--code times another checkout's cold starts alone: add --queries 0")

    store = args.store or user_cache_path("mnemoscope") / f"app-bench-{args.items}.db"
    built = None
    if not store.exists():
        print(f"building a {args.items:,}-item store at {store} …", file=sys.stderr, flush=True)
        built = build_store(store, args.items)

    env, asked = bytecode_env(user_cache_path("mnemoscope") / "app-bench-bytecode" if args.cached_bytecode else None)
    if args.cached_bytecode:
        cold_start(store, False, env, code=args.code)  # writes the bytecode; not timed
    runs = [cold_start(store, args.screens, env, args.cold, args.code) for _ in range(args.runs)]
    starts = [run.times for run in runs]
    bytecode = " | ".join(dict.fromkeys(describe_bytecode(run.bytecode) for run in runs))  # one, unless starts differed
    totals = sorted(s["total_s"] for s in starts)
    items = runs[-1].items  # an existing --store holds its own number, not --items
    queries: dict[str, dict[str, float]] = {}  # --queries 0: the cold starts alone (an A/B of them), the store opened by ``code`` only
    if args.queries:
        from mnemoscope.engine import Memory

        with Memory(store) as mem:
            offered = mem.strategies()
        strategies = [s for s in args.strategies.split(",") if s in offered]
        queries = asyncio.run(query_latencies(store, args.queries, strategies, args.mode))

    report = {
        "items": items, "store": str(store), "code": str(args.code), "store_build_s": built, "bytecode_asked": asked, "bytecode": bytecode,
        "page_cache": {"": "as it was", "store": "the store's files taken out before each start",
                       "all": "emptied before each start"}[args.cold],
        "cold_start": {"median_s": statistics.median(totals), "max_s": totals[-1], "runs": args.runs,
                       "screen_shown_median_s": statistics.median(s["shown_s"] for s in starts),
                       "store_open_median_s": statistics.median(s["open_s"] for s in starts),
                       "cpu_median_s": statistics.median(s["cpu_s"] for s in starts),
                       "first_results_median_s": statistics.median(s["answered_s"] for s in starts),
                       "interpreter_median_s": statistics.median(s["interpreter_s"] for s in starts),
                       "read_from_disk_median_mb": statistics.median(s["read_mb"] for s in starts)},
        "first_query_ms": queries.pop("_first_query", {}).get("ms"),
        "query_to_rendered": queries, "mode": args.mode, "queries_per_strategy": args.queries,
    }
    if args.screens:
        report["first_paint"] = screen_medians([run.paints for run in runs])
        report["tour_rows"] = runs[0].rows
    report["load_average"] = os.getloadavg()
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"Mnemoscope app bench: {items:,} items ({store}); load average {report['load_average'][0]:.1f} "
          f"on {os.cpu_count()} cores")
    if built is not None:
        print(f"  store built in {built:.1f}s")
    cs = report["cold_start"]
    print(f"  modules' bytecode ({asked}): {bytecode}")
    print(f"  page cache: {report['page_cache']}; read from the disk by the start: median "
          f"{cs['read_from_disk_median_mb']:.1f} MB")
    print(f"  cold start, Query screen shown and taking keys: median {cs['screen_shown_median_s']:.2f}s "
          f"(of which interpreter start {cs['interpreter_median_s']:.2f}s)")
    print(f"  cold start to a usable Query screen (store open, counts shown): median {cs['median_s']:.2f}s, "
          f"max {cs['max_s']:.2f}s over {args.runs} runs   target ≤ 1.5s")
    print(f"    CPU time of the app process by then (less sensitive to a loaded machine): median {cs['cpu_median_s']:.2f}s")
    print(f"    of which the engine's import and Memory(path) in the worker: median {cs['store_open_median_s']:.2f}s")
    print(f"  cold start to the first results (a query sent the moment the screen is usable): "
          f"median {cs['first_results_median_s']:.2f}s")
    if queries:
        print(f"  first query of a session (engine warm-up): {report['first_query_ms']:.0f} ms")
        print(f"  query → rendered results, mode {args.mode}, {args.queries} queries each   target ≤ 150 ms")
        print(f"    {'strategy':10} {'median':>8} {'p95':>8} {'max':>8} {'engine':>8}")
    for name, q in queries.items():
        print(f"    {name:10} {q['median_ms']:7.1f}ms {q['p95_ms']:7.1f}ms {q['max_ms']:7.1f}ms "
              f"{q['engine_median_ms']:7.1f}ms")
    if args.screens:
        print(f"  each screen's first paint (key → tasks done and painted), median of {args.runs} cold starts")
        print(f"    {'screen':24} {'wall':>8} {'UI CPU':>8} {'max':>8}")
        for label, paint in report["first_paint"].items():
            print(f"    {label:24} {paint['wall_median_s']:7.2f}s {paint['ui_cpu_median_s']:7.2f}s "
                  f"{paint['wall_max_s']:7.2f}s")
        for label, counts in report["tour_rows"].items():
            print(f"    rows seen on {label}: {counts}")


if __name__ == "__main__":
    main()
