"""Multi-hop passage retrieval (MuSiQue / HotpotQA subsets): recall over supporting titles."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..records import Item, ParsedSource, Source
from .harness import Question, report, require, run_system

METRICS = ("recall@2", "recall@5", "recall@10")


def load(corpus_path: str | Path, questions_path: str | Path) -> tuple[ParsedSource, list[Question]]:
    corpus_path, questions_path = require(corpus_path), require(questions_path)
    passages = json.loads(corpus_path.read_text(encoding="utf-8"))
    items = [Item(text=p["text"], kind="chunk", key=str(n), position=n, title=p["title"]) for n, p in enumerate(passages)]
    parsed = ParsedSource(Source(name=corpus_path.stem, kind="document", content_hash=corpus_path.stem), items)
    qs = [Question(q["question"], set(q["supporting_titles"])) for q in json.loads(questions_path.read_text(encoding="utf-8"))]
    return parsed, qs


def evaluate(corpus_path: str | Path, questions_path: str | Path, strategy: str = "hybrid", baselines: Sequence[str] = (),
             options: dict[str, Any] | None = None, **settings: Any) -> dict[str, Any]:
    parsed, questions = load(corpus_path, questions_path)
    # Titles repeat (MuSiQue): retrieve deeper than 10 so that 10 distinct titles can be ranked.
    def run(name: str):
        return run_system(name, [parsed], questions, METRICS, lambda item: item.title, 30,
                          options if name == strategy else None, **settings)

    main = run(strategy)
    return report(Path(corpus_path).stem.replace("_corpus", ""), strategy, main, {b: run(b) for b in baselines})
