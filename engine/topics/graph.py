"""The graph over the topic tree: parent–child, sibling and semantic topic–topic relations, and
the topic → item edges the walk's visits are projected through.

Relations are decided by the hierarchy first (parent, child, sibling); semantic edges come from
centroid kNN and only join topics with no hierarchy relation, so they never duplicate (or
relabel) a parent–child pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..lazy import sparse as sp
from .tree import TopicTree

CHILD, PARENT, SIBLING, SEMANTIC = 1, 2, 3, 4
RELATIONS = {CHILD: "child", PARENT: "parent", SIBLING: "sibling", SEMANTIC: "semantic"}


@dataclass
class Neighbourhood:
    """Every topic one move away from a topic: index, relation code, edge weight (cosine), and
    what every walk step from here reads, computed once with the graph instead of per step:
    each neighbour's depth below this topic, whether it has children, its centroid's cosine to
    this one's, and the walk's intent tiers (:func:`engine.topics.navigate.intent_tiers`)."""

    nodes: np.ndarray
    relations: np.ndarray
    weights: np.ndarray
    depth_change: np.ndarray
    has_children: np.ndarray
    closeness: np.ndarray
    tiers: dict[tuple[str, float], list[np.ndarray]] = field(default_factory=dict, repr=False)


class TopicGraph:
    """Relations between topics, computed once per tree (tree or DAG)."""

    def __init__(self, tree: TopicTree, neighbors: int, min_cos: float) -> None:
        self.tree = tree
        n = len(tree)
        self.parents: list[list[int]] = [([int(p)] if p >= 0 else []) + tree.extra_parents.get(t, []) for t, p in enumerate(tree.parent)]
        self.children: list[list[int]] = [[] for _ in range(n)]
        for t, ps in enumerate(self.parents):
            for p in ps:
                self.children[p].append(t)
        top = [t for t in range(n) if not self.parents[t]]
        self.siblings: list[list[int]] = []
        for t in range(n):
            family = top if not self.parents[t] else sorted({c for p in self.parents[t] for c in self.children[p]})
            self.siblings.append([s for s in family if s != t])
        self.has_children = np.array([bool(c) for c in self.children], dtype=bool)
        self.semantic = self._semantic_edges(neighbors, min_cos)
        self.around = [self._neighbourhood(t) for t in range(n)]

    def _family(self) -> np.ndarray:
        """(topics, topics) True where two topics are related by the hierarchy (or the same)."""
        n = len(self.tree)
        fam = np.eye(n, dtype=bool)
        for t in range(n):
            stack = list(self.parents[t])
            while stack:
                a = stack.pop()
                fam[t, a] = fam[a, t] = True
                stack.extend(self.parents[a])
            fam[t, self.siblings[t]] = True
        return fam

    def _semantic_edges(self, k: int, min_cos: float) -> list[dict[int, float]]:
        tree, n = self.tree, len(self.tree)
        edges: list[dict[int, float]] = [{} for _ in range(n)]
        if tree.flat or n < 2 or k <= 0:
            return edges
        sims = tree.centroids @ tree.centroids.T
        sims[self._family()] = -np.inf
        k = min(k, n - 1)
        best = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        for t in range(n):
            for u in best[t].tolist():
                w = float(sims[t, u])
                if w >= min_cos:  # symmetric: an edge is a neighbour relation both ways
                    edges[t][u] = edges[u][t] = w
        return edges

    def _neighbourhood(self, t: int) -> Neighbourhood:
        nodes, rels = [], []
        for rel, group in ((CHILD, self.children[t]), (PARENT, self.parents[t]), (SIBLING, self.siblings[t])):
            nodes += group
            rels += [rel] * len(group)
        semantic = sorted(self.semantic[t])
        nodes += semantic
        rels += [SEMANTIC] * len(semantic)
        weights = [self.semantic[t].get(u, 1.0) if r == SEMANTIC else 1.0 for u, r in zip(nodes, rels)]
        around = np.array(nodes, dtype=np.int64)
        tree = self.tree
        return Neighbourhood(around, np.array(rels, dtype=np.int64), np.array(weights), tree.depth[around] - tree.depth[t],
                             self.has_children[around], tree.centroids[around] @ tree.centroids[t])

    def edge_count(self) -> dict[str, int]:
        return {"parent_child": sum(len(c) for c in self.children), "semantic": sum(len(e) for e in self.semantic) // 2}


def projection(tree: TopicTree, slots: np.ndarray, leaves: np.ndarray, weights: np.ndarray, alive: np.ndarray,
               decay: float) -> sp.csr_matrix:
    """(topics, slots) topic → item weights, each topic's row summing to 1 over live items.

    A leaf reaches its items with their probability; each ancestor h levels up with
    probability · decay^h. The per-topic normalisation gives every visited topic the same budget,
    so broad topics do not drown the specific ones.
    """
    n_slots = len(alive)
    live = alive[slots]
    rows, cols, vals = [leaves[live]], [slots[live]], [weights[live]]
    current, w = leaves[live], weights[live]
    while True:
        up = tree.parent[current]
        keep = up >= 0
        if not keep.any():
            break
        w = w[keep] * decay
        current = up[keep]
        cols.append(cols[-1][keep])
        rows.append(current)
        vals.append(w)
    m = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(len(tree), n_slots))
    m.sum_duplicates()
    totals = np.asarray(m.sum(axis=1)).ravel()
    return (sp.diags(1.0 / np.where(totals > 0, totals, 1.0)) @ m).tocsr()
