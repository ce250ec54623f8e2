"""Second-order Markov transitions between topics, learned from the order of items in sources.

Consecutive items of a source give topic sequences at every depth of the tree (runs of the same
topic collapsed). A move that crosses a session or section boundary counts ``cross_weight``, so
the counts are real numbers and are stored as such.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

import numpy as np

from .tree import TopicTree

Transition = tuple[int, int, int, float]  # (prev2 or -1 for first order, prev1, next, weight)


def source_transitions(leaves: np.ndarray, groups: Sequence[object], tree: TopicTree, cross_weight: float = 0.5) -> list[Transition]:
    """Transitions of one source, given its items' best leaves and group keys in position order."""
    if len(leaves) < 2 or tree.flat:
        return []
    boundary = np.ones(len(leaves))
    boundary[1:] = [1.0 if a == b else cross_weight for a, b in zip(groups[:-1], groups[1:])]
    ancestors = tree.ancestor_matrix[tree.leaf_pos[leaves]]
    counts: dict[tuple[int, int, int], float] = defaultdict(float)
    for d in range(ancestors.shape[1]):
        valid = np.flatnonzero(tree.depth[leaves] > d)
        seq = ancestors[valid, d]
        change = np.flatnonzero(seq[1:] != seq[:-1]) + 1
        steps = seq[np.concatenate([[0], change])] if len(seq) else seq
        weights = np.concatenate([[1.0], boundary[valid[change]]]) if len(seq) else seq
        for n in range(1, len(steps)):
            counts[(-1, int(steps[n - 1]), int(steps[n]))] += float(weights[n])
            if n >= 2:
                counts[(int(steps[n - 2]), int(steps[n - 1]), int(steps[n]))] += float(weights[n])
    return [(a, b, c, w) for (a, b, c), w in counts.items()]


class TransitionModel:
    """P(next | prev, current) = λ·P₂ + (1−λ)·P₁ over a given candidate set, additively smoothed."""

    def __init__(self, rows: Sequence[Transition]) -> None:
        self.first: dict[int, dict[int, float]] = defaultdict(dict)
        self.second: dict[tuple[int, int], dict[int, float]] = defaultdict(dict)
        self.add(rows)

    def add(self, rows: Sequence[Transition]) -> None:
        """Count more transitions (a new source's)."""
        for prev2, prev1, nxt, w in rows:
            table = self.first[prev1] if prev2 < 0 else self.second[(prev2, prev1)]
            table[nxt] = table.get(nxt, 0.0) + float(w)

    def probabilities(self, prev: int, current: int, candidates: np.ndarray, lam: float, smoothing: float) -> np.ndarray | None:
        """Move probabilities restricted to ``candidates``; None when no transition is known."""
        p1 = _smoothed(self.first.get(current), candidates, smoothing)
        p2 = _smoothed(self.second.get((prev, current)), candidates, smoothing) if prev >= 0 else None
        if p1 is None or p2 is None:
            return p1 if p2 is None else p2
        return lam * p2 + (1 - lam) * p1


def _smoothed(counts: dict[int, float] | None, candidates: np.ndarray, smoothing: float) -> np.ndarray | None:
    if not counts:
        return None
    c = np.array([counts.get(int(k), 0.0) for k in candidates])
    if c.sum() <= 0:
        return None
    return (c + smoothing) / (c.sum() + smoothing * len(c))
