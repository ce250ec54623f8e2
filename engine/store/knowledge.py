"""SQL for the knowledge layer: entities, mentions, synonymy, facts, episodes, events, the LLM queue.

Provenance is kept as rows that reference ``items`` with ``ON DELETE CASCADE``: a fact or an
episode points at every item that states it, and loses exactly that pointer when an item goes.
Each item belongs to one current episode (``episode_items.item_id`` is the key) and remembers
its *home* episode, so a merge of episodes can always be split back.

Facts carry two kinds of time (migration ``knowledge-3``): when they held in the world
(``valid_from`` … ``valid_to``, ISO dates at the precision known; open ends are NULL) and when
this store believed them (``recorded_at`` … ``retired_at``, ISO UTC times). A superseded fact
keeps its row, its ``valid_to`` set and ``superseded_by`` naming its successor; an edited fact
is retired and its new version names it in ``version_of``. The ``key`` is unique, so a retired
version's key is archived as ``key#id``. ``conflicts`` is the inbox of what the rules could not
decide, and ``decisions`` the audit log: every decision keeps the before and after images of the
rows it changed (:meth:`KnowledgeSQL.recording`), which is what undoes it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

from .counts import KeptPerRow


@dataclass(slots=True)
class EpisodeMember:
    """What an episode shows of one of its items (:meth:`KnowledgeSQL.episode_members`)."""

    item_id: int
    source_id: int
    position: int
    speaker: str | None
    timestamp: str | None
    image_meta: dict[str, Any] | None  # the item's meta where it names an image caption


@dataclass(slots=True)
class DeferredPiece:
    """A source's next deferred items (:meth:`KnowledgeSQL.next_deferred`) and where they lie in it."""

    source_id: int
    ids: list[int]  # in position order
    more: bool  # whether more of the source's deferred items follow them


WRITES = ("INSERT", "UPDATE", "DELETE")
# Writes that move the knowledge_writes counter (knowledge-4): what the memos of facts and their
# provenance are keyed on, so writes elsewhere (feedback, trust) keep them.
COUNTED_TABLES = ("facts", "fact_sources", "entities")
# Writes that move the episode_writes counter (knowledge-5): what an episode shows (its row and
# merges, its members, their items' speakers, times and images, their events), so the episodes
# recall keeps survive feedback and other writes that change none of it. An item's insert shows
# only through its member row, its delete through the members' cascade: only its update counts.
EPISODE_WRITES = (*((table, write) for table in ("episodes", "episode_items", "events") for write in WRITES),
                  ("items", "UPDATE"))


def _write_counter(counter: str, writes: Iterable[tuple[str, str]], trigger_suffix: str) -> str:
    """SQL for a one-row table ``counter`` whose ``n`` each of ``writes`` (table, INSERT, UPDATE or
    DELETE) moves, in this process or any other: a memo keyed on it outlives other writes."""
    return (f"CREATE TABLE {counter} (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL);\n"
            f"INSERT INTO {counter} VALUES (0, 0);\n" + "".join(
                f"CREATE TRIGGER {table}_{write.lower()}_{trigger_suffix} AFTER {write} ON {table}\n"
                f"    BEGIN UPDATE {counter} SET n = n + 1; END;\n" for table, write in writes))


# An episode's start (knowledge-6): the earliest timestamp of its current items, kept by triggers
# as items join, leave or move between episodes and as an item's time changes, so the Memories
# timeline reads its first page from an index instead of grouping every episode's items.
_EPISODE_START = ("(SELECT MIN(NULLIF(i.timestamp, '')) FROM episode_items m JOIN items i ON i.id = m.item_id"
                  " WHERE m.episode_id = episodes.id)")
EPISODE_STARTS = f"""
ALTER TABLE episodes ADD COLUMN start TEXT;
UPDATE episodes SET start = {_EPISODE_START};
CREATE INDEX episodes_timeline ON episodes(start IS NULL, start, source_id) WHERE merged_into IS NULL;
CREATE TRIGGER episode_items_insert_start AFTER INSERT ON episode_items BEGIN
    UPDATE episodes SET start = (SELECT timestamp FROM items WHERE id = NEW.item_id)
    WHERE id = NEW.episode_id AND EXISTS (SELECT 1 FROM items i WHERE i.id = NEW.item_id AND i.timestamp != ''
                                          AND (episodes.start IS NULL OR i.timestamp < episodes.start));
END;
CREATE TRIGGER episode_items_delete_start AFTER DELETE ON episode_items BEGIN
    UPDATE episodes SET start = {_EPISODE_START} WHERE id = OLD.episode_id;
END;
CREATE TRIGGER episode_items_update_start AFTER UPDATE OF episode_id, item_id ON episode_items BEGIN
    UPDATE episodes SET start = {_EPISODE_START} WHERE id IN (OLD.episode_id, NEW.episode_id);
END;
CREATE TRIGGER items_timestamp_start AFTER UPDATE OF timestamp ON items WHEN OLD.timestamp IS NOT NEW.timestamp BEGIN
    UPDATE episodes SET start = {_EPISODE_START} WHERE id = (SELECT episode_id FROM episode_items WHERE item_id = NEW.id);
END;
"""

# Each entity's counts (knowledge-7): the items that mention it and the believed (not retired)
# facts that name it as subject or object, kept by triggers on every write to mentions, facts
# and entities (ingest, curation, supersession, a source's deletion, an undo), so the Facts
# screen lists the most mentioned entities from an index instead of counting every mention.
_MENTIONED = "SELECT 1 FROM mentions WHERE item_id = {row}.item_id AND entity_id = {row}.entity_id"
_NAMING = "UPDATE entity_counts SET facts = facts {sign} 1 WHERE entity_id IN ({row}.subject_id, {row}.object_id)"
# each entity's counts as counted from every row, as (entity id, count): what the migration
# starts from and ``check`` compares (an entity in neither counts 0)
ENTITY_ITEMS_RECOUNT = "SELECT entity_id, COUNT(DISTINCT item_id) AS n FROM mentions GROUP BY entity_id"
ENTITY_FACTS_RECOUNT = """SELECT eid, COUNT(*) AS n FROM (
              SELECT subject_id AS eid FROM facts WHERE retired_at IS NULL AND subject_id IS NOT NULL UNION ALL
              SELECT object_id FROM facts WHERE retired_at IS NULL AND object_id IS NOT NULL AND object_id IS NOT subject_id)
          GROUP BY eid"""
ENTITY_ITEMS_AND_FACTS = KeptPerRow("entity_counts", "entity_id", "entities", "entity",
                                    {"items": ENTITY_ITEMS_RECOUNT, "facts": ENTITY_FACTS_RECOUNT})
ENTITY_COUNTS = ENTITY_ITEMS_AND_FACTS.create_sql("counts") + f"""
CREATE INDEX entity_counts_rank ON entity_counts(items + facts DESC, entity_id);
CREATE TRIGGER mentions_insert_counts AFTER INSERT ON mentions
WHEN NOT EXISTS ({_MENTIONED.format(row="NEW")} AND surface != NEW.surface) BEGIN
    UPDATE entity_counts SET items = items + 1 WHERE entity_id = NEW.entity_id;
END;
CREATE TRIGGER mentions_delete_counts AFTER DELETE ON mentions WHEN NOT EXISTS ({_MENTIONED.format(row="OLD")}) BEGIN
    UPDATE entity_counts SET items = items - 1 WHERE entity_id = OLD.entity_id;
END;
CREATE TRIGGER mentions_update_counts AFTER UPDATE OF item_id, entity_id ON mentions
WHEN OLD.item_id != NEW.item_id OR OLD.entity_id != NEW.entity_id BEGIN
    UPDATE entity_counts SET items = items - 1
    WHERE entity_id = OLD.entity_id AND NOT EXISTS ({_MENTIONED.format(row="OLD")});
    UPDATE entity_counts SET items = items + 1
    WHERE entity_id = NEW.entity_id AND NOT EXISTS ({_MENTIONED.format(row="NEW")} AND surface != NEW.surface);
END;
CREATE TRIGGER facts_insert_counts AFTER INSERT ON facts WHEN NEW.retired_at IS NULL BEGIN
    {_NAMING.format(sign="+", row="NEW")};
END;
CREATE TRIGGER facts_delete_counts AFTER DELETE ON facts WHEN OLD.retired_at IS NULL BEGIN
    {_NAMING.format(sign="-", row="OLD")};
END;
CREATE TRIGGER facts_update_counts AFTER UPDATE OF subject_id, object_id, retired_at ON facts
WHEN OLD.subject_id IS NOT NEW.subject_id OR OLD.object_id IS NOT NEW.object_id
     OR (OLD.retired_at IS NULL) != (NEW.retired_at IS NULL) BEGIN
    {_NAMING.format(sign="-", row="OLD")} AND OLD.retired_at IS NULL;
    {_NAMING.format(sign="+", row="NEW")} AND NEW.retired_at IS NULL;
END;
"""

# The believed facts whose validity ended (knowledge-8): a handful of a store's facts (24 of 83k
# at a million items), which every recall's successor lift looks for among its candidates. The
# index holds them alone, so the lift reads them whole once per store state instead of joining
# each candidate's sources to their facts.
_ENDED = "retired_at IS NULL AND (valid_to IS NOT NULL OR superseded_by IS NOT NULL)"
ENDED_FACTS = f"CREATE INDEX facts_ended ON facts(id) WHERE {_ENDED};"

# The knowledge area's totals (knowledge-9): believed, superseded and retired facts, episodes not
# merged into another and events, kept by triggers on every write to those tables (an ingest, a
# supersession, curation and its undo, a merge or split, a cascade from a deleted item or source:
# SQLite runs the triggers for the foreign keys' cascades and SET NULLs too), so the app's header
# reads one row instead of counting every fact and episode of the store at each open.
_TOTALS = {  # column: (table, whether a row counts: an SQL expression over it as {row})
    "facts": ("facts", "{row}.retired_at IS NULL"),
    "superseded": ("facts", "{row}.retired_at IS NULL AND {row}.valid_to IS NOT NULL"),
    "retired": ("facts", "{row}.retired_at IS NOT NULL"),
    "episodes": ("episodes", "{row}.merged_into IS NULL"),
    "events": ("events", "1"),
}
_TOTALS_MOVED_BY = {"facts": "retired_at, valid_to", "episodes": "merged_into", "events": None}


def _totals_trigger(table: str, write: str, changed: str | None) -> str:
    """The trigger that moves each total of ``table`` by the rows ``write`` adds (NEW) and removes (OLD)."""
    rows = {"INSERT": ("NEW",), "DELETE": ("OLD",), "UPDATE": ("NEW", "OLD")}[write]
    moves = ", ".join(f"{column} = {column}" + "".join(f" {'+' if row == 'NEW' else '-'} ({counts.format(row=row)})"
                                                       for row in rows)
                      for column, (of, counts) in _TOTALS.items() if of == table)
    on = f"UPDATE OF {changed} ON" if write == "UPDATE" else f"{write} ON"
    return f"CREATE TRIGGER {table}_{write.lower()}_totals AFTER {on} {table} BEGIN UPDATE knowledge_totals SET {moves}; END;\n"


# each total as counted from every row: what the migration starts from and ``check`` compares
TOTALS_RECOUNTS = {column: f"SELECT COUNT(*) FROM {table} WHERE {counts.format(row=table)}"
                   for column, (table, counts) in _TOTALS.items()}

KNOWLEDGE_TOTALS = (
    "CREATE TABLE knowledge_totals (id INTEGER PRIMARY KEY CHECK (id = 0), "
    + ", ".join(f"{column} INTEGER NOT NULL" for column in _TOTALS) + ");\n"
    + "INSERT INTO knowledge_totals VALUES (0, " + ", ".join(f"({recount})" for recount in TOTALS_RECOUNTS.values())
    + ");\n"
    + "".join(_totals_trigger(table, write, changed) for table, changed in _TOTALS_MOVED_BY.items()
              for write in ("INSERT", "DELETE", "UPDATE") if write != "UPDATE" or changed))



MIGRATIONS = [
    (
        "knowledge-1",
        """
        CREATE TABLE entities (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL,
            kind TEXT NOT NULL DEFAULT 'name'
        );
        CREATE TABLE mentions (
            item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            entity_id INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            surface TEXT NOT NULL,
            role TEXT NOT NULL,
            PRIMARY KEY (item_id, entity_id, surface)
        ) WITHOUT ROWID;
        CREATE INDEX mentions_entity ON mentions(entity_id);
        CREATE TABLE synonyms (
            a INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            b INTEGER NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
            weight REAL NOT NULL,
            PRIMARY KEY (a, b)
        ) WITHOUT ROWID;
        CREATE INDEX synonyms_b ON synonyms(b);
        CREATE TABLE facts (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL UNIQUE,
            subject TEXT NOT NULL,
            predicate TEXT NOT NULL,
            object TEXT NOT NULL,
            subject_id INTEGER REFERENCES entities(id),
            object_id INTEGER REFERENCES entities(id),
            time TEXT,
            origin TEXT NOT NULL DEFAULT 'rule'
        );
        CREATE INDEX facts_subject ON facts(subject_id);
        CREATE INDEX facts_object ON facts(object_id);
        CREATE TABLE fact_sources (
            fact_id INTEGER NOT NULL REFERENCES facts(id) ON DELETE CASCADE,
            item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            PRIMARY KEY (fact_id, item_id)
        ) WITHOUT ROWID;
        CREATE INDEX fact_sources_item ON fact_sources(item_id);
        CREATE TABLE episodes (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            session TEXT NOT NULL DEFAULT '',
            summary TEXT NOT NULL,
            origin TEXT NOT NULL DEFAULT 'rule',
            merged_into INTEGER REFERENCES episodes(id) ON DELETE SET NULL
        );
        CREATE INDEX episodes_source ON episodes(source_id);
        CREATE TABLE episode_items (
            item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            episode_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE,
            home_id INTEGER NOT NULL REFERENCES episodes(id) ON DELETE CASCADE
        );
        CREATE INDEX episode_items_episode ON episode_items(episode_id);
        CREATE INDEX episode_items_home ON episode_items(home_id);
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            origin TEXT NOT NULL DEFAULT 'rule',
            body TEXT NOT NULL
        );
        CREATE INDEX events_item ON events(item_id);
        CREATE TABLE extraction_queue (
            item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            status TEXT NOT NULL DEFAULT 'pending',
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT NOT NULL DEFAULT '',
            updated_at REAL NOT NULL
        );
        CREATE INDEX extraction_queue_status ON extraction_queue(status);
        """,
    ),
    ("knowledge-2", "CREATE INDEX episodes_merged ON episodes(merged_into);"),
    (
        "knowledge-3",
        """
        ALTER TABLE facts ADD COLUMN valid_from TEXT;
        ALTER TABLE facts ADD COLUMN valid_to TEXT;
        ALTER TABLE facts ADD COLUMN recorded_at TEXT;
        ALTER TABLE facts ADD COLUMN retired_at TEXT;
        ALTER TABLE facts ADD COLUMN superseded_by INTEGER REFERENCES facts(id) ON DELETE SET NULL;
        ALTER TABLE facts ADD COLUMN version_of INTEGER REFERENCES facts(id) ON DELETE SET NULL;
        CREATE INDEX facts_superseded_by ON facts(superseded_by);
        CREATE INDEX facts_version_of ON facts(version_of);
        UPDATE facts SET
            recorded_at = COALESCE((SELECT strftime('%Y-%m-%dT%H:%M:%SZ', MIN(s.created_at), 'unixepoch')
                                    FROM fact_sources fs JOIN items i ON i.id = fs.item_id
                                    JOIN sources s ON s.id = i.source_id WHERE fs.fact_id = facts.id),
                                   strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            valid_from = (SELECT CASE WHEN facts.time IS NOT NULL AND (d IS NULL OR facts.time <= d)
                                      THEN facts.time ELSE d END
                          FROM (SELECT MIN(substr(i.timestamp, 1, 10)) AS d FROM fact_sources fs
                                JOIN items i ON i.id = fs.item_id WHERE fs.fact_id = facts.id));
        CREATE TABLE conflicts (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,
            key TEXT NOT NULL UNIQUE,
            a INTEGER NOT NULL,
            b INTEGER,
            reason TEXT NOT NULL DEFAULT '',
            status TEXT NOT NULL DEFAULT 'open',
            created_at TEXT NOT NULL,
            decided_at TEXT
        );
        CREATE INDEX conflicts_status ON conflicts(status);
        CREATE TABLE decisions (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            conflict_id INTEGER REFERENCES conflicts(id) ON DELETE SET NULL,
            summary TEXT NOT NULL,
            changes TEXT NOT NULL DEFAULT '[]',
            undoes INTEGER REFERENCES decisions(id) ON DELETE SET NULL,
            undone_by INTEGER REFERENCES decisions(id) ON DELETE SET NULL
        );
        """,
    ),
    ("knowledge-4", _write_counter("knowledge_writes", [(t, w) for t in COUNTED_TABLES for w in WRITES], "counted")),
    ("knowledge-5", _write_counter("episode_writes", EPISODE_WRITES, "episode_counted")),
    ("knowledge-6", EPISODE_STARTS),
    ("knowledge-7", ENTITY_COUNTS),
    ("knowledge-8", ENDED_FACTS),
    ("knowledge-9", KNOWLEDGE_TOTALS),
]

# Tables a decision may change, with their primary key: the row images of :meth:`recording`.
AUDITED = {"entities": ("id",), "facts": ("id",), "conflicts": ("id",), "mentions": ("item_id", "entity_id", "surface"),
           "synonyms": ("a", "b"), "fact_sources": ("fact_id", "item_id")}
_WRITE_ORDER = ("entities", "facts", "conflicts", "mentions", "synonyms", "fact_sources")  # a row after those it names


class StaleUndo(ValueError):
    """A decision's rows changed after it (a later decision, an edit, a deletion): undo that first."""


def now_iso() -> str:
    """The store's clock for recorded_at, retired_at and decisions: UTC, to the second."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _shown(row: Sequence) -> tuple:
    """An episode row as shown: its merged-away episodes' ids (SQLite's comma list) sorted."""
    *head, merged = row
    return (*head, sorted(int(i) for i in merged.split(",")) if merged else [])


def _marks(n: int) -> str:
    return ",".join("?" * n)


def _chunks(ids: Sequence[int], size: int = 900) -> Iterable[list[int]]:
    for start in range(0, len(ids), size):
        yield list(ids[start:start + size])


class KnowledgeSQL:
    """Mixin of :class:`engine.store.Store`: the knowledge layer's rows."""

    _in: Callable[..., list[tuple]]  # StoreBase._in
    data_version: Callable[[], int]  # StoreBase.data_version

    conn: sqlite3.Connection
    _ended_memo: tuple[tuple[int, int], dict[int, list[int]]] | None = None  # see ended_facts_of_items

    # -- entities -----------------------------------------------------------------------------

    def upsert_entities(self, rows: Sequence[tuple[str, str, str]]) -> dict[str, int]:
        """Insert (key, name, kind) rows that are new; returns key → id for every given key."""
        self.conn.executemany("INSERT OR IGNORE INTO entities (key, name, kind) VALUES (?,?,?)", rows)
        return self.entity_ids([r[0] for r in rows])

    def entity_ids(self, keys: Sequence[str]) -> dict[str, int]:
        """key → id of the given keys that name an entity."""
        return {key: eid for eid, key in self._in("SELECT id, key FROM entities WHERE key IN ({marks})", keys)}

    def set_entity_kinds(self, rows: Iterable[tuple[int, str]]) -> None:
        """(entity id, kind) rows."""
        self.conn.executemany("UPDATE entities SET kind = ? WHERE id = ?", ((k, e) for e, k in rows))

    def entity_rows(self) -> list[tuple[int, str, str, str]]:
        """(id, key, name, kind) of every entity."""
        return self.conn.execute("SELECT id, key, name, kind FROM entities ORDER BY id").fetchall()

    def entity_rows_since(self, after: int, ids: Sequence[int]) -> list[tuple[int, str, str, str]]:
        """(id, key, name, kind) of the entities past id ``after`` and of ``ids``, by id."""
        rows = {r[0]: r for r in self.conn.execute("SELECT id, key, name, kind FROM entities WHERE id > ?", (after,))}
        rows.update((r[0], r) for r in self._in("SELECT id, key, name, kind FROM entities WHERE id IN ({marks})", ids))
        return [rows[eid] for eid in sorted(rows)]

    def entity_row(self, entity_id: int) -> tuple | None:
        return self.conn.execute("SELECT id, key, name, kind FROM entities WHERE id = ?", (entity_id,)).fetchone()

    def rename_entity_row(self, entity_id: int, key: str, name: str) -> None:
        self.conn.execute("UPDATE entities SET key = ?, name = ? WHERE id = ?", (key, name, entity_id))

    def entity_id_by_key(self, key: str) -> int | None:
        row = self.conn.execute("SELECT id FROM entities WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def delete_entities(self, ids: Sequence[int]) -> None:
        for chunk in _chunks(list(ids)):
            marks = _marks(len(chunk))
            self.conn.execute(f"DELETE FROM conflicts WHERE kind = 'duplicate' AND status = 'open'"
                              f" AND (a IN ({marks}) OR b IN ({marks}))", chunk + chunk)
            self.conn.execute(f"DELETE FROM entities WHERE id IN ({marks})", chunk)

    def orphan_entities(self) -> list[int]:
        """Entities no item mentions and no fact names."""
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM entities e WHERE NOT EXISTS (SELECT 1 FROM mentions m WHERE m.entity_id = e.id)"
            " AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.subject_id = e.id OR f.object_id = e.id)")]

    def entity_counts(self, ids: Sequence[int]) -> dict[int, tuple[int, int]]:
        """entity id → (items mentioning it, believed facts naming it) for these entities, as
        the triggers of ``entity_counts`` keep them (knowledge-7)."""
        return {eid: (items, facts) for eid, items, facts in
                self._in("SELECT entity_id, items, facts FROM entity_counts WHERE entity_id IN ({marks})", ids)}

    def ranked_entity_rows(self, kind: str | None = None, containing: str = "",
                           limit: int | None = None) -> list[tuple[int, str, str, str, int, int]]:
        """(id, key, name, kind, items, facts) of the entities, most mentioned first (items +
        facts, then id), read along the counts' index: the first page costs a page at any store
        size. ``containing``: text in the key or the name (SQLite folds only ASCII case)."""
        where, params = [], []
        if kind is not None:
            where.append("e.kind = ?")
            params.append(kind)
        if containing:
            where.append("(instr(e.key, ?) OR instr(lower(e.name), ?))")
            params += [containing.lower()] * 2
        return self.conn.execute(
            "SELECT e.id, e.key, e.name, e.kind, c.items, c.facts FROM entity_counts c INDEXED BY entity_counts_rank"
            " CROSS JOIN entities e ON e.id = c.entity_id" + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY c.items + c.facts DESC, c.entity_id LIMIT ?", [*params, -1 if limit is None else limit]).fetchall()

    # -- mentions and synonymy ----------------------------------------------------------------

    def insert_mentions(self, rows: Iterable[tuple[int, int, str, str]]) -> None:
        """(item id, entity id, surface, role) rows."""
        self.conn.executemany("INSERT OR IGNORE INTO mentions (item_id, entity_id, surface, role) VALUES (?,?,?,?)", rows)

    def mention_rows(self) -> list[tuple[int, int, str, str]]:
        return self.conn.execute("SELECT item_id, entity_id, surface, role FROM mentions").fetchall()

    def mentions_of_entity(self, entity_id: int) -> list[tuple[int, str, str]]:
        """(item id, surface, role) of one entity."""
        return self.conn.execute("SELECT item_id, surface, role FROM mentions WHERE entity_id = ? ORDER BY item_id", (entity_id,)).fetchall()

    def mentions_of_items(self, item_ids: Sequence[int]) -> list[tuple[int, int, str, str]]:
        return self._in("SELECT item_id, entity_id, surface, role FROM mentions WHERE item_id IN ({marks})", item_ids)

    def move_mentions(self, from_id: int, to_id: int, surfaces: Sequence[str] | None = None) -> int:
        """Re-point mentions of ``from_id`` (optionally only these surfaces) to ``to_id``."""
        where, params = "entity_id = ?", [from_id]
        if surfaces is not None:
            where += f" AND surface IN ({_marks(len(surfaces))})"
            params += list(surfaces)
        cur = self.conn.execute(f"UPDATE OR IGNORE mentions SET entity_id = ? WHERE {where}", [to_id, *params])
        self.conn.execute(f"DELETE FROM mentions WHERE {where}", params)
        return cur.rowcount

    def delete_mentions_of_items(self, item_ids: Sequence[int]) -> None:
        for chunk in _chunks(list(item_ids)):
            self.conn.execute(f"DELETE FROM mentions WHERE item_id IN ({_marks(len(chunk))})", chunk)

    def insert_synonyms(self, rows: Iterable[tuple[int, int, float]]) -> None:
        self.conn.executemany("INSERT OR REPLACE INTO synonyms (a, b, weight) VALUES (?,?,?)",
                              ((min(a, b), max(a, b), w) for a, b, w in rows if a != b))

    def synonym_rows(self) -> list[tuple[int, int, float]]:
        return self.conn.execute("SELECT a, b, weight FROM synonyms").fetchall()

    def synonyms_of(self, entity_ids: Sequence[int]) -> list[tuple[int, int]]:
        """(a, b) synonym pairs with a or b among these entities."""
        return list(dict.fromkeys(self._in("SELECT a, b FROM synonyms WHERE a IN ({marks})", entity_ids)
                                  + self._in("SELECT a, b FROM synonyms WHERE b IN ({marks})", entity_ids)))

    def move_synonyms(self, from_id: int, to_id: int) -> None:
        rows = self.conn.execute("SELECT a, b, weight FROM synonyms WHERE a = ? OR b = ?", (from_id, from_id)).fetchall()
        self.conn.execute("DELETE FROM synonyms WHERE a = ? OR b = ?", (from_id, from_id))
        self.insert_synonyms((to_id, b if a == from_id else a, w) for a, b, w in rows)

    # -- facts --------------------------------------------------------------------------------

    # (id, subject, predicate, object, subject_id, object_id, time, origin, valid_from, valid_to, recorded_at,
    #  retired_at, superseded_by, version_of)
    _FACT_COLUMNS = ("id, subject, predicate, object, subject_id, object_id, time, origin, valid_from, valid_to,"
                     " recorded_at, retired_at, superseded_by, version_of")
    _LIVE = "retired_at IS NULL"

    def insert_fact(self, key: str, subject: str, predicate: str, obj: str, subject_id: int | None,
                    object_id: int | None, when: str | None, origin: str, valid_from: str | None = None,
                    recorded_at: str | None = None) -> int:
        cur = self.conn.execute(
            "INSERT INTO facts (key, subject, predicate, object, subject_id, object_id, time, origin, valid_from,"
            " recorded_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (key, subject, predicate, obj, subject_id, object_id, when, origin, valid_from, recorded_at or now_iso()))
        return int(cur.lastrowid)

    def new_fact_version(self, old_id: int, key: str, subject: str, predicate: str, obj: str, subject_id: int | None,
                         object_id: int | None, when: str | None, valid_from: str | None) -> int:
        """A curated version of fact ``old_id`` (origin ``user``): a new row that takes over the
        old one's validity end, successor, provenance and place in others' chains; the old row
        is retired with its key archived, nothing overwritten."""
        at = now_iso()
        self.conn.execute("UPDATE facts SET retired_at = ?, key = key || '#' || id WHERE id = ?", (at, old_id))
        cur = self.conn.execute(
            "INSERT INTO facts (key, subject, predicate, object, subject_id, object_id, time, origin, valid_from, valid_to,"
            " recorded_at, superseded_by, version_of) SELECT ?, ?, ?, ?, ?, ?, ?, 'user', ?, valid_to, ?, superseded_by, id"
            " FROM facts WHERE id = ?", (key, subject, predicate, obj, subject_id, object_id, when, valid_from, at, old_id))
        new_id = int(cur.lastrowid)
        self.conn.execute("INSERT INTO fact_sources (fact_id, item_id) SELECT ?, item_id FROM fact_sources WHERE fact_id = ?",
                          (new_id, old_id))
        self.conn.execute("UPDATE facts SET superseded_by = ? WHERE superseded_by = ? AND id != ?", (new_id, old_id, new_id))
        # A conflict of the old row is the new one's, under the key the rules and the inbox give the pair it
        # names now (its ids in order): kept under the old key, the rules reading the new version opened a
        # second clash of the same pair. No key names new_id yet (a new row), so the new key is unique.
        moved = self.conn.execute("SELECT id, kind, a, b FROM conflicts WHERE (a = ? OR b = ?) AND kind != 'duplicate'",
                                  (old_id, old_id)).fetchall()
        for conflict_id, kind, a, b in moved:
            a, b = (new_id if a == old_id else a), (new_id if b == old_id else b)
            if b is None:
                key = f"orphaned:{a}"
            else:
                a, b = sorted((a, b))
                key = f"{kind}:{a}:{b}"
            self.conn.execute("UPDATE conflicts SET a = ?, b = ?, key = ? WHERE id = ?", (a, b, key, conflict_id))
        return new_id

    def restore_fact_times(self, fact_id: int, valid_to: str | None, retired_at: str | None, key: str) -> None:
        """Times an import brings for a fact it inserted (a retired one's ``key`` is archived as
        the store archives its own, ``key#id``)."""
        self.conn.execute("UPDATE facts SET valid_to = ?, retired_at = ? WHERE id = ?", (valid_to, retired_at, fact_id))
        if retired_at:
            self.conn.execute("UPDATE facts SET key = ? || '#' || id WHERE id = ?", (key, fact_id))

    def link_fact(self, fact_id: int, superseded_by: int | None, version_of: int | None) -> None:
        """The history links an import brings for a fact it inserted."""
        self.conn.execute("UPDATE facts SET superseded_by = ?, version_of = ? WHERE id = ?",
                          (superseded_by, version_of, fact_id))

    def set_validity(self, fact_id: int, valid_to: str | None, superseded_by: int | None) -> None:
        """End a fact's validity at ``valid_to`` with its successor (both None: it holds again)."""
        self.conn.execute("UPDATE facts SET valid_to = ?, superseded_by = ? WHERE id = ?", (valid_to, superseded_by, fact_id))

    def retire_facts(self, ids: Sequence[int]) -> None:
        """The store stops believing these facts: retired now, keys archived, rows kept."""
        at = now_iso()
        for chunk in _chunks(list(ids)):
            self.conn.execute(f"UPDATE facts SET retired_at = ?, key = key || '#' || id WHERE retired_at IS NULL"
                              f" AND id IN ({_marks(len(chunk))})", [at, *chunk])

    def fact_history(self, fact_id: int) -> list[tuple]:
        """Every row of a fact's chain: its earlier versions, later versions, the facts it
        superseded and those that superseded it, transitively (rows as ``_FACT_COLUMNS``)."""
        seen: set[int] = set()
        todo = {fact_id}
        while todo:
            seen |= todo
            ids = sorted(todo)
            rows = [r for column in ("id", "superseded_by", "version_of")
                    for r in self._in(f"SELECT id, superseded_by, version_of FROM facts WHERE {column} IN ({{marks}})", ids)]
            todo = {x for r in rows for x in r if x is not None} - seen
        return self._in(f"SELECT {self._FACT_COLUMNS} FROM facts WHERE id IN ({{marks}}) ORDER BY id", sorted(seen))

    def fact_id_by_key(self, key: str) -> int | None:
        row = self.conn.execute("SELECT id FROM facts WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def fact_ids(self, keys: Sequence[str]) -> dict[str, int]:
        """key → id of the given keys that name a fact."""
        return {key: fid for fid, key in self._in("SELECT id, key FROM facts WHERE key IN ({marks})", keys)}

    def fill_fact_time(self, fact_id: int, when: str) -> None:
        self.conn.execute("UPDATE facts SET time = ? WHERE id = ? AND time IS NULL", (when, fact_id))

    def widen_validity(self, fact_id: int, valid_from: str) -> bool:
        """A further statement of a fact held from ``valid_from``: its validity starts there if
        that is earlier (or it had no start); returns whether it changed."""
        return self.conn.execute("UPDATE facts SET valid_from = ? WHERE id = ? AND (valid_from IS NULL OR valid_from > ?)",
                                 (valid_from, fact_id, valid_from)).rowcount > 0

    def insert_fact_sources(self, rows: Iterable[tuple[int, int]]) -> None:
        self.conn.executemany("INSERT OR IGNORE INTO fact_sources (fact_id, item_id) VALUES (?,?)", rows)

    def fact_rows(self, ids: Sequence[int] | None = None, entity_id: int | None = None, latest: int | None = None,
                  retired: bool = False) -> list[tuple]:
        """Fact rows (see ``_FACT_COLUMNS``), by id (retired ones too), or the facts the store
        believes (with ``retired``, also those it no longer does): all, or by entity (as subject
        or object; with ``latest``, only that many of the newest)."""
        if ids is not None:
            return self._in(f"SELECT {self._FACT_COLUMNS} FROM facts WHERE id IN ({{marks}}) ORDER BY id", ids)
        live = "1" if retired else self._LIVE
        if entity_id is not None and latest:
            return self._entity_facts(entity_id, live, 0, latest, newest=True)[::-1]
        if entity_id is not None:
            return self.conn.execute(f"SELECT {self._FACT_COLUMNS} FROM facts WHERE (subject_id = ? OR object_id = ?) AND {live}"
                                     " ORDER BY id", (entity_id, entity_id)).fetchall()
        return self.conn.execute(f"SELECT {self._FACT_COLUMNS} FROM facts WHERE {live} ORDER BY id").fetchall()

    def entity_fact_rows(self, entity_id: int, offset: int, limit: int) -> list[tuple]:
        """A page of the believed facts naming an entity (as subject or object), by id, as
        ``fact_rows(entity_id=)`` lists them."""
        return self._entity_facts(entity_id, self._LIVE, offset, limit, newest=False)

    def _entity_facts(self, entity_id: int, live: str, offset: int, limit: int, newest: bool) -> list[tuple]:
        """``limit`` facts naming an entity (as subject or object) from ``offset`` on, by id
        (``newest``: from the newest down), of those ``live`` keeps: the first ``offset + limit``
        of each side by its own index, then those of both, so that a frequent entity's every fact
        (tens of thousands for a speaker) is not read and sorted to keep a few."""
        order = "ORDER BY id DESC" if newest else "ORDER BY id"
        first = f"SELECT id FROM facts WHERE {{side}} = ? AND {live} {order} LIMIT ?"
        return self.conn.execute(
            f"SELECT {self._FACT_COLUMNS} FROM facts WHERE id IN (SELECT id FROM ({first.format(side='subject_id')})"
            f" UNION ALL SELECT id FROM ({first.format(side='object_id')})) {order} LIMIT ? OFFSET ?",
            (entity_id, offset + limit, entity_id, offset + limit, limit, offset)).fetchall()

    def facts_filed_under(self, subjects: Sequence[int]) -> list[tuple]:
        """Rows of the believed facts filed under one of these subjects (entity ids), by id."""
        return self.conn.execute(f"SELECT {self._FACT_COLUMNS} FROM facts WHERE subject_id IN ({_marks(len(subjects))})"
                                 f" AND {self._LIVE} ORDER BY id", list(subjects)).fetchall()

    def subject_triples(self, subject_id: int) -> list[tuple[int, str, str, str]]:
        """(id, subject, predicate, object) of the believed facts filed under this subject, by id."""
        return self.conn.execute(f"SELECT id, subject, predicate, object FROM facts WHERE subject_id = ? AND {self._LIVE}"
                                 " ORDER BY id", (subject_id,)).fetchall()

    def fact_keys(self, ids: Sequence[int] | None = None) -> list[tuple[int, str, int | None]]:
        """(id, key, subject id) of every fact the store believes, or of these."""
        if ids is not None:
            return self._in(f"SELECT id, key, subject_id FROM facts WHERE id IN ({{marks}}) AND {self._LIVE}", ids)
        return self.conn.execute(f"SELECT id, key, subject_id FROM facts WHERE {self._LIVE}").fetchall()

    def fact_sources_of(self, fact_ids: Sequence[int]) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for fid, iid in self._in("SELECT fact_id, item_id FROM fact_sources WHERE fact_id IN ({marks}) ORDER BY item_id", fact_ids):
            out.setdefault(fid, []).append(iid)
        return out

    def newest_sources_of(self, fact_ids: Sequence[int], limit: int) -> dict[int, list[int]]:
        """The ``limit`` newest items (highest ids) stating each of these facts, ascending: a fact
        said in a thousand turns is read as its latest few, not as a thousand rows."""
        out: dict[int, list[int]] = {}
        for fid, iid in self._in("SELECT fact_id, item_id FROM (SELECT fact_id, item_id, ROW_NUMBER() OVER (PARTITION BY"
                                 " fact_id ORDER BY item_id DESC) AS n FROM fact_sources WHERE fact_id IN ({marks}))"
                                 f" WHERE n <= {int(limit)} ORDER BY fact_id, item_id", fact_ids):
            out.setdefault(fid, []).append(iid)
        return out

    def facts_of_items(self, item_ids: Sequence[int]) -> list[tuple[int, int]]:
        """(fact id, item id) provenance rows of these items."""
        return self._in("SELECT fact_id, item_id FROM fact_sources WHERE item_id IN ({marks})", item_ids)

    def read_state(self) -> tuple[int, int] | None:
        """What a memo of fact reads is valid for: it moves when another connection commits
        (``PRAGMA data_version``) or this one writes a fact, a fact's source or an entity (the
        count triggers keep in ``knowledge_writes``, migration ``knowledge-4``; so feedback,
        trust or activity writes keep the memos). None inside a transaction: its rows may yet be
        rolled back, which neither counter shows, so nothing read there is kept."""
        if self.conn.in_transaction:
            return None
        return self.data_version(), self.conn.execute("SELECT n FROM knowledge_writes").fetchone()[0]

    def episode_state(self) -> int | None:
        """What a memo of episode reads is valid for: the count of writes to what an episode shows
        (``episode_writes``, kept by triggers, migration ``knowledge-5``), committed by this
        process or another; feedback, trust or fact writes keep the memo. None inside a
        transaction: its rows may yet be rolled back, which the count does not show."""
        if self.conn.in_transaction:
            return None
        return self.conn.execute("SELECT n FROM episode_writes").fetchone()[0]

    def ended_facts_of_items(self, item_ids: Sequence[int]) -> list[tuple[int, int]]:
        """(fact id, item id) of the believed facts these items state whose validity ended.

        Every recall asks this of its few hundred candidates (the successor lift). Those facts
        are few and indexed alone (knowledge-8): their sources are read whole and kept, by item,
        until another connection commits or this one writes a fact, a source or an entity
        (:meth:`read_state`), so a recall's question costs a look-up per candidate, whatever the
        store's size. Inside a transaction nothing is kept: its rows may yet be rolled back,
        which no counter shows."""
        state = self.read_state()
        if state is None:
            by_item = self._ended_by_item()
        else:
            if self._ended_memo is None or self._ended_memo[0] != state:
                self._ended_memo = (state, self._ended_by_item())
            by_item = self._ended_memo[1]
        return [(fid, iid) for iid in dict.fromkeys(item_ids) for fid in by_item.get(iid, ())]

    def _ended_by_item(self) -> dict[int, list[int]]:
        """item id → the ended believed facts it states (ascending), read along ``facts_ended``."""
        out: dict[int, list[int]] = {}
        for fid, iid in self.conn.execute("SELECT fact_id, item_id FROM fact_sources WHERE fact_id IN"
                                          f" (SELECT id FROM facts WHERE {_ENDED}) ORDER BY fact_id, item_id"):
            out.setdefault(iid, []).append(fid)
        return out

    def facts_losing_all(self, item_ids: Sequence[int]) -> list[int]:
        """Facts whose every provenance item is among ``item_ids``."""
        fids = sorted({f for f, _ in self.facts_of_items(item_ids)})
        gone = set(item_ids)
        return [f for f, items in self.fact_sources_of(fids).items() if set(items) <= gone]

    def drop_rule_provenance(self, item_ids: Sequence[int]) -> list[int]:
        """Remove these items from rule-extracted facts; returns the facts left with no item."""
        touched = sorted({f for f, _ in self._in(
            "SELECT fs.fact_id, fs.item_id FROM fact_sources fs JOIN facts f ON f.id = fs.fact_id"
            " WHERE f.origin = 'rule' AND fs.item_id IN ({marks})", item_ids)})
        for chunk in _chunks(list(item_ids)):
            self.conn.execute(f"DELETE FROM fact_sources WHERE item_id IN ({_marks(len(chunk))}) AND fact_id IN"
                              " (SELECT id FROM facts WHERE origin = 'rule')", chunk)
        left = self.fact_sources_of(touched)
        return [f for f in touched if f not in left]

    def delete_facts(self, ids: Sequence[int]) -> None:
        """Delete these facts; a fact one of them superseded holds again, and their conflicts go."""
        for chunk in _chunks(list(ids)):
            marks = _marks(len(chunk))
            self.conn.execute(f"UPDATE facts SET valid_to = NULL, superseded_by = NULL WHERE superseded_by IN ({marks})"
                              f" AND id NOT IN ({marks})", chunk + chunk)
            self.conn.execute(f"DELETE FROM conflicts WHERE kind != 'duplicate' AND status = 'open'"
                              f" AND (a IN ({marks}) OR b IN ({marks}))", chunk + chunk)
            self.conn.execute(f"DELETE FROM facts WHERE id IN ({marks})", chunk)

    def superseded_by(self, fact_id: int) -> list[int]:
        """The facts ``fact_id`` superseded or ended."""
        return [r[0] for r in self.conn.execute("SELECT id FROM facts WHERE superseded_by = ? ORDER BY id", (fact_id,))]

    def newer_claims(self, subjects: Sequence[int]) -> list[tuple]:
        """Rows (``_FACT_COLUMNS``) of the believed facts filed under these subjects that replaced
        another believed fact, by id. Read along the ended facts' own index (knowledge-8): they
        are few, where a speaker's facts are thousands."""
        return self.conn.execute(
            f"SELECT {self._FACT_COLUMNS} FROM facts WHERE id IN (SELECT superseded_by FROM facts WHERE {_ENDED})"
            f" AND subject_id IN ({_marks(len(subjects))}) AND {self._LIVE} ORDER BY id",
            list(subjects)).fetchall()

    def open_clashes_of(self, subjects: Sequence[int]) -> list[tuple[int, int, int]]:
        """(conflict id, fact a, fact b) of the open clashes whose first fact is filed under one of
        these subjects (a clash holds two facts of one subject), by conflict id."""
        return self.conn.execute(
            "SELECT c.id, c.a, c.b FROM conflicts c JOIN facts f ON f.id = c.a WHERE c.status = 'open'"
            f" AND c.kind = 'clash' AND f.subject_id IN ({_marks(len(subjects))}) ORDER BY c.id", list(subjects)).fetchall()

    def open_conflicts_naming(self, fact_ids: Sequence[int]) -> list[tuple[int, int | None, int]]:
        """(fact a, fact b, conflict id) of the open clashes and orphans naming one of these facts."""
        out: list[tuple[int, int | None, int]] = []
        for chunk in _chunks(list(fact_ids), 450):  # each id is asked twice
            marks = _marks(len(chunk))
            out += self.conn.execute(f"SELECT a, b, id FROM conflicts WHERE status = 'open' AND kind != 'duplicate'"
                                     f" AND (a IN ({marks}) OR b IN ({marks}))", chunk * 2).fetchall()
        return sorted(set(out), key=lambda row: row[2])

    def chained_facts(self, ids: Sequence[int]) -> list[int]:
        """Those of ``ids`` that supersede, or are superseded by, another fact."""
        return sorted({r[0] for r in self._in(
            "SELECT id FROM facts WHERE id IN ({marks}) AND (superseded_by IS NOT NULL OR EXISTS"
            " (SELECT 1 FROM facts g WHERE g.superseded_by = facts.id))", ids)})

    def repoint_facts(self, from_id: int, to_id: int, fact_ids: Sequence[int] | None = None) -> int:
        """Facts naming entity ``from_id`` (all, or these) name ``to_id`` instead; returns the count."""
        n = 0
        for role in ("subject_id", "object_id"):
            sql = f"UPDATE facts SET {role} = ? WHERE {role} = ?"
            if fact_ids is None:
                n += self.conn.execute(sql, (to_id, from_id)).rowcount
            else:
                for chunk in _chunks(list(fact_ids)):
                    n += self.conn.execute(sql + f" AND id IN ({_marks(len(chunk))})", [to_id, from_id, *chunk]).rowcount
        return n

    def rename_in_facts(self, entity_id: int, old: str, new: str) -> int:
        """Facts that spell entity ``entity_id`` as ``old`` spell it ``new``; returns the count."""
        n = self.conn.execute("UPDATE facts SET subject = ? WHERE subject_id = ? AND subject = ?", (new, entity_id, old)).rowcount
        return n + self.conn.execute("UPDATE facts SET object = ? WHERE object_id = ? AND object = ?", (new, entity_id, old)).rowcount

    # -- episodes and events ------------------------------------------------------------------

    def insert_episode(self, source_id: int, session: str, summary: str, origin: str = "rule") -> int:
        cur = self.conn.execute("INSERT INTO episodes (source_id, session, summary, origin) VALUES (?,?,?,?)",
                                (source_id, session, summary, origin))
        return int(cur.lastrowid)

    def insert_episode_items(self, rows: Iterable[tuple[int, int]]) -> None:
        """(item id, episode id) rows; the episode is also the item's home."""
        self.insert_episode_members((i, e, e) for i, e in rows)

    def insert_episode_members(self, rows: Iterable[tuple[int, int, int]]) -> None:
        """(item id, current episode id, home episode id) rows. An item already in an episode is
        moved by an update (not a replace, which deletes without firing the delete triggers), so
        the episode it leaves has its start read again (knowledge-6)."""
        self.conn.executemany("INSERT INTO episode_items (item_id, episode_id, home_id) VALUES (?,?,?) ON CONFLICT (item_id)"
                              " DO UPDATE SET episode_id = excluded.episode_id, home_id = excluded.home_id", rows)

    def set_merged_into(self, rows: Iterable[tuple[int, int]]) -> None:
        """(episode id, the episode it is merged into) rows."""
        self.conn.executemany("UPDATE episodes SET merged_into = ? WHERE id = ?", ((into, e) for e, into in rows))

    def episode_rows(self, ids: Sequence[int] | None = None, source_id: int | None = None,
                     include_merged: bool = False) -> list[tuple]:
        """(id, source_id, session, summary, origin, merged_into) rows."""
        cols = "SELECT id, source_id, session, summary, origin, merged_into FROM episodes"
        live = "" if include_merged else " AND merged_into IS NULL"
        if ids is not None:
            return self._in(cols + " WHERE id IN ({marks})" + live + " ORDER BY id", ids)
        if source_id is not None:
            return self.conn.execute(cols + " WHERE source_id = ?" + live + " ORDER BY id", (source_id,)).fetchall()
        return self.conn.execute(cols + " WHERE 1" + live + " ORDER BY id").fetchall()

    def episode_timeline(self, limit: int, offset: int = 0) -> tuple[list[int], int]:
        """``limit`` live episodes from the ``offset``-th in timeline order (by their earliest
        item's timestamp, undated ones last, then by source and id) and how many live episodes
        there are: read along the starts' index (knowledge-6), a page costs a page plus the
        index entries it skips, not every episode's items."""
        ids = [r[0] for r in self.conn.execute(
            "SELECT id FROM episodes INDEXED BY episodes_timeline WHERE merged_into IS NULL"
            " ORDER BY start IS NULL, start, source_id, id LIMIT ? OFFSET ?", (limit, offset))]
        total = self.conn.execute("SELECT COUNT(*) FROM episodes WHERE merged_into IS NULL").fetchone()[0]
        return ids, total

    # A live episode as shown (its merged-away episodes' ids with it, along episodes_merged):
    # (id, source_id, session, summary, origin, merged-away ids).
    _SHOWN_EPISODE = ("e.id, e.source_id, e.session, e.summary, e.origin,"
                      " (SELECT group_concat(m.id) FROM episodes m WHERE m.merged_into = e.id)")

    def shown_episodes(self, ids: Sequence[int] | None = None, source_id: int | None = None) -> list[tuple]:
        """Live episodes (all, of one source, or by id) as shown, by id: one read, where the
        episodes' rows and the episodes merged into them were two."""
        cols = f"SELECT {self._SHOWN_EPISODE} FROM episodes e WHERE e.merged_into IS NULL"
        if ids is not None:
            rows = self._in(cols + " AND e.id IN ({marks}) ORDER BY e.id", ids)
        elif source_id is not None:
            rows = self.conn.execute(cols + " AND e.source_id = ? ORDER BY e.id", (source_id,)).fetchall()
        else:
            rows = self.conn.execute(cols + " ORDER BY e.id").fetchall()
        return [_shown(row) for row in rows]

    def shown_episodes_of_items(self, item_ids: Sequence[int]) -> list[tuple[int, int, tuple | None]]:
        """(item id, its episode's id, the episode as shown or None when it is not live) of the
        items with an episode: a recall's hits' episodes in one read, where the items' episodes,
        the episodes' rows and the episodes merged into them were three."""
        return [(item_id, row[0], _shown(row) if merged_into is None else None)
                for item_id, merged_into, *row in self._in(
                    f"SELECT x.item_id, e.merged_into, {self._SHOWN_EPISODE} FROM episode_items x"
                    " JOIN episodes e ON e.id = x.episode_id WHERE x.item_id IN ({marks})", item_ids)]

    def episode_item_rows(self) -> list[tuple[int, int, int]]:
        """(item id, episode id, home id) of every item with an episode."""
        return self.conn.execute("SELECT item_id, episode_id, home_id FROM episode_items").fetchall()

    def items_of_episodes(self, episode_ids: Sequence[int]) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for eid, iid in self._in("SELECT episode_id, item_id FROM episode_items WHERE episode_id IN ({marks}) ORDER BY item_id", episode_ids):
            out.setdefault(eid, []).append(iid)
        return out

    def episode_members(self, episode_ids: Sequence[int]) -> dict[int, list[EpisodeMember]]:
        """The items of these episodes (by item id), with only what an episode shows of them: a
        recall shows the episodes of its hits, and reading their whole items decoded every
        text, tag list and link list for nothing. An item's meta is decoded only where it names
        an image caption."""
        out: dict[int, list[EpisodeMember]] = {}
        for eid, item_id, source_id, position, speaker, timestamp, meta in self._in(
                "SELECT e.episode_id, i.id, i.source_id, i.position, i.speaker, i.timestamp,"
                " CASE WHEN json_extract(i.meta, '$.image_caption') IS NOT NULL THEN i.meta END"
                " FROM episode_items e JOIN items i ON i.id = e.item_id WHERE e.episode_id IN ({marks})"
                " ORDER BY i.id", episode_ids):
            member = EpisodeMember(item_id, source_id, position, speaker, timestamp, json.loads(meta) if meta else None)
            out.setdefault(eid, []).append(member)
        return out

    def episodes_of_items(self, item_ids: Sequence[int]) -> dict[int, int]:
        return dict(self._in("SELECT item_id, episode_id FROM episode_items WHERE item_id IN ({marks})", item_ids))

    def episodes_losing_all(self, item_ids: Sequence[int]) -> list[int]:
        """Episodes (live or merged away) whose every item, current or home, is among ``item_ids``."""
        touched = {r[0] for r in self._in("SELECT episode_id FROM episode_items WHERE item_id IN ({marks})", item_ids)}
        touched |= {r[0] for r in self._in("SELECT home_id FROM episode_items WHERE item_id IN ({marks})", item_ids)}
        gone = set(item_ids)
        out = []
        for eid in sorted(touched):
            members = {r[0] for r in self.conn.execute(
                "SELECT item_id FROM episode_items WHERE episode_id = ? OR home_id = ?", (eid, eid))}
            if members <= gone:
                out.append(eid)
        return out

    def delete_episodes(self, ids: Sequence[int]) -> None:
        for chunk in _chunks(list(ids)):
            self.conn.execute(f"DELETE FROM episodes WHERE id IN ({_marks(len(chunk))})", chunk)

    def set_episode_summary(self, episode_id: int, summary: str, origin: str | None = None) -> None:
        if origin:
            self.conn.execute("UPDATE episodes SET summary = ?, origin = ? WHERE id = ?", (summary, origin, episode_id))
        else:
            self.conn.execute("UPDATE episodes SET summary = ? WHERE id = ?", (summary, episode_id))

    def merge_episode_rows(self, keep: int, other: int) -> None:
        self.conn.execute("UPDATE episode_items SET episode_id = ? WHERE episode_id = ?", (keep, other))
        self.conn.execute("UPDATE episodes SET merged_into = ? WHERE id = ? OR merged_into = ?", (keep, other, other))

    def split_episode_rows(self, episode_id: int) -> list[int]:
        """Undo every merge into ``episode_id``: items go back home; returns the restored ids."""
        restored = [r[0] for r in self.conn.execute("SELECT id FROM episodes WHERE merged_into = ?", (episode_id,))]
        self.conn.execute("UPDATE episode_items SET episode_id = home_id WHERE episode_id = ?", (episode_id,))
        self.conn.execute("UPDATE episodes SET merged_into = NULL WHERE merged_into = ?", (episode_id,))
        return restored

    def insert_events(self, rows: Iterable[tuple[int, str, dict[str, Any]]]) -> None:
        """(item id, origin, event dict) rows."""
        self.conn.executemany("INSERT INTO events (item_id, origin, body) VALUES (?,?,?)",
                              ((i, o, json.dumps(b, ensure_ascii=False)) for i, o, b in rows))

    def events_of_items(self, item_ids: Sequence[int]) -> dict[int, list[tuple[str, dict[str, Any]]]]:
        out: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        rows = self._in("SELECT item_id, origin, body FROM events WHERE item_id IN ({marks}) ORDER BY id", item_ids)
        bodies = json.loads("[" + ",".join(body for _, _, body in rows) + "]")  # one decoding, not one per event
        for (iid, origin, _), body in zip(rows, bodies):
            out.setdefault(iid, []).append((origin, body))
        return out

    def event_rows(self) -> list[tuple[int, str, dict[str, Any]]]:
        """(item id, origin, event dict) of every event, in the order they were stored."""
        return [(i, o, json.loads(b)) for i, o, b in self.conn.execute("SELECT item_id, origin, body FROM events ORDER BY id")]

    def delete_events(self, item_ids: Sequence[int], origin: str) -> None:
        for chunk in _chunks(list(item_ids)):
            self.conn.execute(f"DELETE FROM events WHERE origin = ? AND item_id IN ({_marks(len(chunk))})", [origin, *chunk])

    # -- the LLM extraction queue -------------------------------------------------------------

    def enqueue_extraction(self, item_ids: Sequence[int]) -> None:
        self._set_queue_status(item_ids, "pending")

    def _set_queue_status(self, item_ids: Sequence[int], status: str) -> None:
        """Put items on the queue with a status, or move them to it (one row per item)."""
        now = time.time()
        self.conn.executemany(
            "INSERT INTO extraction_queue (item_id, status, updated_at) VALUES (?, ?, ?)"
            " ON CONFLICT(item_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at",
            ((i, status, now) for i in item_ids))

    def queued_items(self, statuses: Sequence[str], limit: int | None = None) -> list[int]:
        sql = f"SELECT item_id FROM extraction_queue WHERE status IN ({_marks(len(statuses))}) ORDER BY item_id"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [r[0] for r in self.conn.execute(sql, list(statuses))]

    def mark_extraction(self, item_ids: Sequence[int], status: str, error: str = "") -> None:
        now = time.time()
        self.conn.executemany(
            "UPDATE extraction_queue SET status = ?, attempts = attempts + 1, last_error = ?, updated_at = ? WHERE item_id = ?",
            ((status, error[:500], now, i) for i in item_ids))

    # -- deferred items: stored and indexed, not yet read by the areas (status 'deferred') ------

    def defer_items(self, item_ids: Sequence[int]) -> None:
        self._set_queue_status(item_ids, "deferred")

    def next_deferred(self, limit: int) -> DeferredPiece | None:
        """The oldest deferred item's source and its next ``limit`` deferred item ids, in
        position order (ids are allocated in position order): a catch-up reads a long source in
        pieces, each its own transaction, so that memory and a lost transaction stay bounded by
        the piece, not the source. The source's items are found from the source (CROSS JOIN
        keeps its (source, position) index in front): from the queue's status, SQLite walked
        every deferred item, a million at the start of a large catch-up, for each piece."""
        row = self.conn.execute("SELECT i.source_id, i.position FROM extraction_queue q JOIN items i ON i.id = q.item_id"
                                " WHERE q.status = 'deferred' ORDER BY q.item_id LIMIT 1").fetchone()
        if row is None:
            return None
        source_id, position = row
        ids = [r[0] for r in self.conn.execute(
            "SELECT q.item_id FROM items i CROSS JOIN extraction_queue q ON q.item_id = i.id"
            " WHERE i.source_id = ? AND i.position >= ? AND q.status = 'deferred' ORDER BY i.position LIMIT ?",
            (source_id, position, limit + 1))]
        return DeferredPiece(source_id, ids[:limit], len(ids) > limit)

    def finish_deferred(self, item_ids: Sequence[int]) -> None:
        """These items leave the queue, unless the areas queued them again for the LLM."""
        for chunk in _chunks(list(item_ids)):
            self.conn.execute(f"DELETE FROM extraction_queue WHERE status = 'deferred' AND item_id IN ({_marks(len(chunk))})",
                              chunk)

    def deferred_count(self) -> int:
        return self.conn.execute("SELECT COUNT(*) FROM extraction_queue WHERE status = 'deferred'").fetchone()[0]

    def queue_counts(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT status, COUNT(*) FROM extraction_queue GROUP BY status").fetchall())

    def knowledge_counts(self) -> dict[str, int]:
        """Entities and open conflicts counted (few, or along an index); the rest as kept (knowledge-9)."""
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        kept = self.conn.execute(f"SELECT {', '.join(_TOTALS)} FROM knowledge_totals").fetchone()
        return {"entities": one("SELECT COUNT(*) FROM entities"),
                "conflicts": one("SELECT COUNT(*) FROM conflicts WHERE status = 'open'"), **dict(zip(_TOTALS, kept))}

    # -- the conflict inbox and the audit log ---------------------------------------------------

    _CONFLICT_COLUMNS = "id, kind, key, a, b, reason, status, created_at, decided_at"
    # clashes first (a fact that may no longer hold), then orphans, then names that may be one
    _CONFLICT_ORDER = "CASE kind WHEN 'clash' THEN 0 WHEN 'orphaned' THEN 1 ELSE 2 END, id"

    def open_conflict(self, kind: str, key: str, a: int, b: int | None, reason: str) -> int | None:
        """A new conflict (None when one with this key was ever opened: a decided one stays decided)."""
        cur = self.conn.execute("INSERT OR IGNORE INTO conflicts (kind, key, a, b, reason, created_at) VALUES (?,?,?,?,?,?)",
                                (kind, key, a, b, reason, now_iso()))
        return int(cur.lastrowid) if cur.rowcount else None

    def restore_conflict(self, kind: str, key: str, a: int, b: int | None, reason: str, status: str,
                         created_at: str, decided_at: str | None) -> None:
        """A conflict as an import brings it (one this store already has by key stays as it is)."""
        self.conn.execute("INSERT OR IGNORE INTO conflicts (kind, key, a, b, reason, status, created_at, decided_at)"
                          " VALUES (?,?,?,?,?,?,?,?)", (kind, key, a, b, reason, status, created_at, decided_at))

    def conflict_rows(self, status: str | None = "open", ids: Sequence[int] | None = None) -> list[tuple]:
        """Conflicts (see ``_CONFLICT_COLUMNS``), by id or by status (None: every one)."""
        if ids is not None:
            return self._in(f"SELECT {self._CONFLICT_COLUMNS} FROM conflicts WHERE id IN ({{marks}}) ORDER BY id", ids)
        if status is None:
            return self.conn.execute(f"SELECT {self._CONFLICT_COLUMNS} FROM conflicts ORDER BY {self._CONFLICT_ORDER}").fetchall()
        return self.conn.execute(f"SELECT {self._CONFLICT_COLUMNS} FROM conflicts WHERE status = ?"
                                 f" ORDER BY {self._CONFLICT_ORDER}", (status,)).fetchall()

    def set_conflict_status(self, conflict_id: int, status: str) -> None:
        decided = None if status == "open" else now_iso()
        self.conn.execute("UPDATE conflicts SET status = ?, decided_at = ? WHERE id = ?", (status, decided, conflict_id))

    def insert_decision(self, actor: str, action: str, summary: str, changes: list[dict[str, Any]],
                        conflict_id: int | None = None, undoes: int | None = None) -> int:
        cur = self.conn.execute(
            "INSERT INTO decisions (at, actor, action, conflict_id, summary, changes, undoes) VALUES (?,?,?,?,?,?,?)",
            (now_iso(), actor, action, conflict_id, summary, json.dumps(changes, ensure_ascii=False), undoes))
        decision = int(cur.lastrowid)
        if undoes is not None:
            self.conn.execute("UPDATE decisions SET undone_by = ? WHERE id = ?", (decision, undoes))
        return decision

    _DECISION_COLUMNS = "id, at, actor, action, conflict_id, summary, changes, undoes, undone_by"

    def restore_decision(self, at: str, actor: str, action: str, conflict_id: int | None, summary: str,
                         changes: list[dict[str, Any]], undoes: int | None) -> int:
        """A decision as an import brings it, with its own time (its undone_by set afterwards)."""
        cur = self.conn.execute(
            "INSERT INTO decisions (at, actor, action, conflict_id, summary, changes, undoes) VALUES (?,?,?,?,?,?,?)",
            (at, actor, action, conflict_id, summary, json.dumps(changes, ensure_ascii=False), undoes))
        return int(cur.lastrowid)

    def set_undone_by(self, pairs: Iterable[tuple[int, int]]) -> None:
        """(decision, the decision that undid it) pairs, as an import brings them."""
        self.conn.executemany("UPDATE decisions SET undone_by = ? WHERE id = ?", [(by, d) for d, by in pairs])

    def audited_columns(self) -> dict[str, frozenset[str]]:
        """The columns of each table a decision changes (what a row image may name)."""
        return {table: frozenset(r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")) for table in AUDITED}

    def next_ids(self) -> dict[str, int]:
        """For entities, facts and conflicts: the first id above every row's."""
        return {table: self.conn.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}").fetchone()[0]
                for table in ("entities", "facts", "conflicts")}

    def conflict_ids(self, keys: Sequence[str]) -> dict[str, int]:
        return dict(self._in("SELECT key, id FROM conflicts WHERE key IN ({marks})", keys))

    def decision_rows(self, ids: Sequence[int] | None = None, limit: int | None = None,
                      fact_id: int | None = None) -> list[tuple]:
        """Decisions (see ``_DECISION_COLUMNS``; ``changes`` parsed), newest first: by id, all
        (at most ``limit``), or those that changed one fact."""
        sql = f"SELECT {self._DECISION_COLUMNS} FROM decisions"
        if ids is not None:
            rows = self._in(sql + " WHERE id IN ({marks}) ORDER BY id DESC", ids)
        elif fact_id is not None:
            rows = self.conn.execute(
                sql + " WHERE EXISTS (SELECT 1 FROM json_each(decisions.changes) c WHERE json_extract(c.value, '$.table')"
                " = 'facts' AND json_extract(c.value, '$.key[0]') = ?) ORDER BY id DESC", (fact_id,)).fetchall()
        else:
            rows = self.conn.execute(sql + " ORDER BY id DESC LIMIT ?", (limit or -1,)).fetchall()
        return [(*r[:6], json.loads(r[6]), *r[7:]) for r in rows]

    def last_undoable_decision(self, actor: str) -> int | None:
        """The newest decision of ``actor`` that is no undo and is not undone (read from the end of
        the log, not the whole log parsed)."""
        row = self.conn.execute("SELECT id FROM decisions WHERE actor = ? AND undoes IS NULL AND undone_by IS NULL"
                                " ORDER BY id DESC LIMIT 1", (actor,)).fetchone()
        return row[0] if row else None

    def _scope(self, facts: Sequence[int], entities: Sequence[int], conflicts: Sequence[int]) -> dict[str, tuple[str, list]]:
        """WHERE clauses (and their parameters) that hold every row a decision about these facts,
        entities and conflicts can change, before it and after."""
        f, e, c = list(facts), list(entities), list(conflicts)
        fm, em, cm = _marks(len(f)), _marks(len(e)), _marks(len(c))
        chain = f"id IN ({fm}) OR superseded_by IN ({fm}) OR version_of IN ({fm})"
        fact_where = " OR ".join(x for x in (chain if f else "", f"subject_id IN ({em}) OR object_id IN ({em})" if e else "") if x)
        scope: dict[str, tuple[str, list]] = {}
        if fact_where:
            params = f * 3 * bool(f) + e * 2 * bool(e)
            scope["facts"] = (fact_where, params)
            scope["fact_sources"] = (f"fact_id IN (SELECT id FROM facts WHERE {fact_where})", params)
        if e:
            scope["entities"] = (f"id IN ({em})", e)
            scope["mentions"] = (f"entity_id IN ({em})", e)
            scope["synonyms"] = (f"a IN ({em}) OR b IN ({em})", e * 2)
        conflict_where = [f"id IN ({cm})" if c else "", f"kind != 'duplicate' AND (a IN ({fm}) OR b IN ({fm}))" if f else "",
                          f"kind = 'duplicate' AND (a IN ({em}) OR b IN ({em}))" if e else ""]
        scope["conflicts"] = (" OR ".join(x for x in conflict_where if x) or "0", c + f * 2 + e * 2)
        return scope

    def _images(self, scope: dict[str, tuple[str, list]]) -> dict[str, dict[tuple, dict[str, Any]]]:
        out = {}
        for table, (where, params) in scope.items():
            cur = self.conn.execute(f"SELECT * FROM {table} WHERE {where}", params)
            names = [d[0] for d in cur.description]
            pk = AUDITED[table]
            out[table] = {tuple(row[names.index(k)] for k in pk): dict(zip(names, row)) for row in cur}
        return out

    @contextmanager
    def recording(self, facts: Sequence[int] = (), entities: Sequence[int] = (),
                  conflicts: Sequence[int] = ()) -> Iterator[list[dict[str, Any]]]:
        """Collect what the enclosed writes change in the rows about these facts, entities and
        conflicts: the yielded list fills, after the block, with ``{"table", "key", "before",
        "after"}`` row images (None for a row that did not exist), which :meth:`undo_changes`
        reverses. Call inside a transaction."""
        scope = self._scope(facts, entities, conflicts)
        before = self._images(scope)
        changes: list[dict[str, Any]] = []
        yield changes
        after = self._images(scope)
        for table, rows in before.items():  # a row may leave the scope (no longer superseded by the fact)
            for key in set(rows) - set(after.get(table, {})):
                row = self._row(table, list(key))
                if row is not None:
                    after.setdefault(table, {})[key] = row
        for table in AUDITED:
            old, new = before.get(table, {}), after.get(table, {})
            changes += [{"table": table, "key": list(key), "before": old.get(key), "after": new.get(key)}
                        for key in sorted(set(old) | set(new), key=repr) if old.get(key) != new.get(key)]

    def undo_changes(self, changes: list[dict[str, Any]]) -> None:
        """Put every row a decision changed back as it was before; raises :class:`StaleUndo`
        when one is no longer as the decision left it."""
        for c in changes:
            if self._row(c["table"], c["key"]) != c["after"]:
                raise StaleUndo(f"{c['table'][:-1].replace('_', ' ')} {'/'.join(map(str, c['key']))} changed after it")
        order = {t: n for n, t in enumerate(_WRITE_ORDER)}
        gone = sorted((c for c in changes if c["before"] is None), key=lambda c: -order[c["table"]])
        back = sorted((c for c in changes if c["after"] is None), key=lambda c: (order[c["table"]], c["key"]))
        for c in gone:
            where = " AND ".join(f"{k} = ?" for k in AUDITED[c["table"]])
            self.conn.execute(f"DELETE FROM {c['table']} WHERE {where}", c["key"])
        for c in back:
            row = c["before"]
            self.conn.execute(f"INSERT INTO {c['table']} ({', '.join(row)}) VALUES ({_marks(len(row))})", list(row.values()))
        for c in changes:
            if c["before"] is not None and c["after"] is not None:
                row, where = c["before"], " AND ".join(f"{k} = ?" for k in AUDITED[c["table"]])
                self.conn.execute(f"UPDATE {c['table']} SET {', '.join(f'{k} = ?' for k in row)} WHERE {where}",
                                  [*row.values(), *c["key"]])

    def _row(self, table: str, key: list) -> dict[str, Any] | None:
        where = " AND ".join(f"{k} = ?" for k in AUDITED[table])
        cur = self.conn.execute(f"SELECT * FROM {table} WHERE {where}", key)
        row = cur.fetchone()
        return None if row is None else dict(zip([d[0] for d in cur.description], row))

    # -- structure and dry runs ---------------------------------------------------------------

    def item_sequence_rows(self) -> list[tuple]:
        """(id, source_id, position, kind, title, session) of every item, in reading order."""
        return self.conn.execute(
            "SELECT id, source_id, position, kind, title, json_extract(meta, '$.session') FROM items"
            " ORDER BY source_id, position").fetchall()

    @contextmanager
    def dry_run(self) -> Iterator[None]:
        """Run writes inside a savepoint that is always rolled back: a dry run reports exactly
        what the real run would change, and changes nothing.

        The savepoint sits inside a write transaction (the write lock taken first, as every
        write takes it): opened on its own, it began a deferred transaction whose first write
        found another process's newer commit and failed at once, without the lock's wait."""
        with self.transaction():  # type: ignore[attr-defined]  # nested transaction() calls join the savepoint
            self.conn.execute("SAVEPOINT knowledge_dry_run")
            try:
                yield
            finally:
                self.conn.execute("ROLLBACK TO knowledge_dry_run")
                self.conn.execute("RELEASE knowledge_dry_run")
