"""The topic transition model (engine/topics/markov.py): counts summed per move, a replaced
source's moves taken out again, the same probabilities after its changes are merged and after a
save and restore."""

import random
from collections import Counter

import numpy as np
import pytest

from mnemoscope.engine.topics.markov import TransitionModel


TOPICS = 40


def moves(rng: random.Random, n: int) -> list[tuple[int, int, int, float]]:
    """One source's moves: each (prev2, prev1, next) once, as the store holds them."""
    rows = {(rng.choice([-1, *range(TOPICS)]), rng.randrange(TOPICS), rng.randrange(TOPICS)): rng.choice([0.5, 1.0, 1.5])
            for _ in range(n)}
    return [(*key, weight) for key, weight in rows.items()]


def expected(totals: Counter, prev: int, current: int, candidates: list[int], smoothing: float) -> np.ndarray | None:
    """P(next | prev, current) over the candidates, from counts summed by hand."""
    counts = np.array([totals[(prev, current, c)] for c in candidates])
    return None if counts.sum() <= 0 else (counts + smoothing) / (counts.sum() + smoothing * len(candidates))


def test_counts_add_up_come_out_again_and_survive_a_merge_and_a_restore():
    rng = random.Random(5)
    sources = [moves(rng, 4000)] + [moves(rng, 80) for _ in range(60)]  # the small ones wait as changes, then merge
    model = TransitionModel(sources[0])
    for rows in sources[1:]:
        model.add(rows)
    for gone in (sources.pop(30), sources.pop(0)):
        model.remove(gone)
    totals = Counter()
    for rows in sources:
        totals.update({(p2, p1, n): w for p2, p1, n, w in rows})
    restored = TransitionModel.restore({k: a.copy() for k, a in model.arrays().items()})
    asked = [(rng.choice([-1, *range(TOPICS)]), rng.randrange(TOPICS), rng.sample(range(TOPICS), 8)) for _ in range(200)]
    assert asked
    known = 0
    for prev, current, candidates in asked:
        first = expected(totals, -1, current, candidates, 0.1)
        second = expected(totals, prev, current, candidates, 0.1) if prev >= 0 else None
        want = second if first is None else first if second is None else 0.6 * second + 0.4 * first
        for m in (model, restored):
            got = m.probabilities(prev, current, np.array(candidates), 0.6, 0.1)
            assert (got is None) == (want is None)
            assert got is None or np.allclose(got, want, rtol=0, atol=1e-12)
        known += want is not None
    assert known  # the moves were compared, not only found unknown on both sides


def test_a_move_taken_out_entirely_is_unknown_again():
    model = TransitionModel([(-1, 3, 4, 1.0), (-1, 3, 5, 0.5)])
    model.remove([(-1, 3, 4, 1.0), (-1, 3, 5, 0.5)])
    assert model.probabilities(-1, 3, np.array([4, 5]), 0.5, 0.1) is None
    assert len(model.arrays()["keys"]) == 0


@pytest.mark.parametrize("arrays", [{"keys": np.array([5, 3], dtype=np.int64), "weights": np.ones(2)},
                                    {"keys": np.array([3], dtype=np.int64), "weights": np.ones(2)},
                                    {"keys": np.array([-1], dtype=np.int64), "weights": np.ones(1)}])
def test_saved_counts_that_do_not_fit_are_refused(arrays):
    with pytest.raises(ValueError):
        TransitionModel.restore(arrays)


def test_a_read_while_changes_are_merged_sees_them_before_or_after_never_neither(monkeypatch):
    """A recall in another thread may read while an ingest's moves are merged into the arrays: it
    reads the model as it was (arrays and pending changes) or as it is, never the arrays without
    the changes that are on their way in."""
    from mnemoscope.engine.topics import markov

    rng = random.Random(7)
    model = TransitionModel(moves(rng, 4000))
    pending = [(-1, 1, c, 1.0) for c in range(TOPICS)]  # every move from topic 1, waiting as changes
    model.add(pending)
    candidates = np.arange(TOPICS)
    want = model.probabilities(-1, 1, candidates, 0.6, 0.1)
    seen = []
    merge = markov._merged

    def merging(*args):
        seen.append(model.probabilities(-1, 1, candidates, 0.6, 0.1))  # read half-way through the merge
        return merge(*args)

    monkeypatch.setattr(markov, "_merged", merging)
    model.arrays()  # merges what waits
    assert len(seen) == 1 and seen[0] is not None and np.array_equal(seen[0], want)
    assert np.array_equal(model.probabilities(-1, 1, candidates, 0.6, 0.1), want)


def test_moves_asked_before_the_counts_change_follow_the_change():
    """The moves kept per context after a question are those of the counts at that time: a
    source added or taken out later (merged at once, or waiting as changes) is seen next time."""
    rng = random.Random(9)
    first, merged_at_once, waiting = moves(rng, 3000), moves(rng, 3000), moves(rng, 60)
    model = TransitionModel(first)
    asked = [(rng.choice([-1, *range(TOPICS)]), rng.randrange(TOPICS), np.array(rng.sample(range(TOPICS), 8)))
             for _ in range(300)]
    assert asked

    def answers(m: TransitionModel) -> list[np.ndarray | None]:
        return [m.probabilities(prev, current, candidates, 0.6, 0.1) for prev, current, candidates in asked]

    answers(model)
    for change, now in ((lambda: model.add(merged_at_once), first + merged_at_once),
                        (lambda: model.add(waiting), first + merged_at_once + waiting),
                        (lambda: model.remove(merged_at_once), first + waiting)):
        change()
        fresh = TransitionModel(now)
        wanted = answers(fresh)
        assert any(want is not None for want in wanted)
        for got, want in zip(answers(model), wanted):
            assert (got is None) == (want is None)
            assert got is None or np.array_equal(got, want)
