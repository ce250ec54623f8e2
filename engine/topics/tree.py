"""The topic tree: its latent space, the recursive clustering, labels and leaf probabilities.

The tree lives in its own latent space (TF-IDF → SVD of the store's term counts, fitted at
build time and stored with the tree), so the engine's LSA refits never move the centroids and
a reopened store walks exactly like the live one. Clustering is spherical k-means (cosine), the
same measure every later assignment and the walk use.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Sequence

import numpy as np

from ..dense import LatentSemanticModel, l2_normalize
from ..lazy import sparse as sp
from ..text import lexical_tokens, words


# -- the latent space ---------------------------------------------------------------------------


class TopicSpace:
    """A latent model over a fixed list of terms, re-bound to whatever ids the vocabulary has now.

    Binding by term (not by id) keeps the space valid after ``reindex`` renumbers the vocabulary.
    """

    def __init__(self, model: LatentSemanticModel, terms: list[str]) -> None:
        self.model, self.terms = model, terms
        self._select: sp.csr_matrix | None = None
        self._column = np.zeros(0, dtype=np.int64)  # vocabulary id → space column (−1: not in the space)
        self._bound_size = -1

    @classmethod
    def fit(cls, counts: sp.csr_matrix, id_terms: Sequence[str], dim: int, exclude: Iterable[int] = ()) -> "TopicSpace | None":
        """Fit on documents × terms counts, keeping terms seen in two documents or more and
        leaving out ``exclude`` (speaker names: they say who talks, not what about)."""
        df = np.bincount(counts.indices, minlength=counts.shape[1])
        df[list(exclude)] = 0
        keep = np.flatnonzero(df >= 2)
        if len(keep) < 16:
            keep = np.flatnonzero(df >= 1)
        model = LatentSemanticModel.fit(counts[:, keep].tocsr(), dim)
        if model is None:
            return None
        return cls(model, [id_terms[i] for i in keep])

    def bind(self, vocab: dict[str, int]) -> None:
        """Map the vocabulary's current term ids onto the space's columns (again if it grew)."""
        if len(vocab) == self._bound_size:
            return
        cols = np.fromiter((vocab.get(t, -1) for t in self.terms), dtype=np.int64, count=len(self.terms))
        known = np.flatnonzero(cols >= 0)
        self._column = np.full(max(len(vocab), 1), -1, dtype=np.int64)
        self._column[cols[known]] = known
        self._select = None  # made by the first transform: a query needs only the column map
        self._bound_size = len(vocab)

    def _selection(self) -> sp.csr_matrix:
        """Vocabulary ids × space columns, one 1 where a term of the space has that id. Built from
        the column map when rows of counts are first transformed, not when binding: opening a store
        binds the space, and scipy.sparse would be imported then only to build this."""
        if self._select is None:
            ids = np.flatnonzero(self._column >= 0)
            self._select = sp.csr_matrix((np.ones(len(ids), dtype=np.float32), (ids, self._column[ids])),
                                         shape=(len(self._column), len(self.terms)))
        return self._select

    def transform(self, counts: sp.csr_matrix) -> np.ndarray:
        """Rows of term counts (current vocabulary ids) → L2-normalised vectors in the space."""
        assert self._bound_size >= 0, "bind() the space to the vocabulary first"
        select = self._selection()
        width = select.shape[0]
        if counts.shape[1] < width:
            counts = sp.hstack([counts, sp.csr_matrix((counts.shape[0], width - counts.shape[1]))]).tocsr()
        return self.model.transform((counts[:, :width] @ select).tocsr())

    def embed_query(self, term_ids: np.ndarray, tf_weights: np.ndarray) -> np.ndarray | None:
        """A query's vector from its term ids and sub-linear tf weights, without sparse matrices
        (the same TF-IDF → SVD → L2 as :meth:`transform`, in microseconds)."""
        ids = term_ids[term_ids < len(self._column)]
        cols = self._column[ids]
        keep = cols >= 0
        if not keep.any():
            return None
        cols = cols[keep]
        x = tf_weights[: len(ids)][keep] * self.model.idf[cols]
        vec = self.model.components[:, cols] @ (x / np.linalg.norm(x))
        norm = np.linalg.norm(vec)
        return (vec / norm).astype(np.float32) if norm > 0 else None

    def to_bytes(self) -> bytes:
        return self.model.to_bytes()

    @classmethod
    def from_bytes(cls, blob: bytes, terms: list[str]) -> "TopicSpace":
        return cls(LatentSemanticModel.from_bytes(blob), terms)


# -- the tree -----------------------------------------------------------------------------------


@dataclass
class TopicTree:
    """Topics in breadth-first order (parents before children), addressed by index or path id."""

    paths: list[str]
    parent: np.ndarray  # int64, -1 for a top-level topic
    centroids: np.ndarray  # (topics, dim) float32, L2-normalised; (topics, 0) for a flat tree
    labels: list[str]
    terms: list[list[str]]
    extra_parents: dict[int, list[int]] = field(default_factory=dict)  # DAG mode
    message: str = ""

    def __post_init__(self) -> None:
        self.index = {p: i for i, p in enumerate(self.paths)}
        self.depth = np.array([p.count(".") + 1 for p in self.paths], dtype=np.int64)
        self.children: list[list[int]] = [[] for _ in self.paths]
        for i, p in enumerate(self.parent.tolist()):
            if p >= 0:
                self.children[p].append(i)
        self.leaves = np.array([i for i, c in enumerate(self.children) if not c], dtype=np.int64)
        self.leaf_pos = np.full(len(self.paths), -1, dtype=np.int64)
        self.leaf_pos[self.leaves] = np.arange(len(self.leaves))

    def __len__(self) -> int:
        return len(self.paths)

    @property
    def flat(self) -> bool:
        return self.centroids.shape[1] == 0

    def ancestors(self, t: int) -> list[int]:
        """Primary ancestors of ``t``, nearest first."""
        out = []
        while (t := int(self.parent[t])) >= 0:
            out.append(t)
        return out

    def ancestor_at(self, t: int, depth: int) -> int:
        while self.depth[t] > depth:
            t = int(self.parent[t])
        return t

    @cached_property
    def subtree_leaves(self) -> sp.csr_matrix:
        """(topics, leaves) 1 where the leaf lies in the topic's subtree (itself included)."""
        anc = self.ancestor_matrix
        rows = np.concatenate([anc[:, d] for d in range(anc.shape[1])]) if anc.size else np.zeros(0, dtype=np.int64)
        cols = np.tile(np.arange(len(self.leaves)), anc.shape[1])
        m = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(self), len(self.leaves)))
        m.data[:] = 1.0  # a leaf padded at several depths counts once
        return m

    @cached_property
    def ancestor_matrix(self) -> np.ndarray:
        """(leaves, max depth) topic index of each leaf's ancestor at every depth (itself below)."""
        depth = int(self.depth.max()) if len(self) else 0
        out = np.zeros((len(self.leaves), depth), dtype=np.int64)
        for row, leaf in enumerate(self.leaves.tolist()):
            chain = [leaf, *self.ancestors(leaf)][::-1]
            out[row] = chain + [leaf] * (depth - len(chain))
        return out


@dataclass
class TreeShape:
    """How big the tree grows for a corpus: adapted to its size by :func:`shape_for`."""

    leaf_size: float
    min_leaf: int
    max_branch: int
    max_depth: int
    seed: int = 0


def shape_for(n: int, leaf_size: int, min_leaf: int, max_leaves: int, max_branch: int, max_depth: int) -> TreeShape:
    """Small corpora aim at about √n items per leaf (never below ``min_leaf``); large ones keep
    at most ``max_leaves`` leaves by letting leaves grow."""
    target = min(float(leaf_size), max(float(min_leaf), math.sqrt(max(n, 1))))
    target = max(target, n / max(max_leaves, 1))
    return TreeShape(target, min_leaf, max(2, max_branch), max(1, max_depth))


def spherical_kmeans(x: np.ndarray, k: int, rng: np.random.Generator, iterations: int = 25) -> np.ndarray:
    """Cluster L2-normalised rows by cosine; returns each row's cluster (k-means++ start)."""
    n = len(x)
    centers = np.empty((k, x.shape[1]), dtype=np.float32)
    centers[0] = x[rng.integers(n)]
    gap = 1.0 - x @ centers[0]
    for c in range(1, k):
        weights = np.maximum(gap, 0.0)
        total = float(weights.sum())
        pick = rng.integers(n) if total <= 0 else rng.choice(n, p=weights / total)
        centers[c] = x[pick]
        gap = np.minimum(gap, 1.0 - x @ centers[c])
    labels = np.full(n, -1, dtype=np.int64)
    for _ in range(iterations):
        new = np.argmax(x @ centers.T, axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        sums = np.asarray(sp.csr_matrix((np.ones(n, dtype=np.float32), (labels, np.arange(n))), shape=(k, n)) @ x)
        empty = ~sums.any(axis=1)
        sums[empty] = centers[empty]
        centers = l2_normalize(sums)
    return labels


def _split(x: np.ndarray, rows: np.ndarray, shape: TreeShape, depth: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Children (member rows, largest first) of a topic, or [] when it stays a leaf."""
    m = len(rows)
    if depth >= shape.max_depth or m < 2 * shape.min_leaf or (depth > 0 and m <= 1.5 * shape.leaf_size):
        return []
    k = int(min(shape.max_branch, max(2, round(m / shape.leaf_size)), m // shape.min_leaf))
    if k < 2:
        return []
    sub = x[rows]
    labels = spherical_kmeans(sub, k, rng)
    sizes = np.bincount(labels, minlength=k)
    big = np.flatnonzero(sizes >= shape.min_leaf)
    if len(big) < 2:
        return []
    if len(big) < k:  # fold clusters too small to be a topic into their nearest kept cluster
        centers = l2_normalize(np.stack([sub[labels == c].sum(axis=0) for c in big]))
        labels = big[np.argmax(sub @ centers.T, axis=1)]
        sizes = np.bincount(labels, minlength=k)
    order = sorted(big.tolist(), key=lambda c: (-sizes[c], c))
    return [rows[labels == c] for c in order if sizes[c]]


def fit_tree(x: np.ndarray, shape: TreeShape) -> tuple[list[str], np.ndarray, np.ndarray, list[np.ndarray]]:
    """Recursive spherical k-means: (path ids, parent indices, centroids, member rows) breadth first."""
    rng = np.random.default_rng(shape.seed)
    paths: list[str] = []
    parents: list[int] = []
    members: list[np.ndarray] = []
    queue: list[tuple[int, str, np.ndarray, int]] = [(-1, "", np.arange(len(x)), 0)]
    head = 0
    while head < len(queue):
        parent, path, rows, depth = queue[head]
        head += 1
        children = _split(x, rows, shape, depth, rng)
        if depth == 0 and not children:
            children = [rows]  # an unsplittable corpus is one top-level topic
        for n, child_rows in enumerate(children):
            index = len(paths)
            child_path = f"{path}.{n}" if path else str(n)
            paths.append(f"t:{child_path}")
            parents.append(parent)
            members.append(child_rows)
            queue.append((index, child_path, child_rows, depth + 1))
    centroids = l2_normalize(np.stack([x[rows].sum(axis=0) for rows in members]))
    return paths, np.array(parents, dtype=np.int64), centroids, members


def dag_parents(tree: TopicTree, tau: float) -> dict[int, list[int]]:
    """DAG mode: other topics exactly one level up at cosine ≥ ``tau`` become extra parents.

    Parents are always one level up, so the graph stays acyclic and depths stay consistent.
    """
    out: dict[int, list[int]] = {}
    if tau <= 0 or tree.flat:
        return out
    for depth in range(2, int(tree.depth.max()) + 1):
        lower = np.flatnonzero(tree.depth == depth)
        upper = np.flatnonzero(tree.depth == depth - 1)
        sims = tree.centroids[lower] @ tree.centroids[upper].T
        for row, t in enumerate(lower.tolist()):
            extra = [int(u) for u in upper[sims[row] >= tau] if u != tree.parent[t]]
            if extra:
                out[t] = extra
    return out


# -- labels -----------------------------------------------------------------------------------


def membership(members: Sequence[np.ndarray], n: int) -> sp.csr_matrix:
    rows = np.concatenate([np.full(len(m), t) for t, m in enumerate(members)])
    cols = np.concatenate(members)
    return sp.csr_matrix((np.ones(len(cols), dtype=np.float32), (rows, cols)), shape=(len(members), n))


def distinctive_terms(counts: sp.csr_matrix, members: Sequence[np.ndarray], parent: np.ndarray,
                      id_terms: Sequence[str], allowed: set[str], top: int = 8) -> list[list[str]]:
    """Class-based TF-IDF against the siblings: a term scores high when it is frequent in the
    topic and rare in the parent's other children (top-level topics: the whole corpus), times
    its corpus IDF so that chatter common everywhere ("okay", "now") does not name topics."""
    tf = (membership(members, counts.shape[0]) @ counts).tocsr().astype(np.float64)
    total = np.asarray(counts.sum(axis=0)).ravel()
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    idf = np.log((1.0 + counts.shape[0]) / (1.0 + df))
    n_children = np.bincount(parent[parent >= 0], minlength=len(members))
    n_top = int((parent < 0).sum())
    out = []
    contexts: dict[int, np.ndarray] = {-1: total}
    for t in range(len(members)):
        row = tf.getrow(t)
        if not row.nnz:
            out.append([])
            continue
        p = int(parent[t])
        if p not in contexts:
            contexts[p] = tf.getrow(p).toarray().ravel()
        context = contexts[p]
        classes = n_children[p] if p >= 0 else n_top
        avg_words = context.sum() / max(classes, 1)
        scores = (row.data / row.data.sum()) * np.log1p(avg_words / np.maximum(context[row.indices], 1e-9)) * idf[row.indices]
        ranked = row.indices[np.lexsort((row.indices, -scores))]
        out.append([id_terms[i] for i in ranked if id_terms[i] in allowed and _readable(id_terms[i])][:top])
    return out


# Words that are common in any chat and say nothing about what a topic is about. Search keeps
# them (IDF weighs them down there); a label has three words and cannot spare one.
LABEL_CHATTER = frozenset(t for w in """
    now today yesterday tomorrow tonight week weekend morning evening recently lately soon ago first last next
    got get go going come came make made take took know think thought feel felt want say said tell told see
    saw look looking thing something anything everything lot bit kind sort way time day pretty much many well
    still even back sure thanks thank great good nice fine perfect happy glad love like awesome amazing cool
    fun wonderful yes okay hope maybe right new little talk
    """.split() for t in lexical_tokens(w))


def _readable(term: str) -> bool:
    return not term.startswith("~") and not term.isdigit() and len(term) > 2 and term not in LABEL_CHATTER


def surface_forms(stems: Iterable[str], texts: Iterable[str]) -> dict[str, str]:
    """The most frequent written word behind each stem, so labels read as words."""
    wanted = set(stems)
    seen: dict[str, Counter] = defaultdict(Counter)
    written = Counter(w for text in texts for w in words(text))
    for w, n in written.items():  # each distinct word is stemmed once
        tokens = lexical_tokens(w)
        if len(tokens) == 1 and tokens[0] in wanted:
            seen[tokens[0]][w] += n
    return {s: (seen[s].most_common(1)[0][0] if seen[s] else s) for s in wanted}


def label_of(terms: list[str], forms: dict[str, str], fallback: str) -> str:
    readable = [forms.get(t, t) for t in terms[:3]]
    return " · ".join(readable) if readable else fallback


# -- P(leaf | text) -------------------------------------------------------------------------------


def softmax(scores: np.ndarray, temperature: float, axis: int = -1) -> np.ndarray:
    """Numerically stable: the maximum is subtracted; temperature ≤ 0 gives the argmax one-hot."""
    if temperature <= 0:
        out = np.zeros_like(scores, dtype=np.float64)
        np.put_along_axis(out, np.argmax(scores, axis=axis, keepdims=True), 1.0, axis=axis)
        return out
    if scores.ndim == 1:  # a walk step's few candidates: the same arithmetic without the keepdims calls
        e = np.exp((scores - scores.max()) / temperature)
        return e / e.sum()
    z = (scores - np.max(scores, axis=axis, keepdims=True)) / temperature
    e = np.exp(z)
    return e / e.sum(axis=axis, keepdims=True)


def top_leaves(vectors: np.ndarray, tree: TopicTree, temperature: float, m: int, min_prob: float,
               block: int = 4096) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Topic–item edges from P(leaf | item) = softmax over leaves of cos(item, leaf) / temperature:
    each row's best ``m`` leaves with p ≥ ``min_prob`` (the best one always), best first, ties to
    the lower leaf.

    Rows go in blocks, in float32, and the best ``m`` are picked by repeated ``argmax`` (a
    partition of every row costs ten times more): at a million items × 1k leaves the full
    probability matrix would be four gigabytes. Returns (rows, leaf topic indices, p)."""
    n, m = len(vectors), max(1, min(m, len(tree.leaves)))
    best = np.zeros((n, m), dtype=np.int64)
    p = np.zeros((n, m), dtype=np.float64)
    centroids = tree.centroids[tree.leaves].T.astype(np.float32)
    for lo in range(0, n, block):
        z = vectors[lo:lo + block].astype(np.float32) @ centroids
        z -= z.max(axis=1, keepdims=True)
        np.exp(z / temperature if temperature > 0 else np.where(z >= 0, 0.0, -np.inf), out=z)
        z /= z.sum(axis=1, keepdims=True)
        rows = np.arange(len(z))
        for j in range(m):
            pick = np.argmax(z, axis=1)
            best[lo:lo + block, j] = pick
            p[lo:lo + block, j] = z[rows, pick]
            z[rows, pick] = -1.0
    keep = p >= min_prob
    keep[:, 0] = True
    rows = np.repeat(np.arange(n), m).reshape(n, m)
    return rows[keep], tree.leaves[best[keep]], p[keep]


def rollup(leaf_probs: np.ndarray, tree: TopicTree) -> np.ndarray:
    """Topic prior = the leaf probability mass of its subtree."""
    return tree.subtree_leaves @ leaf_probs
