"""MIRACL-ko passage retrieval, with the perturbed query sets when present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from ..records import Item, ParsedSource, Source
from .harness import Question, report, require, run_engine_sets, run_system
from .metrics import mean_metrics

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
    """Metrics over the queries; for each perturbation axis, the same questions perturbed and the
    change against their unperturbed versions (one store serves every query set)."""
    corpus, queries, relevant, perturbations = load(directory)
    judged = {axis: {q: t for q, t in texts.items() if q in relevant and q in queries} for axis, texts in perturbations.items()}
    main_qids = [q for q in queries if q in relevant]

    def questions(texts: dict[str, str]) -> list[Question]:
        return [Question(t, relevant[qid]) for qid, t in texts.items()]

    sets = {"": questions({q: queries[q] for q in main_qids}), **{axis: questions(t) for axis, t in judged.items()}}
    results = run_engine_sets([corpus], sets, METRICS, strategy, lambda item: item.key, 10, options, **settings)
    main = results.pop("")
    others = {name: run_system(name, [corpus], sets[""], METRICS, lambda item: item.key, 10, None, **settings)
              for name in baselines}
    out = report("miracl-ko", strategy, main, others)
    row_of = dict(zip(main_qids, main.rows))
    if judged:
        out["perturbations"] = {}
        for axis, moved in results.items():
            base = mean_metrics([row_of[q] for q in judged[axis]])
            metrics = moved.summary()["metrics"]
            out["perturbations"][axis] = {
                "n": len(judged[axis]), "metrics": metrics,
                "delta": {k: round(metrics[k] - base[k], 4) for k in metrics},
            }
    return out
