"""The store's sources and items counted, kept by triggers (migration ``counts-1``).

The app's header shows how many sources and items a store holds at each open. Counting them
walks an index of every item: at a million items that is megabytes read from the disk when the
store is not in the page cache. Kept as the knowledge totals are (``knowledge-9``): every insert
and delete of a source or an item moves its count, the foreign key's cascade from a deleted
source too (SQLite runs the triggers for a cascade's deletes), in the writer's own transaction,
so two processes writing at once keep them exact. The migration counts what an older store
holds. It is a part of the store of its own, not ``records``: nothing saved beside the store is
derived from this table, so a store's saved index and areas stay usable across it
(engine/index_file.py; a ``records`` migration would rebuild them all).
"""

from __future__ import annotations

import sqlite3

COUNTED = ("sources", "items")


def _count_trigger(table: str, write: str) -> str:
    """The trigger that moves ``table``'s count by each row ``write`` adds or removes."""
    sign = "+" if write == "INSERT" else "-"
    return (f"CREATE TRIGGER {table}_{write.lower()}_count AFTER {write} ON {table} BEGIN "
            f"UPDATE record_counts SET {table} = {table} {sign} 1; END;\n")


# each kept count as counted from every row: what the migration starts from and ``check`` compares
RECOUNTS = {table: f"SELECT COUNT(*) FROM {table}" for table in COUNTED}

RECORD_COUNTS = (
    "CREATE TABLE record_counts (id INTEGER PRIMARY KEY CHECK (id = 0), "
    + ", ".join(f"{table} INTEGER NOT NULL" for table in COUNTED) + ");\n"
    + "INSERT INTO record_counts VALUES (0, " + ", ".join(f"({RECOUNTS[table]})" for table in COUNTED) + ");\n"
    + "".join(_count_trigger(table, write) for table in COUNTED for write in ("INSERT", "DELETE")))

MIGRATIONS = [("counts-1", RECORD_COUNTS)]


class CountsSQL:
    """Mixin of :class:`engine.store.Store`: the kept counts of sources and items."""

    conn: sqlite3.Connection

    def counts(self) -> dict[str, int]:
        """Sources and items as kept: one row, not a count of every item."""
        row = self.conn.execute(f"SELECT {', '.join(COUNTED)} FROM record_counts").fetchone()
        return dict(zip(COUNTED, row))
