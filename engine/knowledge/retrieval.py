"""The knowledge layer's steps in the query pipeline: strategy ``ppr`` and assembly by mode.

``ppr`` seeds Personalized PageRank with the query's entities and the top BM25 items, then ranks
by a blend of the normalised BM25 score and the normalised PPR score, so a passage reached only
through an entity named in the first hop (the second hop of a multi-hop question) can rise.

:func:`assemble_mode` turns the ranked hits into what the mode asks for: ``lite`` episodes and
facts only; ``pro`` those plus the hits; ``max`` plus the other items of the same episodes, at
most ``2 × top_k`` hits, in a fixed order (episode of the best hit first, then item position).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..lexical import top_k as top_k_of
from ..recall import Hit, Query, Ranking, Recall, Signals, literal_bm25

if TYPE_CHECKING:
    from ..memory import Memory


def _normalised(scores: np.ndarray) -> np.ndarray:
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)


def ppr_ranking(mem: "Memory", q: Query, signals: Signals) -> Ranking:
    """Rank by ``blend · BM25 + (1 − blend) · PPR``, both scaled to [0, 1] over the store; BM25 of
    the query's own words (``literal_bm25``)."""
    first = literal_bm25(mem, q)
    graph = mem.knowledge.graph_scores(q.text, first)
    lexical, walk = _normalised(first), _normalised(graph.item_scores)
    blend = mem.settings.ppr_blend
    combined = blend * lexical + (1.0 - blend) * walk
    slots, scores = top_k_of(combined, max(q.top_k, mem.settings.candidate_k))
    found = {int(s): [name for name, v in (("bm25", first[s]), ("ppr", walk[s])) if v > 0] for s in slots}
    features = {"bm25": first[slots], "ppr": graph.item_scores[slots], "fused": scores}
    return Ranking(slots, scores, found, features, {"graph": {"seeds": graph.seeds, "reached": graph.reached}})


def assemble_mode(mem: "Memory", q: Query, result: Recall, ranking: Ranking) -> None:
    """Add facts, episodes and graph to ``result``; drop or backfill hits as the mode asks."""
    knowledge = mem.knowledge
    graph = ranking.extras.get("graph") or q.notes.get("graph")
    if graph:
        result.graph = graph
    scores = {h.item.id: h.score for h in result.hits}
    result.facts = knowledge.facts_for(q.text, scores, mem.settings.facts_top_k)
    episode_of = knowledge.episodes_of_items([h.item.id for h in result.hits])
    order = list(dict.fromkeys(episode_of[h.item.id] for h in result.hits if h.item.id in episode_of))
    by_id = {e.id: e for e in knowledge.episodes(ids=order)}
    result.episodes = [by_id[e] for e in order if e in by_id]
    if q.mode == "lite":
        result.hits = []
    elif q.mode == "max":
        result.hits = result.hits + _backfill(mem, result, limit=2 * q.top_k)


def _backfill(mem: "Memory", result: Recall, limit: int) -> list[Hit]:
    """Other items of the hits' episodes, episode by episode, in item order, up to ``limit``."""
    have = {h.item.id for h in result.hits}
    wanted = [i for e in result.episodes for i in e.items if i not in have][: max(0, limit - len(result.hits))]
    items = mem.items(wanted)
    out = []
    for item_id in wanted:
        if item_id in items:
            out.append(Hit(item=items[item_id], score=0.0, rank=len(result.hits) + len(out) + 1, sources=["episode"]))
    return out
