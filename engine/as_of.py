"""Recall as of a date: only what had been said by then.

``Memory.recall(..., as_of="2023-06-01")`` answers with what the store had heard by that date
(a month ``2023-06`` or a year ``2023`` is as precise as the question): an item counts from the
day it was said (its own timestamp), an undated item from the day its source was stored. The
knowledge area adds the rest of the picture, which facts held then (:mod:`engine.knowledge.in_time`).
"""

from __future__ import annotations

import dataclasses
import math
import re
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from .errors import RecallError, quoted

if TYPE_CHECKING:
    from .index import Index
    from .pipeline import Ranking
    from .store import Store

_PARTIAL = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", re.ASCII)  # "２０２３" is no date the filter can compare


def parse_as_of(value: Any) -> str | None:
    """An ``as_of`` option as an ISO date, month or year (None: now). Accepts a date or
    datetime, or text such as ``2023-06-01``, ``2023-06`` or ``2023`` (a time of day is dropped)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    m = _PARTIAL.fullmatch(text)
    try:
        if m:
            date(int(m[1]), int(m[2] or 1), int(m[3] or 1))
            return text
        return datetime.fromisoformat(text).date().isoformat()
    except ValueError:
        raise RecallError(f"as of {quoted(value)} is not a date such as 2023-06-01, 2023-06 or 2023") from None


def is_date(text: str) -> bool:
    """Whether ``text`` is a date :func:`parse_as_of` reads (a day, a month, a year, or a date
    and time such as ``2023-06-01T10:00:00Z``): the form every time the store keeps is in."""
    try:
        return parse_as_of(text) is not None
    except RecallError:
        return False


def later(a: str, b: str) -> bool:
    """Whether ISO time ``a`` lies after ``b`` at the precision both give ("2023-06-12" is not
    after "2023-06")."""
    n = min(len(a), len(b))
    return a[:n] > b[:n]


def earliest(*times: str | None) -> str | None:
    """The earliest of ISO times at any precision ("2023" is the whole year, so "2023-06-30" comes
    first); None when none is given."""
    out = None
    for t in times:
        if t and (out is None or later(out, t)):
            out = t
    return out


def period_after(as_of: str) -> float:
    """The first instant after the day, month or year ``as_of`` names, as a timestamp of the
    items' clock (local time, as :func:`said_on` reads it): an item said before it was said by then."""
    year, month, day = (int(part) for part in (as_of.split("-") + ["1", "1"])[:3])
    parts = as_of.count("-")
    try:
        if parts == 2:
            start = date.fromordinal(date(year, month, day).toordinal() + 1)
        elif parts == 1:
            start = date(year + month // 12, month % 12 + 1, 1)
        else:
            start = date(year + 1, 1, 1)
        return datetime(start.year, start.month, start.day).timestamp()
    except (ValueError, OverflowError, OSError):  # past the calendar's end (9999) or the clock's first day
        return math.inf if year > 1970 else -math.inf


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


def said_by(store: "Store", index: "Index", ranking: "Ranking", as_of: str | None) -> "Ranking":
    """The ranking without the items said after ``as_of`` (all of it when None)."""
    if as_of is None or not len(ranking.slots):
        return ranking
    keep = np.array([not later(d, as_of) for d in said_on(store, index, ranking.slots)], dtype=bool)
    if keep.all():
        return ranking
    slots = ranking.slots[keep]
    return dataclasses.replace(ranking, slots=slots, scores=ranking.scores[keep],
                               features={k: v[keep] for k, v in ranking.features.items()},
                               found_by={s: ranking.found_by.get(s, []) for s in slots.tolist()})
