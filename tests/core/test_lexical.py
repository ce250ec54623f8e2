"""BM25: the same numbers as rank_bm25, and incremental updates equal to a fresh build."""

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from mnemoscope.engine.lexical import FLOOR_SAMPLE, MANY_VALUES, BM25Index, BM25Params, top_k


def random_corpus(seed: int, n_docs: int, vocab: int = 60) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, vocab + 1)  # Zipf-like, so some terms are in most documents
    weights /= weights.sum()
    return [list(rng.choice(vocab, size=rng.integers(1, 30), p=weights)) for _ in range(n_docs)]


def build(docs: list[list[int]], params: BM25Params, slots=None) -> BM25Index:
    index = BM25Index(params)
    add(index, docs, range(len(docs)) if slots is None else slots)
    return index


def add(index: BM25Index, docs, slots) -> None:
    rows = [np.unique(np.asarray(d), return_counts=True) for d in docs]
    index.add(list(slots), [t for t, _ in rows], [c.astype(np.float32) for _, c in rows])


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("k1,b", [(1.5, 0.75), (1.2, 0.3), (2.0, 1.0)])
def test_scores_equal_rank_bm25_okapi(seed, k1, b):
    docs = random_corpus(seed, 40 + 15 * seed)
    ours = build(docs, BM25Params(k1=k1, b=b, idf="okapi", epsilon=0.25))
    reference = BM25Okapi([[str(t) for t in d] for d in docs], k1=k1, b=b, epsilon=0.25)
    rng = np.random.default_rng(100 + seed)
    for _ in range(10):
        query = np.unique(rng.integers(0, 60, size=rng.integers(1, 6)))
        expected = reference.get_scores([str(t) for t in query])
        assert np.allclose(ours.scores(query), expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("counts", [[1, 2, 3, 1], [1, 70_000, 3, 1], [1, 2.5, 3, 1]],
                         ids=["short whole lengths", "a length past two bytes", "a fractional count"])
def test_scores_are_the_formula_whatever_the_documents_lengths(counts):
    index = BM25Index(BM25Params(k1=1.2, b=0.75))
    index.add_flat(np.arange(4), np.ones(4, dtype=np.int64), np.array([0, 0, 1, 0]), np.array(counts, dtype=np.float32))
    tf = np.array(counts, dtype=np.float64) * [1, 1, 0, 1]
    lengths = np.array(counts, dtype=np.float64)
    idf = np.log1p((4 - 3 + 0.5) / (3 + 0.5))
    expected = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * lengths / lengths.mean()))
    assert np.allclose(index.scores(np.array([0])), expected, atol=0, rtol=1e-12)


def test_postings_naming_a_slot_past_the_index_are_an_error_not_a_clipped_slot():
    index = build(random_corpus(6, 50), BM25Params())
    arrays, counters = index.arrays()
    damaged = dict(arrays, **{"main.indices": arrays["main.indices"].copy()})
    damaged["main.indices"][-1] = 50  # one past the last slot
    restored = BM25Index(BM25Params())
    restored.restore(damaged, counters)
    with pytest.raises(IndexError, match="slot 50"):
        restored.scores(np.arange(60))


def test_lucene_idf_is_never_negative():
    docs = [[0, 1], [0, 2], [0, 3]]  # term 0 is in every document
    index = build(docs, BM25Params())
    assert (index.scores(np.array([0])) > 0).all()


def test_repeated_query_terms_weigh_more():
    index = build(random_corpus(5, 30), BM25Params())
    once = index.scores(np.array([3]), np.array([1.0]))
    twice = index.scores(np.array([3]), np.array([1.0 + np.log(2)]))
    assert np.allclose(twice, once * (1.0 + np.log(2)))


@pytest.mark.parametrize("seed", [0, 1])
def test_incremental_add_and_delete_equal_a_fresh_build(seed):
    rng = np.random.default_rng(seed)
    docs = random_corpus(seed, 300)
    live = build(docs[:50], BM25Params())
    for start in range(50, 300, 25):  # many small batches: delta segments and folds
        add(live, docs[start:start + 25], range(start, start + 25))
    deleted = rng.choice(300, size=120, replace=False)
    live.remove(deleted)
    keep = np.setdiff1d(np.arange(300), deleted)
    fresh = build([docs[i] for i in keep], BM25Params(), slots=keep)
    for _ in range(20):
        query = np.unique(rng.integers(0, 60, size=4))
        assert np.allclose(live.scores(query), fresh.scores(query), atol=1e-9)
    assert live.n_docs == len(keep)
    assert (live.scores(np.arange(60))[deleted] == 0).all()


@pytest.mark.parametrize("counts", [(1.0, 2.0, 3.0), (1.0, 2.0, 300.0), (1.0, 2.5, 3.0)],
                         ids=["few pairs", "a count of hundreds", "a fractional count"])
def test_a_common_terms_coded_postings_score_each_posting_by_the_formula(counts):
    """A term in over a thousand documents is scored once per distinct (count, length) and
    gathered by code: the same numbers as the formula computed for each posting."""
    rng = np.random.default_rng(11)
    n = 1300
    tf = rng.choice(np.array(counts, dtype=np.float32), size=n)
    rest = rng.integers(1, 40, size=n) - (tf % 1)  # the document's other term: whole lengths that vary
    index = BM25Index(BM25Params(k1=1.2, b=0.75))
    index.add_flat(np.arange(n), np.full(n, 2), np.column_stack([np.zeros(n, dtype=np.int64), np.ones(n, dtype=np.int64)]).ravel(),
                   np.column_stack([tf, rest.astype(np.float32)]).ravel())
    tf = tf.astype(np.float64)
    lengths = tf + rest
    weight = np.log1p(0.5 / (n + 0.5)) * 0.5
    expected = weight * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * np.arange(int(lengths.max()) + 1) / lengths.mean())[lengths.astype(int)])
    for _ in range(2):  # the codes made, then kept
        assert np.array_equal(index.scores(np.array([0]), np.array([0.5])), expected)


def test_a_query_of_common_and_rare_terms_scores_as_one_computed_per_posting(monkeypatch):
    """Coded terms and terms scored per posting in one query each fill their own postings' place
    (the other tests compare coded indexes with coded ones, or a single term): the same bits as
    an index that codes no term."""
    from mnemoscope.engine import lexical

    rng = np.random.default_rng(3)
    docs = [[0] + list(rng.integers(1, 40, size=rng.integers(0, 30))) + [41] * int(rng.integers(0, 3)) for _ in range(3000)]
    query, weights = np.array([3, 0, 41, 5, 7]), np.array([1.0, 0.7, 1.3, 0.2, 1.1])
    coded = build(docs, BM25Params()).scores(query, weights)
    monkeypatch.setattr(lexical, "LONG_POSTINGS", len(docs) + 1)
    assert np.array_equal(coded, build(docs, BM25Params()).scores(query, weights))


def test_a_common_terms_kept_codes_give_a_fresh_builds_scores_as_documents_grow_longer():
    """A term in over a thousand documents keeps its postings' codes between queries; a longer
    document (lengths past one byte) and deleted ones leave the scores those of a fresh build."""
    rng = np.random.default_rng(7)
    docs = [[0] + list(rng.integers(1, 40, size=rng.integers(0, 30))) for _ in range(1500)]  # term 0 in every one
    live = build(docs, BM25Params())
    query = np.array([0, 3, 5])
    first = live.scores(query)
    assert np.array_equal(live.scores(query), first)
    longer = [0] + list(range(1, 40)) * 8  # 313 tokens
    add(live, [longer], [1500])
    live.remove([4, 900])
    keep = [i for i in range(1501) if i not in (4, 900)]
    fresh = build([(docs + [longer])[i] for i in keep], BM25Params(), slots=keep)
    assert np.array_equal(live.scores(query), fresh.scores(query))
    assert not np.array_equal(live.scores(query)[:1500], first)  # the average length moved: every norm did


def test_slots_are_never_reused():
    index = build([[1, 2]], BM25Params())
    with pytest.raises(ValueError):
        add(index, [[3]], [0])


def test_unknown_terms_and_empty_index_score_zero():
    assert BM25Index().scores(np.array([1, 2])).sum() == 0
    index = build([[1, 2]], BM25Params())
    assert index.scores(np.array([99])).sum() == 0


def test_top_k_orders_by_score_then_slot_and_drops_zeros():
    slots, scores = top_k(np.array([0.0, 2.0, 1.0, 2.0, 0.5]), 3)
    assert slots.tolist() == [1, 3, 2]
    assert scores.tolist() == [2.0, 2.0, 1.0]
    assert top_k(np.zeros(4), 2)[0].size == 0


def test_top_k_among_a_support_gives_what_a_pass_over_every_score_gives():
    rng = np.random.default_rng(3)
    for _ in range(50):
        scores = np.zeros(500)
        support = np.sort(rng.choice(500, 120, replace=False))
        scores[support] = rng.integers(-2, 4, len(support)) / 2  # ties, zeros and negatives inside the support
        for k in (1, 10, 60, 200):
            full, among = top_k(scores, k), top_k(scores, k, among=support)
            assert full[0].tolist() == among[0].tolist() and full[1].tolist() == among[1].tolist()


def test_a_signals_narrower_top_after_a_wider_one_is_the_top_a_pass_finds():
    from mnemoscope.engine.pipeline import Query, Signals

    rng = np.random.default_rng(5)
    for _ in range(50):
        scores = rng.integers(0, 8, 400) / 2  # zeros and many ties
        q = Query("q", np.zeros(0, dtype=np.int64), np.zeros(0), 10, "fused")
        signals = Signals(q, {"s": lambda _q, _s: scores})
        assert signals.top("s", 120).tolist() == top_k(scores, 120)[0].tolist()
        for k in (1, 5, 10, 37, 120, 200):
            assert signals.top("s", k).tolist() == top_k(scores, k)[0].tolist()


def test_top_k_of_many_scores_breaks_ties_at_the_kth_place_by_slot():
    rng = np.random.default_rng(8)
    for trial in range(12):
        scores = np.zeros(300_000)
        filled = rng.choice(len(scores), int(len(scores) * (0.5 if trial % 2 else 0.9)), replace=False)
        scores[filled] = rng.integers(1, 40, len(filled)) / 7 if trial % 3 == 0 else rng.random(len(filled))  # ties, or none
        positive = np.flatnonzero(scores > 0)
        assert len(positive) > MANY_VALUES  # many: read above a sampled floor
        ordered = positive[np.lexsort((positive, -scores[positive]))]
        for k in (1, 10, 100, 300):
            assert top_k(scores, k)[0].tolist() == ordered[:k].tolist()


def test_top_k_of_many_scores_with_a_floor_too_high_still_breaks_ties_by_slot():
    scores = np.full(140_000, 1.0)  # every slot tied …
    step = len(scores) // FLOOR_SAMPLE
    high = 4 * (300 * len(scores[::step]) // len(scores) + 1)  # (the sampled values above the floor)
    sampled = np.arange(0, len(scores), step)[:high]
    scores[sampled] = 5.0  # … but those of the floor's sample that set it above every other value
    top = top_k(scores, 300)[0].tolist()
    assert top[:high] == sampled.tolist()
    assert top[high:] == [slot for slot in range(300) if slot not in set(sampled.tolist())][: 300 - high]


def test_top_k_of_up_to_many_values_is_one_partition_of_them():
    rng = np.random.default_rng(9)
    scores = rng.integers(1, 30, MANY_VALUES) / 7.0  # every one positive, many tied at the k-th
    positive = np.argpartition(-scores, 99)[:100]
    assert top_k(scores, 100)[0].tolist() == positive[np.lexsort((positive, -scores[positive]))].tolist()
