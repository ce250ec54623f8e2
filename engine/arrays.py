"""Compact in-memory arrays that grow by appending: the building blocks of the index.

An ingest appends a batch at a time. Rebuilding a whole array for every batch (``np.concatenate``)
costs O(store) per batch, so a long ingest turns quadratic; these keep spare capacity and double
it when full, so an append costs O(batch) amortised. They hold numpy arrays only: no Python
object per item.

* :class:`Column` — a 1-D array (item ids, flags, times …); ``view`` is the live part.
* :class:`Rows` — variable-length rows (an item's term ids and counts) in CSR form.
* :class:`SlotMap` — item id → slot, a dense lookup table instead of a dict of a million ints.
* Sorted-key arrays (:func:`summed`, :func:`merged`) — a sparse map of int64
  keys to summed values as two arrays, where a dict would hold an object per entry (the knowledge
  graph's entries, the topics' Markov counts).
"""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping

import numpy as np


class Column:
    """A 1-D array with spare capacity; ``view`` is its first ``len`` values (writable).
    ``values`` are adopted, not copied (an index read from its saved file keeps the file's
    mapped pages until it first grows)."""

    def __init__(self, dtype: np.dtype | type, fill: object = 0, values: np.ndarray | None = None) -> None:
        self.fill = fill
        self._a = np.zeros(0, dtype=dtype) if values is None else np.asarray(values, dtype=dtype)
        self._n = len(self._a)

    def __len__(self) -> int:
        return self._n

    @property
    def view(self) -> np.ndarray:
        return self._a[: self._n]

    def reserve(self, n: int) -> None:
        """Room for ``n`` values in all, not written: :meth:`extend` and :meth:`resize` write
        each value as it joins ``view``. Filled at once (``np.full``), the spare room, up to as
        much again as the values, was touched and held resident from the start (a long
        catch-up's graph and an ingest's index grew by doubling, and the topic rebuild at its
        end stood on all of it)."""
        if n > len(self._a):
            grown = np.empty(max(n, 2 * len(self._a), 64), dtype=self._a.dtype)
            grown[: self._n] = self._a[: self._n]
            self._a = grown

    def extend(self, values: np.ndarray | Iterable) -> None:
        values = np.asarray(values, dtype=self._a.dtype).reshape(-1)
        self.reserve(self._n + len(values))
        self._a[self._n : self._n + len(values)] = values
        self._n += len(values)

    def resize(self, n: int) -> None:
        """Grow to ``n`` values (new ones hold ``fill``); never shrinks."""
        if n > self._n:
            self.reserve(n)
            self._a[self._n : n] = self.fill
            self._n = n

    @property
    def nbytes(self) -> int:
        return self._a.nbytes


class Rows:
    """Variable-length rows of (index, value) pairs, appended in batches: a growable CSR."""

    def __init__(self, index_dtype: type = np.int32, value_dtype: type = np.float32) -> None:
        self.indptr = Column(np.int64, values=np.zeros(1, dtype=np.int64))
        self.indices = Column(index_dtype)
        self.values = Column(value_dtype)

    @classmethod
    def adopt(cls, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray) -> "Rows":
        """Rows over existing CSR arrays (not copied)."""
        rows = cls(indices.dtype.type, values.dtype.type)
        rows.indptr, rows.indices, rows.values = (Column(a.dtype, values=a) for a in (indptr, indices, values))
        return rows

    def arrays(self) -> dict[str, np.ndarray]:
        """The CSR arrays (views), to save: ``indptr``, ``indices``, ``values``."""
        return {"indptr": self.indptr.view, "indices": self.indices.view, "values": self.values.view}

    def __len__(self) -> int:
        return len(self.indptr) - 1

    @property
    def lengths(self) -> np.ndarray:
        """Each row's length."""
        return np.diff(self.indptr.view)

    def extend(self, rows: Iterable[tuple[np.ndarray, np.ndarray]]) -> None:
        rows = list(rows)
        if not rows:
            return
        lengths = np.fromiter((len(i) for i, _ in rows), dtype=np.int64, count=len(rows))
        self.extend_flat(lengths, np.concatenate([i for i, _ in rows]), np.concatenate([v for _, v in rows]))

    def extend_flat(self, lengths: np.ndarray, indices: np.ndarray, values: np.ndarray) -> None:
        """Append rows given as their lengths and their concatenated indices and values."""
        end = self.indptr.view[-1]
        self.indptr.extend(end + np.cumsum(lengths))
        self.indices.extend(indices)
        self.values.extend(values)

    def row(self, r: int) -> tuple[np.ndarray, np.ndarray]:
        lo, hi = self.indptr.view[r], self.indptr.view[r + 1]
        return self.indices.view[lo:hi], self.values.view[lo:hi]

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(lengths, indices, values) of some rows, concatenated in the given order."""
        rows = np.asarray(rows, dtype=np.int64)
        starts = self.indptr.view[rows]
        lengths = self.indptr.view[rows + 1] - starts
        positions = ranges(starts, lengths)
        return lengths, self.indices.view[positions], self.values.view[positions]

    @property
    def nbytes(self) -> int:
        return self.indptr.nbytes + self.indices.nbytes + self.values.nbytes


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending — what ``np.unique(values)`` returns — from one sort:
    numpy 2's ``np.unique`` (without ``return_inverse``) goes through a hash table that costs
    many times a sort on the engine's integer arrays (docs/benchmarks.md, session 6)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(s, s + n)`` for every (s, n), without a Python loop."""
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(lengths)
    out = np.ones(total, dtype=np.int64)
    nonempty = lengths > 0
    firsts = (ends - lengths)[nonempty]
    s = starts[nonempty]
    out[firsts[0]] = s[0]
    # at each row's first position, jump from the previous row's last value to this row's start
    prev_last = (s + lengths[nonempty] - 1)[:-1]
    out[firsts[1:]] = s[1:] - prev_last
    return np.cumsum(out)


def summed(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct keys, each with the sum of its values. The values of a key are summed in
    the order given only up to two of them: ``np.add.reduceat`` may pair three or more another way,
    so a float32 sum of those can differ in its last place from adding them one by one (use
    :func:`merged` list after list where that order matters)."""
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], values[order]
    if not len(keys):
        return keys, values
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return keys[starts], np.add.reduceat(values, starts)


def positions(keys: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each wanted key is or would go in the sorted ``keys``, and whether it is there."""
    at = np.searchsorted(keys, wanted)
    found = at < len(keys)
    found[found] = keys[at[found]] == wanted[found]
    return at, found


def merged(keys: np.ndarray, values: np.ndarray, new_keys: np.ndarray,
           new_values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Two lists of sorted distinct keys as one; where both have a key, its value is the first
    list's plus the second's (so a sum over several lists adds up in the order they are merged).
    The new entries are placed by binary search: a few new keys cost a copy of the list, not a
    sort of it. Neither list is changed."""
    if not len(keys) or not len(new_keys):
        return (keys, values) if len(keys) else (new_keys, new_values)
    at, found = positions(keys, new_keys)
    values = values.copy()
    values[at[found]] += new_values[found]
    fresh = ~found
    return np.insert(keys, at[fresh], new_keys[fresh]), np.insert(values, at[fresh], new_values[fresh])


class SlotMap(Mapping[int, int]):
    """Item id → slot for the live items, as a table indexed by id (ids are small and dense:
    SQLite gives each new item the next one). 4 bytes per id instead of a dict entry's ~100."""

    def __init__(self) -> None:
        self._table = Column(np.int32, fill=-1)
        self._count = 0

    def slots_of(self, ids: np.ndarray | Iterable[int]) -> np.ndarray:
        """The slot of each id, -1 where the id has none."""
        ids = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids), dtype=np.int64)
        out = np.full(len(ids), -1, dtype=np.int64)
        inside = (ids >= 0) & (ids < len(self._table))
        out[inside] = self._table.view[ids[inside]]
        return out

    def assign(self, ids: np.ndarray, slots: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids):
            return
        self._table.resize(int(ids.max()) + 1)
        table = self._table.view
        self._count += int(np.count_nonzero(table[ids] < 0))
        table[ids] = slots

    def drop(self, ids: np.ndarray) -> None:
        ids = np.asarray(ids, dtype=np.int64)
        ids = ids[(ids >= 0) & (ids < len(self._table))]
        table = self._table.view
        self._count -= int(np.count_nonzero(table[ids] >= 0))
        table[ids] = -1

    def __getitem__(self, item_id: int) -> int:
        if 0 <= item_id < len(self._table):
            slot = int(self._table.view[item_id])
            if slot >= 0:
                return slot
        raise KeyError(item_id)

    def __contains__(self, item_id: object) -> bool:
        return isinstance(item_id, (int, np.integer)) and 0 <= item_id < len(self._table) and self._table.view[item_id] >= 0

    def __iter__(self) -> Iterator[int]:
        return iter(np.flatnonzero(self._table.view >= 0).tolist())

    def __len__(self) -> int:
        return self._count
