"""An external embedder's fusion weight, measured on the store's own items (engine/calibration.py)."""

from pathlib import Path

from mnemoscope.engine import Memory
from mnemoscope.engine.calibration import GRID
from mnemoscope.engine.dense import HashEmbedder
from mnemoscope.engine.query import english_lexicon
from mnemoscope.engine.text import lexical_tokens

CONVERSATION = Path(__file__).resolve().parents[2] / "assets" / "demo" / "conversation.json"
GUIDE = CONVERSATION.parent / "sourdough-baking.md"


def embedding_memory(path, server, **settings):
    return Memory(path, extensions=False, embedder="openai", embed_base_url=server.base_url, embed_model="toy",
                  embed_batch_size=64, request_timeout=5.0, max_retries=0, **settings)


def knowing_related_words(texts):
    """A toy embedder with some meaning: each word hashed together with its related words, so a
    reworded question lands near the words it means."""
    lexicon, hashed = english_lexicon(), HashEmbedder(256)
    said = [" ".join(t + " " + " ".join(r for r, _ in lexicon.related(t)[:4]) for t in lexical_tokens(x)) for x in texts]
    return hashed.embed(said).tolist()


def test_an_embedder_that_knows_nothing_earns_no_weight(tmp_path, openai_server):
    with embedding_memory(tmp_path / "r.db", openai_server) as mem:  # the loopback server's vectors are random
        mem.ingest(CONVERSATION)
        stats = mem.stats()
        assert stats.dense_calibration is not None and stats.dense_calibration.signature == "openai:toy"
        assert set(stats.dense_calibration.mrr) == {f"{w:.1f}" for w in GRID}
        assert stats.dense_weight == mem.dense_weight() == 0.0


def test_an_embedder_that_carries_meaning_earns_its_weight_and_keeps_it(tmp_path, openai_server):
    openai_server.on_embeddings = knowing_related_words
    with embedding_memory(tmp_path / "h.db", openai_server) as mem, \
            embedding_memory(tmp_path / "h.db", openai_server) as follower:  # open before anything was measured
        mem.ingest(CONVERSATION)
        earned = mem.dense_weight()
        assert follower.refresh() and follower.dense_weight() == earned  # the activity log tells it
        curve = mem.stats().dense_calibration.mrr
        assert earned > 0.0 and curve[f"{earned:.1f}"] > curve["0.0"]
        asked = openai_server.count("embeddings")
        mem.ingest(GUIDE)  # grown by less than half: not measured again
        assert openai_server.count("embeddings") == asked + 1  # the guide's own texts, one batch
    with embedding_memory(tmp_path / "h.db", openai_server) as reopened:
        assert reopened.dense_weight() == earned
    with embedding_memory(tmp_path / "h.db", openai_server, dense_calibrate=False, dense_weight=0.25) as fixed:
        assert fixed.dense_weight() == 0.25


def test_a_small_store_keeps_the_setting(tmp_path, openai_server):
    with embedding_memory(tmp_path / "s.db", openai_server) as mem:
        mem.ingest(GUIDE)
        assert mem.stats().dense_calibration is None and mem.dense_weight() == 0.1
