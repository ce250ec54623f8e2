"""The connection, transactions and migrations every part of the store shares."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from ..errors import StoreError


Migration = tuple[str, str]  # (unique name, SQL script)


class StoreBase:
    """One SQLite file in WAL mode, foreign keys on, every write inside ``transaction()``.

    A single connection serves the process; a re-entrant lock serialises its use across the
    app's worker threads. Other processes may read while this one writes (WAL).
    """

    def __init__(self, path: str | Path, migrations: Sequence[Migration]) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._depth = 0
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30.0)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA busy_timeout=30000")
            self._migrate(migrations)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: not a usable Mnemoscope store ({exc})") from None

    # -- transactions -------------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One atomic write. A nested call joins the outer transaction as a savepoint: if it
        fails, its own writes are undone, so a caller that catches the failure (an area's
        optional rebuild inside an import, say) commits the rest without a half-done part."""
        with self._lock:
            if self._depth:
                savepoint = f"nested_{self._depth}"
                self.conn.execute(f"SAVEPOINT {savepoint}")
                self._depth += 1
                try:
                    yield self.conn
                except BaseException:
                    if self.conn.in_transaction:  # (an I/O error may already have rolled it all back)
                        self.conn.execute(f"ROLLBACK TO {savepoint}")
                    raise
                finally:
                    self._depth -= 1
                    if self.conn.in_transaction:
                        self.conn.execute(f"RELEASE {savepoint}")
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self._depth = 0
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self._depth = 0
            self.conn.execute("COMMIT")

    def _in(self, sql: str, ids: Sequence[int], extra: Sequence = ()) -> list[tuple]:
        """Run ``sql`` (with one ``{marks}`` placeholder for the id list) over ``ids`` in chunks
        SQLite accepts; ``extra`` parameters go before the ids."""
        ids, out = list(ids), []
        for start in range(0, len(ids), 900):
            chunk = ids[start:start + 900]
            out.extend(self.conn.execute(sql.format(marks=",".join("?" * len(chunk))), [*extra, *chunk]).fetchall())
        return out

    def query(self, sql: str, params: Sequence = ()) -> list[sqlite3.Row]:
        with self._lock:
            cur = self.conn.execute(sql, params)
            return cur.fetchall()

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    # -- migrations ---------------------------------------------------------------------------

    def _migrate(self, migrations: Sequence[Migration]) -> None:
        self.conn.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at REAL)")
        done = {row[0] for row in self.conn.execute("SELECT name FROM schema_migrations")}
        pending = [(name, sql) for name, sql in migrations if name not in done]
        if not pending:
            return
        with self.transaction() as conn:
            for name, sql in pending:
                for statement in _statements(sql):
                    conn.execute(statement)
                conn.execute("INSERT INTO schema_migrations VALUES (?, julianday('now'))", (name,))
            conn.execute(f"PRAGMA user_version = {len(done) + len(pending)}")

    def data_version(self) -> int:
        """Changes whenever another connection commits (PRAGMA data_version)."""
        with self._lock:
            return self.conn.execute("PRAGMA data_version").fetchone()[0]

    @property
    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    def integrity_ok(self) -> bool:
        return self.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _statements(script: str) -> list[str]:
    """Split a migration script into statements (executescript would commit on its own)."""
    out, buf = [], ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
