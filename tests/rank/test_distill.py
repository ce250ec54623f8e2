"""Distillation: the local embedding is fitted to teacher vectors and swapped in only if it helps."""

import numpy as np
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.rank import FeedbackError
from mnemoscope.engine.rank.distill import DistillError


def learnable_teachers(mem, dim: int = 32, seed: int = 0) -> dict[int, np.ndarray]:
    """Teacher vectors whose geometry the local embedding can learn but does not have: a fixed
    linear map of the latent vectors that stresses a few directions (as a semantic model stresses
    topics), plus noise."""
    rng = np.random.default_rng(seed)
    index = mem.index
    slots = np.flatnonzero(index.alive)
    latent = index.lsa_vectors.rows(slots)
    stress = np.ones(latent.shape[1])
    stress[:8] = 6.0
    vectors = (latent * stress) @ rng.normal(size=(latent.shape[1], dim)) + rng.normal(0, 0.05, (len(slots), dim))
    return {int(index.item_ids[s]): v for s, v in zip(slots, vectors)}


def test_distill_swaps_in_only_when_held_out_geometry_improves(mem):
    with pytest.raises(DistillError, match="at least 24"):
        mem.ranker.distill()
    mem.ranker.set_teacher_vectors(learnable_teachers(mem), model="test-teacher")
    before = mem.recall("sourdough starter", strategy="dense").hits
    report = mem.ranker.distill()
    assert report.swapped and report.after > report.before + 0.01
    assert report.reembedded == mem.index.n_items
    after = mem.recall("sourdough starter", strategy="dense").hits
    assert [h.score for h in after] != [h.score for h in before]
    again = mem.ranker.distill()  # the same teachers cannot improve on themselves
    assert not again.swapped
    path = mem.path
    mem.close()
    with Memory(path, fused_signals="") as reopened:
        assert reopened.ranker.distilled is not None
        assert [h.item.id for h in reopened.recall("sourdough starter", strategy="dense").hits] == [h.item.id for h in after]


def test_noise_teachers_are_refused_and_nothing_changes(mem):
    rng = np.random.default_rng(3)
    ids = list(mem.index.slot_of)
    mem.ranker.set_teacher_vectors({i: rng.normal(size=8) for i in ids}, model="noise")
    report = mem.ranker.distill()
    assert not report.swapped and mem.ranker.distilled is None
    assert mem.store.get_kv("rank.distilled_projection") is None


def test_teacher_vectors_are_checked(mem):
    with pytest.raises(FeedbackError, match="no item"):
        mem.ranker.set_teacher_vectors({10**9: np.ones(4)}, model="x")
    a, b = list(mem.index.slot_of)[:2]
    with pytest.raises(FeedbackError, match="one dimension"):
        mem.ranker.set_teacher_vectors({a: np.ones(4), b: np.ones(5)}, model="x")
