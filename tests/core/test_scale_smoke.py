"""The scale code paths on a store of 4,000 synthetic items (made as the 1M benchmark makes its
corpus, from the demo conversation's turns; `mnemoscope bench --items 1000000` is the benchmark,
this is its smoke test): the ingest saves the index beside the store once the store is large
enough (``save_index_above``, set here to the store's size: the paths are the same as at the
default's 20,000, for a fifth of the ingest), a fresh open reads it instead of the rows, and answers
exactly as a store rebuilt from its rows; a saved index of quantized vectors takes appends and
deletions like a built one."""

import shutil
from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.eval.bench import synthetic_questions, synthetic_sources
from mnemoscope.engine.vectors import VectorIndex

ITEMS = 4_000
SAVED = {"save_index_above": ITEMS}  # the store is saved once it holds them all
# The demo conversation (LoCoMo's format, with questions) ships with the project, so the smoke test
# runs wherever the suite does; the benchmark's data in ../shared/data need not be there.
TURNS = Path(__file__).resolve().parents[2] / "assets" / "demo" / "conversation.json"
STRATEGIES = ("bm25", "dense", "hybrid")


def ranked(mem: Memory, questions: list[str]) -> dict:
    return {(s, q): [(h.item.id, round(h.score, 6)) for h in mem.recall(q, strategy=s).hits]
            for s in STRATEGIES for q in questions}


@pytest.mark.slow  # a 4k-item store: one of the suite's longest tests
def test_a_4k_store_saves_its_index_and_opens_from_it_with_the_same_answers(tmp_path: Path):
    store, sidecar = tmp_path / "s.db", tmp_path / "s.db-index"
    sources = list(synthetic_sources(ITEMS, TURNS))
    with Memory(store, extensions=False, **SAVED) as mem:
        mem.ingest_parsed(sources[: len(sources) // 2])
        assert not sidecar.exists()  # below save_index_above: opening reads the rows, as ever
        mem.ingest_parsed(sources[len(sources) // 2:])
        assert mem.index.n_items == ITEMS and sidecar.exists()
    questions = synthetic_questions(TURNS)[:8]
    with Memory(store, extensions=False, **SAVED) as mem:
        assert mem.index_from_file
        from_file = ranked(mem, questions)
        slots = np.arange(0, ITEMS, 97)  # past 50k rows, these rows re-score a scan's best exactly
        index = mem.index
        assert np.allclose(index.lsa.transform_rows(*index.bm25.docs.gather(slots)),
                           index.lsa.transform(index.counts_matrix(slots)), atol=1e-6)
    rebuilt_copy = tmp_path / "rebuilt" / "s.db"
    rebuilt_copy.parent.mkdir()
    shutil.copy(store, rebuilt_copy)
    with Memory(rebuilt_copy, extensions=False, save_index_above=10**9) as mem:
        assert not mem.index_from_file
        assert ranked(mem, questions) == from_file
    assert all(from_file.values())


def test_saved_quantized_vectors_take_appends_and_deletions_like_built_ones():
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((300, 16)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    built = VectorIndex(quantize_above=100)
    built.set(np.arange(200), rows[:200])
    assert built.quantized
    restored = VectorIndex.restore({k: v.copy() for k, v in built.arrays().items()}, quantize_above=100)
    for index in (built, restored):
        index.set(np.arange(200, 300), rows[200:])
        index.remove(np.array([5, 250]))
    query = rows[7]
    assert np.array_equal(built.scores(query), restored.scores(query))
    assert np.argmax(restored.scores(query)) == 7 and restored.scores(query)[[5, 250]].tolist() == [0.0, 0.0]


def test_inverted_lists_find_what_the_exact_scan_finds_and_survive_a_save():
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((40, 24)).astype(np.float32)
    rows = centres[rng.integers(0, 40, 6000)] + 0.35 * rng.standard_normal((6000, 24)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    exact = VectorIndex(quantize_above=10**9)
    listed = VectorIndex(quantize_above=1000, lists_above=4000)
    for index in (exact, listed):
        index.set(np.arange(5000), rows[:5000])
    assert listed.make_lists() and listed.lists is not None and listed.quantized
    listed.set(np.arange(5000, 6000), rows[5000:])  # later rows join the nearest lists
    exact.set(np.arange(5000, 6000), rows[5000:])
    queries = rows[rng.integers(0, 6000, 50)] + 0.2 * rng.standard_normal((50, 24)).astype(np.float32)
    found = [len(set(np.argsort(-exact.scores(q))[:10]) & set(np.argsort(-listed.scores(q))[:10])) for q in queries]
    assert sum(found) / (10 * len(queries)) >= 0.9
    restored = VectorIndex.restore({k: v.copy() for k, v in listed.arrays().items()}, quantize_above=1000, lists_above=4000)
    assert restored.lists is not None
    assert all(np.array_equal(restored.scores(q), listed.scores(q)) for q in queries[:5])
