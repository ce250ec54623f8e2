"""Learning benchmark: a simulated person teaches the ranker on the LoCoMo dev conversations.

Per conversation, in a fresh store: the questions are split (seeded) into a *feedback* half and a
*held-out* half. Each feedback question is asked with the fused strategy; its evidence turns
among the shown hits are "used", every other shown hit is ignored. Measured:

* held-out recall@10 / nDCG@10 before any feedback and after all of it, and after every
  ``curve_every`` events (the learning curve), with λ;
* *repeated query* (the reference's ambiguous-query demo, on a fresh store): one question whose
  evidence turn is shown at rank 5–10 is asked ``repeats`` times, that turn marked used each time;
  its rank before and after;
* the rank of the used items when all the feedback questions are asked again after one mark each
  (*taught*) and when a held-out question shares an evidence turn with a feedback question
  (*paraphrased*); an item's rank counts only the items above it that were not themselves used
  for that question, so a perfect ranking scores 1.0 whatever the number of evidence turns;
* with ``paraphrases`` (a file of people's rewordings of dev questions), *reworded*: recall@10
  of a taught question's evidence when its rewording is asked, before and after the feedback;
* a *control* run on a fresh store where the "used" hits are drawn at random among those shown:
  its held-out ranking must not fall below the heuristic's;
* on a synthetic store of ``latency_items`` items taught with 50 events: what feedback adds to
  the next fused recall's p50, against the untaught copy in the same run, and the feedback calls'
  own latency.

The heuristic floor was tuned on these same dev conversations (the only data there is); the
benchmark measures what feedback adds on top of it.
"""

from __future__ import annotations

import json
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..memory import Memory
from ..pipeline import Recall
from .bench import synthetic_corpus
from .harness import Question, require
from .locomo import conversations as locomo_conversations
from .metrics import mean_metrics, score

METRICS = ("recall@10", "ndcg@10")
MISSING_RANK = 51  # the rank given to a used item that fell out of the top 50


def fused_metrics(mem: Memory, questions: list[Question], key_of: dict[int, str]) -> dict[str, float]:
    rows = []
    for q in questions:
        hits = mem.recall(q.text, top_k=10, strategy="fused").hits
        rows.append(score([key_of[h.item.id] for h in hits], q.relevant, METRICS))
    return mean_metrics(rows)


def used_ranks(mem: Memory, text: str, used: set[int]) -> dict[int, int]:
    """Rank of each used item when ``text`` is recalled, counting only unused items above it."""
    return ranks_among([h.item.id for h in mem.recall(text, top_k=MISSING_RANK - 1, strategy="fused").hits], used)


def ranks_among(shown: list[int], used: set[int]) -> dict[int, int]:
    """Rank of each used item in ``shown``, counting only unused items above it (``MISSING_RANK``
    for one not shown)."""
    out, others = {}, 0
    for item in shown:
        if item in used:
            out[item] = others + 1
        else:
            others += 1
    return {i: out.get(i, MISSING_RANK) for i in used}


def give_feedback(mem: Memory, questions: list[Question], id_of: dict[str, int],
                  choose: Callable[[list[int], set[int]], list[int]],
                  on_event: Callable[[int], None]) -> tuple[list[int], list[float], dict[int, set[int]]]:
    """Ask every question and send feedback; returns (ranks of used items at the time, ms per event, used per question)."""
    ranks, latency, used_by = [], [], {}
    for n, q in enumerate(questions):
        rec = mem.recall(q.text, top_k=10, strategy="fused")
        shown = [h.item.id for h in rec.hits]
        evidence = {id_of[k] for k in q.relevant}
        used = choose(shown, evidence)
        if used:
            used_by[n] = set(used)
            others = 0
            for h in rec.hits:
                if h.item.id in used_by[n]:
                    ranks.append(others + 1)
                else:
                    others += 1
        t0 = time.perf_counter()
        mem.feedback(rec.token, used)
        latency.append((time.perf_counter() - t0) * 1000)
        on_event(n + 1)
    return ranks, latency, used_by


def marks_evidence(shown: list[int], evidence: set[int]) -> list[int]:
    """The taught run's person: marks the evidence turns among the shown hits used."""
    return [i for i in shown if i in evidence]


def random_marks(seed: int, n: int) -> Callable[[list[int], set[int]], list[int]]:
    """The control's person for conversation ``n``: marks as many shown hits as there were evidence
    turns shown (at least one), drawn at random (seeded)."""
    pick = random.Random(f"{seed}:{n}:control")
    return lambda shown, evidence: pick.sample(shown, min(len(shown), max(1, len(evidence & set(shown))))) if shown else []


def split_questions(questions: list[Question], seed: int, n: int) -> tuple[list[Question], list[Question]]:
    """(feedback half, held-out half) of conversation ``n``'s questions, seeded."""
    rng = random.Random(f"{seed}:{n}")
    order = list(range(len(questions)))
    rng.shuffle(order)
    half = len(order) // 2
    return [questions[i] for i in order[:half]], [questions[i] for i in order[half:]]


def load_paraphrases(path: str | Path, data: Path) -> list[dict[str, str]]:
    """Per conversation of the LoCoMo file ``data``: question text → its rewording."""
    samples = [s.get("sample_id") for s in json.loads(data.read_text(encoding="utf-8"))]
    out: list[dict[str, str]] = [{} for _ in samples]
    for row in json.loads(require(path).read_text(encoding="utf-8")):
        if row.get("sample_id") in samples:
            out[samples.index(row["sample_id"])][str(row["question"])] = str(row["paraphrase"])
    return out


def reworded_recall(mem: Memory, pairs: list[tuple[str, set[str]]], key_of: dict[int, str]) -> list[float]:
    """recall@10 of each (rewording, evidence keys)."""
    return [score([key_of[h.item.id] for h in mem.recall(text, top_k=10, strategy="fused").hits], relevant,
                  ("recall@10",))["recall@10"] for text, relevant in pairs]


def _conversation(parsed, questions: list[Question], seed: int, curve_every: int, repeats: int, tmp: Path, n: int,
                  settings: dict[str, Any], rewordings: dict[str, str]) -> dict[str, Any]:
    teach, held = split_questions(questions, seed, n)
    reworded = [(rewordings[q.text], set(q.relevant)) for q in teach if q.text in rewordings]
    out: dict[str, Any] = {}
    for run in ("feedback", "control"):
        mem = Memory(tmp / f"{run}-{n}.db", **settings)
        try:
            mem.ingest_parsed([parsed])
            key_of = {i.id: i.key for i in mem.source_items(mem.sources()[0].id)}
            id_of = {k: i for i, k in key_of.items()}
            before = fused_metrics(mem, held, key_of) if run == "feedback" else out["before"]
            held_ranks = [used_ranks(mem, q.text, {id_of[k] for k in q.relevant}) for q in held] if run == "feedback" else []
            reworded_before = reworded_recall(mem, reworded, key_of) if run == "feedback" else []
            curve: list[dict[str, float]] = []

            def on_event(events: int) -> None:
                if events % curve_every == 0:
                    now = fused_metrics(mem, held, key_of)
                    curve.append({"events": events, "lambda": mem.ranker.lam, **now,
                                  "ndcg@10_gain": round(now["ndcg@10"] - before["ndcg@10"], 4)})

            choose = marks_evidence if run == "feedback" else random_marks(seed, n)
            ranks_at_feedback, latency, used_by = give_feedback(mem, teach, id_of, choose, on_event if run == "feedback" else lambda _: None)
            after = fused_metrics(mem, held, key_of)
            result = {"before": before, "after": after, "lambda": mem.ranker.lam, "events": len(teach),
                      "feedback_ms": latency, "gate": mem.ranker.status().gate.to_dict()}
            if run == "feedback":
                repeated_after = [r for k, used in used_by.items() for r in used_ranks(mem, teach[k].text, used).values()]
                shared = _paraphrases(held, used_by, id_of)
                para_before = [held_ranks[k][i] for k, ids in shared for i in ids]
                para_after = [r for k, ids in shared for r in used_ranks(mem, held[k].text, ids).values()]
                result.update(curve=curve, held=len(held), repeated=(ranks_at_feedback, repeated_after),
                              paraphrased=(para_before, para_after),
                              reworded=(reworded_before, reworded_recall(mem, reworded, key_of)))
                out.update(result)
            else:
                out["control"] = {"before": before, "after": after, "lambda": mem.ranker.lam}
        finally:
            mem.close()
    out["single_query"] = _single_query(parsed, teach, tmp / f"single-{n}.db", repeats, settings)
    return out


def _single_query(parsed, teach: list[Question], path: Path, repeats: int, settings: dict[str, Any]) -> dict[str, Any]:
    """The reference's ambiguous-query demo, done honestly: one question whose evidence turn is
    shown low (rank 5–10) is asked ``repeats`` times, each time marking that turn used."""
    mem = Memory(path, **settings)
    try:
        mem.ingest_parsed([parsed])
        id_of = {i.key: i.id for i in mem.source_items(mem.sources()[0].id)}
        for q in teach:
            shown = [h.item.id for h in mem.recall(q.text, top_k=10, strategy="fused").hits]
            low = [i for i in shown[4:] if i in {id_of[k] for k in q.relevant}]
            if low:
                break
        else:
            return {}
        target, ranks, opened = low[0], [], None
        for n in range(repeats):
            rec = mem.recall(q.text, top_k=10, strategy="fused")
            shown = [h.item.id for h in rec.hits]
            ranks.append(shown.index(target) + 1 if target in shown else MISSING_RANK)
            mem.feedback(rec.token, [target] if target in shown else [])
            if opened is None and mem.ranker.lam > 0:
                opened = n + 1
        after = [h.item.id for h in mem.recall(q.text, top_k=MISSING_RANK - 1, strategy="fused").hits]
        return {"question": q.text, "before": ranks[0], "after": after.index(target) + 1 if target in after else MISSING_RANK,
                "mean_over_events": _mean(ranks), "gate_opened_after": opened, "lambda": mem.ranker.lam}
    finally:
        mem.close()


def _paraphrases(held: list[Question], used_by: dict[int, set[int]], id_of: dict[str, int]) -> list[tuple[int, set[int]]]:
    """(index, shared ids) of held-out questions sharing evidence with a taught question's used items."""
    taught = set().union(*used_by.values()) if used_by else set()
    shared = [(n, {id_of[k] for k in q.relevant} & taught) for n, q in enumerate(held)]
    return [(n, ids) for n, ids in shared if ids]


def _mean(values: list[float]) -> float:
    return round(float(np.mean(values)), 4) if values else 0.0


def taught_copies(folder: Path, data: Path, n_items: int, events: int = 50,
                  **settings: Any) -> tuple[Path, Path, list[str]]:
    """A synthetic store of ``n_items`` items (``plain.db`` in ``folder``) and a copy of it taught
    with ``events`` feedback events (``taught.db``: the top two hits of each question marked used),
    and the questions to ask them. Slow at 10k items: build once, measure many times."""
    parsed, questions = synthetic_corpus(n_items, data)
    plain, taught = folder / "plain.db", folder / "taught.db"
    with Memory(plain, **settings) as mem:
        mem.ingest_parsed(parsed)
        mem.store.checkpoint()
    shutil.copy(plain, taught)
    with Memory(taught, **settings) as mem:
        for text in questions[:events]:
            rec = mem.recall(text, top_k=10, strategy="fused")
            mem.feedback(rec.token, [h.item.id for h in rec.hits[:2]])
        mem.store.checkpoint()
    return plain, taught, questions[:events]


def recall_after_feedback(plain: Memory, taught: Memory, questions: list[str], rounds: int = 3) -> dict[str, float]:
    """What feedback adds to the next fused recall: each question is recalled on ``taught`` (its
    result then given as feedback, top two used, so every recall there follows a feedback event and
    its caches) and on ``plain``, its untaught copy, back to back, the order swapped every round so
    both see the same machine load. Medians of the paired differences, wall and CPU (the fair
    figure on a shared machine), and of the feedback calls themselves."""
    pairs: list[tuple[tuple[float, float], tuple[float, float]]] = []
    feedback_wall, feedback_cpu = [], []
    for n in range(rounds):
        for text in questions:
            if n % 2 == 0:
                untaught = _timed_recall(plain, text)[1]
                rec, after = _timed_recall(taught, text)
            else:
                rec, after = _timed_recall(taught, text)
                untaught = _timed_recall(plain, text)[1]
            pairs.append((untaught, after))
            t0, c0 = time.perf_counter(), time.process_time()
            taught.feedback(rec.token, [h.item.id for h in rec.hits[:2]])
            feedback_wall.append((time.perf_counter() - t0) * 1000)
            feedback_cpu.append((time.process_time() - c0) * 1000)
    med = statistics.median
    feedback_wall.sort()
    return {"events": len(feedback_wall), "p50_ms": round(med(feedback_wall), 3),
            "p95_ms": round(feedback_wall[int(0.95 * (len(feedback_wall) - 1))], 3),
            "cpu_p50_ms": round(med(feedback_cpu), 3),
            "recall_p50_ms": round(med(u[0] for u, _ in pairs), 3),
            "recall_p50_ms_with_feedback": round(med(t[0] for _, t in pairs), 3),
            "recall_added_ms": round(med(t[0] - u[0] for u, t in pairs), 3),
            "recall_cpu_p50_ms": round(med(u[1] for u, _ in pairs), 3),
            "recall_cpu_p50_ms_with_feedback": round(med(t[1] for _, t in pairs), 3),
            "recall_added_cpu_ms": round(med(t[1] - u[1] for u, t in pairs), 3)}


def _timed_recall(mem: Memory, text: str) -> tuple[Recall, tuple[float, float]]:
    """A fused recall and its (wall, CPU) ms."""
    t0, c0 = time.perf_counter(), time.process_time()
    rec = mem.recall(text, top_k=10, strategy="fused")
    return rec, ((time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000)


def feedback_latency(data: Path, n_items: int, events: int = 50, **settings: Any) -> dict[str, float]:
    """:func:`recall_after_feedback` on a synthetic store of ``n_items`` items taught with
    ``events`` feedback events (:func:`taught_copies`), its untaught copy the baseline."""
    with tempfile.TemporaryDirectory(prefix="mnemoscope-learn-") as tmp:
        plain_path, taught_path, questions = taught_copies(Path(tmp), data, n_items, events, **settings)
        with Memory(plain_path, **settings) as plain, Memory(taught_path, **settings) as taught:
            return {"items": n_items, **recall_after_feedback(plain, taught, questions)}


def evaluate(path: str | Path, seed: int = 7, curve_every: int = 10, latency_items: int = 10_000, repeats: int = 3,
             paraphrases: str | Path | None = None, **settings: Any) -> dict[str, Any]:
    conversations = locomo_conversations(require(path))
    rewordings = load_paraphrases(paraphrases, Path(path)) if paraphrases else [{} for _ in conversations]
    with tempfile.TemporaryDirectory(prefix="mnemoscope-learn-") as tmp:
        runs = [_conversation(c.parsed, list(c.questions.values()), seed, curve_every, repeats, Path(tmp), n, settings,
                              rewordings[n]) for n, c in enumerate(conversations)]

    def side(run_key: str, which: str) -> dict[str, float]:
        """Held-out metrics pooled over conversations, weighted by their held-out questions."""
        sizes = [r["held"] for r in runs]
        src = [r[which] if run_key == "main" else r["control"][which] for r in runs]
        return {m: round(sum(s[m] * n for s, n in zip(src, sizes)) / sum(sizes), 4) for m in METRICS}

    curve = _pooled_curve([r["curve"] for r in runs])
    singles = [r for r in runs if r["single_query"]]
    latency = [ms for r in runs for ms in r["feedback_ms"]]
    return {
        "dataset": "locomo", "seed": seed, "conversations": len(runs),
        "feedback_events": sum(r["events"] for r in runs), "held_out_questions": sum(r["held"] for r in runs),
        "before": {"metrics": side("main", "before")},
        "after": {"metrics": side("main", "after")},
        "lambda": _mean([r["lambda"] for r in runs]),
        "lambda_per_conversation": [round(r["lambda"], 4) for r in runs],
        "gate": [r["gate"] for r in runs],
        "curve": curve,
        "repeated_query_mean_rank": {"before": _mean([r["single_query"]["before"] for r in singles]),
                                     "after": _mean([r["single_query"]["after"] for r in singles]),
                                     "events": repeats, "queries": [r["single_query"] for r in singles]},
        "taught_questions_mean_rank": {"before": _mean([x for r in runs for x in r["repeated"][0]]),
                                       "after": _mean([x for r in runs for x in r["repeated"][1]])},
        "reworded_recall@10": {"n": sum(len(r["reworded"][0]) for r in runs),
                               "before": _mean([x for r in runs for x in r["reworded"][0]]),
                               "after": _mean([x for r in runs for x in r["reworded"][1]])},
        "paraphrased_query_mean_rank": {"n": sum(len(r["paraphrased"][0]) for r in runs),
                                        "before": _mean([x for r in runs for x in r["paraphrased"][0]]),
                                        "after": _mean([x for r in runs for x in r["paraphrased"][1]])},
        "control": {"before": side("control", "before"), "after": side("control", "after"),
                    "lambda": _mean([r["control"]["lambda"] for r in runs])},
        "per_conversation": [_one_conversation(c.sample_id, r) for c, r in zip(conversations, runs)],
        "feedback_ms": {"locomo_p50": round(statistics.median(latency), 3) if latency else 0.0,
                        **({"synthetic": feedback_latency(require(path), latency_items, **settings)} if latency_items else {})},
    }


def _one_conversation(sample_id: str, run: dict[str, Any]) -> dict[str, Any]:
    """One conversation's figures: a rule tuned on some conversations is judged on the others."""
    return {"sample_id": sample_id, "held_out_questions": run["held"],
            "ndcg@10": {"before": run["before"]["ndcg@10"], "after": run["after"]["ndcg@10"],
                        "control": run["control"]["after"]["ndcg@10"]},
            "reworded_recall@10": {"n": len(run["reworded"][0]), "before": _mean(run["reworded"][0]),
                                   "after": _mean(run["reworded"][1])},
            "lambda": round(run["lambda"], 4), "control_lambda": round(run["control"]["lambda"], 4)}


def _pooled_curve(curves: list[list[dict[str, float]]]) -> list[dict[str, float]]:
    """Mean over conversations of each curve point (points a conversation never reached are left
    out, so compare ``ndcg@10_gain`` — the change since that conversation's start — across points)."""
    out = []
    for n in range(max((len(c) for c in curves), default=0)):
        points = [c[n] for c in curves if len(c) > n]
        out.append({"events": points[0]["events"], "conversations": len(points),
                    **{k: round(float(np.mean([p[k] for p in points])), 4) for k in ("lambda", *METRICS, "ndcg@10_gain")}})
    return out
