"""The model, the gate, a single repeated query, the random control, a corrupt state."""

import numpy as np

from mnemoscope.engine.rank.gate import GateParams, is_held_out, query_key, referee, wilson_lower
from mnemoscope.engine.rank.mlp import PairwiseMLP
from tests.rank.conftest import reopened_after


def test_pairwise_sgd_learns_a_separable_preference():
    rng = np.random.default_rng(1)
    model = PairwiseMLP(3, np.zeros(3), np.zeros(3, dtype=bool), np.zeros(3), seed=3)
    better = rng.uniform(0, 1, (200, 3))
    worse = better.copy()
    worse[:, 2] -= 0.5  # only the third feature tells them apart
    losses = [model.train(better[i:i + 20], worse[i:i + 20], rng, better, worse) for i in range(0, 200, 20)]
    assert losses[-1] < losses[0]
    assert np.mean(model.score(better) > model.score(worse)) > 0.95


def test_held_out_split_is_by_query_and_stable():
    queries = [f"question number {n} about topic {n * 7}" for n in range(400)]
    picks = [is_held_out(query_key(q), 4) for q in queries]
    assert 0.15 < np.mean(picks) < 0.35
    assert picks == [is_held_out(query_key(q.upper() + "  "), 4) for q in queries]  # case and spacing do not matter


def test_referee_needs_confidence_spread_over_queries_and_falls_back():
    params = GateParams()
    spread = np.arange(40) % 8  # 40 pairs from 8 held-out queries
    assert referee(np.ones(5), -np.ones(5), params, spread[:5]).lam == 0  # too few discordant pairs
    opened = referee(np.ones(40), -np.ones(40), params, spread)
    assert opened.lam > 0 and opened.lower_bound == wilson_lower(40, 40, params.z) and opened.reasons[0].startswith("open")
    one_query = referee(np.ones(40), -np.ones(40), params, np.zeros(40, dtype=np.int64))
    assert one_query.lam == 0 and any("held-out query" in r for r in one_query.reasons)
    mixed = referee(np.r_[np.ones(20), -np.ones(20)], np.r_[-np.ones(20), np.ones(20)], params, spread)
    assert mixed.lam == 0 and any("needs 60%" in r for r in mixed.reasons)  # half the pairs is no reason to trust it
    lucky = referee(np.r_[np.ones(30), -np.ones(10)], np.r_[-np.ones(30), np.ones(10)], params,
                    np.r_[np.zeros(28, dtype=np.int64), np.arange(1, 13) % 6 + 1])
    assert lucky.lam == 0  # most wins come from one query: the permutation check or the bound refuses


def test_a_single_repeated_query_lifts_the_used_item_at_once_without_the_gate(mem):
    query = "what does Maya bake"
    first = [h.item.id for h in mem.recall(query, strategy="fused").hits]
    target = first[6]
    ranks = []
    for _ in range(3):
        rec = mem.recall(query, strategy="fused")
        ids = [h.item.id for h in rec.hits]
        ranks.append(ids.index(target) + 1)
        mem.feedback(rec.token, [target])
    assert ranks == [7, 1, 1] and mem.ranker.lam == 0


def test_random_feedback_does_not_open_the_gate(mem):
    rng = np.random.default_rng(5)
    queries = ["sourdough starter", "border collie", "night shift at the hospital", "hiking trip", "birthday present",
               "moving to a new apartment", "learning to cook", "weekend plans"]
    unrelated = "oven temperature for the loaf"
    before = [h.item.id for h in mem.recall(unrelated, strategy="fused").hits]
    for n in range(60):
        rec = mem.recall(queries[n % len(queries)], strategy="fused")
        ids = [h.item.id for h in rec.hits]
        mem.feedback(rec.token, list(rng.choice(ids, size=2, replace=False)))
    assert mem.ranker.lam == 0 and mem.ranker.status().gate.reasons
    after = mem.recall(unrelated, strategy="fused").hits
    # what the question finds itself keeps its place: another question's marks (here "learning to
    # cook", whose shown hits it shares half of in this small store) bring items into view at most,
    # together above the last hits shown (marks._View.capped's room), never above the first eight
    assert [h.item.id for h in after[:8]] == before[:8]
    taught = [h for h in after if h.taught]
    assert all(h.taught.into_view for h in taught)
    own = [h.item.id for h in after if not h.taught]
    assert own == before[:len(own)]  # its own hits in their order, the last pushed out of view


def test_a_list_the_feedback_memory_moved_teaches_the_marks_but_gives_the_model_no_pairs(mem):
    """A hit shown because of its marks is one whose learned features (uses, trust) carry them:
    in its pairs the heuristic looks wrong and the model right whoever marks it, and random
    feedback opened the gate that way. Such a list still teaches the feedback memory."""
    first = mem.recall("sourdough bread class", strategy="fused")
    own = mem.feedback(first.token, [first.hits[3].item.id])
    assert own.pairs_trained + own.pairs_held_out == 9  # the ranker's own list: one used, nine ignored
    again = mem.recall("sourdough bread class", strategy="fused")
    assert again.hits[0].taught and again.hits[0].item.id == first.hits[3].item.id
    moved = mem.feedback(again.token, [again.hits[1].item.id])
    assert moved.pairs_trained == moved.pairs_held_out == 0
    assert mem.ranker.status().marks == 2


def test_corrupt_ranker_state_is_reported_and_reset_without_touching_records(mem):
    for _ in range(3):
        rec = mem.recall("sourdough bread class", strategy="fused")
        mem.feedback(rec.token, [rec.hits[2].item.id])
    items = mem.store.counts()["items"]
    heuristic = mem.recall("sourdough bread class", strategy="fused")
    with reopened_after(mem, "UPDATE ranker_state SET blob = X'00112233'") as again:
        status = again.ranker.status()
        assert status.state.startswith("reset") and "corrupt" in status.state
        assert status.lam == 0
        assert again.store.counts()["items"] == items
        assert [h.item.id for h in again.recall("sourdough bread class", strategy="fused").hits][:3] == \
            [h.item.id for h in heuristic.hits][:3] or status.lam == 0
        rec = again.recall("marathon training plan", strategy="fused")  # a list the feedback memory left alone
        assert not any(h.taught for h in rec.hits)
        again.feedback(rec.token, [rec.hits[0].item.id])  # learning resumes and rewrites a good state
        assert again.ranker.status().state != status.state


def test_reset_forgets_learning_but_keeps_records(mem):
    rec = mem.recall("sourdough bread class", strategy="fused")
    mem.feedback(rec.token, [rec.hits[1].item.id, rec.hits[2].item.id])
    items = mem.store.counts()["items"]
    mem.ranker.reset()
    status = mem.ranker.status()
    assert (status.events, status.coaccess_edges, status.trusted_items, status.state) == (0, 0, 0, "heuristic")
    assert mem.store.counts()["items"] == items
