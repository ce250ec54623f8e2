"""The query pipeline: text in, a :class:`Recall` out. It reads top to bottom.

1. ``Query``       — the text analysed once: term ids, weights, dense query vectors.
2. ``Signals``     — every scorer (BM25, dense, …) gives one score per slot, computed lazily
                     and at most once per query.
3. ``STRATEGIES``  — a strategy turns signals into a ranking of candidate slots, with the
                     per-signal features that explain each one.
   feedback memory — what people marked for this query or one like it moves its items
                     (``mem.ranker.remembered``; engine.rank.marks).
4. ``assemble``    — the top slots become hits with their items.

Recall is read-only: nothing here writes to the store or changes what the next recall returns.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .lexical import top_k as top_k_of
from .topics.intents import UnknownIntent, check_intent
from .records import Item

if TYPE_CHECKING:
    from .memory import Memory


class RecallError(ValueError):
    """A query the engine refuses (empty, too long, unknown strategy)."""


# -- results ---------------------------------------------------------------------------------


@dataclass
class Hit:
    item: Item
    score: float
    rank: int
    sources: list[str]  # the signals that found this item among their candidates
    features: dict[str, float] = field(default_factory=dict)
    taught: Any = None  # engine.rank.marks.MarkNote: marked for this query or one like it

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self.item)
        return {"id": self.item.id, "rank": self.rank, "score": self.score, "sources": self.sources,
                "features": self.features, "item": d, "taught": self.taught.to_dict() if self.taught else None}


@dataclass
class Recall:
    query: str
    strategy: str
    top_k: int
    hits: list[Hit]
    mode: str = "pro"
    facts: list[Any] = field(default_factory=list)
    episodes: list[Any] = field(default_factory=list)
    intent: dict[str, Any] | None = None
    trace: list[Any] = field(default_factory=list)
    graph: dict[str, Any] | None = None  # for graph expansion: seeds and nodes reached
    token: str | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        def plain(x: Any) -> Any:
            return x.to_dict() if hasattr(x, "to_dict") else asdict(x) if hasattr(x, "__dataclass_fields__") else x

        return {
            "query": self.query, "strategy": self.strategy, "mode": self.mode, "top_k": self.top_k,
            "hits": [h.to_dict() for h in self.hits], "facts": [plain(f) for f in self.facts],
            "episodes": [plain(e) for e in self.episodes], "intent": self.intent,
            "trace": [plain(s) for s in self.trace], "graph": self.graph, "token": self.token,
            "timings": self.timings,
        }


# -- 1. the query -----------------------------------------------------------------------------

MODES = ("lite", "pro", "max")  # lite: episodes + facts; pro: + the hits; max: + backfill from their episodes


@dataclass
class Query:
    text: str
    term_ids: np.ndarray
    term_weights: np.ndarray
    top_k: int
    strategy: str
    mode: str = "pro"
    options: dict[str, Any] = field(default_factory=dict)
    notes: dict[str, Any] = field(default_factory=dict)  # per-query results areas share (e.g. the topic walk)


def prepare_query(mem: "Memory", text: str, top_k: int, strategy: str, mode: str, **options: Any) -> Query:
    if not isinstance(text, str) or not text.strip():
        raise RecallError("the query is empty")
    limit = mem.settings.max_query_chars
    if len(text) > limit:
        raise RecallError(f"the query is {len(text):,} characters long; the limit is {limit:,}")
    if strategy not in STRATEGIES:
        raise RecallError(f"unknown strategy {strategy!r}; choose one of: {', '.join(sorted(mem.strategies()))}")
    if strategy in SIGNALS and not signal_available(mem, strategy):
        raise RecallError(f"strategy {strategy!r} is not available on this store: {AVAILABLE[strategy][1]}")
    if top_k < 1:
        raise RecallError("top_k must be at least 1")
    if mode not in MODES:
        raise RecallError(f"unknown mode {mode!r}; choose one of: {', '.join(MODES)}")
    try:
        options["intent"] = check_intent(options.get("intent"))
    except UnknownIntent as exc:
        raise RecallError(str(exc)) from None
    term_ids, weights = mem.index.query_terms(text)
    return Query(text=text, term_ids=term_ids, term_weights=weights, top_k=top_k, strategy=strategy, mode=mode, options=options)


# -- 2. signals -------------------------------------------------------------------------------


def bm25_signal(mem: "Memory", q: Query) -> np.ndarray:
    """BM25 of every slot; kept in the query's notes because the PageRank signal seeds from it too."""
    if "bm25" not in q.notes:
        q.notes["bm25"] = mem.index.bm25.scores(q.term_ids, q.term_weights)
    return q.notes["bm25"]


def dense_signal(mem: "Memory", q: Query) -> np.ndarray:
    """Cosine to the query under the configured dense embedder (0 where it cannot score)."""
    index = mem.index
    out = np.zeros(index.n_slots, dtype=np.float64)
    vec, matrix = _dense_query(mem, q)
    if vec is None or matrix is None:
        return out
    scores = matrix.scores(vec)
    out[: len(scores)] = scores
    out[~index.alive] = 0.0
    return out


def dense_at(mem: "Memory", q: Query, slots: np.ndarray) -> np.ndarray:
    """The dense signal for ``slots`` only: a gather of their rows instead of a scan of all."""
    vec, matrix = _dense_query(mem, q)
    if vec is None or matrix is None:
        return np.zeros(len(slots))
    return matrix.scores_at(slots, vec).astype(np.float64)


def _dense_query(mem: "Memory", q: Query) -> tuple[Any, Any]:
    """The query vector and its matrix, made once per query (an endpoint is paid once)."""
    if "dense_query" not in q.notes:
        q.notes["dense_query"] = mem.dense_query(q)
    return q.notes["dense_query"]


def ppr_signal(mem: "Memory", q: Query) -> np.ndarray:
    """Personalized PageRank over the knowledge graph, seeded by the query's entities and top BM25 items."""
    graph = mem.knowledge.graph_scores(q.text, bm25_signal(mem, q))
    q.notes["graph"] = {"seeds": graph.seeds, "reached": graph.reached}  # shown by any strategy that used it
    return graph.item_scores


def walk_signal(mem: "Memory", q: Query) -> np.ndarray:
    """Item scores from the intent-steered walk over the topic tree (engine.topics.navigate)."""
    if not hasattr(mem, "topics"):
        return np.zeros(mem.index.n_slots)
    return mem.topics.walk(q).scores


def image_signal(mem: "Memory", q: Query) -> np.ndarray:
    """Cosine of the query to each shared photo under the multimodal image model (engine.images);
    0 everywhere, with no request, when no image model is set or no image is embedded."""
    if not hasattr(mem, "images"):
        return np.zeros(mem.index.n_slots)
    return mem.images.scores(q)


SIGNALS: dict[str, Callable[["Memory", Query], np.ndarray]] = {
    "bm25": bm25_signal,
    "dense": dense_signal,
    "walk": walk_signal,
    "ppr": ppr_signal,
    "image": image_signal,
}

# Signals that can speak on some stores only (name → whether this memory can compute it); every
# other signal always can. ``fused`` takes only available signals as features (so its feature set,
# and a taught ranker, do not change when a signal could say nothing), and a strategy made of one
# unavailable signal is not offered.
AVAILABLE: dict[str, tuple[Callable[["Memory"], bool], str]] = {
    "image": (lambda mem: mem.has_area("images") and mem.images.enabled,
              "it needs an image embedding model (set MNEMOSCOPE_IMAGE_EMBED_MODEL)"),
}


def signal_available(mem: "Memory", name: str) -> bool:
    check = AVAILABLE.get(name)
    return check is None or check[0](mem)


class Signals:
    """Per-query cache: each signal is computed at most once, and only if asked for."""

    def __init__(self, mem: "Memory", q: Query) -> None:
        self.mem, self.q = mem, q
        self._values: dict[str, np.ndarray] = {}
        self.timings: dict[str, float] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._values:
            started = time.perf_counter()
            self._values[name] = SIGNALS[name](self.mem, self.q)
            self.timings[name + "_ms"] = (time.perf_counter() - started) * 1000
        return self._values[name]

    def top(self, name: str, k: int) -> np.ndarray:
        """Slots of the ``k`` best positive scores of a signal, best first."""
        return top_k_of(self[name], k)[0]


# -- 3. strategies ----------------------------------------------------------------------------


@dataclass
class Ranking:
    """Candidate slots, best first, with their scores and per-signal features."""

    slots: np.ndarray
    scores: np.ndarray
    found_by: dict[int, list[str]] = field(default_factory=dict)
    features: dict[str, np.ndarray] = field(default_factory=dict)  # each aligned with ``slots``
    extras: dict[str, Any] = field(default_factory=dict)


def single_signal(name: str) -> Callable[["Memory", Query, Signals], Ranking]:
    def strategy(mem: "Memory", q: Query, signals: Signals) -> Ranking:
        slots, scores = top_k_of(signals[name], max(q.top_k, mem.settings.candidate_k))
        return Ranking(slots, scores, {int(s): [name] for s in slots}, {name: scores})

    strategy.__doc__ = f"Rank by the {name} signal alone."
    return strategy


def rrf_fuse(lists: dict[str, np.ndarray], weights: dict[str, float], k: float) -> tuple[np.ndarray, np.ndarray, dict[int, list[str]], dict[str, dict[int, int]]]:
    """Reciprocal rank fusion: score = Σ weight / (k + rank), rank from 1.

    Returns (slots best first, fused scores, which lists found each slot, rank of each slot per list).
    """
    fused: dict[int, float] = {}
    found: dict[int, list[str]] = {}
    ranks: dict[str, dict[int, int]] = {}
    for name, slots in lists.items():
        w = weights.get(name, 1.0)
        ranks[name] = {}
        for rank, slot in enumerate(slots.tolist(), 1):
            fused[slot] = fused.get(slot, 0.0) + w / (k + rank)
            found.setdefault(slot, []).append(name)
            ranks[name][slot] = rank
    if not fused:
        return np.zeros(0, dtype=np.int64), np.zeros(0), found, ranks
    slots = np.fromiter(fused.keys(), dtype=np.int64, count=len(fused))
    scores = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
    order = np.lexsort((slots, -scores))
    return slots[order], scores[order], found, ranks


def linear_fuse(slots: np.ndarray, bm25: np.ndarray, dense: np.ndarray, dense_weight: float) -> tuple[np.ndarray, np.ndarray]:
    """Score fusion of candidates: (1 − w) · BM25 / max BM25 + w · cosine; (slots, scores) best first.

    Unlike RRF it keeps how far apart the BM25 scores are, so a weak dense signal can only
    reorder near-ties instead of promoting its own rank-1 over a clear lexical winner.
    """
    top = bm25.max() if len(bm25) else 0.0
    lexical = bm25 / top if top > 0 else np.zeros(len(bm25))
    scores = (1.0 - dense_weight) * lexical + dense_weight * np.maximum(dense, 0.0)
    keep = scores > 0
    slots, scores = slots[keep], scores[keep]
    order = np.lexsort((slots, -scores))
    return slots[order], scores[order]


def _found_by(slots: np.ndarray, lists: dict[str, np.ndarray]) -> dict[int, list[str]]:
    """Which candidate lists hold each of ``slots``."""
    found: dict[int, list[str]] = {}
    for name, listed in lists.items():
        for slot in listed.tolist():
            found.setdefault(slot, []).append(name)
    return {slot: found[slot] for slot in slots.tolist()}


def hybrid(mem: "Memory", q: Query, signals: Signals) -> Ranking:
    """BM25 and dense candidates fused by score (``fusion = "linear"``) or by rank (``"rrf"``).

    The dense side is weighted by ``dense_weight``; docs/benchmarks.md shows why it is small.
    With linear fusion and at least ``top_k`` BM25 candidates, the dense signal only re-scores
    those candidates (a row gather): on every benchmark that ranks exactly as adding the dense
    scan's own candidates, which at 100k items costs 10–20 ms.
    """
    s = mem.settings
    if s.fusion not in ("linear", "rrf"):
        raise RecallError(f"unknown fusion {s.fusion!r}; choose linear or rrf")
    depth = max(q.top_k, s.candidate_k)
    lists = {"bm25": signals.top("bm25", depth)}
    if s.fusion == "rrf" or len(lists["bm25"]) < q.top_k:
        lists["dense"] = signals.top("dense", depth)
    if s.fusion == "rrf":
        slots, scores, found, _ = rrf_fuse(lists, {"bm25": 1.0, "dense": s.dense_weight}, s.rrf_k)
        dense = dense_at(mem, q, slots)
    else:
        union = np.unique(np.concatenate(list(lists.values())))
        dense_of_union = dense_at(mem, q, union)
        slots, scores = linear_fuse(union, signals["bm25"][union], dense_of_union, s.dense_weight)
        dense = dense_of_union[np.searchsorted(union, slots)]
        found = _found_by(slots, lists)
    features = {"bm25": signals["bm25"][slots], "dense": dense, "fused": scores}
    return Ranking(slots, scores, found, features)


def fused(mem: "Memory", q: Query, signals: Signals) -> Ranking:
    """Every signal's candidates, one feature vector each, scored by the ranker (engine.rank):
    the heuristic floor, blended with the learned model once its gate opens."""
    return mem.ranker.rank(q, signals)


def ppr(mem: "Memory", q: Query, signals: Signals) -> Ranking:
    """BM25 blended with PPR over the knowledge graph (engine.knowledge.retrieval)."""
    from .knowledge.retrieval import ppr_ranking

    return ppr_ranking(mem, q, signals)


def hybrid_walk(mem: "Memory", q: Query, signals: Signals) -> Ranking:
    """Hybrid's scores (scaled to a maximum of 1) plus ``walk_fusion_weight`` × the walk's item
    score: the walk acts as a topical prior over hybrid's candidates and the walk's own best."""
    s = mem.settings
    base = hybrid(mem, q, signals)
    walk = signals["walk"]
    slots = np.union1d(base.slots, signals.top("walk", max(q.top_k, s.candidate_k)))
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


STRATEGIES: dict[str, Callable[["Memory", Query, Signals], Ranking]] = {
    "bm25": single_signal("bm25"),
    "dense": single_signal("dense"),
    "hybrid": hybrid,
    "walk": single_signal("walk"),
    "hybrid_walk": hybrid_walk,
    "fused": fused,
    "ppr": ppr,
    "image": single_signal("image"),
}


# -- 4. assembly ------------------------------------------------------------------------------


def assemble(mem: "Memory", q: Query, ranking: Ranking) -> list[Hit]:
    chosen = ranking.slots[: q.top_k]
    ids = [int(i) for i in mem.index.item_ids[chosen]]
    items = mem.store.items(ids)
    taught = ranking.extras.get("taught", {})
    hits = []
    for n, (slot, item_id) in enumerate(zip(chosen.tolist(), ids)):
        item = items.get(item_id)
        if item is None:
            continue
        features = {name: float(values[n]) for name, values in ranking.features.items()}
        hits.append(Hit(item=item, score=float(ranking.scores[n]), rank=len(hits) + 1,
                        sources=ranking.found_by.get(slot, []), features=features, taught=taught.get(slot)))
    return hits


def recall(mem: "Memory", text: str, *, top_k: int = 10, strategy: str = "hybrid", mode: str = "pro", **options: Any) -> Recall:
    started = time.perf_counter()
    q = prepare_query(mem, text, top_k, strategy, mode, **options)
    signals = Signals(mem, q)
    ranking = STRATEGIES[strategy](mem, q, signals)
    if hasattr(mem, "ranker"):  # what people marked for this query or one like it (engine.rank.marks)
        ranking = mem.ranker.remembered(q, ranking)
    ranked = time.perf_counter()
    hits = assemble(mem, q, ranking)
    result = Recall(query=text, strategy=strategy, mode=mode, top_k=top_k, hits=hits)
    if hasattr(mem, "topics"):  # the intent used and the walk's steps, when a walk ran or was asked for
        result.intent, result.trace = mem.topics.navigation(q)
    if hasattr(mem, "knowledge"):  # facts, episodes, graph; lite drops the hits, max backfills
        from .knowledge.retrieval import assemble_mode

        assemble_mode(mem, q, result, ranking)
    if hasattr(mem, "ranker"):  # a signed token for feedback (nothing is written)
        result.token = mem.ranker.issue_token(q, ranking, hits)
    result.timings = {**signals.timings, "rank_ms": (ranked - started) * 1000,
                      "fetch_ms": (time.perf_counter() - ranked) * 1000,
                      "total_ms": (time.perf_counter() - started) * 1000}
    return result
