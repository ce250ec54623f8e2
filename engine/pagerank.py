"""Personalized PageRank over a sparse matrix: the knowledge graph's walk (engine.knowledge) and
the ranker's co-access walk (engine.rank) share it.

:func:`personalized_pagerank` is a power iteration on the column-stochastic transpose in float32,
teleporting to the seed vector with probability ``1 - alpha``. Fifteen iterations (or an L1 change
below 1e-4) rank exactly as thirty do on the dev multi-hop sets, at half the cost; the knowledge
graph's walk stops at ``ppr_iterations`` (10), where every dev quality figure is still that of
fifteen (docs/benchmarks.md). On large
graphs :func:`local_push` pushes mass out from the seeds instead, at a cost that does not grow
with the graph.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import distinct, ranges
from .lazy import sparse as sp

PUSH_EPS = 1e-5


@dataclass
class Seeds:
    """Where a walk jumps back to: a few nodes (ascending, distinct) and their mass, kept apart
    from the graph's size so that a local push never reads a vector over every node."""

    nodes: np.ndarray
    mass: np.ndarray

    def dense(self, n: int) -> np.ndarray:
        """The seed vector over ``n`` nodes (for the power iteration)."""
        out = np.zeros(n, dtype=np.float64)
        out[self.nodes] = self.mass
        return out


def personalized_pagerank(transition: sp.csr_matrix | np.ndarray, seeds: np.ndarray, alpha: float = 0.5,
                          iterations: int = 15, tol: float = 1e-4) -> np.ndarray:
    """Stationary visit probabilities of a walk that follows an edge with probability ``alpha``
    and otherwise jumps back to the seeds; mass reaching a dead end also returns to the seeds
    (``transition`` may be dense: a small graph's walk costs less so)."""
    total = float(seeds.sum())
    if total <= 0:
        return np.zeros(transition.shape[0], dtype=np.float32)
    s = (seeds / total).astype(np.float32)
    seeded = np.flatnonzero(s)  # a query has a few seeds: the jump back adds to them alone
    jump = s[seeded]
    p = s.copy()
    a = np.float32(alpha)
    for _ in range(iterations):
        nxt = transition @ p
        back = (np.float32(1.0) - a * np.float32(nxt.sum())) * jump
        nxt *= a  # the step's new vector and the change's below are made in place: no temporaries per step
        nxt[seeded] += back
        change = float(np.abs(np.subtract(nxt, p, out=p), out=p).sum())
        p = nxt
        if change < tol:
            break
    return p


def local_push(forward: sp.csr_matrix, seed_nodes: np.ndarray, seed_mass: np.ndarray, alpha: float = 0.5,
               eps: float = PUSH_EPS, max_rounds: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Approximate PPR by pushing residual mass out from the seeds (Andersen, Chung and Lang),
    all nodes over the threshold at once per round: only nodes holding more than ``eps`` residual
    per neighbour are expanded, so the work depends on ``eps`` and ``alpha``, not on the size of
    the graph. Underestimates every score by at most the residual left behind.

    The seeds come as (ascending nodes, mass) and the nodes reached are returned beside the visit
    probabilities (ascending; every other node's is 0), so that a caller reads the few nodes the
    push reached instead of every node. Each round looks only at the nodes the previous one
    reached (a node that was not reached kept a residual under its threshold), with their rows
    gathered straight from the CSR arrays: no pass over every node, which at a million items
    cost more than the push itself. The probabilities' array is all zeros but for the nodes
    reached, which the allocator gives without touching its pages."""
    n = forward.shape[0]
    p = np.zeros(n, dtype=np.float32)
    total = float(seed_mass.sum())
    if total <= 0:
        return p, np.zeros(0, dtype=np.int64)
    s = (seed_mass / total).astype(np.float32)
    seed_nodes, s = seed_nodes[s != 0], s[s != 0]
    r = np.zeros(n, dtype=np.float32)
    r[seed_nodes] = s
    indptr, indices, data = forward.indptr, forward.indices, forward.data
    frontier = seed_nodes
    pushed: list[np.ndarray] = []
    for _ in range(max_rounds):
        starts = indptr[frontier]
        counts = indptr[frontier + 1] - starts
        over = r[frontier] > np.float32(eps) * np.maximum(counts, 1).astype(np.float32)
        active, starts, counts = frontier[over], starts[over], counts[over]
        if not len(active):
            break
        pushed.append(active)
        mass = r[active]
        r[active] = 0.0
        p[active] += np.float32(1.0 - alpha) * mass
        entries = ranges(starts, counts)
        moved = np.repeat(np.float32(alpha) * mass, counts) * data[entries]
        frontier, slot = np.unique(indices[entries], return_inverse=True)
        r[frontier] += np.bincount(slot, weights=moved, minlength=len(frontier)).astype(np.float32)
        stuck = float(mass[counts == 0].sum())
        if stuck:  # a dead end sends its walkers back to the seeds, as in the power iteration
            r[seed_nodes] += np.float32(alpha * stuck) * s
            frontier = distinct(np.concatenate([frontier, seed_nodes]))
    reached = distinct(np.concatenate(pushed)) if pushed else np.zeros(0, dtype=np.int64)
    return p, reached
