"""The OpenAI-compatible embedder against a real loopback server: batches, cache, retries, timeouts."""

import io
import math
import sqlite3
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine import Memory
from mnemoscope.engine.dense import EmbeddingUnavailable
from tests.support.openai_server import Fail, Garbage, Slow

GUIDE = Path(__file__).resolve().parents[2] / "assets" / "demo" / "sourdough-baking.md"


def openai_memory(path, server, **settings):
    options = dict(embedder="openai", embed_base_url=server.base_url, embed_model="toy", embed_batch_size=8,
                   request_timeout=5.0, max_retries=0)
    return Memory(path, extensions=False, **{**options, **settings})


def embedding_inputs(server):
    return [body["input"] for path, body in server.requests if path.endswith("/embeddings")]


def test_ingest_embeds_in_batches_and_recall_uses_the_vectors(tmp_path, openai_server):
    mem = openai_memory(tmp_path / "o.db", openai_server)
    report = mem.ingest(GUIDE)
    n = report.items
    batches = embedding_inputs(openai_server)
    assert [len(b) for b in batches] == [8] * (n // 8) + ([n % 8] if n % 8 else [])
    assert len(batches) == math.ceil(n / 8)
    with sqlite3.connect(mem.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM item_vectors WHERE signature = 'openai:toy'").fetchone()[0] == n
    text = mem.source_items(report.sources[0].source_id)[3].search_text()
    hits = mem.recall(text, strategy="dense", top_k=1).hits  # equal text, equal vector: itself first
    assert hits[0].item.search_text() == text
    mem.close()


def test_the_same_text_is_never_paid_for_twice(tmp_path, openai_server, checksum):
    mem = openai_memory(tmp_path / "o.db", openai_server)
    mem.ingest(GUIDE)
    paid = openai_server.count("embeddings")
    mem.reindex()  # every item embedded again: all from the cache
    mem.delete_source(mem.sources()[0].id)
    mem.ingest(GUIDE)  # the same texts come back
    assert openai_server.count("embeddings") == paid
    before = checksum(mem.path)
    mem.recall("how warm should the starter be", strategy="dense")
    assert openai_server.count("embeddings") == paid + 1  # the query, which is not stored …
    assert checksum(mem.path) == before  # … because recall writes nothing
    mem.close()


def test_a_server_error_is_retried(tmp_path, openai_server):
    openai_server.push("embeddings", Fail(500))
    mem = openai_memory(tmp_path / "o.db", openai_server, max_retries=2)
    report = mem.ingest(GUIDE)
    assert openai_server.count("embeddings") == math.ceil(report.items / 8) + 1
    assert report.sources[0].status == "added"
    mem.close()


@pytest.mark.parametrize("step,message", [(Slow(2.0), "timed out"), (Garbage(), "embedding endpoint"),
                                          (Fail(500), "embedding endpoint failed")])
def test_an_endpoint_that_fails_writes_nothing(tmp_path, openai_server, checksum, step, message):
    mem = openai_memory(tmp_path / "o.db", openai_server, request_timeout=0.5)
    before = checksum(mem.path)
    openai_server.push("embeddings", step)
    with pytest.raises(EmbeddingUnavailable, match=message):
        mem.ingest(GUIDE)
    assert checksum(mem.path) == before
    assert mem.stats().items == 0 and not mem.index.vocab
    mem.close()


def test_the_cli_reports_an_unreachable_endpoint_in_one_line(tmp_path, openai_server, monkeypatch, capsys):
    monkeypatch.setenv("MNEMOSCOPE_EMBEDDER", "openai")
    monkeypatch.setenv("MNEMOSCOPE_EMBED_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("MNEMOSCOPE_EMBED_MODEL", "toy")
    monkeypatch.setenv("MNEMOSCOPE_MAX_RETRIES", "0")
    openai_server.push("embeddings", Fail(503))
    code = main(["--store", str(tmp_path / "c.db"), "ingest", str(GUIDE)], io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "embedding endpoint failed" in err


def test_vectors_paid_for_survive_an_ingest_that_fails(tmp_path, openai_server):
    from mnemoscope.engine.records import Item, ParsedSource, Source

    mem = openai_memory(tmp_path / "o.db", openai_server)
    items = [Item(text=f"turn number {n} about rye flour", kind="turn", key="same") for n in range(3)]
    broken = ParsedSource(Source(name="chat", kind="conversation", content_hash="h1"), items)
    with pytest.raises(sqlite3.IntegrityError):  # duplicate keys: the source's transaction fails
        mem.ingest_parsed([broken])
    assert mem.sources() == []
    paid = openai_server.count("embeddings")
    assert paid >= 1
    for n, item in enumerate(items):
        item.key = str(n)
    mem.ingest_parsed([ParsedSource(Source(name="chat", kind="conversation", content_hash="h1"), items)])
    assert openai_server.count("embeddings") == paid  # the cache kept what the failed ingest paid for
    mem.close()
