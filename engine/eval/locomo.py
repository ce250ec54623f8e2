"""LoCoMo evidence retrieval: every turn one item, a fresh store per conversation.

Questions of categories 1–4 are asked; evidence strings may hold several ids separated by ``;``
or spaces; ids not in the conversation are dropped; a question left without evidence is skipped.

With a paraphrase file (``paraphrases_dev.json``: the same questions reworded by a person), only
the paraphrased questions are asked, twice against one store: in their original wording and in
the person's own words, so the two sets of figures differ by the wording alone.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..ingest import locomo_sample
from ..records import ParsedSource
from .harness import DataMissing, Question, RunResult, read_samples, report, require, run_system_sets

METRICS = ("recall@5", "recall@10", "ndcg@10", "mrr@10")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
WORDINGS = ("original", "reworded")


@dataclass
class Conversation:
    sample_id: str
    parsed: ParsedSource
    questions: dict[int, Question]  # by index into the sample's ``qa``


def load(path: str | Path) -> list[tuple[ParsedSource, list[Question]]]:
    """Each conversation as (its parsed turns, its answerable questions)."""
    return [(c.parsed, list(c.questions.values())) for c in conversations(path)]


def conversations(path: str | Path) -> list[Conversation]:
    """Each conversation with its answerable questions, by their index into its ``qa``."""
    path, text, samples = read_samples(path)
    out = []
    for n, sample in enumerate(samples):
        parsed = locomo_sample(path, text, sample, n)
        keys = {i.key for i in parsed.items}
        questions = {}
        for qa_index, qa in enumerate(sample.get("qa", [])):
            category = qa.get("category")
            if category not in CATEGORIES:
                continue
            evidence = {e for raw in qa.get("evidence", []) for e in re.split(r"[;\s]+", str(raw)) if e} & keys
            if evidence:
                questions[qa_index] = Question(str(qa["question"]), evidence, str(category))
        out.append(Conversation(str(sample.get("sample_id", n)), parsed, questions))
    return out


def load_paraphrases(path: str | Path) -> dict[tuple[str, int], str]:
    """(sample id, qa index) → the reworded question."""
    path = require(path)
    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
        return {(str(r["sample_id"]), int(r["qa_index"])): str(r["paraphrase"]) for r in rows}
    except (ValueError, TypeError, KeyError) as exc:
        raise DataMissing(f"{path}: not a paraphrase file (a list of sample_id, qa_index, paraphrase): {exc}") from None


def question_sets(conversation: Conversation, paraphrases: dict[tuple[str, int], str] | None) -> dict[str, list[Question]]:
    """Every question under ``"original"``; with paraphrases, only the paraphrased ones, under
    ``"original"`` and (reworded) ``"reworded"``, in the same order."""
    if paraphrases is None:
        return {"original": list(conversation.questions.values())}
    asked = [(i, paraphrases[(conversation.sample_id, i)]) for i in conversation.questions
             if (conversation.sample_id, i) in paraphrases]
    original = [conversation.questions[i] for i, _ in asked]
    reworded = [Question(text, q.relevant, q.category) for (_, text), q in zip(asked, original)]
    return {"original": original, "reworded": reworded}


def evaluate(path: str | Path, strategy: str = "hybrid", baselines: Sequence[str] = (), depth: int = 10,
             options: dict[str, Any] | None = None, paraphrases: str | Path | None = None,
             samples: Sequence[str] = (), **settings: Any) -> dict[str, Any]:
    """Metrics of ``strategy`` and each baseline; with ``paraphrases``, the original and the
    reworded figures of the paraphrased questions, each system's under ``"reworded"``.
    ``samples`` keeps only these conversations (e.g. half of them, to check a tuned choice on
    the other half)."""
    chosen = conversations(path)
    if samples:
        unknown = set(samples) - {c.sample_id for c in chosen}
        if unknown:
            raise DataMissing(f"{path}: no conversation {', '.join(sorted(unknown))}")
        chosen = [c for c in chosen if c.sample_id in set(samples)]
    reworded = load_paraphrases(paraphrases) if paraphrases else None
    wordings = WORDINGS if reworded is not None else WORDINGS[:1]
    results = {name: {w: RunResult() for w in wordings} for name in [strategy, *baselines]}
    for conversation in chosen:
        sets = question_sets(conversation, reworded)
        for name, totals in results.items():
            runs = run_system_sets(name, [conversation.parsed], sets, METRICS, lambda item: item.key, depth,
                                   options if name == strategy else None, **settings)
            for wording, run in runs.items():
                totals[wording].extend(run)
    main = results.pop(strategy)
    out = report("locomo", strategy, main["original"], {name: r["original"] for name, r in results.items()})
    if reworded is not None:
        out["reworded"] = main["reworded"].summary()
        for name, r in results.items():
            out["baselines"][name]["reworded"] = r["reworded"].summary()
    return out
