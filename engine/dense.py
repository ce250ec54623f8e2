"""Dense signals: embedders and a matrix index searched with one numpy call.

Three embedders, each identified by a *signature* stored beside its vectors:

* ``HashEmbedder`` (offline, no fitting): signed feature hashing of the lexical tokens and
  character trigrams. Cheap and robust to typos, but only a lexical proxy.
* ``LatentSemanticEmbedder`` (offline, fitted to the corpus): TF-IDF over the store's own term
  counts followed by a truncated SVD, so co-occurring words land near each other. Its model is
  kept in the store, so a reopened store answers exactly like the live one.
* ``OpenAIEmbedder`` (optional): any OpenAI-compatible ``/embeddings`` endpoint, batched, with
  timeouts and retries; every vector is cached in the store by content hash.
"""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import threading
import zlib
from array import array
from contextlib import AbstractContextManager
from typing import Any, Callable, Sequence

import numpy as np
from threadpoolctl import OpenBLASController, ThreadpoolController

from .errors import EmbeddingUnavailable
from .lazy import sparse as sp
from .text import feature_tokens

log = logging.getLogger(__name__)


def l2_normalize(m: np.ndarray, in_place: bool = False) -> np.ndarray:
    """Rows of ``m`` at unit length, as float32 (zero rows stay zero). ``in_place``: ``m`` is an
    array the caller made for this and reads no more, divided where it lies (a block of a
    million-item projection then needs no second float64 copy of itself)."""
    norms = np.linalg.norm(m, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.divide(m, norms, out=m if in_place else None).astype(np.float32, copy=False)


# -- feature hashing ----------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _sublinear_tfs(most: int) -> np.ndarray:
    """1 + ln(count) for counts 1..most, each computed by numpy's scalar log as the embedder
    always has (its float64, to the last bit: a vectorised log may differ in the last place)."""
    return np.array([1.0 + np.log(count) for count in range(1, most + 1)], dtype=np.float64)


def _bucket(token: str, dim: int) -> tuple[int, float]:
    h = zlib.crc32(token.encode("utf-8"))
    return h % dim, 1.0 if (h >> 16) & 1 else -1.0


class _TokenIds(dict):
    """Token → a small id, with each id's bucket and sign in growable arrays (a miss hashes it).
    The index's one embedder serves a recall and a catch-up's ingest in two threads: ``lock``
    gives a token one id (two would count it as two tokens in one text), kept with its own bucket
    and sign, and no array grows while :meth:`features` reads it (an ``array`` that a numpy view
    exports refuses to grow)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.dim = dim
        self.cols = array("q")
        self.signs = array("d")
        self.lock = threading.Lock()

    def __missing__(self, token: str) -> int:
        col, sign = _bucket(token, self.dim)
        with self.lock:  # one id per token: another thread may have given it one meanwhile
            token_id = self.get(token)
            if token_id is None:
                self.cols.append(col)
                self.signs.append(sign)
                token_id = self[token] = len(self.cols) - 1
        return token_id

    def features(self, token_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The buckets and signs of these ids."""
        with self.lock:
            return (np.frombuffer(self.cols, dtype=np.int64)[token_ids].astype(np.intp),
                    np.frombuffer(self.signs, dtype=np.float64)[token_ids])


# Texts hashed together: their tokens' arrays (a dozen per token) and the float64 rows of the
# normalisation are in memory at once, several times the vectors themselves, so the knowledge
# area's drafts of a whole huge conversation (one per turn) are hashed a chunk at a time.
EMBED_CHUNK = 8192


class HashEmbedder:
    """Signed feature hashing into ``dim`` buckets, sub-linear term frequency, L2-normalised."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.signature = f"hash-v1-{dim}"
        self._ids = _TokenIds(dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Every text's features summed into its row by one ``np.add.at``, in the order a
        per-text ``Counter`` gives (each distinct token at its first occurrence, a float64
        weight added to a float32 cell), so the vectors are the same to the last bit. The
        tokens are counted with one sort of (row, token id) keys: the knowledge area hashes
        every stored fact of a subject when it first meets it, and a Python loop per token was
        most of that."""
        if len(self._ids) > 500_000:
            self._ids = _TokenIds(self.dim)
        ids = self._ids
        if len(texts) <= EMBED_CHUNK:
            return self._embed(texts, ids)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(texts), EMBED_CHUNK):
            out[start:start + EMBED_CHUNK] = self._embed(texts[start:start + EMBED_CHUNK], ids)
        return out

    def _embed(self, texts: Sequence[str], ids: _TokenIds) -> np.ndarray:
        """:meth:`embed` of at most ``EMBED_CHUNK`` texts (each row depends on its text alone)."""
        token_lists = [feature_tokens(text) for text in texts]
        token_ids = np.array([ids[tok] for tokens in token_lists for tok in tokens], dtype=np.int64)
        rows = np.repeat(np.arange(len(texts), dtype=np.intp), [len(tokens) for tokens in token_lists])
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if len(token_ids):
            keys = rows * len(ids) + token_ids
            order = np.argsort(keys, kind="stable")
            ordered = keys[order]
            starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
            counts = np.diff(np.append(starts, len(ordered)))
            firsts = order[starts]
            by_first = np.argsort(firsts)
            at, counts = firsts[by_first], counts[by_first]
            found = token_ids[at]
            cols, signs = ids.features(found)
            np.add.at(out, (rows[at], cols), signs * _sublinear_tfs(int(counts.max()))[counts - 1])
        return l2_normalize(out)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed([text])[0]


# -- latent semantic analysis over the store's own term counts ------------------------------------


def randomized_svd_components(x: sp.csr_matrix, k: int, seed: int = 0, n_iter: int = 5, oversample: int = 10) -> np.ndarray:
    """The top ``k`` right singular vectors of ``x`` (k × columns), by randomized subspace
    iteration (Halko, Martinsson & Tropp 2011). The same algorithm as scikit-learn's
    TruncatedSVD, without the seconds it takes to import scikit-learn in a fresh process."""
    from scipy.linalg import lu

    def normalised(m: np.ndarray) -> np.ndarray:  # LU between power steps: as stable here, cheaper than QR
        return lu(m, permute_l=True, check_finite=False)[0]

    rng = np.random.default_rng(seed)
    q = x @ rng.standard_normal((x.shape[1], k + oversample)).astype(np.float32)
    for _ in range(n_iter):
        q = x @ normalised(x.T @ normalised(q))
    q = np.linalg.qr(q)[0]
    _, _, vt = np.linalg.svd(np.asarray((x.T @ q).T), full_matrices=False)
    return np.ascontiguousarray(vt[:k], dtype=np.float32)


class LatentSemanticModel:
    """TF-IDF (sub-linear tf, smooth idf, L2) → truncated SVD → L2, on term-id count vectors."""

    def __init__(self, idf: np.ndarray, components: np.ndarray, fit_id: str) -> None:
        self.idf = idf.astype(np.float32)
        self.components = components.astype(np.float32)  # (dim, n_terms)
        # (n_terms, dim), contiguous: the dense side of the sparse products below (scipy copies a
        # transposed view into a contiguous array for every product)
        self._by_term = np.ascontiguousarray(self.components.T)
        self.fit_id = fit_id
        self.dim = components.shape[0]
        self.signature = f"lsa-{fit_id}"

    @classmethod
    def fit(cls, counts: sp.csr_matrix, dim: int, seed: int = 0) -> "LatentSemanticModel | None":
        """Fit on a documents × terms count matrix; None when the corpus is too small to help."""
        n_docs, n_terms = counts.shape
        dim = min(dim, n_docs - 1, n_terms - 1)
        if dim < 8:
            return None
        df = np.bincount(counts.indices, minlength=n_terms).astype(np.float64)
        idf = np.log((1.0 + n_docs) / (1.0 + df)) + 1.0
        with one_blas_thread():  # faster on a busy 2-core machine, a little slower on an idle one
            components = randomized_svd_components(cls._weight(counts, idf), dim, seed)
        digest = hashlib.sha1(components[:2].tobytes()).hexdigest()[:10]
        return cls(idf, components, digest)

    @staticmethod
    def _weight(counts: sp.csr_matrix, idf: np.ndarray) -> sp.csr_matrix:
        """Sub-linear tf × idf, rows L2-normalised. The scalings multiply the entries in place:
        a product with a vocabulary-wide diagonal matrix gives the same numbers, but costs the
        whole vocabulary for every call (a follower places a few new items per commit)."""
        x = counts.astype(np.float32).tocsr(copy=True)
        x.data = 1.0 + np.log(np.maximum(x.data, 1.0))
        x.data *= idf.astype(np.float32)[x.indices]
        lengths = np.diff(x.indptr)
        # each row's norm summed over its entries in reverse, the order the diagonal product left
        # them in (so the models fitted before this change place items to the same last bit)
        reverse = np.repeat(x.indptr[:-1] + x.indptr[1:] - 1, lengths) - np.arange(x.nnz)
        flipped = sp.csr_matrix((x.data[reverse], x.indices[reverse], x.indptr), shape=x.shape)
        norms = np.sqrt(np.asarray(flipped.multiply(flipped).sum(axis=1)).ravel())
        x.data *= np.repeat((1.0 / np.where(norms == 0, 1.0, norms)).astype(np.float32), lengths)
        return x

    def transform(self, counts: sp.csr_matrix) -> np.ndarray:
        n_terms = self.components.shape[1]
        if counts.shape[1] != n_terms:
            counts = counts[:, :n_terms] if counts.shape[1] > n_terms else sp.hstack(
                [counts, sp.csr_matrix((counts.shape[0], n_terms - counts.shape[1]))]
            ).tocsr()
        return l2_normalize(np.asarray(self._weight(counts, self.idf) @ self._by_term), in_place=True)

    def transform_rows(self, lengths: np.ndarray, term_ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """:meth:`transform` of rows given as their lengths and their (term id, count) pairs
        concatenated, weighted with numpy and multiplied once: for the few hundred rows a query
        scores again exactly, :meth:`transform`'s sparse diagonal products and vocabulary-wide
        column slicing cost more than the product itself."""
        row = np.repeat(np.arange(len(lengths)), lengths)
        keep = term_ids < self.components.shape[1]
        row, term_ids = row[keep], term_ids[keep]
        x = (1.0 + np.log(np.maximum(counts[keep], 1.0))).astype(np.float32) * self.idf[term_ids]
        norms = np.sqrt(np.bincount(row, weights=x * x, minlength=len(lengths))).astype(np.float32)
        x /= np.where(norms == 0, 1.0, norms)[row]
        indptr = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=len(lengths)))])
        weighted = sp.csr_matrix((x, term_ids, indptr), shape=(len(lengths), self.components.shape[1]))
        return l2_normalize(np.asarray(weighted @ self._by_term))

    def query_vector(self, term_ids: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """``transform`` of one sparse row, done with a column gather instead of sparse matrices
        (far cheaper: the sparse route weights a row as wide as the vocabulary)."""
        inside = term_ids < self.components.shape[1]
        term_ids, counts = term_ids[inside], counts[inside]
        x = (1.0 + np.log(np.maximum(counts, 1.0))).astype(np.float32) * self.idf[term_ids]
        norm = np.linalg.norm(x)
        if not len(x) or norm == 0:
            return np.zeros(self.dim, dtype=np.float32)
        return l2_normalize(self.components[:, term_ids] @ (x / norm))

    def to_bytes(self) -> bytes:
        buf = io.BytesIO()
        np.savez(buf, idf=self.idf, components=self.components, fit_id=np.array(self.fit_id))  # floats barely compress
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, blob: bytes) -> "LatentSemanticModel":
        with np.load(io.BytesIO(blob), allow_pickle=False) as z:
            return cls(z["idf"], z["components"], str(z["fit_id"]))


# -- OpenAI-compatible endpoint -------------------------------------------------------------------


class OpenAIEmbedder:
    """Batched calls to an OpenAI-compatible ``/embeddings`` endpoint with a content-hash cache.

    ``cache_get``/``cache_put`` are the store's embedding cache, so the same text is never paid
    for twice, across processes and sessions.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        timeout: float = 30.0,
        max_retries: int = 3,
        batch_size: int = 64,
        cache_get: Callable[[str, list[str]], dict[str, np.ndarray]] | None = None,
        cache_put: Callable[[str, list[tuple[str, np.ndarray]]], None] | None = None,
        signature: str = "",
        stored_dim: Callable[[], int] | None = None,
    ) -> None:
        from .net import endpoint_client

        self.model = model
        self.signature = signature or f"openai:{model}"
        self.dim = 0  # the length of this model's vectors, once one is seen (or stored)
        self._stored_dim = stored_dim  # the length of the vectors the store holds under this signature (0: none yet)
        self.batch_size = batch_size
        self._client = endpoint_client(base_url, api_key, timeout=timeout, max_retries=max_retries)
        self._cache_get, self._cache_put = cache_get, cache_put

    @staticmethod
    def text_hash(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def embed(self, texts: Sequence[str], remember: bool = True) -> np.ndarray:
        """Vectors of ``texts``: cached ones from the store, the rest from the endpoint in batches
        (kept in the cache when ``remember``)."""
        return self.embed_inputs([self.text_hash(t) for t in texts], texts, remember)

    def embed_inputs(self, hashes: Sequence[str], inputs: Sequence[Any], remember: bool = True) -> np.ndarray:
        """:meth:`embed` for any ``input`` items the endpoint accepts (strings, or the JSON objects
        a multimodal endpoint takes), each cached under its given content hash."""
        known = self._cache_get(self.signature, list(hashes)) if self._cache_get else {}
        missing = sorted({h: i for i, h in enumerate(hashes) if h not in known}.items(), key=lambda kv: kv[1])
        fresh: list[tuple[str, np.ndarray]] = []
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vectors = self._call([inputs[i] for _, i in batch])
            fresh.extend((h, v) for (h, _), v in zip(batch, vectors))
        known.update(dict(fresh))
        if not len(hashes):
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.stack(self._same_length([known[h] for h in hashes]))  # before the cache keeps any
        if fresh and remember and self._cache_put:
            self._cache_put(self.signature, fresh)
        self.dim = out.shape[1]
        return l2_normalize(out)

    def _same_length(self, vectors: list[np.ndarray]) -> list[np.ndarray]:
        """``vectors`` if each is as long as the vectors already stored or seen under this
        signature: a model swapped behind the same name answers another length, and its vectors
        would then be compared with (or stored beside) vectors they cannot be compared with."""
        expected = (self._stored_dim() if self._stored_dim else 0) or self.dim
        lengths = sorted({len(v) for v in vectors}, reverse=True)
        if len(lengths) > 1:
            raise EmbeddingUnavailable(f"the embedding endpoint answered vectors of {lengths[0]} and {lengths[1]} numbers"
                                       f" for the model {self.model!r}; nothing was stored")
        if lengths and expected and lengths[0] != expected:
            raise EmbeddingUnavailable(f"the embedding endpoint answered vectors of {lengths[0]} numbers where this store's"
                                       f" have {expected} (did the model behind {self.model!r} change?); nothing was stored")
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """A query's vector, from the cache or the endpoint, never written to the store."""
        return self.embed([text], remember=False)[0]

    def _call(self, inputs: list[Any]) -> list[np.ndarray]:
        from openai import OpenAIError

        try:
            reply = self._client.embeddings.create(model=self.model, input=inputs)
            data = sorted(reply.data, key=lambda d: d.index)
            if len(data) != len(inputs):
                raise EmbeddingUnavailable(f"the endpoint returned {len(data)} vectors for {len(inputs)} inputs")
            return [_vector(d.embedding) for d in data]
        except OpenAIError as exc:
            raise EmbeddingUnavailable(f"embedding endpoint failed: {type(exc).__name__}: {exc}") from None
        except (TypeError, ValueError, AttributeError) as exc:
            raise EmbeddingUnavailable(f"embedding endpoint answered in an unexpected shape: {exc}") from None


def _vector(numbers: Any) -> np.ndarray:
    """One vector an endpoint answered, as float32; an endpoint's answer is data to check, and
    an empty vector or a NaN or infinite number (or one past float32's range) would be stored
    and then rank every item by NaN."""
    with np.errstate(over="ignore", invalid="ignore"):
        vector = np.asarray(numbers, dtype=np.float32)
    if vector.ndim != 1 or not vector.size:
        raise EmbeddingUnavailable("the embedding endpoint answered an empty vector" if vector.ndim == 1 else
                                   f"the embedding endpoint answered a vector of {vector.ndim} dimensions, not a list of numbers")
    if not np.isfinite(vector).all():
        raise EmbeddingUnavailable("the embedding endpoint answered a vector holding a value that is not a finite number"
                                   " (NaN, infinite or past float32's range); nothing was stored")
    return vector


# -- BLAS threads --------------------------------------------------------------------------------


class _OneBlasThread(AbstractContextManager[None]):
    """BLAS limited to one thread while any thread of the process is inside. The limit of numpy's
    BLAS (OpenBLAS on pthreads) is the process's, not a thread's, so it is held by one count: the
    first thread in sets it, the last out restores what the first found. Each entry saving and
    restoring on its own (threadpoolctl's limiter) races across threads: one entering inside
    another's section saves the 1 that section set and restores it for the whole process after
    both, or the first out lifts the limit while the other is still inside.

    threadpoolctl lets one thread alone change such a process-wide pool, the first to set it, and
    ignores the others until that one lets go: the thread that sets or restores lets go at once,
    or the next change, made by whichever thread is first in or last out, would be ignored."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._restore: Callable[[], None] | None = None  # the first entry's limiter, restoring what it found
        self._controller: ThreadpoolController | None = None  # built at the first entry: slow to make

    def __enter__(self) -> None:
        with self._lock:
            if self._inside == 0:
                if self._controller is None:
                    self._controller = ThreadpoolController()
                try:
                    self._restore = self._controller.limit(limits=1, user_api="blas").restore_original_limits
                finally:
                    OpenBLASController.clear_controlling_thread()
            self._inside += 1

    def __exit__(self, *exc: object) -> None:
        with self._lock:
            self._inside -= 1
            if self._inside == 0 and self._restore is not None:
                try:
                    self._restore()
                finally:
                    self._restore = None
                    OpenBLASController.clear_controlling_thread()


_ONE_BLAS_THREAD = _OneBlasThread()


def one_blas_thread() -> AbstractContextManager[None]:
    """A context with BLAS limited to one thread, safe to enter from several threads at once and
    nested: on a busy 2-core machine a 2-thread product stalls for milliseconds (docs/benchmarks.md)."""
    return _ONE_BLAS_THREAD
