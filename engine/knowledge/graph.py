"""Typed edges in sparse matrices, and Personalized PageRank over them.

Nodes are the index's item slots ``[0, n_slots)``, then entity nodes, then phrase nodes. Edges
are kept per type as endpoint lists that name items by id (positive) and entities by ``-id``
(negative). Each edge is looked up once, when a matrix first needs it, into stable numbers that
appends never change (an item's slot, an entity's or a phrase's node in a block of its own). Each
type's entries (:class:`StableEdges`) are kept in those numbers, the one form of the edges kept
across commits: taking in another process's commit costs a lookup of its new edges and their
placement by binary search, not a lookup of every edge. The walks' matrices (:class:`Adjacency`,
in CSR arrays) are the weighted sum of the types' entries moved into the current node numbers, a
range of entries at a time; they are cached until the next change.

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
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence, TypeVar

import numpy as np

from ..arrays import Column, distinct, merged, positions, summed
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


# Stable node numbers: an item's slot, ENTITY_BASE + its entity node, PHRASE_BASE + its phrase node.
# Items, entities and phrases are only ever appended (until clear()), so a stable number never
# changes; the matrices' node numbers (items, then entities, then phrases) are derived from them
# in one vectorised step, and each edge's endpoints are looked up once, not at every rebuild.
# Every stable number is below 1 << KEY_BITS, so an entry (row, column) is one int64 key whose
# order is the entry's order in the matrices too (the mapping keeps the blocks' order).
ENTITY_BASE = 1 << 30
PHRASE_BASE = 3 << 29
KEY_BITS = 31
KEY_MASK = (1 << KEY_BITS) - 1
MIX_BLOCK = 1 << 16  # at most this many entries of each type are summed and compacted at a time


@dataclass
class EdgeList:
    """Endpoints (item id > 0, entity -id < 0, or a stable phrase node) and weights, appended."""

    a: Column = field(default_factory=lambda: Column(np.int64))
    b: Column = field(default_factory=lambda: Column(np.int64))
    w: Column = field(default_factory=lambda: Column(np.float32))

    def add(self, a: Sequence[int] | np.ndarray, b: Sequence[int] | np.ndarray,
            w: Sequence[float] | np.ndarray | float = 1.0) -> None:
        a = np.asarray(a, dtype=np.int64)
        if not len(a):
            return
        self.a.extend(a)
        self.b.extend(np.asarray(b, dtype=np.int64))
        self.w.extend(np.full(len(a), w, dtype=np.float32) if np.isscalar(w) else np.asarray(w, dtype=np.float32))

    def arrays(self, start: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The edges from the ``start``-th on (views: valid until the next add)."""
        return self.a.view[start:], self.b.view[start:], self.w.view[start:]

    def __len__(self) -> int:
        return len(self.a)


@dataclass
class StableEdges:
    """One edge type's symmetric matrix in stable numbers, by its upper triangle: sorted unique
    entries (``key = row << KEY_BITS | column``, row < column), each the sum of its edges'
    weights, merged in from the type's :class:`EdgeList` as it grows; the matrices mirror it
    (:func:`_mirrored`). An edge whose item or entity is not known yet waits, and is looked up
    again next time."""

    keys: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    values: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    taken: int = 0  # edges of the raw list looked at so far
    waiting: EdgeList = field(default_factory=EdgeList)

    def merge(self, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> None:
        """Add undirected edges between stable numbers (self-loops dropped)."""
        other = a != b
        a, b, w = a[other], b[other], w[other]
        keys, values = summed(np.minimum(a, b) << KEY_BITS | np.maximum(a, b), w)
        self.keys, self.values = merged(self.keys, self.values, keys, values)


F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def _locked(method: F) -> F:
    """Serialise a method on the graph's lock: the app ingests in one thread and recalls in another."""

    @functools.wraps(method)
    def wrapper(self: "KnowledgeGraph", *args: Any, **kwargs: Any) -> Any:
        with self.lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


@dataclass
class Adjacency:
    """A symmetric sparse matrix in CSR arrays: node numbers as int32 (int64 past 2**31 entries),
    which the matrices made from it share instead of copying."""

    n: int
    indptr: np.ndarray
    columns: np.ndarray
    values: np.ndarray

    def csr(self, values: np.ndarray | None = None) -> sp.csr_matrix:
        """As a CSR matrix (of other values on the same entries, if given)."""
        return sp.csr_matrix((self.values if values is None else values, self.columns, self.indptr),
                             shape=(self.n, self.n), dtype=np.float32)

    def per_row(self, values: np.ndarray) -> np.ndarray:
        """A value per row, at each of the row's entries."""
        return np.repeat(values, np.diff(self.indptr))


class KnowledgeGraph:
    """Typed edges over items and entities; sparse matrices and PPR on demand."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # held by readers and writers; load() holds it across a rebuild
        self.clear()

    # -- building -----------------------------------------------------------------------------

    @_locked
    def clear(self) -> None:
        self.edges: dict[str, EdgeList] = {t: EdgeList() for t in EDGE_TYPES}  # phrase: (PHRASE_BASE + node, item id)
        self._entity_ids = Column(np.int64)  # entity node n ↔ entity id
        self._entity_node: dict[int, int] = {}
        self._phrase_names: list[str] = []  # phrase node n ↔ phrase
        self._phrase_node: dict[str, int] = {}
        self._phrase_pairs: np.ndarray | None = None  # the phrase edges' (node << 32 | item id), sorted; made on use
        self._stable: dict[str, StableEdges] = {t: StableEdges() for t in EDGE_TYPES}
        self._stable_for: weakref.ref | None = None  # the index whose slots the stable numbers are
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
            node = self._phrase_node.get(phrase)
            if node is None:
                node = self._phrase_node[phrase] = len(self._phrase_names)
                self._phrase_names.append(phrase)
            nodes.append(node)
            items.append(item_id)
        if not nodes:
            return
        keys = np.asarray(nodes, dtype=np.int64) << 32 | np.asarray(items, dtype=np.int64)
        keys = keys[np.sort(np.unique(keys, return_index=True)[1])]  # each pair once, in the order given
        known = self._known_phrase_pairs()
        at, seen = positions(known, keys)
        fresh = keys[~seen]
        if len(fresh):
            order = np.argsort(fresh)
            self._phrase_pairs = np.insert(known, at[~seen][order], fresh[order])
            self.edges["phrase"].add(PHRASE_BASE + (fresh >> 32), fresh & 0xFFFFFFFF)
            self.changed()

    def _known_phrase_pairs(self) -> np.ndarray:
        """The phrase edges as sorted (node << 32 | item id): made from the edges when a phrase is
        first added after a restore (an open that only recalls never needs them), then kept."""
        if self._phrase_pairs is None:
            nodes, items = self.edges["phrase"].arrays()[:2]
            self._phrase_pairs = np.sort((nodes - PHRASE_BASE) << 32 | items)
        return self._phrase_pairs

    # -- saved beside the store (the areas' file: engine/index_file.py) -------------------------

    @_locked
    def arrays(self) -> tuple[dict[str, np.ndarray], list[str]]:
        """The entity ids and every type's edges (views), and the phrases by node, as
        :meth:`restore` takes them back."""
        out = {"entities": self.entity_ids}
        for kind, edges in self.edges.items():
            out.update(zip((f"{kind}.a", f"{kind}.b", f"{kind}.w"), edges.arrays()))
        return out, list(self._phrase_names)

    @_locked
    def restore(self, arrays: dict[str, np.ndarray], phrases: list[str]) -> None:
        """The graph :meth:`arrays` gave (the arrays adopted, not copied); ValueError when they
        do not fit together."""
        self.clear()
        entities = arrays["entities"]
        self._entity_ids = Column(np.int64, values=entities)
        self._entity_node = dict(zip(entities.tolist(), range(len(entities))))
        for kind in EDGE_TYPES:
            a, b, w = (arrays[f"{kind}.{end}"] for end in "abw")
            if not len(a) == len(b) == len(w):
                raise ValueError(f"saved {kind} edges do not fit together")
            self.edges[kind] = EdgeList(Column(np.int64, values=a), Column(np.int64, values=b), Column(np.float32, values=w))
        nodes = self.edges["phrase"].a.view
        if len(nodes) and (nodes.min() < PHRASE_BASE or nodes.max() >= PHRASE_BASE + len(phrases)):
            raise ValueError("saved phrase edges name phrases that are not saved")
        self._phrase_names = list(phrases)
        self._phrase_node = dict(zip(self._phrase_names, range(len(phrases))))
        self.changed()

    @property
    def entity_ids(self) -> np.ndarray:
        return self._entity_ids.view

    def changed(self) -> None:
        self._cache.clear()

    def entity_node(self, entity_id: int) -> int | None:
        return self._entity_node.get(entity_id)

    def n_nodes(self, index: "Index") -> int:
        return index.n_slots + len(self.entity_ids) + len(self._phrase_names)

    def phrase_of(self, node: int, index: "Index") -> str:
        """The phrase of a phrase node (a node number past the entities)."""
        return self._phrase_names[node - index.n_slots - len(self.entity_ids)]

    # -- stable node numbers ------------------------------------------------------------------

    def _stable_nodes(self, refs: np.ndarray, index: "Index") -> np.ndarray:
        """Stable numbers of refs (items by id, entities by -id, phrase nodes as they are); -1
        where the item or the entity is not known (yet)."""
        out = np.where(refs >= PHRASE_BASE, refs, -1)
        items = (refs > 0) & (refs < PHRASE_BASE)
        out[items] = index.slot_of.slots_of(refs[items])
        entities = refs < 0
        if entities.any() and len(self.entity_ids):
            nodes = _lookup_table(self.entity_ids, int((-refs[entities]).max()))[-refs[entities]]
            out[entities] = np.where(nodes >= 0, ENTITY_BASE + nodes, -1)
        return out

    def _take_in(self, kind: str, index: "Index") -> StableEdges:
        """One edge type's entries, with the edges added since the last call (and those still
        waiting) given stable numbers and merged in."""
        if self._stable_for is None or self._stable_for() is not index:
            self._stable = {t: StableEdges() for t in EDGE_TYPES}
            self._stable_for = weakref.ref(index)
        stable, raw = self._stable[kind], self.edges[kind]
        if stable.taken < len(raw) or len(stable.waiting):
            new = [np.concatenate(pair) for pair in zip(stable.waiting.arrays(), raw.arrays(stable.taken))]
            stable.taken, stable.waiting = len(raw), EdgeList()
            a, b = self._stable_nodes(new[0], index), self._stable_nodes(new[1], index)
            known = (a >= 0) & (b >= 0)
            stable.merge(a[known], b[known], new[2][known])
            stable.waiting.add(new[0][~known], new[1][~known], new[2][~known])
        return stable

    def _node_numbers(self, stable: np.ndarray, index: "Index") -> np.ndarray:
        """Matrix node numbers of stable numbers: items, then entities, then phrases (each
        number moved by its block's offset)."""
        offsets = np.array([0, index.n_slots - ENTITY_BASE, index.n_slots + len(self.entity_ids) - PHRASE_BASE])
        block = (stable >= ENTITY_BASE).view(np.int8) + (stable >= PHRASE_BASE).view(np.int8)
        return stable + offsets[block]

    # -- matrices -----------------------------------------------------------------------------

    def _entries(self, kind: str, index: "Index") -> tuple[np.ndarray, np.ndarray]:
        """One edge type's entries in stable numbers, sorted keys and summed weights (semantic
        ones are computed from the latent space, and kept until it or the items change)."""
        if kind != "semantic":
            stable = self._take_in(kind, index)
            return stable.keys, stable.values
        return self._kept(("semantic", *_state(index)), lambda: _semantic_entries(index))

    def _compact(self, entries: list[tuple[np.ndarray, np.ndarray, np.float32]], index: "Index") -> Adjacency:
        """The weighted sum of some types' entries in stable numbers (keys, values, weight; each
        entry summed in the list's order) over the current node space: live endpoints only, and
        no phrase stated by fewer than 2 or more than PHRASE_MAX_ITEMS items (stored or not).
        Summed and compacted a range of keys at a time, into arrays as long as every entry (the
        room of the entries left out or summed together is never written, so never resident):
        no sum over every entry is held in stable numbers, nor an int64 array over every entry.
        The entries are the upper triangle; the matrix is it and its mirror."""
        n, total = self.n_nodes(index), sum(len(keys) for keys, _, _ in entries)
        wide = 2 * total >= 2**31 or n >= 2**31
        columns, kept = np.empty(total, dtype=np.int64 if wide else np.int32), np.empty(total, dtype=np.float32)
        counts, taken = np.zeros(n, dtype=np.int64), 0
        size = np.bincount(self.edges["phrase"].a.view - PHRASE_BASE, minlength=len(self._phrase_names))
        dropped = (size < 2) | (size > PHRASE_MAX_ITEMS)
        for keys, values in _key_ranges(entries):
            rows, cols = keys >> KEY_BITS, keys & KEY_MASK
            ok = np.ones(len(keys), dtype=bool)
            if index.n_items < index.n_slots:  # else every item is live
                ok &= _live(rows, index) & _live(cols, index)
            for stable in (rows, cols):
                phrases = np.flatnonzero(stable >= PHRASE_BASE)
                ok[phrases] &= ~dropped[stable[phrases] - PHRASE_BASE]
            end = taken + int(np.count_nonzero(ok))
            columns[taken:end] = self._node_numbers(cols[ok], index)
            kept[taken:end] = values[ok]
            nodes = self._node_numbers(rows[ok], index)  # ascending: the block's rows, each in one run
            runs = np.flatnonzero(np.concatenate([[True], nodes[1:] != nodes[:-1]])) if len(nodes) else nodes
            counts[nodes[runs]] += np.diff(np.append(runs, len(nodes)))
            taken = end
        indptr = np.zeros(n + 1, dtype=columns.dtype)
        np.cumsum(counts, out=indptr[1:])
        return _mirrored(Adjacency(n, indptr, columns[:taken], kept[:taken]))

    @_locked
    def matrix(self, kind: str, index: "Index") -> sp.csr_matrix:
        """The symmetric weighted adjacency of one edge type over the current node space: live
        endpoints only, no self-loops, each entry the sum of its edges' weights."""
        return self._compact([(*self._entries(kind, index), np.float32(1.0))], index).csr()

    def _mix(self, weights: dict[str, float], index: "Index") -> Adjacency:
        """The weighted sum of the edge types' matrices (each entry summed in the weights' order),
        made again from each type's entries after a change: the types' entries are the one form
        of the edges kept across commits."""
        return self._kept(("mix", *_weighed(weights, index)), lambda: self._compact(
            [(*self._entries(kind, index), np.float32(w)) for kind, w in weights.items() if w > 0], index))

    def _of_mix(self, what: str, weights: dict[str, float], index: "Index", made: Callable[[Adjacency], T]) -> T:
        """``made`` of the weighted mix, kept with it."""
        return self._kept((what, *_weighed(weights, index)), lambda: made(self._mix(weights, index)))

    def _kept(self, key: tuple, build: Callable[[], T]) -> T:
        """What ``build`` makes, kept under ``key`` until the edges change (the keys hold the
        index's state: :func:`_state`)."""
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = build()
        return hit  # type: ignore[return-value]

    @_locked
    def transition(self, weights: dict[str, float], index: "Index") -> sp.csr_matrix:
        """Column-stochastic transpose of the weighted mix (rows of dangling nodes stay empty):
        entry (u, v) is mix(v, u) / degree(v), and the mix is symmetric."""
        return self._of_mix("transition", weights, index,
                            lambda mix: mix.csr(mix.values * _inverse_degree(mix)[mix.columns]))

    @_locked
    def forward(self, weights: dict[str, float], index: "Index") -> sp.csr_matrix:
        """Row-stochastic form of :meth:`transition` (row u: where a step from u goes), for push."""
        return self._of_mix("forward", weights, index,
                            lambda mix: mix.csr(mix.values * mix.per_row(_inverse_degree(mix))))

    @_locked
    def degrees(self, index: "Index", weights: dict[str, float]) -> np.ndarray:
        """Number of neighbours of every node under the mix (for seed specificity); kept with
        the matrices, as every query asks for it."""
        return self._of_mix("degrees", weights, index, lambda mix: np.diff(mix.indptr))


def _mirrored(upper: Adjacency) -> Adjacency:
    """The symmetric matrix of an upper triangle (no diagonal): each row's entries left of the
    diagonal (the mirror's: the triangle's column, read down) then right of it, columns
    ascending, every entry kept as it is (a 0 too: a neighbour counts in the degrees)."""
    lower = upper.csr().T.tocsr()  # a transpose by counting: each row's columns ascending
    left, right = np.diff(lower.indptr), np.diff(upper.indptr)
    indptr = np.zeros(upper.n + 1, dtype=upper.indptr.dtype)
    np.cumsum(left + right, out=indptr[1:])
    from_left = np.repeat(np.tile(np.array([True, False]), upper.n), np.column_stack([left, right]).ravel())
    columns, values = np.empty(len(from_left), dtype=upper.columns.dtype), np.empty(len(from_left), dtype=np.float32)
    columns[from_left], values[from_left] = lower.indices, lower.data
    columns[~from_left], values[~from_left] = upper.columns, upper.values
    return Adjacency(upper.n, indptr, columns, values)


def _semantic_entries(index: "Index") -> tuple[np.ndarray, np.ndarray]:
    """The semantic edges' entries (items only: their node numbers are their slots), from the
    latent space's nearest neighbours: the symmetric matrix's upper triangle."""
    m = semantic_knn(index, index.n_slots)
    rows = np.repeat(np.arange(index.n_slots, dtype=np.int64), np.diff(m.indptr))
    upper = rows < m.indices
    return summed(rows[upper] << KEY_BITS | m.indices[upper], m.data[upper])


def _inverse_degree(mix: Adjacency) -> np.ndarray:
    """1 / each node's weighted degree (0 for none)."""
    degree = np.asarray(mix.csr().sum(axis=1)).ravel()
    return np.where(degree > 0, 1.0 / np.where(degree > 0, degree, 1.0), 0.0).astype(np.float32)


def _weighed(weights: dict[str, float], index: "Index") -> tuple:
    """The part of a cache key a mix of the edge types depends on: its weights and :func:`_state`."""
    return (tuple(sorted(weights.items())), *_state(index))


def _state(index: "Index") -> tuple[int, int, int]:
    """What the cached matrices depend on besides the edges: slots, live items, the latent fit."""
    return index.n_slots, index.n_items, index.lsa_fitted_on


def _live(stable: np.ndarray, index: "Index") -> np.ndarray:
    """Whether each stable node is there: an entity or a phrase, or a live item."""
    out = stable >= ENTITY_BASE
    items = ~out
    out[items] = index.alive[stable[items]]
    return out


def _lookup_table(ids: np.ndarray, max_ref: int) -> np.ndarray:
    """Dense array mapping an id to its position in ``ids`` (-1 if absent)."""
    size = max(int(ids.max()) if len(ids) else 0, max_ref) + 1
    table = np.full(size, -1, dtype=np.int64)
    table[ids] = np.arange(len(ids))
    return table


def _key_ranges(entries: list[tuple[np.ndarray, np.ndarray, np.float32]]) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The weighted sum of sorted key lists (keys, values, weight), a range of keys at a time,
    ascending: each range holds at most MIX_BLOCK keys of each list, and each key's values are
    added in the lists' order (as merging the whole lists one after another adds them). No
    lists (every weight 0) is no key."""
    if not entries:
        return
    bounds = distinct(np.concatenate([keys[MIX_BLOCK::MIX_BLOCK] for keys, _, _ in entries] + [np.zeros(0, np.int64)]))
    starts = [np.concatenate([[0], np.searchsorted(keys, bounds), [len(keys)]]) for keys, _, _ in entries]
    for r in range(len(bounds) + 1):
        parts = [(values[at[r]:at[r + 1]], w) for (_, values, w), at in zip(entries, starts)]
        every = np.concatenate([keys[at[r]:at[r + 1]] for (keys, _, _), at in zip(entries, starts)])
        order = np.argsort(every, kind="stable")  # sorted runs, one per list: merged, not sorted again
        ordered = every[order]
        first = np.ones(len(ordered), dtype=bool)
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        union, where = ordered[first], np.empty(len(every), dtype=np.int64)
        where[order] = np.cumsum(first) - 1  # each listed key's place in the union
        sums, taken = np.zeros(len(union), dtype=np.float32), 0
        for values, w in parts:
            sums[where[taken:taken + len(values)]] += values * w  # a list's keys are distinct: one add each
            taken += len(values)
        yield union, sums


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
