"""The answer-likeness prior: which *kind* of item people use, learned from feedback.

Query-matching evidence (an item was used for a similar query) rarely carries over to a question
nobody asked before. What does carry over is the shape of a useful item: in a conversation,
people use informative statements ("I joined a mentorship program last weekend") and the turn
that opens a session with news, and ignore chit-chat ("Wow, that's great! How have you been?")
that happens to share words with many queries. The prior is a small L2-regularised logistic
model over an item's *descriptor* — its terms hashed into :data:`BUCKETS` buckets, its length
band, whether it opens its session, whether it asks or exclaims — trained online on every
feedback event (used = 1, shown but ignored = 0) and scored for every candidate.

Its value is ``tanh(w · x / 2)`` without the intercept: zero for every item while nobody has
given feedback, so a store nobody taught ranks exactly as the heuristic. Only the gated model
reads it (the heuristic floor weighs it 0).

It is kept because ``bench/learning_headroom.py`` found it the only feedback-derived feature with
more headroom than noise on LoCoMo dev (docs/benchmarks.md, "Measurements behind the code").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arrays import ranges
from ..lazy import sparse as sp

BUCKETS = 4096  # term-id buckets: collisions are rare in a store's active vocabulary, and the weights stay small
LENGTH_BANDS = 8
STYLE = tuple(f"length_{n}" for n in range(LENGTH_BANDS)) + ("session_opening", "question", "exclamation")
WIDTH = BUCKETS + len(STYLE)


@dataclass
class PriorParams:
    lr: float = 0.5
    l2: float = 1e-3  # per row seen: keeps the weights of rare terms small
    passes: int = 2  # SGD passes over one event's rows


@dataclass
class Descriptors:
    """Binary descriptor rows of unit length, as (row, column) entries: a few hundred candidates
    touch a few thousand entries, so no sparse-matrix machinery is needed."""

    rows: np.ndarray
    cols: np.ndarray
    scale: np.ndarray  # per row: 1 / sqrt(entries)

    def dot(self, w: np.ndarray) -> np.ndarray:
        return np.bincount(self.rows, weights=w[self.cols], minlength=len(self.scale)) * self.scale

    def dense(self) -> np.ndarray:
        x = np.zeros((len(self.scale), WIDTH))
        x[self.rows, self.cols] = self.scale[self.rows]
        return x


def descriptors(term_rows: sp.csr_matrix, length: np.ndarray, opening: np.ndarray, question: np.ndarray,
                exclamation: np.ndarray) -> Descriptors:
    """Hashed term presence and the style flags of each item (two terms sharing a bucket count once)."""
    n = term_rows.shape[0]
    band = np.minimum((length * LENGTH_BANDS).astype(np.int64), LENGTH_BANDS - 1)
    rows = [np.repeat(np.arange(n), np.diff(term_rows.indptr)), np.arange(n)]
    cols = [term_rows.indices % BUCKETS, BUCKETS + band]
    for k, flag in enumerate((opening, question, exclamation)):
        hit = np.flatnonzero(flag)
        rows.append(hit)
        cols.append(np.full(len(hit), BUCKETS + LENGTH_BANDS + k))
    entries = np.sort(np.concatenate(rows).astype(np.int64) * WIDTH + np.concatenate(cols))
    first = np.ones(len(entries), dtype=bool)
    first[1:] = entries[1:] != entries[:-1]
    entries = entries[first]  # np.unique, without its overhead at this size
    r, c = entries // WIDTH, entries % WIDTH
    return Descriptors(r, c, 1.0 / np.sqrt(np.maximum(np.bincount(r, minlength=n), 1)))


@dataclass
class DescribedSlots:
    """The descriptors of the slots described so far, as flat entries per slot. An item's
    descriptor stays the same while the store holds the same items (``version``), and a recall's
    candidates are mostly items some earlier recall described: only the others are described."""

    version: tuple[int, ...]
    start: np.ndarray  # per slot: its first entry in ``cols``, −1 until described
    count: np.ndarray  # per slot: how many entries
    scale: np.ndarray  # per slot: 1 / sqrt(entries)
    cols: np.ndarray

    @classmethod
    def empty(cls, version: tuple[int, ...], n_slots: int) -> "DescribedSlots":
        return cls(version, np.full(n_slots, -1, dtype=np.int64), np.zeros(n_slots, dtype=np.int64), np.zeros(n_slots),
                   np.zeros(0, dtype=np.int64))

    def missing(self, slots: np.ndarray) -> np.ndarray:
        """The slots among ``slots`` (distinct) not described yet."""
        return slots[self.start[slots] < 0]

    def add(self, slots: np.ndarray, described: Descriptors) -> None:
        """Keep ``described``, the descriptors of ``slots`` (distinct), in that order."""
        counts = np.bincount(described.rows, minlength=len(slots))
        self.start[slots] = len(self.cols) + np.cumsum(counts) - counts
        self.count[slots] = counts
        self.scale[slots] = described.scale
        self.cols = np.concatenate([self.cols, described.cols])

    def of(self, slots: np.ndarray) -> Descriptors:
        """The descriptors of ``slots``, every one described already."""
        counts = self.count[slots]
        return Descriptors(np.repeat(np.arange(len(slots)), counts), self.cols[ranges(self.start[slots], counts)],
                           self.scale[slots])


class AnswerPrior:
    """Weights of the logistic model (the last entry is the intercept)."""

    def __init__(self, weights: np.ndarray | None = None, params: PriorParams | None = None) -> None:
        self.params = params or PriorParams()
        self.weights = np.zeros(WIDTH + 1) if weights is None else weights

    @property
    def trained(self) -> bool:
        return bool(np.any(self.weights))

    def score(self, d: Descriptors) -> np.ndarray:
        """tanh(w · x / 2) per row, intercept left out: 0 everywhere before any feedback."""
        if not self.trained:
            return np.zeros(len(d.scale))
        return np.tanh(0.5 * d.dot(self.weights[:-1]))

    def updated(self, d: Descriptors, used: np.ndarray) -> "AnswerPrior":
        """A new prior after SGD on one event's rows (``used`` true for the used ones); self is unchanged."""
        p = self.params
        x = d.dense()
        w = self.weights.copy()
        y = used.astype(np.float64)
        for _ in range(p.passes):
            margin = x @ w[:-1] + w[-1]
            g = 1.0 / (1.0 + np.exp(-np.clip(margin, -30, 30))) - y
            w[:-1] *= 1.0 - p.lr * p.l2 * len(y)
            w[:-1] -= p.lr * (x.T @ g)
            w[-1] -= p.lr * g.sum() / max(len(y), 1)
        return AnswerPrior(w, p)
