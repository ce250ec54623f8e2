"""Synthetic scale benchmark: realistic turns (LoCoMo turns, replicated and perturbed).

Measures ingest time per item, recall latency per strategy, peak RSS, and the same for
``rank_bm25`` in the same run, so that noisy shared machines still give a fair comparison.
"""

from __future__ import annotations

import random
import resource
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..memory import Memory
from ..records import Item, ParsedSource, Source
from .harness import _plain_words, require
from .locomo import load as load_locomo
from .metrics import percentile

DEFAULT_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo" / "locomo10_dev.json"


def synthetic_corpus(n_items: int, data: Path, seed: int = 7, per_source: int = 500) -> tuple[list[ParsedSource], list[str]]:
    """``n_items`` turns made from the real ones: names swapped, words dropped, numbers changed."""
    rng = random.Random(seed)
    conversations = load_locomo(data)
    turns = [i for parsed, _ in conversations for i in parsed.items]
    questions = [q.text for _, qs in conversations for q in qs]
    names = sorted({i.speaker for i in turns if i.speaker}) + ["Alex", "Priya", "Tomas", "Yuki", "Omar", "Lena"]
    sources: list[ParsedSource] = []
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
        sources.append(ParsedSource(Source(name=f"synthetic-{start // per_source}", kind="conversation",
                                           content_hash=f"{seed}-{start}"), items))
    return sources, questions


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(n_items: int, strategies: Sequence[str] = ("bm25", "dense", "hybrid"), n_queries: int = 200,
        data: Path = DEFAULT_DATA, baseline_queries: int = 20, extensions: bool = True, **settings: Any) -> dict[str, Any]:
    """Ingest ``n_items`` synthetic turns, time recall per strategy; ``extensions=False`` times the core alone."""
    data = require(data)
    sources, questions = synthetic_corpus(n_items, data)
    rng = random.Random(11)
    queries = [rng.choice(questions) for _ in range(n_queries)]
    out: dict[str, Any] = {"items": n_items, "extensions": extensions}
    with tempfile.TemporaryDirectory(prefix="mnemoscope-bench-") as tmp:
        mem = Memory(Path(tmp) / "bench.db", extensions=extensions, **settings)
        started, cpu = time.perf_counter(), time.process_time()
        mem.ingest_parsed(sources)
        out["ingest_ms_per_item"] = round((time.perf_counter() - started) * 1000 / n_items, 4)
        # CPU time too: on a shared machine wall time includes waiting for other jobs
        out["ingest_cpu_ms_per_item"] = round((time.process_time() - cpu) * 1000 / n_items, 4)
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
        started = time.perf_counter()
        reopened = Memory(Path(tmp) / "bench.db", extensions=extensions, **settings)
        out["open_s"] = round(time.perf_counter() - started, 3)
        reopened.close()
        mem.close()
    out["peak_rss_mb"] = round(peak_rss_mb(), 1)
    out["baselines"] = {"rank_bm25": rank_bm25_baseline(sources, queries[:baseline_queries])}
    return out


def rank_bm25_baseline(sources: list[ParsedSource], queries: list[str]) -> dict[str, float]:
    from rank_bm25 import BM25Okapi

    texts = [i.search_text() for p in sources for i in p.items]
    started = time.perf_counter()
    bm25 = BM25Okapi([_plain_words(t) for t in texts])
    index_ms = (time.perf_counter() - started) * 1000 / len(texts)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        scores = bm25.get_scores(_plain_words(q))
        np.argpartition(-scores, 10)[:10]
        times.append((time.perf_counter() - t0) * 1000)
    return {"index_ms_per_item": round(index_ms, 4), "query_ms_p50": round(statistics.median(times), 3)}
