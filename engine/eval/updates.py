"""Knowledge updates: does recall answer with what holds at the question's time?

The data (``bench/data/knowledge_updates.json``, written by the Mnemoscope team for this
benchmark) is five conversations in the LoCoMo layout whose facts change over months: moves,
new jobs, changed plans, relationships, pets, preferences, with facts that never change and
multi-valued ones ("visited", "likes") beside them; ``knowledge_updates_heldout.json``,
``knowledge_updates_heldout2.json``, ``knowledge_updates_heldout3.json`` and
``knowledge_updates_heldout4.json`` beside it are held-out splits in the same layout, each written at the start of a session before that session's changes
(pass one as the file; docs/benchmarks.md says which were looked at since).
Each question carries, besides LoCoMo's ``question``, ``answer`` and ``evidence``:

* ``reference_time``: when it is asked (an ISO date); the recall runs ``as_of`` that date;
* ``category``: ``update`` (asked after a change), ``as-of`` (asked at an earlier date, before a
  later change), ``unchanged``, or ``multi-valued`` (every value still holds);
* ``stale_evidence``: the turns stating a value that does not hold at that time (the
  superseded one, or for an ``as-of`` question one that is not yet true).

Two measures per strategy: recall@5 of the evidence current at the reference time, and the
share of questions with stale evidence where a stale turn ranks above every current one
(``stale_above``; a current turn missing from the top ``depth`` ranks below any stale one found).
And one of the store, whatever the strategy: the share of ``update`` questions whose change the
supersession rules recognised (a fact of a stale turn is superseded, through its chain of
successors, by a fact of a current turn): what recall in time can use.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..errors import IngestError
from ..ingest import locomo_sample
from ..memory import Memory
from ..records import ParsedSource
from .harness import dedupe, read_samples
from .metrics import mean_metrics, recall_at

DATA = Path(__file__).resolve().parents[2] / "bench" / "data" / "knowledge_updates.json"
CATEGORIES = ("update", "as-of", "unchanged", "multi-valued")
DEPTH = 20


@dataclass
class UpdateQuestion:
    text: str
    answer: str
    reference_time: str
    category: str
    evidence: set[str]
    stale: set[str] = field(default_factory=set)


def load(path: str | Path = DATA) -> list[tuple[ParsedSource, list[UpdateQuestion]]]:
    """Each conversation as (its parsed turns, its questions); a question whose evidence names
    no turn of its conversation is a mistake in the data and stops the run."""
    path, text, samples = read_samples(path)
    out = []
    for n, sample in enumerate(samples):
        parsed = locomo_sample(path, text, sample, n)
        keys = {i.key for i in parsed.items}
        questions = [_question(path, f"conversation {sample.get('sample_id', n)}", qa, keys) for qa in sample.get("qa", [])]
        out.append((parsed, questions))
    return out


def _question(path: Path, conversation: str, qa: Any, keys: set[str]) -> UpdateQuestion:
    """One question of a conversation, checked against its turns."""
    where = f"{conversation}: question {qa.get('question') if isinstance(qa, dict) else qa!r}"
    try:
        q = UpdateQuestion(str(qa["question"]), str(qa["answer"]), str(qa["reference_time"]), str(qa["category"]),
                           set(qa["evidence"]), set(qa.get("stale_evidence", [])))
    except (KeyError, TypeError) as exc:
        raise IngestError(path, f"{where}: needs question, answer, reference_time, category and evidence ({exc})") from None
    unknown = (q.evidence | q.stale) - keys
    if unknown or q.category not in CATEGORIES or not q.evidence:
        raise IngestError(path, f"{where}: unknown turns {sorted(unknown)}, no evidence or category {q.category!r}")
    return q


def stale_above(ranked: Sequence[str], current: set[str], stale: set[str]) -> bool:
    """Whether a stale turn ranks above every current one."""
    first = {key: n for n, key in reversed(list(enumerate(ranked)))}
    best_stale = min((first[k] for k in stale if k in first), default=None)
    if best_stale is None:
        return False
    return best_stale < min((first[k] for k in current if k in first), default=len(ranked))


@dataclass
class _Run:
    rows: list[dict[str, float]] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    query_ms: list[float] = field(default_factory=list)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        def part(rows: list[dict[str, float]]) -> dict[str, Any]:
            judged = [r["stale_above"] for r in rows if "stale_above" in r]
            known = [r["recognised_above"] for r in rows if "recognised_above" in r]
            metrics = mean_metrics([{k: r[k] for k in ("recall@5", "recall@10")} for r in rows])
            return {**metrics, "stale_above": round(sum(judged) / len(judged), 4) if judged else None,
                    "n_stale": len(judged), "n": len(rows),
                    "recognised_above": round(sum(known) / len(known), 4) if known else None, "n_recognised": len(known)}

        by_category = {c: part([r for r, rc in zip(self.rows, self.categories) if rc == c])
                       for c in CATEGORIES if c in self.categories}
        ordered = sorted(self.query_ms)
        return {"metrics": part(self.rows), "by_category": by_category,
                "query_ms_p50": round(ordered[len(ordered) // 2], 3) if ordered else 0.0}


def evaluate(path: str | Path = DATA, strategy: str = "fused", baselines: Sequence[str] = (), *,
             as_of: bool = True, depth: int = DEPTH, **settings: Any) -> dict[str, Any]:
    """Every strategy over every conversation (one store per conversation, built once);
    ``as_of=False`` asks without the reference time (what a recall that ignores time finds)."""
    names = list(dict.fromkeys([strategy, *baselines]))
    runs = {name: _Run() for name in names}
    recognised: list[bool] = []
    conversations = load(path)
    with tempfile.TemporaryDirectory(prefix="mnemoscope-eval-updates-") as tmp:
        for n, (parsed, questions) in enumerate(conversations):
            mem = Memory(Path(tmp) / f"updates-{n}.db", **settings)
            try:
                mem.ingest_parsed([parsed])
                changed = [q for q in questions if q.category == "update" and q.stale]
                known = _recognised(mem, changed)
                recognised += known
                for name in names:
                    _ask(mem, questions, name, as_of, depth, runs[name], {id(q) for q, k in zip(changed, known) if k})
            finally:
                mem.close()
    main = runs.pop(strategy)
    out = {"dataset": "knowledge-updates", "strategy": strategy, "as_of": as_of,
           "n_questions": len(main.rows), **main.summary(),
           "changes_recognised": {"share": round(sum(recognised) / len(recognised), 4) if recognised else None,
                                  "n": len(recognised)},
           "misses": main.misses}
    if runs:
        out["baselines"] = {name: r.summary() for name, r in runs.items()}
    return out


def _recognised(mem: Memory, questions: list[UpdateQuestion]) -> list[bool]:
    """For each question, whether a fact stated by a stale turn is superseded, through its
    chain of successors, by a fact stated by a current turn."""
    source = mem.sources()[-1]
    by_key = {i.key: i.id for i in mem.store.items_of_source(source.id)}
    facts_of: dict[int, set[int]] = {}
    for fid, item in mem.store.facts_of_items(list(by_key.values())):
        facts_of.setdefault(item, set()).add(fid)
    successor = {r[0]: r[12] for r in mem.store.fact_rows(retired=True)}
    out = []
    for q in questions:
        current = set().union(*(facts_of.get(by_key[k], set()) for k in q.evidence))
        found = False
        for fid in set().union(*(facts_of.get(by_key[k], set()) for k in q.stale)):
            seen = set()
            while fid is not None and fid not in seen and not found:
                seen.add(fid)
                fid = successor.get(fid)
                found = fid in current
        out.append(found)
    return out


def _ask(mem: Memory, questions: list[UpdateQuestion], strategy: str, as_of: bool, depth: int, run: _Run,
         recognised: set[int]) -> None:
    for q in questions:
        options = {"as_of": q.reference_time} if as_of else {}
        started = time.perf_counter()
        rec = mem.recall(q.text, top_k=depth, strategy=strategy, **options)
        run.query_ms.append((time.perf_counter() - started) * 1000)
        ranked = dedupe([h.item.key for h in rec.hits])
        row = {"recall@5": recall_at(ranked, q.evidence, 5), "recall@10": recall_at(ranked, q.evidence, 10)}
        if q.stale:
            row["stale_above"] = float(stale_above(ranked, q.evidence, q.stale))
        if id(q) in recognised:
            row["recognised_above"] = row["stale_above"]
        run.rows.append(row)
        run.categories.append(q.category)
        if row.get("stale_above") or row["recall@5"] == 0.0:  # what to work from: the ranks say which kind
            run.misses.append({"question": q.text, "reference_time": q.reference_time, "strategy": strategy,
                               "category": q.category, "stale_above": bool(row.get("stale_above")),
                               "top5": ranked[:5], "evidence": sorted(q.evidence), "stale": sorted(q.stale),
                               "ranks": {key: ranked.index(key) for key in sorted(q.evidence | q.stale)
                                         if key in ranked}})

