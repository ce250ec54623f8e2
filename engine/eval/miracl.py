"""MIRACL-ko passage retrieval, with the perturbed query sets when present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..records import Item, ParsedSource, Source
from .harness import Question, RunResult, report, require, run_system

METRICS = ("ndcg@10", "mrr@10", "recall@10", "hit@5", "hit@10")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(directory: str | Path) -> tuple[ParsedSource, dict[str, str], dict[str, set], dict[str, dict[str, str]]]:
    """(corpus, queries by qid, relevant docids by qid, perturbed queries by axis)."""
    directory = require(directory)
    docs = _jsonl(require(directory / "corpus.jsonl"))
    items = [Item(text=d["text"], kind="chunk", key=str(d["docid"]), position=n, title=d.get("title", ""))
             for n, d in enumerate(docs)]
    corpus = ParsedSource(Source(name="miracl-ko", kind="document", content_hash="miracl-ko"), items)
    queries = {str(q["qid"]): q["text"] for q in _jsonl(require(directory / "queries.jsonl"))}
    relevant: dict[str, set] = {}
    for line in require(directory / "qrels.tsv").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[3] == "1":
            relevant.setdefault(parts[0], set()).add(parts[2])
    perturbations: dict[str, dict[str, str]] = {}
    pdir = directory / "perturbations"
    if pdir.is_dir():
        for f in sorted(pdir.glob("*.jsonl")):
            perturbations[f.stem] = {str(r["qid"]): r["text"] for r in _jsonl(f)}
    return corpus, queries, relevant, perturbations


def evaluate(directory: str | Path, strategy: str = "hybrid", baselines: Sequence[str] = (),
             options: dict[str, Any] | None = None, **settings: Any) -> dict[str, Any]:
    corpus, queries, relevant, perturbations = load(directory)

    def questions(texts: dict[str, str]) -> list[Question]:
        return [Question(t, relevant[qid]) for qid, t in texts.items() if qid in relevant]

    def run(name: str, texts: dict[str, str]) -> RunResult:
        return run_system(name, [corpus], questions(texts), METRICS, lambda item: item.key, 10,
                          options if name == strategy else None, **settings)

    main = run(strategy, queries)
    out = report("miracl-ko", strategy, main, {name: run(name, queries) for name in baselines})
    if perturbations:
        out["perturbations"] = {}
        for axis, texts in perturbations.items():
            base = run(strategy, {q: queries[q] for q in texts if q in queries}).summary()["metrics"]
            moved = run(strategy, texts).summary()["metrics"]
            out["perturbations"][axis] = {
                "n": len(questions(texts)), "metrics": moved,
                "delta": {k: round(moved[k] - base[k], 4) for k in moved},
            }
    return out
