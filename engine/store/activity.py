"""SQL for the activity log (:mod:`engine.activity`): a bounded table of what changed, by whom."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Sequence

from ..activity import ActivityEvent, encode

MIGRATIONS = [
    (
        "activity-1",
        """
        CREATE TABLE activity (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at REAL NOT NULL,
            client TEXT NOT NULL,
            action TEXT NOT NULL,
            subject TEXT NOT NULL DEFAULT '',
            count INTEGER NOT NULL DEFAULT 0,
            source_id INTEGER,
            detail TEXT NOT NULL DEFAULT '{}'
        );
        """,
    )
]

_COLUMNS = "id, at, client, action, subject, count, source_id, detail"


def _event(row: Sequence) -> ActivityEvent:
    return ActivityEvent(id=row[0], at=row[1], client=row[2], action=row[3], subject=row[4], count=row[5],
                         source_id=row[6], detail=json.loads(row[7]))


class ActivitySQL:
    """Mixin of :class:`engine.store.Store`: the activity log."""

    conn: sqlite3.Connection

    def insert_activity(self, event: ActivityEvent, keep: int) -> int:
        """One line (inside the caller's transaction); lines beyond the newest ``keep`` go."""
        cur = self.conn.execute(
            "INSERT INTO activity (at, client, action, subject, count, source_id, detail) VALUES (?,?,?,?,?,?,?)",
            (event.at, event.client, event.action, event.subject, event.count, event.source_id, encode(event.detail)))
        event_id = int(cur.lastrowid)
        self.conn.execute("DELETE FROM activity WHERE id <= ?", (event_id - keep,))
        return event_id

    def last_activity_id(self) -> int:
        """The newest line's id (0 for none): a cursor that moves with every logged commit."""
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'activity'").fetchone()
        return int(row[0]) if row else 0

    def activity_after(self, cursor: int) -> list[ActivityEvent]:
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM activity WHERE id > ? ORDER BY id", (cursor,)).fetchall()
        return [_event(r) for r in rows]

    def activity_lines(self, limit: int, before: int | None = None) -> list[ActivityEvent]:
        """The newest ``limit`` lines (older than id ``before``), newest first."""
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM activity WHERE id < ? ORDER BY id DESC LIMIT ?",
                                 (before if before is not None else 2**62, limit)).fetchall()
        return [_event(r) for r in rows]


class ChangeWatch:
    """Whether anyone committed to a store since the last look: SQLite's ``PRAGMA data_version``
    on a connection of its own (read-only, never in a transaction), so that a tick costs the same
    at any size and never waits for the store's main connection, which a long write may hold.

    A look never waits either (no busy timeout): while another process holds the store locked
    (an exclusive lock, a WAL recovery) it sees no change yet, and looks again the next time."""

    def __init__(self, path: str | Path) -> None:
        self.uri = f"{Path(path).resolve().as_uri()}?mode=ro"
        self.conn = self._connect(self.uri)
        self.immutable = False
        self.version = self._look()  # None: not read yet (the store was locked)

    @staticmethod
    def _connect(uri: str) -> sqlite3.Connection:
        return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=0)

    def _read(self) -> int:
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def _look(self) -> int | None:
        """The store's data version, or None while another connection holds it locked."""
        try:
            return self._read()
        except sqlite3.OperationalError as exc:
            name = exc.sqlite_errorname
            if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
                return None
            if self.immutable or not name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN")):
                raise
        # a WAL store in a folder this user may not write, without its -shm file: read as it is,
        # as the store itself then does (StoreBase._connect); no change is seen. Only then: a
        # store merely locked for a while must not lose every later change.
        self.conn.close()
        self.conn = self._connect(self.uri + "&immutable=1")
        self.immutable = True
        return self._read()

    def changed(self) -> bool:
        """True once for each look after another connection (of any process) committed, and at
        the first look that reads the store after it was locked (a change may have come meanwhile)."""
        version = self._look()
        if version is None or version == self.version:
            return False
        self.version = version
        return True

    def close(self) -> None:
        self.conn.close()
