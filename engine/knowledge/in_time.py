"""Recall in time: which facts held at the recall's reference time (``as_of``, default now).

The core drops the items said after ``as_of`` (:mod:`engine.as_of`); the knowledge area adds:

* above an item that states a fact superseded by then, where the fact shares words with the
  query and is about someone the query names (any subject when it names no one), come the
  items stating the fact that holds instead (joining the candidates if they were not among
  them): a question about where someone lives finds the move before the old address, and the
  old address stays findable, just below; "where does Maya live?" is not about Leah's move,
  even in a turn of Maya's;
* the recall's facts are those known by then, each marked with its state (``current`` or
  ``superseded``), current ones first.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from typing import TYPE_CHECKING, Collection, Sequence

import numpy as np

from ..as_of import later, said_on
from ..text import lexical_tokens
from .entities import entity_key
from .records import Fact
from .timeline import fact_of_row

if TYPE_CHECKING:
    from ..index import Index
    from ..pipeline import Ranking
    from ..store import Store
    from .supersession import Rules

# "What does Daniel do for a living?" asks a job: its "living" is no word of where he lives
_FOR_A_LIVING = re.compile(r"\bfor\s+a\s+living\b", re.I)


def _about(fact: Fact, rules: "Rules") -> set[str]:
    """The words a question about ``fact`` may use: its own, less its subject's name, and its
    slot's ``asks``."""
    words = set(lexical_tokens(fact.triple())) - set(lexical_tokens(entity_key(fact.subject)))
    found = rules.slot_of(fact.subject, fact.predicate, fact.object)
    if found is not None:
        words |= set(lexical_tokens(" ".join(found[0].asks)))
    return words


@dataclasses.dataclass
class _Stale:
    """A candidate item that states a superseded fact the query is about, and what replaced it."""

    slot: int
    successors: list[int]  # item ids stating the facts that hold instead


def rerank_in_time(store: "Store", index: "Index", rules: "Rules", query: str, ranking: "Ranking",
                   as_of: str | None, subjects: Collection[int] = ()) -> "Ranking":
    """The ranking with the items of what holds at the reference time just above the items of
    what it replaced (see the module docstring). ``subjects``: the entities the query names."""
    if not len(ranking.slots):
        return ranking
    stale = _stale(store, index, rules, query, ranking.slots, as_of, frozenset(subjects))
    return _lift(ranking, stale, index, as_of, store) if stale else ranking


def _stale(store: "Store", index: "Index", rules: "Rules", query: str, slots: np.ndarray, as_of: str | None,
           subjects: frozenset[int]) -> list[_Stale]:
    """Candidates stating a fact superseded at the reference time that the query is about: of
    a subject it names, if it names any."""
    ids = index.item_ids[slots].tolist()
    provenance = store.ended_facts_of_items(ids)
    if not provenance:
        return []
    facts = {r[0]: fact_of_row(r) for r in store.fact_rows(sorted({f for f, _ in provenance}))}
    ended = {fid: f for fid, f in facts.items()
             if f.state(as_of) == "superseded" and (not subjects or f.subject_id in subjects)}
    if not ended:
        return []
    terms = set(lexical_tokens(_FOR_A_LIVING.sub("for work", query)))
    about = {fid: _about(f, rules) for fid, f in ended.items()}
    by_item: dict[int, list[int]] = defaultdict(list)
    for fid, item in provenance:
        if fid in about and about[fid] & terms:
            by_item[item].append(fid)
    out = []
    for slot, item in zip(slots.tolist(), ids):
        if by_item.get(item):
            out.append(_Stale(slot, sorted({i for fid in by_item[item] for i in _successor_items(store, fid, as_of)})))
    return out


def _successor_items(store: "Store", fact_id: int, as_of: str | None) -> list[int]:
    """The items stating what holds at the reference time in place of ``fact_id`` (following
    the chain of successors; none when it was ended without one)."""
    seen = {fact_id}
    row = store.fact_rows([fact_id])
    while row:
        fact = fact_of_row(row[0])
        nxt = fact.superseded_by
        if nxt is None or nxt in seen:
            return []
        seen.add(nxt)
        row = store.fact_rows([nxt])
        if row and fact_of_row(row[0]).state(as_of) == "current":
            return store.fact_sources_of([nxt]).get(nxt, [])
    return []


def _lift(ranking: "Ranking", stale: list[_Stale], index: "Index", as_of: str | None, store: "Store") -> "Ranking":
    """Put the items of what replaced each stale candidate just above it."""
    scores = {int(s): float(v) for s, v in zip(ranking.slots.tolist(), ranking.scores.tolist())}
    found = {s: list(ranking.found_by.get(s, [])) for s in scores}
    for st in stale:
        old = scores[st.slot]
        successors = index.slots(st.successors)
        if as_of is not None and len(successors):
            said = said_on(store, index, successors)
            successors = successors[[not later(d, as_of) for d in said]]
        for s in successors.tolist():
            if s not in scores or scores[s] <= old:
                scores[s] = old + 1e-6 * max(abs(old), 1.0)
                found.setdefault(s, [])
                if "successor" not in found[s]:
                    found[s].append("successor")
    order = sorted(scores, key=lambda s: (-scores[s], s))
    position = {int(s): n for n, s in enumerate(ranking.slots.tolist())}
    features = {}
    for name, values in ranking.features.items():
        col = np.zeros(len(order), dtype=np.float64)
        for n, s in enumerate(order):
            if s in position:
                col[n] = values[position[s]]
        features[name] = col
    return dataclasses.replace(ranking, slots=np.array(order, dtype=np.int64),
                               scores=np.array([scores[s] for s in order]), found_by={s: found[s] for s in order},
                               features=features)


def facts_in_time(facts: Sequence[Fact], said: dict[int, str], as_of: str | None) -> list[Fact]:
    """The facts a recall returns at the reference time: believed, known by then (their
    earliest evidence said by then, ``said``: item id → ISO day), current ones first."""
    out = []
    for f in facts:
        state = f.state(as_of)
        if state in ("retired", "not yet"):
            continue
        if as_of is not None and not any(not later(said.get(i, "9999"), as_of) for i in f.provenance):
            continue
        out.append(f)
    return sorted(out, key=lambda f: f.state(as_of) != "current")
