"""The word space grows with the store: new items are placed by the store's word model, never the
whole space made again per write or per followed commit (engine/wordvec.py)."""

import tracemalloc
from pathlib import Path

import numpy as np

from mnemoscope.engine import Memory, wordvec
from mnemoscope.engine.index import WORDS_KEY
from mnemoscope.engine.lazy import sparse as sp
from mnemoscope.engine.records import Item, ParsedSource, Source
from mnemoscope.engine.wordvec import WordModel, WordSpace, english_vectors, fit

FIRST = [f"{who} {what} on {day}." for who, day in (("Maya", "Monday"), ("Leo", "Friday"))
         for what in ("baked sourdough bread with a slow starter", "went running by the river",
                      "planted tomatoes and basil in the garden", "played the violin after dinner",
                      "read a novel about a lighthouse keeper", "fixed the bicycle's flat tyre",
                      "visited her sister in the city", "cooked a spicy lentil soup",
                      "watched the football final with friends", "painted the kitchen a pale green",
                      "booked a train to the mountains", "adopted a grey kitten from the shelter",
                      "learned three chords on the guitar", "swam forty lengths at the pool",
                      "wrote a letter to an old teacher", "bought winter boots in the sale",
                      "cleaned out the garage at last", "tried a new ramen place downtown",
                      "walked the dog along the beach", "finished a jigsaw of a harbour")]
LATER = ["We paddled a kayak across the glacier lake.", "The orchestra rehearsed a symphony by candlelight.",
         "Maya baked bread again on Sunday.", "Leo's telescope showed the rings of Saturn."]


def _source(name: str, texts: list[str]) -> ParsedSource:
    items = [Item(text=t, kind="turn", key=f"{name}:{n}", position=n, speaker="Maya") for n, t in enumerate(texts)]
    return ParsedSource(Source(name=name, kind="conversation", content_hash=name), items)


def _rows(mem: Memory) -> tuple[np.ndarray, np.ndarray]:
    """The live slots and their rows in the word space, as the memory holds them now."""
    live = np.flatnonzero(mem.index.alive)
    return live, mem.index.word_vectors.rows(live)


def _placed_at_once(mem: Memory, blob: bytes) -> np.ndarray:
    """Every live item placed in one go by the stored model ``blob``."""
    live = np.flatnonzero(mem.index.alive)
    return WordSpace(WordModel.from_bytes(blob), english_vectors()).place(mem.index.counts_matrix(live), mem.index.vocab)


def test_a_word_space_grown_in_steps_equals_one_placed_at_once_by_the_same_model(tmp_path: Path):
    with Memory(tmp_path / "w.db", extensions=False) as mem:
        mem.ingest_parsed([_source("first", FIRST)])
        fitted = mem.store.get_kv(WORDS_KEY)
        assert fitted is not None
        _rows(mem)
        for text in LATER:  # words the fit never saw ("kayak", "glacier", "telescope")
            mem.add_note(text)
            _rows(mem)  # placed after each write
        mem.delete_item(int(mem.index.item_ids[0]))
        assert mem.store.get_kv(WORDS_KEY) == fitted  # grown by less than half: no refit
        live, grown = _rows(mem)
        assert len(live) == len(FIRST) + len(LATER) - 1
        assert np.array_equal(grown, _placed_at_once(mem, fitted))
        assert np.all(np.linalg.norm(grown, axis=1) > 0.99)
        assert not mem.index.word_vectors.rows(np.array([0])).any()  # the deleted item's row is masked
        _, rebuilt = fit(mem.index.counts_matrix, mem.index.n_slots, mem.index.bm25.document_frequencies(len(mem.index.vocab)),
                         mem.index.alive, mem.index.vocab, english_vectors())
        assert not np.allclose(grown, rebuilt[live], atol=1e-4)  # a whole rebuild per write would differ


def test_a_follower_places_another_writers_items_as_a_fresh_open_does(tmp_path: Path):
    path = tmp_path / "w.db"
    with Memory(path, extensions=False) as writer, Memory(path, extensions=False) as follower:
        writer.ingest_parsed([_source("first", FIRST)])
        follower.refresh()
        _rows(follower)
        for text in LATER:
            writer.add_note(text)
        assert follower.refresh()
        first_model = writer.store.get_kv(WORDS_KEY)
        with Memory(path, extensions=False) as fresh:
            assert np.array_equal(_rows(follower)[1], _rows(fresh)[1])
            assert np.array_equal(_rows(follower)[1], _placed_at_once(follower, first_model))
        writer.ingest_parsed([_source("second", [t.replace("Maya", "Ada") for t in FIRST])])  # grown by half: a refit
        assert writer.store.get_kv(WORDS_KEY) != first_model
        assert follower.refresh()
        with Memory(path, extensions=False) as fresh:
            assert np.array_equal(_rows(follower)[1], _rows(fresh)[1])
            assert np.array_equal(_rows(writer)[1], _rows(fresh)[1])


def test_a_store_without_a_stored_model_fits_one_for_each_state(tmp_path: Path):
    with Memory(tmp_path / "w.db", extensions=False) as mem:
        mem.ingest_parsed([_source("few", FIRST[:5])])  # too few items for the models to be fitted and kept
        assert mem.store.get_kv(WORDS_KEY) is None
        before = _rows(mem)[1]
        mem.add_note(LATER[0])
        _, now = _rows(mem)
        live = np.flatnonzero(mem.index.alive)
        _, at_once = fit(mem.index.counts_matrix, mem.index.n_slots, mem.index.bm25.document_frequencies(len(mem.index.vocab)),
                         mem.index.alive, mem.index.vocab, english_vectors())
        assert np.array_equal(now, at_once[live])
        assert not np.array_equal(now[: len(before)], before)  # the idf moved with the new item


def test_a_texts_word_vector_comes_with_the_model_that_made_it_when_a_refit_lands_meanwhile(tmp_path: Path, monkeypatch):
    """A refit in another thread (a follower reading another writer's model) between a question's
    vector and the read of the model must not pair the vector with the new model: before, the
    model was read again after the vector, outside the lock."""
    with Memory(tmp_path / "w.db", extensions=False) as mem:
        mem.ingest_parsed([_source("first", FIRST)])
        first = mem.store.get_kv(WORDS_KEY)
        mem.ingest_parsed([_source("second", [t.replace("Maya", "Ada") for t in FIRST])])  # grown by half: a refit
        second = mem.store.get_kv(WORDS_KEY)
        assert second != first
        mem.index.load_words(first)
        made_by = []
        query = WordModel.query

        def query_then_refit(model, text, vocab, vectors):
            made_by.append(model.signature)
            vector = query(model, text, vocab, vectors)
            mem.index.load_words(second)  # the refit lands while this vector is made
            return vector

        monkeypatch.setattr(WordModel, "query", query_then_refit)
        _, model = mem.index.word_text("who baked sourdough bread")
        assert made_by == [WordModel.from_bytes(first).signature]
        assert model.signature == made_by[0]


def test_a_texts_word_vector_places_no_item(tmp_path: Path, monkeypatch):
    with Memory(tmp_path / "w.db", extensions=False) as mem:
        mem.ingest_parsed([_source("first", FIRST)])
    placed = []
    place = WordSpace.place
    monkeypatch.setattr(WordSpace, "place", lambda space, counts, vocab: placed.append(counts.shape[0]) or place(space, counts, vocab))
    with Memory(tmp_path / "w.db", extensions=False) as mem:  # opened: the stored model, no item placed yet
        vector, _ = mem.index.word_text("who baked sourdough bread")
        assert vector is not None and placed == []
        mem.index.word_query("who baked sourdough bread")
        assert placed == [len(FIRST)]  # a search of the items places them, once


def _fit_of(mem: Memory) -> tuple[WordSpace, np.ndarray]:
    """The word model fitted on ``mem``'s live items, and every row placed by it."""
    index = mem.index
    return fit(index.counts_matrix, index.n_slots, index.bm25.document_frequencies(len(index.vocab)), index.alive,
               index.vocab, english_vectors())


def test_the_removed_common_direction_is_the_first_singular_vector_of_the_live_items_weighted_rows(tmp_path: Path):
    with Memory(tmp_path / "w.db", extensions=False) as mem:
        mem.ingest_parsed([_source("first", FIRST + LATER)])
        mem.delete_item(int(mem.index.item_ids[3]))  # a dead row is no part of the direction
        space, _ = _fit_of(mem)
        live = np.flatnonzero(mem.index.alive)
        terms = [None] * len(mem.index.vocab)
        for term, tid in mem.index.vocab.items():
            terms[tid] = term
        word_rows = english_vectors().table(terms) * space.model.idf_of(np.arange(len(terms)))[:, None]
        weighted = mem.index.counts_matrix(live) @ word_rows
    first = np.linalg.svd(weighted.astype(np.float64), full_matrices=False)[2][0]
    common = space.model.common
    assert np.linalg.norm(common) > 0.99
    assert abs(float(common @ first)) > 1 - 1e-6  # the same direction; its sign is never read
    assert float(common @ weighted.sum(axis=0)) > 0  # the sign along the rows: one model per set of rows


def test_a_fit_holds_no_copy_of_the_rows_beside_the_rows_it_returns(monkeypatch):
    """The common direction came from an SVD of every live row, which copies them to float64 and
    makes a factor as large: at 300k items the ingest's peak. It is summed a block at a time now."""
    vectors = english_vectors()
    terms = list(vectors.row)[:2_000]
    vocab = {t: n for n, t in enumerate(terms)}
    rng = np.random.default_rng(0)
    n_rows, per_row = 40_000, 8
    counts = sp.csr_matrix((np.ones(n_rows * per_row, np.float32), rng.integers(0, len(terms), n_rows * per_row),
                            np.arange(0, n_rows * per_row + 1, per_row)), shape=(n_rows, len(terms)))
    df = np.bincount(counts.indices, minlength=len(terms)).astype(np.float64)
    alive = np.ones(n_rows, dtype=bool)
    alive[::7] = False
    monkeypatch.setattr(wordvec, "FIT_BLOCK", 1_000)
    tracemalloc.start()
    try:
        _, rows = fit(lambda at: counts[at], n_rows, df, alive, vocab, vectors)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rows.shape == (n_rows, vectors.dim) and rows[alive].any()
    assert peak - rows.nbytes < rows.nbytes / 2
