"""LoCoMo evidence retrieval: every turn one item, a fresh store per conversation.

Questions of categories 1–4 are asked; evidence strings may hold several ids separated by ``;``
or spaces; ids not in the conversation are dropped; a question left without evidence is skipped.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from ..ingest import _locomo_sample
from ..records import ParsedSource
from .harness import Question, RunResult, report, require, run_system

METRICS = ("recall@5", "recall@10", "ndcg@10", "mrr@10")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def load(path: str | Path) -> list[tuple[ParsedSource, list[Question]]]:
    """Each conversation as (its parsed turns, its answerable questions)."""
    path = require(path)
    text = path.read_text(encoding="utf-8")
    samples = json.loads(text)
    out = []
    for n, sample in enumerate(samples):
        parsed = _locomo_sample(path, text, sample, n)
        keys = {i.key for i in parsed.items}
        questions = []
        for qa in sample.get("qa", []):
            category = qa.get("category")
            if category not in CATEGORIES:
                continue
            evidence = {e for raw in qa.get("evidence", []) for e in re.split(r"[;\s]+", str(raw)) if e} & keys
            if evidence:
                questions.append(Question(str(qa["question"]), evidence, str(category)))
        out.append((parsed, questions))
    return out


def evaluate(path: str | Path, strategy: str = "hybrid", baselines: Sequence[str] = (), depth: int = 10,
             options: dict[str, Any] | None = None, **settings: Any) -> dict[str, Any]:
    conversations = load(path)
    results = {name: RunResult() for name in [strategy, *baselines]}
    for parsed, questions in conversations:
        for name, total in results.items():
            total.extend(run_system(name, [parsed], questions, METRICS, lambda item: item.key, depth,
                                    options if name == strategy else None, **settings))
    main = results.pop(strategy)
    return report("locomo", strategy, main, results)
