"""A configured endpoint that answers wrongly: its answers are untrusted data. Vectors that are not
vectors (empty, NaN, infinite, of another length than the store's) are refused in one line and
stored nowhere; an answer that never ends, or ends gigabytes later, is cut off."""

from __future__ import annotations

import math

import pytest

from tests.support.openai_server import OpenAIServer, hashed_vector

from .conftest import cli, store_checksum

TEXT = "# Harbour\nThe harbour lanterns are lit at dusk.\n\n# Ferry\nThe ferry leaves at dawn.\n"


@pytest.fixture
def endpoint_env(openai_server: OpenAIServer, monkeypatch) -> OpenAIServer:
    for name, value in {"EMBEDDER": "openai", "EMBED_BASE_URL": openai_server.base_url, "EMBED_MODEL": "e",
                        "MAX_RETRIES": "0", "REQUEST_TIMEOUT": "5"}.items():
        monkeypatch.setenv(f"MNEMOSCOPE_{name}", value)
    return openai_server


@pytest.mark.parametrize("vectors, says", [
    (lambda texts: [hashed_vector(t, 16 if n == 0 else 8) for n, t in enumerate(texts)], "of 16 and 8 numbers"),
    (lambda texts: [[math.nan] * 16 for _ in texts], "not a finite number"),
    (lambda texts: [[1e300] * 16 for _ in texts], "not a finite number"),
    (lambda texts: [[] for _ in texts], "an empty vector"),
], ids=["two-lengths", "nan", "overflow", "empty"])
def test_vectors_that_are_not_vectors_are_one_line_and_stored_nowhere(tmp_path, endpoint_env, vectors, says):
    endpoint_env.on_embeddings = vectors
    (tmp_path / "a.md").write_text(TEXT)
    store = tmp_path / "m.db"
    assert cli("--store", store, "stats")[0] == 0
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", tmp_path / "a.md")
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert "embedding endpoint" in err and says in err, err
    assert store_checksum(store) == before


def test_vectors_of_another_length_than_the_stores_are_refused_at_ingest_and_recall(tmp_path, endpoint_env):
    (tmp_path / "a.md").write_text(TEXT)
    (tmp_path / "b.md").write_text("# Quay\nThe quay is swept at noon.\n")
    store = tmp_path / "m.db"
    assert cli("--store", store, "ingest", tmp_path / "a.md")[0] == 0
    endpoint_env.on_embeddings = lambda texts: [hashed_vector(t, 8) for t in texts]  # the model behind it changed
    before = store_checksum(store)
    code, out, err = cli("--store", store, "ingest", tmp_path / "b.md")
    assert code == 2 and err.count("\n") == 1 and "vectors of 8 numbers where this store's have 16" in err, err
    assert store_checksum(store) == before
    code, out, err = cli("--store", store, "recall", "quay swept", "--strategy", "hybrid")
    assert code == 2 and err.count("\n") == 1 and "vectors of 8 numbers where this store's have 16" in err, err
