"""Feedback memory: what a person marked used (and shown but ignored) for which query, consulted at
every recall, whatever the strategy.

A stage after the strategy (:func:`engine.recall.recall` calls :meth:`FeedbackMemory.apply`) moves
the items marked for queries like the one asked:

* a marked item rises for the same query at once: one mark lifts it above the whole list;
* it rises for a query that means the same — a near duplicate, a rewording, the same names and
  dates — by less, as the queries are less alike, and in proportion to how well it already
  answers the new query (its standing in the list the strategy made for it). A rewording's
  evidence answers the rewording too; a turn marked for a different question about the same
  person usually does not, so a question that is only alike is barely moved by it;
* the lift grows with the number of marks and fades with the marks' age;
* a query that shares nothing distinctive with any marked one (below ``threshold``) is
  untouched;
* an item shown but ignored sinks, by ``ignored_share`` of what a use would lift it, for the
  same question only (``MarkParams.same``): that it was not used for one question says nothing
  of another, even an alike one, whose answer it may be.

Query similarity is the cosine of the queries' lexical tokens (stemmed, stop words out), each
weighted by its IDF in the store (a word the store has never seen counts as the rarest), so a
shared name that is in every question weighs little and a shared rare word much. A rewording that
keeps no distinctive word is out of its reach; so when an embedding endpoint is configured, the
cosine of the queries' embeddings replaces it (a paraphrase-trained model places rewordings close),
with a ramp of its own, as that cosine has a scale of its own. The asked query's vector is the one
recall made already; the marks' queries are embedded once, in batches, when the marks change, and
kept in memory only. A shift is
measured in the list's own score range (best − worst candidate): a lift of 1 puts an item above
the list's best, so it works the same for every strategy's score scale.

Recall stays read-only: the memory is built from the feedback log when the ranker loads and
changes only when feedback is given or withdrawn.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..pipeline import MarkNote, Ranking
from ..text import lexical_tokens
from .rows import GrowingRows

DAY = 86_400.0


@dataclass(frozen=True)
class Ramp:
    """How much a mark counts for a query this alike: nothing below ``threshold``, fully from
    ``full`` (the same query), ((similarity − threshold) / (full − threshold)) ** ``power`` between."""

    threshold: float
    full: float = 1.0
    power: float = 2.0

    def strength(self, sims: np.ndarray) -> np.ndarray:
        return np.clip((sims - self.threshold) / (self.full - self.threshold), 0.0, 1.0) ** self.power


@dataclass
class MarkParams:
    # The ramps and ``same`` were chosen on LoCoMo dev (the only data; optimistic) as the ones that
    # lift the rewordings most while the held-out questions and the random control lose less than
    # 0.005 nDCG@10 (docs/benchmarks.md, `bench/learning_headroom.py --ramps`); the embedded one
    # with all-MiniLM-L6-v2 as the endpoint, whose cosines of unrelated questions of one
    # conversation often exceed 0.7: hence a high threshold and a steep ramp.
    lexical: Ramp = field(default_factory=lambda: Ramp(0.6, 1.0, 2.0))  # the IDF-weighted token cosine
    embedded: Ramp = field(default_factory=lambda: Ramp(0.72, 1.0, 3.0))  # the endpoint's embedding cosine
    # The same question, on either similarity: its marks count in full whatever the item's standing
    # in the new list (a marked hit the strategy ranks low, or not at all, still rises above the
    # list), and only its ignored hits sink.
    same: Ramp = field(default_factory=lambda: Ramp(0.95, 1.0, 2.0))
    standing_power: float = 1.0  # an alike question lifts an item by its standing ** this (0: whatever its standing)
    ignored_share: float = 0.25  # an ignored hit sinks by this share of what a use lifts
    half_life_days: float = 90.0  # a mark's weight halves in this long
    margin: float = 0.05  # a lift of 1 lands this share of the range above the best


@dataclass
class Mark:
    """One feedback event as the memory keeps it."""

    event_id: int
    query: str
    at: float
    used: list[int]
    ignored: list[int]
    tokens: frozenset[str] = frozenset()


@dataclass
class _Index:
    """Marks × tokens, IDF-weighted, rows of unit length, in ``marks`` order: a new mark appends its
    row (:class:`.rows.GrowingRows`); a withdrawn mark, or a change of the store (``version``: the
    IDF weights), starts it anew."""

    version: tuple[int, ...]
    column: dict[str, int] = field(default_factory=dict)
    weight: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per column: the token's IDF
    entries: GrowingRows = field(default_factory=GrowingRows)
    n_marks: int = 0

    def extend(self, marks: list[Mark], idf: Callable[[list[str]], np.ndarray]) -> None:
        """Append the rows of ``marks``, the ones after those already held; only tokens not seen
        before are looked up in ``idf``."""
        new = sorted({t for m in marks for t in m.tokens} - self.column.keys())
        if new:
            self.column.update(zip(new, range(len(self.column), len(self.column) + len(new))))
            self.weight = np.concatenate([self.weight, idf(new)])
        own = np.repeat(np.arange(len(marks)), [len(m.tokens) for m in marks])
        cols = np.fromiter((self.column[t] for m in marks for t in m.tokens), dtype=np.int64, count=len(own))
        values = self.weight[cols]
        norms = np.sqrt(np.bincount(own, weights=values * values, minlength=len(marks)))
        self.entries.append(own + self.n_marks, cols, values / np.maximum(norms, 1e-12)[own])
        self.n_marks += len(marks)


@dataclass
class Endpoint:
    """An embedding endpoint as the marks use it: texts → unit vectors in one batched call (it may
    raise :class:`engine.errors.EmbeddingUnavailable`), and its signature, so that vectors of two
    models are never compared."""

    signature: str
    embed: Callable[[list[str]], np.ndarray]


@dataclass
class Likeness:
    """How alike one query is to every mark's query (in ``marks`` order), and the ramp that turns
    that into how much each mark counts (each similarity has its own scale)."""

    sims: np.ndarray
    ramp: Ramp

    def strength(self) -> np.ndarray:
        return self.ramp.strength(self.sims)


@dataclass
class _Embedded:
    """The marks' query vectors under one endpoint: by query text, and as rows in ``marks`` order
    (``rows`` is dropped when the marks change; a query already embedded is not embedded again)."""

    signature: str
    by_text: dict[str, np.ndarray] = field(default_factory=dict)
    rows: np.ndarray | None = None


@dataclass
class FeedbackMemory:
    params: MarkParams = field(default_factory=MarkParams)
    marks: dict[int, Mark] = field(default_factory=dict)
    _index: _Index | None = None
    _embedded: _Embedded | None = None

    def __len__(self) -> int:
        return len(self.marks)

    # -- what it holds ------------------------------------------------------------------------

    def add(self, event_id: int, query: str, at: float, used: list[int], ignored: list[int]) -> None:
        """Remember one event; a new one is appended to what recall reads (nothing is rebuilt)."""
        if event_id in self.marks:
            self._changed()  # a mark replaced in place: its row is not the last one
        self.marks[event_id] = Mark(event_id, query, at, list(used), list(ignored), frozenset(lexical_tokens(query)))

    def remove(self, event_id: int) -> None:
        if self.marks.pop(event_id, None) is not None:
            self._changed()

    def clear(self) -> None:
        self.marks.clear()
        self._changed()

    def _changed(self) -> None:
        """Rows are no longer the marks in order: start the indexes anew at their next use."""
        self._index = None
        if self._embedded is not None:
            self._embedded.rows = None

    def forget_items(self, item_ids: set[int]) -> None:
        for mark in self.marks.values():
            mark.used = [i for i in mark.used if i not in item_ids]
            mark.ignored = [i for i in mark.ignored if i not in item_ids]

    # -- similarity ---------------------------------------------------------------------------

    def similarities(self, query: str, idf: Callable[[list[str]], np.ndarray], version: tuple[int, ...],
                     vector: np.ndarray | None = None, endpoint: Endpoint | None = None) -> Likeness:
        """How alike ``query`` is to every mark's query: the cosine of their embeddings when the
        query's ``vector`` and the ``endpoint`` that made it are given (the marks' queries are
        embedded by it, see :meth:`vectors`), else the IDF-weighted cosine of their tokens
        (``idf`` of the store at ``version``: the token weights are kept while it holds)."""
        if vector is not None and endpoint is not None:
            rows = self._mark_rows(endpoint)
            sims = np.clip(rows @ vector, 0.0, 1.0) if len(rows) else np.zeros(0)
            return Likeness(sims, self.params.embedded)
        return Likeness(self._lexical(query, idf, version), self.params.lexical)

    def vectors(self, texts: list[str], endpoint: Endpoint) -> np.ndarray:
        """Rows of ``texts``' vectors under ``endpoint``, kept in memory by text: only the ones
        not embedded yet go to the endpoint, in one batched call."""
        known = self._cache(endpoint).by_text
        missing = sorted(set(texts) - known.keys())
        if missing:
            known.update(zip(missing, endpoint.embed(missing)))
        return np.stack([known[t] for t in texts]) if texts else np.zeros((0, 0))

    def _cache(self, endpoint: Endpoint) -> _Embedded:
        if self._embedded is None or self._embedded.signature != endpoint.signature:
            self._embedded = _Embedded(endpoint.signature)
        return self._embedded

    def _mark_rows(self, endpoint: Endpoint) -> np.ndarray:
        """The marks' query vectors, rows in ``marks`` order; a new mark's row is appended."""
        cache = self._cache(endpoint)
        held = 0 if cache.rows is None else len(cache.rows)
        if held < len(self.marks) or cache.rows is None:
            fresh = self.vectors([m.query for m in list(self.marks.values())[held:]], endpoint)
            cache.rows = np.vstack([cache.rows, fresh]) if held else fresh
        return cache.rows

    def _lexical(self, query: str, idf: Callable[[list[str]], np.ndarray], version: tuple[int, ...]) -> np.ndarray:
        """Cosine of ``query`` to every mark's query (in ``self.marks`` order), IDF-weighted."""
        if not self.marks:
            return np.zeros(0)
        index = self._indexed(idf, version)
        tokens = set(lexical_tokens(query))
        cols = np.array([index.column[t] for t in tokens if t in index.column], dtype=np.int64)
        unseen = [t for t in tokens if t not in index.column]
        norm = math.sqrt(float(np.sum(index.weight[cols] ** 2) + np.sum(idf(unseen) ** 2)))
        if not len(cols) or norm == 0:
            return np.zeros(len(self.marks))
        q = np.zeros(len(index.weight))
        q[cols] = index.weight[cols] / norm
        return np.clip(index.entries.dot(q, index.n_marks), 0.0, 1.0)

    def _indexed(self, idf: Callable[[list[str]], np.ndarray], version: tuple[int, ...]) -> _Index:
        """The marks' token index, extended by the marks added since it was last read."""
        if self._index is None or self._index.version != version:
            self._index = _Index(version)
        if self._index.n_marks < len(self.marks):
            self._index.extend(list(self.marks.values())[self._index.n_marks:], idf)
        return self._index

    def alike(self, query: str, likeness: Likeness, limit: int = 3) -> list[tuple[str, float]]:
        """The other marked queries alike enough to ``query`` (``likeness`` is its
        :meth:`similarities`) that marks of one count for the other (most alike first, each
        worded query once)."""
        own = " ".join(query.lower().split())
        found: dict[str, tuple[str, float]] = {}
        for mark, sim in zip(self.marks.values(), likeness.sims.tolist()):
            key = " ".join(mark.query.lower().split())
            if sim >= likeness.ramp.threshold and key != own and sim > found.get(key, (None, -1.0))[1]:
                found[key] = (mark.query, sim)
        return sorted(found.values(), key=lambda qs: -qs[1])[:limit]

    # -- the stage ----------------------------------------------------------------------------

    def apply(self, ranking: Ranking, slot_of: dict[int, int], likeness: Likeness, now: float | None = None) -> Ranking:
        """``ranking`` with marked items moved (and marked items not among its candidates added);
        unchanged when no mark is like the query (``likeness`` is its :meth:`similarities`).
        Notes per moved slot go to ``extras["taught"]``."""
        if not self.marks:
            return ranking
        sims = likeness.sims
        strength = likeness.strength()
        if not strength.any():
            return ranking
        same = self.params.same.strength(sims)
        standing = _standing(ranking)
        now = time.time() if now is None else now
        marks = list(self.marks.values())
        used: dict[int, list[tuple[float, float, int]]] = {}  # item -> (weight, sameness, mark)
        ignored: dict[int, list[tuple[float, int]]] = {}
        for n in np.flatnonzero(strength).tolist():
            mark = marks[n]
            decay = 0.5 ** (max(0.0, now - mark.at) // DAY / self.params.half_life_days)
            for item in mark.used:
                used.setdefault(item, []).append((float(strength[n]) * decay, float(same[n]), n))
            if same[n] > 0:
                for item in mark.ignored:
                    ignored.setdefault(item, []).append((float(same[n]) * decay, n))
        shifts: dict[int, tuple[float, MarkNote]] = {}
        for item in set(used) | set(ignored):
            if item not in slot_of:
                continue  # deleted since it was marked
            fit = standing.get(slot_of[item], 0.0) ** self.params.standing_power
            votes_up = [(w * max(fit, sameness), n) for w, sameness, n in used.get(item, [])]
            up = math.log2(1 + sum(w for w, _ in votes_up))
            down = self.params.ignored_share * math.log2(1 + sum(w for w, _ in ignored.get(item, [])))
            lift = up - down
            if lift == 0:
                continue
            votes = votes_up if lift > 0 else ignored[item]
            best = max(votes, key=lambda v: (v[0], v[1]))[1]
            shifts[slot_of[item]] = (lift, MarkNote(marks[best].query, float(sims[best]), len(votes), lift, lift > 0,
                                                  marks[best].event_id))
        return _shifted(ranking, shifts, self.params.margin) if shifts else ranking


def _standing(ranking: Ranking) -> dict[int, float]:
    """Each candidate's place in the strategy's list as a share of its score range: 1 for the
    best, 0 for the worst (and for an item the strategy did not find)."""
    scores = ranking.scores.astype(np.float64)
    if not len(scores):
        return {}
    floor, span = float(scores.min()), float(scores.max() - scores.min())
    rel = (scores - floor) / span if span > 0 else np.ones(len(scores))
    return dict(zip(ranking.slots.tolist(), rel.tolist()))


def _shifted(ranking: Ranking, shifts: dict[int, tuple[float, MarkNote]], margin: float) -> Ranking:
    """A new ranking with each shifted slot moved by lift × (score range + margin), re-sorted."""

    slots, scores = ranking.slots, ranking.scores.astype(np.float64)
    moved = np.array(sorted(shifts), dtype=np.int64)
    present = set(slots.tolist())
    fresh = np.array([s for s in moved.tolist() if s not in present], dtype=np.int64)
    floor = float(scores.min()) if len(scores) else 0.0
    span = (float(scores.max()) - floor if len(scores) else 0.0) or 1.0
    slots = np.concatenate([slots, fresh])
    scores = np.concatenate([scores, np.full(len(fresh), floor)])
    at = np.minimum(np.searchsorted(moved, slots), len(moved) - 1)
    lift = np.where(moved[at] == slots, np.array([shifts[s][0] for s in moved.tolist()])[at], 0.0)
    scores = scores + lift * span * (1 + margin)
    order = np.lexsort((slots, -scores))
    pad = np.zeros(len(fresh))
    features = {name: np.concatenate([values, pad])[order] for name, values in ranking.features.items()}
    features["feedback"] = lift[order]
    found = dict(ranking.found_by)
    for s in fresh.tolist():
        found[s] = ["feedback"]
    extras = {**ranking.extras, "taught": {s: note for s, (_, note) in shifts.items()},
              "added": set(fresh.tolist())}
    return Ranking(slots[order], scores[order], found, features, extras)
