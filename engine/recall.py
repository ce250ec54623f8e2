"""The query pipeline: text in, a :class:`Recall` out. It reads top to bottom.

1. ``prepare_query`` — the text checked and analysed once: term ids, weights (a :class:`Query`).
2. signals        — every scorer gives one score per slot, computed lazily and at most once per
                    query (:class:`Signals`): the core's ``bm25`` and ``dense``, and what each
                    area adds (:meth:`engine.area.Area.signals`).
3. strategies     — a strategy turns signals into a :class:`Ranking` of candidate slots with the
                    per-signal features that explain each one: the core's ``bm25``, ``dense`` and
                    ``hybrid``, and what each area adds (:meth:`engine.area.Area.strategies`);
                    then an area may move that ranking (:meth:`engine.area.Area.rerank`: the
                    ranker's feedback memory moves what people marked for this query or one like it);
                    with ``as_of``, the items said after that date leave it (:mod:`engine.as_of`).
4. ``assemble``   — the top slots become hits with their items.
5. completion     — each area adds what it knows to the result (facts, the walk, a feedback token).

The pipeline names no area: an area that is not there adds nothing, so a strategy is offered
exactly when it can run. Recall is read-only: nothing here writes to the store or changes what
the next recall returns.
"""

from __future__ import annotations

import functools
import time
import weakref
from typing import TYPE_CHECKING, Callable, Concatenate, ParamSpec, Sequence, TypeVar, Unpack

import numpy as np

from .arrays import distinct
from .as_of import parse_as_of, said_by
from .errors import RecallError, quoted
from .pipeline import (MODES, QUERY_OPTIONS, AnswerNote, Hit, Query, QueryOptions, Ranking, Recall, Signal, Signals,
                       Strategy)
from .text import words

if TYPE_CHECKING:
    from .area import Area, Engine
    from .index import Index
    from .records import Item
    from .vectors import VectorIndex

P = ParamSpec("P")
R = TypeVar("R")


# -- 1. the query -----------------------------------------------------------------------------


def prepare_query(mem: Engine, areas: Sequence[Area], text: str, top_k: int, strategy: str, mode: str,
                  **options: Unpack[QueryOptions]) -> Query:
    if not isinstance(text, str) or not text.strip():
        raise RecallError("the query is empty")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a command line's bytes that are not UTF-8 arrive as lone surrogates
        raise RecallError(f"the query is not text: it holds an unpaired surrogate (U+{ord(text[exc.start]):04X}),"
                          " as bytes that are not UTF-8 become on a command line") from None
    limit = mem.settings.max_query_chars
    if len(text) > limit:
        raise RecallError(f"the query is {len(text):,} characters long; the limit is {limit:,}")
    offered = strategies(mem, areas)
    if strategy not in offered:
        why = next((u[strategy] for area in areas if strategy in (u := area.unavailable())), None)
        if why:
            raise RecallError(f"strategy {quoted(strategy)} is not available on this store: {why}")
        raise RecallError(f"unknown strategy {quoted(strategy)}; choose one of: {', '.join(sorted(offered))}")
    if top_k < 1:
        raise RecallError("top_k must be at least 1")
    if mode not in MODES:
        raise RecallError(f"unknown mode {quoted(mode)}; choose one of: {', '.join(MODES)}")
    if unknown := sorted(set(options) - QUERY_OPTIONS):
        raise RecallError(f"unknown recall option {quoted(unknown[0])}; choose from: {', '.join(sorted(QUERY_OPTIONS))}")
    options["as_of"] = parse_as_of(options.get("as_of"))
    planned = mem.index.plan(text)
    term_ids, weights = mem.index.terms_of(planned)
    q = Query(text=text, term_ids=term_ids, term_weights=weights, top_k=top_k, strategy=strategy, mode=mode,
              options=options, answer=planned.answer_type)
    for area in areas:
        area.check_query(q)
    return q


# -- 2. signals -------------------------------------------------------------------------------


def bm25_signal(mem: Engine, q: Query, signals: Signals) -> np.ndarray:
    """BM25 of every slot."""
    return mem.index.bm25.scores(q.term_ids, q.term_weights)


def literal_bm25(mem: Engine, q: Query) -> np.ndarray:
    """BM25 of the query's own words, without the related words the lexicon adds (engine/query.py):
    the ``ppr`` strategy ranks by it, its settings being tuned on the multi-hop questions, which
    use the corpus's own words (docs/benchmarks.md)."""
    if "bm25_literal" not in q.notes:
        q.notes["bm25_literal"] = mem.index.bm25.scores(*mem.index.query_terms(q.text, related=False))
    return q.notes["bm25_literal"]


def dense_signal(mem: Engine, q: Query, signals: Signals) -> np.ndarray:
    """Cosine to the query under the configured dense embedder (0 where it cannot score)."""
    index = mem.index
    out = np.zeros(index.n_slots, dtype=np.float64)
    vec, matrix = _dense_query(mem, q)
    if vec is None or matrix is None:
        return out
    scores = matrix.scores(vec)
    out[: len(scores)] = scores
    out[~index.alive] = 0.0
    return out


def dense_at(mem: Engine, q: Query, slots: np.ndarray) -> np.ndarray:
    """The dense signal for ``slots`` only: a gather of their rows instead of a scan of all."""
    vec, matrix = _dense_query(mem, q)
    if vec is None or matrix is None:
        return np.zeros(len(slots))
    return matrix.scores_at(slots, vec).astype(np.float64)


def _dense_query(mem: Engine, q: Query) -> tuple[np.ndarray | None, VectorIndex | None]:
    """The query vector and its matrix, made once per query (an endpoint is paid once)."""
    if "dense_query" not in q.notes:
        q.notes["dense_query"] = mem.dense_query(q)
    return q.notes["dense_query"]


def query_embedding(mem: Engine, q: Query) -> np.ndarray | None:
    """The query's vector from the configured embedding endpoint (None without one), made once
    per query: the dense signal's own when that endpoint is the dense embedder. It may raise
    :class:`engine.errors.EmbeddingUnavailable`."""
    embedder = mem.external_embedder
    if embedder is None:
        return None
    if mem.settings.embedder == "openai":
        return _dense_query(mem, q)[0]
    if "endpoint_query" not in q.notes:
        q.notes["endpoint_query"] = embedder.embed_query(q.text)
    return q.notes["endpoint_query"]


def answer_signal(mem: Engine, q: Query, signals: Signals) -> np.ndarray:
    """BM25 of the items holding an answer of the kind the question asks for ("when": a time), 0
    elsewhere and for every item when the question asks for no particular kind (engine/query.py).
    Only those items can score: they are the signal's support."""
    from .query import ANSWER_WORDS

    lexical = signals["bm25"]
    out = np.zeros_like(lexical)
    kind = q.answer
    holders = answer_holders(mem.index, kind) if kind in ANSWER_WORDS else np.zeros(0, dtype=np.int64)
    holders = holders[: np.searchsorted(holders, len(lexical))]  # read after the BM25 scores: none newer
    out[holders] = lexical[holders]
    signals.supports["answer"] = holders
    return out


_ANSWER_HOLDERS: weakref.WeakKeyDictionary[Index, tuple[tuple[int, int], dict[str, np.ndarray]]] = weakref.WeakKeyDictionary()


def answer_holders(index: Index, kind: str) -> np.ndarray:
    """The slots (ascending) whose items hold an answer of ``kind`` (engine/query.py's answer
    words), kept while ``index`` holds the same slots and live items: slots are only appended
    and a removed one never lives again, so those two counts say when it changes. Read per
    question, the answer words' postings (every date word's) made a pass that grows with the store."""
    from .query import holds_answer

    state = (index.n_slots, index.n_items)
    held = _ANSWER_HOLDERS.get(index)
    if held is None or held[0] != state:
        held = _ANSWER_HOLDERS[index] = (state, {})
    if kind not in held[1]:
        held[1][kind] = np.flatnonzero(holds_answer(kind, index.vocab, index.bm25.scores))
    return held[1][kind]


def signals(mem: Engine, areas: Sequence[Area]) -> dict[str, Signal]:
    """Every scorer of this memory by name: the core's, then each area's, then ``answer`` (last, so
    the ranker's feature order stays that of the areas' signals first)."""
    out: dict[str, Signal] = {"bm25": _bound(bm25_signal, mem), "dense": _bound(dense_signal, mem)}
    for area in areas:
        out.update(area.signals())
    out["answer"] = _bound(answer_signal, mem)
    return out


# -- 3. strategies ----------------------------------------------------------------------------


def single_signal(mem: Engine, name: str) -> Strategy:
    def strategy(q: Query, signals: Signals) -> Ranking:
        slots = signals.top(name, max(q.top_k, mem.settings.candidate_k))
        scores = signals[name][slots]
        return Ranking(slots, scores, {int(s): [name] for s in slots}, {name: scores})

    strategy.__doc__ = f"Rank by the {name} signal alone."
    return strategy


def linear_fuse(slots: np.ndarray, bm25: np.ndarray, dense: np.ndarray, dense_weight: float,
                words: np.ndarray | None = None, words_weight: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Score fusion of candidates: (1 − w) · BM25 / max BM25 + w · cosine, and with ``words`` (the
    word-vector cosine) (1 − v) · that + v · words; (slots, scores) best first.

    Unlike RRF it keeps how far apart the BM25 scores are, so a weak dense signal can only
    reorder near-ties instead of promoting its own rank-1 over a clear lexical winner.
    """
    top = bm25.max() if len(bm25) else 0.0
    lexical = bm25 / top if top > 0 else np.zeros(len(bm25))
    scores = (1.0 - dense_weight) * lexical + dense_weight * np.maximum(dense, 0.0)
    if words is not None:
        scores = (1.0 - words_weight) * scores + words_weight * np.maximum(words, 0.0)
    keep = scores > 0
    slots, scores = slots[keep], scores[keep]
    order = np.lexsort((slots, -scores))
    return slots[order], scores[order]


def rrf_fuse(lists: dict[str, np.ndarray], weights: dict[str, float], k: float) -> tuple[np.ndarray, np.ndarray, dict[int, list[str]], dict[str, dict[int, int]]]:
    """Reciprocal rank fusion: score = Σ weight / (k + rank), rank from 1.

    Returns (slots best first, fused scores, which lists found each slot, rank of each slot per list).
    """
    fused: dict[int, float] = {}
    found: dict[int, list[str]] = {}
    ranks: dict[str, dict[int, int]] = {}
    for name, slots in lists.items():
        w = weights.get(name, 1.0)
        ranks[name] = {}
        for rank, slot in enumerate(slots.tolist(), 1):
            fused[slot] = fused.get(slot, 0.0) + w / (k + rank)
            found.setdefault(slot, []).append(name)
            ranks[name][slot] = rank
    if not fused:
        return np.zeros(0, dtype=np.int64), np.zeros(0), found, ranks
    slots = np.fromiter(fused.keys(), dtype=np.int64, count=len(fused))
    scores = np.fromiter(fused.values(), dtype=np.float64, count=len(fused))
    order = np.lexsort((slots, -scores))
    return slots[order], scores[order], found, ranks


def _found_by(slots: np.ndarray, lists: dict[str, np.ndarray]) -> dict[int, list[str]]:
    """Which candidate lists hold each of ``slots``."""
    found: dict[int, list[str]] = {}
    for name, listed in lists.items():
        for slot in listed.tolist():
            found.setdefault(slot, []).append(name)
    return {slot: found[slot] for slot in slots.tolist()}


DENSE_PROPOSES = 0.2  # a dense signal that earned at least this weight brings its own candidates too


def hybrid(mem: Engine, q: Query, signals: Signals) -> Ranking:
    """BM25 and dense candidates fused by score (``fusion = "linear"``) or by rank (``"rrf"``).

    The dense side is weighted by ``mem.dense_weight()``; docs/benchmarks.md shows why the
    store's own LSA earns a small one. With linear fusion and at least ``top_k`` BM25 candidates,
    a weak dense signal only re-scores those candidates (a row gather): on every benchmark that
    ranks exactly as adding the dense scan's own candidates, at a fraction of its cost
    (docs/benchmarks.md). A dense signal that earned a larger weight (a calibrated embedding
    model) also proposes its own. Without an embedding model, the bundled word vectors
    (engine/wordvec.py) are a second dense side with candidates of their own, weighted by
    ``word_vectors_weight``: they know words the store never uses.
    """
    s = mem.settings
    depth = max(q.top_k, s.candidate_k)
    lists = {"bm25": signals.top("bm25", depth)}
    if s.fusion == "rrf" or len(lists["bm25"]) < q.top_k or mem.dense_weight() >= DENSE_PROPOSES:
        lists["dense"] = signals.top("dense", depth)
    word = word_query(mem, q) if s.fusion == "linear" else None
    if word is not None:
        lists["words"] = word[1].top(word[0], depth)
    words = None
    if s.fusion == "rrf":
        slots, scores, found, _ = rrf_fuse(lists, {"bm25": 1.0, "dense": mem.dense_weight()}, s.rrf_k)
        dense = dense_at(mem, q, slots)
    else:
        union = distinct(np.concatenate(list(lists.values())))
        dense_of_union = dense_at(mem, q, union)
        words_of_union = None if word is None else word[1].scores_at(union, word[0])
        slots, scores = linear_fuse(union, signals["bm25"][union], dense_of_union, mem.dense_weight(),
                                    words_of_union, s.word_vectors_weight)
        at = np.searchsorted(union, slots)
        dense = dense_of_union[at]
        words = None if words_of_union is None else words_of_union[at]
        found = _found_by(slots, lists)
    features = {"bm25": signals["bm25"][slots], "dense": dense, "fused": scores}
    if words is not None:
        features["words"] = words
    return Ranking(slots, scores, found, features)


def word_query(mem: Engine, q: Query, without: frozenset[str] = frozenset()) -> tuple[np.ndarray, VectorIndex] | None:
    """The query's vector in the bundled word-vector space (engine/wordvec.py) and the items'
    rows there, made once per query (and per ``without``: words of it left out, as long as
    another is left); None with an embedding endpoint (the model knows words itself, its weight
    is calibrated), with ``word_vectors_weight`` 0 (the space is off), or when too few of the
    query's words have a vector (a Korean query)."""
    s = mem.settings
    if s.embedder == "openai" or s.word_vectors_weight <= 0:
        return None
    note = "word_query" + "".join(f" -{w}" for w in sorted(without))
    if note not in q.notes:
        kept = [w for w in words(q.text) if w not in without]
        vector, rows = mem.index.word_query(" ".join(kept) if without and kept else q.text)
        q.notes[note] = None if vector is None else (vector, rows)
    return q.notes[note]


def words_at(mem: Engine, q: Query, slots: np.ndarray, without: frozenset[str] = frozenset()) -> np.ndarray:
    """The bundled word-space cosine of ``slots`` to the query, ``without`` those of its words
    (:func:`word_query`; a row gather; 0 where it gives no vector)."""
    word = word_query(mem, q, without)
    if word is None:
        return np.zeros(len(slots))
    return word[1].scores_at(slots, word[0]).astype(np.float64)


CORE_STRATEGIES = ("bm25", "dense", "hybrid")


def strategies(mem: Engine, areas: Sequence[Area]) -> dict[str, Strategy]:
    """Every strategy this memory can run, by name: the core's (``CORE_STRATEGIES``), then each area's."""
    out: dict[str, Strategy] = {"bm25": single_signal(mem, "bm25"), "dense": single_signal(mem, "dense"),
                                "hybrid": _bound(hybrid, mem)}
    for area in areas:
        out.update(area.strategies())
    return out


def describe(strategy: Strategy) -> str:
    """What a strategy does: its docstring's first paragraph, on one line."""
    return " ".join((strategy.__doc__ or "").strip().split("\n\n")[0].split())


# -- 4. assembly ------------------------------------------------------------------------------


def assemble(mem: Engine, q: Query, ranking: Ranking) -> list[Hit]:
    chosen = ranking.slots[: q.top_k]
    ids = [int(i) for i in mem.index.item_ids[chosen]]
    answered = {slot: lent for slot in chosen.tolist() if (lent := ranking.extras.get("answered", {}).get(slot))}
    items = mem.store.items(ids + [question for question, _ in answered.values()])
    taught = ranking.extras.get("taught", {})
    conflicts = ranking.extras.get("conflicts", {})
    columns = {name: values[: len(chosen)].astype(np.float64).tolist() for name, values in ranking.features.items()}
    scores = ranking.scores[: len(chosen)].astype(np.float64).tolist()
    hits = []
    for n, (slot, item_id) in enumerate(zip(chosen.tolist(), ids)):
        item = items.get(item_id)
        if item is None:
            continue
        features = {name: values[n] for name, values in columns.items()}
        hits.append(Hit(item=item, score=scores[n], rank=len(hits) + 1, sources=ranking.found_by.get(slot, []),
                        features=features, taught=taught.get(slot), answers=_answer_note(answered.get(slot), items),
                        conflict=conflicts.get(slot)))
    return hits


def _answer_note(lent: tuple[int, dict[str, float]] | None, items: dict[int, Item]) -> AnswerNote | None:
    """What the question a hit answers lent it (``Ranking.extras["answered"]``), with its text."""
    if lent is None or lent[0] not in items:
        return None
    return AnswerNote(question_id=lent[0], question=items[lent[0]].text, lent=lent[1])


# -- the whole pipeline -----------------------------------------------------------------------


def recall(mem: Engine, areas: Sequence[Area], text: str, *, top_k: int = 10, strategy: str = "hybrid",
           mode: str = "pro", **options: Unpack[QueryOptions]) -> Recall:
    started = time.perf_counter()
    q = prepare_query(mem, areas, text, top_k, strategy, mode, **options)
    scored = Signals(q, signals(mem, areas))
    ranking = strategies(mem, areas)[strategy](q, scored)
    for area in areas:  # e.g. what people marked for this query or one like it (engine.rank.marks)
        ranking = area.rerank(q, ranking)
    ranking = said_by(mem.store, mem.index, ranking, q.options["as_of"])  # as of a date: only what was said by then
    ranked = time.perf_counter()
    hits = assemble(mem, q, ranking)
    result = Recall(query=text, strategy=strategy, mode=mode, top_k=top_k, hits=hits, as_of=q.options["as_of"])
    for area in areas:  # the walk's intent and steps, facts and episodes (by mode), a feedback token
        area.complete(q, ranking, hits, result)
    result.timings = {**scored.timings, "rank_ms": (ranked - started) * 1000,
                      "fetch_ms": (time.perf_counter() - ranked) * 1000,
                      "total_ms": (time.perf_counter() - started) * 1000}
    return result


def _bound(function: Callable[Concatenate[Engine, P], R], mem: Engine) -> Callable[P, R]:
    """``function`` with the memory bound as its first argument, keeping its name and docstring."""
    return functools.update_wrapper(functools.partial(function, mem), function)
