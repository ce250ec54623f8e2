"""What every evaluation shares: temporary stores, timed queries, baselines, the JSON shape."""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import DataMissing, IngestError
from ..ingest import load_json
from ..memory import Memory
from ..records import ParsedSource
from .metrics import mean_metrics, percentile, score


def require(path: str | Path) -> Path:
    path = Path(path)
    if not path.exists():
        raise DataMissing(f"{path}: benchmark data not found (it lives in ../shared/data; see its README)")
    return path


def read_samples(path: str | Path) -> tuple[Path, str, list[Any]]:
    """A benchmark's JSON list of samples (LoCoMo's shape), with its path and text for the
    messages that name a line; malformed JSON or another shape is one line, not a traceback."""
    path = require(path)
    text = path.read_text(encoding="utf-8")
    samples = load_json(path, text)
    if not isinstance(samples, list):
        raise IngestError(path, "not a JSON list of conversations")
    return path, text, samples


@dataclass
class Question:
    text: str
    relevant: set
    category: str | None = None


@dataclass
class RunResult:
    """Per-question metric rows and timings of one system on one dataset."""

    rows: list[dict[str, float]] = field(default_factory=list)
    categories: list[str | None] = field(default_factory=list)
    index_ms: float = 0.0
    items: int = 0
    query_ms: list[float] = field(default_factory=list)

    def extend(self, other: "RunResult") -> None:
        self.rows += other.rows
        self.categories += other.categories
        self.index_ms += other.index_ms
        self.items += other.items
        self.query_ms += other.query_ms

    def summary(self) -> dict[str, Any]:
        cats = sorted({c for c in self.categories if c is not None})
        by_category = {
            c: {**mean_metrics([r for r, rc in zip(self.rows, self.categories) if rc == c]),
                "n": sum(1 for rc in self.categories if rc == c)}
            for c in cats
        }
        return {"metrics": mean_metrics(self.rows), "by_category": by_category, "timing": self.timing()}

    def timing(self) -> dict[str, float]:
        return {
            "index_ms_per_item": round(self.index_ms / max(self.items, 1), 4),
            "query_ms_p50": round(statistics.median(self.query_ms), 3) if self.query_ms else 0.0,
            "query_ms_p95": round(percentile(self.query_ms, 0.95), 3),
        }


# A corpus maps to the keys questions are judged on (an item's key, or its title).
KeyOf = Callable[[Any], Any]


def run_engine(
    parsed: Sequence[ParsedSource], questions: Sequence[Question], metrics: Sequence[str], strategy: str,
    key_of: KeyOf, depth: int = 10, options: dict[str, Any] | None = None, **settings: Any,
) -> RunResult:
    """Index ``parsed`` into a fresh temporary store and ask every question with ``strategy``."""
    return run_engine_sets(parsed, {"": questions}, metrics, strategy, key_of, depth, options, **settings)[""]


def run_engine_sets(
    parsed: Sequence[ParsedSource], question_sets: dict[str, Sequence[Question]], metrics: Sequence[str],
    strategy: str, key_of: KeyOf, depth: int = 10, options: dict[str, Any] | None = None, **settings: Any,
) -> dict[str, RunResult]:
    """Several question sets (e.g. perturbed queries) against one store built once."""
    results = {name: RunResult() for name in question_sets}
    with tempfile.TemporaryDirectory(prefix="mnemoscope-eval-") as tmp:
        mem = Memory(Path(tmp) / "eval.db", **settings)
        try:
            started = time.perf_counter()
            report = mem.ingest_parsed(parsed)
            index_ms = (time.perf_counter() - started) * 1000
            for name, questions in question_sets.items():
                result = results[name]
                result.index_ms, result.items = index_ms, report.items
                for q in questions:
                    t0 = time.perf_counter()
                    rec = mem.recall(q.text, top_k=depth, strategy=strategy, **(options or {}))
                    result.query_ms.append((time.perf_counter() - t0) * 1000)
                    ranked = dedupe([key_of(h.item) for h in rec.hits])
                    result.rows.append(score(ranked, q.relevant, metrics))
                    result.categories.append(q.category)
        finally:
            mem.close()
    return results


def run_rank_bm25(parsed: Sequence[ParsedSource], questions: Sequence[Question], metrics: Sequence[str],
                  key_of: KeyOf, depth: int = 10) -> RunResult:
    """The rank_bm25 reference: plain Okapi over lower-cased word tokens."""
    from rank_bm25 import BM25Okapi

    result = RunResult()
    items = [i for p in parsed for i in p.items]
    started = time.perf_counter()
    corpus = [plain_words(i.search_text()) for i in items]
    bm25 = BM25Okapi(corpus)
    result.index_ms = (time.perf_counter() - started) * 1000
    result.items = len(items)
    keys = [key_of(i) for i in items]
    for q in questions:
        t0 = time.perf_counter()
        scores = bm25.get_scores(plain_words(q.text))
        order = np.argsort(-scores, kind="stable")[: depth * 3]
        result.query_ms.append((time.perf_counter() - t0) * 1000)
        ranked = dedupe([keys[i] for i in order])
        result.rows.append(score(ranked, q.relevant, metrics))
        result.categories.append(q.category)
    return result


def plain_words(text: str) -> list[str]:
    """Lower-cased word tokens: the rank_bm25 reference's words, as its own examples split them."""
    return re.findall(r"\w+", text.lower())


def dedupe(keys: list) -> list:
    """``keys`` in order, each once: a ranking of evidence ids from hits that share one."""
    seen, out = set(), []
    for k in keys:
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


def run_system(name: str, parsed, questions, metrics, key_of, depth=10, options=None, **settings) -> RunResult:
    if name == "rank_bm25":
        return run_rank_bm25(parsed, questions, metrics, key_of, depth)
    return run_engine(parsed, questions, metrics, name, key_of, depth, options, **settings)


def run_system_sets(name: str, parsed, question_sets: dict[str, Sequence[Question]], metrics, key_of, depth=10,
                    options=None, **settings) -> dict[str, RunResult]:
    """:func:`run_system` for several question sets; the engine builds its store once for all."""
    if name == "rank_bm25":
        return {set_name: run_rank_bm25(parsed, qs, metrics, key_of, depth) for set_name, qs in question_sets.items()}
    return run_engine_sets(parsed, question_sets, metrics, name, key_of, depth, options, **settings)


def report(dataset: str, strategy: str, main: RunResult, baselines: dict[str, RunResult]) -> dict[str, Any]:
    out: dict[str, Any] = {"dataset": dataset, "strategy": strategy, "n_questions": len(main.rows), **main.summary()}
    if baselines:
        out["baselines"] = {name: r.summary() for name, r in baselines.items()}
    return out
