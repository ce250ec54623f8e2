"""The store: the only part of the engine that speaks SQL.

``Store`` is assembled from one mixin per area (records, knowledge, topics, ranker, counts), each in its
own module with its own migrations, on one shared connection (:mod:`engine.store.base`).
"""

from __future__ import annotations

from pathlib import Path

from . import activity, counts, knowledge, ranker, records, topics
from .activity import ActivitySQL
from .base import (NewerStore, NotAStore, OutOfRange, StoreBase, StoreBusy, StoreDamaged, StoreDiskError, StoreError,
                   StoreReadOnly)
from .counts import CountsSQL
from .index import IndexSQL
from .knowledge import KnowledgeSQL
from .ranker import RankerSQL
from .records import RecordsSQL
from .topics import TopicsSQL

MIGRATIONS = [*records.MIGRATIONS, *knowledge.MIGRATIONS, *topics.MIGRATIONS, *ranker.MIGRATIONS, *activity.MIGRATIONS,
              *counts.MIGRATIONS]


class Store(RecordsSQL, CountsSQL, IndexSQL, KnowledgeSQL, TopicsSQL, RankerSQL, ActivitySQL, StoreBase):
    """One SQLite file holding every record and the derived rows that make start-up fast."""

    SQL_FUNCTIONS = ranker.SQL_FUNCTIONS

    def __init__(self, path: str | Path, *, lock_timeout: float = 30.0, read_only: bool = False) -> None:
        super().__init__(path, MIGRATIONS, lock_timeout=lock_timeout, read_only=read_only,
                         readable_without=ranker.READABLE_WITHOUT)


__all__ = ["Store", "StoreError", "NotAStore", "NewerStore", "StoreBusy", "StoreReadOnly", "StoreDamaged", "StoreDiskError",
           "OutOfRange"]
