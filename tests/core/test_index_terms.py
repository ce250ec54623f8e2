"""Hybrid scores its candidates again exactly in two spaces (the latent and the word vectors), each
from the items' terms: the terms of the same candidates are read once (engine/index.py)."""

from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory, index as index_module
from mnemoscope.engine.arrays import Rows
from mnemoscope.engine.eval.bench import synthetic_sources

TURNS = Path(__file__).resolve().parents[2] / "assets" / "demo" / "conversation.json"


@pytest.fixture(scope="module")
def mem(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    with Memory(tmp_path_factory.mktemp("terms") / "s.db", extensions=False) as mem:
        mem.ingest_parsed(list(synthetic_sources(300, TURNS)))
        yield mem


def counting_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of rows of each read of the items' terms from now on."""
    reads: list[int] = []
    gather = Rows.gather

    def counted(self: Rows, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        reads.append(len(rows))
        return gather(self, rows)

    monkeypatch.setattr(Rows, "gather", counted)
    return reads


def test_the_same_candidates_terms_are_read_once_for_their_latent_and_word_rows(mem: Memory, monkeypatch):
    index = mem.index
    index.lsa_vectors, index.word_vectors  # every item placed in both spaces first
    candidates, others = np.arange(0, index.n_slots, 7), np.arange(3, index.n_slots, 11)
    expected_latent = index.lsa.transform_rows(*index.bm25.docs.gather(candidates))
    expected_words = index.word_vectors.exact(candidates)
    index.lsa_vectors.exact(others)  # another read in between: the candidates' terms are read again
    reads = counting_reads(monkeypatch)
    latent, words = index.lsa_vectors.exact(candidates), index.word_vectors.exact(candidates)
    assert reads == [len(candidates)]
    assert np.array_equal(latent, expected_latent) and np.array_equal(words, expected_words)
    index.word_vectors.exact(others)
    assert reads == [len(candidates), len(others)]


def test_a_large_read_is_not_kept(mem: Memory, monkeypatch):
    monkeypatch.setattr(index_module, "KEPT_TERMS_OF", 10)  # a fit's or a placement's blocks are larger
    slots = np.arange(0, mem.index.n_slots, 5)
    latent, words = mem.index.lsa_vectors, mem.index.word_vectors  # every item placed in both spaces first
    reads = counting_reads(monkeypatch)
    latent.exact(slots)
    words.exact(slots)
    assert reads == [len(slots), len(slots)]
