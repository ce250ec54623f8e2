"""SQL for sources, items and their derived rows (terms, vectors, embedding cache, settings)."""

from __future__ import annotations

import json
import sqlite3
import time
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from ..records import Item, Source

MIGRATIONS = [
    (
        "records-1",
        """
        CREATE TABLE sources (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,
            kind TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            meta TEXT NOT NULL DEFAULT '{}',
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL
        );
        CREATE TABLE items (
            id INTEGER PRIMARY KEY,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            position INTEGER NOT NULL,
            kind TEXT NOT NULL,
            speaker TEXT,
            timestamp TEXT,
            title TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '[]',
            links TEXT NOT NULL DEFAULT '[]',
            meta TEXT NOT NULL DEFAULT '{}',
            UNIQUE (source_id, key)
        );
        CREATE INDEX items_source ON items(source_id, position);
        CREATE TABLE vocab (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
        CREATE TABLE item_terms (
            item_id INTEGER PRIMARY KEY REFERENCES items(id) ON DELETE CASCADE,
            term_ids BLOB NOT NULL,
            counts BLOB NOT NULL
        );
        CREATE TABLE item_vectors (
            item_id INTEGER NOT NULL REFERENCES items(id) ON DELETE CASCADE,
            signature TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (item_id, signature)
        ) WITHOUT ROWID;
        CREATE TABLE embed_cache (
            signature TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            vec BLOB NOT NULL,
            PRIMARY KEY (signature, text_hash)
        ) WITHOUT ROWID;
        CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB);
        """,
    )
]

_ITEM_COLUMNS = "id, source_id, key, position, kind, speaker, timestamp, title, text, tags, links, meta"


def _item_from_row(row: Sequence) -> Item:
    return Item(
        id=row[0], source_id=row[1], key=row[2], position=row[3], kind=row[4], speaker=row[5],
        timestamp=row[6], title=row[7], text=row[8], tags=json.loads(row[9]),
        links=json.loads(row[10]), meta=json.loads(row[11]),
    )


def _source_from_row(row: Sequence) -> Source:
    return Source(id=row[0], name=row[1], kind=row[2], content_hash=row[3], meta=json.loads(row[4]))


class RecordsSQL:
    """Mixin of :class:`engine.store.Store`: sources, items, terms, vectors, cache, settings."""

    conn: sqlite3.Connection
    _in: Callable[..., list[tuple]]  # StoreBase._in

    # -- sources ------------------------------------------------------------------------------

    def source_by_name(self, name: str) -> Source | None:
        row = self.conn.execute("SELECT id, name, kind, content_hash, meta FROM sources WHERE name = ?", (name,)).fetchone()
        return _source_from_row(row) if row else None

    def source(self, source_id: int) -> Source | None:
        row = self.conn.execute("SELECT id, name, kind, content_hash, meta FROM sources WHERE id = ?", (source_id,)).fetchone()
        return _source_from_row(row) if row else None

    def source_times(self, source_ids: Sequence[int]) -> dict[int, float]:
        """source id → when it was first stored (epoch seconds): the time of its undated items."""
        return dict(self._in("SELECT id, created_at FROM sources WHERE id IN ({marks})", source_ids))

    def sources(self) -> list[Source]:
        rows = self.conn.execute("SELECT id, name, kind, content_hash, meta FROM sources ORDER BY id").fetchall()
        return [_source_from_row(r) for r in rows]

    def insert_source(self, source: Source) -> int:
        now = time.time()
        cur = self.conn.execute(
            "INSERT INTO sources (name, kind, content_hash, meta, created_at, updated_at) VALUES (?,?,?,?,?,?)",
            (source.name, source.kind, source.content_hash, json.dumps(source.meta), now, now),
        )
        return int(cur.lastrowid)

    def replace_source(self, source_id: int, source: Source) -> None:
        """Give an existing source new content: its old items go (cascading to derived rows)."""
        self.conn.execute("DELETE FROM items WHERE source_id = ?", (source_id,))
        self.conn.execute(
            "UPDATE sources SET kind = ?, content_hash = ?, meta = ?, updated_at = ? WHERE id = ?",
            (source.kind, source.content_hash, json.dumps(source.meta), time.time(), source_id),
        )

    def delete_source_row(self, source_id: int) -> None:
        self.conn.execute("DELETE FROM sources WHERE id = ?", (source_id,))

    # -- items --------------------------------------------------------------------------------

    def insert_items(self, source_id: int, items: Sequence[Item]) -> list[int]:
        """Insert items with ids allocated up front (inside the caller's transaction), in one call:
        :meth:`next_item_id` and on."""
        first = self.next_item_id()
        for n, item in enumerate(items):
            item.id, item.source_id = first + n, source_id
        self.conn.executemany(
            "INSERT INTO items (id, source_id, key, position, kind, speaker, timestamp, title, text, tags, links, meta)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            ((item.id, source_id, item.key, item.position, item.kind, item.speaker, item.timestamp, item.title,
              item.text, json.dumps(item.tags), json.dumps(item.links), json.dumps(item.meta)) for item in items),
        )  # (a generator: a long source's rows are not all held at once)
        return [item.id for item in items]

    def next_item_id(self) -> int:
        """The id the next item inserted is given (one more than the largest)."""
        return self.conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM items").fetchone()[0]

    def items(self, ids: Iterable[int]) -> dict[int, Item]:
        ids = list(ids)
        out: dict[int, Item] = {}
        for start in range(0, len(ids), 900):
            chunk = ids[start:start + 900]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT {_ITEM_COLUMNS} FROM items WHERE id IN ({marks})", chunk):
                out[row[0]] = _item_from_row(row)
        return out

    def item_before(self, source_id: int, position: int) -> Item | None:
        """The source's item just before this position (None at its start): where a piece of a
        source read by a catch-up continues from."""
        row = self.conn.execute(f"SELECT {_ITEM_COLUMNS} FROM items WHERE source_id = ? AND position < ?"
                                " ORDER BY position DESC LIMIT 1", (source_id, position)).fetchone()
        return _item_from_row(row) if row else None

    def existing_items(self, ids: Iterable[int]) -> set[int]:
        """Which of these ids are items still in the store, reading the ids alone."""
        return {row[0] for row in self._in("SELECT id FROM items WHERE id IN ({marks})", list(ids))}

    def item_texts(self, ids: Iterable[int]) -> dict[int, str]:
        """id → text of these items: for a reader of texts alone, without decoding each item's
        tags, links and meta."""
        return dict(self._in("SELECT id, text FROM items WHERE id IN ({marks})", list(ids)))

    def items_of_source(self, source_id: int, offset: int = 0, limit: int | None = None) -> list[Item]:
        """A source's items in position order: all, or ``limit`` of them from the ``offset``-th."""
        rows = self.conn.execute(f"SELECT {_ITEM_COLUMNS} FROM items WHERE source_id = ? ORDER BY position LIMIT ? OFFSET ?",
                                 (source_id, -1 if limit is None else limit, offset))
        return [_item_from_row(r) for r in rows]

    def offset_in_source(self, item_id: int) -> int | None:
        """How many items of its source come before this item (None: no such item)."""
        row = self.conn.execute("SELECT (SELECT COUNT(*) FROM items o WHERE o.source_id = i.source_id AND o.position < i.position)"
                                " FROM items i WHERE i.id = ?", (item_id,)).fetchone()
        return None if row is None else row[0]

    def iter_items(self, batch: int = 2000) -> Iterator[Item]:
        last = 0
        while True:
            rows = self.conn.execute(f"SELECT {_ITEM_COLUMNS} FROM items WHERE id > ? ORDER BY id LIMIT ?", (last, batch)).fetchall()
            if not rows:
                return
            for row in rows:
                yield _item_from_row(row)
            last = rows[-1][0]

    def item_ids_of_source(self, source_id: int) -> list[int]:
        return [r[0] for r in self.conn.execute("SELECT id FROM items WHERE source_id = ? ORDER BY position", (source_id,))]

    def delete_item_row(self, item_id: int) -> None:
        self.conn.execute("DELETE FROM items WHERE id = ?", (item_id,))

    # -- vocabulary and term rows -------------------------------------------------------------

    def vocabulary(self) -> dict[str, int]:
        return {term: tid for tid, term in self.conn.execute("SELECT id, term FROM vocab")}

    def vocab_size(self) -> int:
        return self.conn.execute("SELECT COALESCE(MAX(id) + 1, 0) FROM vocab").fetchone()[0]

    def insert_terms(self, terms: Sequence[str], first_id: int) -> None:
        self.conn.executemany("INSERT INTO vocab (id, term) VALUES (?, ?)", zip(range(first_id, first_id + len(terms)), terms))

    def insert_item_terms(self, rows: Iterable[tuple[int, np.ndarray, np.ndarray]]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO item_terms (item_id, term_ids, counts) VALUES (?,?,?)",
            ((iid, tids.astype(np.int32).tobytes(), cnt.astype(np.float32).tobytes()) for iid, tids, cnt in rows),
        )

    def terms_from(self, first_id: int) -> dict[str, int]:
        """The vocabulary's terms from id ``first_id`` on (those added since a memory loaded it)."""
        return {term: tid for tid, term in self.conn.execute("SELECT id, term FROM vocab WHERE id >= ?", (first_id,))}

    def clear_item_terms(self) -> None:
        self.conn.execute("DELETE FROM item_terms")
        self.conn.execute("DELETE FROM vocab")

    # -- vectors ------------------------------------------------------------------------------

    def insert_vectors(self, signature: str, rows: Iterable[tuple[int, np.ndarray]]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO item_vectors (item_id, signature, vec) VALUES (?,?,?)",
            ((iid, signature, vec.astype(np.float16).tobytes()) for iid, vec in rows),
        )

    def vectors(self, signature: str, ids: Sequence[int] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(item ids, float32 matrix) of the stored vectors with this signature: every one, or
        those of ``ids``, in id order."""
        if ids is None:
            rows = self.conn.execute("SELECT item_id, vec FROM item_vectors WHERE signature = ? ORDER BY item_id",
                                     (signature,)).fetchall()
        else:
            rows = sorted(self._in("SELECT item_id, vec FROM item_vectors WHERE signature = ? AND item_id IN ({marks})",
                                   ids, [signature]))
        if not rows:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32)
        found = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float16).reshape(len(rows), -1)
        return found, mat.astype(np.float32)

    def delete_vectors(self, signature: str | None = None, *, keep_prefix: str = "") -> None:
        """Delete the vectors of one signature, or of all (but those whose signature starts with
        ``keep_prefix``, when given)."""
        if signature is not None:
            self.conn.execute("DELETE FROM item_vectors WHERE signature = ?", (signature,))
        elif keep_prefix:
            self.conn.execute("DELETE FROM item_vectors WHERE substr(signature, 1, ?) != ?", (len(keep_prefix), keep_prefix))
        else:
            self.conn.execute("DELETE FROM item_vectors")

    def vector_signatures(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT DISTINCT signature FROM item_vectors")]

    # -- images (engine/images.py) ------------------------------------------------------------

    def items_with_image(self, unembedded_under: str = "") -> list[Item]:
        """Items whose meta holds an ``image_url``, in id order; with ``unembedded_under``, only
        those without a vector of that signature (the images still to embed)."""
        sql = f"SELECT {_ITEM_COLUMNS} FROM items WHERE json_extract(meta, '$.image_url') IS NOT NULL"
        if unembedded_under:
            sql += " AND id NOT IN (SELECT item_id FROM item_vectors WHERE signature = ?)"
        rows = self.conn.execute(sql + " ORDER BY id", (unembedded_under,) if unembedded_under else ())
        return [_item_from_row(r) for r in rows]

    def count_items_with_image(self, signature: str) -> tuple[int, int]:
        """(items with an image reference, how many of them have a vector of ``signature``)."""
        row = self.conn.execute(
            "SELECT COUNT(*), COUNT(v.item_id) FROM items i LEFT JOIN item_vectors v ON v.item_id = i.id AND v.signature = ?"
            " WHERE json_extract(i.meta, '$.image_url') IS NOT NULL", (signature,)).fetchone()
        return int(row[0]), int(row[1])

    # -- embedding cache (paid embeddings are never requested twice) ----------------------------

    def cached_embeddings(self, signature: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for start in range(0, len(hashes), 900):
            chunk = list(hashes[start:start + 900])
            marks = ",".join("?" * len(chunk))
            for h, blob in self.conn.execute(
                f"SELECT text_hash, vec FROM embed_cache WHERE signature = ? AND text_hash IN ({marks})", [signature, *chunk]
            ):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def cache_embeddings(self, signature: str, rows: Iterable[tuple[str, np.ndarray]]) -> None:
        self.conn.executemany(
            "INSERT OR REPLACE INTO embed_cache (signature, text_hash, vec) VALUES (?,?,?)",
            ((signature, h, v.astype(np.float32).tobytes()) for h, v in rows),
        )

    # -- settings blobs -----------------------------------------------------------------------

    def get_kv(self, key: str) -> bytes | None:
        row = self.conn.execute("SELECT value FROM kv WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_kv(self, key: str, value: bytes | str | None) -> None:
        if value is None:
            self.conn.execute("DELETE FROM kv WHERE key = ?", (key,))
        else:
            self.conn.execute("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", (key, value))
