"""Open an existing store in this process and time recall over the benchmark's synthetic questions:
the open (time and CPU time, and whether the index came from its saved file), the warm-up, each
strategy's p50 (CPU and wall), and this process's own peak RSS (VmHWM, Linux). Run it once per
version being compared, alternating, on the same store (docs/scaling.md).

Usage::

    python3 bench/store_p50.py STORE bm25,dense,hybrid 30 [--core]
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def peak_mb() -> int:
    with open("/proc/self/status") as status:
        return round(next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024)


def main() -> None:
    started, cpu = time.perf_counter(), time.process_time()
    from mnemoscope.engine import Memory
    from mnemoscope.engine.eval.bench import DEFAULT_DATA, synthetic_questions

    store, strategies, n = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
    mem = Memory(store, extensions="--core" not in sys.argv)
    out: dict[str, object] = {"open_s": round(time.perf_counter() - started, 2), "open_cpu_s": round(time.process_time() - cpu, 2),
                              "from_file": mem.index_from_file, "rss_open_mb": peak_mb()}
    cpu = time.process_time()
    mem.warm_up()
    out["warm_cpu_s"] = round(time.process_time() - cpu, 2)
    questions = synthetic_questions(DEFAULT_DATA)[:n]
    for strategy in strategies:
        mem.recall(questions[0], strategy=strategy)
        cpu_ms, wall_ms = [], []
        for q in questions:
            wall, cpu = time.perf_counter(), time.process_time()
            mem.recall(q, strategy=strategy)
            cpu_ms.append((time.process_time() - cpu) * 1000)
            wall_ms.append((time.perf_counter() - wall) * 1000)
        out[strategy] = {"p50_cpu_ms": round(statistics.median(cpu_ms), 1), "p50_ms": round(statistics.median(wall_ms), 1)}
    out["rss_mb"] = peak_mb()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
