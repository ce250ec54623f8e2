"""The knowledge extension end to end on a small store: ingest, browse, recall modes, curation."""

import json
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.errors import KnowledgeError
from mnemoscope.engine.recall import RecallError
from mnemoscope.engine.records import KnowledgeCounts

from tests.support.stores import store_checksum

from .conftest import PASSAGES


def test_every_turn_belongs_to_one_episode_with_events_and_images(mem):
    episodes = mem.knowledge.episodes()
    covered = [i for e in episodes for i in e.items]
    all_items = [i.id for s in mem.sources() for i in mem.source_items(s.id)]
    assert sorted(covered) == sorted(all_items)
    assert len({e.session for e in episodes}) == 2
    first = episodes[0]
    assert first.summary and first.events and "Caroline" in first.participants
    assert first.images and first.images[0]["caption"].startswith("a photo of a painting")
    assert first.to_dict()["provenance"] == first.items


def test_a_repeated_fact_adds_provenance_and_keeps_the_time(mem):
    facts = [f for f in mem.knowledge.facts(entity="Melanie") if f.predicate == "painted"]
    assert len(facts) == 1
    fact = facts[0]
    keys = {mem.item(i).key for i in fact.provenance}
    assert keys == {"D1:2", "D1:4"} and fact.time == "2022"


def test_facts_by_entity_name_and_entities_are_shared_with_items(mem):
    caroline = next(e for e in mem.knowledge.entities() if e.name == "Caroline")
    assert caroline.kind == "speaker" and caroline.items >= 4 and caroline.facts >= 2
    assert all(caroline.id in (f.subject_id, f.object_id) for f in mem.knowledge.facts(entity=caroline.id))
    mel = next(e for e in mem.knowledge.entities() if e.name == "Mel")
    assert mel.synonyms == [next(e.id for e in mem.knowledge.entities() if e.name == "Melanie")]


@pytest.mark.parametrize("mode", ["lite", "pro", "max"])
def test_recall_modes(mem, mode):
    r = mem.recall("What did Caroline run last Saturday?", top_k=2, strategy="ppr", mode=mode)
    assert r.episodes and r.facts
    assert any(f.predicate == "ran" for f in r.facts)
    if mode == "lite":
        assert r.hits == []
    elif mode == "pro":
        assert len(r.hits) <= 2
    else:
        assert 2 < len(r.hits) <= 4
        episode_items = [i for e in r.episodes for i in e.items]
        assert all(h.item.id in episode_items for h in r.hits[2:])
        again = mem.recall("What did Caroline run last Saturday?", top_k=2, strategy="ppr", mode=mode)
        assert [h.item.id for h in again.hits] == [h.item.id for h in r.hits]
    assert r.graph and r.graph["seeds"] and r.graph["reached"]
    json.dumps(r.to_dict())


def test_unknown_mode_is_refused(mem):
    with pytest.raises(RecallError, match="unknown mode"):
        mem.recall("race", mode="huge")


def test_ppr_reaches_the_second_hop_through_a_shared_entity(tmp_path: Path):
    from mnemoscope.engine.records import Item, ParsedSource, Source

    items = [Item(text=p["text"], kind="chunk", key=str(n), position=n, title=p["title"]) for n, p in enumerate(PASSAGES)]
    with Memory(tmp_path / "w.db") as m:
        m.ingest_parsed([ParsedSource(Source(name="wiki", kind="document", content_hash="w"), items)])
        question = "What is the name of the waterfall in the country where the Bubye River is found?"
        bm25 = [h.item.title for h in m.recall(question, top_k=5, strategy="bm25").hits]
        ppr = [h.item.title for h in m.recall(question, top_k=5, strategy="ppr").hits]
        assert "Victoria Falls" not in bm25  # no word in common: only Zimbabwe links the two
        assert ppr[0] == "Bubye River" and "Victoria Falls" in ppr


def test_reopened_store_answers_the_same(tmp_path, conversation_file):
    with Memory(tmp_path / "r.db") as m:
        m.ingest(conversation_file)
        before = m.recall("adoption agencies in Boston", strategy="ppr", mode="max").to_dict()
    with Memory(tmp_path / "r.db") as m:
        after = m.recall("adoption agencies in Boston", strategy="ppr", mode="max").to_dict()
    for key in ("hits", "facts", "episodes", "graph"):
        assert before[key] == after[key]


def test_delete_item_cascades_and_dry_run_reports_exactly(mem):
    item = next(i for i in mem.source_items(mem.sources()[0].id) if i.key == "D1:3")
    checksum = store_checksum(mem.path)
    dry = mem.delete_item(item.id, dry_run=True)
    assert store_checksum(mem.path) == checksum
    real = mem.delete_item(item.id)
    assert dry == real and real["facts_deleted"] >= 1
    assert not any(item.id in f.provenance for f in mem.knowledge.facts())
    assert not any(item.id in e.items for e in mem.knowledge.episodes())
    assert "boston" in {e.key for e in mem.knowledge.entities()}  # still named by D2:2


def test_a_fact_with_two_sources_survives_losing_one(mem):
    fact = next(f for f in mem.knowledge.facts(entity="Melanie") if f.predicate == "painted")
    report = mem.delete_item(fact.provenance[0])
    assert report["facts_losing_provenance"] >= 1
    assert mem.knowledge.fact(fact.id).provenance == fact.provenance[1:]


def test_deleting_a_source_removes_all_its_knowledge(mem):
    report = mem.delete_source(mem.sources()[0].id)
    assert report["episodes_deleted"] == 2
    assert mem.knowledge.stats() == KnowledgeCounts(entities=0, facts=0, superseded=0, retired=0, conflicts=0, episodes=0,
                                                events=0)


def test_edit_fact_and_refusals_leave_the_store_unchanged(mem):
    fact = next(f for f in mem.knowledge.facts(entity="Caroline") if f.predicate == "ran")
    checksum = store_checksum(mem.path)
    with pytest.raises(KnowledgeError, match="empty"):
        mem.knowledge.edit_fact(fact.id, object=" ")
    with pytest.raises(KnowledgeError, match="no entity is named"):
        mem.knowledge.edit_fact(fact.id, subject="Nobody Known")
    other = next(f for f in mem.knowledge.facts() if f.id != fact.id)
    with pytest.raises(KnowledgeError, match="duplicate"):
        mem.knowledge.edit_fact(fact.id, subject=other.subject, predicate=other.predicate, object=other.object)
    mem.knowledge.edit_fact(fact.id, object="marathon", dry_run=True)
    assert store_checksum(mem.path) == checksum
    report = mem.knowledge.edit_fact(fact.id, object="marathon", time="2023-05-21")
    edited = mem.knowledge.fact(report.fact)
    assert (edited.object, edited.time, edited.origin, edited.version_of) == ("marathon", "2023-05-21", "user", fact.id)
    assert edited.provenance == fact.provenance
    assert mem.knowledge.fact(fact.id).state() == "retired"  # the old version stays, retired
    assert [f.id for f in mem.knowledge.fact_history(edited.id)] == [fact.id, edited.id]


def test_rename_merge_and_split_entities(mem):
    k = mem.knowledge
    ids = {e.name: e.id for e in k.entities()}
    with pytest.raises(KnowledgeError, match="merge them instead"):
        k.rename_entity(ids["Mel"], "Melanie")
    report = k.merge_entities(ids["Melanie"], ids["Mel"])
    assert report.mentions_moved == 1
    merged = k.entity(ids["Melanie"])
    assert "Mel" not in {e.name for e in k.entities()}
    k.split_entity(ids["Melanie"], ["Mel"], name="Mel")
    restored = {e.name: e for e in k.entities()}
    assert restored["Mel"].items == 1 and restored["Melanie"].items == merged.items - 1
    with pytest.raises(KnowledgeError, match="no mention written"):
        k.split_entity(ids["Melanie"], ["Nope"])
    k.rename_entity(ids["Boston"], "Boston, MA")
    assert k.entity(ids["Boston"]).name == "Boston, MA"


def test_an_entity_is_found_by_its_name_in_one_look_up(mem):
    """A name finds its entity whatever its case, a leading article or a possessive, by the
    store's unique key: one statement, not a scan of every entity that contains the name."""
    k = mem.knowledge
    melanie = next(e.id for e in k.entities() if e.name == "Melanie")
    statements: list[str] = []
    mem.store.conn.set_trace_callback(statements.append)
    found = k.entity_id_of("the Melanie")
    mem.store.conn.set_trace_callback(None)
    assert found == melanie and len(statements) == 1
    assert [k.entity_id_of(name) for name in ("MELANIE", "Melanie's", "Melanie")] == [melanie] * 3
    assert k.entity_id_of(f" {melanie} ") == melanie
    with pytest.raises(KnowledgeError, match="no entity is named 'Mela'"):
        k.entity_id_of("Mela")


def test_merged_episodes_keep_every_item_findable_and_split_back(mem):
    k = mem.knowledge
    first, second = k.episodes()
    k.merge_episodes(first.id, second.id)
    merged = k.episode(first.id)
    assert merged.items == first.items + second.items and merged.merged_from == [second.id]
    assert [e.id for e in k.episodes()] == [first.id]
    hit_ids = [h.item.id for h in mem.recall("pottery class kids", strategy="bm25").hits]
    assert second.items[0] in hit_ids
    k.split_episode(first.id)
    assert [(e.id, e.items) for e in k.episodes()] == [(first.id, first.items), (second.id, second.items)]
    with pytest.raises(KnowledgeError, match="no merged episode"):
        k.split_episode(first.id)


def test_a_recalls_episodes_are_read_in_four_statements_whatever_their_merges(mem):
    """The hits' episodes as the knowledge shows them (merged ones with what went into them),
    read at once: the store's state, the items' live episodes, their members, their events."""
    k = mem.knowledge
    first, second = k.episodes()
    k.merge_episodes(first.id, second.id)
    statements: list[str] = []
    mem.store.conn.set_trace_callback(statements.append)
    recalled = k.episodes_of_hits([second.items[-1], first.items[0]])
    mem.store.conn.set_trace_callback(None)
    assert recalled and recalled == k.episodes(ids=[first.id])
    assert recalled[0].merged_from == [second.id] and recalled[0].events
    assert len(statements) == 4


@pytest.mark.parametrize("writer", ["this connection", "another connection"])
def test_a_recalls_episodes_follow_a_merge_after_recalls_kept_them(mem, tmp_path, writer):
    """The episodes of a recall's hits are kept between recalls until the store changes: a merge
    (through this connection or another) shows at once, and a caller changing one recall's
    episode changes no other recall's."""
    def episodes() -> list[tuple[int, list[int]]]:
        recalled = mem.recall("pottery class kids", strategy="bm25", top_k=1).episodes
        return [(e.id, e.items) for e in recalled]

    first, second = mem.knowledge.episodes()
    assert episodes() == [(second.id, second.items)]
    mem.recall("pottery class kids", strategy="bm25", top_k=1).episodes[0].items.append(-1)
    assert episodes() == [(second.id, second.items)]
    elsewhere = Memory(tmp_path / "k.db")
    (mem if writer == "this connection" else elsewhere).knowledge.merge_episodes(first.id, second.id)
    assert episodes() == [(first.id, first.items + second.items)]
    elsewhere.close()


def test_item_entities_lists_speaker_and_names(mem):
    item = next(i for i in mem.source_items(mem.sources()[0].id) if i.key == "D1:3")
    assert {e.name for e in mem.knowledge.item_entities(item.id)} == {"Caroline", "LGBTQ", "Boston"}


@pytest.mark.parametrize("threshold, facts", [(0.93, 1), (0.999, 2)])
def test_near_duplicate_facts_merge_by_similarity(tmp_path, threshold, facts):
    chat = tmp_path / "chat.txt"
    chat.write_text("Maya: I adopted two rescue puppies from the animal shelter downtown.\n"
                    "Daniel: Lovely.\n"
                    "Maya: I adopted two rescue puppies from the big animal shelter downtown.\n", encoding="utf-8")
    with Memory(tmp_path / "d.db", fact_dedup_threshold=threshold) as m:
        m.ingest(chat)
        adopted = [f for f in m.knowledge.facts(entity="Maya") if f.predicate == "adopted"]
        assert len(adopted) == facts
        assert sorted(i for f in adopted for i in f.provenance) == [1, 3]


def test_a_name_that_later_speaks_is_a_speaker(tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("Daniel: Hi Maya! How is the new puppy?\nMaya: Daniel! The puppy is called Pepper.\n", encoding="utf-8")
    with Memory(tmp_path / "s.db") as m:
        m.ingest(chat)
        kinds = {e.name: e.kind for e in m.knowledge.entities()}
        assert kinds["Maya"] == "speaker" and kinds["Daniel"] == "speaker" and kinds["Pepper"] == "name"


def test_fact_dedup_past_a_full_scan_finds_near_duplicates_through_rare_words(monkeypatch):
    from mnemoscope.engine.dense import HashEmbedder
    from mnemoscope.engine.knowledge import dedup

    monkeypatch.setattr(dedup, "SCAN_ALL", 50)
    hasher = HashEmbedder(256)
    facts = [("Maya", "likes", f"the {colour} kite number {n}") for n, colour in
             enumerate(["red", "blue", "green", "amber", "violet"] * 40)]
    vectors, words = hasher.embed([" ".join(f) for f in facts]), [dedup.fact_words(*f) for f in facts]
    rows = dedup.RowMatrix(list(range(120)), vectors[:120], words[:120])  # read from the store, then stated
    for fid in range(120, len(facts)):
        rows.add(fid, vectors[fid], words[fid])
    probe = ("Maya", "likes", "the violet kite number 104")
    near, sim = rows.nearest(hasher.embed([" ".join(probe)])[0], dedup.fact_words(*probe))
    assert near == 104 and sim > 0.99


def test_a_timeline_page_reads_the_episodes_in_timeline_order(demo_copy):
    """The Memories screen reads only the timeline's page it shows: the same episodes, in the
    same order, as sorting every live episode by session date (undated last, then source and id)."""
    with Memory(demo_copy) as memory:
        every = memory.knowledge.episodes()
        timeline = sorted(every, key=lambda e: (e.time_start is None, e.time_start or "", e.source_id, e.id))
        assert any(e.time_start for e in every) and any(e.time_start is None for e in every)
        for limit, offset in ((1, 0), (7, 0), (len(every) + 5, 0), (7, 3), (7, len(every) - 2)):
            page = memory.knowledge.timeline_page(limit, offset)
            assert page == (timeline[offset:offset + limit], len(every))
