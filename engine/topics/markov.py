"""Second-order Markov transitions between topics, learned from the order of items in sources.

Consecutive items of a source give topic sequences at every depth of the tree (runs of the same
topic collapsed). A move that crosses a session or section boundary counts ``cross_weight``, so
the counts are real numbers and are stored as such.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..arrays import merged, summed
from .tree import TopicTree

Transition = tuple[int, int, int, float]  # (prev2 or -1 for first order, prev1, next, weight)


def group_codes(groups: Sequence[object]) -> np.ndarray:
    """Group keys (a session number, a section title, None …) as small integers, equal where equal."""
    seen: dict[object, int] = {}
    return np.fromiter((seen.setdefault(g, len(seen)) for g in groups), dtype=np.int64, count=len(groups))


def source_transitions(leaves: np.ndarray, groups: Sequence[object] | np.ndarray, tree: TopicTree,
                       cross_weight: float = 0.5) -> list[Transition]:
    """Transitions of one source, given its items' best leaves and group keys (or their
    :func:`group_codes`) in position order. Each depth's moves are summed before the next
    depth's are made: a long source's moves at every depth are never held at once (weights are
    sums of 1 and ``cross_weight``, exact in any order)."""
    if len(leaves) < 2 or tree.flat:
        return []
    codes = groups if isinstance(groups, np.ndarray) else group_codes(groups)
    boundary = np.ones(len(leaves))
    boundary[1:] = np.where(codes[1:] == codes[:-1], 1.0, cross_weight)
    at = tree.leaf_pos[leaves]
    size = len(tree) + 1
    keys, sums = np.zeros(0, dtype=np.int64), np.zeros(0)
    for d in range(tree.ancestor_matrix.shape[1]):
        valid = np.flatnonzero(tree.depth[leaves] > d)
        seq = tree.ancestor_matrix[at[valid], d]
        if len(seq) < 2:
            continue
        change = np.flatnonzero(seq[1:] != seq[:-1]) + 1
        steps = seq[np.concatenate([[0], change])]
        weights = np.concatenate([[1.0], boundary[valid[change]]])
        for a, b, c, w in ((np.full(len(steps) - 1, -1), steps[:-1], steps[1:], weights[1:]),  # first order
                           (steps[:-2], steps[1:-1], steps[2:], weights[2:])):  # second order
            keys, sums = merged(keys, sums, *summed(((a + 1) * size + b) * size + c, w))
    return list(zip((keys // (size * size) - 1).tolist(), (keys // size % size).tolist(), (keys % size).tolist(),
                    sums.tolist()))


NODE_BITS = 20  # a transition's key packs (prev2 + 1, prev1, next): node numbers below 2**20
NODES = 1 << NODE_BITS
MERGE_SHARE = 8  # the changes since the last merge are merged once they hold 1/8 of the kept counts
KEPT_CONTEXTS = 4096  # contexts whose moves are kept between look-ups (all are dropped past it)


class TransitionModel:
    """P(next | prev, current) = λ·P₂ + (1−λ)·P₁ over a given candidate set, additively smoothed.

    The counts are kept as sorted keys (one int64 per distinct transition, packing prev2 or -1,
    prev1 and next) with their summed weights, not as a dict per context: a store of a million
    items has about a million distinct moves, and dicts of floats held hundreds of bytes each.
    A source's moves (added, or taken out when it is replaced) go to a small dict of changes that
    is merged into the arrays once it holds an eighth of them, so a write costs O(its moves)
    amortised. Weights are sums of 1 and ``cross_weight`` (0.5): exact in any order."""

    def __init__(self, rows: Sequence[Transition] = ()) -> None:
        # (sorted keys, their weights, key → weight added or taken out since the last merge,
        # context key → its moves read from these arrays (:meth:`_moves`)), replaced as one: a
        # recall in another thread reads one whole state, never the merged arrays without the
        # changes they took in, nor the changes without the arrays
        self._counted: tuple[np.ndarray, np.ndarray, dict[int, float], dict[int, dict[int, float]]] = (
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64), {}, {})
        self.add(rows)

    @staticmethod
    def _key(prev2: int | np.ndarray, prev1: int | np.ndarray, nxt: int | np.ndarray) -> np.ndarray:
        return ((np.asarray(prev2, dtype=np.int64) + 1) << NODE_BITS | prev1) << NODE_BITS | nxt

    def arrays(self) -> dict[str, np.ndarray]:
        """The counts (keys, weights), for :meth:`restore`: one row per distinct transition,
        where the store has one per source."""
        self._merge()
        keys, weights, _, _ = self._counted
        return {"keys": keys, "weights": weights}

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray]) -> "TransitionModel":
        """The model :meth:`arrays` gave (adopted, not copied)."""
        keys, weights = arrays["keys"], arrays["weights"]
        if len(keys) != len(weights) or keys.dtype != np.int64 or np.any(keys[1:] <= keys[:-1]) \
                or (len(keys) and (keys[0] < 0 or keys[-1] >= NODES ** 3)):
            raise ValueError("saved transitions are not sorted distinct keys with a weight each")
        model = cls()
        model._set(keys, weights.astype(np.float64, copy=False))
        return model

    def add(self, rows: Sequence[Transition]) -> None:
        """Count more transitions: a new source's, or every row at a load. Rows as many as an
        eighth of the counts, with no changes pending, are merged into the arrays at once (a
        copy of every count); fewer go to the dict of changes, one Python step per row, and the
        write that takes it past an eighth of the counts (and past 1,024 keys) merges it, at the
        cost of that copy."""
        self._change(rows, 1.0)

    def remove(self, rows: Sequence[Transition]) -> None:
        """Count transitions out again (a replaced source's old ones)."""
        self._change(rows, -1.0)

    def _change(self, rows: Sequence[Transition], sign: float) -> None:
        if not len(rows):
            return
        columns = np.array(rows, dtype=np.float64).reshape(-1, 4)
        prev2, prev1, nxt = (columns[:, n].astype(np.int64) for n in range(3))
        if prev1.min() < 0 or max(prev1.max(), nxt.max(), prev2.max() + 1) >= NODES or nxt.min() < 0:
            raise ValueError(f"topic numbers must lie in [0, {NODES})")
        keys, weights = self._key(prev2, prev1, nxt), sign * columns[:, 3]
        kept, kept_weights, changes, _ = self._counted
        if not changes and len(keys) >= len(kept) // MERGE_SHARE:  # a load from every row: at once
            self._set(*_merged(kept, kept_weights, *summed(keys, weights)))
            return
        for key, weight in zip(keys.tolist(), weights.tolist()):
            changes[key] = changes.get(key, 0.0) + weight
        if len(changes) > max(len(kept) // MERGE_SHARE, 1024):
            self._merge()

    def _merge(self) -> None:
        kept, kept_weights, changes, _ = self._counted
        if changes:
            keys = np.fromiter(changes, dtype=np.int64, count=len(changes))
            weights = np.fromiter(changes.values(), dtype=np.float64, count=len(changes))
            self._set(*_merged(kept, kept_weights, *summed(keys, weights)))

    def _set(self, keys: np.ndarray, weights: np.ndarray) -> None:
        """New count arrays with every change in them; the moves kept per context were read from
        the old ones."""
        self._counted = (keys, weights, {}, {})

    @staticmethod
    def _moves(counted: tuple[np.ndarray, np.ndarray, dict[int, float], dict[int, dict[int, float]]],
               context: int) -> dict[int, float]:
        """The merged counts of the moves out of one context (the key of its next topic 0): next
        topic → weight. The keys of a context are one run of the sorted keys, read once and kept
        until the arrays change: a walk asks about the same few contexts query after query, and a
        dict look-up per candidate costs a fraction of the array operations of a search."""
        keys, weights, _, moves_of = counted
        moves = moves_of.get(context)
        if moves is None:
            if len(moves_of) >= KEPT_CONTEXTS:
                moves_of.clear()
            lo, hi = np.searchsorted(keys, [context, context + NODES]).tolist()
            moves = moves_of[context] = dict(zip((keys[lo:hi] - context).tolist(), weights[lo:hi].tolist()))
        return moves

    def _counts(self, prev2: int, prev1: int, candidates: list[int]) -> np.ndarray | None:
        """The summed weight of each move (prev2, prev1) → candidate, 0 for a move never seen;
        None when nothing was ever counted out of that context (most second-order ones)."""
        context = ((prev2 + 1) << NODE_BITS | prev1) << NODE_BITS  # the key of (prev2, prev1) → topic 0
        counted = self._counted
        moves, changes = self._moves(counted, context), counted[2]
        if changes:
            counts = [moves.get(c, 0.0) + changes.get(context + c, 0.0) for c in candidates]
        elif moves:
            counts = [moves.get(c, 0.0) for c in candidates]
        else:
            return None
        return np.array([w if w > 1e-9 else 0.0 for w in counts], dtype=np.float64)

    def probabilities(self, prev: int, current: int, candidates: np.ndarray, lam: float, smoothing: float) -> np.ndarray | None:
        """Move probabilities restricted to ``candidates``; None when no transition is known."""
        nodes = np.asarray(candidates).tolist()  # Python ints: looked up in the kept moves
        p1 = _smoothed(self._counts(-1, current, nodes), smoothing)
        p2 = _smoothed(self._counts(prev, current, nodes), smoothing) if prev >= 0 else None
        if p1 is None or p2 is None:
            return p1 if p2 is None else p2
        return lam * p2 + (1 - lam) * p1


def _smoothed(counts: np.ndarray | None, smoothing: float) -> np.ndarray | None:
    if counts is None:
        return None
    total = counts.sum()
    if total <= 0:
        return None
    return (counts + smoothing) / (total + smoothing * len(counts))


def _merged(keys: np.ndarray, weights: np.ndarray, new_keys: np.ndarray, new_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two sorted distinct key lists as one, weights summed where both have a key; moves whose
    weight is taken out to nothing are dropped."""
    keys, weights = merged(keys, weights, new_keys, new_weights)
    kept = weights > 1e-9
    return (keys, weights) if kept.all() else (keys[kept], weights[kept])
