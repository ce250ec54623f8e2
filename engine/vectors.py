"""Item vectors addressed by slot, scored against a query with matrix products.

A small index keeps float32 rows: exact, and at 50k rows only 25 MB at 128 dimensions. Past
``quantize_above`` rows it keeps each row as int8 codes with one float32 scale (a quarter of the
memory: 128 MB instead of 512 MB for a million 128-dimension rows) and scores in two steps: the
codes rank every row, then the best ``RESCORE`` rows are scored again exactly from float32 rows
that the owner gives back on demand (:attr:`VectorIndex.exact`: the latent model projects an
item's terms again; stored vectors are read back). A row's code error is at most half a step of
its own scale, so the exact top rows are among the best codes' (measured in docs/benchmarks.md).

An index given ``lists_above`` (the store's own dense vectors) groups its rows into inverted lists
once it holds that many (engine/ivf.py), and a scan then reads only the rows of the lists nearest
to the query: approximate, a few times cheaper, checked against the exact scan in docs/scaling.md.
The lists are made by :meth:`VectorIndex.make_lists`, never by a write: the write that crosses
the threshold may be a recall's (the latent space projects new items when a query first needs
them), and fitting the lists takes seconds of CPU at 200k rows. Until they are made, scans read
every row as below the threshold; the owner makes them at an ingest's end or a save, or in a
thread of its own (engine/memory.py: after a recall or a warm-up), while other threads scan and write.
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np

from .arrays import Column
from .dense import one_blas_thread
from .ivf import FIT_SAMPLE, InvertedLists, fit_centroids
from .lexical import top_k

# The layout of :meth:`VectorIndex.arrays` (and of the inverted lists' arrays in it), stamped on
# every saved file that holds vectors: raise it when that layout changes (engine/index_file.py).
LAYOUT = 1
QUANTIZE_ABOVE = 50_000
RESCORE = 512  # rows of a scan scored again exactly
BLOCK = 65_536  # rows decoded at a time in a scan (a 32 MB float32 block at 128 dimensions)
PROBE_BLOCK = 4096  # probed rows decoded at a time (a float32 block that stays in the cache)
# Past this many rows a scan reads only the rows of the nearest inverted lists (engine/ivf.py):
# 2·√rows lists (at most MAX_LISTS), the nearest PROBE_SHARE of them probed per query (chosen
# for recall@10 ≥ 0.98 of the exact scan on the benchmark's store: docs/scaling.md).
LISTS_ABOVE = 200_000
MAX_LISTS = 1024
PROBE_SHARE = 0.18

ExactRows = Callable[[np.ndarray], np.ndarray]  # slots → their float32 rows, exactly


class VectorIndex:
    """Rows addressed by slot; cosine scores in one matrix-vector product per block."""

    def __init__(self, dim: int = 0, exact: ExactRows | None = None, quantize_above: int = QUANTIZE_ABOVE,
                 lists_above: int | None = None, probe_share: float = PROBE_SHARE, rescore: int = RESCORE) -> None:
        self.dim = dim
        self.exact = exact
        self.quantize_above = quantize_above
        self.lists_above = lists_above
        self.probe_share = probe_share  # of the lists a scan reads, once there are lists
        self.rescore = rescore  # rows of a scan of codes scored again exactly
        self.lists: InvertedLists | None = None  # once past lists_above rows (if given): scans probe the nearest lists
        self._grouped: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None  # (rows, codes, scales) by list
        self._m = np.zeros((0, dim), dtype=np.float32)  # float32 rows, or int8 codes once quantised
        self._scale = Column(np.float32)  # per-row scale of the codes
        self._n = 0
        self._alive = np.zeros(0, dtype=bool)
        self._writing = threading.Lock()  # a write, or make_lists reading rows or publishing its lists
        self._making = threading.Lock()  # one make_lists at a time
        self._set_meanwhile: list[np.ndarray] | None = None  # slots set while lists are made (filed as they are published)

    @property
    def quantized(self) -> bool:
        return self._m.dtype == np.int8

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        return self._m.nbytes + self._scale.nbytes + self._alive.nbytes

    # -- saved beside the store (engine/index_file.py) -----------------------------------------

    def arrays(self) -> dict[str, np.ndarray]:
        """The rows (float32, or int8 codes with their ``scale``) and live flags, as views."""
        out = {"rows": self._m[: self._n], "alive": self._alive[: self._n]}
        if self.quantized:
            out["scale"] = self._scale.view[: self._n]
        if self.lists is not None:
            out.update({f"lists.{name}": a for name, a in self.lists.arrays().items()})
        return out

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], exact: ExactRows | None = None,
                quantize_above: int = QUANTIZE_ABOVE, lists_above: int | None = None,
                probe_share: float = PROBE_SHARE, rescore: int = RESCORE) -> "VectorIndex":
        """An index over what :meth:`arrays` gave (adopted, not copied: the rows may stay mapped
        from the file until the index grows)."""
        rows, alive = arrays["rows"], arrays["alive"]
        scale = arrays.get("scale")
        if rows.ndim != 2 or len(alive) != len(rows) or (scale is not None) != (rows.dtype == np.int8) \
                or (scale is not None and len(scale) != len(rows)):
            raise ValueError("saved vectors do not fit together")
        index = cls(rows.shape[1], exact, quantize_above, lists_above, probe_share, rescore)
        index._m, index._alive, index._n = rows, alive, len(rows)
        if scale is not None:
            index._scale = Column(np.float32, values=scale)
        if "lists.centroids" in arrays:
            centroids, lists = arrays["lists.centroids"], arrays["lists.lists"]
            if centroids.shape[1:] != (rows.shape[1],) or len(lists) > len(rows) or lists.max(initial=-1) >= len(centroids):
                raise ValueError("saved inverted lists do not fit the vectors")
            index.lists = InvertedLists(centroids, lists)
        return index

    # -- writes -------------------------------------------------------------------------------

    def set(self, slots: np.ndarray, vectors: np.ndarray) -> None:
        slots = np.asarray(slots, dtype=np.int64)
        if not len(slots):
            return
        with self._writing:
            self._set(slots, vectors)

    def _set(self, slots: np.ndarray, vectors: np.ndarray) -> None:
        if not self.dim:
            self.dim = vectors.shape[1]
            self._m = np.zeros((0, self.dim), dtype=np.float32)
        need = int(np.max(slots)) + 1
        if not self.quantized and need > self.quantize_above:  # the rows held decide, not the room made for more
            self._quantize_all()
        if need > len(self._m):
            cap = max(need, int(len(self._m) * 1.5) + 64)
            grown = np.zeros((cap, self.dim), dtype=self._m.dtype)
            grown[: len(self._m)] = self._m
            self._m = grown
            self._alive = np.concatenate([self._alive, np.zeros(cap - len(self._alive), dtype=bool)])
            self._scale.resize(cap if self.quantized else 0)
        if self.quantized:
            codes, scale = quantize(np.asarray(vectors, dtype=np.float32))
            self._m[slots] = codes
            self._scale.view[slots] = scale
        else:
            self._m[slots] = vectors
        self._alive[slots] = True
        self._n = max(self._n, need)
        self._grouped = None
        if self.lists is not None:
            self.lists.add(slots, np.asarray(vectors, dtype=np.float32))
        elif self._set_meanwhile is not None:
            self._set_meanwhile.append(slots)

    @property
    def lists_due(self) -> bool:
        """Whether the index holds more than ``lists_above`` rows and no lists yet."""
        return self.lists is None and self.lists_above is not None and self._n > self.lists_above

    def make_lists(self, stop: Callable[[], bool] = lambda: False) -> bool:
        """Group the rows into inverted lists if they are due (:attr:`lists_due`): the centroids
        fitted on an even sample of the live rows, then every row filed, without holding up other
        threads' scans (they read every row until the lists are published) or writes (rows set
        meanwhile are filed as the lists are published). ``stop``, asked before each block is
        filed, abandons them (their owner was closed). Returns whether lists were made here."""
        with self._making:
            if not self.lists_due:
                return False
            with self._writing:
                n = self._n
                live = np.flatnonzero(self._alive[:n])
                sample = self.rows(live[np.linspace(0, len(live) - 1, min(FIT_SAMPLE, len(live))).astype(np.int64)])
                self._set_meanwhile = []
            try:
                with one_blas_thread():
                    lists = InvertedLists(fit_centroids(sample, min(MAX_LISTS, max(16, int(2 * np.sqrt(len(live)))))))
                    for lo in range(0, len(live), BLOCK):
                        if stop():
                            return False
                        block = live[lo:lo + BLOCK]
                        with self._writing:
                            rows = self.rows(block)
                        lists.add(block, rows)
                    with self._writing:
                        if self._set_meanwhile:
                            late = np.unique(np.concatenate(self._set_meanwhile))
                            lists.add(late, self.rows(late))
                        self.lists, self._grouped = lists, None
            finally:
                self._set_meanwhile = None
        return True

    def _quantize_all(self) -> None:
        codes, scale = quantize(self._m)
        self._m = codes
        self._scale = Column(np.float32, values=scale)

    def remove(self, slots: np.ndarray) -> None:
        with self._writing:
            slots = np.asarray([s for s in slots if s < len(self._alive)], dtype=np.int64)
            self._alive[slots] = False
            self._m[slots] = 0
            self._grouped = None

    # -- reads --------------------------------------------------------------------------------

    def rows(self, slots: np.ndarray) -> np.ndarray:
        """float32 rows of ``slots`` (decoded codes once quantised; zeros past the index)."""
        slots = np.asarray(slots, dtype=np.int64)
        inside = slots < self._n
        # np.take gathers whole rows several times faster than fancy indexing (the walk reads
        # thousands per query); the gather is the copy
        if inside.all():
            rows = np.take(self._m, slots, axis=0)
            if not self.quantized:
                return rows
            rows = rows.astype(np.float32)
            rows *= self._scale.view[slots, None]
            return rows
        out = np.zeros((len(slots), self.dim), dtype=np.float32)
        if inside.any():
            rows = np.take(self._m, slots[inside], axis=0).astype(np.float32)
            if self.quantized:
                rows *= self._scale.view[slots[inside], None]
            out[inside] = rows
        return out

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of every row to ``query`` (rows are L2-normalised); once quantised, the best
        :attr:`rescore` rows are exact and the others within a code step."""
        if not self._n or not self.dim:
            return np.zeros(self._n, dtype=np.float32)
        query = query.astype(np.float32)
        if self.lists is not None:
            return self._scan_lists(query)
        if not self.quantized:
            with one_blas_thread():
                return self._m[: self._n] @ query
        out = np.empty(self._n, dtype=np.float32)
        with one_blas_thread():
            for lo in range(0, self._n, BLOCK):
                hi = min(lo + BLOCK, self._n)
                out[lo:hi] = self._m[lo:hi].astype(np.float32) @ query
        out *= self._scale.view[: self._n]
        if self.exact is not None:
            self._rescore_best(np.arange(self._n), out, query)
        return out

    def top(self, query: np.ndarray, k: int) -> np.ndarray:
        """The rows of the ``k`` best positive :meth:`scores`, best first; once there are lists,
        found among the probed rows alone, with no array over every row."""
        if self.lists is None:
            return top_k(self.scores(query), k)[0]
        rows, found = self._probe(query.astype(np.float32))
        return rows[top_k(found, k)[0]]

    def _scan_lists(self, query: np.ndarray) -> np.ndarray:
        """:meth:`scores` of the rows in the nearest lists only (0 for the others)."""
        rows, found = self._probe(query)
        out = np.zeros(self._n, dtype=np.float32)
        out[rows] = found
        return out

    def _probe(self, query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows of the nearest lists and their scores, read from a copy of the
        codes grouped by list (made again after a change); once quantised, the best
        :attr:`rescore` of them are scored again exactly."""
        if self._grouped is None:
            order = self.lists.order()
            self._grouped = (order, self._m[order], self._scale.view[order] if self.quantized else None)
        order, codes, scale = self._grouped
        starts, stops = self.lists.runs(query, int(np.ceil(self.probe_share * self.lists.n_lists)))
        found = _run_scores(codes, starts, stops, query)
        if scale is not None:
            found *= _runs_of(scale, starts, stops)
        rows = _runs_of(order, starts, stops)
        if self.exact is not None and self.quantized:
            self._rescore_best(rows, found, query)
        return rows, found

    def _rescore_best(self, rows: np.ndarray, found: np.ndarray, query: np.ndarray) -> None:
        """Score the best :attr:`rescore` of ``rows`` again exactly (``found``: their code scores,
        in the same order; changed in place)."""
        if not len(rows):
            return
        best = np.argpartition(-found, min(self.rescore, len(rows)) - 1)[: self.rescore]
        best = best[self._alive[rows[best]]]
        found[best] = self.scores_at(rows[best], query)

    def scores_at(self, slots: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Scores of ``slots`` only (0 for slots past the index): a row gather, no scan; exact."""
        slots = np.asarray(slots, dtype=np.int64)
        out = np.zeros(len(slots), dtype=np.float32)
        if not self._n or not self.dim:
            return out
        inside = slots < self._n
        if self.quantized and self.exact is not None:
            live = inside & self._alive[np.where(inside, slots, 0)]
            if live.any():
                out[live] = self.exact(slots[live]) @ query.astype(np.float32)
            return out
        out[inside] = self.rows(slots[inside]) @ query.astype(np.float32)
        return out


def _run_scores(codes: np.ndarray, starts: np.ndarray, stops: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``codes @ query`` for the rows of the runs [start, stop), in order; int8 codes decoded
    :data:`PROBE_BLOCK` rows at a time into one float32 buffer that stays in the cache: the
    probed rows gathered and decoded at once (a hundred thousand at a million items) wrote and
    read back a float32 copy several times larger than the cache, most of a probe's time."""
    found = np.empty(int((stops - starts).sum()), dtype=np.float32)
    decoded = codes.dtype == np.float32  # rows already float32 are read in place, not copied
    block = None if decoded else np.empty((min(PROBE_BLOCK, len(found)), codes.shape[1]), dtype=np.float32)
    at = 0
    with one_blas_thread():
        for start, stop in zip(starts.tolist(), stops.tolist()):
            for lo in range(start, stop, PROBE_BLOCK):
                n = min(PROBE_BLOCK, stop - lo)
                if block is None:
                    rows = codes[lo:lo + n]
                else:
                    rows = block[:n]
                    rows[:] = codes[lo:lo + n]
                np.dot(rows, query, out=found[at:at + n])
                at += n
    return found


def _runs_of(values: np.ndarray, starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """``values`` of the runs [start, stop), concatenated in order (slices: no index array)."""
    return np.concatenate([values[a:b] for a, b in zip(starts.tolist(), stops.tolist())] or [values[:0]])


def quantize(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int8 codes and per-row scales with rows ≈ codes × scale (zero rows: scale 0)."""
    peak = np.abs(rows).max(axis=1) if rows.size else np.zeros(len(rows), dtype=np.float32)
    scale = (peak / 127.0).astype(np.float32)
    codes = np.rint(rows / np.where(scale > 0, scale, 1.0)[:, None]).astype(np.int8)
    return codes, scale
