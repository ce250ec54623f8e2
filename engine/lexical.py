"""BM25 over a sparse term-major matrix, with incremental add and delete.

Postings live in a term × document CSR matrix of raw term frequencies, so a query reads only the
rows of its own terms and scores every document with one ``np.bincount``. New documents go to a
small delta segment that is folded into the main matrix once it grows past a fraction of it;
deleted documents are masked at once and dropped at the next fold.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .lazy import sparse as sp


@dataclass
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    # "lucene": ln(1 + (N - df + .5) / (df + .5)), never negative.
    # "okapi": ln((N - df + .5) / (df + .5)) with negative values floored at epsilon × mean idf,
    #          exactly as rank_bm25.BM25Okapi does (kept to check our numbers against it).
    idf: str = "lucene"
    epsilon: float = 0.25


class BM25Index:
    """Documents are addressed by *slot*: a dense row number the caller allocates."""

    def __init__(self, params: BM25Params | None = None) -> None:
        self.params = params or BM25Params()
        self._main: sp.csr_matrix | None = None  # built by the first _refresh: opening a store
        self._pending: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # needs no sparse matrix
        self._delta: sp.csr_matrix | None = None
        self._delta_dirty = True
        self._lengths = np.zeros(0, dtype=np.float64)
        self._alive = np.zeros(0, dtype=bool)
        self._df = np.zeros(0, dtype=np.float64)
        self._doc_terms: dict[int, np.ndarray] = {}
        self._main_nnz = 0
        self._dead_in_main = 0

    # -- size ---------------------------------------------------------------------------------

    @property
    def n_docs(self) -> int:
        return int(self._alive.sum())

    @property
    def n_slots(self) -> int:
        return len(self._alive)

    def _grow(self, n_slots: int, n_terms: int) -> None:
        if n_slots > len(self._alive):
            extra = n_slots - len(self._alive)
            self._alive = np.concatenate([self._alive, np.zeros(extra, dtype=bool)])
            self._lengths = np.concatenate([self._lengths, np.zeros(extra)])
        if n_terms > len(self._df):
            self._df = np.concatenate([self._df, np.zeros(n_terms - len(self._df))])

    # -- writes -------------------------------------------------------------------------------

    def add(self, slots: np.ndarray | list[int], term_ids: list[np.ndarray], counts: list[np.ndarray]) -> None:
        """Index documents; ``term_ids[i]`` are unique term ids of slot ``slots[i]``."""
        if not len(slots):
            return
        slots = np.asarray(slots, dtype=np.int64)
        term_ids = [np.asarray(t, dtype=np.int64) for t in term_ids]
        counts = [np.asarray(c, dtype=np.float32) for c in counts]
        all_terms = np.concatenate(term_ids)
        self._grow(int(slots.max()) + 1, int(all_terms.max()) + 1 if len(all_terms) else 0)
        if self._alive[slots].any() or self._lengths[slots].any() or len(np.unique(slots)) < len(slots):
            raise ValueError("a slot is already used; slots are never reused")
        self._pending.update(zip(slots.tolist(), zip(term_ids, counts)))
        self._doc_terms.update(zip(slots.tolist(), term_ids))
        self._alive[slots] = True
        doc_of_entry = np.repeat(np.arange(len(slots)), [len(t) for t in term_ids])
        self._lengths[slots] = np.bincount(doc_of_entry, weights=np.concatenate(counts), minlength=len(slots))
        self._df += np.bincount(all_terms, minlength=len(self._df))
        self._delta_dirty = True

    def remove(self, slots: np.ndarray | list[int]) -> None:
        for slot in slots:
            slot = int(slot)
            if slot >= len(self._alive) or not self._alive[slot]:
                continue
            self._alive[slot] = False
            np.add.at(self._df, self._doc_terms.pop(slot), -1.0)
            if self._pending.pop(slot, None) is not None:
                self._delta_dirty = True
            else:
                self._dead_in_main += 1

    def _matrix_of(self, docs: dict[int, tuple[np.ndarray, np.ndarray]], n_terms: int, n_slots: int) -> sp.csr_matrix:
        if not docs:
            return sp.csr_matrix((n_terms, n_slots), dtype=np.float32)
        slots = np.concatenate([np.full(len(t), s, dtype=np.int64) for s, (t, _) in docs.items()])
        terms = np.concatenate([t for t, _ in docs.values()])
        data = np.concatenate([c for _, c in docs.values()])
        return sp.csr_matrix((data, (terms, slots)), shape=(n_terms, n_slots), dtype=np.float32)

    def prepare(self) -> None:
        """Build the matrices now (after a load every document is pending) rather than in the
        first query."""
        self._refresh()

    def _refresh(self) -> None:
        """Rebuild the delta segment, folding it into the main matrix when it has grown."""
        if not self._delta_dirty and not self._needs_compaction():
            return
        n_terms, n_slots = len(self._df), len(self._alive)
        if self._main is None:
            self._main = sp.csr_matrix((0, 0), dtype=np.float32)
        pending_nnz = sum(len(t) for t, _ in self._pending.values())
        if pending_nnz > 0.1 * max(self._main_nnz, 20_000) or self._needs_compaction():
            main = self._resize(self._main, n_terms, n_slots)
            merged = main + self._matrix_of(self._pending, n_terms, n_slots)
            if self._dead_in_main:
                merged = merged @ sp.diags(self._alive.astype(np.float32))
                merged.eliminate_zeros()
                self._dead_in_main = 0
            self._main = merged.tocsr()
            self._main_nnz = self._main.nnz
            self._pending = {}
            self._delta = sp.csr_matrix((n_terms, n_slots), dtype=np.float32)
        else:
            self._delta = self._matrix_of(self._pending, n_terms, n_slots)
        self._delta_dirty = False

    def _needs_compaction(self) -> bool:
        return self._dead_in_main > 0.2 * max(1, self.n_docs)

    @staticmethod
    def _resize(m: sp.csr_matrix, n_terms: int, n_slots: int) -> sp.csr_matrix:
        if m.shape == (n_terms, n_slots):
            return m
        m = m.copy()
        m.resize((n_terms, n_slots))
        return m

    # -- reads --------------------------------------------------------------------------------

    def document_frequency(self, term_id: int) -> float:
        """How many live documents hold the term."""
        return float(self._df[term_id]) if 0 <= term_id < len(self._df) else 0.0

    def idf(self, term_ids: np.ndarray) -> np.ndarray:
        n = float(self.n_docs)
        df = self._df[term_ids]
        if self.params.idf == "okapi":
            raw = np.log(n - df + 0.5) - np.log(df + 0.5)
            present = self._df > 0
            all_idf = np.log(n - self._df[present] + 0.5) - np.log(self._df[present] + 0.5)
            floor = self.params.epsilon * (all_idf.mean() if len(all_idf) else 0.0)
            return np.where(raw < 0, floor, raw)
        return np.log1p((n - df + 0.5) / (df + 0.5))

    def scores(self, term_ids: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """BM25 of every slot for a query of term ids (unknown terms already dropped)."""
        n_slots = len(self._alive)
        out = np.zeros(n_slots, dtype=np.float64)
        term_ids = np.asarray(term_ids, dtype=np.int64)
        term_ids = term_ids[term_ids < len(self._df)]
        if not len(term_ids) or not self.n_docs:
            return out
        weights = np.ones(len(term_ids)) if weights is None else np.asarray(weights, dtype=np.float64)[: len(term_ids)]
        self._refresh()
        k1, b = self.params.k1, self.params.b
        avgdl = self._lengths[self._alive].mean()
        term_weight = self.idf(term_ids) * weights
        for matrix in (self._main, self._delta):
            if matrix.shape[0] == 0 or matrix.nnz == 0:
                continue
            inside = term_ids < matrix.shape[0]
            rows, tw = term_ids[inside], term_weight[inside]
            starts, ends = matrix.indptr[rows], matrix.indptr[rows + 1]
            lengths = ends - starts
            if not lengths.sum():
                continue
            idx = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends)])
            docs = matrix.indices[idx]
            tf = matrix.data[idx].astype(np.float64)
            w = np.repeat(tw, lengths)
            norm = k1 * (1.0 - b + b * self._lengths[docs] / avgdl)
            out += np.bincount(docs, weights=w * tf * (k1 + 1.0) / (tf + norm), minlength=n_slots)[:n_slots]
        out[~self._alive] = 0.0
        return out

    def top(self, term_ids: np.ndarray, weights: np.ndarray | None, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(slots, scores) of the ``k`` best documents with a positive score, best first."""
        s = self.scores(term_ids, weights)
        return top_k(s, k)


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the ``k`` largest positive scores, best first, ties by index."""
    positive = np.flatnonzero(scores > 0)
    if not len(positive):
        return positive, scores[positive]
    if len(positive) > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        positive = positive[part]
    order = np.lexsort((positive, -scores[positive]))
    chosen = positive[order]
    return chosen, scores[chosen]
