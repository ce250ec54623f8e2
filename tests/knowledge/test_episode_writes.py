"""The episodes recall keeps between recalls, and the count of episode writes they are keyed on
(migration ``knowledge-5``): feedback keeps them, a write to what an episode shows does not."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from mnemoscope.engine.store import Store
from mnemoscope.engine.store.base import StoreBase
from tests.support.stores import migrations_before


def test_a_recall_after_feedback_reads_no_episode_again_and_one_after_an_episode_write_does(mem):
    def recall_reading_episodes() -> tuple[list[tuple[int, list[int]]], bool]:
        statements: list[str] = []
        mem.store.reader.set_trace_callback(statements.append)
        try:
            rec = mem.recall("pottery class kids", strategy="bm25", top_k=1)
        finally:
            mem.store.reader.set_trace_callback(None)
        return [(e.id, e.items) for e in rec.episodes], any("episode_items" in s for s in statements)

    first, second = mem.knowledge.episodes()
    rec = mem.recall("pottery class kids", strategy="bm25", top_k=1)
    state = mem.store.episode_state()
    mem.feedback(rec.token, [rec.hits[0].item.id])
    assert mem.store.episode_state() == state
    assert recall_reading_episodes() == ([(second.id, second.items)], False)
    mem.knowledge.merge_episodes(first.id, second.id)
    assert mem.store.episode_state() != state
    assert recall_reading_episodes() == ([(first.id, first.items + second.items)], True)


def test_a_store_from_before_the_count_migrates_and_counts_writes_to_what_an_episode_shows(tmp_path: Path):
    path = tmp_path / "old.db"
    StoreBase(path, migrations_before("knowledge-5")).close()
    conn = sqlite3.connect(path)
    conn.executescript("""
        PRAGMA foreign_keys = ON;
        INSERT INTO sources (id, name, kind, content_hash, created_at, updated_at) VALUES (1, 'chat', 'conversation', 'h', 0, 0);
        INSERT INTO items (id, source_id, key, position, kind, speaker, timestamp, text) VALUES
            (1, 1, 'D1:1', 0, 'turn', 'Lena', '2023-01-14T14:10:00', 'I live in Lyon.');
        INSERT INTO episodes (id, source_id, summary) VALUES (1, 1, 'Lena lives in Lyon');
        INSERT INTO episode_items (item_id, episode_id, home_id) VALUES (1, 1, 1);
    """)
    conn.commit()
    conn.close()
    store = Store(path)
    try:
        counts = [store.episode_state()]
        with store.transaction():
            store.insert_events([(1, "rule", {"kind": "move"})])
        counts.append(store.episode_state())
        with store.transaction():
            store.upsert_entities([("lyon", "Lyon", "name")])  # a write to nothing an episode shows
        counts.append(store.episode_state())
        with store.transaction():
            store.delete_item_row(1)  # its member row and its event go by cascade
        counts.append(store.episode_state())
    finally:
        store.close()
    assert counts[1] > counts[0] and counts[2] == counts[1] and counts[3] > counts[2]
