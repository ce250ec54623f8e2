"""The fused strategy: candidates, features, the heuristic floor, read-only recall with tokens."""

import numpy as np
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.rank import features as feats
from mnemoscope.engine.rank.heuristic import weights_for


def test_fused_ranks_by_the_heuristic_before_any_feedback(mem):
    rec = mem.recall("the border collie from the animal rescue", strategy="fused")
    assert rec.hits, "the demo conversation mentions the puppy"
    names = tuple(mem.ranker.names)
    scores = [sum(h.features[n] * w for n, w in zip(names, weights_for(names))) for h in rec.hits]
    assert scores == sorted(scores, reverse=True)
    assert all(h.features["trust"] == 0 and h.features["feedback_match"] == 0 for h in rec.hits)


def test_recall_is_read_only_and_issues_a_token_each_time(mem):
    first = mem.recall("sourdough class at Crumb and Co", strategy="fused")
    second = mem.recall("sourdough class at Crumb and Co", strategy="fused")
    assert [h.item.id for h in first.hits] == [h.item.id for h in second.hits]
    assert [h.score for h in first.hits] == [h.score for h in second.hits]
    assert first.token and second.token and first.token != second.token
    assert mem.ranker.status().events == 0


def test_a_store_of_three_notes_ranks_with_no_dense_score(tmp_path):
    """Three one-line notes give no positive dense score to scale by: every feature is still read
    at the candidates' neighbours (an agent's first memories, over MCP, are such a store)."""
    with Memory(tmp_path / "tiny.db") as tiny:
        for name, text in (("a", "My beagle is called Biscuit."), ("b", "He loves the park."),
                           ("c", "We walk every morning.")):
            tiny.add_note(text, name=name)
        hits = tiny.recall("what is the name of the beagle", strategy="fused", top_k=3).hits
    assert hits and hits[0].item.text == "My beagle is called Biscuit."


def test_every_strategy_gets_a_token(mem):
    assert mem.recall("sourdough bread", strategy="bm25").token


def test_neighbours_stay_in_the_same_source_and_session(mem):
    index = mem.index
    slots = np.arange(index.n_slots)
    nb = feats.neighbours(mem, mem.ranker.meta, slots, reach=1)
    for s, row in zip(slots.tolist(), nb.tolist()):
        for n in row:
            if n >= 0:
                assert index.source_ids[n] == index.source_ids[s]
                assert abs(index.positions[n] - index.positions[s]) == 1
                assert index.times[n] == index.times[s] or (np.isnan(index.times[n]) and np.isnan(index.times[s]))


def test_normaliser_does_not_amplify_a_near_constant_feature():
    norm = feats.Normaliser(2)
    rng = np.random.default_rng(0)
    rows = np.column_stack([0.06 + rng.normal(0, 1e-4, 500), rng.uniform(0, 1, 500)])
    norm.update(rows)
    a, b = norm(np.array([0.062, 0.5])), norm(np.array([0.058, 0.5]))
    assert abs(a[0] - b[0]) <= 0.004 / feats.SPREAD_FLOOR + 1e-9  # the reference made this ±8σ
    assert abs(a[1] - b[1]) == 0


def test_recency_follows_the_live_items_as_the_store_changes(mem):
    """The recency feature places an item between the oldest and newest live items: a later item
    added, or the newest removed, moves every other item's recency."""
    from mnemoscope.engine.records import Item, ParsedSource, Source

    def recency(question: str) -> dict[int, float]:
        return {h.item.id: h.features["recency"] for h in mem.recall(question, strategy="fused").hits}

    def expected(item_ids: list[int]) -> list[float]:
        index = mem.index
        live = index.times[index.alive]
        oldest, newest = np.nanmin(live), np.nanmax(live)
        return [float((index.times[index.slot_of[i]] - oldest) / (newest - oldest)) for i in item_ids]

    question = "sourdough class at Crumb and Co"
    before = recency(question)
    assert before and list(before.values()) == pytest.approx(expected(list(before)))
    later = Item(text="A note about the weather, much later.", kind="turn", key="later", position=0,
                 speaker="Sam", timestamp="2031-01-01T10:00:00")
    mem.ingest_parsed([ParsedSource(Source(name="later", kind="conversation", content_hash="later"), [later])])
    grown = recency(question)
    shared = sorted(before.keys() & grown.keys())
    assert shared and [grown[i] for i in shared] == pytest.approx(expected(shared))
    dated = [i for i in shared if before[i] > 0]
    assert dated and all(grown[i] < before[i] for i in dated)
    mem.delete_item(int(mem.index.item_ids[int(np.nanargmax(np.where(mem.index.alive, mem.index.times, np.nan)))]))
    shrunk = recency(question)
    kept = [i for i in shared if i in shrunk]
    assert kept and [shrunk[i] for i in kept] == pytest.approx(expected(kept))
    assert [shrunk[i] for i in kept] == pytest.approx([before[i] for i in kept])
