"""One feature vector per candidate, and a normaliser noise cannot swing.

Candidates come from every signal of the memory (BM25, dense, and whatever graph or topic signals
other areas add: :meth:`engine.area.Area.signals`), plus the conversational neighbours of the
strongest lexical hits. Each candidate then gets a fixed-order vector of features:

* *static* features depend only on the store and the query (scores relative to the query's
  best, rank discounts, RRF, neighbour strength, recency, speaker / title overlap, kind, length,
  the bundled word space's likeness);
* *learned* features come from feedback (trust, use count, how well the query matches the
  queries an item was used for, co-access PageRank, the answer-likeness prior of
  :mod:`engine.rank.prior`) and are zero on a store nobody taught.

Scores are made relative within the query (divided by the query's best), so every feature
lives in [0, 1] by construction. The :class:`Normaliser` the MLP reads through adds running
statistics, but floors each feature's spread at a fixed share of its natural range: a feature
that barely varies stays barely varying instead of being blown up to ±8σ.
"""

from __future__ import annotations

import copy
import functools
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..arrays import distinct, positions
from ..as_of import period_after
from ..lexical import top_k
from ..query import ANSWER_WORDS, asks_now, name_words
from ..recall import answer_holders, dense_at, words_at
from ..text import nickname_of, words

if TYPE_CHECKING:
    from ..area import Engine
    from ..index import Index
    from ..pipeline import Query, Signals

CORE_SIGNALS = ("bm25", "dense")
SCANNED_SIGNALS = ("bm25",)  # core signals whose own top candidates are read from every slot
STATIC = ("bm25", "bm25_rank", "dense", "dense_rank", "rrf", "neighbour_bm25", "neighbour_dense",
          "recency", "present_recency", "speaker", "title_hit", "kind_turn", "kind_note", "length", "words")
LEARNED = ("trust", "uses", "feedback_match", "coaccess", "answer_prior")
NEIGHBOUR_SEEDS = 20  # the strongest lexical hits whose neighbours become candidates
SPREAD_FLOOR = 0.1  # a feature's spread is never taken as less than this share of [0, 1]
SHORT_QUESTION = 10  # indexed words, the speaker's name one of them ("And the cat?": 2)
SESSION_GAP = 3600.0  # seconds: two stamped turns this close are of one session (sessions stamped once lie days apart)


def feature_names(extra_signals: tuple[str, ...]) -> tuple[str, ...]:
    """The fixed order of the feature vector for a store with these extra signals."""
    return STATIC + tuple(f"signal_{name}" for name in extra_signals) + LEARNED


@dataclass
class CandidateFeatures:
    """The candidates of one query and their feature matrix (rows aligned with ``slots``)."""

    slots: np.ndarray
    names: tuple[str, ...]
    matrix: np.ndarray
    found_by: dict[int, list[str]] = field(default_factory=dict)
    answered: dict[int, tuple[int, dict[str, float]]] = field(default_factory=dict)  # by slot: features._lending

    def column(self, name: str) -> np.ndarray:
        return self.matrix[:, self.names.index(name)]

    def as_dict(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        return {name: self.matrix[rows, n] for n, name in enumerate(self.names)}


class SlotMeta:
    """Per-slot facts the index does not keep, read once per item (at ingest, or from the rows at
    a load): speaker, title and its words, text length, kind, whether the text asks, exclaims,
    asks the listener for something or asks after the listener's news."""

    def __init__(self) -> None:
        self.speaker = np.zeros(0, dtype=np.int64)  # index into ``speakers``, -1 for none
        self.length = np.zeros(0, dtype=np.float64)  # log-scaled text length in [0, 1]
        self.is_turn = np.zeros(0, dtype=bool)
        self.is_note = np.zeros(0, dtype=bool)
        self.title = np.zeros(0, dtype=np.int64)  # index into ``titles``: passages under one title belong together
        self.question = np.zeros(0, dtype=bool)  # the text asks (has a question mark): the answer prior, answered_question
        self.exclamation = np.zeros(0, dtype=bool)
        self.request = np.zeros(0, dtype=bool)  # the text asks the listener for something (engine.text.asks_listener)
        self.about_listener = np.zeros(0, dtype=bool)  # it asks after the listener's news (engine.text.about_listener)
        self.title_words: dict[int, frozenset[str]] = {}
        self._title_id: dict[str, int] = {}
        self.speakers: list[str] = []
        self._speaker_words: list[frozenset[str]] = []  # each speaker's name's words, matched against every query
        self._speaker_id: dict[str, int] = {}
        self._time_span: tuple[weakref.ref[Index], int, int, tuple[float, float] | None] | None = None
        self._newest_before: tuple[weakref.ref[Index], int, int, dict[float, float | None]] | None = None

    def add(self, slots: np.ndarray, rows: list[tuple[str | None, str, int, str, bool, bool, bool, bool]]) -> None:
        """Record (speaker, title, text length, kind, whether the text asks, whether it exclaims,
        whether it asks the listener for something, whether it asks after the listener's news) for
        newly indexed slots."""
        if not len(slots):
            return
        need = int(slots.max()) + 1
        if need > len(self.speaker):  # room for twice as many: growing per batch would cost O(store) each time
            self._grow(self, max(need, 2 * len(self.speaker)) - len(self.speaker))
        speakers, titles, lengths, kinds, asks, exclaims, requests, about_listener = zip(*rows)
        for speaker in dict.fromkeys(speakers):  # each new name numbered in the order first seen
            if speaker:
                self._speaker_index(speaker)
        self.speaker[slots] = [self._speaker_id[s.casefold()] if s else -1 for s in speakers]
        self.length[slots] = np.minimum(1.0, np.log1p(np.array(lengths, dtype=np.float64)) / np.log1p(2000))
        kinds = np.array(kinds, dtype=object)
        self.is_turn[slots] = kinds == "turn"
        self.is_note[slots] = kinds == "note"
        self.title[slots] = [self._title_id.setdefault(t or "", len(self._title_id)) for t in titles]
        self.question[slots] = np.array(asks, dtype=bool)
        self.exclamation[slots] = np.array(exclaims, dtype=bool)
        self.request[slots] = np.array(requests, dtype=bool)
        self.about_listener[slots] = np.array(about_listener, dtype=bool)
        title_words = {t: frozenset(words(t)) for t in dict.fromkeys(titles) if t}  # one set per title, shared by its passages
        self.title_words.update((slot, title_words[t]) for slot, t in zip(slots.tolist(), titles) if t)

    SLOT_ARRAYS = ("speaker", "length", "is_turn", "is_note", "title", "question", "exclamation", "request",
                   "about_listener")

    def covering(self, n_slots: int) -> "SlotMeta":
        """These features, or when they hold fewer than ``n_slots`` slots a copy that gives the
        rest none (no speaker, no length): a recall on one thread may find the slots of items
        another process added before the thread taking them in has added their features here."""
        if len(self.speaker) >= n_slots:
            return self
        meta = copy.copy(self)
        self._grow(meta, n_slots - len(self.speaker))
        return meta

    def _grow(self, into: "SlotMeta", grow: int) -> None:
        """Set ``into``'s per-slot arrays to these with ``grow`` slots more, of no features (no
        speaker, the first title)."""
        for name in self.SLOT_ARRAYS:
            column = getattr(self, name)
            setattr(into, name, np.concatenate([column, np.full(grow, -1 if name == "speaker" else 0, dtype=column.dtype)]))

    def arrays(self, n_slots: int) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
        """The per-slot arrays of the first ``n_slots`` slots (views), and the speakers and titles
        by number, for :meth:`restore`."""
        return ({name: getattr(self, name)[:n_slots] for name in self.SLOT_ARRAYS},
                {"speakers": list(self.speakers), "titles": list(self._title_id)})

    @classmethod
    def restore(cls, arrays: dict[str, np.ndarray], names: dict[str, list[str]]) -> "SlotMeta":
        """The features :meth:`arrays` gave (the arrays adopted; each title's words found once)."""
        meta = cls()
        columns = [arrays[name] for name in cls.SLOT_ARRAYS]
        speakers, titles = names["speakers"], names["titles"]
        if len({len(c) for c in columns}) != 1 or not all(isinstance(x, str) for x in [*speakers, *titles]):
            raise ValueError("saved slot features do not fit together")
        if len(columns[0]) and (columns[0].max() >= len(speakers) or columns[4].max() >= len(titles) or columns[4].min() < 0):
            raise ValueError("saved slot features name speakers or titles that are not saved")
        for name, column in zip(cls.SLOT_ARRAYS, columns):
            setattr(meta, name, column)
        for speaker in speakers:
            meta._speaker_index(speaker)
        meta._title_id = dict(zip(titles, range(len(titles))))
        title_words = [frozenset(words(t)) if t else None for t in titles]
        has_words = np.array([w is not None for w in title_words] + [False], dtype=bool)
        titled = np.flatnonzero(has_words[meta.title])
        meta.title_words = dict(zip(titled.tolist(), (title_words[t] for t in meta.title[titled].tolist())))
        return meta

    def _speaker_index(self, speaker: str) -> int:
        key = speaker.casefold()
        if key not in self._speaker_id:
            self._speaker_id[key] = len(self.speakers)
            self.speakers.append(key)
            self._speaker_words.append(frozenset(words(key)))
        return self._speaker_id[key]

    def named_speakers(self, text: str) -> tuple[np.ndarray, frozenset[str]]:
        """The speakers a query names, and the words of it that name them: a word of their name,
        or a short form of their first name written as a name ("Where does Gen work now?" names
        Genevieve when no other speaker's name starts so: :func:`engine.text.nickname_of`).
        People call each other so, and a question asked in their words does too."""
        query_words = set(words(text))
        named = {n for n, spoken in enumerate(self._speaker_words) if spoken & query_words}
        naming = set().union(*(self._speaker_words[n] for n in named)) & query_words
        for short in name_words(text) - naming:
            if (person := nickname_of(short, self.speakers)) is not None:
                named.add(self._speaker_id[person])
                naming.add(short)
        return np.array(sorted(named), dtype=np.int64), frozenset(naming)

    def live_time_span(self, index: Index) -> tuple[float, float] | None:
        """The oldest and newest time of the live items (None when fewer than two differ): the
        recency feature's clock. Kept while ``index`` holds the same slots and live items — slots
        are only appended and a removed slot never lives again, so those two counts say when the
        live times changed — instead of a pass over every slot per query."""
        held = self._time_span
        if held is None or held[0]() is not index or held[1:3] != (index.n_slots, index.n_items):
            times = index.times[index.alive]
            times = times[~np.isnan(times)]
            span = (float(times.min()), float(times.max())) if len(times) and times.max() != times.min() else None
            held = self._time_span = (weakref.ref(index), index.n_slots, index.n_items, span)
        return held[3]


    def newest_before(self, index: Index, before: float) -> float | None:
        """The newest time of the live items said before ``before`` (None: none is dated): the
        recency feature's now, as of a date. Kept as :meth:`live_time_span` is, per date asked."""
        held = self._newest_before
        if held is None or held[0]() is not index or held[1:3] != (index.n_slots, index.n_items):
            held = self._newest_before = (weakref.ref(index), index.n_slots, index.n_items, {})
        if before not in held[3]:
            if len(held[3]) >= 64:  # as of many dates: not one entry per date ever asked
                held[3].clear()
            times = index.times[index.alive]
            said = times[times < before]  # NaN (undated) compares false: left out
            held[3][before] = float(said.max()) if len(said) else None
        return held[3][before]


LearnedColumns = Callable[[np.ndarray, "Query", np.ndarray], dict[str, np.ndarray]]


def _relative(values: np.ndarray) -> np.ndarray:
    """Scores divided by the query's best positive score, clipped to [0, 1]."""
    best = values.max() if len(values) else 0.0
    return np.clip(values / best, 0.0, 1.0) if best > 0 else np.zeros_like(values)


def _positions(ranked: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Rank (from 0) of each of ``slots`` in a signal's ranked list (distinct slots), -1 for
    slots not in it."""
    if not len(ranked):
        return np.full(len(slots), -1, dtype=np.int64)
    order = np.argsort(ranked, kind="stable")
    listed = ranked[order]
    at = np.minimum(np.searchsorted(listed, slots), len(listed) - 1)
    return np.where(listed[at] == slots, order[at], -1)


def _rank_discount(pos: np.ndarray) -> np.ndarray:
    """1 / log2(2 + rank) for candidates in a signal's ranked list, 0 for the others."""
    return np.where(pos >= 0, 1.0 / np.log2(2 + np.maximum(pos, 0)), 0.0)


def neighbours(mem: "Engine", meta: SlotMeta, slots: np.ndarray, reach: int = 1) -> np.ndarray:
    """(len(slots), 2·reach) neighbour slots, -1 where none: adjacent items of the same source,
    session (time) and title — turns of one session, chunks of one section, never two
    unrelated passages that merely sit side by side in a corpus file. One session: the same time
    (a transcript's session is stamped once), or times within :data:`SESSION_GAP` (a chat
    export stamps each message: equal times alone made none of its turns neighbours)."""
    index = mem.index
    n = index.n_slots
    offsets = np.array([d for k in range(1, reach + 1) for d in (-k, k)], dtype=np.int64)
    cand = slots[:, None] + offsets[None, :]
    inside = (cand >= 0) & (cand < n)
    safe = np.where(inside, cand, 0)
    same = (inside & index.alive[safe] & (index.source_ids[safe] == index.source_ids[slots][:, None])
            & (np.abs(index.positions[safe] - index.positions[slots][:, None]) == np.abs(offsets)[None, :]))
    times, own = index.times[safe], index.times[slots][:, None]
    same &= (np.abs(times - own) <= SESSION_GAP) | (np.isnan(times) & np.isnan(own))
    same &= meta.title[safe] == meta.title[slots][:, None]
    return np.where(same, cand, -1)


def _neighbour_max(at: Callable[[np.ndarray], np.ndarray], best: float, nb: np.ndarray) -> np.ndarray:
    """The best relative score (:func:`_relative_to`) among each row's neighbours ``nb``
    (-1: none, counted as 0); ``at`` reads the signal at slots."""
    if not nb.shape[1]:
        return np.zeros(len(nb))
    present = nb >= 0
    return np.where(present, _relative_to(at(np.where(present, nb, 0)), best), 0.0).max(axis=1)


@dataclass
class Candidates:
    """What :func:`candidates` found for one query: the slots (ascending), which signals found
    each, each signal's ranked slots, the slots' neighbours and the dense signal read at both."""

    slots: np.ndarray
    found: dict[int, list[str]]
    ranked: dict[str, np.ndarray]
    neighbours: np.ndarray
    dense: "Gathered"


def candidates(mem: "Engine", meta: SlotMeta, q: "Query", signals: "Signals", depth: int,
               extra_signals: tuple[str, ...]) -> Candidates:
    """Candidate slots: every scanned signal's top ``depth`` ∪ neighbours of the best lexical
    hits, and the best ``depth`` of those by the dense signal (:func:`dense_among`)."""
    found: dict[int, list[str]] = {}
    ranked: dict[str, np.ndarray] = {}
    for name in SCANNED_SIGNALS + extra_signals:
        ranked[name] = signals.top(name, depth)
        for s in ranked[name].tolist():
            found.setdefault(s, []).append(name)
    seeds = ranked["bm25"][:NEIGHBOUR_SEEDS]
    for s in neighbours(mem, meta, seeds, reach=1).ravel().tolist():
        if s >= 0:
            found.setdefault(s, []).append("neighbour")
    slots = np.sort(np.fromiter(found.keys(), dtype=np.int64, count=len(found)))
    nb = neighbours(mem, meta, slots, reach=1)
    dense = dense_among(mem, q, slots, nb)
    ranked["dense"] = slots[top_k(dense.at(slots), depth)[0]]
    for s in ranked["dense"].tolist():
        found[s].append("dense")
    return Candidates(slots, found, ranked, nb, dense)


@dataclass
class Gathered:
    """A signal's scores at some slots (ascending), read where needed instead of over every slot."""

    slots: np.ndarray
    values: np.ndarray

    def at(self, slots: np.ndarray) -> np.ndarray:
        """The scores of ``slots`` (each one of :attr:`slots`; any other reads a neighbour's)."""
        return self.values[np.minimum(np.searchsorted(self.slots, slots), len(self.slots) - 1)]


def dense_among(mem: "Engine", q: "Query", slots: np.ndarray, nb: np.ndarray) -> Gathered:
    """The dense signal at ``slots`` and their neighbours ``nb`` (a row gather, exact).

    The dense side of ``fused`` re-scores what the other signals found instead of scanning every
    vector for candidates of its own: a scan grows with the store (the largest part of a fused
    recall past 100k items), and its own candidates moved no quality figure (docs/benchmarks.md)."""
    wanted = distinct(np.concatenate([slots, nb[nb >= 0]]))
    return Gathered(wanted, dense_at(mem, q, wanted))


def build(mem: "Engine", q: "Query", signals: "Signals", meta: SlotMeta, learned: LearnedColumns,
          depth: int, extra_signals: tuple[str, ...], rrf_k: float) -> CandidateFeatures:
    """Candidates of ``q`` with their feature matrix, in :func:`feature_names` order.

    Every feature is read at the candidates and their neighbours only (gathers), never computed
    over every slot: the cost follows the candidates, not the store."""
    cands = candidates(mem, meta, q, signals, depth, extra_signals)
    slots, found, ranked, nb, dense = cands.slots, cands.found, cands.ranked, cands.neighbours, cands.dense
    names = feature_names(extra_signals)
    out = np.zeros((len(slots), len(names)))
    if not len(slots):
        return CandidateFeatures(slots, names, out, found)
    col = {name: n for n, name in enumerate(names)}
    turn = meta.is_turn[slots]  # a turn's neighbours carry its conversation; a passage's do not (measured)
    best_of = {}
    for name, at in (("bm25", signals["bm25"].__getitem__), ("dense", dense.at)):
        best = best_of[name] = float(at(ranked[name][:1])[0]) if len(ranked[name]) else 0.0
        out[:, col[name]] = _relative_to(at(slots), best)
        out[:, col[f"neighbour_{name}"]] = _neighbour_max(at, best, nb) * turn
    asked = answered_question(meta, slots, nb)
    lexical = signals["bm25"].__getitem__
    own = {"bm25": out[:, col["bm25"]].copy(), "words": np.zeros(len(slots)),
           "neighbour_bm25": out[:, col["neighbour_bm25"]].copy()}
    lent = {"bm25": _relative_to(_lent(lexical, asked), best_of["bm25"]), "words": np.zeros(len(slots)),
            "neighbour_bm25": _relative_to(_lent(lexical, asked_about(mem, meta, asked)), best_of["bm25"]) * turn}
    speakers, naming = meta.named_speakers(q.text)
    if turn.any():  # turns only: on passages the word space cost the multi-hop sets more than it gave (measured)
        # without the named speakers' names: they are the speaker feature's to match, and in the word
        # space a name is near every other ("Daniel" near "Nora"), so a question naming a speaker was
        # alike to any turn or question naming anyone
        meaning = functools.partial(words_at, mem, q, without=naming)
        own_words, lent_words = meaning(slots[turn]), _lent(meaning, asked[turn])
        best = max(float(np.maximum(own_words, lent_words).max()), 0.0)
        own["words"][turn], lent["words"][turn] = _relative_to(own_words, best), _relative_to(lent_words, best)
    for name in own:
        out[:, col[name]] = np.maximum(own[name], lent[name])
    pos = {name: _positions(ranked[name], slots) for name in CORE_SIGNALS}
    out[:, col["bm25_rank"]] = _rank_discount(pos["bm25"])
    out[:, col["dense_rank"]] = _rank_discount(pos["dense"])
    rrf = sum(np.where(p >= 0, 1.0 / (rrf_k + 1 + p), 0.0) for p in pos.values())
    out[:, col["rrf"]] = _relative(rrf)
    out[:, col["recency"]] = _recency(mem, meta, slots, q.options.get("as_of"))
    if asks_now(q.text):  # what holds now: of two turns alike, the newer is likelier the answer
        out[:, col["present_recency"]] = out[:, col["recency"]]
    qwords = set(words(q.text))
    holds = holding_answer(mem, q, slots)
    if len(speakers):
        said = (meta.speaker[slots][:, None] == speakers).any(axis=1)
        out[:, col["speaker"]] = said & ~asks_after_others(mem, meta, slots, holds)
    if meta.title_words:
        out[:, col["title_hit"]] = [len(meta.title_words.get(s, frozenset()) & qwords) / max(len(qwords), 1)
                                    for s in slots.tolist()]
    out[:, col["kind_turn"]] = meta.is_turn[slots]
    out[:, col["kind_note"]] = meta.is_note[slots]
    out[:, col["length"]] = meta.length[slots]
    for name in extra_signals:
        out[:, col[f"signal_{name}"]] = _relative(np.maximum(signals[name][slots], 0.0))
    if "answer" in extra_signals:  # an answer holding the kind asked for, by its question's words too
        own["signal_answer"], lent["signal_answer"] = _answer_lent(signals, slots, asked, holds)
        out[:, col["signal_answer"]] = np.maximum(own["signal_answer"], lent["signal_answer"])
    for name, values in learned(slots, q, out[:, col["rrf"]]).items():
        out[:, col[name]] = values
    return CandidateFeatures(slots, names, out, found, _lending(mem, slots, asked, own, lent))


def holding_answer(mem: "Engine", q: "Query", slots: np.ndarray) -> np.ndarray:
    """Whether each of ``slots`` holds an answer of the kind ``q`` asks for (none when it asks for
    no particular kind): read once per recall, for the speaker feature and the answer signal."""
    if q.answer not in ANSWER_WORDS:
        return np.zeros(len(slots), dtype=bool)
    return positions(answer_holders(mem.index, q.answer), slots)[1]


def asks_after_others(mem: "Engine", meta: SlotMeta, slots: np.ndarray, holds: np.ndarray) -> np.ndarray:
    """Whether each of ``slots`` asks after someone else's news rather than telling its speaker's,
    and holds no answer of the kind the question asks for (``holds``: :func:`holding_answer`).

    A turn said by someone the question names is likelier about them (the ``speaker`` feature),
    but not a question of theirs that asks in at most :data:`SHORT_QUESTION` indexed words ("And
    the cat?": its few words, the speaker's name among them, score high where longer turns dilute
    them), nor a longer one about the listener that says nothing of its speaker ("Maya! How's
    life in Portland? Still working those brutal night shifts?" asks about Maya's work, not
    Daniel's: the slots' ``about_listener``, read at ingest). A turn that asks and holds a time
    tells of something when ("Guess what I did? Dyed my hair last week!" answers "When did Nate
    dye his hair?"): for a question asking a time it counts. So does a request to the listener
    ("Can you go back to answering in English?": the slots' ``request``): it asks for no news, it
    says what the speaker wants."""
    short = meta.question[slots] & ~meta.request[slots] & (mem.index.bm25.lengths_at(slots) <= SHORT_QUESTION)
    return (short | meta.about_listener[slots]) & ~holds


def answered_question(meta: SlotMeta, slots: np.ndarray, nb: np.ndarray) -> np.ndarray:
    """For each of ``slots``, the turn it answers (-1 for none): the turn just before it in the
    same session (``nb``'s first column, :func:`neighbours`), when that turn asks (a question
    mark) and another speaker said it.

    An answer often shares no word with a later question about it ("They did it on February
    9th" after "So the new knee works?"): the words are in the question it answers, which the
    other speaker asked. So the answer is found by its question's words as well as its own."""
    before = nb[:, 0] if nb.shape[1] else np.full(len(slots), -1, dtype=np.int64)
    at = np.maximum(before, 0)
    speaker = meta.speaker[slots]
    answers = (before >= 0) & meta.is_turn[slots] & meta.question[at] & (speaker >= 0) & (meta.speaker[at] != speaker)
    return np.where(answers, before, -1)


def asked_about(mem: "Engine", meta: SlotMeta, asked: np.ndarray) -> np.ndarray:
    """For each question (``asked``, :func:`answered_question`; -1 for none), the turn just before
    it in its session (-1 for none): what a follow-up question asks about.

    "What kind?" after "I adopted a dog named Pepper" holds no word of "What did Maya adopt?",
    nor does its answer ("A border collie mix"): the turn the question follows up does. The
    answer takes that turn's BM25 as a neighbour's, two turns away through the question."""
    out = np.full(len(asked), -1, dtype=np.int64)
    asking = asked >= 0
    if asking.any():
        out[asking] = neighbours(mem, meta, asked[asking], reach=1)[:, 0]
    return out


def _lending(mem: "Engine", slots: np.ndarray, asked: np.ndarray, own: dict[str, np.ndarray],
             lent: dict[str, np.ndarray]) -> dict[int, tuple[int, dict[str, float]]]:
    """By slot, for the candidates whose question lent a higher value than their own: the
    question's item and each such feature's own value — what the why-view says of the answer
    (:class:`engine.pipeline.AnswerNote`)."""
    higher = {name: lent[name] > own[name] for name in own}
    rows = np.flatnonzero(np.logical_or.reduce(list(higher.values())))
    questions = mem.index.item_ids[asked[rows]].tolist()
    return {int(slots[r]): (int(question), {name: float(own[name][r]) for name in own if higher[name][r]})
            for r, question in zip(rows.tolist(), questions)}


def _lent(at: Callable[[np.ndarray], np.ndarray], asked: np.ndarray) -> np.ndarray:
    """A signal's score (``at`` reads it at slots) of the question each row answers (``asked``,
    :func:`answered_question`), 0 for none."""
    out = np.zeros(len(asked))
    answering = asked >= 0
    if answering.any():
        out[answering] = at(asked[answering])
    return out


def _answer_lent(signals: "Signals", slots: np.ndarray, asked: np.ndarray,
                 holds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The answer signal of ``slots`` relative to their best (their own), and on the same scale,
    for those that hold the kind of answer the question asks for (``holds``,
    :func:`holding_answer`), the BM25 of the question each answers (``asked``,
    :func:`answered_question`; lent).

    "I've had them for 3 years now" holds the time "How long has Nate had his turtles?" asks
    for, but no word of it: "How long have you had them?", which it answers, does. The answer
    signal (BM25 of the items holding such an answer) reads it through that question, as BM25
    does."""
    own = np.maximum(signals["answer"][slots], 0.0)
    best = float(own.max()) if len(own) else 0.0
    return _relative_to(own, best), _relative_to(_lent(signals["bm25"].__getitem__, np.where(holds, asked, -1)), best)


def _relative_to(values: np.ndarray, best: float) -> np.ndarray:
    """Scores divided by ``best``, clipped to [0, 1] (0 when ``best`` is not positive)."""
    return np.clip(values / best, 0.0, 1.0) if best > 0 else np.zeros(np.shape(values))


def _recency(mem: "Engine", meta: SlotMeta, slots: np.ndarray, as_of: str | None) -> np.ndarray:
    """How recent each item is (0.5 when unknown): 1 for the newest item said by the recall's now,
    less by its age in units of the store's whole span (the store's oldest item 0 at the store's now).

    Now is the store's own newest item, never the wall clock, so a recall is repeatable; as of a
    date, the newest item said by then. The unit of age stays the store's whole span: the same two
    turns a month apart differ as much as of last June as today. A candidate said after that date
    is newer than 1 (the one feature above 1; it leaves the hits: :func:`engine.as_of.said_by`), so
    every candidate keeps its place against the others as the store's clock gives it, for what
    reranks them before that. Measured against the span up to that date instead, an earlier date
    stretched the differences, and ``present_recency``, whose weight was read on the store's span,
    ranked newer turns over current evidence (docs/benchmarks.md, session 18)."""
    span = meta.live_time_span(mem.index)
    if span is None:
        return np.full(len(slots), 0.5)
    oldest, newest = span
    now = newest if as_of is None else meta.newest_before(mem.index, period_after(as_of))
    if now is None:
        return np.full(len(slots), 0.5)
    t = mem.index.times[slots]
    return np.where(np.isnan(t), 0.5, 1.0 - (now - t) / (newest - oldest))


class Normaliser:
    """Running mean and spread per feature, updated on feedback only (never on recall).

    The spread is floored at :data:`SPREAD_FLOOR`: every feature lives in [0, 1], so a feature
    whose values differ by 0.004 moves the normalised value by at most 0.04, not by ±8σ.
    """

    def __init__(self, n_features: int, mean: np.ndarray | None = None, var: np.ndarray | None = None,
                 count: float = 0.0) -> None:
        self.mean = np.zeros(n_features) if mean is None else mean
        self.var = np.full(n_features, SPREAD_FLOOR ** 2) if var is None else var
        self.count = count

    def update(self, rows: np.ndarray, rate_floor: float = 1 / 5000) -> None:
        for row in rows:
            self.count += 1
            rate = max(1.0 / self.count, rate_floor)
            delta = row - self.mean
            self.mean = self.mean + rate * delta
            self.var = (1 - rate) * (self.var + rate * delta * delta)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / np.sqrt(np.maximum(self.var, SPREAD_FLOOR ** 2))
