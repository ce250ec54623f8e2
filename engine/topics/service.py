"""``mem.topics``: the topic tree as an area of the engine, with its browse and walk API.

Build: live items → the tree's own latent space → recursive spherical k-means → labels → leaf
assignments and transitions, written in one transaction (a killed rebuild leaves the old tree).
Ingest: new items are assigned to leaves inside the ingest transaction; once the drift (items
added and removed since the build, relative to the build) reaches ``topic_rebuild_drift`` the
tree is rebuilt after the commit. Everything a query needs is stored, so a reopened store walks
exactly like the live one.

Recall: the area adds the ``walk`` signal and the strategies ``walk`` and ``hybrid_walk``, reads
the query options ``intent``, ``seed`` and ``trace``, and reports the intent and the walk's steps.
"""

from __future__ import annotations

import logging
import time
import zlib
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from ..area import WHOLE, Area, Piece
from ..array_file import ArrayFile
from ..arrays import Column, distinct, positions
from ..dense import one_blas_thread
from ..errors import RebuildCancelled, RequestError
from ..heap import give_back_freed
from ..pipeline import Hit, Query, Ranking, Recall, Signal, Signals, Strategy
from ..recall import hybrid, single_signal
from ..lazy import sparse as sp
from ..records import Item, Source, TopicCounts, TopicStats
from ..vectors import VectorIndex
from ..store.topics import TopicNodeRow, TopicTreeRow
from ..text import lexical_tokens
from .graph import TopicGraph, projection
from .intents import IntentReport, check_intent, classifier, resolve_intent
from .markov import Transition, TransitionModel, group_codes, source_transitions
from .navigate import ContextWindow, Policy, Walk, WalkStep, backfill, context_windows, item_scores, run_walk
from .tree import (TopicSpace, TopicTree, dag_parents, distinctive_terms, fit_tree, label_of, shape_for, surface_forms,
                   top_leaves)

if TYPE_CHECKING:
    from ..area import Engine

Progress = Callable[[int, int, str], None]
log = logging.getLogger(__name__)
# A rebuild fits the space, the clusters and the labels on an even sample of at most this many
# live items (every benchmark corpus is smaller), then assigns every item to the leaves.
TOPIC_FIT_ITEMS = 20_000
LABEL_TEXTS = 3000  # items whose words give the labels their written forms
ASSIGN_BLOCK = 50_000


@dataclass
class TopicInfo:
    """One topic as the app and the CLI show it."""

    id: str
    parent: str | None
    depth: int
    label: str
    terms: list[str]
    size: int  # live items whose best leaf lies in this topic's subtree
    children: list[str] = field(default_factory=list)
    extra_parents: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Neighbour:
    topic: TopicInfo
    relation: str
    weight: float


@dataclass
class BuildReport:
    topics: int
    leaves: int
    depth: int
    items: int
    seconds: float
    message: str = ""

    def summary(self) -> str:
        text = f"{self.topics} topic(s), {self.leaves} leaves, depth {self.depth}, over {self.items} item(s) in {self.seconds:.2f}s"
        return f"{text}; {self.message}" if self.message else text


@dataclass
class TopicState:
    """The loaded tree and everything derived from it for queries."""

    tree: TopicTree
    graph: TopicGraph
    space: TopicSpace | None
    markov: TransitionModel
    vectors: VectorIndex
    n_at_build: int
    max_item_id: int
    built_at: float
    projection: sp.csr_matrix | None = None  # topic → item weights; rebuilt when items change
    # assignments (item slot, leaf topic, weight), each item's best leaf first; appended per batch
    _slots: Column = field(default_factory=lambda: Column(np.int64))
    _leaves: Column = field(default_factory=lambda: Column(np.int64))
    _weights: Column = field(default_factory=lambda: Column(np.float64))

    @property
    def slots(self) -> np.ndarray:
        return self._slots.view

    @property
    def leaves(self) -> np.ndarray:
        return self._leaves.view

    @property
    def weights(self) -> np.ndarray:
        return self._weights.view

    def assign(self, slots: np.ndarray, leaves: np.ndarray, weights: np.ndarray) -> None:
        self._slots.extend(slots)
        self._leaves.extend(leaves)
        self._weights.extend(weights)
        self.projection = None


def group_of(item: Item) -> object:
    """Items in the same session (conversations) or top section (documents) belong together."""
    heading = item.meta.get("heading_path") or []
    return item.meta.get("session") or (heading[0] if heading else None)


def _rows(item_ids: np.ndarray, leaves: np.ndarray, weights: np.ndarray) -> Iterator[tuple[int, int, float]]:
    """Assignment rows for the store, made ``ASSIGN_BLOCK`` at a time: a rebuild's rows as
    Python objects all at once would be the largest thing it holds."""
    for lo in range(0, len(item_ids), ASSIGN_BLOCK):
        hi = lo + ASSIGN_BLOCK
        yield from zip(item_ids[lo:hi].tolist(), leaves[lo:hi].tolist(), weights[lo:hi].tolist())


class TopicsArea(Area):
    name = "topics"
    deferred = True

    def __init__(self, mem: Engine) -> None:
        super().__init__(mem)
        self.state: TopicState | None = None
        # one ingest's leaves and moves, from on_ingest (in the transaction) to on_indexed (after it)
        self._pending: tuple[list[int], np.ndarray | None, np.ndarray, np.ndarray, np.ndarray, list[Transition],
                             list[Transition]] | None = None
        self._source_ended = True  # whether the last write read its source to the end (a piece may not)

    # -- lifecycle ----------------------------------------------------------------------------

    def load(self) -> None:
        store = self.mem.store
        self._build_state(lambda: TransitionModel(store.topic_transitions()))
        if self.state is not None:
            self._add_stored_assignments(store.topic_assignments(), np.flatnonzero(self.mem.index.ready))

    def _build_state(self, markov: Callable[[], TransitionModel], vectors: Callable[[], VectorIndex | None] = lambda: None) -> None:
        """The state of the stored tree (no assignment yet), with its transition counts and its
        items' vectors from the store (:meth:`load`) or from the saved state (:meth:`restore`)."""
        classifier(self.settings.intent_min_confidence)  # built here, not in the first query's walk
        store, index = self.mem.store, self.mem.index
        row = store.topic_tree()
        if row is None:
            self.state = None
            return
        nodes = store.topic_nodes()
        dim = next((len(n.centroid) for n in nodes if n.centroid is not None), 0)
        tree = TopicTree(
            paths=[n.path for n in nodes], parent=np.array([n.parent for n in nodes], dtype=np.int64),
            centroids=np.stack([n.centroid for n in nodes]) if dim else np.zeros((len(nodes), 0), dtype=np.float32),
            labels=[n.label for n in nodes], terms=[n.terms for n in nodes],
            extra_parents={n.idx: n.extra_parents for n in nodes if n.extra_parents}, message=row.message,
        )
        space = TopicSpace.from_bytes(row.space, row.space_terms) if row.space else None
        live = np.flatnonzero(index.ready)
        item_vectors = vectors()
        if item_vectors is None:
            item_vectors = VectorIndex()
            if space is not None and len(live):
                space.bind(index.vocab)
                for lo in range(0, len(live), ASSIGN_BLOCK):  # in blocks: a million at once wants gigabytes
                    item_vectors.set(live[lo:lo + ASSIGN_BLOCK], space.transform(index.counts_matrix(live[lo:lo + ASSIGN_BLOCK])))
        self.state = TopicState(tree, TopicGraph(tree, self.settings.topic_neighbors, self.settings.topic_neighbor_min_cos),
                                space, markov(), item_vectors, row.n_items, row.max_item_id, row.built_at)

    # -- saved beside the store (the areas' file: engine/index_file.py) -----------------------

    def saved(self) -> ArrayFile | None:
        """The transition counts (one row per distinct move: the store holds one per source),
        the live items' assignments by item id, and the items' vectors with the item ids of
        their slots (adopted at a restore only when the index has the same slots)."""
        st, index = self.state, self.mem.index
        if st is None:
            return None
        ids = index.item_ids[st.slots]
        live = index.alive[st.slots]
        order = np.lexsort((st.leaves[live], -st.weights[live], ids[live]))  # as the store reads them
        return ArrayFile({"built_at": st.built_at}, {
            **{f"markov.{k}": a for k, a in st.markov.arrays().items()},
            "assigned.items": ids[live][order], "assigned.leaves": st.leaves[live][order],
            "assigned.weights": st.weights[live][order],
            **{f"vectors.{k}": a for k, a in st.vectors.arrays().items()}, "vectors.item_ids": index.item_ids[: len(st.vectors)]})

    def restore(self, saved: ArrayFile) -> None:
        arrays, index = saved.arrays, self.mem.index
        row = self.mem.store.topic_tree()
        if row is None or saved.meta.get("built_at") != row.built_at:
            raise ValueError("saved for another topic tree")

        def vectors() -> VectorIndex | None:
            slot_ids = arrays["vectors.item_ids"]
            if len(slot_ids) > len(index.item_ids) or not np.array_equal(slot_ids, index.item_ids[: len(slot_ids)]):
                return None  # the index's slots are not those saved: the vectors are computed again
            return VectorIndex.restore({k[len("vectors."):]: a for k, a in arrays.items() if k.startswith("vectors.")
                                        and k != "vectors.item_ids"})

        self._build_state(lambda: TransitionModel.restore({k[len("markov."):]: a for k, a in arrays.items() if k.startswith("markov.")}),
                          vectors)
        ids, leaves, weights = arrays["assigned.items"], arrays["assigned.leaves"], arrays["assigned.weights"]
        if self.state is None or not len(ids) == len(leaves) == len(weights):
            raise ValueError("saved assignments do not fit together")
        slots = index.slot_of.slots_of(ids)  # (every item the state held; those stored since are told after this)
        known = slots >= 0
        self.state.assign(slots[known], leaves[known], weights[known])

    def on_ingest(self, source: Source, items: list[Item], piece: Piece = WHOLE) -> None:
        """Assign the new items to leaves and store them; at the source's end, its transitions
        (read from the store's leaves when the source came in pieces: a move crosses the cut)."""
        self._pending = None
        self._source_ended = piece.last
        st = self.state
        if st is None or not items:
            return
        vecs = None
        if st.space is not None:
            st.space.bind(self.mem.index.vocab)
            vecs = st.space.transform(self._counts(items))
        rows, leaves, weights = self._assign(vecs, len(items))
        self.mem.store.insert_topic_assignments(
            (items[r].id, int(t), float(w)) for r, t, w in zip(rows.tolist(), leaves.tolist(), weights.tolist()))
        replaced: list[Transition] = []
        added: list[Transition] = []
        if piece.first:  # a source ingested again: its old moves go
            replaced = self.mem.store.topic_transitions([source.id])
        if piece.last and piece.first:
            order = sorted(range(len(items)), key=lambda i: items[i].position)
            added = source_transitions(self._best_leaves(rows, leaves, len(items))[order],
                                       [group_of(items[i]) for i in order], st.tree)
        elif piece.last:
            added = source_transitions(*self.mem.store.source_best_leaves(source.id), st.tree)
        if piece.first or piece.last:
            self.mem.store.replace_topic_transitions(source.id, added)
        self._pending = ([i.id for i in items], vecs, rows, leaves, weights, replaced, added)

    def on_indexed(self, items: list[Item]) -> None:
        pending, self._pending = self._pending, None
        st = self.state
        if st is not None and pending is not None:
            ids, vecs, rows, leaves, weights, replaced, added = pending
            slots = self.mem.index.slots(ids)
            if vecs is not None:
                st.vectors.set(slots, vecs)
            self._add_assignments(slots, rows, leaves, weights)
            st.markov.remove(replaced)  # this source's moves only: O(source), but for a merge now and then (see add)
            st.markov.add(added)
        if self._source_ended and self.settings.topic_auto_build and self.needs_rebuild():
            try:  # the items are committed; a failed rebuild only leaves the previous tree
                self.rebuild()
            except Exception as exc:  # noqa: BLE001 - reported, never fatal to the ingest
                log.warning("topic tree not rebuilt after ingest (%s: %s); the previous tree stays", type(exc).__name__, exc)

    def on_changed_elsewhere(self, added: list[Item], removed: list[int]) -> None:
        """Items another process stored: their vectors, and the leaves that process stored for
        them (read back, as :meth:`load` does: assigning them again here would give the same
        leaves but weights a few ulps apart, and a walk that ranks ties apart from a fresh open);
        deleted items are skipped by the walk. A tree built elsewhere reloads this area
        (``topics.rebuilt``)."""
        st = self.state
        if st is None or not added:
            return
        index = self.mem.index
        slots = index.slots(i.id for i in added)
        if st.space is not None:
            st.space.bind(index.vocab)
            st.vectors.set(slots, st.space.transform(index.counts_matrix(slots)))
        self._add_stored_assignments(self.mem.store.topic_assignments([i.id for i in added]), slots)
        if removed:  # a replaced source's old transitions are gone from the store
            st.markov = TransitionModel(self.mem.store.topic_transitions())
        else:
            st.markov.add(self.mem.store.topic_transitions(sorted({int(i.source_id) for i in added})))

    def warm_up(self) -> None:
        """The topic → item projection the walk scores with (dropped when assignments change)."""
        if self.state is not None:
            self._projection()

    def on_delete(self, item_ids: list[int], dry_run: bool) -> dict[str, int]:
        """Assignments go with their items (foreign-key cascade); the walk skips deleted items."""
        n = self.mem.store.count_topic_assignments(item_ids) if self.state is not None else 0
        if not dry_run and self.state is not None:
            self.state.projection = None
        return {"topic_assignments": n}

    def counts(self) -> TopicCounts:
        """What the store holds, read without loading the tree."""
        return TopicCounts.read(self.mem.store)

    def stats(self) -> TopicStats:
        st = self.state
        if st is None:
            return TopicStats(0)
        return TopicStats(len(st.tree), topic_leaves=len(st.tree.leaves), topic_depth=int(st.tree.depth.max(initial=0)),
                          topic_semantic_edges=st.graph.edge_count()["semantic"], topic_drift=round(self.drift(), 3),
                          topic_built_at=time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(st.built_at)))

    # -- drift and rebuild --------------------------------------------------------------------

    def drift(self) -> float:
        """(items added + items removed since the build) / items at the build."""
        st, index = self.state, self.mem.index
        if st is None:
            return float("inf")
        ready = index.ready
        kept = int(np.count_nonzero(ready & (index.item_ids <= st.max_item_id)))
        return (int(np.count_nonzero(ready)) - kept + st.n_at_build - kept) / max(st.n_at_build, 1)

    def needs_rebuild(self) -> bool:
        n = int(np.count_nonzero(self.mem.index.ready))
        if self.state is None:
            return n > 0
        return self.drift() >= self.settings.topic_rebuild_drift

    def rebuild(self, progress: Progress | None = None, cancelled: Callable[[], bool] | None = None) -> BuildReport:
        """Build the tree from every live item and replace the stored one in one transaction."""
        give_back_freed()  # (at a long source's end, the ingest's freed heap would stay under the rebuild)
        with one_blas_thread():  # many small products: a second BLAS thread only stalls them
            return self._rebuild(progress, cancelled)

    def _rebuild(self, progress: Progress | None, cancelled: Callable[[], bool] | None) -> BuildReport:
        """The space, the clusters and the labels are fitted on an even sample of at most
        ``TOPIC_FIT_ITEMS`` live items; every live item is then assigned to the new leaves in
        blocks. Nothing here builds a Python object per item, so a rebuild at a million items
        costs seconds of numpy, not an hour of dictionaries."""
        started = time.perf_counter()
        s, index, store = self.settings, self.mem.index, self.mem.store

        def stage(n: int, what: str) -> None:
            if cancelled and cancelled():
                raise RebuildCancelled("topic rebuild cancelled; the previous tree is unchanged")
            if progress:
                progress(n, 6, what)

        stage(0, "reading items")
        live = np.flatnonzero(index.ready)
        sample = live[np.linspace(0, len(live) - 1, TOPIC_FIT_ITEMS).astype(np.int64)] if len(live) > TOPIC_FIT_ITEMS else live
        counts = index.counts_matrix(sample)
        stage(1, "fitting the topic space")
        space, fitted, message = None, None, ""
        id_terms = [""] * len(index.vocab)
        for term, tid in index.vocab.items():
            id_terms[tid] = term
        if len(live) >= s.topic_min_items:
            speakers = {t for name in store.speakers() for t in lexical_tokens(name)}
            space = TopicSpace.fit(counts, id_terms, s.topic_dim, [index.vocab[t] for t in speakers if t in index.vocab])
        if space is None:
            message = (f"{len(live)} item(s): too few for a topic hierarchy (at least {s.topic_min_items} with enough "
                       "distinct words are needed); showing one flat topic" if len(live) else "no items yet: the tree is empty")
        else:
            space.bind(index.vocab)
            fitted = space.transform(counts)
        stage(2, "clustering")
        tree, members = self._fit(fitted, len(sample), message)
        stage(3, "labelling")
        if members:
            step = max(1, len(sample) // LABEL_TEXTS)
            texts = store.items(index.item_ids[sample[::step]].tolist())
            self._label(tree, members, counts, id_terms, [texts[i] for i in index.item_ids[sample[::step]].tolist() if i in texts],
                        set(space.terms) if space else set(id_terms))
        stage(4, "assigning items")
        vectors = VectorIndex()
        assigned = self._assign_all(tree, space, live, vectors)
        nodes = [TopicNodeRow(t, tree.paths[t], int(tree.parent[t]), tree.extra_parents.get(t, []), tree.labels[t],
                              tree.terms[t], tree.centroids[t] if not tree.flat else None) for t in range(len(tree))]
        with store.transaction():  # it begins by taking in what other processes committed meanwhile
            live, (slots, leaves, weights) = self._caught_up(tree, space, live, vectors, assigned)
            transitions = self._transitions(tree, slots, leaves)
            stage(5, "storing")
            row = TopicTreeRow(time.time(), len(live), int(index.item_ids[live].max()) if len(live) else 0,
                               space.to_bytes() if space else None, space.terms if space else [], tree.message)
            store.replace_topic_tree(row, nodes)
            store.insert_topic_assignments(_rows(index.item_ids[slots], leaves, weights))
            for source_id, rows in transitions.items():
                store.replace_topic_transitions(source_id, rows)
            self.mem.activity.record("topics.rebuilt", f"{len(tree)} topic{'s' if len(tree) != 1 else ''}", count=len(live))
        markov = TransitionModel([t for rows in transitions.values() for t in rows])
        state = TopicState(tree, TopicGraph(tree, s.topic_neighbors, s.topic_neighbor_min_cos), space, markov, vectors,
                           row.n_items, row.max_item_id, row.built_at)
        state.assign(slots, leaves, weights)
        self.state = state
        return BuildReport(len(tree), len(tree.leaves), int(tree.depth.max()) if len(tree) else 0, len(live),
                           time.perf_counter() - started, tree.message)

    def _transitions(self, tree: TopicTree, slots: np.ndarray, leaves: np.ndarray) -> dict[int, list[Transition]]:
        """Every source's transitions, from its live items' best leaves in position order."""
        index = self.mem.index
        if not len(slots):
            return {}
        first = np.concatenate([[True], slots[1:] != slots[:-1]])
        items, best = slots[first], leaves[first]
        item_ids = index.item_ids[items]
        ids, groups = self.mem.store.item_groups(up_to=int(item_ids.max()))  # (not the items a catch-up has yet to read)
        codes = np.append(group_codes(groups), -1)  # -1: an item the store no longer holds
        at, found = positions(ids, item_ids)
        item_codes = codes[np.where(found, at, len(ids))]
        order = np.lexsort((index.positions[items], index.source_ids[items]))
        sources = index.source_ids[items][order]
        bounds = np.flatnonzero(np.concatenate([[True], sources[1:] != sources[:-1], [True]]))
        out: dict[int, list[Transition]] = {}
        for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
            chosen = order[lo:hi]
            out[int(sources[lo])] = source_transitions(best[chosen], item_codes[chosen], tree)
        return out

    def _assign_all(self, tree: TopicTree, space: TopicSpace | None, slots: np.ndarray,
                    vectors: VectorIndex) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(slots, leaves, weights) of these items under ``tree``, each item's best leaf first,
        in blocks of ``ASSIGN_BLOCK``; their topic-space vectors go to ``vectors``."""
        parts = []
        for lo in range(0, len(slots), ASSIGN_BLOCK):
            block = slots[lo:lo + ASSIGN_BLOCK]
            vecs = space.transform(self.mem.index.counts_matrix(block)) if space is not None else None
            if vecs is not None:
                vectors.set(block, vecs)
            rows, leaves, weights = self._assign_with(tree, vecs, len(block))
            parts.append((block[rows], leaves, weights))
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        return tuple(np.concatenate(x) for x in zip(*parts))  # type: ignore[return-value]

    def _caught_up(self, tree: TopicTree, space: TopicSpace | None, live: np.ndarray, vectors: VectorIndex,
                   assigned: tuple[np.ndarray, np.ndarray, np.ndarray]) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """The live items and their assignments as the write transaction sees them: other
        processes may have added or deleted items while the tree was fitted. The new tree
        replaces every assignment and transition, so it must assign those items too, or they
        would keep no stored leaf and their sources no transitions."""
        now = np.flatnonzero(self.mem.index.ready)
        if np.array_equal(now, live):
            return live, assigned
        kept = np.isin(assigned[0], now)
        new = self._assign_all(tree, space, np.setdiff1d(now, live), vectors)
        return np.concatenate([live[np.isin(live, now)], np.setdiff1d(now, live)]), \
            tuple(np.concatenate([a[kept], b]) for a, b in zip(assigned, new))  # type: ignore[return-value]

    def _fit(self, vectors: np.ndarray | None, n: int, message: str) -> tuple[TopicTree, list[np.ndarray]]:
        s = self.settings
        if vectors is None:
            paths = ["t:0"] if n else []
            tree = TopicTree(paths, np.full(len(paths), -1, dtype=np.int64), np.zeros((len(paths), 0), dtype=np.float32),
                             ["all items"] * len(paths), [[] for _ in paths], message=message)
            return tree, ([np.arange(n)] if n else [])
        shape = shape_for(n, s.topic_leaf_size, s.topic_min_leaf, s.topic_max_leaves, s.topic_max_branch, s.topic_max_depth)
        paths, parent, centroids, members = fit_tree(vectors, shape)
        tree = TopicTree(paths, parent, centroids, list(paths), [[] for _ in paths])
        if s.topic_dag_tau > 0:
            tree.extra_parents = dag_parents(tree, s.topic_dag_tau)
        return tree, members

    @staticmethod
    def _label(tree: TopicTree, members: list[np.ndarray], counts: sp.csr_matrix, id_terms: list[str], items: list[Item],
               allowed: set[str]) -> None:
        terms = distinctive_terms(counts, members, tree.parent, id_terms, allowed)
        forms = surface_forms({t for ts in terms for t in ts}, (i.search_text() for i in items))
        tree.terms = [[forms.get(t, t) for t in ts] for ts in terms]
        tree.labels = [label_of(ts, forms, tree.paths[n]) for n, ts in enumerate(terms)]

    # -- assignment ---------------------------------------------------------------------------

    def _counts(self, items: Sequence[Item]) -> sp.csr_matrix:
        """Term counts of items under the current vocabulary (their terms are in it by now)."""
        index = self.mem.index
        rows = [index.analyze(i.search_text())[:2] for i in items]
        lengths = [len(t) for t, _ in rows]
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        indices = np.concatenate([t for t, _ in rows]) if rows else np.zeros(0, dtype=np.int64)
        data = np.concatenate([c for _, c in rows]) if rows else np.zeros(0, dtype=np.float32)
        return sp.csr_matrix((data, indices, indptr), shape=(len(rows), max(len(index.vocab), 1)))

    def _assign(self, vectors: np.ndarray | None, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._assign_with(self.state.tree, vectors, n)

    def _assign_with(self, tree: TopicTree, vectors: np.ndarray | None, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(rows, leaves, weights): each item's top leaves by P(leaf | item)."""
        s = self.settings
        if not len(tree) or not n:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        if vectors is None:
            return np.arange(n), np.full(n, int(tree.leaves[0])), np.ones(n)
        return top_leaves(vectors, tree, s.topic_temperature, s.topic_item_leaves, s.topic_item_min_prob)

    @staticmethod
    def _best_leaves(rows: np.ndarray, leaves: np.ndarray, n: int) -> np.ndarray:
        """Each row's best leaf (the first edge of every row, as :func:`top_leaves` orders them)."""
        best = np.zeros(n, dtype=np.int64)
        first = np.concatenate([[True], rows[1:] != rows[:-1]]) if len(rows) else np.zeros(0, dtype=bool)
        best[rows[first]] = leaves[first]
        return best

    def _add_stored_assignments(self, stored: tuple[np.ndarray, np.ndarray, np.ndarray], slots: np.ndarray) -> None:
        """The stored assignment rows (item ids, leaves, weights) of the items at ``slots``; those
        the store has none for (stored before any tree existed) are assigned in memory."""
        ids, leaves, weights = stored
        index = self.mem.index
        found = index.slot_of.slots_of(ids)
        known = found >= 0
        found = found[known]
        self.state.assign(found, leaves[known], weights[known])
        missing = np.setdiff1d(slots, found)
        if len(missing):
            st = self.state
            self._add_assignments(missing, *self._assign(st.vectors.rows(missing) if st.space else None, len(missing)))

    def _add_assignments(self, slots: np.ndarray, rows: np.ndarray, leaves: np.ndarray, weights: np.ndarray) -> None:
        self.state.assign(slots[rows], leaves, weights)

    def _projection(self) -> sp.csr_matrix:
        st, index = self.state, self.mem.index
        p = st.projection
        if p is None or p.shape[1] != index.n_slots:
            p = projection(st.tree, st.slots, st.leaves, st.weights, index.alive, self.settings.topic_ancestor_decay)
            st.projection = p
        return p

    # -- browse -------------------------------------------------------------------------------

    def _sizes(self) -> np.ndarray:
        st = self.state
        alive = self.mem.index.alive
        best = np.zeros(len(st.tree), dtype=np.int64)
        first = np.concatenate([[True], st.slots[1:] != st.slots[:-1]]) if len(st.slots) else np.zeros(0, dtype=bool)
        live = first & alive[st.slots] if len(st.slots) else first
        np.add.at(best, st.leaves[live], 1)
        for t in range(len(st.tree) - 1, -1, -1):
            if st.tree.parent[t] >= 0:
                best[st.tree.parent[t]] += best[t]
        return best

    def _info(self, t: int, sizes: np.ndarray) -> TopicInfo:
        tree = self.state.tree
        p = int(tree.parent[t])
        return TopicInfo(tree.paths[t], tree.paths[p] if p >= 0 else None, int(tree.depth[t]), tree.labels[t], tree.terms[t],
                         int(sizes[t]), [tree.paths[c] for c in tree.children[t]],
                         [tree.paths[e] for e in tree.extra_parents.get(t, [])])

    def _index_of(self, topic_id: str) -> int:
        if self.state is None or topic_id not in self.state.tree.index:
            raise RequestError(f"no topic {topic_id!r}")
        return self.state.tree.index[topic_id]

    @property
    def message(self) -> str:
        """Why the tree is flat or empty ('' when it is a real hierarchy)."""
        if self.state is None:
            return "no topic tree yet: ingest items or rebuild"
        return self.state.tree.message

    def tree(self) -> list[TopicInfo]:
        """Every topic, parents before children (breadth first)."""
        if self.state is None:
            return []
        sizes = self._sizes()
        return [self._info(t, sizes) for t in range(len(self.state.tree))]

    def topic(self, topic_id: str) -> TopicInfo:
        return self._info(self._index_of(topic_id), self._sizes())

    def children(self, topic_id: str) -> list[TopicInfo]:
        sizes = self._sizes()
        return [self._info(c, sizes) for c in self.state.graph.children[self._index_of(topic_id)]]

    def parent(self, topic_id: str) -> TopicInfo | None:
        p = int(self.state.tree.parent[self._index_of(topic_id)]) if self.state else -1
        return self._info(p, self._sizes()) if p >= 0 else None

    def siblings(self, topic_id: str) -> list[TopicInfo]:
        sizes = self._sizes()
        return [self._info(c, sizes) for c in self.state.graph.siblings[self._index_of(topic_id)]]

    def neighbours(self, topic_id: str) -> list[Neighbour]:
        """Semantic neighbours (centroid kNN outside the topic's family), closest first."""
        t = self._index_of(topic_id)
        sizes = self._sizes()
        edges = sorted(self.state.graph.semantic[t].items(), key=lambda kv: (-kv[1], kv[0]))
        return [Neighbour(self._info(u, sizes), "semantic", w) for u, w in edges]

    def items(self, topic_id: str, limit: int = 50) -> list[Item]:
        """The topic's items, strongest edge first (leaves: their members; others: the subtree's)."""
        t = self._index_of(topic_id)
        row = self._projection()[t]
        order = np.lexsort((row.indices, -row.data))[:limit]
        ids = [int(self.mem.index.item_ids[s]) for s in row.indices[order]]
        found = self.mem.store.items(ids)
        return [found[i] for i in ids if i in found]

    def topic_of(self, item_id: int) -> list[tuple[TopicInfo, float]]:
        """An item's leaves with their probabilities."""
        slot = self.mem.index.slot_of.get(item_id)
        st = self.state
        if st is None or slot is None:
            return []
        sizes = self._sizes()
        mask = st.slots == slot
        return [(self._info(int(t), sizes), float(w)) for t, w in zip(st.leaves[mask], st.weights[mask])]

    # -- the walk -----------------------------------------------------------------------------

    def query_vector(self, q: Query) -> np.ndarray | None:
        st = self.state
        if st is None or st.space is None or not len(q.term_ids):
            return None
        st.space.bind(self.mem.index.vocab)
        return st.space.embed_query(q.term_ids, q.term_weights)

    def walk(self, q: Query) -> Walk:
        """The intent-steered walk for a query (computed once per query; kept on ``q.notes``)."""
        cached = q.notes.get("walk")
        if cached is None:
            with one_blas_thread():
                cached = q.notes["walk"] = self._walk(q)
        return cached

    def _walk(self, q: Query) -> Walk:
        s = self.settings
        intent = resolve_intent(q.text, q.options.get("intent"), s.intent_min_confidence)
        st = self.state
        q_vec = self.query_vector(q)
        n_slots = self.mem.index.n_slots
        if st is not None and st.tree.flat and len(st.tree):  # one flat topic: the walk stays there
            tree, visits = st.tree, np.ones(1)
            start = WalkStep(tree.paths[0], tree.labels[0], 1, "start", 1.0)
            scores, support = item_scores(visits, self._projection(), np.zeros(0), np.zeros((0, 0)), 0.0)
            return Walk(intent, [start], visits, scores, message=tree.message, support=support)
        if st is None or q_vec is None or not len(st.tree):
            why = self.message or "the query shares no words with the topic space"
            return Walk(intent, [], np.zeros(len(st.tree) if st else 0), np.zeros(n_slots), message=why)
        policy = Policy.from_settings(s)
        seed = q.options.get("seed")
        if seed is None and not policy.greedy:
            seed = zlib.crc32(q.text.encode("utf-8"))
        rng = np.random.default_rng(int(seed)) if seed is not None else None
        result = run_walk(st.tree, st.graph, st.markov, q_vec, intent, policy, rng, s.topic_temperature)
        proj = self._projection()
        scores, reached = item_scores(result.visits, proj, q_vec, st.vectors, policy.rerank)
        leaf_order = st.tree.leaves[np.argsort(-(st.tree.centroids[st.tree.leaves] @ q_vec), kind="stable")]
        result.scores, result.support = backfill(scores, reached, proj, leaf_order, q_vec, st.vectors, q.top_k)
        return result

    def windows(self, hits: Sequence[tuple[int, float]], radius: int = 1, per_source: int | None = None,
                limit: int | None = None) -> list[ContextWindow]:
        """Widen ranked hits ((item id, score), best first) into non-overlapping context windows."""
        index = self.mem.index
        return context_windows(hits, index.source_ids, index.positions, index.alive, index.slot_of, index.item_ids,
                               radius, per_source, limit)

    def navigation(self, q: Query) -> tuple[IntentReport | None, list[WalkStep]]:
        """What recall reports: (intent used, walk steps) when a walk ran, or was asked for with
        an explicit intent or ``trace``; (None, []) otherwise."""
        walk = q.notes.get("walk")
        if walk is None and (q.options.get("intent") is not None or q.options.get("trace")):
            walk = self.walk(q)
        if walk is None:
            return None, []
        return walk.intent.to_dict(), walk.steps

    # -- recall -------------------------------------------------------------------------------

    def signals(self) -> dict[str, Signal]:
        return {"walk": self.walk_signal}

    def strategies(self) -> dict[str, Strategy]:
        return {"walk": single_signal(self.mem, "walk"), "hybrid_walk": self.hybrid_walk}

    def check_query(self, q: Query) -> None:
        q.options["intent"] = check_intent(q.options.get("intent"))

    def complete(self, q: Query, ranking: Ranking, hits: list[Hit], result: Recall) -> None:
        result.intent, result.trace = self.navigation(q)

    def walk_signal(self, q: Query, signals: Signals) -> np.ndarray:
        """Item scores from the intent-steered walk over the topic tree (engine.topics.navigate)."""
        walk = self.walk(q)
        signals.supports["walk"] = walk.support
        return walk.scores

    def hybrid_walk(self, q: Query, signals: Signals) -> Ranking:
        """Hybrid's scores (scaled to a maximum of 1) plus ``walk_fusion_weight`` × the walk's item
        score: the walk acts as a topical prior over hybrid's candidates and the walk's own best."""
        s = self.settings
        base = hybrid(self.mem, q, signals)
        walk = signals["walk"]
        slots = distinct(np.concatenate([base.slots, signals.top("walk", max(q.top_k, s.candidate_k))]))
        lexical = np.zeros(len(slots))
        top = base.scores.max() if len(base.scores) else 0.0
        if top > 0:
            lexical[np.searchsorted(slots, base.slots)] = base.scores / top
        scores = lexical + s.walk_fusion_weight * walk[slots]
        order = np.lexsort((slots, -scores))
        slots, scores = slots[order], scores[order]
        found = {int(x): base.found_by.get(int(x), []) + (["walk"] if walk[x] > 0 else []) for x in slots}
        features = {name: signals[name][slots] for name in ("bm25", "dense", "walk")}
        features["fused"] = scores
        return Ranking(slots, scores, found, features)
