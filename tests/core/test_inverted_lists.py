"""The inverted lists of the dense spaces (engine/vectors.py, engine/ivf.py) are made out of the
recall path: the recall that first finds a space grown past the threshold scans every row, and
the lists are made in a thread of its own (or at an ingest's end, a warm-up, a save), while
rows keep coming."""

import math
import sys
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory, index, vectors
from mnemoscope.engine.ivf import InvertedLists
from mnemoscope.engine.lexical import BM25Params
from mnemoscope.engine.vectors import VectorIndex
from tests.support.stores import DEMO_DIR

QUERY = "how hot is the oven for the loaf"
LIST_SETTINGS = {"extensions": False, "refresh_interval": 0}


def clustered_rows(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((30, 24)).astype(np.float32)
    rows = centres[rng.integers(0, 30, n)] + 0.3 * rng.standard_normal((n, 24)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_rows_given_at_once_are_filed_in_their_nearest_list_without_a_rows_by_lists_product():
    """Filing every row of a million-row index scored a block of 65,536 rows against 1,024
    centroids at once (a 268 MB product for one argmax a row); rows are scored a block at a time."""
    rows, centroids = clustered_rows(20_000, 5), clustered_rows(256, 6)
    lists = InvertedLists(centroids)
    tracemalloc.start()
    try:
        lists.add(np.arange(len(rows)), rows)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    filed = lists.arrays()["lists"]
    assert len(filed) == len(rows)
    assert np.array_equal(filed, [np.argmax(centroids @ row) for row in rows])
    assert peak < len(rows) * len(centroids) * 4 / 2


def test_a_write_past_the_threshold_makes_no_lists_and_scans_stay_exact_until_they_are_made():
    rows = clustered_rows(5000, 3)
    listed = VectorIndex(exact=lambda slots: rows[slots], quantize_above=1000, lists_above=4000, probe_share=0.25)
    listed.set(np.arange(5000), rows)
    assert listed.lists is None and listed.lists_due
    scans = [listed.scores(query) for query in rows[:5]]
    assert listed.make_lists() and listed.lists is not None and not listed.lists_due
    assert not listed.make_lists()  # made once
    plain = VectorIndex(exact=lambda slots: rows[slots], quantize_above=1000)
    plain.set(np.arange(5000), rows)
    assert all(np.array_equal(scan, plain.scores(query)) for scan, query in zip(scans, rows[:5]))


def test_rows_set_while_the_lists_are_made_are_filed_in_them(monkeypatch):
    rows = clustered_rows(6000, 4)
    listed = VectorIndex(quantize_above=10**9, lists_above=4000, probe_share=1.0)  # every list probed: exact
    listed.set(np.arange(5000), rows[:5000])
    fit = vectors.fit_centroids

    def fit_while_another_thread_writes(sample, k):
        writer = threading.Thread(target=listed.set, args=(np.arange(5000, 6000), rows[5000:]))
        writer.start()
        writer.join()  # (the write does not wait for the lists)
        listed.set(np.array([17]), rows[5999:])  # a row set again: filed by its new value
        return fit(sample, k)

    monkeypatch.setattr(vectors, "fit_centroids", fit_while_another_thread_writes)
    assert listed.make_lists()
    assert sorted(listed.lists.order().tolist()) == list(range(6000))
    assert listed.lists.arrays()["lists"][17] == np.argmax(listed.lists.centroids @ rows[5999])
    every = listed.rows(np.arange(6000))
    for query in rows[5990:5999]:
        assert set(listed.top(query, 10).tolist()) == set(np.argsort(-(every @ query))[:10].tolist())


@pytest.fixture
def lowered(tmp_path: Path, monkeypatch) -> tuple[Path, int]:
    """A store of the demo's items (three of its files) and a lists threshold just above them."""
    store = tmp_path / "lists.db"
    with Memory(store, extensions=False) as mem:
        mem.ingest([DEMO_DIR / name for name in ("alpine-hiking.md", "how-transformers-work.md", "sourdough-baking.md")])
        threshold = mem.index.n_slots + 2
    monkeypatch.setattr(index, "LISTS_ABOVE", threshold)
    monkeypatch.setitem(index.WORD_LAYOUT, "lists_above", threshold)
    return store, threshold


def fits_in_threads(monkeypatch) -> list[int]:
    """The thread of each fit of a space's lists from now on."""
    making, fit = [], vectors.fit_centroids
    monkeypatch.setattr(vectors, "fit_centroids", lambda *args: making.append(threading.get_ident()) or fit(*args))
    return making


def lists_made(mem: Memory) -> bool:
    """Whether both spaces have their lists, once the thread making them aside has (30 s at most)."""
    waited = time.monotonic()
    while mem.index.lists_due() and time.monotonic() - waited < 30:
        time.sleep(0.01)
    return mem.index.lsa_vectors.lists is not None and mem.index.word_vectors.lists is not None


def test_the_recall_that_crosses_the_threshold_scans_every_row_and_the_lists_are_made_aside(lowered, monkeypatch):
    store, threshold = lowered
    with Memory(store, **LIST_SETTINGS) as reader:
        reader.recall(QUERY, strategy="hybrid")  # every item placed: below the threshold
        assert reader.index.lsa_vectors.lists is None
        with Memory(store, **LIST_SETTINGS) as writer:  # another memory grows the store past it
            writer.ingest([DEMO_DIR / "retrieval-augmented-generation.md"])
            assert writer.index.n_slots > threshold
            made_at_ingest = writer.index.lsa_vectors.lists is not None and writer.index.word_vectors.lists is not None
        making = fits_in_threads(monkeypatch)
        crossing = reader.recall(QUERY, strategy="hybrid").hits  # takes in the new items and places them
        assert threading.get_ident() not in making  # not made by the recall
        assert made_at_ingest
        assert lists_made(reader) and making
    monkeypatch.undo()
    with Memory(store, **LIST_SETTINGS) as exact:  # the threshold as shipped: every row scanned
        scanned = exact.recall(QUERY, strategy="hybrid").hits
    assert crossing and [h.item.id for h in crossing] == [h.item.id for h in scanned]
    assert all(math.isclose(a.score, b.score, abs_tol=1e-6) for a, b in zip(crossing, scanned))


def test_a_warm_up_after_another_process_crossed_the_threshold_leaves_the_lists_to_a_thread(lowered, monkeypatch):
    """The app warms the engine up again after following another process's commit, and a query
    sent meanwhile waits for that warm-up: making the lists there (seconds of CPU at 200k rows)
    would hold the query that a recall no longer holds. The queries scan every row meanwhile."""
    store, threshold = lowered
    with Memory(store, **LIST_SETTINGS) as follower:
        follower.warm_up()  # below the threshold
        with Memory(store, **LIST_SETTINGS) as writer:  # another process grows the store past it
            writer.ingest([DEMO_DIR / "retrieval-augmented-generation.md"])
        making = fits_in_threads(monkeypatch)
        assert follower.refresh()  # the app follows the commit, then warms up
        follower.warm_up()
        assert follower.index.n_slots > threshold and threading.get_ident() not in making
        assert follower.recall(QUERY, strategy="hybrid").hits
        assert lists_made(follower) and making


def test_a_memory_closed_while_its_lists_are_made_aside_stops_making_them(lowered, monkeypatch):
    """close() does not wait for the thread making the lists, and the thread does not go on
    making them for a memory nobody can ask any more (seconds of CPU at 200k rows, beside
    whatever the process does next: the app opening another store)."""
    store, threshold = lowered
    reader = Memory(store, **LIST_SETTINGS)
    reader.recall(QUERY, strategy="hybrid")
    with Memory(store, **LIST_SETTINGS) as writer:
        writer.ingest([DEMO_DIR / "retrieval-augmented-generation.md"])
    fitting, closed, fit = threading.Event(), threading.Event(), vectors.fit_centroids
    monkeypatch.setattr(vectors, "fit_centroids", lambda *args: fitting.set() or closed.wait(10) and fit(*args))
    reader.recall(QUERY, strategy="hybrid")  # crosses the threshold: the lists are made aside
    assert fitting.wait(10)
    reader.close()
    closed.set()
    waited = time.monotonic()
    while any(t.name == "mnemoscope-lists" for t in threading.enumerate()) and time.monotonic() - waited < 10:
        time.sleep(0.01)
    assert not any(t.name == "mnemoscope-lists" for t in threading.enumerate())
    assert reader.index.lsa_vectors.lists is None and reader.index.word_vectors.lists is None


def test_lists_due_is_asked_while_another_thread_adds_a_vector_space():
    """A recall or a warm-up asks ``Index.lists_due`` without the memory's write lock, while an
    ingest or a refresh may add a space (``set_vectors`` with a signature new to the index): the
    question reads a copy of the spaces, so the dict growing meanwhile never fails it ("dictionary
    changed size during iteration", which a generator over ``vectors.values()`` raises here
    within a few hundred spaces). Threads are switched as often as the interpreter allows."""
    idx = index.Index(BM25Params())
    asked, failed, done = [0], [], threading.Event()

    def ask() -> None:
        while not done.is_set():
            try:
                idx.lists_due()
            except RuntimeError as exc:
                failed.append(exc)
                return
            asked[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        asker = threading.Thread(target=ask)
        asker.start()
        for n in range(2000):
            idx.set_vectors(f"space {n}", [], np.zeros((0, 8), dtype=np.float32))
        done.set()
        asker.join(10)
    finally:
        sys.setswitchinterval(interval)
    assert asked[0] > 0 and len(idx.vectors) == 2000
    assert failed == []
