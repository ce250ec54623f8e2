"""SQL for the in-memory index: items and their term rows read as columns, in batches.

Loading a large store must not build a Python object per item (a million ``Item``\\ s, or a
million pairs of small arrays, cost gigabytes): each batch comes back as flat numpy arrays.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Iterator

import numpy as np


@dataclass
class IndexBatch:
    """Items in id order, with their term rows concatenated (``lengths[i]`` terms of item i)."""

    ids: np.ndarray
    source_ids: np.ndarray
    positions: np.ndarray
    timestamps: list[str | None]
    lengths: np.ndarray
    terms: np.ndarray  # int32 term ids
    counts: np.ndarray  # float32


class IndexSQL:
    """Mixin of :class:`engine.store.Store`: the columns the search index is built from."""

    conn: sqlite3.Connection

    def iter_index_batches(self, batch: int = 50_000, ids: list[int] | None = None) -> Iterator[IndexBatch]:
        """Every item (or those of ``ids``) with its term row, ``batch`` at a time, in id order."""
        sql = ("SELECT i.id, i.source_id, i.position, i.timestamp, t.term_ids, t.counts FROM items i"
               " LEFT JOIN item_terms t ON t.item_id = i.id")
        if ids is not None:
            wanted = sorted(ids)
            for start in range(0, len(wanted), 900):
                chunk = wanted[start:start + 900]
                rows = self.conn.execute(f"{sql} WHERE i.id IN ({','.join('?' * len(chunk))}) ORDER BY i.id", chunk).fetchall()
                if rows:
                    yield _batch(rows)
            return
        last = 0
        while True:
            rows = self.conn.execute(f"{sql} WHERE i.id > ? ORDER BY i.id LIMIT ?", (last, batch)).fetchall()
            if not rows:
                return
            yield _batch(rows)
            last = rows[-1][0]


def _batch(rows: list[tuple]) -> IndexBatch:
    n = len(rows)
    term_blobs = [r[4] or b"" for r in rows]
    count_blobs = [r[5] or b"" for r in rows]
    return IndexBatch(
        ids=np.fromiter((r[0] for r in rows), dtype=np.int64, count=n),
        source_ids=np.fromiter((r[1] for r in rows), dtype=np.int64, count=n),
        positions=np.fromiter((r[2] for r in rows), dtype=np.int64, count=n),
        timestamps=[r[3] for r in rows],
        lengths=np.fromiter((len(b) // 4 for b in term_blobs), dtype=np.int64, count=n),
        terms=np.frombuffer(b"".join(term_blobs), dtype=np.int32),
        counts=np.frombuffer(b"".join(count_blobs), dtype=np.float32),
    )
