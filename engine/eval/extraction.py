"""How much of what a careful reader notes does the rule-based extractor recover? (LoCoMo dev)

LoCoMo annotates each session with ``observation`` (per speaker, statements with the turn that
supports them) and ``event_summary`` (per speaker, the session's events). Three measures:

* **entities**: names written with capitals in the observations, found among the extractor's
  mentions of the same session's turns (by normalised key);
* **observations**: an observation counts as recovered when a fact or event extracted from its
  cited turn covers at least half of its content words (stemmed, stop words and the speaker's
  name left out); ``subject_ok`` is the share of those whose subject is the observed person;
* **events**: the same coverage test for each event summary against every event of the session.

The thresholds are fixed here, not tuned; numbers are for the dev conversations only.

Recall says nothing about whether a fact reads like one, so a fourth measure, **precision**,
reads the facts extracted from a fixed, seeded sample of items (from the demo content and one
LoCoMo dev conversation) against hand judgements (``tests/knowledge/data/fact_judgements.json``:
fact text → good/bad, with the item's source and key). A judged fact the extractor no longer
produces counts as neither; a produced fact nobody judged is listed, to be judged.
"""

from __future__ import annotations

import json
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterator

from ..ingest import locomo_sample, discover, read_path
from ..knowledge.entities import EntityRegistry, entity_key
from ..knowledge.extract import Extraction, RuleExtractor, capitalised_spans
from ..knowledge.records import FactDraft
from ..records import Item
from ..text import lexical_tokens
from .harness import require

COVERAGE = 0.5
ROOT = Path(__file__).resolve().parents[2]
JUDGEMENTS = ROOT / "tests" / "knowledge" / "data" / "fact_judgements.json"
DEMO = ROOT / "assets" / "demo"
JUDGED_CONVERSATION = "conv-26"  # the first dev conversation
SAMPLE_SEED = 7
SAMPLE_ITEMS = {"demo": 70, "locomo": 50}  # items drawn per corpus: about 120 facts in all at the start


def _content(text: str, drop: set[str]) -> set[str]:
    return {t for t in lexical_tokens(text) if t not in drop}


def _coverage(gold: set[str], candidates: list[set[str]]) -> float:
    if not gold:
        return 0.0
    return max((len(gold & c) / len(gold) for c in candidates), default=0.0)


def _session_of(dia_id: str) -> str:
    return dia_id.split(":")[0].lstrip("D")


def evaluate(path: str | Path, judgements: str | Path | None = JUDGEMENTS) -> dict[str, Any]:
    """Recall against LoCoMo's annotations; precision on the judged sample when ``judgements``
    (a file) is given and exists."""
    path = require(path)
    text = path.read_text(encoding="utf-8")
    samples = json.loads(text)
    judged = bool(judgements) and Path(judgements).is_file() and any(
        s.get("sample_id") == JUDGED_CONVERSATION for s in samples)  # the judgements are of the dev file
    totals: dict[str, float] = defaultdict(float)
    coverage_sum = 0.0
    started = time.perf_counter()
    for n, sample in enumerate(samples):
        parsed = locomo_sample(path, text, sample, n)
        extractor = RuleExtractor(EntityRegistry())
        by_key: dict[str, Extraction] = {}
        for number, item in enumerate(parsed.items):
            item.id = number + 1
            by_key[item.key] = extractor.extract(item)
        totals["turns"] += len(parsed.items)
        speakers = {entity_key(s) for s in parsed.source.meta.get("speakers", [])}
        speaker_stems = {t for s in speakers for t in lexical_tokens(s)}
        _score_entities(sample, by_key, totals)
        coverage_sum += _score_observations(sample, by_key, speaker_stems, totals)
        _score_events(sample, by_key, speaker_stems, totals)
        for ex in by_key.values():
            totals["facts"] += len(ex.facts)
            totals["events"] += len(ex.events)
            totals["mentions"] += len(ex.mentions)
    elapsed = time.perf_counter() - started
    return {
        "dataset": "locomo", "conversations": len(samples), "turns": int(totals["turns"]),
        "entities": _rate(totals, "entities"),
        "observations": {**_rate(totals, "observations"), "mean_coverage": round(coverage_sum / max(totals["observations_gold"], 1), 4),
                         "subject_ok": round(totals["subject_ok"] / max(totals["observations_found"], 1), 4)},
        "events": _rate(totals, "events_summary"),
        "extracted": {"facts": int(totals["facts"]), "events": int(totals["events"]), "mentions": int(totals["mentions"])},
        "ms_per_turn": round(elapsed * 1000 / max(totals["turns"], 1), 3),
        **({"precision": judged_precision(path, judgements)} if judged else {}),
    }


def fact_text(fact: FactDraft) -> str:
    """How a fact is judged and listed: "subject —[predicate]→ object" (the CLI's layout)."""
    return f"{fact.subject} —[{fact.predicate}]→ {fact.object}"


def _sources(locomo: Path) -> Iterator[tuple[str, str, list[Item]]]:
    """(corpus, source name, items) for the demo content and the judged LoCoMo conversation."""
    files = discover([DEMO]).files
    for found in files:
        for parsed in read_path(found.path):
            yield "demo", Path(parsed.source.name).name, parsed.items
    text = locomo.read_text(encoding="utf-8")
    for n, sample in enumerate(json.loads(text)):
        if sample.get("sample_id") == JUDGED_CONVERSATION:
            yield "locomo", JUDGED_CONVERSATION, locomo_sample(locomo, text, sample, n).items


def sampled_facts(locomo: str | Path) -> list[dict[str, str]]:
    """Every fact the extractor reads from the sampled items: {source, key, fact}. The items are
    drawn with a fixed seed from each corpus, independently of what is extracted from them, so
    the sample stays put while the extractor changes."""
    by_corpus: dict[str, list[tuple[str, Item]]] = defaultdict(list)
    extracted: dict[tuple[str, str], Extraction] = {}
    for corpus, name, items in _sources(require(locomo)):
        extractor = RuleExtractor(EntityRegistry())
        for number, item in enumerate(items):
            item.id = number + 1
            extracted[name, item.key] = extractor.extract(item)  # in order: speakers and names carry over
            by_corpus[corpus].append((name, item))
    rng = random.Random(SAMPLE_SEED)
    out = []
    for corpus, k in SAMPLE_ITEMS.items():
        drawn = rng.sample(by_corpus[corpus], min(k, len(by_corpus[corpus])))
        for name, item in sorted(drawn, key=lambda p: (p[0], p[1].position)):
            for fact in extracted[name, item.key].facts:
                out.append({"source": name, "key": item.key, "fact": fact_text(fact)})
    return out


def judged_precision(locomo: str | Path, judgements: str | Path = JUDGEMENTS) -> dict[str, Any]:
    """Precision of the sampled facts against the hand judgements; unjudged facts listed."""
    judged = {(j["source"], j["key"], j["fact"]): j["judgement"] for j in json.loads(Path(judgements).read_text("utf-8"))}
    produced = sampled_facts(locomo)
    verdicts = [judged.get((f["source"], f["key"], f["fact"])) for f in produced]
    good, bad = verdicts.count("good"), verdicts.count("bad")
    return {
        "judged": len(judged), "produced": len(produced), "good": good, "bad": bad,
        "precision": round(good / (good + bad), 4) if good + bad else 0.0,
        "no_longer_produced": len(judged) - good - bad,
        "unjudged": [f for f, v in zip(produced, verdicts) if v is None],
    }


def _rate(totals: dict[str, float], name: str) -> dict[str, float]:
    gold, found = totals[name + "_gold"], totals[name + "_found"]
    return {"gold": int(gold), "found": int(found), "recall": round(found / gold, 4) if gold else 0.0}


def _score_entities(sample: dict, by_key: dict[str, Extraction], totals: dict[str, float]) -> None:
    found_by_session: dict[str, set[str]] = defaultdict(set)
    for key, ex in by_key.items():
        found_by_session[_session_of(key)] |= {m[1] for m in ex.mentions}
    for name, per_speaker in sample.get("observation", {}).items():
        session = name.split("_")[1]
        gold = {entity_key(s) for obs in per_speaker.values() for text, *_ in obs for s in capitalised_spans(text, lambda k: True)}
        gold.discard("")
        totals["entities_gold"] += len(gold)
        totals["entities_found"] += len(gold & found_by_session[session])


def _statements(ex: Extraction) -> list[tuple[str, set[str]]]:
    out = [(f.subject_key, set(lexical_tokens(f"{f.predicate} {f.object}"))) for f in ex.facts]
    out += [(entity_key(e.participants[0]) if e.participants else "", set(lexical_tokens(e.action))) for e in ex.events]
    return out


def _score_observations(sample: dict, by_key: dict[str, Extraction], speaker_stems: set[str],
                        totals: dict[str, float]) -> float:
    coverage_sum = 0.0
    for per_speaker in sample.get("observation", {}).values():
        for person, observations in per_speaker.items():
            for entry in observations:
                if len(entry) < 2:
                    continue
                text, evidence = entry[0], entry[1]
                cited = evidence if isinstance(evidence, list) else [evidence]
                statements = [s for key in cited for s in _statements(by_key.get(str(key), Extraction()))]
                gold = _content(text, speaker_stems)
                cov = _coverage(gold, [terms for _, terms in statements])
                totals["observations_gold"] += 1
                coverage_sum += cov
                if cov >= COVERAGE:
                    totals["observations_found"] += 1
                    best = max(statements, key=lambda s: len(gold & s[1]))
                    totals["subject_ok"] += best[0] == entity_key(person)
    return coverage_sum


def _score_events(sample: dict, by_key: dict[str, Extraction], speaker_stems: set[str], totals: dict[str, float]) -> None:
    events_by_session: dict[str, list[set[str]]] = defaultdict(list)
    for key, ex in by_key.items():
        events_by_session[_session_of(key)] += [set(lexical_tokens(e.action)) for e in ex.events]
    for name, per_speaker in sample.get("event_summary", {}).items():
        session = name.rsplit("_", 1)[1]
        for person, events in per_speaker.items():
            if person == "date" or not isinstance(events, list):
                continue
            for event in events:
                totals["events_summary_gold"] += 1
                if _coverage(_content(event, speaker_stems), events_by_session[session]) >= COVERAGE:
                    totals["events_summary_found"] += 1


def describe(result: dict[str, Any]) -> str:
    e, o, v, x = result["entities"], result["observations"], result["events"], result["extracted"]
    return "\n".join([
        f"extraction on {result['dataset']}: {result['conversations']} conversations, {result['turns']} turns, "
        f"{result['ms_per_turn']} ms/turn",
        f"  entities       recall {e['recall']:.4f} ({e['found']}/{e['gold']})",
        f"  observations   recall {o['recall']:.4f} ({o['found']}/{o['gold']}), mean coverage {o['mean_coverage']:.4f}, "
        f"subject correct {o['subject_ok']:.4f}",
        f"  event summary  recall {v['recall']:.4f} ({v['found']}/{v['gold']})",
        f"  extracted      {x['facts']} facts, {x['events']} events, {x['mentions']} mentions",
        *_describe_precision(result.get("precision")),
    ])


def _describe_precision(p: dict[str, Any] | None) -> list[str]:
    if p is None:
        return []
    lines = [f"  fact precision {p['precision']:.4f} ({p['good']} good, {p['bad']} bad of {p['judged']} judged; "
             f"{p['no_longer_produced']} judged no longer produced, {len(p['unjudged'])} produced unjudged)"]
    lines += [f"    unjudged  {f['source']} {f['key']}: {f['fact']}" for f in p["unjudged"]]
    return lines
