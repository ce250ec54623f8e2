"""The intent-steered walk over the topic graph, and what its visits are worth to items.

At every step the intent's hard filter picks the candidate tier (the intent's own relation
first, then fallbacks that keep moving in the same direction: deepen never climbs, broaden
never descends), the policy scores each candidate

    α·cos(μk, q) + β·cos(μk, μi) + γ·R_intent(i, k) + novelty + prior_weight·prior(k)
    − repetition·visits(k)² − backtrack·[k = previous]

and a stable softmax (blended with the Markov transition model *inside* the filtered tier)
chooses the move, greedily or by seeded sampling. Every step is kept for the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..arrays import distinct, ranges
from ..config import Settings
from ..lazy import sparse as sp
from .graph import CHILD, PARENT, RELATIONS, SEMANTIC, SIBLING, Neighbourhood, TopicGraph
from .intents import IntentGuess
from .markov import TransitionModel
from ..vectors import VectorIndex
from .tree import TopicTree, rollup, softmax

TERMS = ("alpha_cos_query", "beta_cos_prev", "gamma_intent", "novelty", "prior", "repetition", "backtrack")


@dataclass
class Policy:
    """The walk's weights: each field is the setting ``walk_<field>`` (defaults and meanings in engine.config)."""

    alpha: float
    beta: float
    gamma: float
    novelty: float
    prior_weight: float
    repetition: float
    backtrack: float
    temperature: float
    greedy: bool
    steps: int
    max_starts: int
    start_ratio: float
    clarify_min_cos: float
    markov_weight: float
    markov_lambda: float
    markov_smoothing: float
    rerank: float
    revisits: int

    @classmethod
    def from_settings(cls, s: Settings) -> "Policy":
        return cls(**{name: getattr(s, "walk_" + name) for name in cls.__dataclass_fields__})


# -- the trace ----------------------------------------------------------------------------------


@dataclass
class Candidate:
    """One scored move: the policy's terms (penalties negative), their total and P(move)."""

    node: str
    label: str
    relation: str
    depth: int
    terms: dict[str, float]
    total: float
    probability: float

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "label": self.label, "relation": self.relation, "depth": self.depth,
                "terms": {k: round(v, 6) for k, v in self.terms.items()}, "score": round(self.total, 6),
                "total": round(self.total, 6), "probability": round(self.probability, 6)}


@dataclass
class ScoreTable:
    """A step's candidates as arrays (cheap to keep); :class:`Candidate` rows on demand."""

    tree: TopicTree
    nodes: np.ndarray
    relations: np.ndarray
    terms: np.ndarray  # (len(TERMS), candidates)
    total: np.ndarray
    probabilities: np.ndarray

    def rows(self) -> list[Candidate]:
        t = self.tree
        return [Candidate(t.paths[k], t.labels[k], RELATIONS[r], int(t.depth[k]), dict(zip(TERMS, self.terms[:, i].tolist())),
                          float(self.total[i]), float(self.probabilities[i]))
                for i, (k, r) in enumerate(zip(self.nodes.tolist(), self.relations.tolist()))]


@dataclass
class WalkStep:
    """Where the walk stands after a move (``relation`` = how it got there; ``start`` begins a walk)."""

    node: str
    label: str
    depth: int
    relation: str
    probability: float
    table: ScoreTable | None = field(default=None, repr=False)
    walk: int = 0  # which start this step belongs to
    fallback: int = 0  # 0: the intent's own relation; n: the n-th fallback tier

    @property
    def candidates(self) -> list[Candidate]:
        return self.table.rows() if self.table is not None else []

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "label": self.label, "depth": self.depth, "relation": self.relation,
                "probability": round(self.probability, 6), "chosen_probability": round(self.probability, 6),
                "walk": self.walk, "fallback": self.fallback, "candidates": [c.to_dict() for c in self.candidates]}


@dataclass
class Walk:
    intent: IntentGuess
    steps: list[WalkStep]
    visits: np.ndarray  # per topic
    scores: np.ndarray | None = None  # per item slot, once projected
    message: str = ""
    support: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # slots (ascending) outside which ``scores`` is 0


# -- starts and filters ---------------------------------------------------------------------------


def start_nodes(tree: TopicTree, leaf_prior: np.ndarray, intent: str, policy: Policy) -> list[int]:
    """Leaves near the best one in prior start walks (several when the prior is flat).

    Each intent starts where it has room to move: deepen at a mid-level ancestor of the leaf,
    every other intent at the leaf itself (broaden then climbs from the bottom).
    """
    order = np.argsort(-leaf_prior, kind="stable")
    best = leaf_prior[order[0]]
    chosen = [int(tree.leaves[i]) for i in order[: max(1, policy.max_starts)] if leaf_prior[i] >= policy.start_ratio * best]
    if intent == "deepen":
        chosen = [tree.ancestor_at(t, max(1, (int(tree.depth[t]) + 1) // 2)) for t in chosen]
    return list(dict.fromkeys(chosen))


def intent_tiers(intent: str, nb: Neighbourhood, clarify_min_cos: float) -> list[np.ndarray]:
    """Masks over the neighbourhood, in order of preference; the first non-empty one is used.
    They depend on the graph alone, so each neighbourhood keeps them once computed."""
    key = (intent, clarify_min_cos)
    if key not in nb.tiers:
        nb.tiers[key] = _tiers(intent, nb, clarify_min_cos)
    return nb.tiers[key]


def _tiers(intent: str, nb: Neighbourhood, clarify_min_cos: float) -> list[np.ndarray]:
    rel, dd = nb.relations, nb.depth_change
    sideways = (rel == SIBLING) | (rel == SEMANTIC)
    if intent == "deepen":
        return [rel == CHILD, sideways & (dd >= 0) & nb.has_children, sideways & (dd >= 0)]
    if intent == "broaden":
        return [rel == PARENT, sideways & (dd <= 0)]
    if intent == "compare":
        return [rel == SIBLING]  # a comparison stays in the family: it ends when the siblings are seen
    if intent == "apply":
        return [rel == SEMANTIC, rel == SIBLING]
    if intent == "clarify":
        semantic = rel == SEMANTIC
        closest = semantic & (nb.weights >= (nb.weights[semantic].max() if semantic.any() else np.inf))
        return [semantic & (nb.weights >= clarify_min_cos), closest, rel == SIBLING]
    return [np.ones(len(rel), dtype=bool)]


# -- the walk -------------------------------------------------------------------------------------


def run_walk(tree: TopicTree, graph: TopicGraph, markov: TransitionModel | None, q_vec: np.ndarray,
             intent: IntentGuess, policy: Policy, rng: np.random.Generator | None, temperature: float) -> Walk:
    """Walk from every start for ``policy.steps`` moves; a walk ends early when no tier of its
    intent holds a topic it has not been to. ``visits`` (for novelty and repetition) are shared
    by all the walks, so later starts are pushed towards ground the earlier ones did not cover."""
    leaf_prior = softmax(tree.centroids[tree.leaves] @ q_vec, temperature)
    prior = rollup(leaf_prior, tree)
    cos_q = tree.centroids @ q_vec
    visits = np.zeros(len(tree))
    steps: list[WalkStep] = []
    for n, start in enumerate(start_nodes(tree, leaf_prior, intent.name, policy)):
        visits[start] += 1
        steps.append(WalkStep(tree.paths[start], tree.labels[start], int(tree.depth[start]), "start", 1.0, walk=n))
        path, on_path = [start], np.zeros(len(tree), dtype=np.int64)
        on_path[start] = 1
        for _ in range(max(0, policy.steps)):
            move = _step(tree, graph, markov, path, on_path, visits, cos_q, prior, intent.name, policy, rng)
            if move is None:
                break
            chosen, step = move
            step.walk = n
            visits[chosen] += 1
            on_path[chosen] += 1
            path.append(chosen)
            steps.append(step)
    return Walk(intent, steps, visits)


def _step(tree: TopicTree, graph: TopicGraph, markov: TransitionModel | None, path: list[int], on_path: np.ndarray,
          visits: np.ndarray, cos_q: np.ndarray, prior: np.ndarray, intent: str, policy: Policy,
          rng: np.random.Generator | None) -> tuple[int, WalkStep] | None:
    """One move from the end of ``path`` (``on_path``: how often this walk has been to each topic)."""
    here = path[-1]
    previous = path[-2] if len(path) > 1 else -1
    nb = graph.around[here]
    fresh = on_path[nb.nodes] <= policy.revisits  # by default a walk never returns to its own path: no oscillation
    open_tiers = (mask & fresh for mask in intent_tiers(intent, nb, policy.clarify_min_cos))
    level, keep = next(((n, mask) for n, mask in enumerate(open_tiers) if mask.any()), (None, None))
    if level is None:
        return None
    nodes, rels = nb.nodes[keep], nb.relations[keep]
    relevance = 0.0 if intent == "neutral" else (1.0 if level == 0 else 0.5)
    terms = np.empty((len(TERMS), len(nodes)))  # in the order of TERMS
    terms[0] = policy.alpha * cos_q[nodes]
    terms[1] = policy.beta * nb.closeness[keep]
    terms[2] = policy.gamma * relevance
    seen = visits[nodes]
    terms[3] = policy.novelty * (seen == 0)
    terms[4] = policy.prior_weight * prior[nodes]
    terms[5] = -policy.repetition * seen ** 2
    terms[6] = -policy.backtrack * (nodes == previous)
    total = terms.sum(axis=0)
    greedy = rng is None
    probs = softmax(total, 0.0 if greedy and policy.temperature <= 0 else policy.temperature)
    if markov is not None and policy.markov_weight > 0:
        transition = markov.probabilities(previous, here, nodes, policy.markov_lambda, policy.markov_smoothing)
        if transition is not None:  # blended inside the filtered tier: it cannot bypass the intent
            probs = (1 - policy.markov_weight) * probs + policy.markov_weight * transition
    pick = int(np.lexsort((nodes, -probs))[0]) if greedy else int(rng.choice(len(nodes), p=probs / probs.sum()))
    chosen = int(nodes[pick])
    return chosen, WalkStep(tree.paths[chosen], tree.labels[chosen], int(tree.depth[chosen]), RELATIONS[int(rels[pick])],
                            float(probs[pick]), ScoreTable(tree, nodes, rels, terms, total, probs), fallback=level)


# -- visits → item scores ---------------------------------------------------------------------------


def item_scores(visits: np.ndarray, projection: sp.csr_matrix, q_vec: np.ndarray, item_vectors: VectorIndex,
                rerank: float) -> tuple[np.ndarray, np.ndarray]:
    """Each visited topic spends its visits over its items (a fixed budget per topic); with
    ``rerank`` > 0 the scores are blended with the items' cosine to the query. Returns the
    scores of every slot and the slots the walk reached (ascending; every other score is 0).
    The spending is summed per reached item (each item's shares in the order a sum over every
    slot adds them), not in an array over every slot: at a million items those passes cost
    more than the sums."""
    visited = np.flatnonzero(visits)
    starts, ends = projection.indptr[visited], projection.indptr[visited + 1]
    take = ranges(starts, ends - starts)
    spend = np.repeat(visits[visited], ends - starts) * projection.data[take]
    reached, at = np.unique(projection.indices[take], return_inverse=True)
    sums = np.bincount(at, weights=spend, minlength=len(reached))
    positive = sums > 0
    hit, sums = reached[positive].astype(np.intp), sums[positive]
    out = np.zeros(projection.shape[1])
    if not len(hit):
        return out, hit
    out[hit] = sums / sums.max()
    if rerank > 0 and len(item_vectors):
        usable = hit[hit < len(item_vectors)]
        cos = np.maximum(item_vectors.rows(usable) @ q_vec, 0.0)
        out[hit] *= 1 - rerank
        out[usable] += rerank * cos
    return out, hit


def backfill(scores: np.ndarray, support: np.ndarray, projection: sp.csr_matrix, leaf_order: np.ndarray,
             q_vec: np.ndarray, item_vectors: VectorIndex, top_k: int) -> tuple[np.ndarray, np.ndarray]:
    """Honour ``top_k`` when the walk reached too few items: add the items of the best leaves
    by prior, ranked by cosine to the query, below every item the walk reached. ``support``: the
    slots outside which ``scores`` is 0 (ascending); returned with the slots added."""
    reached = scores[support]
    have = int((reached > 0).sum())
    if have >= top_k:
        return scores, support
    out = scores.copy()
    floor = reached[reached > 0].min() if have else 1.0
    added = [support]
    for leaf in leaf_order.tolist():
        slots = projection[leaf].indices
        fresh = slots[out[slots] <= 0]
        if len(fresh):
            usable = fresh[fresh < len(item_vectors)]
            cos = np.zeros(len(fresh))
            cos[: len(usable)] = item_vectors.rows(usable) @ q_vec if len(usable) else 0.0
            out[fresh] = floor * 0.5 * (1.0 + np.clip(cos, -1.0, 1.0)) / 2.0 + 1e-9
            floor = out[fresh].min()
            have += len(fresh)
            added.append(fresh)
        if have >= top_k:
            break
    return out, distinct(np.concatenate(added))


# -- context windows ------------------------------------------------------------------------------


@dataclass
class ContextWindow:
    """A hit widened by its neighbouring items in the same source (no item in two windows)."""

    anchor: int  # item id of the hit
    source_id: int
    item_ids: list[int]
    score: float


def context_windows(hits: Sequence[tuple[int, float]], source_ids: np.ndarray, positions: np.ndarray, alive: np.ndarray,
                    slot_of: dict[int, int], item_ids: np.ndarray, radius: int = 1, per_source: int | None = None,
                    limit: int | None = None) -> list[ContextWindow]:
    """Windows of ±``radius`` items around each hit (``hits`` = (item id, score), best first).

    Items already in a better window are left out; a hit inside one adds no window. At most
    ``per_source`` windows per source come first, the rest only if ``limit`` is not reached."""
    limit = limit or len(hits)
    per_source = per_source or max(1, limit // 2)
    covered: set[int] = set()
    first, deferred = [], []
    taken: dict[int, int] = {}
    for item_id, score in hits:
        slot = slot_of.get(item_id)
        if slot is None or item_id in covered:
            continue
        src, pos = source_ids[slot], positions[slot]
        near = np.flatnonzero((source_ids == src) & alive & (np.abs(positions - pos) <= radius))
        near = near[np.argsort(positions[near], kind="stable")]
        members = [int(i) for i in item_ids[near] if int(i) not in covered]
        covered.update(members)
        window = ContextWindow(item_id, int(src), members, float(score))
        (first if taken.get(int(src), 0) < per_source else deferred).append(window)
        taken[int(src)] = taken.get(int(src), 0) + 1
    return (first + deferred)[:limit]
