"""Typed edges and PPR: our sparse power iteration against networkx's pagerank."""

import networkx as nx
import numpy as np
import pytest

from mnemoscope.engine.arrays import Rows
from mnemoscope.engine.index import Index, ItemColumns
from mnemoscope.engine.knowledge import graph as graph_module
from mnemoscope.engine.knowledge.graph import KnowledgeGraph
from mnemoscope.engine.pagerank import personalized_pagerank
from mnemoscope.engine.lexical import BM25Params
from mnemoscope.engine.records import Item


def small_index(n_items: int) -> Index:
    index = Index(BM25Params())
    items = [Item(text="", id=i + 1, source_id=1, position=i) for i in range(n_items)]
    index.add(ItemColumns.of(items), no_terms(n_items))
    return index


def no_terms(n_items: int) -> Rows:
    rows = Rows()
    rows.extend([(np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))] * n_items)
    return rows


@pytest.fixture
def graph():
    rng = np.random.default_rng(3)
    g = KnowledgeGraph()
    g.add_entities([101, 102, 103, 104])
    items = rng.integers(1, 31, size=60)
    entities = -rng.integers(101, 105, size=60)
    g.add_edges("mention", items, entities)
    g.add_edges("next", np.arange(1, 30), np.arange(2, 31), 0.5)
    g.add_edges("fact", [-101, -102], [-103, -104], 2.0)
    return g, small_index(30)


def test_ppr_matches_networkx(graph):
    g, index = graph
    weights = {"mention": 1.0, "next": 1.0, "fact": 1.0}
    transition = g.transition(weights, index)
    seeds = np.zeros(g.n_nodes(index))
    seeds[[0, 31]] = [0.7, 0.3]
    ours = personalized_pagerank(transition, seeds, alpha=0.8, iterations=200, tol=1e-10)
    mix = sum(g.matrix(k, index) * w for k, w in weights.items())
    reference = nx.pagerank(nx.from_scipy_sparse_array(mix), alpha=0.8, personalization={0: 0.7, 31: 0.3},
                            weight="weight", tol=1e-12, max_iter=1000)
    expected = np.array([reference[n] for n in range(len(seeds))])
    assert np.allclose(ours, expected, atol=1e-5)
    assert ours.sum() == pytest.approx(1.0, abs=1e-4)


def test_edge_types_can_be_walked_alone(graph):
    g, index = graph
    seeds = np.zeros(g.n_nodes(index))
    seeds[0] = 1.0
    chain = personalized_pagerank(g.transition({"next": 1.0}, index), seeds)
    assert chain[1] > chain[2] > chain[3] > 0  # along the sequence only
    assert chain[30:].sum() == 0  # no entity is reached without mention edges


def test_deleted_items_drop_out_of_the_graph(graph):
    g, index = graph
    index.remove([2])
    seeds = np.zeros(g.n_nodes(index))
    seeds[0] = 1.0
    scores = personalized_pagerank(g.transition({"next": 1.0}, index), seeds)
    assert scores[1] == 0 and scores[2] == 0


def test_unknown_edge_type_is_refused():
    with pytest.raises(ValueError, match="unknown edge type"):
        KnowledgeGraph().add_edges("telepathy", [1], [2])


def test_ppr_under_one_edge_type_alone(tmp_path):
    from mnemoscope.engine import Memory
    from mnemoscope.engine.knowledge.graph import EDGE_TYPES

    with Memory(tmp_path / "f.db") as mem:
        mem.add_note("Maya adopted Biscuit, a beagle from the Portland shelter.", name="n1")
        mem.add_note("Biscuit loves the Portland dog park.", name="n2")
        first = mem.index.bm25.scores(*mem.index.query_terms("beagle"))
        only = {kind: {t: float(t == kind) for t in EDGE_TYPES} for kind in ("mention", "episode")}
        reached = {kind: mem.knowledge.graph_scores("Where does Biscuit play?", first, w).item_scores
                   for kind, w in only.items()}
        assert len(reached["mention"]) == mem.index.n_slots
        assert reached["mention"][1] > 0  # n2 is reached from n1 through Biscuit / Portland
        assert reached["episode"][1] == 0  # two notes share no episode


def test_local_push_approximates_the_power_iteration(graph):
    from mnemoscope.engine.pagerank import local_push

    g, index = graph
    weights = {"mention": 1.0, "next": 1.0, "fact": 1.0}
    seeds = np.zeros(g.n_nodes(index))
    seeds[[0, 31]] = [0.7, 0.3]
    exact = personalized_pagerank(g.transition(weights, index), seeds, alpha=0.8, iterations=200, tol=1e-10)
    approx, reached = local_push(g.forward(weights, index), np.array([0, 31]), np.array([0.7, 0.3]), alpha=0.8, eps=1e-6)
    assert np.all(approx <= exact + 1e-6) and np.allclose(approx, exact, atol=1e-3)
    assert list(np.argsort(-approx)[:5]) == list(np.argsort(-exact)[:5])
    assert np.array_equal(reached, np.flatnonzero(approx))


def test_large_graphs_switch_to_local_push(tmp_path):
    from mnemoscope.engine import Memory

    with Memory(tmp_path / "p.db", ppr_local_above=0) as mem:
        mem.add_note("Maya adopted Biscuit, a beagle from the Portland shelter.", name="n1")
        mem.add_note("Biscuit loves the Portland dog park.", name="n2")
        hits = mem.recall("Maya beagle", strategy="ppr").hits
        assert [h.item.text[:4] for h in hits] == ["Maya", "Bisc"]


WALK = {"mention": 1.0, "next": 0.3, "episode": 0.3, "fact": 0.5, "phrase": 0.5}


def _grown_graph(index: Index, steps: list[int], look: dict[str, float] | None) -> KnowledgeGraph:
    """Items 1..30 arrive in ``steps`` (entities and edges with them, some before their item or
    entity is known); with ``look``, the walk matrices of those weights are built after every step."""
    rng = np.random.default_rng(7)
    g, first = KnowledgeGraph(), 1
    for n, upto in enumerate(steps):
        items = np.arange(first, upto + 1)
        g.add_entities([100 + n, 200 + n])
        g.add_edges("mention", rng.choice(items, 8), -rng.choice([100 + n, 200 + n, 300], 8))  # 300 comes last
        g.add_edges("next", items[:-1], items[1:], 0.5)
        g.add_edges("episode", items[:3], np.full(3, upto + 1))  # the next step's first item
        g.add_edges("fact", [-(100 + n)], [-(200 + n)], 2.0)
        g.add_phrases([("agencies", int(i)) for i in items[:2]] + [("flour", int(items[-1]))])
        index.add(ItemColumns.of([Item(text="", id=int(i), source_id=1, position=int(i)) for i in items]), no_terms(len(items)))
        first = upto + 1
        if look:
            g.transition(look, index)
    g.add_entities([300])
    return g


@pytest.mark.parametrize("look", [{"mention": 1.0}, WALK], ids=["other-weights", "same-weights"])
def test_a_graph_grown_step_by_step_equals_one_built_at_once(look):
    """Looked at as it grows (with other weights or the same), each type's entries are merged as
    they come and the walk's matrices made again from them."""
    weights = WALK
    grown_index, whole_index = small_index(0), small_index(0)
    grown = _grown_graph(grown_index, [4, 9, 17, 30], look=look)
    whole = _grown_graph(whole_index, [4, 9, 17, 30], look=None)
    grown_index.remove([5])
    whole_index.remove([5])
    assert grown.n_nodes(grown_index) == 30 + 9 + 2
    a, b = grown.transition(weights, grown_index), whole.transition(weights, whole_index)
    assert a.nnz > 100 and a.nnz == b.nnz
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices) and np.array_equal(a.data, b.data)
    assert np.array_equal(grown.forward(weights, grown_index).data, whole.forward(weights, whole_index).data)
    assert np.array_equal(grown.degrees(grown_index, weights), whole.degrees(whole_index, weights))
    assert a[:, 4].nnz == 0 and a[4].nnz == 0  # the deleted item
    entity_300 = 30 + grown.entity_node(300)
    assert a[:, entity_300].nnz > 0  # its mentions waited for it


def test_the_walks_matrices_summed_a_few_entries_at_a_time_equal_those_summed_at_once(monkeypatch):
    """The types' entries are summed and compacted a range of keys at a time: ranges of two keys
    of each type give the very matrices one range gives."""
    index = small_index(0)
    g = _grown_graph(index, [4, 9, 17, 30], look=None)
    index.remove([5])
    whole = g.transition(WALK, index)
    g.changed()
    monkeypatch.setattr(graph_module, "MIX_BLOCK", 2)
    ranged = g.transition(WALK, index)
    assert whole.nnz > 100 and whole is not ranged
    for part in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(whole, part), getattr(ranged, part))


def test_ppr_ranks_by_the_blend_of_bm25_and_pagerank_over_every_slot(tmp_path):
    """The blend is computed only where BM25 or PageRank is not 0; it ranks as the blend over
    every slot does."""
    from mnemoscope.engine import Memory

    with Memory(tmp_path / "b.db") as mem:
        for n, text in enumerate(["Maya adopted Biscuit, a beagle from the Portland shelter.",
                                  "Biscuit loves the Portland dog park.", "Dan sails on the Tagus river.",
                                  "Maya and Dan met at the harbour.", "The shelter runs a beagle adoption day."]):
            mem.add_note(text, name=f"n{n}")
        query = "Where does Maya's beagle play?"
        hits = mem.recall(query, strategy="ppr", top_k=5).hits
        index, k = mem.index, mem.knowledge
        first = index.bm25.scores(*index.query_terms(query, related=False))
        walk = k.graph_scores(query, first).item_scores
        blend = mem.settings.ppr_blend
        combined = blend * first / first.max() + (1 - blend) * walk / walk.max()
        order = [int(s) for s in np.lexsort((np.arange(len(combined)), -combined)) if combined[s] > 0][:5]
        assert hits and [h.item.id for h in hits] == [int(index.item_ids[s]) for s in order]
        assert [h.score for h in hits] == pytest.approx([combined[s] for s in order])


def test_an_entity_named_twice_seeds_the_walk_as_once(tmp_path):
    """Two names of one entity in a query seed it once, with the whole entity share of the mass
    beside the items' share (not half of it)."""
    from mnemoscope.engine import Memory

    with Memory(tmp_path / "s.db") as mem:
        mem.add_note("Maya adopted Biscuit, a beagle from the Portland shelter.", name="n1")
        mem.add_note("Biscuit loves the Portland dog park.", name="n2")
        k = mem.knowledge
        query = "Where does Biscuit play?"
        first = mem.index.bm25.scores(*mem.index.query_terms(query, related=False))
        (biscuit,) = k.query_entities("Biscuit")
        once, twice = k.seeds([biscuit], first, k.edge_weights()), k.seeds([biscuit, biscuit], first, k.edge_weights())
        assert np.array_equal(twice.nodes, once.nodes) and np.allclose(twice.mass, once.mass)
        on_entities = twice.nodes >= mem.index.n_slots
        assert on_entities.any() and twice.mass[on_entities].sum() == pytest.approx(mem.settings.ppr_entity_mass)
        assert np.array_equal(k.graph_scores(query, first, entities=[biscuit, biscuit]).item_scores,
                              k.graph_scores(query, first, entities=[biscuit]).item_scores)


@pytest.mark.parametrize("iterations", [1, 3])
def test_the_graph_walk_takes_the_configured_number_of_steps(tmp_path, iterations):
    """``ppr_iterations`` is how many power steps the knowledge graph's PageRank takes."""
    from mnemoscope.engine import Memory

    with Memory(tmp_path / "i.db", ppr_iterations=iterations) as mem:
        mem.add_note("Maya adopted Biscuit, a beagle from the Portland shelter.", name="n1")
        mem.add_note("Biscuit loves the Portland dog park.", name="n2")
        mem.add_note("Dan sails on the Tagus river with Maya.", name="n3")
        k, index = mem.knowledge, mem.index
        query = "Where does Maya's beagle play?"
        first = index.bm25.scores(*index.query_terms(query, related=False))
        seeds = k.seeds(k.query_entities(query), first, k.edge_weights())
        n = k.graph.n_nodes(index)
        want = personalized_pagerank(k.graph.transition(k.edge_weights(), index), seeds.dense(n),
                                     alpha=mem.settings.ppr_alpha, iterations=iterations)[: index.n_slots]
        other = personalized_pagerank(k.graph.transition(k.edge_weights(), index), seeds.dense(n),
                                      alpha=mem.settings.ppr_alpha, iterations=iterations + 1)[: index.n_slots]
        got = k.graph_scores(query, first).item_scores
        assert not np.allclose(want, other) and np.allclose(got, want, rtol=0, atol=1e-7)


def test_a_walk_with_every_edge_type_weighted_0_has_no_edges(graph):
    g, index = graph
    assert g.transition({"mention": 0.0, "next": 0.0}, index).nnz == 0
    assert not g.degrees(index, {"mention": 0.0}).any()


def test_a_day_of_the_week_in_a_question_is_when_not_whom(tmp_path):
    """"What does Femi do on Wednesdays?" asks about Femi: the day is no entity of the question,
    even in a store whose older extraction made one of it (a tag here)."""
    from mnemoscope.engine import Memory

    with Memory(tmp_path / "w.db") as mem:
        mem.add_note("Every week, Femi swims at the lido on Wednesdays.", name="n1", tags=["Wednesdays"])
        k = mem.knowledge
        assert k.registry.lookup("wednesdays") is not None  # the tag's entity is there to be found
        (femi,) = k.query_entities("Femi")
        assert k.query_entities("What does Femi do on Wednesdays?") == [femi]
        assert k.query_entities("Who swims on a Wednesday?") == []


def test_a_matrix_is_its_own_transpose_with_every_entry_kept_and_each_rows_columns_ascending(graph):
    """Edges given either way round, repeated, or of weight 0 (still a neighbour): each type's
    matrix holds every entry once on each side of the diagonal, with the same value."""
    g, index = graph
    g.add_edges("coaccess", [1, 3, 2, 2, 4], [2, 1, 3, 1, 4], [0.1, 0.0, 0.7, 0.25, 1.0])  # 4–4: a self-loop
    m = g.matrix("coaccess", index)
    assert m.has_sorted_indices and m.nnz == 6
    assert m[0, 1] == m[1, 0] == np.float32(0.1) + np.float32(0.25)
    assert m[0, 2] == m[2, 0] == 0 and m[1, 2] == m[2, 1] == np.float32(0.7)
    for part in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(m, part), getattr(m.T.tocsr(), part))
    mix = g.transition({"mention": 1.0, "next": 1.0, "fact": 1.0, "coaccess": 1.0}, index)
    assert mix.has_sorted_indices and (abs(mix) > 0).nnz > 100
