"""SQL for the topic tree: the tree and its latent space, topic nodes, item assignments, transitions.

A rebuild replaces every row in one transaction, so a killed rebuild leaves the previous tree
whole. Assignments and transitions cascade with their items and sources.
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import numpy as np

from .base import SQLITE_MAX_INT

MIGRATIONS = [
    (
        "topics-1",
        """
        CREATE TABLE topic_tree (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            built_at REAL NOT NULL,
            n_items INTEGER NOT NULL,
            max_item_id INTEGER NOT NULL DEFAULT 0,
            space BLOB,
            space_terms TEXT NOT NULL DEFAULT '[]',
            message TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE topic_nodes (
            idx INTEGER PRIMARY KEY,
            path TEXT NOT NULL UNIQUE,
            parent INTEGER,
            extra_parents TEXT NOT NULL DEFAULT '[]',
            label TEXT NOT NULL,
            terms TEXT NOT NULL DEFAULT '[]',
            centroid BLOB
        );
        CREATE TABLE topic_items (
            item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            leaf INTEGER NOT NULL,
            weight REAL NOT NULL,
            PRIMARY KEY (item_id, leaf)
        ) WITHOUT ROWID;
        CREATE TABLE topic_transitions (
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            prev2 INTEGER NOT NULL,
            prev1 INTEGER NOT NULL,
            next INTEGER NOT NULL,
            weight REAL NOT NULL,
            PRIMARY KEY (source_id, prev2, prev1, next)
        ) WITHOUT ROWID;
        """,
    )
]


@dataclass
class TopicNodeRow:
    idx: int
    path: str
    parent: int  # -1 for a top-level topic
    extra_parents: list[int]
    label: str
    terms: list[str]
    centroid: np.ndarray | None


@dataclass
class TopicTreeRow:
    built_at: float
    n_items: int
    max_item_id: int  # items with a larger id arrived after the build
    space: bytes | None
    space_terms: list[str]
    message: str


Transition = tuple[int, int, int, float]  # (prev2 or -1 for first order, prev1, next, weight)


class TopicsSQL:
    """Mixin of :class:`engine.store.Store`: the topic tree's rows."""

    conn: sqlite3.Connection
    _in: Callable[..., list[tuple]]  # StoreBase._in

    def topic_tree(self) -> TopicTreeRow | None:
        row = self.conn.execute(
            "SELECT built_at, n_items, max_item_id, space, space_terms, message FROM topic_tree WHERE id = 1").fetchone()
        return TopicTreeRow(row[0], row[1], row[2], row[3], json.loads(row[4]), row[5]) if row else None

    def count_topics(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM topic_nodes").fetchone()[0]

    def topic_nodes(self) -> list[TopicNodeRow]:
        rows = self.conn.execute("SELECT idx, path, parent, extra_parents, label, terms, centroid FROM topic_nodes ORDER BY idx")
        return [TopicNodeRow(r[0], r[1], -1 if r[2] is None else r[2], json.loads(r[3]), r[4], json.loads(r[5]),
                             None if r[6] is None else np.frombuffer(r[6], dtype=np.float32)) for r in rows]

    def topic_assignments(self, item_ids: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(item ids, leaf topic indices, weights) of every stored assignment (or these items'),
        each item's best leaf first."""
        if item_ids is None:
            rows = self.conn.execute("SELECT item_id, leaf, weight FROM topic_items ORDER BY item_id, weight DESC, leaf").fetchall()
        else:
            rows = sorted(self._in("SELECT item_id, leaf, weight FROM topic_items WHERE item_id IN ({marks})", item_ids),
                          key=lambda r: (r[0], -r[2], r[1]))
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        arr = np.array(rows, dtype=np.float64)
        return arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64), arr[:, 2]

    def topic_transitions(self, source_ids: Sequence[int] | None = None) -> list[Transition]:
        """Every source's (or these sources') (prev2, prev1, next, weight) rows; the same
        transition in several sources comes once per source (the model sums them: cheaper than a
        GROUP BY at every open)."""
        if source_ids is not None:
            return self._in("SELECT prev2, prev1, next, weight FROM topic_transitions WHERE source_id IN ({marks})",
                            source_ids)
        return self.conn.execute("SELECT prev2, prev1, next, weight FROM topic_transitions").fetchall()

    def item_groups(self, up_to: int = SQLITE_MAX_INT) -> tuple[np.ndarray, list[object]]:
        """(item ids, group keys) of every item up to this id, in id order: its session, else its
        top heading (:func:`engine.topics.service.group_of`, read without building items)."""
        rows = self.conn.execute("SELECT id, json_extract(meta, '$.session'), json_extract(meta, '$.heading_path[0]')"
                                 " FROM items WHERE id <= ? ORDER BY id", (up_to,))
        ids, groups = array("q"), []  # (read row by row: every row's tuple is not held at once)
        for item_id, session, heading in rows:
            ids.append(item_id)
            groups.append(session or heading)
        return np.frombuffer(ids, dtype=np.int64), groups

    def source_best_leaves(self, source_id: int) -> tuple[np.ndarray, list[object]]:
        """(best leaf, group key) of each of a source's items that has a leaf, in position order:
        the source's moves once a catch-up has read it in pieces (each item's best leaf as
        :meth:`topic_assignments` orders them; the group key as :meth:`item_groups` reads it)."""
        rows = self.conn.execute(
            "SELECT best, json_extract(meta, '$.session'), json_extract(meta, '$.heading_path[0]') FROM"
            " (SELECT meta, position, (SELECT leaf FROM topic_items t WHERE t.item_id = i.id ORDER BY weight DESC, leaf LIMIT 1)"
            " AS best FROM items i WHERE source_id = ?) WHERE best IS NOT NULL ORDER BY position", (source_id,))
        leaves, groups = array("q"), []
        for best, session, heading in rows:
            leaves.append(best)
            groups.append(session or heading)
        return np.frombuffer(leaves, dtype=np.int64), groups

    def speakers(self) -> list[str]:
        """Every distinct speaker of an item."""
        return [r[0] for r in self.conn.execute("SELECT DISTINCT speaker FROM items WHERE speaker IS NOT NULL AND speaker != ''")]

    def count_topic_assignments(self, item_ids: Sequence[int]) -> int:
        n = 0
        for start in range(0, len(item_ids), 900):
            chunk = list(item_ids[start:start + 900])
            marks = ",".join("?" * len(chunk))
            n += self.conn.execute(f"SELECT COUNT(DISTINCT item_id) FROM topic_items WHERE item_id IN ({marks})", chunk).fetchone()[0]
        return n

    def replace_topic_tree(self, tree: TopicTreeRow, nodes: Iterable[TopicNodeRow]) -> None:
        """Drop the old tree (its assignments and transitions too) and write a new one."""
        for table in ("topic_transitions", "topic_items", "topic_nodes", "topic_tree"):
            self.conn.execute(f"DELETE FROM {table}")
        self.conn.execute(
            "INSERT INTO topic_tree (id, built_at, n_items, max_item_id, space, space_terms, message) VALUES (1, ?, ?, ?, ?, ?, ?)",
            (tree.built_at, tree.n_items, tree.max_item_id, tree.space, json.dumps(tree.space_terms, ensure_ascii=False), tree.message),
        )
        self.conn.executemany(
            "INSERT INTO topic_nodes (idx, path, parent, extra_parents, label, terms, centroid) VALUES (?,?,?,?,?,?,?)",
            ((n.idx, n.path, None if n.parent < 0 else n.parent, json.dumps(n.extra_parents), n.label,
              json.dumps(n.terms, ensure_ascii=False), None if n.centroid is None else n.centroid.astype(np.float32).tobytes())
             for n in nodes),
        )

    def insert_topic_assignments(self, rows: Iterable[tuple[int, int, float]]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO topic_items (item_id, leaf, weight) VALUES (?,?,?)", rows)

    def replace_topic_transitions(self, source_id: int, rows: Iterable[Transition]) -> None:
        self.conn.execute("DELETE FROM topic_transitions WHERE source_id = ?", (source_id,))
        self.conn.executemany(
            "INSERT INTO topic_transitions (source_id, prev2, prev1, next, weight) VALUES (?,?,?,?,?)"
            " ON CONFLICT (source_id, prev2, prev1, next) DO UPDATE SET weight = weight + excluded.weight",
            ((source_id, *r) for r in rows),
        )
