"""Open a store in a fresh process and recall once with each strategy: the time and CPU time to a
usable memory, each strategy's first and second recall, and this process's own peak RSS (VmHWM,
Linux) after each. Optionally (``--trace``) where the memory goes, by file and by line
(tracemalloc; slower, and its own bookkeeping inflates the RSS).

Usage::

    python3 bench/open_store.py STORE [--strategies bm25,hybrid,dense,ppr,walk,fused] [--core] [--trace]
"""

from __future__ import annotations

import argparse
import json
import linecache
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

QUERY = "what did Caroline do at the support group"


def peak_mb() -> float:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--strategies", default="bm25,hybrid,dense,ppr,walk,fused")
    ap.add_argument("--core", action="store_true")
    ap.add_argument("--trace", action="store_true")
    args = ap.parse_args()
    if args.trace:
        tracemalloc.start(1)
    started, cpu = time.perf_counter(), time.process_time()
    from mnemoscope.engine import Memory

    mem = Memory(args.store, extensions=not args.core)
    out = {"items": mem.index.n_items, "open_s": round(time.perf_counter() - started, 2),
           "open_cpu_s": round(time.process_time() - cpu, 2), "rss_open_mb": round(peak_mb())}
    for s in args.strategies.split(","):
        t1, c1 = time.perf_counter(), time.process_time()
        mem.recall(QUERY, strategy=s)
        t2, c2 = time.perf_counter(), time.process_time()
        mem.recall(QUERY, strategy=s)
        out[s] = {"first_s": round(t2 - t1, 2), "first_cpu_s": round(c2 - c1, 2), "again_ms": round((time.perf_counter() - t2) * 1000, 1),
                  "again_cpu_ms": round((time.process_time() - c2) * 1000, 1), "rss_mb": round(peak_mb())}
    out["areas_from_saved_state"] = mem.areas_from_file
    print(json.dumps(out), flush=True)
    if args.trace:
        snap, n = tracemalloc.take_snapshot(), max(mem.index.n_items, 1)
        print(f"traced {tracemalloc.get_traced_memory()[0] / 2**20:.1f} MB, {tracemalloc.get_traced_memory()[0] / n:.0f} B/item")
        for key in ("filename", "lineno"):
            for st in snap.statistics(key)[:20]:
                f = st.traceback[0]
                where = f"{f.filename}:{f.lineno}  {linecache.getline(f.filename, f.lineno).strip()[:80]}" if key == "lineno" else f.filename
                print(f"{st.size / 2**20:8.1f} MB {st.size / n:6.0f} B/item  {where}")


if __name__ == "__main__":
    main()
