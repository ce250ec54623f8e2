"""Inverted lists over a vector index: rows grouped by their nearest of a few hundred centroids.

A scan of a million quantized rows reads 128 MB per query and decodes it to float32. Grouping
the rows by the nearest centroid of a coarse k-means (an IVF, as in FAISS's ``IndexIVFFlat``)
lets a query score the centroids, then only the rows of the ``probe`` nearest lists: a few
percent of the store. What it misses is the rows whose list was not probed; the benchmark
reports its recall@10 against the exact scan (docs/scaling.md).

The centroids are fitted once, on an even sample of the rows the index holds when it first
grows past its threshold; later rows join the nearest list. Lists are kept as one row-to-list
column; the rows are grouped by list (a stable argsort) when a query first needs them after a
change, and the vector index keeps its codes in that order too, so that a probe reads a few
runs of contiguous rows.
"""

from __future__ import annotations

import numpy as np

from .arrays import Column

FIT_SAMPLE = 32_768  # rows the centroids are fitted on
FIT_ROUNDS = 8  # Lloyd iterations
# Rows scored against the centroids at a time when filed: the rows × lists product is
# ADD_BLOCK × lists float32 (16 MB at 1,024 lists), not one the size of every row given at once
ADD_BLOCK = 4_096


def fit_centroids(sample: np.ndarray, k: int, seed: int = 0, rounds: int = FIT_ROUNDS) -> np.ndarray:
    """k unit centroids of the unit rows ``sample`` by spherical k-means (cosine), started from
    k distinct sample rows; an emptied cluster keeps its previous centroid."""
    rng = np.random.default_rng(seed)
    k = min(k, len(sample))
    centroids = sample[rng.choice(len(sample), k, replace=False)].astype(np.float32)
    for _ in range(rounds):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        sizes = np.bincount(nearest, minlength=k)
        filled = sizes > 0
        sums = np.add.reduceat(sample[np.argsort(nearest, kind="stable")], (np.cumsum(sizes) - sizes)[filled], axis=0)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids[filled] = sums / np.where(norms > 0, norms, 1.0)
    return centroids


class InvertedLists:
    """Which list each row belongs to, and the rows of the lists nearest to a query."""

    def __init__(self, centroids: np.ndarray, lists: np.ndarray | None = None) -> None:
        self.centroids = np.asarray(centroids, dtype=np.float32)
        self._list_of = Column(np.int32, fill=-1, values=lists)
        self._order: np.ndarray | None = None  # rows grouped by list (None: regroup first)
        self._starts = np.zeros(0, dtype=np.int64)

    @property
    def n_lists(self) -> int:
        return len(self.centroids)

    def add(self, slots: np.ndarray, rows: np.ndarray) -> None:
        """Put rows (float32, unit) in their nearest list."""
        if not len(slots):
            return
        self._list_of.resize(int(slots.max()) + 1)
        for lo in range(0, len(slots), ADD_BLOCK):
            self._list_of.view[slots[lo:lo + ADD_BLOCK]] = np.argmax(rows[lo:lo + ADD_BLOCK] @ self.centroids.T, axis=1)
        self._order = None

    def order(self) -> np.ndarray:
        """Every filed row, grouped by list (list 0's rows first, each list in row order)."""
        if self._order is None:
            list_of = self._list_of.view
            grouped = np.argsort(list_of, kind="stable")
            self._order = grouped[list_of[grouped] >= 0]
            self._starts = np.searchsorted(list_of[self._order], np.arange(self.n_lists + 1))
        return self._order

    def runs(self, query: np.ndarray, probe: int) -> tuple[np.ndarray, np.ndarray]:
        """Where, in :meth:`order`, the rows of the ``probe`` lists nearest to ``query`` are: the
        (starts, stops) of contiguous runs, in order (neighbouring lists make one run)."""
        self.order()
        probe = min(probe, self.n_lists)
        nearest = np.sort(np.argpartition(-(self.centroids @ query), probe - 1)[:probe])
        starts, stops = self._starts[nearest], self._starts[nearest + 1]
        joined = np.concatenate([[False], starts[1:] == stops[:-1]])  # this list begins where the last ended
        return starts[~joined], stops[np.concatenate([~joined[1:], [True]])]

    def arrays(self) -> dict[str, np.ndarray]:
        return {"centroids": self.centroids, "lists": self._list_of.view}
