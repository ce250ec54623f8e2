"""What feedback leaves behind per item: trust, use counts, the queries an item was used for,
and co-access (Hebbian) edges between items used together.

Time here is the store's feedback clock (the time of the latest feedback event), never the wall
clock at recall, so the same store answers the same query the same way. Trust decays toward
neutral (0.5) and edge weights decay toward 0 with their own half-lives; an edge whose decayed
weight falls under ``prune_below`` is deleted at the next feedback, so decay really prunes.
The co-access PageRank divides each row by max(row sum, 1) rather than by the row sum, so a
decayed edge carries less mass instead of being renormalised back to full strength.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Callable

import numpy as np

from ..pagerank import personalized_pagerank
from ..lazy import sparse as sp

DAY = 86_400.0


@dataclass
class FeedbackParams:
    trust_up: float = 0.05  # used: trust += up · (1 − trust)
    trust_down: float = 0.05  # shown but ignored: trust −= down · trust
    trust_half_life_days: float = 45.0
    hebb_rate: float = 0.3  # used together: w += rate · (1 − w)
    edge_half_life_days: float = 30.0
    prune_below: float = 0.05
    ppr_alpha: float = 0.5
    ppr_iterations: int = 20


def unit_rows(rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int]) -> sp.csr_matrix:
    """A CSR matrix of these (row, column, value) entries, each row scaled to unit length (a row
    without entries stays empty); the norms are a ``bincount``, the matrix is built once."""
    norms = np.sqrt(np.bincount(rows, weights=values * values, minlength=shape[0]))
    return sp.csr_matrix((values / np.maximum(norms, 1e-12)[rows], (rows, cols)), shape=shape)


def decayed(value: np.ndarray, neutral: float, since: np.ndarray, now: float, half_life_days: float) -> np.ndarray:
    """``value`` pulled toward ``neutral`` by the time elapsed from ``since`` to ``now``."""
    factor = 0.5 ** (np.maximum(now - since, 0.0) / (half_life_days * DAY))
    return neutral + (value - neutral) * factor


@dataclass
class EdgeSet:
    """Undirected co-access edges between item ids (a < b), as parallel arrays."""

    a: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    b: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    weight: np.ndarray = field(default_factory=lambda: np.zeros(0))
    updated: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __len__(self) -> int:
        return len(self.a)

    def position(self) -> dict[tuple[int, int], int]:
        return {(int(x), int(y)): n for n, (x, y) in enumerate(zip(self.a.tolist(), self.b.tolist()))}

    def keep(self, mask: np.ndarray) -> None:
        self.a, self.b, self.weight, self.updated = self.a[mask], self.b[mask], self.weight[mask], self.updated[mask]


@dataclass
class FeedbackChanges:
    """The rows one feedback event writes (applied in memory only after the commit)."""

    trust: list[tuple[int, float, int, float]]
    edges: list[tuple[int, int, float, float]]
    pruned: list[tuple[int, int]]


class FeedbackState:
    """Per-item learned state, kept in memory and mirrored in the store."""

    def __init__(self, params: FeedbackParams) -> None:
        self.params = params
        self.clock = 0.0
        self.trust: dict[int, tuple[float, int, float]] = {}  # item id -> (trust, uses, updated)
        self.edges = EdgeSet()
        self._edge_at: dict[tuple[int, int], int] = {}
        self.query_bags: dict[int, dict[int, float]] = {}  # item id -> {term id: weight}
        self._bag_matrix: tuple[sp.csr_matrix, np.ndarray] | None = None
        self._coaccess: tuple[tuple[int, float], np.ndarray, sp.csr_matrix] | None = None  # at (slots, clock)
        self._trust_columns: tuple[float, np.ndarray, np.ndarray, np.ndarray] | None = None  # at a clock

    # -- loading ------------------------------------------------------------------------------

    def load(self, trust_rows: list, edge_rows: list, clock: float) -> None:
        self.clock = clock
        self.trust = {int(i): (float(t), int(u), float(at)) for i, t, u, at in trust_rows}
        if edge_rows:
            cols = list(zip(*edge_rows))
            self.edges = EdgeSet(np.array(cols[0], dtype=np.int64), np.array(cols[1], dtype=np.int64),
                                 np.array(cols[2], dtype=np.float64), np.array(cols[3], dtype=np.float64))
        else:
            self.edges = EdgeSet()
        self._edge_at = self.edges.position()
        self.query_bags = {}
        self.invalidate()

    def invalidate(self) -> None:
        self._bag_matrix = None
        self._coaccess = None
        self._trust_columns = None

    def add_query(self, item_ids: list[int], term_ids: np.ndarray) -> None:
        """Remember that these items were used for a query with these terms."""
        for item_id in item_ids:
            bag = self.query_bags.setdefault(item_id, {})
            for t in term_ids.tolist():
                bag[t] = bag.get(t, 0.0) + 1.0
        self._bag_matrix = None

    # -- feedback -----------------------------------------------------------------------------

    def changes(self, used: list[int], ignored: list[int], now: float) -> FeedbackChanges:
        """The trust rows, strengthened edges and pruned edges of one event (nothing applied)."""
        p = self.params
        trust_rows = []
        for item_id, is_used in [(i, True) for i in used] + [(i, False) for i in ignored]:
            value, uses, at = self.trust.get(item_id, (0.5, 0, now))
            value = float(decayed(np.array(value), 0.5, np.array(at), now, p.trust_half_life_days))
            value = value + p.trust_up * (1 - value) if is_used else value - p.trust_down * value
            trust_rows.append((item_id, value, uses + int(is_used), now))
        current = decayed(self.edges.weight, 0.0, self.edges.updated, now, p.edge_half_life_days)
        strengthened: dict[tuple[int, int], float] = {}
        ordered = sorted(set(used))
        for n, x in enumerate(ordered):
            for y in ordered[n + 1:]:
                at = self._edge_at.get((x, y))
                w = float(current[at]) if at is not None else 0.0
                strengthened[(x, y)] = w + p.hebb_rate * (1 - w)
        weak = np.flatnonzero(current < p.prune_below)
        pruned = [(int(self.edges.a[i]), int(self.edges.b[i])) for i in weak]
        pruned = [pair for pair in pruned if pair not in strengthened]
        edges = [(x, y, w, now) for (x, y), w in strengthened.items()]
        return FeedbackChanges(trust_rows, edges, pruned)

    def apply(self, changes: FeedbackChanges, now: float) -> None:
        self.clock = max(self.clock, now)
        for item_id, value, uses, at in changes.trust:
            self.trust[item_id] = (value, uses, at)
        if changes.pruned:
            gone = set(changes.pruned)
            self.edges.keep(np.array([(x, y) not in gone for x, y in zip(self.edges.a.tolist(), self.edges.b.tolist())]))
            self._edge_at = self.edges.position()
        fresh = []
        for x, y, w, at in changes.edges:
            n = self._edge_at.get((x, y))
            if n is None:
                fresh.append((x, y, w, at))
            else:
                self.edges.weight[n], self.edges.updated[n] = w, at
        if fresh:
            cols = list(zip(*fresh))
            self.edges = EdgeSet(np.concatenate([self.edges.a, np.array(cols[0], dtype=np.int64)]),
                                 np.concatenate([self.edges.b, np.array(cols[1], dtype=np.int64)]),
                                 np.concatenate([self.edges.weight, np.array(cols[2])]),
                                 np.concatenate([self.edges.updated, np.array(cols[3])]))
            self._edge_at = self.edges.position()
        self.invalidate()

    def forget(self, item_ids: list[int]) -> None:
        """Drop deleted items (the store's cascade already removed their rows)."""
        gone = set(item_ids)
        for i in gone:
            self.trust.pop(i, None)
            self.query_bags.pop(i, None)
        if len(self.edges):
            self.edges.keep(~(np.isin(self.edges.a, list(gone)) | np.isin(self.edges.b, list(gone))))
            self._edge_at = self.edges.position()
        self.invalidate()

    def trust_rows(self) -> list[tuple[int, float, int, float]]:
        """The store's rows for what is held (after a replay of the log)."""
        return [(i, t, u, at) for i, (t, u, at) in self.trust.items()]

    def edge_rows(self) -> list[tuple[int, int, float, float]]:
        e = self.edges
        return list(zip(e.a.tolist(), e.b.tolist(), e.weight.tolist(), e.updated.tolist()))

    # -- features -----------------------------------------------------------------------------

    def trust_and_uses(self, item_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Trust relative to neutral (scaled so one use moves it by 0.2, clipped to ±1) and
        log-scaled use counts of these items."""
        if not self.trust:
            return np.zeros(len(item_ids)), np.zeros(len(item_ids))
        ids, trust, uses = self._trusted()
        rows = np.clip(np.searchsorted(ids, item_ids), 0, len(ids) - 1)
        present = ids[rows] == item_ids
        return np.where(present, trust[rows], 0.0), np.where(present, uses[rows], 0.0)

    def _trusted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Trusted item ids (sorted) with their trust and use features at the feedback clock."""
        if self._trust_columns is None or self._trust_columns[0] != self.clock:
            ids = np.array(sorted(self.trust), dtype=np.int64)
            rows = np.array([self.trust[i] for i in ids.tolist()], dtype=np.float64).reshape(-1, 3)
            value = decayed(rows[:, 0], 0.5, rows[:, 2], self.clock, self.params.trust_half_life_days)
            self._trust_columns = (self.clock, ids, np.clip((value - 0.5) * 4, -1.0, 1.0),
                                   np.minimum(1.0, np.log1p(rows[:, 1]) / np.log1p(20)))
        return self._trust_columns[1:]

    def feedback_match(self, item_ids: np.ndarray, term_ids: np.ndarray, idf: Callable[[np.ndarray], np.ndarray],
                       n_terms: int) -> np.ndarray:
        """IDF-weighted cosine between the query and the queries each item was used for.

        IDF weighting keeps a name that is in every question about a person from matching all of
        that person's previously used items."""
        if not self.query_bags or not len(term_ids):
            return np.zeros(len(item_ids))
        matrix, ids = self._bags(idf, n_terms)
        rows = np.clip(np.searchsorted(ids, item_ids), 0, len(ids) - 1)
        present = ids[rows] == item_ids
        terms = term_ids[term_ids < matrix.shape[1]]
        q = np.zeros(matrix.shape[1])
        q[terms] = idf(terms)
        norm = np.linalg.norm(q)
        sims = matrix[rows] @ (q / norm) if norm > 0 else np.zeros(len(rows))
        return np.where(present, sims, 0.0)

    def _bags(self, idf: Callable[[np.ndarray], np.ndarray], n_terms: int) -> tuple[sp.csr_matrix, np.ndarray]:
        """Items × terms matrix of the queries each item was used for, IDF-weighted, rows unit length
        (rebuilt after each feedback event: made from flat arrays, no Python per entry)."""
        if self._bag_matrix is None or self._bag_matrix[0].shape[1] < n_terms:
            ids = np.array(sorted(self.query_bags), dtype=np.int64)
            bags = [self.query_bags[i] for i in ids.tolist()]
            rows = np.repeat(np.arange(len(ids)), [len(b) for b in bags])
            cols = np.fromiter(chain.from_iterable(bags), dtype=np.int64, count=len(rows))
            counts = np.fromiter(chain.from_iterable(b.values() for b in bags), dtype=np.float64, count=len(rows))
            width = max(n_terms, int(cols.max(initial=-1)) + 1)
            self._bag_matrix = (unit_rows(rows, cols, counts * idf(cols), (len(ids), width)), ids)
        return self._bag_matrix

    def coaccess(self, slot_of: dict[int, int], n_slots: int, seeds: np.ndarray, restart: np.ndarray) -> np.ndarray:
        """PageRank mass reaching every slot over co-access edges from the seeds (restart excluded).

        Mass moves only among the items that have edges; every other seed is a dead end, whose
        walkers return to the seeds. So the walk runs on the linked items plus one dead-end node
        that holds the other seeds' share, and each of those seeds gets its share of that node's
        mass: the same result as a walk over every slot, at a cost that follows the edges."""
        if not len(self.edges) or not len(seeds) or restart.sum() <= 0:
            return np.zeros(n_slots)
        linked, transition = self._coaccess_matrix(slot_of, n_slots)
        p = self.params
        r = np.zeros(n_slots)
        r[seeds] = restart / restart.sum()
        rest = max(0.0, 1.0 - float(r[linked].sum()))
        # ppr_alpha is the restart probability here; the shared PageRank takes the follow probability
        walk = personalized_pagerank(transition, np.append(r[linked], rest), alpha=1.0 - p.ppr_alpha,
                                     iterations=p.ppr_iterations, tol=0.0)
        rank = r * (float(walk[-1]) / rest if rest > 0 else 0.0)
        rank[linked] = walk[:-1]
        return np.maximum(rank - p.ppr_alpha * r, 0.0)

    def _coaccess_matrix(self, slot_of: dict[int, int], n_slots: int) -> tuple[np.ndarray, sp.csr_matrix]:
        """The slots that have edges (sorted), and the walk's transition among them and a last,
        dead-end node: each row of the edge matrix divided by max(row sum, 1), transposed for the
        power iteration."""
        if self._coaccess is None or self._coaccess[0] != (n_slots, self.clock):
            e = self.edges
            w = decayed(e.weight, 0.0, e.updated, self.clock, self.params.edge_half_life_days)
            x = np.array([slot_of.get(int(i), -1) for i in e.a.tolist()], dtype=np.int64)
            y = np.array([slot_of.get(int(i), -1) for i in e.b.tolist()], dtype=np.int64)
            live = (x >= 0) & (y >= 0)
            x, y, w = x[live], y[live], w[live]
            linked = np.union1d(x, y)
            xs, ys = np.searchsorted(linked, np.concatenate([x, y])), np.searchsorted(linked, np.concatenate([y, x]))
            w = np.concatenate([w, w])
            out = np.maximum(np.bincount(xs, weights=w, minlength=len(linked) + 1), 1.0)
            transposed = sp.csr_matrix((w * (1.0 / out)[xs], (ys, xs)), shape=(len(linked) + 1, len(linked) + 1))
            self._coaccess = ((n_slots, self.clock), linked, transposed)
        return self._coaccess[1], self._coaccess[2]
