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
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Mapping

import numpy as np

from .lazy import sparse as sp
from .query import FRAMING_WEIGHT, framing_tokens
from .text import lexical_tokens

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


@dataclass
class WordSpace:
    """The items of one index state in the word-vector space."""

    version: tuple[int, int, int]  # (slots, live items, vocabulary size) it was built for
    items: np.ndarray  # slots × dim, unit rows (zero for dead items and items with no known word)
    common: np.ndarray  # the removed common direction
    idf: np.ndarray  # per vocabulary id
    unknown_idf: float  # for a query word the store does not hold

    def query(self, text: str, vocab: Mapping[str, int], vectors: WordVectors) -> np.ndarray | None:
        """The query's vector (framing words weigh ``FRAMING_WEIGHT``), or None when fewer than
        ``MIN_COVERAGE`` of its tokens have one (a Korean question with a year or a name in it)."""
        framing = framing_tokens()
        total = np.zeros(vectors.dim, dtype=np.float64)
        tokens = lexical_tokens(text)
        if sum(t in vectors.row for t in tokens) < MIN_COVERAGE * len(tokens):
            return None
        for token in tokens:
            row = vectors.row.get(token)
            if row is None:
                continue
            tid = vocab.get(token)
            weight = self.idf[tid] if tid is not None and tid < len(self.idf) else self.unknown_idf
            total += (FRAMING_WEIGHT if token in framing else 1.0) * weight * vectors.matrix[row]
        total -= (total @ self.common) * self.common
        norm = np.linalg.norm(total)
        return (total / norm).astype(np.float32) if norm > 0 else None


def build_space(counts: sp.csr_matrix, df: np.ndarray, alive: np.ndarray, vocab: Mapping[str, int],
                vectors: WordVectors, version: tuple[int, int, int]) -> WordSpace:
    """Item vectors from the documents × terms ``counts``: Σ count · idf · vector, the common
    direction of the live items removed, unit length."""
    n_live = max(int(alive.sum()), 1)
    idf = np.log1p(n_live / np.maximum(df, 1.0)).astype(np.float32)
    tokens: list[str | None] = [None] * counts.shape[1]  # (an empty store's matrix still has one column)
    for token, tid in vocab.items():
        tokens[tid] = token
    table = vectors.table(tokens)
    table[: len(idf)] *= idf[:, None]
    items = np.asarray(counts @ table, dtype=np.float32).reshape(counts.shape[0], vectors.dim)
    items[~alive[: len(items)]] = 0.0
    live = items[alive[: len(items)]]
    common = np.linalg.svd(live, full_matrices=False)[2][0] if len(live) > 1 else np.zeros(vectors.dim, np.float32)
    items -= np.outer(items @ common, common)
    norms = np.linalg.norm(items, axis=1, keepdims=True)
    items = np.where(norms > 0, items / np.where(norms > 0, norms, 1.0), 0.0).astype(np.float32)
    return WordSpace(version, items, common.astype(np.float32), idf, math.log1p(n_live))
