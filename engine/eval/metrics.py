"""Retrieval metrics with binary relevance, and small statistics helpers."""

from __future__ import annotations

import math
from typing import Iterable, Sequence


def recall_at(ranked: Sequence, relevant: set, k: int) -> float:
    """Share of the relevant ids found in the top ``k``."""
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & relevant) / len(relevant)


def hit_at(ranked: Sequence, relevant: set, k: int) -> float:
    return 1.0 if set(ranked[:k]) & relevant else 0.0


def ndcg_at(ranked: Sequence, relevant: set, k: int) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, x in enumerate(ranked[:k]) if x in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def mrr_at(ranked: Sequence, relevant: set, k: int) -> float:
    for i, x in enumerate(ranked[:k]):
        if x in relevant:
            return 1.0 / (i + 1)
    return 0.0


METRICS = {
    "recall@2": lambda r, rel: recall_at(r, rel, 2),
    "recall@5": lambda r, rel: recall_at(r, rel, 5),
    "recall@10": lambda r, rel: recall_at(r, rel, 10),
    "hit@5": lambda r, rel: hit_at(r, rel, 5),
    "hit@10": lambda r, rel: hit_at(r, rel, 10),
    "ndcg@10": lambda r, rel: ndcg_at(r, rel, 10),
    "mrr@10": lambda r, rel: mrr_at(r, rel, 10),
}


def score(ranked: Sequence, relevant: set, names: Iterable[str]) -> dict[str, float]:
    return {name: METRICS[name](ranked, relevant) for name in names}


def mean_metrics(rows: list[dict[str, float]]) -> dict[str, float]:
    if not rows:
        return {}
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]}


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
