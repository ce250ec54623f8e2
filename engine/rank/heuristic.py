"""The heuristic floor: a fixed linear score over the static features.

It is what ``fused`` returns before any learning, and what the learned ranker must beat on
held-out feedback before it gets any say. The weights were tuned by coordinate ascent on the
dev data (the only data there is): recall@10 + nDCG@10 on the five LoCoMo dev conversations
plus recall@5 + recall@10 (×0.5) on the MuSiQue and HotpotQA subsets. Checks that held: tuned on
four LoCoMo conversations, the fifth gets 0.743 recall@10 (BM25 alone 0.626); tuned on LoCoMo and
one multi-hop set, the other gains over the LoCoMo-only weights (MuSiQue recall@5 0.598 → 0.637,
HotpotQA 0.74 → 0.82). What they say: the lexical score carries most of it; the neighbours of a
strong hit (same session, adjacent turn) often hold the evidence; turns by a speaker the question
names, and longer items, are likelier answers; the knowledge graph's PageRank finds the second
hop. Learned features weigh 0 here: only the gated model may use them, so feedback can never pull
the floor down.
"""

from __future__ import annotations

import numpy as np

WEIGHTS: dict[str, float] = {
    "bm25": 0.60,
    "bm25_rank": 0.25,
    "dense": 0.05,
    "dense_rank": 0.05,
    "rrf": -0.10,
    "neighbour_bm25": 0.40,
    "neighbour_dense": 0.15,
    "speaker": 1.25,
    "length": 0.55,
    "signal_ppr": 0.80,  # the knowledge graph's PageRank (engine/knowledge), when it is registered
}


def weights_for(names: tuple[str, ...]) -> np.ndarray:
    """The weight vector in a feature order (0 for features the floor does not use)."""
    return np.array([WEIGHTS.get(name, 0.0) for name in names])


def score(matrix: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    return matrix @ weights_for(names)
