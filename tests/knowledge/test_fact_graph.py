"""What facts add to the graph: the subject meets the entities its object names, and the items
stating facts about the same head word meet through a phrase node; ingest and reload agree."""

from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.knowledge.graph import EDGE_TYPES, PHRASE_BASE, PHRASE_MAX_ITEMS, KnowledgeGraph
from mnemoscope.engine.pagerank import personalized_pagerank

from .conftest import ingested

PASSAGES = """\
# Mahatma Gandhi

Mahatma Gandhi founded the Navajivan weekly in Ahmedabad.

# Pottery

Pottery is the craft of shaping clay.
"""

CHAT = """\
Caroline: I am researching adoption agencies.
Melanie: My sister painted a lake.
Caroline: Yesterday I called two adoption agencies.
"""


def _only(kind: str) -> dict[str, float]:
    return {t: float(t == kind) for t in EDGE_TYPES}


def _walk(mem: Memory, kind: str, seed_node: int) -> np.ndarray:
    k = mem.knowledge
    seeds = np.zeros(k.graph.n_nodes(mem.index))
    seeds[seed_node] = 1.0
    return personalized_pagerank(k.graph.transition(_only(kind), mem.index), seeds)


@pytest.fixture
def chat_mem(tmp_path: Path) -> Memory:
    with ingested(tmp_path, "chat.txt", CHAT) as m:
        yield m


def test_a_fact_joins_its_subject_to_the_entities_its_object_names(tmp_path):
    with ingested(tmp_path, "gandhi.md", PASSAGES) as m:
        k = m.knowledge
        fact = next(f for f in k.facts() if f.predicate == "founded")
        gandhi, navajivan = k.registry.lookup("mahatma gandhi"), k.registry.lookup("navajivan")
        assert fact.subject_id == gandhi and navajivan is not None and fact.object_id != navajivan
        first = m.index.n_slots
        visits = _walk(m, "fact", first + k.graph.entity_node(gandhi))
        assert visits[first + k.graph.entity_node(navajivan)] > 0
        assert visits[first + k.graph.entity_node(k.registry.lookup("pottery"))] == 0


def stating_items(graph: KnowledgeGraph) -> dict[str, list[int]]:
    """Each phrase → the ids of the items linked to it, ascending (from the graph's saved form)."""
    arrays, phrases = graph.arrays()
    nodes, items = arrays["phrase.a"] - PHRASE_BASE, arrays["phrase.b"]
    return {phrase: sorted(items[nodes == n].tolist()) for n, phrase in enumerate(phrases)}


def test_a_phrase_item_pair_is_linked_once_however_often_and_whenever_it_is_added():
    graph = KnowledgeGraph()
    graph.add_phrases([("flour", 3), ("rye", 3), ("flour", 3), ("flour", 1)])
    graph.add_phrases([("flour", 1), ("rye", 2)])
    assert stating_items(graph) == {"flour": [1, 3], "rye": [2, 3]}
    restored = KnowledgeGraph()
    restored.restore(*graph.arrays())
    restored.add_phrases([("rye", 2), ("oats", 2), ("flour", 4), ("flour", 3)])
    assert stating_items(restored) == {"flour": [1, 3, 4], "rye": [2, 3], "oats": [2]}
    assert len(restored.arrays()[0]["phrase.a"]) == 6


def test_items_stating_facts_about_one_head_word_meet_through_a_phrase_node(chat_mem):
    k, index = chat_mem.knowledge, chat_mem.index
    stating = stating_items(k.graph)["agencies"]
    assert len(stating) == 2
    first, other = (index.slot_of[i] for i in stating)
    visits = _walk(chat_mem, "phrase", first)
    assert visits[other] > 0
    painted = next(i.id for i in chat_mem.source_items(chat_mem.sources()[0].id) if "painted" in i.text)
    assert visits[index.slot_of[painted]] == 0
    reached = k.graph_scores("adoption agencies", np.zeros(index.n_slots) + (np.arange(index.n_slots) == first),
                             _only("phrase")).reached
    assert {"node": "phrase:agencies", "kind": "phrase", "name": "agencies"} in [
        {key: r[key] for key in ("node", "kind", "name")} for r in reached if r["kind"] == "phrase"]


def test_a_phrase_stated_by_too_many_items_adds_no_edges(tmp_path):
    turns = "".join(f"Maya: I baked loaf number {n} with rye flour.\n" for n in range(PHRASE_MAX_ITEMS + 1))
    with ingested(tmp_path, "chat.txt", turns) as m:
        assert len(stating_items(m.knowledge.graph)["flour"]) == PHRASE_MAX_ITEMS + 1
        assert m.knowledge.graph.matrix("phrase", m.index).nnz == 0


def test_reload_builds_the_same_fact_and_phrase_edges_as_ingest(chat_mem, tmp_path):
    path = tmp_path / "gandhi.md"
    path.write_text(PASSAGES, encoding="utf-8")
    chat_mem.ingest(path)  # a second source: its statements are linked incrementally
    g = chat_mem.knowledge.graph
    before = {kind: g.matrix(kind, chat_mem.index).toarray() for kind in ("fact", "phrase")}
    phrases = stating_items(g)
    assert phrases["agencies"]
    chat_mem.knowledge.load()
    assert stating_items(g) == phrases
    for kind, matrix in before.items():
        np.testing.assert_array_equal(g.matrix(kind, chat_mem.index).toarray(), matrix)


def test_a_follower_takes_in_another_writers_entities_and_edges_as_a_fresh_open_reads_them(tmp_path):
    from mnemoscope.engine.records import Item, ParsedSource, Source

    store = tmp_path / "follow.db"
    with Memory(store) as writer, Memory(store) as follower:
        writer.add_note("Maya Lopez met Dan Okafor at the Portland harbour. Maya Lopez loves the Tagus river.", name="n1")
        follower.warm_up()
        k = follower.knowledge
        assert k.registry.kinds[k.registry.lookup("maya lopez")] == "name"
        turns = [Item(text=text, kind="turn", key=str(n), position=n, speaker=speaker) for n, (speaker, text) in
                 enumerate([("Maya Lopez", "I adopted a beagle called Biscuit in Lisbon."),
                            ("Dan Okafor", "Biscuit and the Lisbon harbour, lovely."),
                            ("Maya Lopez", "We walk along the Tagus river every morning.")])]
        writer.ingest_parsed([ParsedSource(Source(name="chat", kind="conversation", content_hash="c1"), turns)])
        assert follower.refresh()
        with Memory(store) as fresh:
            fresh.warm_up()
            a, b = follower.knowledge, fresh.knowledge
            assert a.registry.kinds == b.registry.kinds and a.registry.ids == b.registry.ids
            assert a.registry.gazetteer == b.registry.gazetteer and a.registry.by_word == b.registry.by_word
            assert a.registry.kinds[a.registry.lookup("maya lopez")] == "speaker"  # her kind grew stronger elsewhere
            assert a.registry.lookup("lisbon") is not None and a.registry.lookup("biscuit") is not None
            weights = a.edge_weights()
            ta, tb = a.graph.transition(weights, follower.index), b.graph.transition(weights, fresh.index)
            assert ta.nnz > 20 and (ta != tb).nnz == 0
