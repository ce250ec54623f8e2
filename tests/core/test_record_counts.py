"""The store's kept counts of sources and items (migration ``counts-1``), which the app's header
reads instead of counting every item: equal to COUNT(*) after the migration of an older store,
after every kind of write, and with two processes writing at once; and the migration keeps a
large store's saved index and areas usable."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from mnemoscope.engine import Memory
from mnemoscope.engine.store import Store
from mnemoscope.engine.store.counts import RECORD_COUNTS, SOURCE_COUNTS
from tests.core.test_index_file import SAVED_AREAS
from tests.core.test_processes import ROOT, make_sources, start_writer
from tests.support.stores import DEMO_DIR

SAVE_ALWAYS = {"save_index_above": 0}


def kept_and_recounted(path: Path) -> tuple[tuple[int, int, dict[int, int]], tuple[int, int, dict[int, int]]]:
    """(the kept counts, the same counted from every row), read on a connection of their own:
    sources, items, and each source's items (a source without items: 0)."""
    conn = sqlite3.connect(path)
    try:
        kept = conn.execute("SELECT sources, items FROM record_counts").fetchone()
        per_source = dict(conn.execute("SELECT source_id, items FROM source_counts").fetchall())
        recounted = conn.execute("SELECT (SELECT COUNT(*) FROM sources), (SELECT COUNT(*) FROM items)").fetchone()
        grouped = dict(conn.execute("SELECT s.id, COUNT(i.id) FROM sources s LEFT JOIN items i ON i.source_id = s.id"
                                    " GROUP BY s.id").fetchall())
    finally:
        conn.close()
    return (*kept, per_source), (*recounted, grouped)


def assert_kept(path: Path, what: str) -> tuple[int, int]:
    kept, recounted = kept_and_recounted(path)
    assert kept == recounted, f"record counts after {what}"
    assert sum(kept[2].values()) == kept[1]
    return kept[:2]


def as_before(path: Path, migration: str, sql: str) -> None:
    """The store as the code before ``migration`` left it: the tables and triggers of its ``sql``
    gone, the migration not applied."""
    conn = sqlite3.connect(path)
    for kind, name in reversed(re.findall(r"CREATE (TABLE|TRIGGER) (\w+)", sql)):
        conn.execute(f"DROP {kind} {name}")
    conn.execute("DELETE FROM schema_migrations WHERE name = ?", (migration,))
    conn.execute(f"PRAGMA user_version = {conn.execute('SELECT COUNT(*) FROM schema_migrations').fetchone()[0]}")
    conn.commit()
    conn.close()


def as_before_the_counts(path: Path) -> None:
    """The store as the code before counts-1 left it: no kept counts of sources and items."""
    as_before(path, "counts-2", SOURCE_COUNTS)
    as_before(path, "counts-1", RECORD_COUNTS)


def test_an_older_store_migrates_to_counts_that_equal_a_recount(demo_copy: Path):
    as_before_the_counts(demo_copy)
    store = Store(demo_copy)
    counts = store.counts()
    store.close()
    assert assert_kept(demo_copy, "the migration") == (counts["sources"], counts["items"])
    assert counts["sources"] > 0 and counts["items"] > 0


def test_a_store_of_the_previous_schema_migrates_to_source_counts_that_equal_a_grouped_count(demo_copy: Path):
    """counts-2 on a store that has counts-1: each source's kept count is its items counted."""
    as_before(demo_copy, "counts-2", SOURCE_COUNTS)
    with Memory(demo_copy, extensions=False) as mem:
        assert "counts-2" in mem.store.applied_migrations()
        by_source = mem.store.item_counts_by_source()
        listed = {s.id: len(mem.store.item_ids_of_source(s.id)) for s in mem.sources()}
    assert len(listed) > 1 and len(set(by_source.values())) > 1
    assert by_source == {source: n for source, n in listed.items() if n}
    assert_kept(demo_copy, "the migration")


def test_the_migration_keeps_a_saved_index_and_the_areas_state(demo_copy: Path, monkeypatch):
    """At a million items the saved index and areas take minutes to rebuild: a migration of a part
    nothing saved is derived from keeps them."""
    from mnemoscope.engine import store

    before = [m for m in store.MIGRATIONS if not m[0].startswith("counts-")]
    as_before_the_counts(demo_copy)
    with monkeypatch.context() as older:  # the code before counts-1 saves the index and the areas
        older.setattr(store, "MIGRATIONS", before)
        with Memory(demo_copy, **SAVE_ALWAYS) as mem:
            mem.recall("who adopted a dog")
    with Memory(demo_copy, **SAVE_ALWAYS) as mem:
        assert {"counts-1", "counts-2"} <= set(mem.store.applied_migrations())
        assert mem.index_from_file
        mem.recall("who adopted a dog")
        assert set(mem.areas_from_file) == SAVED_AREAS
    assert_kept(demo_copy, "the migration")


def test_the_counts_stay_a_recount_through_every_kind_of_write(demo_copy: Path, tmp_path: Path):
    note = tmp_path / "notes"
    note.mkdir()
    page = note / "kiln.md"
    page.write_text("# Kiln\n\nThe kiln fires at dawn.\n\nGlaze the bowls first.\n", encoding="utf-8")
    with Memory(demo_copy) as mem:
        start = assert_kept(demo_copy, "nothing")
        mem.ingest(note)
        assert assert_kept(demo_copy, "an ingest")[0] == start[0] + 1
        page.write_text("# Kiln\n\nThe kiln fires at noon.\n", encoding="utf-8")
        mem.ingest(note)  # the source's content replaced: its old items go, the new ones come
        assert assert_kept(demo_copy, "a changed source ingested again")[0] == start[0] + 1
        mem.add_note("Pixel sleeps on the radiator.")
        assert_kept(demo_copy, "a note")
        item = mem.store.item_ids_of_source(mem.sources()[0].id)[0]
        mem.delete_item(item)
        assert_kept(demo_copy, "an item deleted")
        source = mem.sources()[-1].id
        mem.delete_source(source)  # its items go by the foreign key's cascade
        assert_kept(demo_copy, "a source deleted")
        exported = tmp_path / "export.jsonl"
        mem.export(exported)
        mem.reindex()
        assert_kept(demo_copy, "a reindex")
        kept = mem.counts()
        mem.clear()
        assert assert_kept(demo_copy, "a clear") == (0, 0)
    fresh = tmp_path / "imported.db"
    with Memory(fresh) as mem:
        mem.import_(exported)
        assert assert_kept(fresh, "an import") == (kept.sources, kept.items)
    bulk = tmp_path / "bulk.db"
    with Memory(bulk) as mem:
        mem.ingest([DEMO_DIR], defer=True, catch_up=False)  # a large ingest: the core first, the areas later
        stored = assert_kept(bulk, "a deferred ingest")
        mem.catch_up()
        assert assert_kept(bulk, "its catch-up") == stored
        assert mem.counts().items == stored[1] > 0


# Delete every third source of a store, each in a transaction of its own, printing each once committed.
DELETER = """
import sys
from mnemoscope.engine import Memory
with Memory(sys.argv[1], extensions=False) as mem:
    for source in mem.sources()[::3]:
        mem.delete_source(source.id)
        print(source.name, flush=True)
"""


def test_two_processes_writing_at_once_keep_the_counts_exact(tmp_path: Path):
    store = tmp_path / "shared.db"
    Memory(store).close()
    first = {**make_sources(tmp_path / "a", n_files=10, lines=12), **make_sources(tmp_path / "b", n_files=10, lines=12)}
    both_ingest = [start_writer(store, tmp_path / folder) for folder in ("a", "b")]
    wait_for(both_ingest)
    assert assert_kept(store, "two processes' ingests") == (len(first), sum(first.values()))
    assert kept_by_name(store) == first

    later = make_sources(tmp_path / "c", n_files=10, lines=12)
    ingest_and_delete = [start_writer(store, tmp_path / "c"),
                         subprocess.Popen([sys.executable, "-c", DELETER, str(store)], cwd=ROOT, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True)]
    wait_for(ingest_and_delete)
    sources, items = assert_kept(store, "an ingest and deletions at once")
    assert len(first) + len(later) > sources > len(later) and items == sources * 12
    assert set(kept_by_name(store).values()) == {12}


def kept_by_name(path: Path) -> dict[str, int]:
    """Each source's kept count of items, by the source's name (the file it was read from)."""
    conn = sqlite3.connect(path)
    try:
        return dict(conn.execute("SELECT s.name, c.items FROM sources s JOIN source_counts c ON c.source_id = s.id"))
    finally:
        conn.close()


def wait_for(processes: list[subprocess.Popen]) -> None:
    try:
        for process in processes:
            process.wait(timeout=180)
            assert process.returncode == 0, process.stderr.read()
    finally:
        for process in processes:
            process.kill()
            process.wait()
