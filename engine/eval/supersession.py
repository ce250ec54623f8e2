"""Precision of the supersession rules, against hand judgements.

Each corpus (the demo content, LoCoMo dev, the knowledge-updates benchmark) is ingested into a
fresh store as a person would; the rules supersede facts and open conflicts as they go. A seeded
sample of at most ``SAMPLE`` supersessions per corpus (all of them when fewer) is compared with
the judgements in ``bench/data/supersession_judgements.json``, written by reading each pair with
the turns behind it: ``right`` when the later fact does replace the earlier in the world, else
``wrong``. Conflicts are listed too, judged ``sensible`` (a question a person would want to be
asked) or ``noise``. A pair nobody judged is listed, to be judged; it counts as neither.
"""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

from ..memory import Memory
from .harness import require

ROOT = Path(__file__).resolve().parents[2]
JUDGEMENTS = ROOT / "bench" / "data" / "supersession_judgements.json"
CORPORA = {"demo": ROOT / "assets" / "demo", "updates": ROOT / "bench" / "data" / "knowledge_updates.json"}
SAMPLE = 50
SEED = 16


def _side(mem: Memory, fact_id: int) -> dict[str, Any]:
    f = mem.knowledge.fact(fact_id)
    items = mem.items(f.provenance)
    return {"fact": f.triple(), "valid_from": f.valid_from,
            "items": [f"{items[i].key}: {items[i].speaker + ': ' if items[i].speaker else ''}{items[i].text}"
                      for i in f.provenance if i in items]}


def found(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The supersessions and conflicts the rules make while ``path`` is ingested."""
    with tempfile.TemporaryDirectory(prefix="mnemoscope-eval-supersession-") as tmp:
        with Memory(Path(tmp) / "judged.db") as mem:
            mem.ingest([path])
            pairs = []
            for fact in mem.knowledge.facts():
                if fact.superseded_by is not None:
                    pairs.append({"old": _side(mem, fact.id), "new": _side(mem, fact.superseded_by)})
            conflicts = []
            for c in mem.knowledge.conflicts():
                sides = [_side(mem, f.id) for f in c.facts] if c.facts else [{"entity": e.name} for e in c.entities]
                conflicts.append({"kind": c.kind, "reason": c.reason, "sides": sides})
    return {"supersessions": pairs, "conflicts": conflicts}


def identity(pair: dict[str, Any]) -> str:
    """What a judgement is keyed by: the two facts as written."""
    if "old" in pair:
        return f"{pair['old']['fact']}  =>  {pair['new']['fact']}"
    return f"{pair['kind']}: " + "  |  ".join(s.get("fact") or s.get("entity", "") for s in pair["sides"])


def evaluate(locomo: str | Path, judgements: str | Path = JUDGEMENTS) -> dict[str, Any]:
    corpora = {**CORPORA, "locomo": require(locomo)}
    judged = json.loads(Path(judgements).read_text(encoding="utf-8")) if Path(judgements).exists() else {}
    out: dict[str, Any] = {"judgements": str(judgements), "corpora": {}}
    for name, path in corpora.items():
        made = found(path)
        pairs = made["supersessions"]
        sample = sorted(random.Random(SEED).sample(pairs, min(SAMPLE, len(pairs))), key=identity)
        verdicts = judged.get(name, {})
        right = sum(verdicts.get(identity(p), {}).get("judgement") == "right" for p in sample)
        wrong = sum(verdicts.get(identity(p), {}).get("judgement") == "wrong" for p in sample)
        sensible = sum(verdicts.get(identity(c), {}).get("judgement") == "sensible" for c in made["conflicts"])
        out["corpora"][name] = {
            "supersessions": len(pairs), "sampled": len(sample), "right": right, "wrong": wrong,
            "precision": round(right / (right + wrong), 4) if right + wrong else None,
            "conflicts": len(made["conflicts"]), "conflicts_sensible": sensible,
            "unjudged": [p for p in sample + made["conflicts"] if identity(p) not in verdicts],
        }
    return out
