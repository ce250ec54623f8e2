"""Fact dedup: the exact key of a fact (stage one) and the per-subject matrix of its "subject
predicate object" vectors that a near duplicate is looked up in (stage two), as
:mod:`.building` uses them at ingest and :mod:`.curation` and :mod:`.transfer` key facts by."""

from __future__ import annotations

import re
from array import array

import numpy as np

from ..arrays import distinct
from ..text import STOPWORDS, normalize, words


def fact_key(subject: str, predicate: str, obj: str) -> str:
    """Stage-one dedup key: normalised words of subject, predicate and object."""
    return "|".join(" ".join(re.findall(r"\w+", normalize(x))) for x in (subject, predicate, obj))


class RowMatrix:
    """A subject's fact vectors, appended one at a time into a matrix that doubles its capacity.

    Up to :data:`SCAN_ALL` rows a lookup compares with every row. Past that it compares only with
    the rows that share one of the fact's :data:`RAREST` rarest words (an inverted index over the
    rows' words): a speaker of a year-long conversation states tens of thousands of facts, and a
    scan of them all for every new fact made ingest quadratic. A near duplicate shares almost
    every word, so it shares a rare one."""

    def __init__(self, ids: list[int], vectors: np.ndarray, words: list[set[str]]) -> None:
        """The rows of these facts (their ids, "s p o" vectors and content words, in one order)."""
        self.ids = list(ids)
        self.matrix = np.zeros((max(8, len(ids)), vectors.shape[1]), dtype=np.float32)
        self.matrix[: len(ids)] = vectors
        self._rows_of: dict[str, array] = {}  # word → rows stating it
        for row, row_words in enumerate(words):
            self._index(row, row_words)

    def add(self, row_id: int, vec: np.ndarray, words: set[str]) -> None:
        if len(self.ids) == len(self.matrix):
            self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])
        row = len(self.ids)
        self.matrix[row] = vec
        self.ids.append(row_id)
        self._index(row, words)

    def _index(self, row: int, words: set[str]) -> None:
        for w in words:
            self._rows_of.setdefault(w, array("l")).append(row)

    def nearest(self, vec: np.ndarray, words: set[str]) -> tuple[int | None, float]:
        if not self.ids:
            return None, 0.0
        if len(self.ids) <= SCAN_ALL:
            sims = self.matrix[: len(self.ids)] @ vec
            best = int(np.argmax(sims))
            return self.ids[best], float(sims[best])
        lists = sorted((self._rows_of[w] for w in words if w in self._rows_of), key=len)[:RAREST]
        if not lists:
            return None, 0.0
        rows = distinct(np.concatenate([np.frombuffer(rows, dtype=np.int64) for rows in lists]))
        sims = self.matrix[rows] @ vec
        best = int(np.argmax(sims))
        return self.ids[int(rows[best])], float(sims[best])


SCAN_ALL = 4096
RAREST = 3


def fact_words(subject: str, predicate: str, obj: str) -> set[str]:
    """The content words of a fact, as its dedup index keys them."""
    return {w for w in words(f"{subject} {predicate} {obj}") if w not in STOPWORDS}
