"""The walk: intent behaviour on the demo content, filters under the Markov blend, seeds,
top_k, the trace contract, context windows and the CLI."""

import json

import numpy as np
import pytest

from mnemoscope.engine import Memory, RecallError
from mnemoscope.engine.recall import prepare_query
from mnemoscope.engine.topics.intents import INTENTS
from tests.support.cli import cli

# Questions a reader of the demo content might ask (the guides and the Maya & Daniel conversation).
QUESTIONS = [
    "how do I feed a sourdough starter", "oven temperature for baking bread", "shaping the loaf", "bulk fermentation",
    "how does attention work in transformers", "positional encodings", "the kv cache during inference",
    "tokenization into subwords", "chunking documents for retrieval", "hybrid search with bm25 and embeddings",
    "evaluating a rag system", "crampons and ice axes", "weather on alpine trails", "altitude sickness",
    "staying in mountain huts", "Maya adopted a dog", "Daniel's bakery", "night shifts at the hospital",
    "running a race", "the conversation memory demo",
]


def walk_of(mem, question, intent, **options):
    return mem.recall(question, strategy="walk", intent=intent, top_k=10, **options)


def share(results, ok) -> float:
    return sum(1 for r in results if ok(r)) / len(results)


def test_intents_move_in_their_direction_on_at_least_90_percent_of_queries(demo):
    walks = {intent: [walk_of(demo, q, intent).trace for q in QUESTIONS] for intent in ("deepen", "broaden", "compare")}
    first_walk = {i: [[s for s in t if s.walk == 0] for t in ts] for i, ts in walks.items()}
    deeper = share(first_walk["deepen"], lambda t: bool(t) and t[-1].depth > t[0].depth)
    shallower = share(first_walk["broaden"], lambda t: bool(t) and t[-1].depth < t[0].depth)
    siblings = share(first_walk["compare"], lambda t: len(t) > 1 and all(s.relation == "sibling" for s in t[1:]))
    print(f"deepen ends deeper {deeper:.2f}, broaden ends shallower {shallower:.2f}, compare among siblings {siblings:.2f}")
    assert min(deeper, shallower, siblings) >= 0.9


@pytest.mark.parametrize("intent", ["deepen", "broaden"])
def test_deepen_never_climbs_and_broaden_never_descends_even_under_the_markov_blend(topic_store, intent):
    with Memory(topic_store, walk_markov_weight=1.0, walk_greedy=False, walk_steps=10) as mem:
        for seed in range(4):
            for q in QUESTIONS[::3]:
                trace = walk_of(mem, q, intent, seed=seed).trace
                for walk in {s.walk for s in trace}:
                    depths = [s.depth for s in trace if s.walk == walk]
                    steps = np.diff(depths)
                    assert (steps >= 0).all() if intent == "deepen" else (steps <= 0).all(), (q, depths)


def test_the_same_seed_gives_the_same_walk(topic_store):
    with Memory(topic_store, walk_greedy=False) as mem:
        paths = {seed: [s.node for s in walk_of(mem, "shaping the loaf", "neutral", seed=seed).trace] for seed in (1, 1, 2, 3, 4)}
        again = [s.node for s in walk_of(mem, "shaping the loaf", "neutral", seed=1).trace]
        assert again == paths[1]
        assert len({tuple(p) for p in paths.values()}) > 1  # sampling does explore


def test_a_walk_never_revisits_its_own_path(demo):
    for intent in INTENTS:
        for q in QUESTIONS[:8]:
            trace = walk_of(demo, q, intent).trace
            for walk in {s.walk for s in trace}:
                nodes = [s.node for s in trace if s.walk == walk]
                assert len(nodes) == len(set(nodes))


def test_top_k_is_honoured_by_backfill(topic_store):
    with Memory(topic_store, walk_steps=0, walk_max_starts=1) as mem:
        result = mem.recall("flour and water for the starter", strategy="walk", top_k=60, intent="neutral")
        assert len(result.hits) == 60 and len({h.item.id for h in result.hits}) == 60


def test_the_walk_names_every_slot_it_scores_backfilled_ones_too(topic_store):
    with Memory(topic_store, walk_steps=0, walk_max_starts=1) as mem:
        for top_k in (5, 60):  # 60: more than the walk reaches, so the best leaves' items are added
            q = prepare_query(mem, mem.areas, "flour and water for the starter", top_k, "walk", "pro")
            walk = mem.topics.walk(q)
            scored = np.flatnonzero(walk.scores > 0)
            assert len(scored) >= top_k
            assert np.all(np.diff(walk.support) > 0)
            assert scored.tolist() == walk.support[walk.scores[walk.support] > 0].tolist()


def test_trace_steps_carry_every_policy_term(demo):
    result = walk_of(demo, "explain more simply, I'm confused about attention", None)
    assert result.intent == {"name": "clarify", "inferred": True, "probability": pytest.approx(result.intent["probability"])}
    d = result.to_dict()
    step = next(s for s in d["trace"] if s["candidates"])
    cand = step["candidates"][0]
    assert {"node", "depth", "relation", "candidates", "probability"} <= set(step)
    assert set(cand["terms"]) == {"alpha_cos_query", "beta_cos_prev", "gamma_intent", "novelty", "prior", "repetition", "backtrack"}
    assert cand["total"] == pytest.approx(sum(cand["terms"].values()), abs=1e-5)
    assert sum(c["probability"] for c in step["candidates"]) == pytest.approx(1.0, abs=1e-5)


def test_recall_without_a_walk_has_no_trace_unless_asked(demo):
    plain = demo.recall("shaping the loaf", strategy="bm25")
    assert plain.intent is None and plain.trace == []
    asked = demo.recall("shaping the loaf", strategy="bm25", trace=True)
    assert asked.intent["inferred"] is True and asked.trace


def test_an_unknown_intent_is_a_recall_error(demo):
    with pytest.raises(RecallError, match="deepen, broaden, compare, apply, clarify, neutral"):
        demo.recall("bread", intent="sideways")


def test_recall_is_read_only_and_repeatable(demo):
    first = walk_of(demo, "weather on alpine trails", "apply").to_dict()
    second = walk_of(demo, "weather on alpine trails", "apply").to_dict()
    assert first["hits"] == second["hits"] and first["trace"] == second["trace"]


def test_walk_fused_with_hybrid_keeps_hybrid_candidates(demo):
    hybrid = demo.recall("feeding the starter", strategy="hybrid", top_k=10)
    fused = demo.recall("feeding the starter", strategy="hybrid_walk", top_k=10)
    assert len(fused.hits) == 10 and {h.item.id for h in hybrid.hits[:3]} & {h.item.id for h in fused.hits}
    assert "walk" in fused.hits[0].features


def test_context_windows_do_not_overlap_and_spread_over_sources(demo):
    result = demo.recall("sourdough starter", strategy="hybrid", top_k=10)
    windows = demo.topics.windows([(h.item.id, h.score) for h in result.hits], radius=2, per_source=2, limit=6)
    seen = [i for w in windows for i in w.item_ids]
    assert len(seen) == len(set(seen)) and windows
    assert all(w.anchor in w.item_ids for w in windows)
    per_source = {}
    for w in windows[: sum(1 for _ in windows)]:
        per_source[w.source_id] = per_source.get(w.source_id, 0) + 1
    first_round = [w for w in windows if per_source[w.source_id] <= 2]
    assert first_round


def test_cli_topics_json_and_recall_trace(topic_store, capsys):
    code, out = cli("--store", str(topic_store), "topics", "--json")
    topics = json.loads(out)
    assert code == 0 and {"id", "parent", "depth", "label", "terms", "size"} <= set(topics[0])
    code, out = cli("--store", str(topic_store), "topics", "--tree")
    assert code == 0 and "\n  t:0." in out
    code, out = cli("--store", str(topic_store), "recall", "shaping the loaf", "--strategy", "walk", "--intent", "deepen", "--trace", "--json")
    d = json.loads(out)
    assert d["intent"]["name"] == "deepen" and d["intent"]["inferred"] is False
    assert all({"node", "depth", "relation", "candidates"} <= set(s) for s in d["trace"])
    code, _ = cli("--store", str(topic_store), "recall", "bread", "--intent", "sideways")
    assert code == 2 and "choose one of: deepen" in capsys.readouterr().err
