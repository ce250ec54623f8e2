"""SQL of the ranker: the feedback log, ranker state, co-access edges, trust, teacher vectors.

A recall writes nothing: its feedback token is signed and carries what feedback needs
(:mod:`engine.rank.tokens`), with the key the store was given when its ranker tables were made.
The feedback log keeps, per event, the token's id (so a token is accepted once, even by two
processes at once: a unique index), the query, what was shown and used, and the shown feature
vectors, so the learner's state can be rebuilt from it. Those rows are never rewritten: when the
ranker's feature set changes, its relearning keeps each event's hits described under the new set
beside the log (``feedback_described``, keyed by the feature names), so two processes with two
feature sets each keep their own and the log stays what was shown at the time. An event withdrawn by undo stays in the
log with its ``withdrawn_at`` time and counts for nothing. Every write of learned state bumps a
generation counter, so a process can tell, inside its own write transaction, whether another
process taught the ranker since it last loaded.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from ..errors import FeedbackError
from ..text import about_listener, asks_listener

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
    ),
    (
        "ranker-2",
        """
        DROP TABLE recall_tokens;
        ALTER TABLE feedback_events ADD COLUMN withdrawn_at REAL;
        CREATE UNIQUE INDEX feedback_events_token ON feedback_events(token);
        INSERT OR IGNORE INTO kv (key, value) VALUES ('rank.token_key', randomblob(32));
        INSERT OR IGNORE INTO kv (key, value) VALUES ('rank.generation', 0);
        """,
    ),
    (
        "ranker-3",
        """
        CREATE TABLE feedback_described (
            event_id INTEGER NOT NULL REFERENCES feedback_events(id) ON DELETE CASCADE,
            names TEXT NOT NULL,
            features BLOB NOT NULL,
            PRIMARY KEY (event_id, names)
        ) WITHOUT ROWID;
        """,
    ),
]

# A store not yet upgraded to ranker-3 opened read-only (the upgrade needs a write) goes on
# without the relearning's kept rows: the ranker relearns in memory, describing the events again.
DESCRIBED = "ranker-3"
READABLE_WITHOUT = frozenset({DESCRIBED})


def _asks_listener(text: object) -> bool:
    """:func:`asks_listener` for SQL: a text column a damaged store holds as bytes asks nothing."""
    return isinstance(text, str) and asks_listener(text)


def _about_listener(text: object) -> bool:
    """:func:`about_listener` for SQL: a text column a damaged store holds as bytes asks nothing."""
    return isinstance(text, str) and about_listener(text)


SQL_FUNCTIONS = (("asks_listener", 1, _asks_listener), ("about_listener", 1, _about_listener))

TOKEN_KEY = "rank.token_key"
GENERATION = "rank.generation"


@dataclass
class TokenRow:
    """What a recall's token carries (decoded and checked by :mod:`engine.rank.tokens`)."""

    token: str  # the token's id: what the feedback log keeps, unique
    created_at: float
    query: str
    shown: list[int]
    names: list[str]
    features: np.ndarray | None  # (len(shown), len(names)), None when not ranked by fused


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
    withdrawn_at: float | None = None


class CorruptFeedback(ValueError):
    """A feedback event whose stored row cannot be read (``event_id``)."""

    def __init__(self, event_id: int, reason: str) -> None:
        super().__init__(f"feedback event {event_id} cannot be read ({reason})")
        self.event_id = event_id


def _matrix(blob: bytes | None, rows: int) -> np.ndarray | None:
    if blob is None:
        return None
    return np.frombuffer(blob, dtype=np.float32).reshape(rows, -1).astype(np.float64)


def _ids(text: str) -> list[int]:
    ids = json.loads(text)
    if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise ValueError("not a list of item ids")
    return ids


def _feedback_row(r: Sequence) -> FeedbackRow:
    try:
        shown = _ids(r[4])
        names = json.loads(r[7])
        if not isinstance(r[3], str) or not isinstance(names, list):
            raise ValueError("query or feature names of the wrong type")
        return FeedbackRow(r[0], r[1], float(r[2]), r[3], shown, _ids(r[5]), _ids(r[6]), names,
                           _matrix(r[8], len(shown)), r[9])
    except (ValueError, TypeError) as exc:  # json.JSONDecodeError is a ValueError
        raise CorruptFeedback(r[0], str(exc)) from None


def state_checksum(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()


class RankerSQL:
    """Mixin of :class:`engine.store.Store`: everything the ranker stores."""

    conn: sqlite3.Connection
    missing: frozenset[str]

    # -- the token key and the generation --------------------------------------------------

    def token_key(self) -> bytes:
        row = self.conn.execute("SELECT value FROM kv WHERE key = ?", (TOKEN_KEY,)).fetchone()
        return bytes(row[0]) if row and row[0] else b""

    def ranker_generation(self) -> int:
        row = self.conn.execute("SELECT value FROM kv WHERE key = ?", (GENERATION,)).fetchone()
        return int(row[0]) if row else 0

    def bump_ranker_generation(self) -> int:
        """Inside a write transaction: the learned state changed; returns the new generation."""
        generation = self.ranker_generation() + 1
        self.conn.execute("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", (GENERATION, generation))
        return generation

    # -- feedback log -------------------------------------------------------------------------

    def insert_feedback(self, token: TokenRow, created_at: float, used: Sequence[int], ignored: Sequence[int]) -> int:
        """Log one event; a token already used is a :class:`FeedbackError` (the unique index holds
        even if a caller skipped :meth:`event_of_token`)."""
        row = FeedbackRow(0, token.token, created_at, token.query, token.shown, list(used), list(ignored), token.names,
                          token.features)
        try:
            return int(self._log_event(row, "INSERT").lastrowid)
        except sqlite3.IntegrityError:
            raise FeedbackError("this recall token was already used; recall again") from None

    def import_feedback(self, rows: Iterable[FeedbackRow]) -> int:
        """Log imported events as they were (times, withdrawal, features), skipping any whose
        token is already in the log; returns how many were added."""
        return sum(self._log_event(row, "INSERT OR IGNORE").rowcount for row in rows)

    def _log_event(self, row: FeedbackRow, verb: str) -> sqlite3.Cursor:
        blob = None if row.features is None else row.features.astype(np.float32).tobytes()
        return self.conn.execute(
            f"{verb} INTO feedback_events (token, created_at, query, shown, used, ignored, names, features, withdrawn_at)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            (row.token, row.created_at, row.query, json.dumps(row.shown), json.dumps(row.used), json.dumps(row.ignored),
             json.dumps(row.names), blob, row.withdrawn_at))

    def event_of_token(self, token: str) -> int | None:
        """The feedback event a token was already used for, if any."""
        row = self.conn.execute("SELECT id FROM feedback_events WHERE token = ?", (token,)).fetchone()
        return row[0] if row else None

    def feedback_events(self, limit: int | None = None, newest_first: bool = False, *,
                        withdrawn: bool = False, unreadable: list[CorruptFeedback] | None = None) -> list[FeedbackRow]:
        """The feedback log (without withdrawn events unless asked). A row whose JSON or
        features cannot be read raises :class:`CorruptFeedback` naming the event; or, given an
        ``unreadable`` list, is left out and named there (a listing or an export shows what can
        still be read; learning from a log with a hole in it would be learning something else)."""
        order = "DESC" if newest_first else "ASC"
        where = "" if withdrawn else " WHERE withdrawn_at IS NULL"
        sql = (f"SELECT id, token, created_at, query, shown, used, ignored, names, features, withdrawn_at"
               f" FROM feedback_events{where} ORDER BY id {order}")
        rows = self.conn.execute(sql + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
        if unreadable is None:
            return [_feedback_row(r) for r in rows]
        events = []
        for r in rows:
            try:
                events.append(_feedback_row(r))
            except CorruptFeedback as exc:
                unreadable.append(exc)
        return events

    def feedback_event(self, event_id: int) -> FeedbackRow | None:
        row = self.conn.execute("SELECT id, token, created_at, query, shown, used, ignored, names, features, withdrawn_at"
                                " FROM feedback_events WHERE id = ?", (event_id,)).fetchone()
        return _feedback_row(row) if row else None

    def described_feedback(self, names: Sequence[str]) -> dict[int, np.ndarray]:
        """Events' shown hits described again under the feature set ``names`` (event id → one row
        per shown hit), as the ranker's relearning kept them; none in a store opened read-only
        before the table was made (:data:`READABLE_WITHOUT`)."""
        if DESCRIBED in self.missing:
            return {}
        rows = self.conn.execute("SELECT event_id, features FROM feedback_described WHERE names = ?",
                                 (json.dumps(list(names)),)).fetchall()
        width = 4 * len(names)  # a row whose length is no whole number of hits is damaged: left out, described again
        return {r[0]: np.frombuffer(r[1], dtype=np.float32).reshape(-1, len(names)).astype(np.float64) for r in rows
                if isinstance(r[1], bytes) and width and len(r[1]) % width == 0}

    def add_described_feedback(self, names: Sequence[str], rows: Iterable[tuple[int, np.ndarray]]) -> None:
        """Keep events' shown hits described under the feature set ``names`` beside the log (the
        events' own rows stay as they were shown)."""
        key = json.dumps(list(names))
        self.conn.executemany("INSERT OR REPLACE INTO feedback_described (event_id, names, features) VALUES (?,?,?)",
                              [(event_id, key, matrix.astype(np.float32).tobytes()) for event_id, matrix in rows])

    def withdraw_feedback(self, event_id: int, at: float) -> None:
        self.conn.execute("UPDATE feedback_events SET withdrawn_at = ? WHERE id = ?", (at, event_id))

    def delete_feedback_event(self, event_id: int) -> None:
        """Delete one event's row (and, by cascade, its hits described again)."""
        self.conn.execute("DELETE FROM feedback_events WHERE id = ?", (event_id,))

    def count_feedback(self) -> int:
        """Feedback events that count (withdrawn ones do not)."""
        return self.conn.execute("SELECT COUNT(*) FROM feedback_events WHERE withdrawn_at IS NULL").fetchone()[0]

    def clear_feedback(self) -> None:
        for table in ("feedback_described", "feedback_events", "coaccess_edges", "item_trust", "ranker_state"):
            self.conn.execute(f"DELETE FROM {table}")

    def replace_learned_rows(self, trust: Iterable[tuple[int, float, int, float]],
                             edges: Iterable[tuple[int, int, float, float]]) -> None:
        """Trust and co-access rows rebuilt from the log (after an undo)."""
        self.conn.execute("DELETE FROM item_trust")
        self.conn.execute("DELETE FROM coaccess_edges")
        self.upsert_trust(trust)
        self.upsert_edges(edges)

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

    def item_meta_rows(self) -> list[tuple[int, str | None, str, int, str, int, int, int, int]]:
        """(id, speaker, title, text length, kind, whether the text asks, whether it exclaims,
        whether it asks the listener for something, whether it asks after the listener's news) of
        every item, for the ranker's features. The last two are read in Python
        (:func:`engine.text.asks_listener`, :func:`engine.text.about_listener`), only for the texts
        that ask."""
        return self.conn.execute("SELECT id, speaker, title, length(text), kind, instr(text, '?') > 0, instr(text, '!') > 0,"
                                 " CASE WHEN instr(text, '?') > 0 THEN asks_listener(text) ELSE 0 END,"
                                 " CASE WHEN instr(text, '?') > 0 THEN about_listener(text) ELSE 0 END"
                                 " FROM items ORDER BY id").fetchall()
