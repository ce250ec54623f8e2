"""Dense signals: the hash embedder, the latent semantic model, the vector matrix."""

import json
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mnemoscope.engine.dense import HashEmbedder, LatentSemanticModel, l2_normalize, randomized_svd_components
from mnemoscope.engine.vectors import VectorIndex

ROOT = Path(__file__).resolve().parents[2]


def test_hash_embedder_is_deterministic_normalised_and_lexical():
    emb = HashEmbedder(dim=128)
    a, b, c = emb.embed(["the walking dogs", "a dog walked", "quantum chromodynamics"])
    assert np.allclose(emb.embed(["the walking dogs"])[0], a)
    assert np.isclose(np.linalg.norm(a), 1.0, atol=1e-6)
    assert a @ b > a @ c  # shared stems and trigrams
    assert np.allclose(emb.embed_query("a dog walked"), b)
    assert not emb.embed([""]).any()



def test_hash_vectors_do_not_depend_on_the_batch_or_what_the_embedder_saw_before():
    texts = ["Maya moved to Berlin Berlin in May", "", "서울에서 회의를 했다", "walked walking walks", "a b c a"]
    alone = np.stack([HashEmbedder(dim=64).embed([t])[0] for t in texts])
    seasoned = HashEmbedder(dim=64)
    seasoned.embed(["quantum chromodynamics of Berlin", "회의"])  # other tokens first: other token ids
    together = seasoned.embed(texts[::-1])[::-1]
    assert np.array_equal(alone.view(np.uint32), together.view(np.uint32))
    assert alone[0].any() and not alone[1].any()

# Two threads in one_blas_thread, in a process of their own: a thread of another test (a lists
# thread, say) still inside it would hold the limit. It prints what BLAS ran on at each point.
BLAS_THREADS = """
import json, threading
from threadpoolctl import OpenBLASController, threadpool_info, threadpool_limits
from mnemoscope.engine.dense import one_blas_thread

def blas():
    return sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})

threadpool_limits(limits=2, user_api="blas")
OpenBLASController.clear_controlling_thread()  # (threadpoolctl: the thread that set a limit alone changes it until it lets go)
seen = {"before": blas()}
a_in, a_leave, b_in, b_read, b_leave = (threading.Event() for _ in range(5))

def a():
    with one_blas_thread():
        a_in.set()
        a_leave.wait(10)

def b():
    with one_blas_thread():
        b_in.set()
        b_read.wait(10)
        seen["b inside, a gone"] = blas()
        b_leave.wait(10)

first, second = threading.Thread(target=a), threading.Thread(target=b)
first.start()
a_in.wait(10)
second.start()
b_in.wait(10)
seen["both inside"] = blas()
a_leave.set()
first.join(10)
b_read.set()
b_leave.set()
second.join(10)
seen["both gone"] = blas()
with one_blas_thread(), one_blas_thread():
    seen["nested"] = blas()
seen["nested gone"] = blas()
print(json.dumps(seen))
"""


def test_one_blas_thread_holds_while_any_thread_is_inside_and_restores_after_the_last():
    """A enters, B enters, A leaves while B is inside: B still runs on one BLAS thread, and
    after both the process has the limit it had before; nested in one thread, the outer exit
    restores. The limits are read through threadpoolctl's threadpool_info."""
    done = subprocess.run([sys.executable, "-c", BLAS_THREADS], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    if seen["before"] != [2]:
        pytest.skip("BLAS cannot run on two threads here: a limit of one changes nothing")
    assert seen == {"before": [2], "both inside": [1], "b inside, a gone": [1], "both gone": [2], "nested": [1],
                    "nested gone": [2]}


def random_counts(seed, n_docs=200, n_terms=300):
    m = sp.random(n_docs, n_terms, density=0.05, random_state=seed, format="csr", dtype=np.float32)
    m.data = np.ceil(m.data * 4)
    return m


def test_one_hash_embedder_shared_by_threads_gives_each_the_vectors_it_gives_alone():
    """A recall's query and a catch-up's facts are hashed by the index's one embedder at once."""
    rng = np.random.default_rng(3)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    texts = [[" ".join("".join(rng.choice(letters, 7)) for _ in range(30)) for _ in range(150)] for _ in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch between any two bytecodes
    try:
        for _trial in range(3):
            shared, out, errors = HashEmbedder(dim=256), [None] * 4, []

            def run(n: int) -> None:
                try:
                    out[n] = np.vstack([shared.embed([t]) for t in texts[n]])
                except Exception as e:  # noqa: BLE001 - the failure is the finding
                    errors.append(repr(e))

            threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert errors == []
            assert all(np.array_equal(out[n], HashEmbedder(dim=256).embed(texts[n])) for n in range(4))
    finally:
        sys.setswitchinterval(interval)


def test_randomized_svd_captures_what_the_exact_svd_captures():
    x = random_counts(1)
    ours = randomized_svd_components(x, 10).astype(np.float64)
    exact = np.linalg.svd(x.toarray().astype(np.float64), full_matrices=False)[2][:10]
    assert np.allclose(ours @ ours.T, np.eye(10), atol=1e-5)  # orthonormal rows
    captured = np.linalg.norm(x @ ours.T) / np.linalg.norm(x @ exact.T)
    assert 0.99 < captured <= 1.0 + 1e-6
    assert np.array_equal(randomized_svd_components(x, 10, seed=0), randomized_svd_components(x, 10, seed=0))


def test_lsa_query_vector_equals_transform_and_survives_bytes():
    model = LatentSemanticModel.fit(random_counts(2), 32)
    assert model.dim == 32
    term_ids, counts = np.array([3, 17, 250]), np.array([1.0, 2.0, 1.0], dtype=np.float32)
    row = sp.csr_matrix((counts, (np.zeros(3, dtype=int), term_ids)), shape=(1, 300))
    assert np.allclose(model.transform(row)[0], model.query_vector(term_ids, counts), atol=1e-6)
    again = LatentSemanticModel.from_bytes(model.to_bytes())
    assert again.signature == model.signature
    assert np.array_equal(again.query_vector(term_ids, counts), model.query_vector(term_ids, counts))
    assert not model.query_vector(np.array([10_000]), np.array([1.0], dtype=np.float32)).any()  # unknown term


def test_lsa_refuses_a_corpus_too_small_to_help():
    assert LatentSemanticModel.fit(random_counts(3, n_docs=5), 32) is None


def test_vector_index_scores_grow_and_remove():
    index = VectorIndex()
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((5, 8)).astype(np.float32)
    index.set(np.array([0, 1, 2]), vectors[:3])
    index.set(np.array([200]), vectors[3:4])  # grows past its capacity
    q = vectors[3]
    scores = index.scores(q)
    assert len(scores) == 201 and np.isclose(scores[200], q @ q)
    index.remove(np.array([200, 9999]))
    assert index.scores(q)[200] == 0.0


def test_a_quantised_index_ranks_as_the_exact_one_and_scores_exactly_where_asked():
    rng = np.random.default_rng(3)
    rows = rng.normal(size=(3000, 32)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    exact = VectorIndex()
    small = VectorIndex(exact=lambda slots: rows[slots], quantize_above=1000)
    for lo in range(0, 3000, 700):  # grows past the threshold: the float rows become codes
        exact.set(np.arange(lo, min(lo + 700, 3000)), rows[lo:lo + 700])
        small.set(np.arange(lo, min(lo + 700, 3000)), rows[lo:lo + 700])
    assert small.quantized and not exact.quantized
    assert small.nbytes < exact.nbytes / 3
    for _ in range(20):
        query = rng.normal(size=32).astype(np.float32)
        query /= np.linalg.norm(query)
        want, got = exact.scores(query), small.scores(query)
        assert np.array_equal(np.argsort(-want)[:50], np.argsort(-got)[:50])
        assert np.abs(want - got).max() < 0.02
        some = rng.choice(3000, 40, replace=False)
        assert np.allclose(small.scores_at(some, query), want[some], atol=1e-6)
    assert np.allclose(small.rows(np.array([5])), rows[5], atol=0.01)


def test_an_index_keeps_float_rows_while_it_holds_no_more_than_it_quantises_above():
    """Rows placed at once and then one more (a store opened, then an ingest): the room made for
    more rows passes ``quantize_above`` before the rows do, and decides nothing. (The word space
    of a store opened at 140k items was quantised by its first ingest, though its 200k is where
    codes begin.)"""
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(1401, 8)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    index = VectorIndex(quantize_above=1400)
    index.set(np.arange(1000), rows[:1000])
    index.set(np.array([1000]), rows[1000:1001])
    assert not index.quantized
    assert np.array_equal(index.scores(rows[3]), rows[:1001] @ rows[3])
    index.set(np.arange(1001, 1401), rows[1001:])
    assert index.quantized


def test_a_quantised_scan_scores_again_exactly_as_many_best_rows_as_its_index_is_told():
    rng = np.random.default_rng(4)
    rows = rng.normal(size=(3000, 32)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    asked: list[np.ndarray] = []
    index = VectorIndex(exact=lambda slots: asked.append(slots) or rows[slots], quantize_above=1000, rescore=16)
    index.set(np.arange(3000), rows)
    query = rows[5]
    scores = index.scores(query)
    assert [len(a) for a in asked] == [16]
    exact = rows @ query
    assert np.array_equal(scores[asked[0]], (rows[asked[0]] @ query).astype(np.float32))
    assert set(asked[0].tolist()) >= set(np.argsort(-exact)[:5].tolist())  # the code ranks the best rows among its 16


def test_top_finds_what_the_scan_ranks_first_reading_only_the_probed_lists():
    rng = np.random.default_rng(8)
    centres = rng.normal(size=(30, 24)).astype(np.float32)
    rows = centres[rng.integers(0, 30, 5000)] + 0.3 * rng.normal(size=(5000, 24)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    plain = VectorIndex()
    listed = VectorIndex(exact=lambda slots: rows[slots], quantize_above=1000, lists_above=4000, probe_share=0.25)
    for index in (plain, listed):
        index.set(np.arange(5000), rows)
    listed.remove(np.array([7]))
    assert listed.make_lists() and listed.lists is not None and listed.quantized
    for query in rows[rng.integers(0, 5000, 20)]:
        scan = listed.scores(query)
        top = listed.top(query, 10)
        assert len(top) == 10 and 7 not in top
        assert set(top.tolist()) == set(np.argsort(-scan)[:10].tolist())
        assert np.all(np.diff(scan[top]) <= 0)
        assert np.array_equal(plain.top(query, 10), np.argsort(-plain.scores(query), kind="stable")[:10])


def test_lists_of_float_rows_probed_whole_rank_as_the_scan():
    rng = np.random.default_rng(9)
    rows = rng.normal(size=(5000, 24)).astype(np.float32)
    listed = VectorIndex(quantize_above=10**9, lists_above=4000, probe_share=1.0)  # float rows, every list probed
    listed.set(np.arange(5000), rows)
    assert listed.make_lists() and listed.lists is not None and not listed.quantized
    for query in rows[rng.integers(0, 5000, 10)]:
        top = listed.top(query, 10)
        assert len(top) == 10
        assert np.array_equal(top, np.argsort(-(rows @ query), kind="stable")[:10])


def test_the_tf_idf_weighting_gives_the_numbers_of_the_diagonal_products_to_the_last_bit():
    rng = np.random.default_rng(4)
    counts = random_counts(4, n_docs=300, n_terms=400)
    for row in range(300):  # a document's terms come in the order it uses them, not sorted
        lo, hi = counts.indptr[row], counts.indptr[row + 1]
        shuffled = lo + rng.permutation(hi - lo)
        counts.indices[lo:hi], counts.data[lo:hi] = counts.indices[shuffled], counts.data[shuffled]
    counts.has_sorted_indices = False
    idf = rng.uniform(0.5, 6.0, 400).astype(np.float32)
    model = LatentSemanticModel(idf, rng.normal(size=(16, 400)).astype(np.float32), "test")
    x = counts.astype(np.float32).tocsr(copy=True)
    x.data = 1.0 + np.log(np.maximum(x.data, 1.0))
    x = x @ sp.diags(idf)  # what the weighting was written as (it costs the whole vocabulary per call)
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1)).ravel())
    weighted = sp.diags(1.0 / np.where(norms == 0, 1.0, norms)).astype(np.float32) @ x
    want = l2_normalize(np.asarray(weighted @ model.components.T))
    assert np.array_equal(model.transform(counts), want)
