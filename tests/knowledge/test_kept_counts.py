"""What the store keeps so that the Facts and Memories screens read a page, not the store, and
the app's header opens without counting it: each entity's counts (migration ``knowledge-7``),
each episode's start (``knowledge-6``) and the knowledge area's totals (``knowledge-9``). Each
equals a full recount after the migration of an older store and after every kind of write."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

from mnemoscope.engine import Memory
from mnemoscope.engine.store import MIGRATIONS, Store
from mnemoscope.engine.store.knowledge import ENTITY_COUNTS, EPISODE_STARTS, KNOWLEDGE_TOTALS
from tests.knowledge.conftest import locomo

KEPT = ("knowledge-6", "knowledge-7", "knowledge-9")

RECOUNT_ENTITIES = """
    SELECT e.id, (SELECT COUNT(DISTINCT item_id) FROM mentions m WHERE m.entity_id = e.id),
           (SELECT COUNT(*) FROM facts f WHERE f.retired_at IS NULL AND (f.subject_id = e.id OR f.object_id = e.id))
    FROM entities e"""
RECOUNT_STARTS = """
    SELECT e.id, (SELECT MIN(i.timestamp) FROM episode_items m JOIN items i ON i.id = m.item_id
                  WHERE m.episode_id = e.id AND i.timestamp != '')
    FROM episodes e WHERE e.merged_into IS NULL"""
TOTALS = "SELECT facts, superseded, retired, episodes, events FROM knowledge_totals"
RECOUNT_TOTALS = """
    SELECT (SELECT COUNT(*) FROM facts WHERE retired_at IS NULL),
           (SELECT COUNT(*) FROM facts WHERE retired_at IS NULL AND valid_to IS NOT NULL),
           (SELECT COUNT(*) FROM facts WHERE retired_at IS NOT NULL),
           (SELECT COUNT(*) FROM episodes WHERE merged_into IS NULL), (SELECT COUNT(*) FROM events)"""

MOVE = locomo("move", ("Lena", "Tom"),
              ("2:00 pm on 14 January, 2023", [("Lena", "I live in Lyon with my cat Pixel."), ("Tom", "Lyon is lovely, Lena.")]),
              ("11:20 am on 8 April, 2023", [("Lena", "I moved to Berlin last week."), ("Tom", "Berlin! Say hi to Pixel.")]))


def kept_and_recounted(path: Path) -> tuple[tuple[dict, dict, tuple], tuple[dict, dict, tuple]]:
    """(the kept counts, starts and totals, the same recounted from every row), read on a
    connection of their own."""
    conn = sqlite3.connect(path)
    try:
        kept = ({e: (i, f) for e, i, f in conn.execute("SELECT entity_id, items, facts FROM entity_counts")},
                dict(conn.execute("SELECT id, start FROM episodes WHERE merged_into IS NULL")),
                conn.execute(TOTALS).fetchone())
        recounted = ({e: (i, f) for e, i, f in conn.execute(RECOUNT_ENTITIES)}, dict(conn.execute(RECOUNT_STARTS)),
                     conn.execute(RECOUNT_TOTALS).fetchone())
    finally:
        conn.close()
    return kept, recounted


def assert_kept(path: Path, what: str) -> None:
    (counts, starts, totals), (entity_recount, start_recount, total_recount) = kept_and_recounted(path)
    assert counts and starts and all(totals[:2] + totals[3:]), what  # (no fact is retired before an edit)
    assert counts == entity_recount, f"entity counts after {what}"
    assert starts == start_recount, f"episode starts after {what}"
    assert totals == total_recount, f"knowledge totals after {what}"


def as_before_the_kept_counts(path: Path) -> None:
    """The store as the code before knowledge-6, -7 and -9 left it: their tables, columns, indexes
    and triggers gone, and the migrations not applied."""
    created = re.findall(r"CREATE (TABLE|INDEX|TRIGGER) (\w+)", EPISODE_STARTS + ENTITY_COUNTS + KNOWLEDGE_TOTALS)
    conn = sqlite3.connect(path)
    for kind, name in reversed(created):
        conn.execute(f"DROP {kind} {name}")
    conn.execute("ALTER TABLE episodes DROP COLUMN start")
    conn.execute(f"DELETE FROM schema_migrations WHERE name IN {KEPT}")
    conn.execute(f"PRAGMA user_version = {len(MIGRATIONS) - len(KEPT)}")
    conn.commit()
    conn.close()


def test_an_older_store_migrates_to_counts_and_starts_that_equal_a_recount(demo_copy, tmp_path):
    as_before_the_kept_counts(demo_copy)
    conn = sqlite3.connect(demo_copy)
    assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name IN ('entity_counts', 'knowledge_totals')").fetchall()
    conn.close()
    Store(demo_copy).close()
    assert_kept(demo_copy, "the migration")
    with Memory(demo_copy) as mem:  # and the screens' pages are the order a full read gives
        every = sorted(mem.knowledge.entities(), key=lambda e: (-(e.items + e.facts), e.id))
        assert [e.id for e in mem.knowledge.entities(limit=5)] == [e.id for e in every[:5]]
        episodes = mem.knowledge.episodes()
        order = sorted(episodes, key=lambda e: (e.time_start is None, e.time_start or "", e.source_id, e.id))
        assert mem.knowledge.timeline_page(3) == (order[:3], len(episodes))


def test_the_counts_and_starts_stay_a_recount_through_every_kind_of_write(demo_copy, tmp_path):
    chat = tmp_path / "move.json"
    chat.write_text(json.dumps([MOVE]), encoding="utf-8")
    with Memory(demo_copy) as mem:
        knowledge = mem.knowledge
        mem.ingest(chat)  # Berlin supersedes Lyon
        assert_kept(demo_copy, "an ingest with a supersession")
        assert any(f.superseded_by for f in knowledge.facts("Lena"))

        entity = knowledge.entities(limit=1)[0]
        fact = next(f for f in knowledge.facts(entity.id) if f.subject_id == entity.id and f.object_id is None)
        knowledge.edit_fact(fact.id, object=fact.object + " on Sundays")
        assert_kept(demo_copy, "an edited fact")
        knowledge.undo_last()
        assert_kept(demo_copy, "the edit undone")
        knowledge.add_fact(entity.name, "teaches", "Pixel the cat", fact.provenance)
        assert_kept(demo_copy, "a fact added")
        knowledge.delete_fact(fact.id)
        assert_kept(demo_copy, "a fact deleted")

        lena, tom = (knowledge.entity_id_of(name) for name in ("Lena", "Tom"))
        knowledge.rename_entity(tom, "Thomas")
        knowledge.merge_entities(lena, tom)
        assert_kept(demo_copy, "an entity renamed and merged")
        assert knowledge.entity(lena).items == len({i for i, _s, _r in mem.store.mentions_of_entity(lena)})

        first, second = sorted((e for e in knowledge.episodes() if e.source_id == entity_source(mem, "move")),
                               key=lambda e: e.id)
        knowledge.merge_episodes(second.id, first.id)  # the later one takes the earlier's turns: its start moves
        assert_kept(demo_copy, "two episodes merged")
        knowledge.split_episode(second.id)
        assert_kept(demo_copy, "the episode split")

        # the store moves every item of one episode into the other (an upsert: a replace would
        # delete the rows without the triggers that read the left episode's start again)
        with mem.store.transaction():
            mem.store.insert_episode_members((i, second.id, second.id) for i in first.items)
        assert_kept(demo_copy, "an episode's items moved into another")
        for item in first.items:  # the other's start is its own again
            mem.delete_item(item)
        assert_kept(demo_copy, "items deleted")
        # a source whose episodes are merged: deleting one the others are merged into sets their
        # merged_into to NULL (the foreign key) before they go too
        episodes = knowledge.episodes()
        chat = max({e.source_id for e in episodes}, key=lambda s: sum(e.source_id == s for e in episodes))
        into, *merged = [e.id for e in episodes if e.source_id == chat]
        for episode in merged:
            knowledge.merge_episodes(into, episode)
        assert merged and knowledge.counts().episodes == len(knowledge.episodes()) == len(episodes) - len(merged)
        assert_kept(demo_copy, "episodes merged into one")
        mem.delete_source(chat)
        assert_kept(demo_copy, "a source of merged episodes deleted")
        mem.delete_source(entity_source(mem, "move"))
        assert_kept(demo_copy, "a source deleted")


def entity_source(mem: Memory, stem: str) -> int:
    return next(s.id for s in mem.sources() if Path(s.name.split("#")[0]).stem == stem)


def test_a_page_of_an_entitys_facts_is_that_part_of_them_all_and_its_count_their_number(demo_copy):
    """The Facts screen reads a page (Store.entity_fact_rows) and the count the store keeps, not
    every fact of the entity: pages of 2 put together are every entity's facts, in order; an entity
    that is both subject and object of a fact is counted, and listed, once."""
    with Memory(demo_copy) as mem:
        knowledge = mem.knowledge
        stated = knowledge.facts("Maya")[0].provenance[:1]
        knowledge.add_fact("Maya", "admires", "Maya", list(stated))  # both sides of one fact
        entities = knowledge.entities()
        assert entities and any(f.subject_id == f.object_id for f in knowledge.facts())
        for entity in entities:
            every = [f.id for f in knowledge.facts(entity.id)]
            paged: list[int] = []
            while True:
                page, total = knowledge.facts_page(entity.id, len(paged), 2)
                assert total == len(every), entity.name
                if not page:
                    break
                paged += [f.id for f in page]
            assert paged == every, entity.name


def test_an_entitys_newest_facts_are_the_last_of_them_all_retired_ones_where_asked(demo_copy):
    """``fact_rows(entity_id=, latest=)`` reads the newest of each side by its index, as a page
    reads the first: they are the last ``latest`` of the entity's facts, in order, with the
    retired ones only when asked for."""
    with Memory(demo_copy) as mem:
        maya = mem.knowledge.facts("Maya")
        assert maya
        mem.knowledge.edit_fact(maya[0].id, predicate="once " + maya[0].predicate)  # the old version retired
        entities = [e.id for e in mem.knowledge.entities()]
    store = Store(demo_copy)
    try:
        assert entities and store.fact_rows(retired=True) != store.fact_rows()
        for entity in entities:
            for retired in (False, True):
                every = [r[0] for r in store.fact_rows(entity_id=entity, retired=retired)]
                for latest in (1, 2, 5):
                    assert [r[0] for r in store.fact_rows(entity_id=entity, latest=latest, retired=retired)] == \
                        every[-latest:], (entity, retired, latest)
    finally:
        store.close()


def test_an_entitys_counts_as_of_a_date_are_those_said_and_held_by_then(tmp_path):
    """The counts the store keeps are of now; as of a date (the Facts screen's list, as of the
    date its facts are shown) they are the items said by then and the facts that held then."""
    chat = tmp_path / "move.json"
    chat.write_text(json.dumps([MOVE]), encoding="utf-8")
    with Memory(tmp_path / "move.db") as mem:
        mem.ingest(chat)
        knowledge = mem.knowledge
        lena = knowledge.entity_id_of("Lena")
        now = {e.id: (e.items, e.facts) for e in knowledge.entities()}
        assert knowledge.entity_counts_as_of(list(now), None) == now
        # January: her turn and Tom's naming her, the one home she told of; April adds the move
        assert knowledge.entity_counts_as_of([lena], "2023-01")[lena] == (2, 1)
        assert knowledge.entity_counts_as_of([lena], "2023-04")[lena] == now[lena] == (3, 2)
        assert knowledge.entity_counts_as_of([lena], "2022")[lena] == (0, 0)
