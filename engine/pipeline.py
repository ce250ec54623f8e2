"""The records of the query pipeline (see :mod:`engine.recall`), in a module of their own so that
the areas, the facade and the app can name them without importing the pipeline itself.

``Query`` (the text analysed once) → ``Signals`` (one score per slot from each scorer, computed
lazily, at most once) → a strategy's ``Ranking`` (candidate slots, best first, with features) →
``Hit``\\ s in a ``Recall``.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, TypedDict

import numpy as np

from .lexical import top_k as top_k_of
from .records import Item

if TYPE_CHECKING:  # the areas' records, named in annotations only: the pipeline imports no area
    from .knowledge.records import Episode, Fact, GraphReport
    from .topics.intents import IntentReport
    from .topics.navigate import WalkStep

MODES = ("lite", "pro", "max")  # lite: episodes + facts; pro: + the hits; max: + backfill from their episodes


class QueryOptions(TypedDict, total=False):
    """What a recall may ask beyond its text, strategy and mode (the topic walk reads the first
    three; a memory without topics accepts and ignores them)."""

    intent: str | None  # steer the walk by this intent (engine.topics.intents); None: infer it
    seed: int | None  # sample the walk with this seed instead of walking greedily (same seed, same walk)
    trace: bool  # report the walk's steps and intent even when the strategy does not walk
    as_of: str | None  # answer as of this date (engine.as_of): what was said by then, the facts that held then


QUERY_OPTIONS = frozenset(QueryOptions.__annotations__)


@dataclass
class Query:
    text: str
    term_ids: np.ndarray
    term_weights: np.ndarray
    top_k: int
    strategy: str
    mode: str = "pro"
    options: QueryOptions = field(default_factory=QueryOptions)
    notes: dict[str, Any] = field(default_factory=dict)  # per-query results areas share (e.g. the topic walk)
    answer: str | None = None  # the kind of answer it asks for, from its plan (engine/query.py's answer_type)


Signal = Callable[[Query, "Signals"], np.ndarray]
"""A scorer: one score per slot for a query; it may read other signals through ``Signals``."""


class Signals:
    """Per-query cache: each signal is computed at most once, and only if asked for."""

    def __init__(self, q: Query, scorers: Mapping[str, Signal]) -> None:
        self.q = q
        self.scorers = scorers
        self._values: dict[str, np.ndarray] = {}
        self.timings: dict[str, float] = {}
        # per signal whose scorer knows it: the slots (ascending) outside which its score is 0,
        # so that its best are found among them instead of in a pass over every slot
        self.supports: dict[str, np.ndarray] = {}
        self._tops: dict[str, tuple[int, np.ndarray]] = {}  # per signal, the widest top asked: (k, slots)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._values:
            started = time.perf_counter()
            self._values[name] = self.scorers[name](self.q, self)
            self.timings[name + "_ms"] = (time.perf_counter() - started) * 1000
        return self._values[name]

    def top(self, name: str, k: int) -> np.ndarray:
        """Slots of the ``k`` best positive scores of a signal, best first. After a wider top of the
        same signal, its first ``k`` when no tie straddles the ``k``-th place (then they are the
        same slots in the same order) instead of another pass over the scores."""
        scores = self[name]
        wider, slots = self._tops.get(name, (0, None))
        if slots is not None and k <= wider:
            if k >= len(slots) or scores[slots[k - 1]] > scores[slots[k]]:
                return slots[:k]
        top = top_k_of(scores, k, among=self.supports.get(name))[0]
        if k > wider:
            self._tops[name] = (k, top)
        return top


class RankingExtras(TypedDict, total=False):
    """What a strategy or a rerank passes on beside the ranking itself."""

    graph: GraphReport  # the strategy walked the knowledge graph (shown with the recall)
    taught: dict[int, MarkNote]  # by slot: why the feedback memory moved it
    added: set[int]  # slots the feedback memory brought in (no strategy scored them)
    answered: dict[int, tuple[int, dict[str, float]]]  # by slot: the question's item and what it lent (AnswerNote)
    conflicts: dict[int, "ConflictNote"]  # by slot: the open conflict of the inbox its fact is a side of


@dataclass
class Ranking:
    """Candidate slots, best first, with their scores and per-signal features."""

    slots: np.ndarray
    scores: np.ndarray
    found_by: dict[int, list[str]] = field(default_factory=dict)
    features: dict[str, np.ndarray] = field(default_factory=dict)  # each aligned with ``slots``
    extras: RankingExtras = field(default_factory=RankingExtras)


Strategy = Callable[[Query, Signals], Ranking]
"""Turns signals into a ranking; its docstring's first paragraph is what ``strategies()`` shows."""


@dataclass
class MarkNote:
    """Why a hit moved: the most alike query it was marked for, and how."""

    query: str  # the marked query most like this one
    similarity: float
    marks: int  # events that marked the item used (or ignored, when ``lift`` < 0) for queries like this one
    lift: float  # the shift, in units of the list's score range (negative: sank)
    used: bool  # marked used (True) or shown and ignored (False)
    event: int = 0  # the feedback event of that query: withdrawing it undoes the strongest mark
    into_view: bool = False  # an alike question's marks brought it into the hits shown, and no higher
    shared: int = 0  # that question's shown hits this query found too, when they (not the likeness alone) moved it
    held: str = ""  # not moved (``lift`` 0): why that alike question's mark left it where the list has it

    def describe(self) -> str:
        what = "marked used" if self.used else "shown and ignored"
        query = self.query if len(self.query) <= 40 else self.query[:39].rstrip() + "…"
        view = ", brought into view" if self.into_view else ""
        shared = f", {self.shared} of its hits found here too" if self.shared else ""
        held = f": not moved, {self.held}" if self.held else ""
        return (f"{what} for {query!r} (similarity {self.similarity:.2f}{shared}, "
                f"{self.marks} mark{'s' * (self.marks != 1)}{view}){held}")

    def to_dict(self) -> dict[str, object]:
        return {"query": self.query, "similarity": round(self.similarity, 4), "marks": self.marks,
                "lift": round(self.lift, 4), "used": self.used, "event": self.event, "into_view": self.into_view,
                "shared": self.shared, "held": self.held}


@dataclass
class AnswerNote:
    """Why an answer ranked on words it does not hold: it answers another speaker's question,
    and ``fused`` read that question's scores for it where they were higher — its ``bm25`` and
    ``words``, as ``neighbour_bm25`` the BM25 of the turn the question follows up, and as
    ``signal_answer`` its BM25 when the answer holds the kind asked for, a time for "when"
    (engine.rank.features.answered_question, asked_about, _answer_lent)."""

    question_id: int  # the item that asks
    question: str  # its text
    lent: dict[str, float]  # each feature lent through the question → the answer's own lower value, replaced

    def describe(self) -> str:
        question = self.question if len(self.question) <= 40 else self.question[:39].rstrip() + "…"
        own = ", ".join(f"{name} {value:.2f}" for name, value in self.lent.items())
        return f"{' and '.join(self.lent)} through the question it answers, {question!r} (its own: {own})"

    def to_dict(self) -> dict[str, object]:
        return {"question_id": self.question_id, "question": self.question,
                "lent": {name: round(value, 4) for name, value in self.lent.items()}}


@dataclass
class ConflictNote:
    """A hit states one side of a clash in the conflict inbox that nobody has settled: for a
    question about now, the newer claim comes first (engine.knowledge.claims), and a person
    reading it should know that the store has not decided it replaces the other."""

    conflict: int  # the conflict's id in the inbox
    slot: str  # the single-valued slot both facts state ("home")
    fact: str  # the fact this hit states
    other: str  # the fact on the other side
    newer: bool  # this hit's fact is the later claim

    def describe(self) -> str:
        side = "the newer claim" if self.newer else "the older claim"
        return (f"{side} of open conflict #{self.conflict} ({self.slot}), not decided yet: {self.fact!r} against "
                f"{self.other!r}")

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class Hit:
    item: Item
    score: float
    rank: int
    sources: list[str]  # the signals that found this item among their candidates
    features: dict[str, float] = field(default_factory=dict)
    taught: MarkNote | None = None  # marked for this query or one like it (engine.rank.marks)
    answers: AnswerNote | None = None  # ranked by the words of the question it answers as well
    conflict: ConflictNote | None = None  # states a side of an open clash of the inbox

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self.item)
        return {"id": self.item.id, "rank": self.rank, "score": self.score, "sources": self.sources,
                "features": self.features, "item": d, "taught": self.taught.to_dict() if self.taught else None,
                "answers": self.answers.to_dict() if self.answers else None,
                "conflict": self.conflict.to_dict() if self.conflict else None}


@dataclass
class Recall:
    query: str
    strategy: str
    top_k: int
    hits: list[Hit]
    mode: str = "pro"
    as_of: str | None = None  # the date it was asked as of (engine.as_of's ISO form: what was said by then); None: now
    facts: list[Fact] = field(default_factory=list)
    episodes: list[Episode] = field(default_factory=list)
    intent: IntentReport | None = None
    trace: list[WalkStep] = field(default_factory=list)
    graph: GraphReport | None = None  # the knowledge graph's seeds and the nodes reached, when a strategy walked it
    token: str | None = None
    lam: float | None = None  # the ranker's λ: the learned model's share of a fused score (None: no ranker)
    weights: dict[str, float] = field(default_factory=dict)  # the ranker's heuristic weight of each feature
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query": self.query, "strategy": self.strategy, "mode": self.mode, "top_k": self.top_k, "as_of": self.as_of,
            "hits": [h.to_dict() for h in self.hits], "facts": [f.to_dict() for f in self.facts],
            "episodes": [e.to_dict() for e in self.episodes], "intent": self.intent,
            "trace": [s.to_dict() for s in self.trace], "graph": self.graph, "token": self.token,
            "timings": self.timings,
        }
