"""SQL of the ranker: recall tokens, the feedback log, ranker state, co-access edges, trust,
teacher vectors.

Tokens are written when a recall is made (nothing ranks from them, so recall stays
read-only) and live until feedback uses them or they expire; the feedback log keeps, per event,
the feature vectors of what was shown, so the learner's buffers can be rebuilt from it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

MIGRATIONS = [
    (
        "ranker-1",
        """
        CREATE TABLE recall_tokens (
            token TEXT PRIMARY KEY,
            created_at REAL NOT NULL,
            query TEXT NOT NULL,
            shown TEXT NOT NULL,
            names TEXT NOT NULL DEFAULT '[]',
            features BLOB
        );
        CREATE INDEX recall_tokens_age ON recall_tokens(created_at);
        CREATE TABLE feedback_events (
            id INTEGER PRIMARY KEY,
            token TEXT NOT NULL,
            created_at REAL NOT NULL,
            query TEXT NOT NULL,
            shown TEXT NOT NULL,
            used TEXT NOT NULL,
            ignored TEXT NOT NULL,
            names TEXT NOT NULL DEFAULT '[]',
            features BLOB
        );
        CREATE TABLE ranker_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            blob BLOB NOT NULL,
            checksum TEXT NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE coaccess_edges (
            a INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            b INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            weight REAL NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (a, b),
            CHECK (a < b)
        ) WITHOUT ROWID;
        CREATE INDEX coaccess_b ON coaccess_edges(b);
        CREATE TABLE item_trust (
            item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            trust REAL NOT NULL,
            uses INTEGER NOT NULL DEFAULT 0,
            updated_at REAL NOT NULL
        );
        CREATE TABLE teacher_vectors (
            item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            model TEXT NOT NULL,
            vec BLOB NOT NULL
        );
        """,
    )
]


@dataclass
class TokenRow:
    token: str
    created_at: float
    query: str
    shown: list[int]
    names: list[str]
    features: np.ndarray | None  # (len(shown), len(names)) float32, None when not ranked by fused


@dataclass
class FeedbackRow:
    id: int
    token: str
    created_at: float
    query: str
    shown: list[int]
    used: list[int]
    ignored: list[int]
    names: list[str]
    features: np.ndarray | None


def _matrix(blob: bytes | None, rows: int) -> np.ndarray | None:
    if blob is None:
        return None
    return np.frombuffer(blob, dtype=np.float32).reshape(rows, -1).astype(np.float64)


def state_checksum(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


class RankerSQL:
    """Mixin of :class:`engine.store.Store`: everything the ranker stores."""

    conn: sqlite3.Connection

    # -- recall tokens ------------------------------------------------------------------------

    def insert_token(self, token: TokenRow) -> None:
        blob = None if token.features is None else token.features.astype(np.float32).tobytes()
        self.conn.execute(
            "INSERT INTO recall_tokens (token, created_at, query, shown, names, features) VALUES (?,?,?,?,?,?)",
            (token.token, token.created_at, token.query, json.dumps(token.shown), json.dumps(token.names), blob),
        )

    def token(self, token: str) -> TokenRow | None:
        row = self.conn.execute(
            "SELECT token, created_at, query, shown, names, features FROM recall_tokens WHERE token = ?", (token,)
        ).fetchone()
        if row is None:
            return None
        shown = json.loads(row[3])
        return TokenRow(row[0], row[1], row[2], shown, json.loads(row[4]), _matrix(row[5], len(shown)))

    def delete_token(self, token: str) -> None:
        self.conn.execute("DELETE FROM recall_tokens WHERE token = ?", (token,))

    def expire_tokens(self, older_than: float) -> int:
        return self.conn.execute("DELETE FROM recall_tokens WHERE created_at < ?", (older_than,)).rowcount

    def count_tokens(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM recall_tokens").fetchone()[0]

    # -- feedback log -------------------------------------------------------------------------

    def insert_feedback(self, token: TokenRow, created_at: float, used: Sequence[int], ignored: Sequence[int]) -> int:
        blob = None if token.features is None else token.features.astype(np.float32).tobytes()
        cur = self.conn.execute(
            "INSERT INTO feedback_events (token, created_at, query, shown, used, ignored, names, features)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (token.token, created_at, token.query, json.dumps(token.shown), json.dumps(list(used)),
             json.dumps(list(ignored)), json.dumps(token.names), blob),
        )
        return int(cur.lastrowid)

    def feedback_events(self, limit: int | None = None, newest_first: bool = False) -> list[FeedbackRow]:
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT id, token, created_at, query, shown, used, ignored, names, features FROM feedback_events ORDER BY id {order}"
        rows = self.conn.execute(sql + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
        out = []
        for r in rows:
            shown = json.loads(r[4])
            out.append(FeedbackRow(r[0], r[1], r[2], r[3], shown, json.loads(r[5]), json.loads(r[6]),
                                   json.loads(r[7]), _matrix(r[8], len(shown))))
        return out

    def count_feedback(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM feedback_events").fetchone()[0]

    def clear_feedback(self) -> None:
        for table in ("feedback_events", "recall_tokens", "coaccess_edges", "item_trust", "ranker_state"):
            self.conn.execute(f"DELETE FROM {table}")

    # -- ranker state -------------------------------------------------------------------------

    def ranker_state(self) -> tuple[bytes, str] | None:
        row = self.conn.execute("SELECT blob, checksum FROM ranker_state WHERE id = 1").fetchone()
        return (bytes(row[0]), row[1]) if row else None

    def set_ranker_state(self, blob: bytes | None, updated_at: float) -> None:
        if blob is None:
            self.conn.execute("DELETE FROM ranker_state")
            return
        self.conn.execute("INSERT OR REPLACE INTO ranker_state (id, blob, checksum, updated_at) VALUES (1, ?, ?, ?)",
                          (blob, state_checksum(blob), updated_at))

    # -- co-access edges and trust ------------------------------------------------------------

    def coaccess_edges(self) -> list[tuple[int, int, float, float]]:
        return self.conn.execute("SELECT a, b, weight, updated_at FROM coaccess_edges").fetchall()

    def upsert_edges(self, rows: Iterable[tuple[int, int, float, float]]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO coaccess_edges (a, b, weight, updated_at) VALUES (?,?,?,?)", rows)

    def delete_edges(self, pairs: Iterable[tuple[int, int]]) -> None:
        self.conn.executemany("DELETE FROM coaccess_edges WHERE a = ? AND b = ?", pairs)

    def trust_rows(self) -> list[tuple[int, float, int, float]]:
        return self.conn.execute("SELECT item_id, trust, uses, updated_at FROM item_trust").fetchall()

    def upsert_trust(self, rows: Iterable[tuple[int, float, int, float]]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO item_trust (item_id, trust, uses, updated_at) VALUES (?,?,?,?)", rows)

    def count_ranker_rows(self, item_ids: Sequence[int]) -> dict[str, int]:
        """How many edges and trust rows a delete of these items would take with it."""
        marks = ",".join("?" * len(item_ids))
        edges = self.conn.execute(f"SELECT COUNT(*) FROM coaccess_edges WHERE a IN ({marks}) OR b IN ({marks})",
                                  [*item_ids, *item_ids]).fetchone()[0]
        trust = self.conn.execute(f"SELECT COUNT(*) FROM item_trust WHERE item_id IN ({marks})", list(item_ids)).fetchone()[0]
        return {"coaccess_edges": edges, "trust_rows": trust}

    # -- teacher vectors ----------------------------------------------------------------------

    def set_teacher_vectors(self, model: str, rows: Iterable[tuple[int, np.ndarray]]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO teacher_vectors (item_id, model, vec) VALUES (?,?,?)",
                              ((iid, model, v.astype(np.float32).tobytes()) for iid, v in rows))

    def teacher_vectors(self) -> tuple[np.ndarray, np.ndarray]:
        rows = self.conn.execute("SELECT item_id, vec FROM teacher_vectors ORDER BY item_id").fetchall()
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        return ids, np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])

    def item_meta_rows(self) -> list[tuple[int, str | None, str, int, str]]:
        """(id, speaker, title, text length, kind) of every item, for the ranker's features."""
        return self.conn.execute("SELECT id, speaker, title, length(text), kind FROM items ORDER BY id").fetchall()
