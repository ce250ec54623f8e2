"""Bounded memory: what one huge source costs grows with the source, not with copies of it."""

from __future__ import annotations

import tracemalloc

import numpy as np

from mnemoscope.engine import dense
from mnemoscope.engine.dense import HashEmbedder


def test_hashing_many_texts_holds_a_chunk_of_temporaries_not_all_of_them(monkeypatch):
    """The knowledge area hashes every fact draft of a source at once (one per turn of a
    conversation): the vectors are the same as one text at a time, and the memory beyond them is
    a chunk's (before: the token arrays and float64 rows of every text)."""
    monkeypatch.setattr(dense, "EMBED_CHUNK", 1000, raising=False)
    texts = [f"Maya adopted a dog named Pepper number {n} in April, said Dan at the harbour" for n in range(12_000)]
    embedder = HashEmbedder(256)
    tracemalloc.start()
    try:
        vectors = embedder.embed(texts)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert vectors.shape == (12_000, 256) and vectors.dtype == np.float32
    assert peak < 3 * vectors.nbytes, (peak, vectors.nbytes)  # (before: 8.5 times)
    alone = HashEmbedder(256)
    assert all(np.array_equal(alone.embed([texts[n]])[0], vectors[n]) for n in (0, 999, 1000, 11_999))
