"""Precision of the supersession rules, against hand judgements.

Each corpus (the demo content, LoCoMo dev, the knowledge-updates benchmark and its three held-out
splits) is ingested into a fresh store as a person would; the rules supersede facts and open
conflicts as they go. A seeded sample of at most ``sample`` supersessions per corpus (all of them
when fewer), and one of the supersessions of every corpus pooled (the issue's "sample of 50"), is
compared with the judgements in ``bench/data/supersession_judgements.json``, written by reading
each pair with the turns behind it: ``right`` when the later fact does replace the earlier in the
world, else ``wrong``. Conflicts are listed too, judged ``sensible`` (a question a person would
want to be asked) or ``noise``. A pair nobody judged is listed, to be judged; it counts as neither.
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
CORPORA = {"demo": ROOT / "assets" / "demo", "updates": ROOT / "bench" / "data" / "knowledge_updates.json",
           "heldout": ROOT / "bench" / "data" / "knowledge_updates_heldout.json",
           "heldout2": ROOT / "bench" / "data" / "knowledge_updates_heldout2.json",
           "heldout3": ROOT / "bench" / "data" / "knowledge_updates_heldout3.json"}
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


def evaluate(locomo: str | Path, judgements: str | Path = JUDGEMENTS, sample: int = SAMPLE,
             seed: int = SEED, corpora: dict[str, Path] = CORPORA) -> dict[str, Any]:
    """Each corpus's supersessions and conflicts against the judgements, and a seeded sample of
    ``sample`` supersessions drawn from all corpora pooled, each listed with its verdict."""
    corpora = {**corpora, "locomo": require(locomo)}
    judged = json.loads(Path(judgements).read_text(encoding="utf-8")) if Path(judgements).exists() else {}
    out: dict[str, Any] = {"judgements": str(judgements), "corpora": {}}
    pooled: list[tuple[str, dict[str, Any]]] = []
    for name, path in corpora.items():
        made = found(path)
        pairs = made["supersessions"]
        pooled += [(name, p) for p in pairs]
        chosen = sorted(random.Random(seed).sample(pairs, min(sample, len(pairs))), key=identity)
        verdicts = judged.get(name, {})
        sensible = sum(verdicts.get(identity(c), {}).get("judgement") == "sensible" for c in made["conflicts"])
        out["corpora"][name] = {
            "supersessions": len(pairs), "sampled": len(chosen), **_tally([verdicts.get(identity(p), {}) for p in chosen]),
            "conflicts": len(made["conflicts"]), "conflicts_sensible": sensible,
            "unjudged": [p for p in chosen + made["conflicts"] if identity(p) not in verdicts],
        }
    drawn = sorted(random.Random(seed).sample(pooled, min(sample, len(pooled))), key=lambda c: (c[0], identity(c[1])))
    verdicts = [judged.get(name, {}).get(identity(p), {}) for name, p in drawn]
    out["pooled"] = {"supersessions": len(pooled), "sampled": len(drawn), "seed": seed, **_tally(verdicts),
                     "sample": [{"corpus": name, "pair": identity(p), "judgement": v.get("judgement")}
                                for (name, p), v in zip(drawn, verdicts)]}
    return out


def _tally(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    right = sum(v.get("judgement") == "right" for v in verdicts)
    wrong = sum(v.get("judgement") == "wrong" for v in verdicts)
    return {"right": right, "wrong": wrong, "precision": round(right / (right + wrong), 4) if right + wrong else None}
