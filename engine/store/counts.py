"""The store's sources and items counted, kept by triggers (migration ``counts-1``), and each
source's items (``counts-2``).

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
from dataclasses import dataclass

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


@dataclass(frozen=True)
class KeptPerRow:
    """Counts a table keeps for each row of another (each entity's, knowledge-7; each source's,
    counts-2): a row of them per owner, which triggers add and delete with the owner's row and
    others move with what they count. ``check`` compares them with the recount over every owner
    and every row of counts, so that an owner without its row (missing from a list read along
    the counts' index) and a row of an owner that is gone are found too."""

    table: str  # the counts: entity_counts
    key: str  # its column naming the owner: entity_id
    owners: str  # the owners' table (its ``id``): entities
    noun: str  # an owner, as check names it: entity
    recounts: dict[str, str]  # column → a query of (owner id, its count) over every row; an owner absent counts 0

    def create_sql(self, stem: str) -> str:
        """The table, a row for each owner filled from the recounts, and the triggers (named
        ``<owners>_<write>_<stem>``) that add and delete an owner's row with the owner."""
        return (f"CREATE TABLE {self.table} ({self.key} INTEGER PRIMARY KEY, "
                + ", ".join(f"{column} INTEGER NOT NULL DEFAULT 0" for column in self.recounts) + ");\n"
                f"INSERT INTO {self.table} ({self.key}) SELECT id FROM {self.owners};\n"
                + "".join(f"WITH m(id, n) AS ({sql}) UPDATE {self.table} SET {column} = m.n FROM m"
                          f" WHERE m.id = {self.table}.{self.key};\n" for column, sql in self.recounts.items())
                + f"CREATE TRIGGER {self.owners}_insert_{stem} AFTER INSERT ON {self.owners} BEGIN"
                f" INSERT OR IGNORE INTO {self.table} ({self.key}) VALUES (NEW.id); END;\n"
                f"CREATE TRIGGER {self.owners}_delete_{stem} AFTER DELETE ON {self.owners} BEGIN"
                f" DELETE FROM {self.table} WHERE {self.key} = OLD.id; END;\n")

    def drifts_sql(self) -> str:
        """Each owner whose row differs from its recount, in one statement (one snapshot): (owner
        id, the kept columns, their recounts); a kept column is NULL when the row is missing,
        a recount NULL when the owner is gone."""
        columns = list(self.recounts)
        recounted = [f"CASE WHEN o.id IS NULL THEN NULL ELSE COALESCE(r{n}.n, 0) END" for n in range(len(columns))]
        return (f"WITH {', '.join(f'r{n}(id, n) AS ({sql})' for n, sql in enumerate(self.recounts.values()))}"
                f" SELECT k.id, {', '.join(f'c.{c}' for c in columns)}, {', '.join(recounted)}"
                f" FROM (SELECT id FROM {self.owners} UNION SELECT {self.key} FROM {self.table}) k"
                f" LEFT JOIN {self.owners} o ON o.id = k.id LEFT JOIN {self.table} c ON c.{self.key} = k.id"
                + "".join(f" LEFT JOIN r{n} ON r{n}.id = k.id" for n in range(len(columns)))
                + f" WHERE o.id IS NULL OR c.{self.key} IS NULL OR "
                + " OR ".join(f"c.{c} != COALESCE(r{n}.n, 0)" for n, c in enumerate(columns)) + " ORDER BY k.id")


# Each source's items (counts-2), kept as the sources' and items' are: the Sources screen shows
# every source's count at each refresh, and counting them grouped every item of the store (a
# large part of a second of a worker's time at a million items). A source's deletion deletes
# its row (its items' cascade moves a row about to go).
SOURCE_ITEMS = KeptPerRow("source_counts", "source_id", "sources", "source",
                          {"items": "SELECT source_id, COUNT(*) FROM items GROUP BY source_id"})
_MOVE_SOURCE_COUNT = "UPDATE source_counts SET items = items {sign} 1 WHERE source_id = {row}.source_id;"
SOURCE_COUNTS = (SOURCE_ITEMS.create_sql("source_count") + f"""
CREATE TRIGGER items_insert_source_count AFTER INSERT ON items BEGIN {_MOVE_SOURCE_COUNT.format(sign="+", row="NEW")} END;
CREATE TRIGGER items_delete_source_count AFTER DELETE ON items BEGIN {_MOVE_SOURCE_COUNT.format(sign="-", row="OLD")} END;
CREATE TRIGGER items_update_source_count AFTER UPDATE OF source_id ON items WHEN OLD.source_id != NEW.source_id BEGIN
    {_MOVE_SOURCE_COUNT.format(sign="-", row="OLD")}
    {_MOVE_SOURCE_COUNT.format(sign="+", row="NEW")}
END;
""")

MIGRATIONS = [("counts-1", RECORD_COUNTS), ("counts-2", SOURCE_COUNTS)]


class CountsSQL:
    """Mixin of :class:`engine.store.Store`: the kept counts of sources and items."""

    conn: sqlite3.Connection

    def counts(self) -> dict[str, int]:
        """Sources and items as kept: one row, not a count of every item."""
        row = self.conn.execute(f"SELECT {', '.join(COUNTED)} FROM record_counts").fetchone()
        return dict(zip(COUNTED, row))

    def item_counts_by_source(self) -> dict[int, int]:
        """Items per source, as kept (counts-2): a row per source, not a count of every item.
        Sources without items are absent."""
        return dict(self.conn.execute("SELECT source_id, items FROM source_counts WHERE items > 0").fetchall())
