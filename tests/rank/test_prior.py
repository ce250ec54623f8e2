"""The answer-likeness prior: zero before feedback, learns the shape of used items, is stored,
exported, reset, and forgets deleted items."""

import numpy as np
import scipy.sparse as sp

from mnemoscope.engine import Memory
from mnemoscope.engine.rank.prior import BUCKETS, STYLE, AnswerPrior, DescribedSlots, descriptors

QUERIES = ["sourdough starter", "border collie", "night shift at the hospital", "hiking trip", "birthday present",
           "moving to a new apartment", "learning to cook", "weekend plans", "bread", "dog"]


def shown(rec):
    return [h.item.id for h in rec.hits]


def prior_of(rec):
    return {h.item.id: h.features["answer_prior"] for h in rec.hits}


def teach_statements_over_questions(mem, rounds=3):
    """Feedback that always uses the shown hits that do not ask anything."""
    for _ in range(rounds):
        for q in QUERIES:
            rec = mem.recall(q, strategy="fused")
            used = [h.item.id for h in rec.hits if "?" not in h.item.text]
            mem.feedback(rec.token, used)


def test_descriptors_are_unit_rows_of_hashed_terms_and_style():
    terms = sp.csr_matrix(np.array([[1, 0, 2], [0, 0, 0]]), shape=(2, BUCKETS + 3))
    d = descriptors(terms, np.array([0.1, 0.99]), np.array([True, False]), np.array([False, True]), np.array([False, False]))
    x = d.dense()
    assert np.allclose(np.linalg.norm(x, axis=1), 1.0)
    assert set(np.flatnonzero(x[0])) == {0, 2, BUCKETS + 0, BUCKETS + STYLE.index("session_opening")}
    assert set(np.flatnonzero(x[1])) == {BUCKETS + STYLE.index("length_7"), BUCKETS + STYLE.index("question")}
    w = np.arange(x.shape[1], dtype=float)
    assert np.allclose(d.dot(w), x @ w)


def test_slots_described_in_earlier_recalls_are_not_described_again_and_read_back_the_same():
    rng = np.random.default_rng(3)
    n = 40
    terms = sp.random(n, 300, density=0.05, format="csr", random_state=4)
    flags = [rng.random(n) < 0.3 for _ in range(3)]
    length = rng.random(n)

    def described(slots):
        return descriptors(terms[slots], length[slots], flags[0][slots], flags[1][slots], flags[2][slots])

    memo = DescribedSlots.empty((n,), n)
    asked = []
    for slots in (np.array([3, 7, 1, 20]), np.array([7, 2, 3, 39, 0]), np.array([39, 20, 1])):
        new = memo.missing(slots)
        asked += new.tolist()
        memo.add(new, described(new))
        kept, fresh = memo.of(slots), described(slots)
        assert np.array_equal(kept.dense(), fresh.dense())
        w = rng.normal(size=fresh.dense().shape[1])
        assert np.array_equal(kept.dot(w), fresh.dot(w))
    assert sorted(asked) == [0, 1, 2, 3, 7, 20, 39]  # each slot described once


def test_the_prior_learns_which_kind_of_row_is_used_and_leaves_the_original_alone():
    terms = sp.csr_matrix((4, BUCKETS))
    d = descriptors(terms, np.full(4, 0.3), np.zeros(4, bool), np.array([True, False, True, False]), np.zeros(4, bool))
    start = AnswerPrior()
    learned = start
    for _ in range(20):
        learned = learned.updated(d, np.array([False, True, False, True]))
    assert not start.trained and np.all(start.score(d) == 0)
    s = learned.score(d)
    assert s[1] > s[0] and s[3] > s[2]


def test_untaught_store_has_a_zero_prior_everywhere(mem):
    rec = mem.recall("sourdough starter", strategy="fused")
    assert all(v == 0 for v in prior_of(rec).values())


def test_feedback_teaches_the_prior_for_queries_nobody_asked(mem):
    teach_statements_over_questions(mem)
    assert mem.ranker.prior.trained
    rec = mem.recall("what did the vet say about the puppy", top_k=30, strategy="fused")
    asks = [h.features["answer_prior"] for h in rec.hits if "?" in h.item.text]
    tells = [h.features["answer_prior"] for h in rec.hits if "?" not in h.item.text]
    assert asks and tells and np.mean(tells) > np.mean(asks)


def test_the_prior_survives_reopening_is_exported_and_reset(mem):
    teach_statements_over_questions(mem, rounds=1)
    weights = mem.ranker.prior.weights.copy()
    exported = mem.ranker.export()["answer_prior"]
    assert exported["style"]["question"] == weights[BUCKETS + STYLE.index("question")] < 0
    assert exported["term_buckets"]
    path = mem.path
    mem.close()
    with Memory(path, fused_signals="") as again:
        assert np.array_equal(again.ranker.prior.weights, weights)
        again.ranker.reset()
        assert not again.ranker.prior.trained
        assert all(v == 0 for v in prior_of(again.recall("sourdough starter", strategy="fused")).values())


def test_deleting_items_retrains_the_prior_without_them(mem):
    rec = mem.recall("sourdough starter", strategy="fused")
    mem.feedback(rec.token, shown(rec)[:2])
    assert mem.ranker.prior.trained
    for item_id in shown(rec):
        mem.delete_item(item_id)
    assert not mem.ranker.prior.trained  # every row it learned from is gone
    path = mem.path
    mem.close()
    with Memory(path, fused_signals="") as again:
        assert not again.ranker.prior.trained
