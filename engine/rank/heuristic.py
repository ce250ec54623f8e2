"""The heuristic floor: a fixed linear score over the static features.

It is what ``fused`` returns before any learning, and what the learned ranker must beat on
held-out feedback before it gets any say. The weights were tuned by coordinate ascent on the dev
data (the only data there is): recall@10 + nDCG@10 on the five LoCoMo dev conversations,
recall@5 + recall@10 (× 0.5) on the MuSiQue and HotpotQA subsets, nDCG@10 (× 2) on MIRACL-ko;
the checks that held out are in docs/benchmarks.md ("Measurements behind the code"). What they say: the knowledge graph's
PageRank (seeded by the query's entities and BM25 hits) carries the most; the neighbours of a
strong turn often hold the evidence; turns by a speaker the question names (not their short
questions: features.asks_after_others), and longer items, are likelier answers. The word space's
weight (``words``, turns only: a turn's or the question it answers) was chosen later, on the
knowledge-update sets and LoCoMo dev (docs/benchmarks.md, session 14), and so was ``present_recency``'s (session
16): for a question about what holds now, of two turns alike the newer is likelier the answer. Without the PageRank signal (``fused_signals=""``) these weights lean too little
on BM25: multi-hop recall falls below BM25 alone. Learned features weigh 0 here: only the gated
model may use them, so feedback can never pull the floor down.
"""

from __future__ import annotations

import numpy as np

WEIGHTS: dict[str, float] = {
    "signal_ppr": 1.00,  # the knowledge graph's PageRank (engine/knowledge), seeded by the query's entities and BM25 hits
    "bm25": 0.30,
    "bm25_rank": 0.10,
    "dense": 0.15,
    "dense_rank": 0.10,
    "words": 0.30,  # turns: the bundled word space, an answer's own or its question's (features.answered_question)
    "rrf": -0.05,
    "neighbour_bm25": 0.20,  # conversation turns only
    "neighbour_dense": 0.10,
    "speaker": 1.30,
    "present_recency": 0.10,  # a question about what holds now (engine/query.py's asks_now): newer items
    "length": 0.45,
    "signal_answer": 0.15,  # BM25 of items holding the kind of answer asked for, e.g. a time for "when" (engine/query.py)
}


def weights_for(names: tuple[str, ...]) -> np.ndarray:
    """The weight vector in a feature order (0 for features the floor does not use)."""
    return np.array([WEIGHTS.get(name, 0.0) for name in names])


def score(matrix: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    return matrix @ weights_for(names)
