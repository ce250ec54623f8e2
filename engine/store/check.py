"""``mnemoscope check``: what state a store file is in, and what of it can still be read.

Both open the file read-only, straight through SQLite (not :class:`engine.store.Store`, which
refuses a damaged or foreign file before it is of any use here), and change nothing.

:func:`check_file` reports the header (is it a Mnemoscope store, of which schema), SQLite's own
integrity and foreign-key checks, the file's permissions, and the counts the store keeps by
triggers that differ from a recount of its rows; :func:`recount` (``check --recount``, the one
write here, through the store) sets those to the recount. :func:`readable_records` reads every
source and item that can still be read, range by range and, where a range fails, row by row, so
that a damaged page costs the rows on it and nothing else; :func:`engine.transfer.salvage`
writes them as an export that ``mnemoscope import`` takes into a new store.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..errors import some_of
from .base import APPLICATION_ID, HEADER_MAGIC, statements, untrusted
from .counts import RECOUNTS, SOURCE_ITEMS
from .knowledge import ENTITY_ITEMS_AND_FACTS, TOTALS_RECOUNTS

MAX_PROBLEMS = 20  # lines of SQLite's integrity report that are kept
_SOURCE_COLUMNS = ("id", "name", "kind", "content_hash", "meta")
_ITEM_COLUMNS = ("id", "source_id", "key", "position", "kind", "speaker", "timestamp", "title", "text", "tags", "links",
                 "meta")
_JSON_COLUMNS = {"meta": dict, "tags": list, "links": list}
# the counts the store keeps by triggers, by table, each column with its recount from every row
# (migrations counts-1 and knowledge-9): the app's header reads them instead of counting
KEPT_COUNTS = {"record_counts": RECOUNTS, "knowledge_totals": TOTALS_RECOUNTS}
KEPT_PER_ROW = (ENTITY_ITEMS_AND_FACTS, SOURCE_ITEMS)  # a row of counts per entity and per source
# what each migration that adds kept counts adds, as ``check --recount`` says it after applying it
KEPT_BY_MIGRATION = {"counts-1": "sources and items", "counts-2": "each source's items",
                     "knowledge-7": "each entity's items and facts", "knowledge-9": "facts, episodes and events"}


@dataclass
class CountDrift:
    """A kept count that differs from a recount of the rows (a store edited by hand, or a write
    the triggers missed): the app shows it, wrong, until :func:`recount`."""

    table: str
    column: str
    kept: int | None  # None: the row that keeps it is missing
    counted: int | None  # None: its owner is gone (a row of counts of a deleted entity)
    owner: int | None = None  # whose count it is (in a table of :data:`KEPT_PER_ROW`; None: the store's)
    noun: str = ""  # what the owner is: entity

    @property
    def name(self) -> str:
        return self.column if self.owner is None else f"{self.noun} {self.owner}'s {self.column}"


@dataclass
class Recounted:
    """What :func:`recount` did: the kept counts an upgrade of the store's schema added as it
    opened (counted from every row by their migrations), and the drifts it set to the recount."""

    added: list[str]  # what the migrations applied by this open keep counts of (:data:`KEPT_BY_MIGRATION`)
    drifts: list[CountDrift]


@dataclass
class CheckReport:
    path: Path
    problems: list[str] = field(default_factory=list)  # damage, a foreign file, permissions
    notes: list[str] = field(default_factory=list)  # what is fine, for the report
    drifts: list[CountDrift] = field(default_factory=list)  # kept counts that differ from a recount

    @property
    def ok(self) -> bool:
        return not self.problems and not self.drifts


@dataclass
class Salvaged:
    """What :func:`readable_records` could and could not read."""

    sources: int = 0
    items: int = 0
    lost: list[str] = field(default_factory=list)  # "items 1201–1700" that could not be read


def open_read_only(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro", uri=True, isolation_level=None)


def check_file(path: str | Path) -> CheckReport:
    path = Path(path)
    report = CheckReport(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        report.problems.append(f"cannot read {path}: {exc.strerror or exc}")
        return report
    if not stat.S_ISREG(info.st_mode):
        report.problems.append(f"{path} is not a regular file")
        return report
    with open(path, "rb") as fh:
        header = fh.read(100)
    if len(header) < 100 or not header.startswith(HEADER_MAGIC):
        report.problems.append("not an SQLite database (the header is missing or damaged)")
        return report
    app_id = int.from_bytes(header[68:72], "big")
    if app_id not in (0, APPLICATION_ID):
        report.problems.append(f"not a Mnemoscope store (application_id {app_id:#x})")
        return report
    if stat.S_IMODE(info.st_mode) & 0o077:
        report.problems.append(f"readable by others (mode {stat.S_IMODE(info.st_mode):o}): chmod 600 {path}")
    why = untrusted(path, info)  # as the store's open reads it
    if why:  # the store opens read-only then, and only a refused change said why
        report.problems.append(f"another user could change it: {why}; it opens read-only (recall and"
                               " browsing work, changes are refused)")
    try:
        conn = open_read_only(path)
    except sqlite3.Error as exc:
        report.problems.append(f"cannot open: {exc}")
        return report
    try:
        _check_schema(conn, report)
        integrity = [r[0] for r in conn.execute("PRAGMA integrity_check(100)")]
        if integrity != ["ok"]:
            report.problems.extend(f"integrity: {line}" for line in integrity[:MAX_PROBLEMS])
        else:
            report.notes.append("SQLite integrity check: ok")
            broken = conn.execute("PRAGMA foreign_key_check").fetchall()
            if broken:
                report.problems.append(f"{len(broken)} row(s) point to rows that are gone (first in table {broken[0][0]})")
            report.drifts = count_drifts(conn)
            if not report.drifts:
                report.notes.append("the kept counts equal a recount")
    except sqlite3.DatabaseError as exc:
        report.problems.append(f"damaged: {exc}")
    finally:
        conn.close()
    return report


def _check_schema(conn: sqlite3.Connection, report: CheckReport) -> None:
    try:
        applied = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY applied_at")]
        counts = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("sources", "items")}
    except sqlite3.DatabaseError as exc:
        report.problems.append(f"the store's own tables cannot be read: {exc}")
        return
    report.notes.append(f"{len(applied)} schema change(s) applied; {counts['sources']} source(s), {counts['items']} item(s)")
    foreign = foreign_triggers(conn, applied)
    if foreign:
        report.problems.append(f"holds trigger(s) Mnemoscope did not make ({some_of(foreign, 3)}): a trigger runs with"
                               " every write and may refuse or change it; `export` and `import` into a new store keep"
                               " its records without them")


def foreign_triggers(conn: sqlite3.Connection, applied: list[str]) -> list[str]:
    """The triggers in the store that none of its ``applied`` schema changes made (someone added
    them: a store handed over by another may refuse or rewrite what is written), found by applying
    the same changes to an empty database in memory. A store of a newer Mnemoscope, whose changes
    this one does not know, is not judged."""
    from . import MIGRATIONS  # (the package imports this module)

    if not set(applied) <= {name for name, _sql in MIGRATIONS}:
        return []
    fresh = sqlite3.connect(":memory:")
    try:
        for name, sql in MIGRATIONS:
            for statement in statements(sql) if name in applied else []:
                fresh.execute(statement)
        made = {r[0] for r in fresh.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    finally:
        fresh.close()
    return sorted(r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'") if r[0] not in made)


def count_drifts(conn: sqlite3.Connection) -> list[CountDrift]:
    """The kept counts (:data:`KEPT_COUNTS`, :data:`KEPT_PER_ROW`) that differ from a recount. A
    table's counts and their recount are read by one statement, so from one snapshot: another process committing
    meanwhile cannot make them differ. A table an older store lacks is passed over: the next
    open adds it, counted."""
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    drifts: list[CountDrift] = []
    for table, recounts in KEPT_COUNTS.items():
        if table not in present:
            continue
        columns = list(recounts)
        row = conn.execute(f"SELECT {', '.join(columns)}, {', '.join(f'({sql})' for sql in recounts.values())}"
                           f" FROM {table}").fetchone()
        if row is None:  # its one row is gone (the store's readers then fail): every count of it is missing
            row = (None,) * len(columns) + conn.execute(f"SELECT {', '.join(f'({sql})' for sql in recounts.values())}").fetchone()
        drifts += [CountDrift(table, column, kept, counted)
                   for column, kept, counted in zip(columns, row, row[len(columns):]) if kept != counted]
    for kept in KEPT_PER_ROW:
        if kept.table not in present:
            continue
        width = len(kept.recounts)
        for row in conn.execute(kept.drifts_sql()):
            drifts += [CountDrift(kept.table, column, row[1 + n], row[1 + width + n], row[0], kept.noun)
                       for n, column in enumerate(kept.recounts) if row[1 + n] != row[1 + width + n]]
    return drifts


def recount(path: str | Path) -> Recounted:
    """Set the kept counts that differ from a recount to the recount (``check --recount``), and
    say what was done: the drifts as they were, and what kept counts the store's open added (a
    store from before them is upgraded as it opens, its new counts counted from every row).
    Through the store, in one write transaction: a writer in another process waits for it, so
    no count moves between the recount and the update (and a damaged, foreign or read-only file
    is refused as every write refuses it)."""
    from . import Store  # (the package imports this module's siblings, not this module)

    store = Store(path)
    try:
        with store.transaction() as conn:
            drifts = count_drifts(conn)
            for drift in drifts:
                _set(conn, drift)
    finally:
        store.close()
    return Recounted([KEPT_BY_MIGRATION[name] for name in store.upgraded if name in KEPT_BY_MIGRATION], drifts)


def _set(conn: sqlite3.Connection, drift: CountDrift) -> None:
    """One kept count set to its recount: a missing row of an owner's counts added, the row of
    an owner that is gone deleted."""
    if drift.owner is None:
        if drift.kept is None:  # the table's one row, all of its counts at once (its columns have no default)
            recounts = ", ".join(f"({sql})" for sql in KEPT_COUNTS[drift.table].values())
            conn.execute(f"INSERT OR IGNORE INTO {drift.table} VALUES (0, {recounts})")
            return
        conn.execute(f"UPDATE {drift.table} SET {drift.column} = ?", (drift.counted,))
        return
    key = next(kept.key for kept in KEPT_PER_ROW if kept.table == drift.table)
    if drift.counted is None:
        conn.execute(f"DELETE FROM {drift.table} WHERE {key} = ?", (drift.owner,))
        return
    if drift.kept is None:
        conn.execute(f"INSERT OR IGNORE INTO {drift.table} ({key}) VALUES (?)", (drift.owner,))
    conn.execute(f"UPDATE {drift.table} SET {drift.column} = ? WHERE {key} = ?", (drift.counted, drift.owner))


def readable_records(path: str | Path, salvaged: Salvaged, batch: int = 500) -> Iterator[dict[str, Any]]:
    """Every source and item of the store at ``path`` that can be read, as export records
    (sources before their items). An item whose source row is lost gets a stand-in source."""
    conn = open_read_only(Path(path))
    try:
        sources = {row[0]: row for row in _rows(conn, "sources", _SOURCE_COLUMNS, batch, salvaged)}
        items: dict[int, list[tuple]] = {}
        for row in _rows(conn, "items", _ITEM_COLUMNS, batch, salvaged):
            items.setdefault(row[1], []).append(row)
    finally:
        conn.close()
    for source_id in sorted(set(sources) | set(items)):
        row = sources.get(source_id) or (source_id, f"salvaged source {source_id}", "document", "", "{}")
        salvaged.sources += 1
        yield {"type": "source", **_record(_SOURCE_COLUMNS, row)}
        for item in sorted(items.get(source_id, []), key=lambda r: (r[3], r[0])):
            salvaged.items += 1
            yield {"type": "item", **_record(_ITEM_COLUMNS, item)}


def _rows(conn: sqlite3.Connection, table: str, columns: tuple[str, ...], batch: int, salvaged: Salvaged) -> Iterator[tuple]:
    """The readable rows of ``table`` in rowid order: by ranges, and row by row in a range that fails."""
    select = f"SELECT {', '.join(columns)} FROM {table}"
    try:
        top = conn.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError as exc:
        salvaged.lost.append(f"{table}: none could be read ({exc})")
        return
    for start in range(1, top + 1, batch):
        end = min(top, start + batch - 1)
        try:
            yield from conn.execute(f"{select} WHERE rowid BETWEEN ? AND ?", (start, end)).fetchall()
            continue
        except sqlite3.DatabaseError:
            pass
        lost = 0
        for rowid in range(start, end + 1):
            try:
                yield from conn.execute(f"{select} WHERE rowid = ?", (rowid,)).fetchall()
            except sqlite3.DatabaseError:
                lost += 1
        if lost:
            salvaged.lost.append(f"{table} {start}–{end}: {lost} row id(s) unreadable")


def _record(columns: tuple[str, ...], row: tuple) -> dict[str, Any]:
    out = dict(zip(columns, row))
    for name, kind in _JSON_COLUMNS.items():
        if name in out:
            try:
                value = json.loads(out[name]) if isinstance(out[name], str) else None
            except ValueError:
                value = None
            out[name] = value if isinstance(value, kind) else kind()
    for name in ("name", "kind", "content_hash", "key", "title", "text"):
        if name in out and not isinstance(out[name], str):
            out[name] = "" if out[name] is None else str(out[name])
    return out
