"""The facts' time model in the store: the migration of an existing store, and decisions undone."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mnemoscope.engine.knowledge.entities import EntityRegistry
from mnemoscope.engine.errors import KnowledgeError
from mnemoscope.engine.knowledge.timeline import Timeline, fact_of_row
from mnemoscope.engine.store import Store
from mnemoscope.engine.store.base import StoreBase
from tests.support.stores import migrations_before

CREATED = 1_700_000_000  # 2023-11-14T22:13:20Z, when the old store ingested its source


def old_store(path: Path) -> None:
    """A store as the version before the time model wrote it: two facts about Lena's home."""
    StoreBase(path, migrations_before("knowledge-3")).close()
    conn = sqlite3.connect(path)
    conn.executescript(f"""
        INSERT INTO sources (id, name, kind, content_hash, created_at, updated_at) VALUES (1, 'chat', 'conversation', 'h', {CREATED}, {CREATED});
        INSERT INTO items (id, source_id, key, position, kind, speaker, timestamp, text) VALUES
            (1, 1, 'D1:1', 0, 'turn', 'Lena', '2023-01-14T14:10:00', 'I live in Lyon.'),
            (2, 1, 'D2:1', 1, 'turn', 'Lena', '2023-04-08T11:20:00', 'I moved to Berlin last week.');
        INSERT INTO entities (id, key, name, kind) VALUES (1, 'lena', 'Lena', 'speaker'), (2, 'lyon', 'Lyon', 'name'),
            (3, 'berlin', 'Berlin', 'name');
        INSERT INTO facts (id, key, subject, predicate, object, subject_id, object_id, time, origin) VALUES
            (1, 'lena|lives in|lyon', 'Lena', 'lives in', 'Lyon', 1, 2, NULL, 'rule'),
            (2, 'lena|moved to|berlin', 'Lena', 'moved to', 'Berlin', 1, 3, '2023-04-01', 'rule');
        INSERT INTO fact_sources VALUES (1, 1), (2, 2);
    """)
    conn.commit()
    conn.close()


@pytest.fixture
def migrated(tmp_path):
    path = tmp_path / "old.db"
    old_store(path)
    store = Store(path)
    yield store
    store.close()


def timeline(store: Store) -> Timeline:
    registry = EntityRegistry()
    registry.load(store.entity_rows())
    return Timeline(store, registry, lambda: str(Path(__file__).parent / "data" / "no_extra_rules.toml"))


def test_migrating_an_existing_store_gives_every_fact_its_times(migrated):
    lyon, berlin = (fact_of_row(r) for r in migrated.fact_rows())
    assert (lyon.valid_from, berlin.valid_from) == ("2023-01-14", "2023-04-01")  # the session's day, the statement's own
    assert lyon.recorded_at == berlin.recorded_at == "2023-11-14T22:13:20Z"  # when the source was stored
    assert lyon.valid_to is lyon.retired_at is lyon.superseded_by is None
    assert migrated.knowledge_counts()["conflicts"] == 0 and migrated.decision_rows() == []


def test_the_rules_supersede_and_every_decision_undoes(migrated):
    tl = timeline(migrated)
    with migrated.transaction():
        report = tl.rescan()
    assert report.superseded == [(1, 2)]
    lyon = fact_of_row(migrated.fact_rows([1])[0])
    assert (lyon.valid_to, lyon.superseded_by, lyon.state()) == ("2023-04-01", 2, "superseded")
    assert lyon.state("2023-02-01") == "current"  # it held then
    assert [f.id for f in tl.history(2)] == [1, 2]
    [decision] = tl.decisions()
    assert (decision.actor, decision.action, decision.changes) == ("rules", "superseded", 1)
    with migrated.transaction():
        undo = tl.undo(decision.id)
    assert undo.undoes == decision.id and fact_of_row(migrated.fact_rows([1])[0]).state() == "current"
    with pytest.raises(KnowledgeError, match="already undone"), migrated.transaction():
        tl.undo(decision.id)
    with pytest.raises(KnowledgeError, match="is an undo"), migrated.transaction():
        tl.undo(undo.id)


def test_an_undo_is_refused_when_a_later_decision_changed_the_same_rows(migrated):
    tl = timeline(migrated)
    with migrated.transaction():
        tl.rescan()
        with tl.decision("user", "retired", "Lyon was never true", facts=[1]):
            migrated.retire_facts([1])
    first, _later = sorted(d.id for d in tl.decisions())
    with pytest.raises(KnowledgeError, match="undo the later decision first"), migrated.transaction():
        tl.undo(first)
    lyon = fact_of_row(migrated.fact_rows([1])[0])
    assert (lyon.superseded_by, lyon.state()) == (2, "retired")  # nothing changed


def test_the_facts_filed_under_some_subjects_and_an_entitys_newest(migrated):
    assert [r[0] for r in migrated.facts_filed_under([1])] == [1, 2]  # both filed under Lena
    assert migrated.facts_filed_under([2, 3]) == []  # none filed under Lyon or Berlin
    assert [r[0] for r in migrated.fact_rows(entity_id=3, latest=5)] == [2]  # Berlin, as the object
    assert [r[0] for r in migrated.fact_rows(entity_id=1, latest=1)] == [2]


def test_a_new_fact_reads_the_facts_filed_under_its_subject_once(migrated):
    # "Lena's sister Mia" is filed under Lena and is about Mia: the facts filed under both are
    # read in one statement, not once per entity (each row was read twice)
    with migrated.transaction():
        mia = migrated.upsert_entities([("mia", "Mia", "name")])["mia"]
        new = migrated.insert_fact("lena's sister mia|lives in|paris", "Lena's sister Mia", "lives in", "Paris", 1, None,
                                   None, "rule", "2023-05-01")
    statements: list[str] = []
    migrated.writer.set_trace_callback(statements.append)
    tl = timeline(migrated)
    try:
        with migrated.transaction():
            tl.registry.load(migrated.entity_rows())
            tl.apply_rules([new])
    finally:
        migrated.writer.set_trace_callback(None)
    filed = [s for s in statements if "FROM facts WHERE" in s and "subject_id IN (" in s]
    assert len(filed) == 1 and f"subject_id IN (1,{mia})" in filed[0]
