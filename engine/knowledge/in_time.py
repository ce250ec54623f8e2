"""Recall in time: what held, and what had been said, at a date (default: now).

A recall asks at a *reference time*: ``as_of`` (a date) or now. Three things follow:

* items said (their own timestamp; an undated item, when its source was stored) after the
  reference time are no candidates: the store had not heard them yet;
* above an item that states a fact superseded by then, where the fact shares words with the
  query, come the items stating the fact that holds instead (joining the candidates if they
  were not among them): a question about where someone lives finds the move before the old
  address, and the old address stays findable, just below;
* the recall's facts are those known by then, each marked with its state (``current`` or
  ``superseded``), current ones first.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..text import lexical_tokens
from .entities import entity_key
from .records import Fact
from .timeline import fact_of_row

if TYPE_CHECKING:
    from ..index import Index
    from ..store import Store
    from .supersession import Rules

_DATE = re.compile(r"\d{4}(?:-\d{2}(?:-\d{2})?)?")


class AsOfError(ValueError):
    """An ``as_of`` value that is no date; ``str()`` is one line for the user."""


def parse_as_of(value: Any) -> str | None:
    """An ``as_of`` option as an ISO date, month or year (None: now). Accepts a date or
    datetime object, or text such as ``2023-06-01``, ``2023-06`` or ``2023``."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    if _DATE.fullmatch(text):
        try:
            datetime.fromisoformat(text if len(text) == 10 else text + "-01" * ((10 - len(text)) // 3))
            return text
        except ValueError:
            pass
    else:
        try:
            return datetime.fromisoformat(text).date().isoformat()
        except ValueError:
            pass
    raise AsOfError(f"as_of {value!r} is not a date such as 2023-06-01, 2023-06 or 2023")


def _later(a: str, b: str) -> bool:
    """Whether ISO time ``a`` lies after ``b`` at the precision both give."""
    n = min(len(a), len(b))
    return a[:n] > b[:n]


def said_on(store: "Store", index: "Index", slots: np.ndarray) -> list[str]:
    """The ISO day each slot's item was said: its own timestamp, else when its source was stored."""
    times = index.times[slots].astype(np.float64)
    undated = np.isnan(times)
    if undated.any():
        sources = index.source_ids[slots[undated]]
        stored = store.source_times(sorted({int(x) for x in sources}))
        times[undated] = [stored.get(int(x), 0.0) for x in sources]
    return [datetime.fromtimestamp(t).date().isoformat() for t in times.tolist()]


def said_on_items(store: "Store", index: "Index", item_ids: Sequence[int]) -> dict[int, str]:
    """:func:`said_on` by item id (items without a slot are left out)."""
    ids = [i for i in item_ids if i in index.slot_of]
    return dict(zip(ids, said_on(store, index, index.slots(ids)))) if ids else {}


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


def rerank_in_time(store: "Store", index: "Index", rules: "Rules", query: str, ranking: Any, as_of: str | None) -> Any:
    """The ranking at the reference time (see the module docstring); ``ranking`` is an
    :class:`engine.pipeline.Ranking` (slots best first, scores, found_by, features, extras)."""
    slots = ranking.slots
    if not len(slots):
        return ranking
    keep = np.ones(len(slots), dtype=bool)
    if as_of is not None:
        said = said_on(store, index, slots)
        keep = np.array([not _later(d, as_of) for d in said], dtype=bool)
    ranking = _select(ranking, keep)
    stale = _stale(store, index, rules, query, ranking.slots, as_of)
    return _lift(ranking, stale, index, as_of, store) if stale else ranking


def _select(ranking: Any, keep: np.ndarray) -> Any:
    if keep.all():
        return ranking
    slots = ranking.slots[keep]
    return dataclasses.replace(ranking, slots=slots, scores=ranking.scores[keep],
                               features={k: v[keep] for k, v in ranking.features.items()},
                               found_by={s: ranking.found_by.get(s, []) for s in slots.tolist()})


def _stale(store: "Store", index: "Index", rules: "Rules", query: str, slots: np.ndarray, as_of: str | None) -> list[_Stale]:
    """Candidates stating a fact superseded at the reference time that the query is about."""
    ids = [int(i) for i in index.item_ids[slots]]
    provenance = store.facts_of_items(ids)
    if not provenance:
        return []
    facts = {r[0]: fact_of_row(r) for r in store.fact_rows(sorted({f for f, _ in provenance}))}
    ended = {fid: f for fid, f in facts.items() if f.state(as_of) == "superseded"}
    if not ended:
        return []
    terms = set(lexical_tokens(query))
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


def _lift(ranking: Any, stale: list[_Stale], index: "Index", as_of: str | None, store: "Store") -> Any:
    """Put the items of what replaced each stale candidate just above it."""
    scores = {int(s): float(v) for s, v in zip(ranking.slots.tolist(), ranking.scores.tolist())}
    found = {s: list(ranking.found_by.get(s, [])) for s in scores}
    for st in stale:
        old = scores[st.slot]
        successors = index.slots(st.successors)
        if as_of is not None and len(successors):
            said = said_on(store, index, successors)
            successors = successors[[not _later(d, as_of) for d in said]]
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
        if as_of is not None and not any(not _later(said.get(i, "0000"), as_of) for i in f.provenance):
            continue
        out.append(f)
    return sorted(out, key=lambda f: f.state(as_of) != "current")
