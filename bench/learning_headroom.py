"""How much could a feedback-derived feature add on held-out LoCoMo questions? (analysis, not a test)

Replays ``mnemoscope eval learning``'s split (same seed, same halves): per conversation, the
feedback half is asked and taught with the fused strategy (the gate stays shut, so what is shown
is the heuristic's ranking), then every held-out question's candidates are scored by the
heuristic plus ``w`` × a candidate feature. For each feature it prints held-out nDCG@10 over a
grid of ``w``: the best of that grid is the *oracle* headroom (chosen on the held-out half, so
an upper bound, never a result). ``--inner`` repeats the exercise inside the feedback half
(first half of it teaches, second half scores) — the place to choose hyper-parameters.

``--static-oracle`` adds the most a per-store re-weighting of the static features could give.
``--learning`` runs the real ranker (model, gate and all) on that inner split instead.
``--ramps`` sweeps the feedback memory's parameters (engine/rank/marks.py) for the query
similarity in use — the embeddings' when an embedding endpoint is configured
(``MNEMOSCOPE_EMBED_BASE_URL``, ``MNEMOSCOPE_EMBED_MODEL``), else the words' — over a grid of
rules for alike questions (ramp, the item's standing, the nearest marks, the kind of answer, the
reach) and of what counts as the same question (whose ignored hits sink and whose marks ignore
the item's standing): where ``MarkParams`` were chosen (on this same dev data, so the chosen
figures are optimistic).
``--shared`` shows where the held-out answers overlap the taught ones, what lifting exactly those
would give, and whether the model forecasts each next feedback event better than the heuristic.
Figures and what they say: docs/benchmarks.md, "Learning from feedback".

    python3 bench/learning_headroom.py [--inner] [--cache /tmp/headroom.pkl]
    python3 bench/learning_headroom.py --shared
    python3 bench/learning_headroom.py --learning
    python3 bench/learning_headroom.py --ramps
"""

from __future__ import annotations

import argparse
import itertools
import math
import pickle
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mnemoscope.engine import Memory
from mnemoscope.engine.eval.learning import (MISSING_RANK, fused_metrics, give_feedback, load_paraphrases, marks_evidence,
                                             random_marks, ranks_among, reworded_recall, split_questions)
from mnemoscope.engine.eval.metrics import score
from mnemoscope.engine.eval.locomo import load as load_locomo
from mnemoscope.engine.eval.metrics import ndcg_at, recall_at
from mnemoscope.engine.recall import query_embedding
from mnemoscope.engine.rank import features as feats
from mnemoscope.engine.rank.heuristic import WEIGHTS
from mnemoscope.engine.rank.heuristic import score as heuristic_score
from mnemoscope.engine.rank.heuristic import weights_for
from mnemoscope.engine.rank.marks import AlikeRule, MarkParams, Ramp
from mnemoscope.engine.rank.state import PairBuffer

DATA = Path("/work/shared/data/locomo/locomo10_dev.json")
PARAPHRASES = DATA.parent / "paraphrases_dev.json"
GRID = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2, 2.0)
RULES = {  # per query similarity: how an alike question's marks count (engine/rank/marks.py's AlikeRule)
    "worded": [AlikeRule(Ramp(t, 1.0, power), standing_power=standing, nearest=nearest, same_answer=True, reach=reach)
               for t, power, standing, nearest, reach in itertools.product((0.1, 0.2), (1.0, 2.0), (1.0, 2.0), (0, 2),
                                                                           (0.1, math.inf))],
    "embedded": [AlikeRule(Ramp(t, 1.0, power), standing_power=standing) for power in (2.0, 3.0, 4.0)
                 for t in (0.7, 0.72, 0.75, 0.8) for standing in (0.0, 1.0)],
}
SAME = (Ramp(0.95, 1.0, 2.0), None)  # None: the rule's ramp (every alike question's ignored hits sink: before session 6)


def variants(which: str) -> list[MarkParams]:
    """Every combination of ``RULES[which]`` and ``SAME`` as ``MarkParams``."""
    return [MarkParams(**{which: rule}, same=same or rule.ramp) for rule, same in itertools.product(RULES[which], SAME)]


def describe(params: MarkParams, which: str) -> str:
    rule: AlikeRule = getattr(params, which)
    same = "the ramp" if params.same == rule.ramp else f"{params.same.threshold:.2f}/{params.same.power:g}"
    return (f"threshold {rule.ramp.threshold:.2f} full {rule.ramp.full:.2f} power {rule.ramp.power:g}, "
            f"standing ** {rule.standing_power:g}, nearest {rule.nearest or 'all'}, "
            f"{'same answer, ' if rule.same_answer else ''}reach {rule.reach:g}, same question {same}")


@dataclass
class Taught:
    """One feedback event of the simulation: what was asked, shown and used."""

    query: str
    terms: np.ndarray
    shown: list[int]
    used: list[int]


@dataclass
class Conversation:
    """What a candidate feature may learn from: the items and the feedback half's events."""

    text: dict[int, str]  # item id -> text
    key: dict[int, str]  # item id -> LoCoMo dia_id
    idf: dict[int, float]  # term id -> BM25 idf
    item_terms: dict[int, np.ndarray]  # item id -> term ids
    taught: list[Taught]
    forecast: tuple[int, int]  # (model, heuristic) wins among discordant pairs, each event forecast before training


@dataclass
class Case:
    conversation: int
    query: str
    ids: np.ndarray
    terms: np.ndarray
    keys: list[str]
    relevant: set[str]
    base: np.ndarray  # the heuristic's score per candidate
    static: dict[str, np.ndarray]  # the static features the heuristic weighs, per candidate
    columns: dict[str, np.ndarray]  # candidate feature values per candidate


def collect(seed: int, inner: bool) -> tuple[list[Conversation], list[Case]]:
    cases: list[Case] = []
    convs: list[Conversation] = []
    with tempfile.TemporaryDirectory(prefix="headroom-") as tmp:
        for n, (parsed, questions) in enumerate(load_locomo(DATA)):
            teach, held = split_questions(questions, seed, n)
            if inner:
                teach, held = teach[: len(teach) // 2], teach[len(teach) // 2:]
            with Memory(Path(tmp) / f"{n}.db") as mem:
                mem.ingest_parsed([parsed])
                key_of = {i.id: i.key for i in mem.source_items(mem.sources()[0].id)}
                id_of = {k: i for i, k in key_of.items()}
                taught = []
                for q in teach:
                    rec = mem.recall(q.text, top_k=10, strategy="fused")
                    evidence = {id_of[k] for k in q.relevant}
                    shown = [h.item.id for h in rec.hits]
                    taught.append(Taught(q.text, mem.index.query_terms(q.text)[0], shown, [i for i in shown if i in evidence]))
                    mem.feedback(rec.token, taught[-1].used)
                items = mem.source_items(mem.sources()[0].id)
                terms = {i.id: mem.index.query_terms(i.text)[0] for i in items}
                vocab = np.unique(np.concatenate(list(terms.values())))
                convs.append(Conversation({i.id: i.text for i in items}, key_of,
                                          dict(zip(vocab.tolist(), mem.index.bm25.idf(vocab).tolist())), terms, taught,
                                          forecast(mem)))
                assert mem.ranker.lam == 0, "the gate opened: the headroom below assumes the heuristic's shown lists"
                ranker = mem.ranker
                for q in held:
                    query, signals = mem.query(q.text, 10, "fused")
                    cf = feats.build(mem, query, signals, ranker.meta, ranker._learned_columns,
                                     max(10, mem.settings.candidate_k), ranker.extra_signals(), mem.settings.rrf_k)
                    ids = mem.index.item_ids[cf.slots]
                    cases.append(Case(n, q.text, ids, query.term_ids, [key_of[int(i)] for i in ids], set(q.relevant),
                                      heuristic_score(cf.matrix, cf.names),
                                      {name: cf.column(name) for name in cf.names if name not in feats.LEARNED},
                                      {name: cf.column(name) for name in feats.LEARNED if name in cf.names}))
    return convs, cases


def forecast(mem: Memory) -> tuple[int, int]:
    """Replays the ranker's training over the feedback log, and before each event is trained on,
    asks whether the model so far or the heuristic orders that event's (used, ignored) pairs better:
    the model's and the heuristic's wins among the pairs they disagree on. Unlike the gate's
    held-out pairs, no pair here shares an event with anything the model was trained on."""
    ranker = mem.ranker
    model, h = ranker._fresh_model(), weights_for(ranker.names)
    buffer = PairBuffer(len(ranker.names), ranker.mlp_params.buffer)
    model_wins = heuristic_wins = 0
    for event in mem.store.feedback_events():
        pb, pw, _, _ = ranker._pairs(event.query, event.shown, set(event.used), event.features)
        model_right, heuristic_right = model.score(pb) > model.score(pw), (pb - pw) @ h > 0
        model_wins += int(np.sum(model_right & ~heuristic_right))
        heuristic_wins += int(np.sum(heuristic_right & ~model_right))
        model.norm.update(event.features)
        model.train(pb, pw, np.random.default_rng([mem.settings.ranker_seed, event.id]), buffer.better, buffer.worse)
        buffer = buffer.with_added(pb, pw)
    return model_wins, heuristic_wins


def shared_evidence(convs: list[Conversation], cases: list[Case]) -> None:
    """Where the held-out half's answers overlap the feedback half's, and why no feature finds them.

    Prints the share of held-out questions with an evidence turn that some feedback question used;
    the gain if exactly those turns were lifted (an oracle: it knows the held-out evidence); and,
    among the candidates some feedback question used, how well the heuristic and feedback_match
    tell a held-out question's evidence from the rest (AUC over (evidence, other) pairs)."""
    sharing, oracle = 0, {}
    wins = {"heuristic": [0.0, 0], "feedback_match": [0.0, 0]}
    for c in cases:
        used = {i for t in convs[c.conversation].taught for i in t.used}
        was_used = np.isin(c.ids, list(used))
        answer = was_used & np.array([k in c.relevant for k in c.keys])
        sharing += bool(answer.any())
        c.columns["oracle_shared"] = answer.astype(float)
        for name, values in (("heuristic", c.base), ("feedback_match", c.columns["feedback_match"])):
            a, b = values[answer][:, None], values[was_used & ~answer][None, :]
            wins[name][0] += float((a > b).sum() + 0.5 * (a == b).sum())
            wins[name][1] += a.size * b.size
    base = evaluate(cases, {})[0]
    for w in GRID[1:] + (3.0,):
        oracle[w] = evaluate(cases, {"oracle_shared": w})[0] - base
    print(f"held-out questions with an evidence turn among their candidates that a feedback question used: {sharing} of {len(cases)}")
    print(f"lifting exactly those turns (oracle): nDCG@10 {max(oracle.values()):+.4f}")
    print("AUC among used candidates, evidence vs the rest: "
          + ", ".join(f"{name} {won / max(n, 1):.3f}" for name, (won, n) in wins.items()))
    print("forecasts (model wins / heuristic wins among discordant pairs): "
          + ", ".join(f"{m}/{h}" for m, h in (c.forecast for c in convs)))


def inner_learning(seed: int) -> dict[str, float]:
    """``eval learning`` inside the feedback half: its first half teaches (through the real ranker,
    gate and all), its second half is measured before and after — where ranker hyper-parameters
    may be chosen without looking at the held-out half."""
    before, after, lams, sizes = [], [], [], []
    with tempfile.TemporaryDirectory(prefix="headroom-") as tmp:
        for n, (parsed, questions) in enumerate(load_locomo(DATA)):
            teach = split_questions(questions, seed, n)[0]
            teach, held = teach[: len(teach) // 2], teach[len(teach) // 2:]
            with Memory(Path(tmp) / f"inner-{n}.db") as mem:
                mem.ingest_parsed([parsed])
                key_of = {i.id: i.key for i in mem.source_items(mem.sources()[0].id)}
                before.append(held_out_ndcg(mem, held, key_of))
                for q in teach:
                    rec = mem.recall(q.text, top_k=10, strategy="fused")
                    mem.feedback(rec.token, [h.item.id for h in rec.hits if key_of[h.item.id] in q.relevant])
                after.append(held_out_ndcg(mem, held, key_of))
                lams.append(mem.ranker.lam)
                sizes.append(len(held))
    w = np.array(sizes) / sum(sizes)
    return {"before": float(np.dot(w, before)), "after": float(np.dot(w, after)), "lambda": lams}


def ramp_grid(seed: int) -> None:
    """For each of :func:`variants` (of the similarity in use), as ``eval learning`` measures
    them: held-out nDCG@10 after the feedback and after the random control's (each against before
    any feedback), recall@10 of the taught questions' rewordings, and the taught questions' mean
    used rank. Each conversation's two runs are taught once, and each question's ranking is made
    once: only the marks stage is redone per variant (:func:`marked_lists`)."""
    rewordings = load_paraphrases(PARAPHRASES, DATA)
    rows: dict[int, dict[str, list[float]]] = {}
    grid: list[MarkParams] = []
    before: dict[str, list[float]] = {"held": [], "reworded": []}
    which = "worded"
    with tempfile.TemporaryDirectory(prefix="headroom-") as tmp:
        for n, (parsed, questions) in enumerate(load_locomo(DATA)):
            teach, held = split_questions(questions, seed, n)
            reworded = [(rewordings[n][q.text], set(q.relevant)) for q in teach if q.text in rewordings[n]]
            for run, choose in (("held", marks_evidence), ("control", random_marks(seed, n))):
                with Memory(Path(tmp) / f"{run}-{n}.db") as mem:
                    mem.ingest_parsed([parsed])
                    key_of = {i.id: i.key for i in mem.source_items(mem.sources()[0].id)}
                    id_of = {k: i for i, k in key_of.items()}
                    if run == "held":
                        before["held"] += [fused_metrics(mem, [q], key_of)["ndcg@10"] for q in held]
                        before["reworded"] += reworded_recall(mem, reworded, key_of)
                    used_by = give_feedback(mem, teach, id_of, choose, lambda _: None)[2]
                    which = "embedded" if mem.external_embedder is not None else "worded"
                    grid = grid or variants(which)
                    for q in held:
                        for n, shown in enumerate(marked_lists(mem, q.text, grid, which)):
                            keys = [key_of[i] for i in shown[:10]]
                            rows.setdefault(n, {"held": [], "control": [], "reworded": [], "taught": []})[run].append(
                                score(keys, q.relevant, ("ndcg@10",))["ndcg@10"])
                    if run == "control":
                        continue
                    for text, relevant in reworded:
                        for n, shown in enumerate(marked_lists(mem, text, grid, which)):
                            rows[n]["reworded"].append(
                                score([key_of[i] for i in shown[:10]], relevant, ("recall@10",))["recall@10"])
                    for k, used in used_by.items():
                        for n, shown in enumerate(marked_lists(mem, teach[k].text, grid, which)):
                            rows[n]["taught"] += list(ranks_among(shown, used).values())
    base = {k: float(np.mean(v)) for k, v in before.items()}
    print(f"{which} similarity; before feedback: held-out nDCG@10 {base['held']:.4f}, reworded recall@10 {base['reworded']:.3f}")
    for n, row in rows.items():
        m = {k: float(np.mean(v)) for k, v in row.items()}
        print(f"{describe(grid[n], which)}: held-out {m['held'] - base['held']:+.4f}  "
              f"control {m['control'] - base['held']:+.4f}  reworded {m['reworded']:.3f}  taught rank {m['taught']:.2f}")


def marked_lists(mem: Memory, text: str, grid: list[MarkParams], which: str,
                 depth: int = MISSING_RANK - 1) -> list[list[int]]:
    """The item ids a fused recall of ``text`` shows (top ``depth``) under each of ``grid`` (whose
    ``which`` rule applies: the similarity in use). The
    strategy's ranking is made once and only the marks stage, the last that moves anything while λ
    is 0, is redone per variant, as recall would."""
    ranker = mem.ranker
    assert ranker.lam == 0, "the gate opened: the strategy's ranking would depend on the model"
    q, signals = mem.query(text, depth, "fused")
    ranking = ranker.rank(q, signals)
    likeness = ranker._likeness(q.text, lambda endpoint: query_embedding(mem, q))
    out = []
    for params in grid:
        moved = replace(ranker.marks, params=params).apply(ranking, mem.index.slot_of,
                                                           replace(likeness, rule=getattr(params, which)))
        out.append(mem.index.item_ids[moved.slots[:depth]].tolist())
    return out


def held_out_ndcg(mem: Memory, questions, key_of: dict[int, str]) -> float:
    return float(np.mean([ndcg_at([key_of[h.item.id] for h in mem.recall(q.text, top_k=10, strategy="fused").hits],
                                  q.relevant, 10) for q in questions]))


def static_oracle(cases: list[Case]) -> float:
    """Held-out nDCG@10 gain of re-weighting the *static* features per conversation by coordinate
    ascent on that conversation's held-out questions themselves: the most any per-store
    re-weighting learned from feedback could give (an overfitted upper bound)."""
    names = list(cases[0].static)
    gain = 0.0
    for conversation in sorted({c.conversation for c in cases}):
        own = [c for c in cases if c.conversation == conversation]
        w = {n: WEIGHTS.get(n, 0.0) for n in names}
        start = best = static_ndcg(own, w)
        for _ in range(2):
            for name in names:
                for step in (-0.3, -0.15, -0.05, 0.05, 0.15, 0.3):
                    trial = {**w, name: w[name] + step}
                    value = static_ndcg(own, trial)
                    if value > best + 1e-4:
                        w, best = trial, value
        gain += (best - start) * len(own)
    return gain / len(cases)


def static_ndcg(cases: list[Case], w: dict[str, float]) -> float:
    out = []
    for c in cases:
        s = sum(weight * c.static[name] for name, weight in w.items())
        out.append(ndcg_at([c.keys[i] for i in np.lexsort((np.arange(len(s)), -s))[:10]], c.relevant, 10))
    return float(np.mean(out))


def evaluate(cases: list[Case], extra: dict[str, float]) -> tuple[float, float]:
    ndcg, rec = [], []
    for c in cases:
        s = c.base + sum(w * c.columns[name] for name, w in extra.items())
        order = np.lexsort((np.arange(len(s)), -s))[:10]
        ranked = [c.keys[i] for i in order]
        ndcg.append(ndcg_at(ranked, c.relevant, 10))
        rec.append(recall_at(ranked, c.relevant, 10))
    return float(np.mean(ndcg)), float(np.mean(rec))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--inner", action="store_true", help="teach on the first half of the feedback half, score its second half")
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--learning", action="store_true", help="run the real ranker on the inner split (see inner_learning)")
    ap.add_argument("--shared", action="store_true", help="also print shared_evidence and the model's forecasts")
    ap.add_argument("--static-oracle", action="store_true", help="also print static_oracle (slow: ~2 min)")
    ap.add_argument("--ramps", action="store_true", help="sweep the feedback memory's ramp (see ramp_grid)")
    args = ap.parse_args()
    if args.learning:
        print(inner_learning(args.seed))
        return
    if args.ramps:
        ramp_grid(args.seed)
        return
    if args.cache and args.cache.exists():
        convs, cases = pickle.loads(args.cache.read_bytes())
    else:
        convs, cases = collect(args.seed, args.inner)
        if args.cache:
            args.cache.write_bytes(pickle.dumps((convs, cases)))
    base = evaluate(cases, {})
    print(f"{len(cases)} questions; heuristic nDCG@10 {base[0]:.4f} recall@10 {base[1]:.4f}")
    for name in cases[0].columns:
        row = [(w, *evaluate(cases, {name: w})) for w in GRID[1:]]
        best = max(row, key=lambda r: r[1])
        print(f"{name:16s} best w {best[0]:4.2f}: nDCG@10 {best[1] - base[0]:+.4f} recall@10 {best[2] - base[1]:+.4f}   "
              + " ".join(f"{w:g}:{v - base[0]:+.4f}" for w, v, _ in row))
    if args.shared:
        shared_evidence(convs, cases)
    if args.static_oracle:
        print(f"static features re-weighted per conversation on its own held-out questions: nDCG@10 {static_oracle(cases):+.4f}")


if __name__ == "__main__":
    sys.exit(main())
