"""Sparse rows that grow by appended entries: what the feedback log's query indexes are kept as.

The ranker's query indexes (the marks' tokens, the queries each item was used for) gain a few
entries per feedback event and are read at every recall. As a sparse matrix, every event rebuilt
them from the whole log, right before the next recall. As flat (row, column, value) entries, an
event appends its own, and a row's product with a vector is one ``bincount`` over them: entries of
one row and column add up, so a row that grows keeps what it held and takes a new entry. The log
of a store taught by hand holds thousands of entries, not millions: sweeping them all per recall
costs less than one sparse-matrix construction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


def _empty(dtype: type) -> np.ndarray:
    return np.zeros(0, dtype=dtype)


@dataclass
class GrowingRows:
    """(row, column, value) entries; a row is the sum of its entries."""

    rows: np.ndarray = field(default_factory=lambda: _empty(np.int64))
    cols: np.ndarray = field(default_factory=lambda: _empty(np.int64))
    values: np.ndarray = field(default_factory=lambda: _empty(np.float64))

    def __len__(self) -> int:
        return len(self.rows)

    def append(self, rows: np.ndarray, cols: np.ndarray, values: np.ndarray) -> None:
        self.rows = np.concatenate([self.rows, rows.astype(np.int64, copy=False)])
        self.cols = np.concatenate([self.cols, cols.astype(np.int64, copy=False)])
        self.values = np.concatenate([self.values, values.astype(np.float64, copy=False)])

    def dot(self, vector: np.ndarray, n_rows: int) -> np.ndarray:
        """Each row's product with ``vector`` (indexed by column), for rows 0 … ``n_rows`` − 1."""
        return np.bincount(self.rows, weights=self.values * vector[self.cols], minlength=n_rows)
