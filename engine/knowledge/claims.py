"""The newer claims of the slot a question about now asks, brought into the present stage's window.

"Where does Maya live now?" asks a slot (a home) of someone the store knows. The store may hold a
newer claim of that slot for her: a fact that replaced another (the rules ordered them), or the
later side of a clash in the conflict inbox, which the rules could not order ("moved into a
little house with a big backyard" names no place they could tell from Sellwood). The turn stating
it may share no word with the question and rank far below the candidates the present stage reads
(:data:`.present.WINDOW`), where nothing would lift it. So each item stating such a claim, said by
the reference time, takes the window's last place, and the present stage then orders it among the
other values of the slot (newest first), as it would have had the item ranked there by itself.

A clash nobody has settled stays marked: each hit stating a side of it carries a
:class:`~engine.pipeline.ConflictNote`, which names the conflict, so that a person who sees the
newer claim first also sees that it is only a claim, and where to decide it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Collection

import numpy as np

from ..as_of import later, said_on_items
from ..pipeline import ConflictNote
from .records import Fact
from .supersession import Rules, before
from .timeline import fact_of_row

if TYPE_CHECKING:
    from ..index import Index
    from ..pipeline import Ranking
    from ..store import Store


def bring_newer_claims(store: "Store", index: "Index", rules: Rules, slots: Collection[str], subjects: Collection[int],
                       ranking: "Ranking", as_of: str | None, window: int) -> "Ranking":
    """The ranking with the items stating a newer claim of ``slots`` for ``subjects`` (the
    module docstring) at the last places of its first ``window``, and every hit stating a side
    of an open clash of those slots noted. ``as_of``: the reference time (None: now)."""
    if not slots or not subjects:
        return ranking
    claims, notes = _newer_claims(store, rules, frozenset(slots), sorted(subjects), as_of, window)
    said = said_on_items(store, index, sorted({i for f in claims for i in f.provenance}))
    items = sorted((i for i, day in said.items() if not (as_of and later(day, as_of))), key=lambda i: (said[i], i))
    ranking = _into_window(ranking, index.slots(items), window)
    if notes:
        by_slot = {int(s): notes[item] for s, item in zip(ranking.slots[:window].tolist(),
                                                          index.item_ids[ranking.slots[:window]].tolist())
                   if item in notes}
        if by_slot:
            ranking = dataclasses.replace(ranking, extras={**ranking.extras, "conflicts": by_slot})
    return ranking


def _newer_claims(store: "Store", rules: Rules, slots: frozenset[str], subjects: list[int], as_of: str | None,
                  window: int) -> tuple[list[Fact], dict[int, ConflictNote]]:
    """The facts of ``slots`` for ``subjects`` that hold at the reference time and replaced
    another, or are the later side of an open clash (both sides when their dates cannot tell),
    each with its ``window`` newest items, and the notes of each clash's items, by item id."""
    def in_slots(fact: Fact) -> str | None:
        found = rules.slot_of(fact.subject, fact.predicate, fact.object)
        return found[0].name if found is not None and not found[1] and found[0].name in slots else None

    sources: dict[int, list[int]] = {}
    claims = [f for f in (fact_of_row(r) for r in store.newer_claims(subjects))
              if in_slots(f) and f.state(as_of) == "current"]
    notes: dict[int, ConflictNote] = {}
    clashes = store.open_clashes_of(subjects)
    rows = {r[0]: r for r in store.fact_rows(sorted({f for _c, a, b in clashes for f in (a, b)}))}
    for conflict, a, b in clashes:
        if a not in rows or b not in rows:
            continue
        pair = [fact_of_row(rows[a]), fact_of_row(rows[b])]
        slot = in_slots(pair[0])
        if slot is None or in_slots(pair[1]) != slot or any(f.state(as_of) != "current" for f in pair):
            continue
        order = before(pair[0].valid_from, pair[1].valid_from)
        newer = [pair[1]] if order else [pair[0]] if order is False else pair
        claims += newer
        sources.update(store.newest_sources_of([a, b], window))
        for fact, other in (pair, pair[::-1]):
            for item in sources.get(fact.id, []):
                notes.setdefault(item, ConflictNote(conflict, slot, fact.triple(), other.triple(), fact in newer))
    sources.update(store.newest_sources_of([f.id for f in claims if f.id not in sources], window))
    return [dataclasses.replace(f, provenance=sources.get(f.id, [])) for f in claims], notes


def _into_window(ranking: "Ranking", wanted: np.ndarray, window: int) -> "Ranking":
    """``ranking`` with the slots ``wanted`` that are not among its first ``window`` at its
    last places there (a slot that was no candidate joins the ranking, with no features), the
    places keeping their scores; marked ``claim``."""
    top = set(ranking.slots[:window].tolist())
    moving = [int(s) for s in wanted.tolist() if int(s) not in top]
    if not moving:
        return ranking
    if len(moving) > window:
        moving = moving[-window:]  # the newest claims
    at = {int(s): n for n, s in enumerate(ranking.slots.tolist())}
    moved = set(moving)
    rest = [int(s) for s in ranking.slots.tolist() if int(s) not in moved]
    cut = min(window - len(moving), len(rest))
    order = rest[:cut] + moving + rest[cut:]
    scores = np.concatenate([ranking.scores, np.repeat(ranking.scores[-1:], len(order) - len(ranking.scores))]) \
        if len(ranking.scores) else np.zeros(len(order))
    features = {name: np.array([values[at[s]] if s in at else 0.0 for s in order], dtype=values.dtype)
                for name, values in ranking.features.items()}
    found = dict(ranking.found_by)
    for s in moving:
        found[s] = [*found.get(s, []), "claim"]
    return dataclasses.replace(ranking, slots=np.array(order, dtype=ranking.slots.dtype), scores=scores,
                               found_by=found, features=features)

