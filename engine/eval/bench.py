"""Synthetic scale benchmark: realistic turns (LoCoMo turns, replicated and perturbed).

Measures ingest time per item (the core's phase and the areas' apart), recall latency per
strategy (and during the areas' phase), peak RSS, a fresh process's open time and RSS, and
``rank_bm25`` on the same items in the same run, so that noisy shared machines still give a
fair comparison.
"""

from __future__ import annotations

import glob
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from ..errors import KeepRefused
from ..files import atomic_writer, check_target, open_regular
from ..memory import Memory
from ..records import Item, ParsedSource, Source
from .harness import plain_words, require
from .locomo import load as load_locomo
from .metrics import percentile

CHUNK_ITEMS = 50_000  # sources made and stored at a time
DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "locomo10_dev.json"


def synthetic_sources(n_items: int, data: Path, seed: int = 7, per_source: int = 500) -> Iterator[ParsedSource]:
    """``n_items`` turns made from the real ones (names swapped, words dropped, numbers
    changed), one source at a time: a million never sit in memory at once."""
    rng = random.Random(seed)
    turns = [i for parsed, _ in load_locomo(data) for i in parsed.items]
    names = sorted({i.speaker for i in turns if i.speaker}) + ["Alex", "Priya", "Tomas", "Yuki", "Omar", "Lena"]
    for start in range(0, n_items, per_source):
        items = []
        for pos in range(min(per_source, n_items - start)):
            base = turns[(start + pos) % len(turns)]
            words = base.text.split()
            if len(words) > 6:
                for _ in range(rng.randint(0, 2)):
                    words.pop(rng.randrange(len(words)))
            text = " ".join(words)
            if rng.random() < 0.3:
                text += f" It was around {rng.randint(2, 12)} {rng.choice(['days', 'weeks', 'months'])} ago."
            items.append(Item(text=text, kind="turn", key=f"D{pos // 20 + 1}:{pos % 20 + 1}", position=pos,
                              speaker=rng.choice(names), timestamp=base.timestamp, meta=dict(base.meta)))
        yield ParsedSource(Source(name=f"synthetic-{start // per_source}", kind="conversation",
                                  content_hash=f"{seed}-{start}"), items)


def synthetic_questions(data: Path) -> list[str]:
    return [q.text for _, qs in load_locomo(data) for q in qs]


def synthetic_corpus(n_items: int, data: Path, seed: int = 7, per_source: int = 500) -> tuple[list[ParsedSource], list[str]]:
    """Every source of :func:`synthetic_sources` at once, and the LoCoMo questions to ask."""
    return list(synthetic_sources(n_items, data, seed, per_source)), synthetic_questions(data)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024



def _check_keep(keep: Path) -> None:
    """Refuse ``--keep`` before hours of work, not after: a path in a missing folder or a folder
    (:func:`check_target`), or a name that is taken — the store or a file beside it (an old
    ``-wal`` would be paired with the new store)."""
    check_target(keep)
    if keep.exists() or any(keep.parent.glob(glob.escape(keep.name) + "-*")):
        raise KeepRefused(f"{keep} (or a file beside it) already exists; the bench keeps its store only under a new name")

def run(n_items: int, strategies: Sequence[str] = ("bm25", "dense", "hybrid"), n_queries: int = 200,
        data: Path = DEFAULT_DATA, baseline_queries: int = 20, extensions: bool = True, baseline: bool = True,
        say: Callable[[str], None] | None = None, keep: Path | None = None, **settings: Any) -> dict[str, Any]:
    """Ingest ``n_items`` synthetic turns and time recall per strategy (``extensions=False``: the
    core alone). The ingest streams: sources are made and stored ``CHUNK_ITEMS`` at a time, the
    core first (stored and indexed, recall works), then the areas read the queue (``catch_up``),
    timed apart; a hybrid recall every 2% of that phase shows that recall stays usable. The open
    store is measured in a fresh process (open time, first recall, RSS after a recall of every
    strategy). ``baseline``: rank_bm25 on the same items and queries, in the same run. ``say``
    hears how far a long run has got (a line per chunk stored, per 10% the areas read). ``keep``:
    where the store (and the files beside it) is copied at the end, so that other versions of
    the code can be timed on the very same store (``bench/store_p50.py``) instead of building it
    again."""
    if keep is not None:
        _check_keep(keep)
    data = require(data)
    rng = random.Random(11)
    questions = synthetic_questions(data)
    queries = [rng.choice(questions) for _ in range(n_queries)]
    out: dict[str, Any] = {"items": n_items, "extensions": extensions}
    with tempfile.TemporaryDirectory(prefix="mnemoscope-bench-") as tmp:
        path = Path(tmp) / "bench.db"
        mem = Memory(path, extensions=extensions, **settings)
        stored, core_s, core_cpu = 0, 0.0, 0.0
        for chunk in _chunks(synthetic_sources(n_items, data), CHUNK_ITEMS):  # making the turns is not timed
            started, cpu = time.perf_counter(), time.process_time()
            mem.ingest_parsed(chunk, defer=True, catch_up=False)
            core_s, core_cpu = core_s + time.perf_counter() - started, core_cpu + time.process_time() - cpu
            stored += sum(len(p.items) for p in chunk)
            if say:
                say(f"stored {stored:,}/{n_items:,} items: {core_s:.0f} s, CPU {core_cpu:.0f} s, RSS {peak_rss_mb():.0f} MB")
        started, cpu = time.perf_counter() - core_s, time.process_time() - core_cpu  # the areas' phase continues the clocks
        during: list[float] = []
        every = max(1, n_items // 50)

        def probe(done: int, _total: int, _what: str) -> None:
            if done // every > len(during):
                t0 = time.perf_counter()
                mem.recall(queries[len(during) % len(queries)], top_k=10, strategy="hybrid")
                during.append((time.perf_counter() - t0) * 1000)
                if say and len(during) % 5 == 0:
                    say(f"areas read {done:,}/{n_items:,} items: {time.perf_counter() - started:.0f} s, "
                        f"CPU {time.process_time() - cpu:.0f} s, RSS {peak_rss_mb():.0f} MB; hybrid recall {during[-1]:.1f} ms")

        probed = time.perf_counter()
        mem.catch_up(progress=probe)
        probe_s = sum(during) / 1000
        areas_s = time.perf_counter() - probed - probe_s
        total_s, total_cpu = time.perf_counter() - started - probe_s, time.process_time() - cpu
        # CPU time too: on a shared machine wall time includes waiting for other jobs
        out["ingest_ms_per_item"] = round(total_s * 1000 / n_items, 4)
        out["ingest_cpu_ms_per_item"] = round(total_cpu * 1000 / n_items, 4)
        out["ingest_core_ms_per_item"] = round(core_s * 1000 / n_items, 4)
        out["ingest_core_cpu_ms_per_item"] = round(core_cpu * 1000 / n_items, 4)
        out["ingest_areas_s"] = round(areas_s, 1)
        if during:
            out["recall_during_areas_ms"] = {"p50": round(statistics.median(during), 3), "max": round(max(during), 3),
                                             "n": len(during)}
        out["peak_rss_ingest_mb"] = round(peak_rss_mb(), 1)
        out["recall_ms"], out["recall_stage_ms"] = {}, {}
        for strategy in strategies:
            mem.recall(queries[0], strategy=strategy)  # warm caches outside the timing
            times, cpu_times, stages = [], [], []
            for q in queries:
                t0, c0 = time.perf_counter(), time.process_time()
                result = mem.recall(q, top_k=10, strategy=strategy)
                times.append((time.perf_counter() - t0) * 1000)
                cpu_times.append((time.process_time() - c0) * 1000)
                stages.append(result.timings)
            out["recall_ms"][strategy] = {"p50": round(statistics.median(times), 3), "p95": round(percentile(times, 0.95), 3),
                                          "cpu_p50": round(statistics.median(cpu_times), 3)}
            # the pipeline's own timings (signals, ranking, fetch, areas' stages): where the time goes
            out["recall_stage_ms"][strategy] = {
                name: round(statistics.median(t.get(name, 0.0) for t in stages), 3) for name in sorted({k for t in stages for k in t})
            }
        mem.close()
        out.update(open_in_fresh_process(path, extensions, settings, queries[0], strategies))
        if keep is not None:
            for part in sorted(path.parent.glob(path.name + "*")):  # the store and its -index, -wal … files
                with open_regular(part) as source, atomic_writer(keep.with_name(keep.name + part.name[len(path.name):])) as copy:
                    shutil.copyfileobj(source, copy)
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    if baseline:
        out["baselines"] = {"rank_bm25": rank_bm25_baseline(synthetic_sources(n_items, data), queries[:baseline_queries])}
    return out


def _chunks(sources: Iterator[ParsedSource], n_items: int) -> Iterator[list[ParsedSource]]:
    chunk: list[ParsedSource] = []
    size = 0
    for source in sources:
        chunk.append(source)
        size += len(source.items)
        if size >= n_items:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


# Opens the store in a fresh interpreter: the time (and CPU time) to a usable memory, its first
# recall, and the peak RSS once every strategy has run (what an open store costs, without the
# ingest's garbage).
OPEN_SCRIPT = """
import json, resource, sys, time
started = time.perf_counter()
from mnemoscope.engine import Memory
mem = Memory(sys.argv[1], **json.loads(sys.argv[2]))
opened, opened_cpu = time.perf_counter() - started, time.process_time()
mem.recall(sys.argv[3], strategy="bm25")
first = time.perf_counter() - started
for strategy in json.loads(sys.argv[4]):
    mem.recall(sys.argv[3], strategy=strategy)
try:  # this process's own peak (ru_maxrss carries the parent's over fork and exec on Linux)
    peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:")) / 1024
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"open_s": round(opened, 3), "open_cpu_s": round(opened_cpu, 3), "open_first_recall_s": round(first, 3),
                  "open_rss_mb": round(peak, 1), "open_from_saved_index": mem.index_from_file,
                  "open_areas_from_saved_state": mem.areas_from_file}))
"""


def open_in_fresh_process(path: Path, extensions: bool, settings: dict[str, Any], query: str,
                          strategies: Sequence[str]) -> dict[str, float | bool | list[str]]:
    root = str(Path(__file__).resolve().parents[2])  # where the mnemoscope package finds its parts
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-c", OPEN_SCRIPT, str(path), json.dumps({**settings, "extensions": extensions}),
                           query, json.dumps(list(strategies))], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def rank_bm25_baseline(sources: Iterable[ParsedSource], queries: list[str]) -> dict[str, float]:
    from rank_bm25 import BM25Okapi

    texts = [i.search_text() for p in sources for i in p.items]
    started = time.perf_counter()
    bm25 = BM25Okapi([plain_words(t) for t in texts])
    index_ms = (time.perf_counter() - started) * 1000 / len(texts)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        scores = bm25.get_scores(plain_words(q))
        np.argpartition(-scores, 10)[:10]
        times.append((time.perf_counter() - t0) * 1000)
    return {"index_ms_per_item": round(index_ms, 4), "query_ms_p50": round(statistics.median(times), 3)}
