"""The heuristic floor: a fixed linear score over the static features.

It is what ``fused`` returns before any learning, and what the learned ranker must beat on
held-out feedback before it gets any say. The weights were tuned by coordinate ascent on
recall@10 + nDCG@10 over the LoCoMo dev conversations (the only data there is); a
leave-one-conversation-out check held (0.743 recall@10 on unseen conversations, against 0.626
for BM25 alone). What they say: the lexical score carries most of it; the neighbours of a strong
hit (same session, adjacent turn) often hold the evidence; turns by a speaker the question
names, and longer turns, are likelier answers. Learned features weigh 0 here: only the gated
model may use them, so feedback can never pull the floor down.
"""

from __future__ import annotations

import numpy as np

WEIGHTS: dict[str, float] = {
    "bm25": 0.70,
    "bm25_rank": 0.15,
    "dense_rank": 0.05,
    "rrf": -0.15,
    "neighbour_bm25": 0.35,
    "neighbour_dense": 0.15,
    "speaker": 0.55,
    "length": 1.00,
}


def weights_for(names: tuple[str, ...]) -> np.ndarray:
    """The weight vector in a feature order (0 for features the floor does not use)."""
    return np.array([WEIGHTS.get(name, 0.0) for name in names])


def score(matrix: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    return matrix @ weights_for(names)
