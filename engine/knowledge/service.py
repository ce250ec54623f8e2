"""``mem.knowledge``: the knowledge layer as an area of the engine (:class:`engine.area.Area`).

Episodes, facts, entities and the typed graph of one store, built up from its parts:

* :mod:`.building` — ingest-time knowledge: what each stored item adds (entities, mentions,
  facts, events, episodes, graph edges), and the in-memory state it is kept in;
* :mod:`.reading` — browsing: facts, entities and episodes as the app and the CLI show them;
* :mod:`.curation` — a person's edits, merges and splits, each one transaction;
* :mod:`.transfer` — the knowledge state in an export, and back (format: :mod:`.portable`);
* :mod:`.queue` — the durable LLM extraction queue (the client: :mod:`.llm`).

This module adds what recall needs: Personalized PageRank over the typed graph (the ``ppr``
signal, seeded by the query's entities and the top BM25 items), the strategy ``ppr``, which ranks
by a blend of the normalised BM25 and PPR scores, so a passage reached only through an entity
named in the first hop (the second hop of a multi-hop question) can rise, and the completion of
each recall with facts and episodes as the mode asks: ``lite`` episodes and facts only; ``pro``
those plus the hits; ``max`` plus the other items of the same episodes, at most ``2 × top_k``
hits, in a fixed order (episode of the best hit first, then item position). Deleting items
cascades here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..arrays import distinct
from ..as_of import later, said_on
from ..lexical import top_k as top_k_of
from ..pagerank import Seeds, local_push, personalized_pagerank
from ..pipeline import Hit, Query, Ranking, Recall, Signal, Signals, Strategy
from ..recall import literal_bm25
from ..records import KnowledgeCounts
from .graph import DEFAULT_WEIGHTS
from .queue import ExtractionQueue
from .records import GraphNode, GraphReport
from .through_time import KnowledgeThroughTime
from .transfer import KnowledgeTransfer


@dataclass
class GraphResult:
    """A PPR run for a query: item scores by slot (and the slots where they are not 0, ascending),
    the seeds, and the nodes reached."""

    item_scores: np.ndarray
    scored: np.ndarray
    seeds: list[GraphNode]
    reached: list[GraphNode]

    def report(self) -> GraphReport:
        return {"seeds": self.seeds, "reached": self.reached}


class KnowledgeArea(ExtractionQueue, KnowledgeTransfer, KnowledgeThroughTime):
    """Episodes, facts, entities and the typed graph of one store."""

    # -- delete and figures ---------------------------------------------------------------------

    def on_delete(self, item_ids: list[int], dry_run: bool) -> dict[str, int]:
        """Facts and episodes that lose their last provenance go (a fact in a supersession
        chain or stated by a person stays, for the inbox); the rest lose that pointer."""
        with self._writing(dry_run):
            report = self._cascade(item_ids)
        if not dry_run:
            self.load()
        return report

    def _cascade(self, item_ids: list[int]) -> dict[str, int]:
        store = self.store
        losing = store.facts_losing_all(item_ids)
        kept = self.inbox.keep_for_review(losing)
        facts_gone = sorted(set(losing) - set(kept))
        facts_touched = {f for f, _ in store.facts_of_items(item_ids)} - set(facts_gone)
        episodes_gone = store.episodes_losing_all(item_ids)
        episodes_touched = set(store.episodes_of_items(item_ids).values()) - set(episodes_gone)
        store.delete_facts(facts_gone)
        store.delete_episodes(episodes_gone)
        store.delete_mentions_of_items(item_ids)
        orphans = store.orphan_entities()
        store.delete_entities(orphans)
        return {"facts_deleted": len(facts_gone), "facts_losing_provenance": len(facts_touched),
                "facts_kept_for_review": len(kept),
                "episodes_deleted": len(episodes_gone), "episodes_losing_items": len(episodes_touched),
                "entities_deleted": len(orphans)}

    def counts(self) -> KnowledgeCounts:
        """What the store holds (the same as :meth:`stats`: every figure is read from the store)."""
        return KnowledgeCounts.read(self.store)

    def stats(self) -> KnowledgeCounts:
        return self.counts()

    # -- graph and PPR ------------------------------------------------------------------------

    def edge_weights(self, overrides: dict[str, float] | None = None) -> dict[str, float]:
        weights = dict(DEFAULT_WEIGHTS)
        weights.update(overrides or {})
        return weights

    def warm_up(self) -> None:
        """The PPR matrices of the default edge weights (rebuilt whole after any change to the graph
        or the items: the first recall after an ingest, here or elsewhere, would pay for it)."""
        index, weights = self.mem.index, self.edge_weights()
        self.graph.degrees(index, weights)
        if self.graph.n_nodes(index) > self.settings.ppr_local_above:
            self.graph.forward(weights, index)

    def seeds(self, entity_ids: Sequence[int], first_stage: np.ndarray, weights: dict[str, float],
              first_top: np.ndarray | None = None) -> Seeds:
        """Seeds: the query's entities (rarer ones weigh more) and the top first-stage items
        (by their normalised score), each half of the mass when both exist. ``first_top``: those
        items, best first, when the caller has them (else a pass over every slot finds them)."""
        index = self.mem.index
        named = np.array([index.n_slots + node for e in entity_ids if (node := self.graph.entity_node(e)) is not None],
                         dtype=np.int64)
        nodes, mass = distinct(named), np.zeros(0)  # two names of one entity seed it once
        if len(nodes):
            degrees = self.graph.degrees(index, weights)
            mass = 1.0 / np.log(np.e + degrees[nodes])
            mass *= self.settings.ppr_entity_mass / mass.sum()
        top = top_k_of(first_stage, self.settings.ppr_seed_items)[0] if first_top is None else first_top
        if len(top):
            scores = first_stage[top] / first_stage[top].max()
            share = (1.0 - self.settings.ppr_entity_mass if len(nodes) else 1.0) * scores / scores.sum()
            order = np.argsort(top)
            nodes, mass = np.concatenate([top[order], nodes]), np.concatenate([share[order], mass])  # items, then entities
        return Seeds(nodes, mass)

    def ppr(self, seeds: Seeds, weights: dict[str, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """PPR over every node (items then entities) for seeds and edge-type weights: the visit
        probabilities and the nodes they are not 0 at (ascending). A large graph pushes mass
        out from the seeds, so only the nodes it reaches are read."""
        weights = self.edge_weights(weights)
        index, alpha = self.mem.index, self.settings.ppr_alpha
        n = self.graph.n_nodes(index)
        if n > self.settings.ppr_local_above:
            return local_push(self.graph.forward(weights, index), seeds.nodes, seeds.mass, alpha=alpha)
        visits = personalized_pagerank(self.graph.transition(weights, index), seeds.dense(n), alpha=alpha,
                                       iterations=self.settings.ppr_iterations)
        return visits, np.flatnonzero(visits)

    def graph_scores(self, text: str, first_stage: np.ndarray, weights: dict[str, float] | None = None,
                     reached: int = 20, entities: list[int] | None = None,
                     first_top: np.ndarray | None = None, as_of: str | None = None) -> GraphResult:
        """PPR from the query's entities (``entities``: those already found in ``text``) and the
        top first-stage items (``first_top``: its ``ppr_seed_items`` best, when known); item scores by slot. The graph is held still meanwhile: the seeds'
        node numbers, the matrices and the description must count the same nodes while a write in
        another thread (a catch-up's source) adds entities and edges. ``as_of``: the description
        leaves out the items said after it (:meth:`_best`)."""
        index = self.mem.index
        weights = self.edge_weights(weights)
        entities = self.query_entities(text) if entities is None else entities
        with self.graph.lock:
            seeds = self.seeds(entities, first_stage, weights, first_top)
            items = np.zeros(index.n_slots, dtype=np.float64)
            if seeds.mass.sum() <= 0:
                return GraphResult(items, np.zeros(0, dtype=np.int64),
                                   self._describe(seeds.nodes, seeds.mass, 20, as_of), [])
            visits, nodes = self.ppr(seeds, weights)
            on_items = nodes[nodes < index.n_slots]
            on_items = on_items[index.alive[on_items]]
            items[on_items] = visits[on_items]
            return GraphResult(items, on_items, self._describe(seeds.nodes, seeds.mass, 20, as_of),
                               self._describe(nodes, visits[nodes], reached, as_of))

    def _describe(self, nodes: np.ndarray, scores: np.ndarray, top: int, as_of: str | None) -> list[GraphNode]:
        """The ``top`` best of ``nodes`` (ascending) by ``scores`` as the recall shows them."""
        index, chosen = self.mem.index, self._best(nodes, scores, top, as_of)
        n_slots = index.n_slots
        entities_end = n_slots + len(self.graph.entity_ids)
        out: list[GraphNode] = []
        for node, score in zip(nodes[chosen].tolist(), scores[chosen].tolist()):
            if node < n_slots:
                out.append({"node": f"item:{int(index.item_ids[node])}", "kind": "item", "score": score})
            elif node < entities_end:
                eid = int(self.graph.entity_ids[node - n_slots])
                out.append({"node": f"entity:{eid}", "kind": "entity", "name": self.registry.names.get(eid, ""),
                            "score": score})
            else:
                phrase = self.graph.phrase_of(node, index)
                out.append({"node": f"phrase:{phrase}", "kind": "phrase", "name": phrase, "score": score})
        return out

    def _best(self, nodes: np.ndarray, scores: np.ndarray, top: int, as_of: str | None) -> np.ndarray:
        """Where the ``top`` best of ``nodes`` are, best first; as of a date, of those that are
        no item said after it: a recall as of a date shows no turn from after it, as its hits do
        not (the walk may still have passed through them), and as many nodes as existed then.
        Read in widening rounds, as the best of a large walk are mostly known early."""
        wanted = top
        while True:
            chosen = top_k_of(scores, wanted)[0]
            if as_of is None:
                return chosen
            slots = nodes[chosen]
            late = slots < self.mem.index.n_slots  # items, then those said after the date
            late[late] = [later(day, as_of) for day in said_on(self.store, self.mem.index, slots[late])]
            kept = chosen[~late]
            if len(kept) >= top or len(chosen) < wanted:
                return kept[:top]
            wanted *= 4

    # -- recall -------------------------------------------------------------------------------

    def signals(self) -> dict[str, Signal]:
        return {"ppr": self.ppr_signal}

    def strategies(self) -> dict[str, Strategy]:
        return {"ppr": self.ppr_strategy}

    def ppr_signal(self, q: Query, signals: Signals) -> np.ndarray:
        """Personalized PageRank over the knowledge graph, seeded by the query's entities and top BM25 items."""
        graph = self.graph_scores(q.text, signals["bm25"], entities=self.named_in(q),
                                  first_top=signals.top("bm25", self.settings.ppr_seed_items), as_of=q.options.get("as_of"))
        q.notes["graph"] = graph.report()  # shown by any strategy that used it
        signals.supports["ppr"] = graph.scored
        return graph.item_scores

    def ppr_strategy(self, q: Query, signals: Signals) -> Ranking:
        """BM25 blended with PPR over the knowledge graph: ``ppr_blend`` · BM25 + (1 − ``ppr_blend``)
        · PPR, both scaled to [0, 1] over the store; BM25 of the query's own words (``literal_bm25``).
        The blend is computed where either is not 0 (BM25's postings, the slots PageRank reached),
        not over every slot."""
        first = literal_bm25(self.mem, q)
        positive = np.flatnonzero(first > 0)
        graph = self.graph_scores(q.text, first, entities=self.named_in(q),
                                  first_top=top_k_of(first, self.settings.ppr_seed_items, among=positive)[0],
                                  as_of=q.options.get("as_of"))
        scored = distinct(np.concatenate([positive, graph.scored]))  # every other slot blends to 0
        lexical, walk = _normalised(first[scored]), _normalised(graph.item_scores[scored])
        blend = self.settings.ppr_blend
        combined = blend * lexical + (1.0 - blend) * walk
        at, scores = top_k_of(combined, max(q.top_k, self.settings.candidate_k))
        slots = scored[at]
        found = {int(s): [name for name, v in (("bm25", first[s]), ("ppr", w)) if v > 0]
                 for s, w in zip(slots.tolist(), walk[at].tolist())}
        features = {"bm25": first[slots], "ppr": graph.item_scores[slots], "fused": scores}
        return Ranking(slots, scores, found, features, {"graph": graph.report()})

    def complete(self, q: Query, ranking: Ranking, hits: list[Hit], result: Recall) -> None:
        """Add facts, episodes and graph to ``result``; drop or backfill hits as the mode asks."""
        graph = ranking.extras.get("graph") or q.notes.get("graph")
        if graph:
            result.graph = graph
        scores = {h.item.id: h.score for h in result.hits}
        result.facts = self.facts_for(q.text, scores, self.settings.facts_top_k, q.options.get("as_of"), self.named_in(q))
        result.episodes = self.episodes_of_hits([h.item.id for h in result.hits])
        if q.mode == "lite":
            result.hits = []
        elif q.mode == "max":
            result.hits = result.hits + self._backfill(result, limit=2 * q.top_k)

    def _backfill(self, result: Recall, limit: int) -> list[Hit]:
        """Other items of the hits' episodes, episode by episode, in item order, up to ``limit``."""
        have = {h.item.id for h in result.hits}
        wanted = [i for e in result.episodes for i in e.items if i not in have][: max(0, limit - len(result.hits))]
        items = self.mem.items(wanted)
        out = []
        for item_id in wanted:
            if item_id in items:
                out.append(Hit(item=items[item_id], score=0.0, rank=len(result.hits) + len(out) + 1, sources=["episode"]))
        return out


def _normalised(scores: np.ndarray) -> np.ndarray:
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)
