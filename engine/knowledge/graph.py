"""Typed edges in sparse matrices, and Personalized PageRank over them.

Nodes are the index's item slots ``[0, n_slots)``, then entity nodes, then phrase nodes. Edges
are kept per type as endpoint lists that name items by id (positive) and entities by ``-id``
(negative), so adding an item never renumbers anything; :meth:`KnowledgeGraph.matrix` turns them
into one symmetric CSR matrix per type over the current slots (cached until the next change).

Edge types: ``mention`` (entity–item), ``title`` (a passage and the entity it is about),
``link`` (tags and explicit links, entity–item), ``fact`` (a fact's subject entity and the
entities its object names), ``phrase`` (a phrase node and the items that state a fact about it:
the head word of a fact's object or of a subject that is no name, so the turns that say "adoption
agencies" meet without "adoption" being an entity), ``synonym`` (entity–entity), ``next``
(consecutive items of one session or section), ``episode`` (items of one episode), ``semantic``
(k nearest items in the latent space; built on demand) and ``coaccess`` (items used together; fed
by the ranker through :meth:`KnowledgeGraph.add_edges`).

The walks over these matrices are :mod:`engine.pagerank`'s.
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeVar

import numpy as np

from ..arrays import Column
from ..lazy import sparse as sp

if TYPE_CHECKING:
    from ..index import Index

EDGE_TYPES = ("mention", "title", "link", "fact", "phrase", "synonym", "next", "episode", "semantic", "coaccess")
# Mixture weights of the default walk, tuned on the dev multi-hop subsets (see the report); phrase
# and the object side of fact measured on LoCoMo and the multi-hop sets (dev data, see the README).
DEFAULT_WEIGHTS = {"mention": 1.0, "title": 2.0, "link": 1.0, "fact": 0.5, "phrase": 0.5, "synonym": 1.0, "next": 0.3,
                   "episode": 0.3, "semantic": 0.0, "coaccess": 1.0}
SEMANTIC_K = 5
PHRASE_MAX_ITEMS = 20  # a phrase stated by more items joins too much to say anything (and costs edges)


@dataclass
class EdgeList:
    """Endpoints (item id > 0, entity -id < 0) and weights, appended in batches."""

    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=list)

    def add(self, a: Sequence[int], b: Sequence[int], w: Sequence[float] | float = 1.0) -> None:
        a = np.asarray(a, dtype=np.int64)
        if not len(a):
            return
        weights = np.full(len(a), w, dtype=np.float32) if np.isscalar(w) else np.asarray(w, dtype=np.float32)
        self.parts.append((a, np.asarray(b, dtype=np.int64), weights))

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self.parts:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, np.zeros(0, dtype=np.float32)
        if len(self.parts) > 1:
            self.parts = [tuple(np.concatenate(x) for x in zip(*self.parts))]  # type: ignore[list-item]
        return self.parts[0]

    def __len__(self) -> int:
        return sum(len(p[0]) for p in self.parts)


F = TypeVar("F", bound=Callable[..., Any])


def _locked(method: F) -> F:
    """Serialise a method on the graph's lock: the app ingests in one thread and recalls in another."""

    @functools.wraps(method)
    def wrapper(self: "KnowledgeGraph", *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class KnowledgeGraph:
    """Typed edges over items and entities; sparse matrices and PPR on demand."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # held by readers and writers; load() holds it across a rebuild
        self.clear()

    # -- building -----------------------------------------------------------------------------

    @_locked
    def clear(self) -> None:
        self.edges: dict[str, EdgeList] = {t: EdgeList() for t in EDGE_TYPES}
        self._entity_ids = Column(np.int64)  # entity node n ↔ entity id
        self._entity_node: dict[int, int] = {}
        self.phrases: dict[str, set[int]] = {}  # phrase → ids of the items stating it
        self._phrase_names: list[str] = []  # phrase node n ↔ phrase
        self._phrase_node: dict[str, int] = {}
        self._pair_phrase = Column(np.int64)  # every (phrase node, item id) pair, in the order added:
        self._pair_item = Column(np.int64)  # the phrase matrix is built from them with numpy alone
        self._cache: dict[object, object] = {}

    @_locked
    def add_entities(self, ids: Sequence[int]) -> None:
        fresh = [i for i in ids if i not in self._entity_node]
        for i in fresh:
            self._entity_node[i] = len(self._entity_node)
        if fresh:
            self._entity_ids.extend(fresh)
            self.changed()

    @_locked
    def add_edges(self, kind: str, a: Sequence[int], b: Sequence[int], w: Sequence[float] | float = 1.0) -> None:
        """Add undirected edges of one type; items by id, entities by ``-id``."""
        if kind not in self.edges:
            raise ValueError(f"unknown edge type {kind!r}; known: {', '.join(EDGE_TYPES)}")
        if kind == "phrase":
            raise ValueError("phrase edges are added with add_phrases")
        self.edges[kind].add(a, b, w)
        self.changed()

    @_locked
    def add_phrases(self, pairs: Iterable[tuple[str, int]]) -> None:
        """Link items (by id) to phrase nodes, made on first use; a pair seen before adds nothing."""
        nodes, items = [], []
        for phrase, item_id in pairs:
            ids = self.phrases.get(phrase)
            if ids is None:
                ids = self.phrases[phrase] = set()
                self._phrase_node[phrase] = len(self._phrase_names)
                self._phrase_names.append(phrase)
            if item_id not in ids:
                ids.add(item_id)
                nodes.append(self._phrase_node[phrase])
                items.append(item_id)
        if nodes:
            self._pair_phrase.extend(nodes)
            self._pair_item.extend(items)
            self.changed()

    @property
    def entity_ids(self) -> np.ndarray:
        return self._entity_ids.view

    def changed(self) -> None:
        self._cache.clear()

    def entity_node(self, entity_id: int) -> int | None:
        return self._entity_node.get(entity_id)

    def n_nodes(self, index: "Index") -> int:
        return index.n_slots + len(self.entity_ids) + len(self.phrases)

    def phrase_of(self, node: int, index: "Index") -> str:
        """The phrase of a phrase node (a node number past the entities)."""
        return self._phrase_names[node - index.n_slots - len(self.entity_ids)]

    def has_edges(self, kind: str) -> bool:
        """Whether any edge of this type exists (semantic ones are built on demand: always)."""
        return kind == "semantic" or bool(self.phrases if kind == "phrase" else self.edges[kind])

    # -- matrices -----------------------------------------------------------------------------

    def _nodes(self, refs: np.ndarray, index: "Index") -> np.ndarray:
        """Node numbers of refs (items by id, entities by -id); -1 where the node is gone."""
        out = np.full(len(refs), -1, dtype=np.int64)
        items = refs > 0
        if items.any() and index.n_slots:
            lookup = _lookup_table(index.item_ids, int(refs[items].max()))
            slots = lookup[refs[items]]
            ok = slots >= 0
            slots[ok] = np.where(index.alive[slots[ok]], slots[ok], -1)
            out[items] = slots
        ents = ~items
        if ents.any() and len(self.entity_ids):
            lookup = _lookup_table(self.entity_ids, int((-refs[ents]).max()))
            nodes = lookup[-refs[ents]]
            out[ents] = np.where(nodes >= 0, nodes + index.n_slots, -1)
        return out

    @_locked
    def matrix(self, kind: str, index: "Index") -> sp.csr_matrix:
        """The symmetric weighted adjacency of one edge type over the current node space."""
        key = ("matrix", kind, *_state(index))
        hit = self._cache.get(key)
        if hit is not None:
            return hit  # type: ignore[return-value]
        n = self.n_nodes(index)
        if kind == "semantic":
            m = semantic_knn(index, n)
        elif kind == "phrase":
            m = self._phrase_matrix(index, n)
        else:
            a, b, w = self.edges[kind].arrays()
            na, nb = self._nodes(a, index), self._nodes(b, index)
            ok = (na >= 0) & (nb >= 0) & (na != nb)
            rows = np.concatenate([na[ok], nb[ok]])
            cols = np.concatenate([nb[ok], na[ok]])
            m = sp.csr_matrix((np.concatenate([w[ok], w[ok]]), (rows, cols)), shape=(n, n), dtype=np.float32)
            m.sum_duplicates()
        self._cache[key] = m
        return m

    def _phrase_matrix(self, index: "Index", n: int) -> sp.csr_matrix:
        """Phrase node – item edges (weight 1) for the phrases stated by 2 to PHRASE_MAX_ITEMS items."""
        pair_phrase, pair_item = self._pair_phrase.view, self._pair_item.view
        size = np.bincount(pair_phrase, minlength=len(self._phrase_names))[pair_phrase]  # items stating each pair's phrase
        kept = (size >= 2) & (size <= PHRASE_MAX_ITEMS)
        if not kept.any():
            return sp.csr_matrix((n, n), dtype=np.float32)
        phrase_nodes = index.n_slots + len(self.entity_ids) + pair_phrase[kept]
        items = self._nodes(pair_item[kept], index)
        ok = items >= 0
        rows = np.concatenate([phrase_nodes[ok], items[ok]])
        cols = np.concatenate([items[ok], phrase_nodes[ok]])
        return sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, n), dtype=np.float32)

    @_locked
    def transition(self, weights: dict[str, float], index: "Index") -> sp.csr_matrix:
        """Column-stochastic transpose of the weighted mix (rows of dangling nodes stay empty)."""
        key = ("transition", tuple(sorted(weights.items())), *_state(index))
        hit = self._cache.get(key)
        if hit is not None:
            return hit  # type: ignore[return-value]
        n = self.n_nodes(index)
        mix = sp.csr_matrix((n, n), dtype=np.float32)
        for kind, w in weights.items():
            if w > 0:
                mix = mix + self.matrix(kind, index) * np.float32(w)
        degree = np.asarray(mix.sum(axis=1)).ravel()
        inv = np.where(degree > 0, 1.0 / np.where(degree > 0, degree, 1.0), 0.0).astype(np.float32)
        t = (sp.diags(inv) @ mix).T.tocsr().astype(np.float32)
        self._cache[key] = t
        return t

    @_locked
    def forward(self, weights: dict[str, float], index: "Index") -> sp.csr_matrix:
        """Row-stochastic form of :meth:`transition` (row u: where a step from u goes), for push."""
        key = ("forward", tuple(sorted(weights.items())), *_state(index))
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = self.transition(weights, index).T.tocsr()
        return hit  # type: ignore[return-value]

    @_locked
    def degrees(self, index: "Index", weights: dict[str, float]) -> np.ndarray:
        """Number of neighbours of every node under the mix (for seed specificity)."""
        key = ("degree", tuple(sorted(weights.items())), *_state(index))
        hit = self._cache.get(key)
        if hit is None:
            t = self.transition(weights, index)
            hit = self._cache[key] = np.diff(t.tocsc().indptr)
        return hit  # type: ignore[return-value]


def _state(index: "Index") -> tuple[int, int, int]:
    """What the cached matrices depend on besides the edges: slots, live items, the latent fit."""
    return index.n_slots, index.n_items, index.lsa_fitted_on


def _lookup_table(ids: np.ndarray, max_ref: int) -> np.ndarray:
    """Dense array mapping an id to its position in ``ids`` (-1 if absent)."""
    size = max(int(ids.max()) if len(ids) else 0, max_ref) + 1
    table = np.full(size, -1, dtype=np.int64)
    table[ids] = np.arange(len(ids))
    return table


def semantic_knn(index: "Index", n_nodes: int, k: int = SEMANTIC_K, min_cos: float = 0.3) -> sp.csr_matrix:
    """Each live item linked to its ``k`` nearest live items in the latent space (cosine weights)."""
    vectors = index.lsa_vectors
    live = np.flatnonzero(index.alive[: len(vectors)])
    if len(live) <= k:
        return sp.csr_matrix((n_nodes, n_nodes), dtype=np.float32)
    vecs = vectors.rows(live)
    rows, cols, vals = [], [], []
    for start in range(0, len(live), 2048):
        block = vecs[start:start + 2048] @ vecs.T
        np.fill_diagonal(block[:, start:start + 2048], -1.0)
        nearest = np.argpartition(-block, k, axis=1)[:, :k]
        sims = np.take_along_axis(block, nearest, axis=1)
        keep = sims >= min_cos
        rows.append(np.repeat(live[start:start + len(block)], k)[keep.ravel()])
        cols.append(live[nearest][keep])
        vals.append(sims[keep])
    r, c, v = np.concatenate(rows), np.concatenate(cols), np.concatenate(vals).astype(np.float32)
    out = sp.csr_matrix((np.concatenate([v, v]), (np.concatenate([r, c]), np.concatenate([c, r]))),
                        shape=(n_nodes, n_nodes), dtype=np.float32)
    out.data = np.minimum(out.data, 1.0)
    return out
