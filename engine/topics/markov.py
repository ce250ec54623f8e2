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


def group_codes(groups: Sequence[object]) -> np.ndarray:
    """Group keys (a session number, a section title, None …) as small integers, equal where equal."""
    seen: dict[object, int] = {}
    return np.fromiter((seen.setdefault(g, len(seen)) for g in groups), dtype=np.int64, count=len(groups))


def source_transitions(leaves: np.ndarray, groups: Sequence[object] | np.ndarray, tree: TopicTree,
                       cross_weight: float = 0.5) -> list[Transition]:
    """Transitions of one source, given its items' best leaves and group keys (or their
    :func:`group_codes`) in position order."""
    if len(leaves) < 2 or tree.flat:
        return []
    codes = groups if isinstance(groups, np.ndarray) else group_codes(groups)
    boundary = np.ones(len(leaves))
    boundary[1:] = np.where(codes[1:] == codes[:-1], 1.0, cross_weight)
    ancestors = tree.ancestor_matrix[tree.leaf_pos[leaves]]
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    for d in range(ancestors.shape[1]):
        valid = np.flatnonzero(tree.depth[leaves] > d)
        seq = ancestors[valid, d]
        if len(seq) < 2:
            continue
        change = np.flatnonzero(seq[1:] != seq[:-1]) + 1
        steps = seq[np.concatenate([[0], change])]
        weights = np.concatenate([[1.0], boundary[valid[change]]])
        parts.append((np.full(len(steps) - 1, -1), steps[:-1], steps[1:], weights[1:]))  # first order
        parts.append((steps[:-2], steps[1:-1], steps[2:], weights[2:]))  # second order
    if not parts:
        return []
    a, b, c, w = (np.concatenate(x) for x in zip(*parts))
    size = len(tree) + 1
    keys, inverse = np.unique(((a + 1) * size + b) * size + c, return_inverse=True)
    sums = np.bincount(inverse, weights=w)  # adds in sequence order, as counting one by one does
    return list(zip((keys // (size * size) - 1).tolist(), (keys // size % size).tolist(), (keys % size).tolist(),
                    sums.tolist()))


class TransitionModel:
    """P(next | prev, current) = λ·P₂ + (1−λ)·P₁ over a given candidate set, additively smoothed."""

    def __init__(self, rows: Sequence[Transition]) -> None:
        self.first: dict[int, dict[int, float]] = defaultdict(dict)
        self.second: dict[tuple[int, int], dict[int, float]] = defaultdict(dict)
        self.add(rows)

    def arrays(self) -> dict[str, np.ndarray]:
        """The counts as columns (prev2 or -1, prev1, next, summed weight), for :meth:`restore`:
        one row per distinct transition, where the store has one per source."""
        keys = [(-1, prev1) for prev1 in self.first] + list(self.second)
        tables = list(self.first.values()) + list(self.second.values())
        sizes = np.array([len(t) for t in tables], dtype=np.int64)
        pairs = np.array(keys, dtype=np.int64).reshape(-1, 2)
        return {"prev2": np.repeat(pairs[:, 0], sizes), "prev1": np.repeat(pairs[:, 1], sizes),
                "next": np.fromiter((n for t in tables for n in t), dtype=np.int64, count=int(sizes.sum())),
                "weight": np.fromiter((w for t in tables for w in t.values()), dtype=np.float64, count=int(sizes.sum()))}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray]) -> "TransitionModel":
        """The model :meth:`arrays` gave (the same counts, a table per (prev2, prev1) built at once)."""
        prev2, prev1, nxt, weight = (arrays[k] for k in ("prev2", "prev1", "next", "weight"))
        if not len(prev2) == len(prev1) == len(nxt) == len(weight):
            raise ValueError("saved transitions do not fit together")
        model = cls([])
        order = np.lexsort((prev1, prev2))
        prev2, prev1, nxt, weight = prev2[order], prev1[order], nxt[order].tolist(), weight[order].tolist()
        starts = np.flatnonzero(np.concatenate([[True], (prev2[1:] != prev2[:-1]) | (prev1[1:] != prev1[:-1])])) if len(order) else order
        ends = np.append(starts[1:], len(order)).tolist()
        for start, end, p2, p1 in zip(starts.tolist(), ends, prev2[starts].tolist(), prev1[starts].tolist()):
            table = dict(zip(nxt[start:end], weight[start:end]))
            if p2 < 0:
                model.first[p1] = table
            else:
                model.second[(p2, p1)] = table
        return model

    def add(self, rows: Sequence[Transition]) -> None:
        """Count more transitions (a new source's)."""
        for prev2, prev1, nxt, w in rows:
            table = self.first[prev1] if prev2 < 0 else self.second[(prev2, prev1)]
            table[nxt] = table.get(nxt, 0.0) + float(w)

    def remove(self, rows: Sequence[Transition]) -> None:
        """Count transitions out again (a replaced source's old ones)."""
        for prev2, prev1, nxt, w in rows:
            table = self.first.get(prev1) if prev2 < 0 else self.second.get((prev2, prev1))
            if table is not None and nxt in table:
                left = table[nxt] - float(w)
                if left > 1e-9:
                    table[nxt] = left
                else:
                    del table[nxt]

    def probabilities(self, prev: int, current: int, candidates: np.ndarray, lam: float, smoothing: float) -> np.ndarray | None:
        """Move probabilities restricted to ``candidates``; None when no transition is known."""
        nodes = candidates.tolist()  # Python ints: looked up in the count tables without a conversion each
        p1 = _smoothed(self.first.get(current), nodes, smoothing)
        p2 = _smoothed(self.second.get((prev, current)), nodes, smoothing) if prev >= 0 else None
        if p1 is None or p2 is None:
            return p1 if p2 is None else p2
        return lam * p2 + (1 - lam) * p1


def _smoothed(counts: dict[int, float] | None, candidates: list[int], smoothing: float) -> np.ndarray | None:
    if not counts:
        return None
    c = np.array([counts.get(k, 0.0) for k in candidates])
    total = c.sum()
    if total <= 0:
        return None
    return (c + smoothing) / (total + smoothing * len(c))
