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

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

import numpy as np

from ..pagerank import personalized_pagerank
from ..lazy import sparse as sp
from .rows import GrowingRows

if TYPE_CHECKING:
    from ..arrays import SlotMap
    from .marks import MarkPlan

DAY = 86_400.0
# Up to this many linked items the co-access walk's transition is a dense array: its product
# costs less than the sparse one's overhead; beyond, the dense product grows with the square.
DENSE_WALK = 128


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
class TrustColumns:
    """The trust rows as arrays sorted by item id, kept beside the dict that feedback reads and
    writes row by row: an event updates its own rows here, so recall reads the columns without
    turning the whole dict into arrays again."""

    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))  # per id: trust, uses, updated

    def put(self, rows: list[tuple[int, float, int, float]]) -> None:
        """Set these rows (item id, trust, uses, updated), inserting the ids not held yet."""
        if not rows:
            return
        new = np.array(rows, dtype=np.float64).reshape(-1, 4)
        new = new[np.argsort(new[:, 0], kind="stable")]
        ids = new[:, 0].astype(np.int64)
        at = np.searchsorted(self.ids, ids)
        held = at < len(self.ids)
        held[held] = self.ids[at[held]] == ids[held]
        self.rows[at[held]] = new[held, 1:]
        fresh = ~held
        if fresh.any():
            self.ids = np.insert(self.ids, at[fresh], ids[fresh])
            self.rows = np.insert(self.rows, at[fresh], new[fresh, 1:], axis=0)

    def drop(self, item_ids: list[int]) -> None:
        keep = ~np.isin(self.ids, np.array(item_ids, dtype=np.int64))
        self.ids, self.rows = self.ids[keep], self.rows[keep]


@dataclass
class UsedFor:
    """The queries each item was used for, as IDF-weighted rows (one per item, :class:`.rows.GrowingRows`)
    with their norms. A feedback event appends its query's terms to its used items' rows and adds
    to their squared norms what the new counts add, ((c + 1)² − c²)·idf², so nothing is rebuilt;
    a change of the store's IDF weights (``version``) weights the same entries anew (:meth:`reweighted`)."""

    version: tuple[int, ...]
    row_of: dict[int, int] = field(default_factory=dict)
    by_id: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # rows in item id order
    ids: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # item id of each row
    entries: GrowingRows = field(default_factory=GrowingRows)
    squared_norm: np.ndarray = field(default_factory=lambda: np.zeros(0))
    width: int = 0  # term ids below it are weighted
    added: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per entry: the count it added

    def add(self, counts: list[tuple[int, int, float, float]], idf: Callable[[np.ndarray], np.ndarray]) -> None:
        """Add (item id, term id, count before, count added) entries; ``idf`` is asked only
        about their terms."""
        if not counts:
            return
        items = np.array([c[0] for c in counts], dtype=np.int64)
        terms = np.array([c[1] for c in counts], dtype=np.int64)
        before = np.array([c[2] for c in counts])
        after = before + np.array([c[3] for c in counts])
        fresh = [i for i in dict.fromkeys(items.tolist()) if i not in self.row_of]
        if fresh:
            self.row_of.update(zip(fresh, range(len(self.row_of), len(self.row_of) + len(fresh))))
            self.ids = np.concatenate([self.ids, np.array(fresh, dtype=np.int64)])
            self.by_id = np.argsort(self.ids, kind="stable")
            self.squared_norm = np.concatenate([self.squared_norm, np.zeros(len(fresh))])
        rows = np.array([self.row_of[i] for i in items.tolist()], dtype=np.int64)
        w = idf(terms)
        self.entries.append(rows, terms, (after - before) * w)
        self.added = np.concatenate([self.added, after - before])
        np.add.at(self.squared_norm, rows, (after * after - before * before) * w * w)
        self.width = max(self.width, int(terms.max()) + 1)

    def reweighted(self, version: tuple[int, ...], idf: Callable[[np.ndarray], np.ndarray]) -> "UsedFor":
        """The same rows under the store's IDF weights at ``version``: every entry weighted again
        in one look-up, and each row's squared norm from its terms' summed counts."""
        rows, terms = self.entries.rows, self.entries.cols
        w = idf(terms)
        _, first, pair_of = np.unique(rows * self.width + terms, return_index=True, return_inverse=True)
        counts = np.bincount(pair_of, weights=self.added)
        squared_norm = np.bincount(rows[first], weights=(counts * w[first]) ** 2, minlength=len(self.ids))
        return UsedFor(version, self.row_of, self.by_id, self.ids, GrowingRows(rows, terms, self.added * w),
                       squared_norm, max(self.width, version[2]), self.added)

    def match(self, item_ids: np.ndarray, query: np.ndarray) -> np.ndarray:
        """Cosine of each item's row with ``query`` (a vector over term ids); 0 for items without one."""
        if not len(self.ids):
            return np.zeros(len(item_ids))
        sims = self.entries.dot(query, len(self.ids)) / np.maximum(np.sqrt(self.squared_norm), 1e-12)
        ordered = self.ids[self.by_id]
        at = np.clip(np.searchsorted(ordered, item_ids), 0, len(ordered) - 1)
        return np.where(ordered[at] == item_ids, sims[self.by_id[at]], 0.0)


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
        self.query_bags: dict[int, dict[int, float]] = {}  # item id -> {term id: count}
        self._asked: list[tuple[str, list[int], MarkPlan]] = []  # per event: its query, used items, the query's plan
        self._planned_over: tuple[Mapping[str, int] | None, int] = (None, 0)  # the vocabulary and its size every plan held over
        self._used_for: UsedFor | None = None
        self._counted: list[tuple[int, int, float, float]] = []  # bag counts added since _used_for last read them
        # Held while the bags are counted and while recall reads the used-for rows: two recalls in
        # two threads (the app's query and its Ranker screen) each added the same counts, and a
        # feedback's counts appended while a recall took them in were lost (a rare stress run read
        # another feedback_match than a fresh open, review of session 16).
        self._counting = threading.Lock()
        self._coaccess: tuple[tuple[int, float], np.ndarray, np.ndarray | sp.csr_matrix] | None = None  # at (slots, clock)
        self._trust_arrays = TrustColumns()
        self._trust_columns: tuple[float, np.ndarray, np.ndarray] | None = None  # decayed, at a clock

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
        self._trust_arrays = TrustColumns()
        self._trust_arrays.put(self.trust_rows())
        with self._counting:
            self.query_bags, self._asked, self._planned_over = {}, [], (None, 0)
            self._used_for, self._counted = None, []
        self.invalidate()

    def invalidate(self) -> None:
        """Forget what is derived from the clock or the edges (read again at the next recall)."""
        self._coaccess = None
        self._trust_columns = None

    def add_query(self, item_ids: list[int], query: str, plan: MarkPlan) -> None:
        """Remember that these items were used for ``query``, planned as ``plan`` (recall's index
        of them takes the new counts at its next read)."""
        with self._counting:
            self._asked.append((query, list(item_ids), plan))
            self._count(item_ids, plan.term_ids())

    def _count(self, item_ids: list[int], term_ids: np.ndarray) -> None:
        """Add one use of each term to each item's bag. Called with ``_counting`` held."""
        for item_id in item_ids:
            bag = self.query_bags.setdefault(item_id, {})
            for t in term_ids.tolist():
                before = bag.get(t, 0.0)
                bag[t] = before + 1.0
                if self._used_for is not None:
                    self._counted.append((item_id, t, before, 1.0))

    def follow(self, vocabulary: Mapping[str, int], plan: Callable[[str], MarkPlan]) -> None:
        """Plan again (``plan``) the queries whose plan ``vocabulary`` no longer gives, and count the
        bags anew when one changed. Another process's ingest grows the vocabulary a process holds:
        a word a taught query asked, or a word related to one, may join it, and a fresh open plans
        the query with that word; the bags kept the plan made when the feedback was given, so
        feedback_match read otherwise in this process than in a fresh one."""
        held_over, size = self._planned_over
        if vocabulary is held_over and len(vocabulary) == size:
            return
        with self._counting:
            stale = [n for n, (_, _, held) in enumerate(self._asked) if not held.holds(vocabulary)]
            replanned = {n: plan(self._asked[n][0]) for n in stale}
            moved = any(replanned[n].terms != self._asked[n][2].terms for n in stale)
            for n, again in replanned.items():
                self._asked[n] = (self._asked[n][0], self._asked[n][1], again)
            if moved:
                self.query_bags, self._used_for, self._counted = {}, None, []
                for _, items, held in self._asked:
                    self._count(items, held.term_ids())
            self._planned_over = (vocabulary, len(vocabulary))

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
        self._trust_arrays.put(changes.trust)
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
        with self._counting:
            for i in gone:
                self.trust.pop(i, None)
                self.query_bags.pop(i, None)
            self._asked = [(query, [i for i in items if i not in gone], held) for query, items, held in self._asked]
            self._used_for, self._counted = None, []
        self._trust_arrays.drop(list(gone))
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
        held = self._trust_arrays
        if self._trust_columns is None or self._trust_columns[0] != self.clock:
            trust, uses, updated = held.rows.T
            value = decayed(trust, 0.5, updated, self.clock, self.params.trust_half_life_days)
            self._trust_columns = (self.clock, np.clip((value - 0.5) * 4, -1.0, 1.0),
                                   np.minimum(1.0, np.log1p(uses) / np.log1p(20)))
        return held.ids, self._trust_columns[1], self._trust_columns[2]

    def feedback_match(self, item_ids: np.ndarray, term_ids: np.ndarray, idf: Callable[[np.ndarray], np.ndarray],
                       version: tuple[int, int, int]) -> np.ndarray:
        """IDF-weighted cosine between the query and the queries each item was used for
        (``idf`` is the store's at ``version``: slots, live items, words).

        IDF weighting keeps a name that is in every question about a person from matching all of
        that person's previously used items."""
        if not self.query_bags or not len(term_ids):
            return np.zeros(len(item_ids))
        with self._counting:  # the rows grow as they are read
            used_for = self._used_for_rows(idf, version)
            terms = term_ids[term_ids < used_for.width]
            q = np.zeros(used_for.width)
            q[terms] = idf(terms)
            norm = np.linalg.norm(q)
            if norm == 0:
                return np.zeros(len(item_ids))
            return used_for.match(item_ids, q / norm)

    def _used_for_rows(self, idf: Callable[[np.ndarray], np.ndarray], version: tuple[int, int, int]) -> UsedFor:
        """The items' used-for rows with the counts added since they were last read (weighted anew
        when the store's IDF weights changed; built from every count after a load or a deletion).
        Called with ``_counting`` held."""
        if self._used_for is None:
            self._used_for = UsedFor(version, width=version[2])
            self._counted = [(i, t, 0.0, c) for i, bag in self.query_bags.items() for t, c in bag.items()]
        elif self._used_for.version != version:
            self._used_for = self._used_for.reweighted(version, idf)
        self._used_for.add(self._counted, idf)
        self._counted = []
        return self._used_for

    def coaccess(self, slot_of: SlotMap, n_slots: int, seeds: np.ndarray, restart: np.ndarray) -> np.ndarray:
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

    def _coaccess_matrix(self, slot_of: SlotMap, n_slots: int) -> tuple[np.ndarray, np.ndarray | sp.csr_matrix]:
        """The slots that have edges (sorted), and the walk's transition among them and a last,
        dead-end node: each row of the edge matrix divided by max(row sum, 1), transposed for the
        power iteration (dense up to :data:`DENSE_WALK` nodes). Every edge decays with the clock,
        so each feedback event changes every value: it is made again, from arrays."""
        if self._coaccess is None or self._coaccess[0] != (n_slots, self.clock):
            e = self.edges
            w = decayed(e.weight, 0.0, e.updated, self.clock, self.params.edge_half_life_days)
            x, y = slot_of.slots_of(e.a), slot_of.slots_of(e.b)
            live = (x >= 0) & (y >= 0)
            x, y, w = x[live], y[live], w[live]
            linked = np.union1d(x, y)
            xs, ys = np.searchsorted(linked, np.concatenate([x, y])), np.searchsorted(linked, np.concatenate([y, x]))
            w = np.concatenate([w, w])
            size = len(linked) + 1
            values = w * (1.0 / np.maximum(np.bincount(xs, weights=w, minlength=size), 1.0))[xs]
            if size <= DENSE_WALK:
                transposed = np.zeros((size, size))
                transposed[ys, xs] = values
            else:
                transposed = sp.csr_matrix((values, (ys, xs)), shape=(size, size))
            self._coaccess = ((n_slots, self.clock), linked, transposed)
        return self._coaccess[1], self._coaccess[2]
