"""Re-tune the heuristic floor (``engine/rank/heuristic.py``) on the dev benchmarks.

The feature matrices of every question are computed once (fresh stores, the signals registered
now, no feedback), then coordinate ascent moves one weight at a time while the objective rises:
LoCoMo recall@10 + nDCG@10, MuSiQue and HotpotQA (recall@5 + recall@10) × 0.5, MIRACL-ko
nDCG@10 × 2. Run it when a signal changes; it prints the weights and the metrics before and
after, and writes nothing — the weights are code, reviewed like code. It tunes on the only data
there is (dev): quote held-out checks, not these figures, as evidence.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..memory import Memory
from ..rank import features as feats
from ..rank.heuristic import WEIGHTS
from . import locomo, miracl, multihop
from .harness import Question
from .metrics import ndcg_at, recall_at

STEPS = (-0.3, -0.15, -0.05, 0.05, 0.15, 0.3)


@dataclass
class Case:
    """One question: its candidates' features, their judged keys, and the relevant keys."""

    dataset: str
    matrix: np.ndarray
    keys: list
    relevant: set


def _cases(name: str, parsed, questions: list, key_of: Callable, tmp: Path, settings: dict[str, Any]) -> tuple[list[Case], tuple]:
    with Memory(tmp / f"{name}.db", **settings) as mem:
        mem.ingest_parsed(parsed)
        key = {mem.index.slot_of[i.id]: key_of(i) for p in parsed for i in p.items}
        out = []
        for question in questions:
            q, signals = mem.query(question.text, 10, "bm25")
            cf = feats.build(mem, q, signals, mem.ranker.meta, lambda *_: {}, mem.settings.candidate_k,
                             mem.ranker.extra_signals(), mem.settings.rrf_k)
            out.append(Case(name, cf.matrix, [key[int(s)] for s in cf.slots], question.relevant))
        return out, cf.names


def collect(data: Path, **settings: Any) -> tuple[list[Case], tuple[str, ...]]:
    """Feature matrices of every dev question (LoCoMo, MuSiQue, HotpotQA, MIRACL-ko)."""
    cases: list[Case] = []
    with tempfile.TemporaryDirectory(prefix="mnemoscope-tune-") as tmp:
        for n, (parsed, qs) in enumerate(locomo.load(data / "locomo" / "locomo10_dev.json")):
            found, names = _cases(f"locomo{n}", [parsed], qs, lambda i: i.key, Path(tmp), settings)
            cases += [Case("locomo", c.matrix, c.keys, c.relevant) for c in found]
        for ds in ("musique", "hotpotqa"):
            parsed, qs = multihop.load(data / "multihop" / f"{ds}_corpus.json", data / "multihop" / f"{ds}_questions.json")
            cases += _cases(ds, [parsed], qs, lambda i: i.title, Path(tmp), settings)[0]
        corpus, queries, relevant, _ = miracl.load(data / "miracl_ko")
        qs = [Question(text, relevant[qid]) for qid, text in queries.items() if qid in relevant]
        cases += _cases("miracl", [corpus], qs, lambda i: i.key, Path(tmp), settings)[0]
    return cases, names


def _ranked(case: Case, w: np.ndarray) -> list:
    scores = case.matrix @ w
    out, seen = [], set()
    for i in np.lexsort((np.arange(len(scores)), -scores)):
        if case.keys[i] not in seen:
            seen.add(case.keys[i])
            out.append(case.keys[i])
            if len(out) == 10:
                break
    return out


def metrics(cases: list[Case], w: np.ndarray) -> dict[str, dict[str, float]]:
    """Per dataset: recall@5, recall@10 and nDCG@10 over distinct keys."""
    rows: dict[str, list[tuple[float, float, float]]] = {}
    for c in cases:
        ranked = _ranked(c, w)
        rows.setdefault(c.dataset, []).append(
            (recall_at(ranked, c.relevant, 5), recall_at(ranked, c.relevant, 10), ndcg_at(ranked, c.relevant, 10)))
    return {ds: dict(zip(("recall@5", "recall@10", "ndcg@10"), np.round(np.mean(r, axis=0), 4).tolist()))
            for ds, r in rows.items()}


def objective(m: dict[str, dict[str, float]]) -> float:
    total = 0.0
    if "locomo" in m:
        total += m["locomo"]["recall@10"] + m["locomo"]["ndcg@10"]
    for ds in ("musique", "hotpotqa"):
        if ds in m:
            total += 0.5 * (m[ds]["recall@5"] + m[ds]["recall@10"])
    if "miracl" in m:
        total += 2 * m["miracl"]["ndcg@10"]
    return total


def tune(cases: list[Case], names: tuple[str, ...], rounds: int = 2) -> dict[str, Any]:
    """Coordinate ascent from the current weights over the static features."""
    start = np.array([WEIGHTS.get(n, 0.0) for n in names])
    w, best = start.copy(), objective(metrics(cases, start))
    for _ in range(rounds):
        for j, name in enumerate(names):
            if name in feats.LEARNED:
                continue
            for step in STEPS:
                trial = w.copy()
                trial[j] += step
                value = objective(metrics(cases, trial))
                if value > best + 1e-4:
                    w, best = trial, value
    return {"weights": {n: round(float(v), 3) for n, v in zip(names, w) if abs(v) > 1e-9},
            "before": metrics(cases, start), "after": metrics(cases, w)}
