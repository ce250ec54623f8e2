"""``RankerArea`` (``mem.ranker``): the fused strategy's scorer, the feedback memory,
recall tokens, feedback and its undo, and the ranker's status, reset and export.

Recall writes nothing. Its token is signed and carries what feedback needs (:mod:`.tokens`); the
feedback memory (:mod:`.marks`) and the learned state (:mod:`.state`) are read from the store
when the ranker loads and change only on feedback, undo or reset.

Feedback is one write transaction that checks and writes: the token must not be in the log yet
(a unique index backs that up), and if another process taught the ranker since this one loaded
(the store's ranker generation moved), the learned state is reloaded from the store, inside the
transaction, before this event's update is computed from it. So two processes never both accept
one token, and never lose each other's SGD steps. The transaction holds the event (with the
shown features, so everything learned can be rebuilt from the log), trust, co-access edges,
pruning, the state blob with its checksum, and the new generation; memory changes only after the
commit. An undo marks its event withdrawn and rebuilds trust, edges, model, prior and gate from
the rest of the log, in one transaction.

A state blob that fails its checksum, or a feedback log that cannot be read, is reported by
:meth:`status`, and recall falls back to the heuristic (and, for a bad log, to no feedback
memory); records are never touched. A state made for another feature set (a new signal since)
is learned again from the log at its first use, or before any write of the state, and written
once (:meth:`_relearned`); the log's own rows stay as they were shown.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from ..area import Area
from ..array_file import ArrayFile
from ..errors import EmbeddingUnavailable, FeedbackError, StoreBusy, StoreReadOnly, some_of
from ..ingest import IngestError
from ..pipeline import Hit, Query, Ranking, Recall, Signals, Strategy
from ..recall import query_embedding
from ..records import RankerCounts, RankerStats
from ..text import about_listener, asks_listener
from ..store.ranker import CorruptFeedback, FeedbackRow
from . import distill as distillation
from . import features as feats
from . import portable, tokens
from .feedback import FeedbackParams, FeedbackState
from .gate import GateParams, GateReading, is_held_out, query_key, referee
from .heuristic import score as heuristic_score
from .heuristic import weights_for
from .marks import AlikeRule, Asked, Endpoint, FeedbackMemory, Likeness, MarkPlan, Wording
from .mlp import MLPParams, PairwiseMLP
from .prior import STYLE, AnswerPrior, DescribedSlots, Descriptors, descriptors
from .state import CurvePoint, LearnedState, PairBuffer, StateMismatch, unblob

if TYPE_CHECKING:
    from ..area import Engine
    from ..vectors import VectorIndex
    from ..records import Item, Source

log = logging.getLogger(__name__)
# The model's starting weights on the learned features: used before for a similar query, used
# often, trusted, used together with the other candidates. Only the gate decides if they count.
LEARNED_PRIOR = {"feedback_match": 0.6, "trust": 0.3, "uses": 0.05, "coaccess": 0.1, "answer_prior": 0.3}
META_BLOCK = 20_000  # new items whose slot features are made at a time (on_indexed)


@dataclass
class FeedbackResult:
    event_id: int
    used: list[int]
    ignored: list[int]
    pairs_trained: int
    pairs_held_out: int
    gate: GateReading
    edges_strengthened: int
    edges_pruned: int
    ms: float


@dataclass
class UndoResult:
    event_id: int
    changed: bool  # False: the event was already withdrawn, and nothing changed
    query: str  # "" for an event removed as it could not be read
    withdrawn_at: float
    gate: GateReading
    removed: str = ""  # why the event could not be read: its row was deleted, not marked withdrawn
    still_unreadable: str = ""  # after a removal, another event that cannot be read (recall still uses no feedback)


@dataclass
class RankerStatus:
    lam: float
    events: int
    train_pairs: int
    held_out_pairs: int
    gate: GateReading
    model_steps: int
    coaccess_edges: int
    trusted_items: int
    features: list[str]
    heuristic: dict[str, float]
    state: str  # "heuristic" | "learning" | "blended" | "reset: <why>" | "no feedback: <why>"
    marks: int = 0  # feedback events the feedback memory consults at recall
    curve: list[CurvePoint] = field(default_factory=list)
    relearning: bool = False  # relearning in the background (:meth:`RankerArea.warm_up`): the rest changes at its end
    log_unreadable: bool = False  # a feedback event cannot be read: recall uses no feedback (``state`` says which)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["gate"] = self.gate.to_dict()
        return d


@dataclass
class EventEffect:
    """What one feedback event does at recall: the items it raises and lowers, for its own query
    and for queries alike it (the taught queries it also counts for are named)."""

    event: FeedbackRow
    raised: list[Item]  # marked used, still in the store
    lowered: list[Item]  # shown and ignored, still in the store
    alike: list[tuple[str, float]]  # other taught queries its marks count for, with their similarity
    # the questions never taught for which its marked items come into view (the corroboration
    # rule, :attr:`.marks.AlikeRule.shared`), in words; "" when none can
    untaught: str = ""

    @property
    def withdrawn(self) -> bool:
        return self.event.withdrawn_at is not None


class RankerArea(Area):
    name = "ranker"
    # 2: the slots' ``request``; a file of layout 1 may also lack the punctuation of slots its
    # writer loaded from the store (before every load read it): read from the store again.
    # 3: their ``about_listener``
    saved_format = 3

    def __init__(self, mem: Engine) -> None:
        super().__init__(mem)
        s = mem.settings
        self.mlp_params = MLPParams()
        self.gate_params = GateParams()
        self.feedback_state = FeedbackState(FeedbackParams(
            trust_half_life_days=s.trust_half_life_days, edge_half_life_days=s.coaccess_half_life_days))
        self.meta = feats.SlotMeta()
        self.marks = FeedbackMemory()
        self._described: DescribedSlots | None = None  # the answer prior's descriptors, by slot
        # Held while they are read and added to: the relearning thread replays the prior while
        # recalls describe their candidates, and two adds at once gave some slots another
        # slot's entries, read by every later recall (a stress run of session 17: answer_prior
        # of three candidates −0.50 against a fresh open's −0.81).
        self._describing = threading.Lock()
        self.state_problem = ""
        self.relearned = ""  # what the last load relearned after the feature set changed (:meth:`_relearned`)
        self._relearn: tuple[list[FeedbackRow], tuple[str, ...]] | None = None  # the log and the stored names, to relearn
        self._relearning = threading.Lock()
        self._loading = threading.Lock()  # one load of the learned state at a time (:meth:`_load_learning`)
        self._aside: threading.Thread | None = None  # a relearning started by :meth:`warm_up`
        self.log_corrupt = False
        self._endpoint_failed = False  # the embedding endpoint failed the marks, and that was logged
        self.generation = -1  # the store's ranker generation this process's learned state is from
        self._distilled: distillation.Distilled | None = None

    # -- the area's hooks ----------------------------------------------------------------------

    def load(self) -> None:
        meta = feats.SlotMeta()
        meta.add(*self._slot_rows(self.mem.store.item_meta_rows()))
        self._put_meta(meta)
        self._load_rest()

    def _load_rest(self) -> None:
        """What a load reads besides the slot features: the feature names, the token key, what
        was learned from feedback, the distilled space."""
        store = self.mem.store
        self.names = feats.feature_names(self.extra_signals())
        self.key = tokens.TokenKey(store.token_key(), self.mem.settings.token_ttl_hours * 3600)
        self._load_learning()
        self._distilled = distillation.load(self.mem)

    def saved(self) -> ArrayFile:
        """The per-slot features (every item's row read at a load), with the item ids of the
        slots: a restore adopts them only when the index has the same slots."""
        n = self.mem.index.n_slots
        arrays, names = self.meta.arrays(n)
        return ArrayFile(names, {**arrays, "item_ids": self.mem.index.item_ids[:n]})

    def restore(self, saved: ArrayFile) -> None:
        index, slot_ids = self.mem.index, saved.arrays["item_ids"]
        if len(slot_ids) > len(index.item_ids) or not np.array_equal(slot_ids, index.item_ids[: len(slot_ids)]):
            raise ValueError("saved for other slots")
        speakers, titles = saved.meta["speakers"], saved.meta["titles"]
        if not isinstance(speakers, list) or not isinstance(titles, list):
            raise ValueError("saved speakers or titles are not lists")
        self._put_meta(feats.SlotMeta.restore(saved.arrays, {"speakers": speakers, "titles": titles}))
        self._load_rest()

    def _put_meta(self, meta: feats.SlotMeta) -> None:
        """Put slot features built aside in place whole, and the answer prior's descriptors made
        from the old ones aside with them. Another process's feedback reloads this area while
        recalls and the relearning thread read the features: emptied and filled again in place,
        a recall meanwhile read them half built (an IndexError, or descriptors kept wrong)."""
        with self._describing:
            self.meta = meta
            self._described = None

    def _load_learning(self) -> None:
        """Trust, edges, the feedback memory and the learned state, as the store holds them now.

        Two threads may load at once (the warm-up's relearning finds the store moved while a
        recall takes in the same commit), and recalls read the state meanwhile: so one load runs
        at a time, and the feedback state and the marks are built aside and put in place whole.
        Filled in place, a load's used-for counts went into the other's fresh state, and
        feedback_match read them; a recall found only the marks read so far."""
        with self._loading:
            self._load_learning_now()

    def _load_learning_now(self) -> None:
        store = self.mem.store
        self.generation = store.ranker_generation()
        self.relearned = ""
        self.log_corrupt = False
        state = FeedbackState(self.feedback_state.params)
        try:
            events = store.feedback_events()
        except CorruptFeedback as exc:
            self.log_corrupt = True
            state.load([], [], 0.0)
            self.feedback_state = state
            self.marks.clear()
            self.learned = self._fresh_state()
            self.state_problem = (f"no feedback: the feedback log is corrupt ({exc}); recall uses no feedback, "
                                  f"records are untouched; `mnemoscope feedback undo {exc.event_id}` removes that event"
                                  " and keeps the others, `mnemoscope ranker reset` forgets them all")
            log.warning("%s: %s", self.mem.path, self.state_problem)
            return
        state.load(store.trust_rows(), store.coaccess_edges(), events[-1].created_at if events else 0.0)
        marks = []
        for event in events:
            plan = self._plan(event.query)
            state.add_query(event.used, event.query, plan)
            marks.append((event.id, event.query, event.created_at, event.shown, event.used, event.ignored, plan))
        self.feedback_state = state
        self.marks.refill(marks)  # the marks' query vectors stay: a query already embedded is not embedded again
        try:
            model, reading, curve, prior = self._load_state()
        except StateMismatch as exc:
            # relearned at the first use of the state, once every area is loaded: describing the
            # events' hits again reads every signal, which a load of this area cannot
            self._learned, self._relearn = self._fresh_state(), (events, exc.stored)
            return
        recent = events[-self.mlp_params.buffer:]
        described = store.described_feedback(self.names) if any(tuple(e.names) != self.names for e in recent) else {}
        train, held = self._buffers(recent, described)
        self.learned = LearnedState(model, reading, prior, train, held, curve)

    def warm_up(self) -> None:
        """Start a pending relearning (:meth:`_relearned`) in a thread of its own. The app's
        first query waits for its warm-up, and the relearning describes the hits of up to
        ``relearn_newest`` events again under the new features: seconds of CPU at a million items,
        once. Recall meanwhile ranks with the state it has (:attr:`_serving`); a write waits for
        it. A daemon: nobody waits for it at close (a closed store ends it with an error, logged)."""
        if self._relearn is None or (self._aside is not None and self._aside.is_alive()):
            return
        self._aside = threading.Thread(target=self._relearn_aside, name="mnemoscope-relearn", daemon=True)
        self._aside.start()

    def wait_relearned(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a relearning started by :meth:`warm_up` to end; True
        once none runs. A view that shows its end (the app's Ranker screen) waits for it here
        rather than asking :meth:`status` again and again."""
        aside = self._aside
        if aside is not None:
            aside.join(timeout)
        return not self._relearning_aside()

    def _relearn_aside(self) -> None:
        try:
            self._learned_now()
        except Exception as exc:  # the store closed under it, say: the next use tries again
            log.warning("%s: relearning the ranker from its log stopped: %s", self.mem.path, exc)

    def on_ingest(self, source: "Source", items: list["Item"]) -> None:
        """Nothing to derive at ingest: the ranker learns from feedback."""

    def on_indexed(self, items: list["Item"]) -> None:
        for lo in range(0, len(items), META_BLOCK):  # (a long source's rows are not all made at once)
            self._add_meta([(i.id, i.speaker, i.title, len(i.text), i.kind, "?" in i.text, "!" in i.text,
                             asks_listener(i.text), about_listener(i.text))
                            for i in items[lo:lo + META_BLOCK]])
        if self.distilled is not None:
            self.distilled.embed_items(self.mem, self.mem.index.slots(i.id for i in items))

    def on_changed_elsewhere(self, added: list["Item"], removed: list[int]) -> None:
        """Items another process added: their features, as after an ingest here (its deletions
        and its feedback reload this area)."""
        self.on_indexed(added)

    def on_delete(self, item_ids: list[int], dry_run: bool) -> dict[str, int]:
        """Edges and trust rows go with their items (foreign-key cascade); the answer prior is
        retrained from the feedback log as if the deleted items had never been shown."""
        report = self.mem.store.count_ranker_rows(item_ids) if item_ids else {"coaccess_edges": 0, "trust_rows": 0}
        if not dry_run and item_ids:
            self.feedback_state.forget(item_ids)
            self.marks.forget_items(set(item_ids))
            # a relearning pending rebuilds the state from the log without these items: until it
            # has, the stored state (made for another feature set) stays as it is
            if self._relearn is None and self._learned.prior.trained:
                self.learned = replace(self._learned, prior=self._replayed_prior(set(item_ids)))
                self.mem.store.set_ranker_state(self.learned.blob(self.names), time.time())
            self.generation = self.mem.store.bump_ranker_generation()
        return report

    def counts(self) -> RankerCounts:
        """What the store holds, read without loading the ranker."""
        return RankerCounts.read(self.mem.store)

    def stats(self) -> RankerStats:
        return RankerStats(self.counts().feedback_events, round(self.lam, 4))

    # -- state --------------------------------------------------------------------------------

    def extra_signals(self) -> tuple[str, ...]:
        wanted = self.mem.settings.fused_signals
        names = [n for n in self.mem.signals() if n not in feats.CORE_SIGNALS]
        if wanted != "auto":
            names = [n for n in names if n in {w.strip() for w in wanted.split(",")}]
        return tuple(names)

    def _slot_rows(self, rows: list[tuple]) -> tuple[np.ndarray, list[tuple]]:
        """The slots of the items of ``rows`` (item id first) still indexed, and their features."""
        slots = self.mem.index.slot_of.slots_of([r[0] for r in rows])
        known = np.flatnonzero(slots >= 0).tolist()
        return slots[known], [rows[n][1:] for n in known]

    def _add_meta(self, rows: list[tuple]) -> None:
        """New items' slot features, added with the lock describing holds: the index has their
        slots first, and a recall on another thread may have described them from features not
        yet here: such descriptors are not kept."""
        slots, features = self._slot_rows(rows)
        with self._describing:
            self.meta.add(slots, features)
            self._described = None

    def _descriptors(self, slots: np.ndarray) -> Descriptors:
        """The answer prior's view of these slots (distinct), each described once while the
        store holds the same items."""
        index = self.mem.index
        version = (index.n_slots, index.n_items)
        with self._describing:
            described = self._described  # a load may set it aside meanwhile: this call reads one
            if described is None or described.version != version:
                described = self._described = DescribedSlots.empty(version, index.n_slots)
            new = described.missing(slots)
            if len(new):
                described.add(new, self._describe(new))
            return described.of(slots)

    def _describe(self, slots: np.ndarray) -> Descriptors:
        """The answer prior's descriptors of these slots."""
        meta = self._meta()
        opening = meta.is_turn[slots] & (feats.neighbours(self.mem, meta, slots)[:, 0] < 0)
        return descriptors(self.mem.index.counts_matrix(slots), meta.length[slots], opening, meta.question[slots],
                           meta.exclamation[slots])

    def _meta(self) -> feats.SlotMeta:
        """The slot features as a recall reads them: of every slot the index holds (:meth:`feats.SlotMeta.covering`)."""
        return self.meta.covering(self.mem.index.n_slots)

    def _trained_prior(self, prior: AnswerPrior, shown: list[int], used: set[int]) -> AnswerPrior:
        """``prior`` after one event (items deleted since are left out)."""
        slot_of = self.mem.index.slot_of
        live = [i for i in shown if i in slot_of]
        if not live:
            return prior
        slots = np.array([slot_of[i] for i in live], dtype=np.int64)
        return prior.updated(self._descriptors(slots), np.array([i in used for i in live]))

    def _replayed_prior(self, without: set[int]) -> AnswerPrior:
        prior = AnswerPrior()
        for event in self.mem.store.feedback_events():
            prior = self._trained_prior(prior, [i for i in event.shown if i not in without], set(event.used))
        return prior

    def _fresh_model(self) -> PairwiseMLP:
        anchored = np.array([n not in feats.LEARNED for n in self.names])
        prior = np.array([LEARNED_PRIOR.get(n, 0.0) for n in self.names])
        return PairwiseMLP(len(self.names), weights_for(self.names), anchored, prior, self.mlp_params,
                           seed=self.mem.settings.ranker_seed)

    def _fresh_state(self) -> LearnedState:
        n = len(self.names)
        return LearnedState(self._fresh_model(), GateReading(), AnswerPrior(), PairBuffer(n, self.mlp_params.buffer),
                            PairBuffer(n, self.gate_params.window))

    def _load_state(self) -> tuple[PairwiseMLP, GateReading, list[CurvePoint], AnswerPrior]:
        """The stored model and prior, or fresh ones at the heuristic if the blob is missing or bad;
        :class:`.state.StateMismatch` when it was made for another feature set."""
        self.state_problem = ""
        stored = self.mem.store.ranker_state()
        fresh = (self._fresh_model(), GateReading(), [], AnswerPrior())
        if stored is None:
            return fresh
        try:
            return unblob(*stored, self.names, self.mlp_params)
        except StateMismatch:
            raise
        except (ValueError, KeyError, TypeError) as exc:
            self.state_problem = f"reset: stored ranker state is corrupt ({exc}); using the heuristic"
            log.warning("ranker state in %s is corrupt (%s); reset to the heuristic", self.mem.path, exc)
        return fresh

    def _pairs(self, query: str, shown: list[int], used: set[int],
               matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool, int]:
        """(better, worse) rows of one event, whether its query is held out for the referee, and
        the query's key (held out are whole queries, see :mod:`.gate`)."""
        good = [n for n, i in enumerate(shown) if i in used]
        bad = [n for n, i in enumerate(shown) if i not in used]
        idx = np.array([(g, b) for g in good for b in bad], dtype=np.int64).reshape(-1, 2)
        group = query_key(query)
        held = is_held_out(group, self.gate_params.holdout_every, self.mem.settings.ranker_seed)
        return matrix[idx[:, 0]], matrix[idx[:, 1]], held, group

    def _buffers(self, events: list[FeedbackRow], described: dict[int, np.ndarray]) -> tuple[PairBuffer, PairBuffer]:
        """The learner's buffers rebuilt from the feedback log (same split as when the events came);
        an event shown under another feature set counts by its rows in ``described`` (kept beside
        the log by the relearning)."""
        train = PairBuffer(len(self.names), self.mlp_params.buffer)
        held = PairBuffer(len(self.names), self.gate_params.window)
        for e in events:
            features = e.features if tuple(e.names) == self.names else described.get(e.id)
            if features is not None:
                better, worse, is_held, group = self._pairs(e.query, e.shown, set(e.used), features)
                if is_held:
                    held = held.with_added(better, worse, group)
                else:
                    train = train.with_added(better, worse, group)
        return train, held

    def _learned_after(self, state: LearnedState, event_id: int, query: str, shown: list[int], used: set[int],
                       features: np.ndarray | None, names: list[str]) -> tuple[LearnedState, int, int]:
        """The learned state after one event (``state`` is unchanged), and its (trained, held-out) pair counts."""
        prior = self._trained_prior(state.prior, shown, used)
        if features is None or tuple(names) != self.names:
            return replace(state, prior=prior), 0, 0
        better, worse, held, group = self._pairs(query, shown, used, features)
        model = PairwiseMLP.from_arrays({k: v.copy() for k, v in state.model.arrays().items()}, self.mlp_params)
        model.norm.update(features)
        train, held_out, loss = state.train, state.held_out, 0.0
        if held:
            held_out = held_out.with_added(better, worse, group)
        else:
            rng = np.random.default_rng([self.mem.settings.ranker_seed, event_id])
            loss = model.train(better, worse, rng, train.better, train.worse)
            train = train.with_added(better, worse, group)
        reading = self._referee(model, held_out)
        curve = [*state.curve, CurvePoint(event_id, reading.lam, reading.lower_bound, loss)][-1000:]
        trained = 0 if held else len(better)
        return LearnedState(model, reading, prior, train, held_out, curve), trained, len(better) - trained

    # -- ranking ------------------------------------------------------------------------------

    @property
    def learned(self) -> LearnedState:
        """What was learned from feedback (:class:`.state.LearnedState`); after a load that found
        it made for another feature set, relearned from the log here, once (:meth:`_relearned`).
        While the embedding endpoint holds the relearning up, recall and status read a fresh
        state (the next use tries again); a write never builds on it (:meth:`_writable`)."""
        return self._learned_now()

    def _learned_now(self) -> LearnedState:
        """:attr:`learned`."""
        try:
            return self._current()
        except EmbeddingUnavailable as exc:  # the dense signal asks the endpoint
            self.relearned = f"the feature set changed: relearning from the log waits for the endpoint ({exc})"
            return self._learned

    def _current(self) -> LearnedState:
        """The learned state, relearned first if it is pending; EmbeddingUnavailable while the
        endpoint holds the relearning up."""
        while (pending := self._relearn) is not None:
            with self._relearning:
                if self._relearn is pending:
                    learned = self._relearned(*pending)
                    if self._relearn is pending:  # else the store moved meanwhile (:meth:`_relearned`): again
                        self._learned, self._relearn = learned, None
        return self._learned

    def _writable(self) -> LearnedState:
        """The learned state a write builds on, relearned first: a state stored without the
        relearning would be taken for one made from the log, and the log would never teach it
        again. While the endpoint holds the relearning up, a FeedbackError (nothing written)."""
        try:
            return self._current()
        except EmbeddingUnavailable as exc:
            raise FeedbackError(_waits(exc)) from None

    @learned.setter
    def learned(self, state: LearnedState) -> None:
        self._learned, self._relearn = state, None

    @property
    def _serving(self) -> LearnedState:
        """The learned state a recall ranks with: :attr:`learned`, except while a relearning runs
        aside (:meth:`warm_up`): then the state so far (a fresh one: the heuristic floor, with the
        trust, edges and marks read from the log), not waiting for it."""
        if self._relearning_aside():
            return self._learned
        return self.learned

    def _relearning_aside(self) -> bool:
        aside = self._aside
        return self._relearn is not None and aside is not None and aside.is_alive()

    @property
    def lam(self) -> float:
        return self._serving.reading.lam

    @property
    def prior(self) -> AnswerPrior:
        return self._serving.prior

    def strategies(self) -> dict[str, Strategy]:
        return {"fused": self.rank}

    def rank(self, q: Query, signals: Signals) -> Ranking:
        """Every signal's candidates, one feature vector each, scored by the ranker (engine.rank):
        the heuristic floor, blended with the learned model once its gate opens."""
        s = self.mem.settings
        cf = feats.build(self.mem, q, signals, self._meta(), self._learned_columns,
                         max(q.top_k, s.candidate_k), self.extra_signals(), s.rrf_k)
        scores = heuristic_score(cf.matrix, cf.names)
        serving = self._serving
        lam = serving.reading.lam if cf.names == self.names else 0.0
        if lam > 0 and len(scores):
            scores = (1 - lam) * _standardise(scores) + lam * _standardise(serving.model.score(cf.matrix))
        order = np.lexsort((cf.slots, -scores))
        found = {int(k): v for k, v in cf.found_by.items()}
        return Ranking(cf.slots[order], scores[order], found, cf.as_dict(order), {"lambda": lam, "answered": cf.answered})

    def _learned_columns(self, slots: np.ndarray, q: Query, rrf: np.ndarray) -> dict[str, np.ndarray]:
        return self._learned_columns_of(self.feedback_state, self.prior, slots, q, rrf)

    def _learned_columns_of(self, state: FeedbackState, answer_prior: AnswerPrior, slots: np.ndarray, q: Query,
                            rrf: np.ndarray) -> dict[str, np.ndarray]:
        """The learned features of ``slots`` from ``state`` and ``answer_prior`` (the ranker's own
        at recall; as they were before an event, when the log is replayed under new features)."""
        index = self.mem.index
        ids = index.item_ids[slots]
        trust, uses = state.trust_and_uses(ids)
        state.follow(index.vocab, self._plan)
        match = state.feedback_match(ids, q.term_ids, index.bm25.idf, self._idf_version())
        co = state.coaccess(index.slot_of, index.n_slots, slots, rrf)[slots]
        best = co.max() if len(co) else 0.0
        prior = answer_prior.score(self._descriptors(slots)) if answer_prior.trained else np.zeros(len(slots))
        return {"trust": trust, "uses": uses, "feedback_match": match, "coaccess": co / best if best > 0 else co,
                "answer_prior": prior}

    def _described_again(self, query: str, shown: list[int], state: FeedbackState,
                         answer_prior: AnswerPrior) -> np.ndarray | None:
        """The feature rows of ``shown`` for ``query`` under the current feature set, as fused
        finds them now, with the learned features read from ``state`` and ``answer_prior``; None
        when one of them is no longer among the query's candidates."""
        s, index = self.mem.settings, self.mem.index
        planned = index.plan(query)
        term_ids, weights = index.terms_of(planned)
        q = Query(query, term_ids, weights, len(shown), "fused", answer=planned.answer_type)
        cf = feats.build(self.mem, q, Signals(q, self.mem.signals()), self._meta(),
                         functools.partial(self._learned_columns_of, state, answer_prior),
                         max(q.top_k, s.candidate_k), self.extra_signals(), s.rrf_k)
        row_of = {int(slot): n for n, slot in enumerate(cf.slots.tolist())}
        rows = [row_of.get(int(slot), -1) for slot in index.slot_of.slots_of(shown).tolist()]
        if cf.names != self.names or -1 in rows:
            return None
        return cf.matrix[rows]

    # -- the feedback memory, tokens and feedback ----------------------------------------------

    def rerank(self, q: Query, ranking: Ranking) -> Ranking:
        return self.remembered(q, ranking)

    def complete(self, q: Query, ranking: Ranking, hits: list[Hit], result: Recall) -> None:
        """A signed token for feedback on these hits (nothing is written), and how a fused score
        is made: the heuristic's weights and λ, the learned model's share."""
        result.token = self.issue_token(q, ranking, hits)
        result.lam = self.lam
        result.weights = {n: float(w) for n, w in zip(self.names, weights_for(self.names)) if w}

    def remembered(self, q: Query, ranking: Ranking) -> Ranking:
        """``ranking`` with what people marked for this query, or one like it, moved (:mod:`.marks`)."""
        if not len(self.marks):
            return ranking
        asked = Asked(q.text, dict(zip(q.term_ids.tolist(), q.term_weights.tolist())), q.answer)
        likeness = self._likeness(asked, self._wording(), lambda endpoint: query_embedding(self.mem, q))
        return self.marks.apply(ranking, self.mem.index.slot_of, likeness, shown=q.top_k)

    def _wording(self) -> Wording:
        """The store's words as the marks compare queries by them (:class:`.marks.Wording`): with
        the bundled word space whenever the settings give it weight (offline, its weight above 0),
        whatever the strategy, so a mark's likeness is the same for every strategy. It costs the
        two questions' words only: no item is placed in the word space for it (a bm25, ppr or walk
        recall never places them)."""
        s = self.mem.settings
        words = self.mem.index.word_text if s.word_vectors_weight > 0 and s.embedder != "openai" else None
        return Wording(self._idf_version(), self._token_idf, self._term_idf, self._plan, self.mem.index.vocab, words)

    def _likeness(self, asked: Asked, wording: Wording, vector_of: Callable[[Endpoint], np.ndarray | None]) -> Likeness:
        """How alike ``asked`` is to the marks' queries: by their embeddings when an embedding
        endpoint is configured (``vector_of`` gives the query's) and answers, else by their words.
        A failing endpoint is logged once until it answers again; recall goes on without it."""
        endpoint = self._endpoint()
        if endpoint is not None:
            try:
                likeness = self.marks.similarities(asked, wording, vector_of(endpoint), endpoint)
            except EmbeddingUnavailable as exc:
                if not self._endpoint_failed:
                    log.warning("%s: the feedback memory compares queries by their words: %s", self.mem.path, exc)
                self._endpoint_failed = True
            else:
                self._endpoint_failed = False
                return likeness
        return self.marks.similarities(asked, wording)

    def _endpoint(self) -> Endpoint | None:
        """The configured embedding endpoint as the marks use it (None offline). Nothing it
        returns is written to the store: recall stays read-only."""
        embedder = self.mem.external_embedder
        if embedder is None:
            return None
        return Endpoint(embedder.signature, lambda texts: embedder.embed(texts, remember=False))

    def _idf_version(self) -> tuple[int, int, int]:
        """What the store's IDF weights follow (slots, live items, words): the feedback indexes
        keep the weights they looked up while it holds."""
        index = self.mem.index
        return index.n_slots, index.n_items, len(index.vocab)

    def _token_idf(self, words: list[str]) -> np.ndarray:
        """IDF in the store of lexical tokens; a token the store has never seen counts as the rarest."""
        vocab = self.mem.index.vocab
        return self._term_idf([vocab.get(w, -1) for w in words])

    def _plan(self, text: str) -> MarkPlan:
        """The query plan (engine/query.py) as recall makes it, by term id."""
        index = self.mem.index
        return MarkPlan.of(index.plan(text), index.vocab)

    def _term_idf(self, term_ids: list[int]) -> np.ndarray:
        """IDF in the store of term ids; an unknown one (−1) counts as the rarest."""
        index = self.mem.index
        n = float(index.bm25.n_docs)
        out = np.full(len(term_ids), math.log1p((n + 0.5) / 0.5))
        ids = np.array(term_ids, dtype=np.int64)
        known = np.flatnonzero(ids >= 0)
        if len(known):
            try:
                out[known] = index.bm25.idf(ids[known])
            except IndexError:  # a term another process added, not yet in this index
                pass
        return out

    def issue_token(self, q: Query, ranking: Ranking, hits: list[Hit]) -> str | None:
        """A signed token of what this recall showed; writes nothing (see :mod:`.tokens`). It
        carries the shown features (the learner's and the referee's pairs) only when the ranker
        ordered the shown hits itself: none brought in or moved by the feedback memory
        (:meth:`_ordered_by_the_ranker`)."""
        if not self.key.key:
            return None
        shown = [h.item.id for h in hits]
        names = [n for n in self.names if n in ranking.features]
        row_of = {int(s): n for n, s in enumerate(ranking.slots.tolist())}
        rows = [row_of[self.mem.index.slot_of[i]] for i in shown]
        matrix = None
        if len(names) == len(self.names) and shown and self._ordered_by_the_ranker(ranking, ranking.slots[rows]):
            matrix = np.column_stack([ranking.features[n] for n in names])[rows]
        return tokens.issue(self.key, q.text, shown, self.names, matrix, time.time())

    @staticmethod
    def _ordered_by_the_ranker(ranking: Ranking, shown_slots: np.ndarray) -> bool:
        """Whether no shown hit was brought in or moved by the feedback memory. A moved hit is
        shown because of its marks, and the learned features (uses, trust, the feedback match)
        carry those marks: in its pairs the heuristic looks wrong and the model right, whoever
        marks it. Random feedback opened the gate that way (an item an alike question's random
        mark brought into view, then picked at random, gave the model nine held-out wins at once:
        docs/benchmarks.md). Such an event still teaches the marks, the trust and the edges."""
        moved = {slot for slot, note in ranking.extras.get("taught", {}).items() if note.lift != 0}  # not the held notes
        memory_placed = ranking.extras.get("added", set()) | moved
        return not memory_placed & set(shown_slots.tolist())

    def read_token(self, token: str, now: float | None = None) -> FeedbackRow:
        """What a token's recall showed (FeedbackError if it is not this store's, altered or expired)."""
        try:
            row = tokens.read(self.key, token, self.names, time.time() if now is None else now)
        except tokens.TokenError as exc:
            raise FeedbackError(str(exc)) from None
        return FeedbackRow(0, row.token, row.created_at, row.query, row.shown, [], [], row.names, row.features)

    def feedback(self, token: str, used_ids: list[int], ignored_ids: list[int] | None = None,
                 now: float | None = None) -> FeedbackResult:
        """Learn from one recall: ``used_ids`` helped; ``ignored_ids`` were seen and passed over
        (None: those shown above the lowest used one, :func:`passed_over`, for a person who names
        only what they used)."""
        started = time.perf_counter()
        now = time.time() if now is None else now
        if self.log_corrupt:
            raise FeedbackError(self.state_problem)
        row = self.read_token(token, now)
        self._check_ids(row, used_ids, ignored_ids or [])
        used = [i for i in row.shown if i in set(used_ids)]
        ignored = passed_over(row.shown, set(used_ids)) if ignored_ids is None else \
            [i for i in row.shown if i in set(ignored_ids)]
        store = self.mem.store
        self._writable()  # a relearning pending is done (or refused) before this write, in its own transaction
        with store.transaction():
            taken = store.event_of_token(row.token)
            if taken is not None:
                raise FeedbackError(f"this recall token was already used (feedback event {taken}); recall again")
            gone = sorted(set(row.shown) - store.existing_items(row.shown))
            if gone:  # their trust and edges could not be written: the recall's list is not the store's now
                raise FeedbackError(f"item(s) {some_of(gone)} this recall showed were deleted since; recall again")
            if store.ranker_generation() != self.generation:
                self._load_learning()  # another process taught the ranker since: build on what it stored
            changes = self.feedback_state.changes(used, ignored, now)
            event_id = store.insert_feedback(row, now, used, ignored)
            learned, n_train, n_held = self._learned_after(self._writable(), event_id, row.query, row.shown, set(used),
                                                           row.features, row.names)
            store.upsert_trust(changes.trust)
            store.upsert_edges(changes.edges)
            store.delete_edges(changes.pruned)
            store.set_ranker_state(learned.blob(self.names), now)
            self.mem.activity.record("feedback", row.query, count=len(used))
            generation = store.bump_ranker_generation()
        self.feedback_state.apply(changes, now)
        plan = self._plan(row.query)  # made once: the used-for rows and the next recall's marks both read it
        self.feedback_state.add_query(used, row.query, plan)
        self.marks.add(event_id, row.query, now, row.shown, used, ignored, plan)
        self.learned, self.generation = learned, generation
        self.state_problem = "" if n_train or n_held else self.state_problem
        return FeedbackResult(event_id, used, ignored, n_train, n_held, learned.reading, len(changes.edges),
                              len(changes.pruned), (time.perf_counter() - started) * 1000)

    def _check_ids(self, row: FeedbackRow, used_ids: list[int], ignored_ids: list[int]) -> None:
        for name, ids in (("used", used_ids), ("ignored", ignored_ids)):
            if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in ids):
                raise FeedbackError(f"{name} ids must be integers")
            stray = sorted(set(ids) - set(row.shown))
            if stray:
                raise FeedbackError(f"{name} id(s) {some_of(stray)} were not shown by this recall")
        both = sorted(set(used_ids) & set(ignored_ids))
        if both:
            raise FeedbackError(f"id(s) {some_of(both)} are both used and ignored")

    def undo(self, event_id: int, now: float | None = None) -> UndoResult:
        """Withdraw a feedback event: it stays in the log, marked, and everything learned is
        rebuilt from the other events (one transaction). Undoing it again changes nothing. An
        event whose row cannot be read is removed instead (:meth:`_remove_unreadable`)."""
        now = time.time() if now is None else now
        try:
            return self._withdraw(event_id, now)
        except CorruptFeedback as exc:
            if exc.event_id != event_id:  # another event: nothing is learned from a log with a hole in it
                raise FeedbackError(str(exc)) from None
            why = str(exc)
        return self._remove_unreadable(event_id, why, now)

    def _withdraw(self, event_id: int, now: float) -> UndoResult:
        store = self.mem.store
        with store.transaction():
            event = store.feedback_event(event_id)
            if event is None:
                raise FeedbackError(f"no feedback event {event_id} (`mnemoscope feedback list` shows them)")
            if event.withdrawn_at is not None:
                return UndoResult(event_id, False, event.query, event.withdrawn_at, self.learned.reading)
            store.withdraw_feedback(event_id, now)
            state, learned = self._replay_and_write(store.feedback_events(), now)
            self.mem.activity.record("feedback.withdrawn", event.query, count=1)
            generation = store.bump_ranker_generation()
        self.feedback_state, self.learned, self.generation = state, learned, generation
        self.marks.remove(event_id)
        return UndoResult(event_id, True, event.query, now, learned.reading)

    def _remove_unreadable(self, event_id: int, why: str, now: float) -> UndoResult:
        """Delete an event whose row cannot be read: it cannot be kept marked as withdrawn
        (nothing of it can be shown), and while it is in the log recall uses no feedback at all;
        before, only a reset cleared it, forgetting every other event too. What was learned is
        rebuilt from the events left, as after an undo; if another one cannot be read either, the
        row still goes and recall goes on without feedback, naming that one (``still_unreadable``)."""
        store = self.mem.store
        with store.transaction():
            store.delete_feedback_event(event_id)
            try:
                events = store.feedback_events()
            except CorruptFeedback:
                events = None
            if events is not None:
                self._replay_and_write(events, now)
            self.mem.activity.record("feedback.removed", f"feedback event {event_id}, which could not be read", count=1)
            store.bump_ranker_generation()
        self.load()
        return UndoResult(event_id, True, "", now, self.learned.reading, why, self.state_problem if self.log_corrupt else "")

    def _replayed(self, events: list[FeedbackRow],
                  described: dict[int, np.ndarray]) -> tuple[FeedbackState, LearnedState]:
        """Trust, edges and the learned state as if only ``events`` had been given (deleted items
        left out). An event whose shown hits were described under another feature set is learned
        from its rows under the current one: those in ``described``, else described again now
        (:meth:`_described_again`, from what was learned before it) and put in ``described``: the
        newest ``relearn_newest`` only, which bounds the cost (:class:`.mlp.MLPParams`)."""
        state = FeedbackState(self.feedback_state.params)
        state.load([], [], 0.0)
        learned = self._fresh_state()
        live = self.mem.index.slot_of
        newest = {e.id for e in events[-self.mlp_params.relearn_newest:]}
        for e in events:
            used = [i for i in e.used if i in live]
            shown = [i for i in e.shown if i in live]
            features, names = (e.features, e.names) if shown == e.shown else (None, e.names)
            if features is not None and tuple(names) != self.names:
                if e.id not in described and e.id in newest:
                    again = self._described_again(e.query, shown, state, learned.prior)
                    if again is not None:
                        described[e.id] = again
                features, names = described.get(e.id), list(self.names)
            changes = state.changes(used, [i for i in e.ignored if i in live], e.created_at)
            state.apply(changes, e.created_at)
            state.add_query(used, e.query, self._plan(e.query))
            learned = self._learned_after(learned, e.id, e.query, shown, set(used), features, names)[0]
        return state, learned

    def _replay_and_write(self, events: list[FeedbackRow], now: float) -> tuple[FeedbackState, LearnedState]:
        """:meth:`_replayed` inside a write transaction (an undo, an import), written in place of
        what the store had learned: with the rows kept beside the log for this feature set, the
        new ones kept too; a FeedbackError (the transaction writes nothing) while the endpoint
        holds a description up."""
        store = self.mem.store
        described = store.described_feedback(self.names)
        kept = set(described)
        try:
            replayed = self._replayed(events, described)
        except EmbeddingUnavailable as exc:
            raise FeedbackError(_waits(exc)) from None
        store.add_described_feedback(self.names, [(i, rows) for i, rows in described.items() if i not in kept])
        state, learned = replayed
        store.replace_learned_rows(state.trust_rows(), state.edge_rows())
        store.set_ranker_state(learned.blob(self.names), now)
        return replayed

    def _relearned(self, events: list[FeedbackRow], stored: tuple[str, ...]) -> LearnedState:
        """The learned state when the feature set changed since it was stored (``stored``: its
        names; new signals, as session 14's ``words``): the model cannot read the new feature
        vectors, so it is learned again from the feedback log, each event's shown hits described
        under the new features as they were ranked then (:meth:`_replayed`). The state and those
        rows (beside the log, keyed by the feature set) are written in one transaction; the log's
        own rows are not touched: they are what was shown, and a process with the other feature
        set reads them. Before, the state started afresh and what a person taught was lost at
        the upgrade. If the store moved since this process read the log (another process
        relearned it, or gave feedback), what it holds now is read again (:meth:`_current` goes
        on from there). A store that cannot be written keeps the relearned state in memory;
        :meth:`status` says which."""
        store = self.mem.store
        read_at = self.generation  # (the write below takes in other processes' commits first: this area may reload)
        described = store.described_feedback(self.names)
        kept = set(described)
        learned = self._replayed(events, described)[1]
        added, gone = [n for n in self.names if n not in stored], [n for n in stored if n not in self.names]
        change = "; ".join(part for part in (f"new {', '.join(added)}" if added else "",
                                             f"without {', '.join(gone)}" if gone else "") if part)
        what = f"relearned from its {len(events)} feedback event(s), {len(described)} described again under the new features"
        if len(events) > self.mlp_params.relearn_newest:
            what += (f" (the newest {self.mlp_params.relearn_newest} at most; the older teach trust, edges, "
                     "the marks and the answer prior)")
        try:
            with store.transaction():
                if store.ranker_generation() != read_at:
                    raise _StoreMoved
                store.add_described_feedback(self.names, [(i, rows) for i, rows in described.items() if i not in kept])
                store.set_ranker_state(learned.blob(self.names), time.time())
                self.mem.activity.record("ranker.relearned", f"the feature set changed ({change}): {what}",
                                         count=len(described))
                self.generation = store.bump_ranker_generation()
        except _StoreMoved:
            self._load_learning()
            if self._relearn is None:  # the stored state is for this feature set: another process relearned it
                self.relearned = (f"the feature set changed ({change}): relearned from its log by another process "
                                  "meanwhile, read from the store")
            return self._learned
        except StoreReadOnly:
            what += ", in memory only: the store is read-only" + (
                ", and not yet upgraded to keep a relearning (open it once with write access)" if store.missing else "")
        except StoreBusy as exc:
            what += f", in memory only ({exc})"
        self.state_problem = ""
        self.relearned = f"the feature set changed ({change}): {what}"
        log.info("%s: %s", self.mem.path, self.relearned)
        return learned

    def _referee(self, model: PairwiseMLP, held: PairBuffer) -> GateReading:
        if not len(held):
            return GateReading()
        h = weights_for(self.names)
        return referee(model.score(held.better) - model.score(held.worse), (held.better - held.worse) @ h,
                       self.gate_params, held.groups, self.mem.settings.ranker_seed)

    # -- distillation -------------------------------------------------------------------------

    def dense_space(self, q: Query) -> tuple[np.ndarray | None, VectorIndex | None] | None:
        """The distilled local embedding in place of the latent space, once one is fitted."""
        distilled = self.distilled
        if distilled is None:
            return None
        return distilled.query(self.mem, q.term_ids, q.term_weights), distilled.vectors

    @property
    def distilled(self) -> distillation.Distilled | None:
        """The distilled local embedding, while it matches the store's latent model."""
        lsa = self.mem.index.lsa
        if self._distilled is not None and (lsa is None or lsa.fit_id != self._distilled.fit_id):
            self._distilled = None  # the latent model was refitted: the projection no longer applies
        return self._distilled

    def set_teacher_vectors(self, vectors: dict[int, np.ndarray], model: str) -> int:
        """Attach teacher vectors (e.g. embeddings already paid for) to items, in one transaction."""
        unknown = sorted(set(vectors) - set(self.mem.index.slot_of))
        if unknown:
            raise FeedbackError(f"no item with id {unknown[0]}")
        dims = {len(v) for v in vectors.values()}
        if len(dims) > 1:
            raise FeedbackError(f"teacher vectors must share one dimension; got {sorted(dims)}")
        with self.mem.store.transaction():
            self.mem.store.set_teacher_vectors(model, ((i, np.asarray(v, dtype=np.float32)) for i, v in vectors.items()))
            self.mem.activity.record("ranker.distilled", f"teacher vectors of {model}", count=len(vectors))
        return len(vectors)

    def distill(self) -> distillation.DistillReport:
        """Fit the local embedding to the teacher vectors; swap it in only if held-out geometry improves."""
        report, self._distilled = distillation.distill(self.mem, self.distilled, self.mem.settings.ranker_seed)
        return report

    def status(self) -> RankerStatus:
        aside = self._relearning_aside()
        learned = self._serving
        lam = learned.reading.lam
        state = self.state_problem or ("blended" if lam > 0 else "learning" if len(self.marks) else "heuristic")
        if aside:
            state += ("; the feature set changed: relearning from the feedback log in the background, recall ranks"
                      " without the learned model until it ends")
        elif self.relearned and not self.state_problem:
            state += f"; {self.relearned}"
        return RankerStatus(
            lam=lam, events=self.mem.store.count_feedback(), train_pairs=len(learned.train),
            held_out_pairs=len(learned.held_out), gate=learned.reading, model_steps=learned.model.steps,
            coaccess_edges=len(self.feedback_state.edges), trusted_items=len(self.feedback_state.trust),
            features=list(self.names), heuristic={n: float(w) for n, w in zip(self.names, weights_for(self.names)) if w},
            state=state, marks=len(self.marks), curve=list(learned.curve), relearning=aside,
            log_unreadable=self.log_corrupt)

    def feedback_log(self, limit: int = 100, unreadable: list[CorruptFeedback] | None = None) -> list[FeedbackRow]:
        """The most recent feedback events, newest first, withdrawn ones included (marked). Those
        that cannot be read are left out, and named in ``unreadable`` when it is given (recall
        then uses no feedback at all: ``status`` says so)."""
        return self.mem.store.feedback_events(limit, newest_first=True, withdrawn=True,
                                              unreadable=[] if unreadable is None else unreadable)

    def feedback_effects(self, limit: int = 100, unreadable: list[CorruptFeedback] | None = None) -> list[EventEffect]:
        """The most recent feedback events (as :meth:`feedback_log`), each with what it does. A
        mark's question is compared by the plan it keeps, not planned again per call."""
        events = self.feedback_log(limit, unreadable)
        items = self.mem.items({i for e in events for i in (*e.used, *e.ignored)})
        queries = [e.query for e in events]
        wording = self._wording()
        rule = self.marks.params.embedded if self._endpoint() is not None else self.marks.params.worded
        return [EventEffect(e, [items[i] for i in e.used if i in items], [items[i] for i in e.ignored if i in items],
                            self.marks.alike(e.query, self._likeness(
                                self.marks.asked(e.id, e.query, wording), wording,
                                lambda endpoint, n=n: self.marks.vectors(queries, endpoint)[n])),
                            _untaught(rule, len(e.shown)) if e.used and e.withdrawn_at is None else "")
                for n, e in enumerate(events)]

    def reset(self) -> None:
        """Forget all learning (state, log, edges, trust); ranking returns to the heuristic."""
        with self.mem.store.transaction():
            self.mem.store.clear_feedback()
            self.mem.store.bump_ranker_generation()
            self.mem.activity.record("ranker.reset")
        self.load()

    def export(self) -> dict[str, Any]:
        """Everything the ranker knows, as plain JSON-ready data (feedback events that cannot be
        read are named under ``unreadable_feedback``)."""
        unreadable: list[CorruptFeedback] = []
        events = self.feedback_log(10**9, unreadable)
        return {
            "status": self.status().to_dict(),
            "model": {k: v.tolist() for k, v in self.learned.model.arrays().items()},
            "feedback": [{k: v for k, v in asdict(e).items() if k != "features"} for e in events],
            "unreadable_feedback": [str(exc) for exc in unreadable],
            "coaccess_edges": [list(map(float, r)) for r in self.mem.store.coaccess_edges()],
            "trust": [list(map(float, r)) for r in self.mem.store.trust_rows()],
            "answer_prior": self._prior_export(),
        }

    def _prior_export(self) -> dict[str, Any]:
        """The answer prior's weights: its style flags by name, its term buckets where non-zero."""
        w = self.learned.prior.weights
        terms = w[:-1 - len(STYLE)]
        return {"intercept": float(w[-1]), "style": dict(zip(STYLE, map(float, w[-1 - len(STYLE):-1]))),
                "term_buckets": {int(b): float(terms[b]) for b in np.flatnonzero(terms)}}

    def export_records(self) -> list[dict[str, Any]]:
        """Trust, co-access rows and the feedback log for an export (:mod:`.portable`)."""
        store = self.mem.store
        unreadable: list[CorruptFeedback] = []
        events = store.feedback_events(withdrawn=True, unreadable=unreadable)
        for exc in unreadable:  # the rest of the store is exported whole: a backup is not refused for one row
            log.warning("%s: %s; left out of the export", self.mem.path, exc)
        return [*portable.trust_records(store.trust_rows()), *portable.edge_records(store.coaccess_edges()),
                *map(portable.feedback_record, events)]

    def reads(self, record_type: str) -> bool:
        return record_type in portable.NUMBERS

    @contextmanager
    def importing(self, path: Path, records: list[tuple[int, dict[str, Any]]], exported: Any) -> Iterator[None]:
        """Frame an import: check the export's ranker records before anything is written; a bad
        one raises :class:`engine.ingest.IngestError` naming its line."""
        for line, record in records:
            problem = portable.problem(record)
            if problem:
                raise IngestError(path, f"{record['type']} record: {problem}", line)
        yield

    def import_records(self, records: list[dict[str, Any]], id_map: dict[int, int]) -> None:
        """Store the export's trust and edges, and its feedback events; when events came, trust,
        edges, model, prior and gate are rebuilt from the whole log, as after an undo."""
        trust = [(id_map[r["item_id"]], r["trust"], r["uses"], r["updated_at"])
                 for r in records if r.get("type") == portable.TRUST and r.get("item_id") in id_map]
        edges = []
        for r in records:
            if r.get("type") == portable.EDGE and r.get("a") in id_map and r.get("b") in id_map:
                a, b = sorted((id_map[r["a"]], id_map[r["b"]]))
                edges.append((a, b, r["weight"], r["updated_at"]))
        events = [portable.feedback_row(r, id_map) for r in records if r.get("type") == portable.FEEDBACK]
        if not (trust or edges or events):
            return
        store = self.mem.store
        with store.transaction():
            store.upsert_trust(trust)
            store.upsert_edges(edges)
            if store.import_feedback(events):
                self._replay_and_write(store.feedback_events(), time.time())
            store.bump_ranker_generation()
        self.load()


class _StoreMoved(Exception):
    """Raised inside the relearning's write when the store's ranker state moved since the log was
    read: the write is undone, and what the store holds now is read again."""


def _waits(exc: Exception) -> str:
    """The one line a write refused while the relearning waits for the endpoint says."""
    return (f"the ranker must relearn from its feedback log after a feature change before this write, and that "
            f"waits for the embedding endpoint ({exc}); nothing was changed, try again when it answers")


def _untaught(rule: AlikeRule, shown: int) -> str:
    """For which question never taught an event of ``shown`` hits brings its marked items into
    view by ``rule``'s corroboration (:func:`.marks._corroborated`), in words: one that finds
    enough of those hits again and is alike enough, or is the most alike and alike enough alone.
    It must also name no other people and, by the rule, ask for the same kind of answer, and be
    the best of the taught questions by likeness plus share: "may"."""
    if rule.shared <= 0 or not shown:
        return ""
    found = max(1, math.ceil(rule.shared * shown - 1e-9))
    text = f"a new question about the same people that finds {found} of these {shown} hits again"
    if not math.isfinite(rule.agreed_likeness):
        return f"{text} (likeness ≥ {rule.shared_likeness:.2f})"
    return (f"{text}, or reads much like this one (likeness ≥ {rule.shared_likeness:.2f} with the hits, "
            f"≥ {rule.agreed_likeness:.2f} alone)")


def _standardise(x: np.ndarray) -> np.ndarray:
    spread = x.std()
    return (x - x.mean()) / spread if spread > 1e-12 else np.zeros_like(x)


def passed_over(shown: list[int], used: set[int]) -> list[int]:
    """The hits a person read and passed over when they name only what they used: those shown
    above the lowest one used. A list is read from the top and left at the last hit needed, so
    what lies below it may never have been read: counted as ignored, one mark sank the on-topic
    hits below the one used (the 6th to 9th of the demo's "how do I keep my starter alive")
    beneath turns about nothing asked. With nothing used, every shown hit was read and none helped."""
    last = max((n for n, i in enumerate(shown) if i in used), default=len(shown) - 1)
    return [i for i in shown[:last + 1] if i not in used]
