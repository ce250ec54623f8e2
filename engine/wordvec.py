"""Sentence vectors from bundled English word vectors: a dense signal that knows words the store
never uses.

The store's own latent space (LSA) knows only the store's co-occurrence, so a question worded in
other words than the store's ("queer support circle", "jogging", "inked") finds nothing there.
Word vectors learned on a large public corpus (GloVe 6B-50d; bench/build_word_vectors.py,
licence in engine/data/README.md) do: an item's vector is the idf-weighted sum of its words'
vectors, with the direction common to every item removed (it says "English text", not what the
item is about), and a query's vector is made the same way from all its words, those the store
lacks included. ``hybrid`` fuses its cosine beside BM25 and LSA (``word_vectors_weight``;
docs/benchmarks.md). Text with no English word (Korean) gets no vector and is scored as before.

The idf and the common direction depend on every item, so they are *fitted*, like the latent
model: a :class:`WordModel` is fitted on the live items when the latent model is (the store
keeps both, so every process and every reopening uses the same one), and items added later are
placed with it: their rows are appended, each vocabulary word's weighted vector is made once,
and a word the model has not seen weighs as the rarest word it knows. A space grown item by item
is therefore, array for array, the space made at once with the same model; only a refit, when
the store has grown by half, places every item again.
"""

from __future__ import annotations

import hashlib
import io
import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from typing import Callable, Mapping

import numpy as np

from .lazy import sparse as sp
from .query import FRAMING_WEIGHT, framing_tokens
from .text import lexical_tokens

FIT_BLOCK = 50_000  # rows read and placed at a time by a fit
MIN_COVERAGE = 0.5  # share of a query's tokens that must have a vector for the query to get one


class WordVectors:
    """Unit vectors of lexical tokens (Porter stems)."""

    def __init__(self, tokens: list[str], matrix: np.ndarray) -> None:
        self.row = {t: n for n, t in enumerate(tokens)}
        self.matrix = matrix

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    def table(self, tokens: list[str | None]) -> np.ndarray:
        """Rows for ``tokens`` in order (zeros where a token has no vector)."""
        out = np.zeros((len(tokens), self.dim), dtype=np.float32)
        found = [(n, self.row[t]) for n, t in enumerate(tokens) if t in self.row]
        if found:
            at, rows = map(list, zip(*found))
            out[at] = self.matrix[rows]
        return out


@lru_cache(maxsize=1)
def english_vectors() -> WordVectors:
    """The bundled vectors (GloVe 6B-50d for the 60,000 most frequent words; int8 codes)."""
    blob = resources.files(__package__).joinpath("data", "wordvec_en.npz").read_bytes()
    with np.load(io.BytesIO(blob)) as z:
        tokens = str(z["tokens"]).split("\n")
        matrix = z["codes"].astype(np.float32) * z["scales"][:, None]
    return WordVectors(tokens, matrix)


@dataclass(frozen=True)
class WordModel:
    """What places items in the word space, fitted on the live items at one moment."""

    idf: np.ndarray  # float32, per vocabulary id the fit saw
    unknown_idf: float  # for a word the fit did not see: as rare as a word can be then
    common: np.ndarray  # the removed common direction (float32; zeros when there was none)

    @property
    def signature(self) -> str:
        digest = hashlib.sha1(self.idf.tobytes() + self.common.tobytes() + repr(self.unknown_idf).encode())
        return "words-" + digest.hexdigest()[:10]

    def idf_of(self, term_ids: np.ndarray) -> np.ndarray:
        """float32 idf of vocabulary ids (``unknown_idf`` for ids the fit did not see)."""
        term_ids = np.asarray(term_ids, dtype=np.int64)
        seen = term_ids < len(self.idf)
        return np.where(seen, self.idf[np.where(seen, term_ids, 0)] if len(self.idf) else 0.0,
                        self.unknown_idf).astype(np.float32)

    def query(self, text: str, vocab: Mapping[str, int], vectors: WordVectors) -> np.ndarray | None:
        """The query's vector (framing words weigh ``FRAMING_WEIGHT``), or None when fewer than
        ``MIN_COVERAGE`` of its tokens have one (a Korean question with a year or a name in it)."""
        framing = framing_tokens()
        tokens = lexical_tokens(text)
        known = [t for t in tokens if t in vectors.row]
        if not known or len(known) < MIN_COVERAGE * len(tokens):
            return None
        weights = np.array([(FRAMING_WEIGHT if t in framing else 1.0) * self._idf_of(vocab.get(t)) for t in known])
        total = weights @ vectors.matrix[[vectors.row[t] for t in known]].astype(np.float64)
        total -= (total @ self.common) * self.common
        norm = np.linalg.norm(total)
        return (total / norm).astype(np.float32) if norm > 0 else None

    def _idf_of(self, term_id: int | None) -> float:
        return float(self.idf[term_id]) if term_id is not None and term_id < len(self.idf) else self.unknown_idf

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, idf=self.idf, common=self.common, unknown_idf=np.array(self.unknown_idf))
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> "WordModel":
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            return cls(z["idf"].astype(np.float32), float(z["unknown_idf"]), z["common"].astype(np.float32))


class WordSpace:
    """Items placed in the word space by one model. Each vocabulary word's vector × its idf is
    made when an item first uses the word and kept, so placing new items costs their own terms."""

    def __init__(self, model: WordModel, vectors: WordVectors | None = None) -> None:
        """``vectors`` None: the bundled ones (:func:`english_vectors`), read when the first item
        or query is placed, not when a store opens (reading them is a good part of its opening)."""
        self.model = model
        self._vectors = vectors
        self._words = 0

    @property
    def vectors(self) -> WordVectors:
        if self._vectors is None:
            self._vectors = english_vectors()
        return self._vectors

    @cached_property
    def _table(self) -> np.ndarray:
        """Rows of vocabulary ids [0, ``_words``)."""
        return np.zeros((0, self.vectors.dim), dtype=np.float32)

    def place(self, counts: sp.csr_matrix, vocab: Mapping[str, int]) -> np.ndarray:
        """Unit rows of documents × terms ``counts``: Σ count · idf · vector with the common
        direction removed (zero rows for documents with no known word)."""
        return self._unit(self._weighted(counts, vocab))

    def _weighted(self, counts: sp.csr_matrix, vocab: Mapping[str, int]) -> np.ndarray:
        self._cover(int(counts.indices.max()) + 1 if counts.nnz else 0, vocab)
        used = sp.csr_matrix((counts.data, counts.indices, counts.indptr), shape=(counts.shape[0], self._words))
        return np.asarray(used @ self._table[: self._words], dtype=np.float32).reshape(counts.shape[0], self.vectors.dim)

    def _unit(self, rows: np.ndarray) -> np.ndarray:
        common = self.model.common
        # einsum, not BLAS: a row's product must not depend on how many rows are placed with it
        rows = rows - np.outer(np.einsum("ij,j->i", rows, common), common)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return np.where(norms > 0, rows / np.where(norms > 0, norms, 1.0), 0.0).astype(np.float32)

    def _cover(self, needed: int, vocab: Mapping[str, int]) -> None:
        """Make the rows of vocabulary ids up to ``needed`` (only those not made yet)."""
        if needed <= self._words:
            return
        if needed > len(self._table):
            grown = np.zeros((max(needed, 2 * len(self._table), 1024), self.vectors.dim), dtype=np.float32)
            grown[: self._words] = self._table[: self._words]
            self._table = grown
        ids = np.arange(self._words, needed)
        self._table[self._words : needed] = self.vectors.table(_terms_of(vocab, self._words, needed)) * \
            self.model.idf_of(ids)[:, None]
        self._words = needed


def _terms_of(vocab: Mapping[str, int], first: int, stop: int) -> list[str | None]:
    """The terms of vocabulary ids [first, stop), read from the newest: ids are given in the
    order terms join the vocabulary, so a few new words cost a few steps, not the vocabulary."""
    out: list[str | None] = [None] * (stop - first)
    missing = stop - first
    for term, tid in reversed(vocab.items()):
        if first <= tid < stop and out[tid - first] is None:
            out[tid - first] = term
            missing -= 1
            if not missing:
                break
    return out


def fit(counts_of: Callable[[np.ndarray], sp.csr_matrix], n_rows: int, df: np.ndarray, alive: np.ndarray,
        vocab: Mapping[str, int], vectors: WordVectors) -> tuple[WordSpace, np.ndarray]:
    """A model fitted on the live rows among the first ``n_rows`` of documents × terms counts
    (``counts_of(rows)``; ``df`` per vocabulary id), and every row placed by it (zero rows for
    the dead). The counts are read and the rows placed ``FIT_BLOCK`` rows at a time (each row's
    numbers do not depend on the others placed with it): at a million items, the whole counts
    matrix and the placing's temporaries held at once took a gigabyte at every refit."""
    n_live = max(int(alive.sum()), 1)
    idf = np.log1p(n_live / np.maximum(df, 1.0)).astype(np.float32)
    space = WordSpace(WordModel(idf, math.log1p(n_live), np.zeros(vectors.dim, np.float32)), vectors)
    weighted = np.zeros((n_rows, vectors.dim), dtype=np.float32)
    for lo in range(0, n_rows, FIT_BLOCK):
        rows = np.arange(lo, min(lo + FIT_BLOCK, n_rows))
        weighted[rows] = space._weighted(counts_of(rows), vocab)
    weighted[~alive[:n_rows]] = 0.0
    common = _common_direction(weighted) if int(alive[:n_rows].sum()) > 1 else np.zeros(vectors.dim, np.float32)
    space.model = WordModel(idf, math.log1p(n_live), common.astype(np.float32))
    for lo in range(0, n_rows, FIT_BLOCK):
        weighted[lo:lo + FIT_BLOCK] = space._unit(weighted[lo:lo + FIT_BLOCK])
    return space, weighted


def _common_direction(rows: np.ndarray) -> np.ndarray:
    """The rows' first right singular vector, as the top eigenvector of their Gram matrix summed
    ``FIT_BLOCK`` rows at a time (an SVD of the whole n × dim matrix makes its n × dim factor and
    workspace: the ingest's peak at a few hundred thousand items). Its sign, which the model never
    reads, is the one along the rows' sum, so that one set of rows gives one model signature."""
    gram = np.zeros((rows.shape[1], rows.shape[1]))
    total = np.zeros(rows.shape[1])
    for lo in range(0, len(rows), FIT_BLOCK):
        block = rows[lo:lo + FIT_BLOCK].astype(np.float64)
        gram += block.T @ block
        total += block.sum(axis=0)
    top = np.linalg.eigh(gram)[1][:, -1]
    return top if top @ total >= 0 else -top
