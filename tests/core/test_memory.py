"""The Memory facade's core: ingest, replace, delete, clear, export/import, reopen, read-only recall."""

import json
import sqlite3
import threading
import time

import pytest

from mnemoscope.engine import IngestFailed, Memory, RecallError, RequestError
from mnemoscope.engine.area import Area
from mnemoscope.engine.errors import ConfigError, StoreClosed
from mnemoscope.engine.transfer import write_records



def ranked_ids(mem, query, strategy="hybrid", k=5):
    return [(h.item.id, round(h.score, 9)) for h in mem.recall(query, top_k=k, strategy=strategy).hits]


def test_ingest_then_recall_finds_the_right_item(core, corpus):
    report = core.ingest(corpus)
    assert [s.status for s in report.sources] == ["added", "added"]
    for strategy in ("bm25", "hybrid"):  # dense (LSA) waits for 16 items: see the next test
        hits = core.recall("how often do I feed the starter?", strategy=strategy).hits
        assert hits and "Feed the starter" in hits[0].item.text, strategy
    top = core.recall("a beagle from the shelter", strategy="bm25").hits[0]
    assert top.item.speaker == "Maya" and "beagle" in top.item.text


def test_dense_recall_on_the_demo_guides(demo_store):
    with Memory(demo_store, extensions=False) as core:
        assert core.stats().lsa_dim > 0
        titles = [h.item.title for h in core.recall("what is attention in a transformer", strategy="dense", top_k=3).hits]
    assert any(t.startswith("How Transformers Work") for t in titles)


def test_reingest_of_unchanged_files_writes_nothing(core, corpus, checksum):
    core.ingest(corpus)
    before = checksum(core.path)
    report = core.ingest(corpus)
    assert [s.status for s in report.sources] == ["unchanged", "unchanged"]
    assert checksum(core.path) == before


def test_changed_source_is_replaced_whole(core, corpus):
    core.ingest(corpus)
    chat = corpus / "chat.txt"
    chat.write_text("Maya: We moved to Lisbon in spring.\nDaniel: Lisbon has great trams.\n", encoding="utf-8")
    report = core.ingest(chat)
    assert report.sources[0].status == "replaced"
    texts = [i.text for i in core.source_items(report.sources[0].source_id)]
    assert texts == ["We moved to Lisbon in spring.", "Lisbon has great trams."]
    assert not core.recall("beagle puppy shelter", strategy="bm25").hits
    assert core.recall("Lisbon trams", strategy="bm25").hits


class Exploding(Area):
    """An area that fails inside the ingest transaction, as a real area's bug would."""

    name = "exploding"

    def on_ingest(self, source, items): raise RuntimeError("boom")


def test_a_failure_inside_the_transaction_leaves_store_and_index_unchanged(core, corpus, checksum):
    core.ingest(corpus / "sourdough.md")
    before = checksum(core.path)
    answer = ranked_ids(core, "starter flour water")
    vocab = dict(core.index.vocab)
    core.add_extension(Exploding(core))
    (corpus / "sourdough.md").write_text("# New\nCompletely different zebra text.", encoding="utf-8")
    with pytest.raises(RuntimeError, match="boom"):
        core.ingest(corpus)
    assert checksum(core.path) == before
    assert core.index.vocab == vocab
    assert ranked_ids(core, "starter flour water") == answer


def test_a_nested_write_that_fails_is_undone_alone(core):
    store = core.store
    with store.transaction():
        store.set_kv("outer", "kept")
        with pytest.raises(RuntimeError):
            with store.transaction():
                store.set_kv("inner", "half-done")
                raise RuntimeError("an optional step fails and its caller goes on")
        store.set_kv("after", "kept too")
    assert (store.get_kv("outer"), store.get_kv("inner"), store.get_kv("after")) == ("kept", None, "kept too")
    with pytest.raises(RuntimeError), store.transaction():
        with store.transaction():
            store.set_kv("nested", "in a failed whole")
        raise RuntimeError("the outer write fails")
    assert store.get_kv("nested") is None and not store.conn.in_transaction


def test_strict_ingest_with_one_bad_file_writes_nothing(core, corpus, checksum):
    (corpus / "broken.jsonl").write_text('{"speaker": "A", "text": "ok"}\n{broken\n', encoding="utf-8")
    before = checksum(core.path)
    with pytest.raises(IngestFailed, match=r"broken.jsonl:2: malformed JSON"):
        core.ingest(corpus)
    assert checksum(core.path) == before


def test_store_is_wal_with_schema_version_and_migrations(tmp_path):
    path = tmp_path / "s.db"
    Memory(path, extensions=False).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations")]
        assert "records-1" in names
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(names)


def test_migrations_apply_once_and_new_ones_later(tmp_path):
    path = tmp_path / "m.db"
    migrations = [("a-1", "CREATE TABLE a (x INTEGER);")]
    from mnemoscope.engine.store.base import StoreBase

    StoreBase(path, migrations).close()
    StoreBase(path, migrations).close()  # a second open applies nothing
    store = StoreBase(path, migrations + [("b-1", "CREATE TABLE b (y TEXT);\nINSERT INTO b VALUES ('z');")])
    assert store.schema_version == 2
    assert store.query("SELECT y FROM b")[0][0] == "z"
    assert store.integrity_ok()
    store.close()


def test_not_a_store_is_a_clear_error(tmp_path):
    from mnemoscope.engine.store import StoreError

    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a Mnemoscope store"):
        Memory(junk, extensions=False)


def test_export_import_round_trip_is_lossless(core, corpus, tmp_path):
    core.ingest(corpus)
    first = tmp_path / "first.jsonl"
    records_written = core.export(first)
    assert records_written == len(first.read_text().splitlines()) - 1  # and the trailer
    other = Memory(tmp_path / "other.db", extensions=False)
    report = other.import_(first)
    assert report.items == core.stats().items
    second = tmp_path / "second.jsonl"
    other.export(second)

    def records(path):
        out = []
        for line in path.read_text().splitlines()[:-1]:
            rec = json.loads(line)
            rec.pop("id", None), rec.pop("source_id", None)
            out.append(rec)
        return out

    assert records(first) == records(second)
    assert [h[0] for h in ranked_ids(other, "marathon training")] and \
        [round(s, 6) for _, s in ranked_ids(other, "marathon training")] == [round(s, 6) for _, s in ranked_ids(core, "marathon training")]
    again = other.import_(first)
    assert [s.status for s in again.sources] == ["unchanged", "unchanged"]
    other.close()


def test_import_of_a_bad_file_names_the_line_and_writes_nothing(core, tmp_path, checksum):
    bad = tmp_path / "bad.jsonl"
    write_records(bad, [{"type": "source", "id": 1, "name": "x", "kind": "document"}, {"type": "item", "id": 5}])
    before = checksum(core.path)
    with pytest.raises(IngestFailed, match=r"bad.jsonl:2: not a Mnemoscope export record"):
        core.import_(bad)
    with pytest.raises(IngestFailed, match="no such file"):
        core.import_(tmp_path / "missing.jsonl")
    assert checksum(core.path) == before


def test_delete_item_source_and_clear(core, corpus):
    core.ingest(corpus)
    hit = core.recall("beagle shelter", strategy="bm25").hits[0]
    assert core.delete_item(hit.item.id, dry_run=True)["items"] == 1
    assert core.item(hit.item.id)  # a dry run changes nothing
    core.delete_item(hit.item.id)
    with pytest.raises(RequestError, match=f"no item with id {hit.item.id}"):
        core.item(hit.item.id)
    assert hit.item.id not in [h.item.id for h in core.recall("beagle shelter", strategy="bm25").hits]
    source = core.sources()[0]
    n = len(core.source_items(source.id))
    assert core.delete_source(source.id) == {"sources": 1, "items": n}
    with pytest.raises(RequestError):
        core.delete_source(source.id)
    core.clear()
    assert core.stats().items == 0 and core.stats().sources == 0
    with sqlite3.connect(core.path) as conn:
        for table in ("items", "item_terms", "item_vectors", "vocab"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0
    assert not core.recall("starter", strategy="hybrid").hits


def test_reopened_store_answers_identically(tmp_path, corpus):
    path = tmp_path / "r.db"
    mem = Memory(path, extensions=False)
    mem.ingest(corpus)
    queries = ["starter feeding", "marathon in Berlin", "Dutch oven lid", "puppy"]
    answers = {(q, s): ranked_ids(mem, q, s) for q in queries for s in ("bm25", "dense", "hybrid")}
    mem.close()
    reopened = Memory(path, extensions=False)
    assert {(q, s): ranked_ids(reopened, q, s) for q in queries for s in ("bm25", "dense", "hybrid")} == answers
    reopened.close()


def test_reindex_rebuilds_the_same_answers(core, corpus):
    core.ingest(corpus)
    answer = ranked_ids(core, "starter flour water", "bm25")
    report = core.reindex()
    assert report["items"] == core.stats().items
    assert ranked_ids(core, "starter flour water", "bm25") == answer


def test_core_recall_is_read_only(core, corpus, checksum):
    core.ingest(corpus)
    before = checksum(core.path)
    queries = ("starter", "marathon", "puppy breed")
    for strategy in ("bm25", "dense", "hybrid"):
        first = [core.recall(q, strategy=strategy).to_dict()["hits"] for q in queries]
        assert [core.recall(q, strategy=strategy).to_dict()["hits"] for q in queries] == first
    assert checksum(core.path) == before


def test_recall_with_every_extension_writes_nothing_and_changes_no_answer(tmp_path, corpus, checksum):
    mem = Memory(tmp_path / "ro.db")
    mem.ingest(corpus)
    before = checksum(mem.path)
    queries = ("starter", "marathon", "puppy breed")
    first = [[(h.item.id, h.score) for h in mem.recall(q).hits] for q in queries]
    assert [[(h.item.id, h.score) for h in mem.recall(q).hits] for q in queries] == first
    assert all(mem.recall(q).token for q in queries)  # the feedback token is signed, not stored
    assert checksum(mem.path) == before
    mem.close()


@pytest.mark.parametrize("query,message", [("", "empty"), ("   ", "empty"), ("x" * 1_000_000, "limit is")])
def test_bad_queries_are_refused(core, corpus, query, message):
    core.ingest(corpus)
    with pytest.raises(RecallError, match=message):
        core.recall(query)


def test_unknown_strategy_and_fusion(core, corpus):
    core.ingest(corpus)
    with pytest.raises(RecallError, match="unknown strategy"):
        core.recall("starter", strategy="magic")
    with pytest.raises(RecallError, match="unknown recall option 'itent'; choose from: as_of, intent, seed, trace"):
        core.recall("starter", itent="plan", strategy="bm25")
    assert core.default_strategy == "hybrid" and core.recall("starter").strategy == "hybrid"  # fused needs the ranker
    core.settings.default_strategy = "fuzed"
    with pytest.raises(RecallError, match="unknown strategy 'fuzed'"):
        core.recall("starter")
    core.settings.fusion = "rrf"
    assert core.recall("starter", strategy="hybrid").hits
    with pytest.raises(ConfigError, match="'bogus' is not one of linear, rrf"):  # refused when the settings are made
        core.settings.replace(fusion="bogus")


def test_query_of_unknown_words_returns_no_hits(core, corpus):
    core.ingest(corpus)
    assert core.recall("zyzzyva qwxz", strategy="bm25").hits == []


def test_character_trigrams_are_used_for_documents_and_queries_alike(tmp_path, corpus):
    plain = Memory(tmp_path / "plain.db", extensions=False)
    grams = Memory(tmp_path / "grams.db", extensions=False, char_ngrams=True)
    for mem in (plain, grams):
        mem.ingest(corpus)
    assert not plain.recall("maraton traning", strategy="bm25").hits  # two typos, no shared word
    assert "marathon" in grams.recall("maraton traning", strategy="bm25").hits[0].item.text
    plain.close(), grams.close()


def test_hybrid_falls_back_to_dense_candidates_when_bm25_finds_too_few(tmp_path, corpus):
    mem = Memory(tmp_path / "h.db", extensions=False, embedder="hash", word_vectors_weight=0.0)  # the dense side alone
    mem.ingest(corpus)
    assert not mem.recall("maratthon", strategy="bm25").hits  # a typo: no word matches
    hits = mem.recall("maratthon", strategy="hybrid").hits  # the hash embedder's trigrams do
    assert hits and "marathon" in hits[0].item.text and hits[0].sources == ["dense"]
    full = mem.recall("Berlin marathon training", strategy="hybrid", top_k=2).hits
    assert all(h.sources == ["bm25"] for h in full)  # enough BM25 candidates: dense only re-scores them
    assert full[0].features["dense"] > 0
    mem.close()


def test_writes_from_two_threads_run_one_after_the_other(core, corpus):
    """An ingest spans a transaction per source: another thread's write waits for all of it."""
    inside, release, notes = threading.Event(), threading.Event(), []

    def hold(done, total, what):  # called inside the ingest, after its first source
        inside.set()
        release.wait(5)

    ingest = threading.Thread(target=core.ingest, args=(corpus,), kwargs={"progress": hold})
    ingest.start()
    assert inside.wait(5)
    note = threading.Thread(target=lambda: notes.append(core.add_note("A note written meanwhile.")))
    note.start()
    note.join(0.3)
    assert note.is_alive()  # waiting for the ingest, not interleaved with it
    release.set()
    ingest.join(5)
    note.join(5)
    # The order is read from the store, not from when each thread got to record it: the note's
    # item comes after every item of the ingest, including the sources committed after the hold.
    ingested = core.store.item_ids_of_source(1) + core.store.item_ids_of_source(2)
    assert ingested and len(notes) == 1
    assert notes[0].id > max(ingested)
    assert core.counts().items == len(ingested) + 1


class Holding(Area):
    """An area whose ingest hook holds the source's transaction open until the test lets it go
    (as a catch-up's rule extraction does for a whole source)."""

    name = "holding"

    def __init__(self, mem):
        super().__init__(mem)
        self.inside, self.release = threading.Event(), threading.Event()

    def on_ingest(self, source, items):
        self.inside.set()
        self.release.wait(10)


def test_a_recall_beside_an_open_write_neither_waits_for_it_nor_reads_it_half_done(core, corpus):
    """A recall in another thread (the app's, beside an ingest or a catch-up) answers from what is
    committed while the write's transaction is open: it reads through a connection of its own."""
    core.ingest(corpus / "sourdough.md")
    before, stored = ranked_ids(core, "starter flour water"), core.counts().items
    holding = Holding(core)
    core.add_extension(holding)
    ingest = threading.Thread(target=core.ingest, args=(corpus / "chat.txt",))
    ingest.start()
    try:
        assert holding.inside.wait(10)
        read: list = []
        reader = threading.Thread(target=lambda: read.append((ranked_ids(core, "starter flour water"),
                                                              core.counts().items, core.recall("beagle puppy", strategy="bm25").hits)))
        reader.start()
        reader.join(5)
        assert not reader.is_alive()  # it did not wait for the open transaction
        assert read == [(before, stored, [])]  # the chat's rows, written but not committed, are not seen
    finally:
        holding.release.set()
        ingest.join(10)
    assert core.counts().items > stored and core.recall("beagle puppy", strategy="bm25").hits


def test_a_snapshot_read_in_one_thread_holds_no_other_thread_in_its_snapshot(core, corpus):
    """``reading()`` in one thread (the areas' save, an export) is a snapshot of its own: every other
    thread goes on reading what this process commits meanwhile."""
    core.ingest(corpus / "sourdough.md")
    stored = lambda: core.store.query("SELECT count(*) FROM items")[0][0]  # noqa: E731
    inside, finish, seen = threading.Event(), threading.Event(), []

    def snapshot() -> None:
        with core.store.reading():
            seen.append(stored())
            inside.set()
            finish.wait(30)
            seen.append(stored())

    held = threading.Thread(target=snapshot)
    held.start()
    try:
        assert inside.wait(10)
        core.ingest(corpus / "chat.txt")
        after = stored()
        assert held.is_alive()  # neither waited for the snapshot to end
    finally:
        finish.set()
        held.join(10)
    assert after > seen[0]  # this thread reads its own commit
    assert seen == [seen[0], seen[0]]  # the snapshot saw none of it



def test_closing_lets_another_threads_read_finish_and_refuses_its_next_one(core, corpus):
    """The app closes a memory (switching stores, quitting) while a worker still reads: the read
    under way ends with its rows, the next one is refused with one line, never SQLite's error."""
    core.ingest(corpus)
    stored, started, outcome = core.counts().items, threading.Event(), []

    def worker() -> None:
        rows = core.store.conn.execute("SELECT id FROM items ORDER BY id")
        first = rows.fetchone()
        started.set()
        time.sleep(0.3)  # the close begins meanwhile
        try:
            outcome.append([first, *rows.fetchall()])
            core.counts()
        except Exception as exc:  # noqa: BLE001 - what the worker met is the result
            outcome.append(exc)

    reading = threading.Thread(target=worker)
    reading.start()
    assert started.wait(10)
    core.close()
    reading.join(10)
    assert len(outcome) == 2 and len(outcome[0]) == stored
    assert isinstance(outcome[1], StoreClosed) and "closed" in str(outcome[1])



def test_a_thread_that_ended_with_a_read_unfinished_does_not_hold_up_the_close(tmp_path, corpus):
    mem = Memory(tmp_path / "left.db", extensions=False, lock_timeout=60)
    mem.ingest(corpus)
    left: list = []
    reader = threading.Thread(target=lambda: left.append(mem.store.conn.execute("SELECT id FROM items")))
    reader.start()
    reader.join(10)
    assert left and left[0].fetchone() is not None  # a cursor kept, not read to its end, its thread gone
    closing = threading.Thread(target=mem.close)
    closing.start()
    closing.join(10)
    assert not closing.is_alive()  # not the lock timeout's minute


def test_a_live_thread_keeping_a_read_half_done_does_not_hold_up_the_close(tmp_path, corpus):
    """A cursor a live thread keeps half-read (an event loop's frame holding it) is not a read
    under way: close() returns at once, the cursor still gives the rest of its rows, and the
    store refuses what comes after."""
    mem = Memory(tmp_path / "kept.db", extensions=False, lock_timeout=60)
    mem.ingest(corpus)
    stored, kept, release, rows = mem.counts().items, threading.Event(), threading.Event(), []

    def keeper() -> None:
        cursor = mem.store.conn.execute("SELECT id FROM items ORDER BY id")
        rows.append(cursor.fetchone())
        kept.set()
        release.wait(60)
        rows.extend(cursor.fetchall())

    keeping = threading.Thread(target=keeper)
    keeping.start()
    assert kept.wait(10)
    closing = threading.Thread(target=mem.close)
    closing.start()
    closing.join(10)
    try:
        assert not closing.is_alive()  # not the lock timeout's minute
    finally:
        release.set()
        keeping.join(10)
    assert len(rows) == stored and rows[0] is not None
    with pytest.raises(StoreClosed):
        mem.counts()

def test_data_version_takes_the_writers_lock_where_sqlite_does_not_serialise_a_connection(core, corpus, monkeypatch):
    """Two threads may use the writer at once only where SQLite serialises its calls itself
    (threadsafety 3); elsewhere reading the commit counter waits for another thread's write."""
    monkeypatch.setattr(sqlite3, "threadsafety", 1)
    holding = Holding(core)
    core.add_extension(holding)
    ingest = threading.Thread(target=core.ingest, args=(corpus / "chat.txt",))
    ingest.start()
    versions: list[int] = []
    try:
        assert holding.inside.wait(10)
        looking = threading.Thread(target=lambda: versions.append(core.store.data_version()))
        looking.start()
        looking.join(0.3)
        assert looking.is_alive() and not versions  # waiting for the write, not beside it
    finally:
        holding.release.set()
        ingest.join(10)
    looking.join(10)
    assert len(versions) == 1

def test_opening_a_store_leaves_sparse_matrices_and_areas_for_later(tmp_path, corpus):
    """The app's cold start: a fresh process opens a store and counts it without importing
    scipy.sparse or loading an area; the first recall then finds what a warm store finds."""
    import subprocess
    import sys

    path = tmp_path / "cold.db"
    with Memory(path) as mem:
        mem.ingest(corpus)
        expected = [h.item.id for h in mem.recall("starter flour water", strategy="hybrid").hits]
    script = (
        "import sys, json\n"
        "from mnemoscope.engine import Memory\n"
        f"mem = Memory({str(path)!r})\n"
        "counts = mem.counts()\n"
        "cold = {'sparse': 'scipy.sparse' in sys.modules, 'areas': mem.loaded_areas()}\n"
        "hits = [h.item.id for h in mem.recall('starter flour water', strategy='hybrid').hits]\n"
        "print(json.dumps({'cold': cold, 'items': counts.items, 'hits': hits}))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout)
    assert result["cold"] == {"sparse": False, "areas": []}
    assert result["items"] > 0 and result["hits"] == expected


def test_items_are_counted_per_source_in_one_query(demo_copy):
    """The Sources screen's counts: the same as each source's item list, a source per entry."""
    with Memory(demo_copy, extensions=False) as mem:
        sources = mem.sources()
        counts = mem.store.item_counts_by_source()
        assert len(sources) > 1 and len(set(counts.values())) > 1
        assert counts == {s.id: len(mem.store.item_ids_of_source(s.id)) for s in sources}
