"""``RankerArea`` (``mem.ranker``): the fused strategy's scorer, recall tokens, feedback,
and the ranker's status, reset and export.

Recall tokens. Every recall gets a token; its row (query, shown item ids, their feature vectors)
is written to ``recall_tokens`` at recall time. Nothing ranks from that table, so recall stays
read-only in the sense that matters: the next recall returns the same thing. The row makes
feedback work across processes and restarts (the CLI recalls in one process and sends feedback
from the next; the app may restart between the two). Tokens expire after
``Settings.token_ttl_hours``, and one token takes one feedback.

Feedback is one transaction: the event (with the shown features, so the learner's buffers can be
rebuilt from the log), trust, co-access edges, pruning, and the ranker state blob with its
checksum. The in-memory state changes only after the commit. A state blob that fails its checksum
or cannot be read is reported by :meth:`status` and replaced by the heuristic; records are never
touched.
"""

from __future__ import annotations

import json
import logging
import math
import secrets
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import numpy as np

from ..area import Area
from ..errors import FeedbackError
from ..ingest import IngestError
from ..pipeline import Hit, Query, Ranking, Recall, Signals, Strategy
from ..store.ranker import FeedbackRow, TokenRow, state_checksum
from . import distill as distillation
from . import features as feats
from .feedback import FeedbackParams, FeedbackState
from .gate import GateParams, GateReading, is_held_out, referee
from .heuristic import score as heuristic_score
from .heuristic import weights_for
from .mlp import MLPParams, PairwiseMLP
from .prior import STYLE, AnswerPrior, descriptors

if TYPE_CHECKING:
    from ..area import Engine
    from ..dense import VectorIndex
    from ..records import Item, Source

log = logging.getLogger(__name__)
STATE_VERSION = 1
# The numeric fields of the ranker's records in an export (``export_records``).
RECORD_FIELDS = {"ranker_trust": ("item_id", "trust", "uses", "updated_at"), "ranker_edge": ("a", "b", "weight", "updated_at")}
# The model's starting weights on the learned features: used before for a similar query, used
# often, trusted, used together with the other candidates. Only the gate decides if they count.
LEARNED_PRIOR = {"feedback_match": 0.6, "trust": 0.3, "uses": 0.05, "coaccess": 0.1, "answer_prior": 0.3}


@dataclass
class CurvePoint:
    event: int
    lam: float
    lower_bound: float
    loss: float


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
    state: str  # "heuristic" | "learning" | "blended" | "reset: <why>"
    curve: list[CurvePoint] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["gate"] = self.gate.to_dict()
        return d


class PairBuffer:
    """(better, worse) feature rows, most recent ``cap`` kept."""

    def __init__(self, n_features: int, cap: int) -> None:
        self.cap = cap
        self.better = np.zeros((0, n_features))
        self.worse = np.zeros((0, n_features))

    def __len__(self) -> int:
        return len(self.better)

    def with_added(self, better: np.ndarray, worse: np.ndarray) -> "PairBuffer":
        out = PairBuffer(self.better.shape[1], self.cap)
        out.better = np.concatenate([self.better, better])[-self.cap:]
        out.worse = np.concatenate([self.worse, worse])[-self.cap:]
        return out


class RankerArea(Area):
    name = "ranker"

    def __init__(self, mem: Engine) -> None:
        super().__init__(mem)
        s = mem.settings
        self.mlp_params = MLPParams()
        self.gate_params = GateParams()
        self.feedback_state = FeedbackState(FeedbackParams(
            trust_half_life_days=s.trust_half_life_days, edge_half_life_days=s.coaccess_half_life_days))
        self.meta = feats.SlotMeta()
        self.prior = AnswerPrior()
        self._punctuated = False  # SlotMeta's punctuation flags cover every stored item
        self.state_problem = ""
        self._distilled: distillation.Distilled | None = None

    # -- the area's hooks ----------------------------------------------------------------------

    def load(self) -> None:
        store = self.mem.store
        self.meta = feats.SlotMeta()
        self._punctuated = False
        self._add_meta(store.item_meta_rows())
        events = store.feedback_events()
        clock = events[-1].created_at if events else 0.0
        self.feedback_state.load(store.trust_rows(), store.coaccess_edges(), clock)
        for event in events:
            self.feedback_state.add_query(event.used, self.mem.index.query_terms(event.query)[0])
        self.names = feats.feature_names(self.extra_signals())
        self.model, self.reading, self.curve, self.prior = self._load_state()
        self.train, self.held_out = self._buffers(events[-self.mlp_params.buffer:])
        self._distilled = distillation.load(self.mem)

    def on_ingest(self, source: "Source", items: list["Item"]) -> None:
        """Nothing to derive at ingest: the ranker learns from feedback."""

    def on_indexed(self, items: list["Item"]) -> None:
        self._add_meta([(i.id, i.speaker, i.title, len(i.text), i.kind) for i in items])
        self._add_punctuation(items)
        if self.distilled is not None:
            self.distilled.embed_items(self.mem, self.mem.index.slots(i.id for i in items))

    def on_changed_elsewhere(self, added: list["Item"], removed: list[int]) -> None:
        """Items another process added: their features, as after an ingest here (its deletions
        and its feedback reload this area)."""
        self.on_indexed(added)

    def on_delete(self, item_ids: list[int], dry_run: bool) -> dict[str, Any]:
        """Edges and trust rows go with their items (foreign-key cascade); the answer prior is
        retrained from the feedback log as if the deleted items had never been shown."""
        report = self.mem.store.count_ranker_rows(item_ids) if item_ids else {"coaccess_edges": 0, "trust_rows": 0}
        if not dry_run:
            self.feedback_state.forget(item_ids)
            if self.prior.trained and item_ids:
                self.prior = self._replayed_prior(set(item_ids))
                self.mem.store.set_ranker_state(self._state_blob(self.model, self.reading, self.curve, self.prior),
                                                time.time())
        return report

    def counts(self) -> dict[str, Any]:
        """What the store holds, read without loading the ranker."""
        return {"feedback_events": self.mem.store.count_feedback()}

    def stats(self) -> dict[str, Any]:
        return {**self.counts(), "ranker_lambda": round(self.reading.lam, 4)}

    # -- state --------------------------------------------------------------------------------

    def extra_signals(self) -> tuple[str, ...]:
        wanted = self.mem.settings.fused_signals
        names = [n for n in self.mem.signals() if n not in feats.CORE_SIGNALS]
        if wanted != "auto":
            names = [n for n in names if n in {w.strip() for w in wanted.split(",")}]
        return tuple(names)

    def _add_meta(self, rows: list[tuple]) -> None:
        slot_of = self.mem.index.slot_of
        rows = [r for r in rows if r[0] in slot_of]
        self.meta.add(np.array([slot_of[r[0]] for r in rows], dtype=np.int64), [tuple(r[1:]) for r in rows])

    def _add_punctuation(self, items: Iterable["Item"]) -> None:
        slot_of = self.mem.index.slot_of
        rows = [(slot_of[i.id], i.text) for i in items if i.id in slot_of]
        self.meta.add_punctuation(np.array([r[0] for r in rows], dtype=np.int64), [r[1] for r in rows])

    def _descriptors(self, slots: np.ndarray):
        """The answer prior's view of these slots (reads every item's text once per open)."""
        if not self._punctuated:
            self._add_punctuation(self.mem.store.iter_items())
            self._punctuated = True
        opening = self.meta.is_turn[slots] & (feats.neighbours(self.mem, self.meta, slots)[:, 0] < 0)
        return descriptors(self.mem.index.counts_matrix(slots), self.meta.length[slots], opening,
                           self.meta.question[slots], self.meta.exclamation[slots])

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

    def _load_state(self) -> tuple[PairwiseMLP, GateReading, list[CurvePoint], AnswerPrior]:
        """The stored model and prior, or fresh ones at the heuristic if the blob is missing or bad."""
        self.state_problem = ""
        stored = self.mem.store.ranker_state()
        if stored is None:
            return self._fresh_model(), GateReading(), [], AnswerPrior()
        blob, checksum = stored
        try:
            if state_checksum(blob) != checksum:
                raise ValueError("checksum mismatch")
            meta, arrays = _unpack(blob)
            if meta["version"] != STATE_VERSION:
                raise ValueError(f"state version {meta['version']}")
            if tuple(meta["features"]) != self.names:
                self.state_problem = "reset: the feature set changed (new signals); learning starts again"
                return self._fresh_model(), GateReading(), [], AnswerPrior()
            curve = [CurvePoint(*row) for row in meta["curve"]]
            prior = AnswerPrior(arrays.pop("answer_prior"))
            return PairwiseMLP.from_arrays(arrays, self.mlp_params), GateReading(**meta["gate"]), curve, prior
        except (ValueError, KeyError, TypeError) as exc:
            self.state_problem = f"reset: stored ranker state is corrupt ({exc}); using the heuristic"
            log.warning("ranker state in %s is corrupt (%s); reset to the heuristic", self.mem.path, exc)
            return self._fresh_model(), GateReading(), [], AnswerPrior()

    def _state_blob(self, model: PairwiseMLP, reading: GateReading, curve: list[CurvePoint], prior: AnswerPrior) -> bytes:
        meta = {"version": STATE_VERSION, "features": list(self.names), "gate": asdict(reading),
                "curve": [[c.event, c.lam, c.lower_bound, c.loss] for c in curve]}
        return _pack(meta, {**model.arrays(), "answer_prior": prior.weights})

    def _pairs(self, event_id: int, shown: list[int], used: set[int], matrix: np.ndarray) -> tuple[tuple, tuple]:
        """(train better, train worse), (held-out better, held-out worse) of one event."""
        good = [n for n, i in enumerate(shown) if i in used]
        bad = [n for n, i in enumerate(shown) if i not in used]
        pairs = [(g, b) for g in good for b in bad]
        held = np.array([is_held_out(event_id, k, self.gate_params.holdout_every, self.mem.settings.ranker_seed)
                         for k in range(len(pairs))], dtype=bool)
        idx = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        train, test = idx[~held], idx[held]
        return (matrix[train[:, 0]], matrix[train[:, 1]]), (matrix[test[:, 0]], matrix[test[:, 1]])

    def _buffers(self, events: list[FeedbackRow]) -> tuple[PairBuffer, PairBuffer]:
        """The learner's buffers rebuilt from the feedback log (same split as when the events came)."""
        parts: list[tuple[tuple, tuple]] = [self._pairs(e.id, e.shown, set(e.used), e.features) for e in events
                                            if e.features is not None and tuple(e.names) == self.names]
        empty = np.zeros((0, len(self.names)))
        train = PairBuffer(len(self.names), self.mlp_params.buffer).with_added(
            np.concatenate([empty] + [t[0] for t, _ in parts]), np.concatenate([empty] + [t[1] for t, _ in parts]))
        held = PairBuffer(len(self.names), self.gate_params.window).with_added(
            np.concatenate([empty] + [h[0] for _, h in parts]), np.concatenate([empty] + [h[1] for _, h in parts]))
        return train, held

    # -- ranking ------------------------------------------------------------------------------

    @property
    def lam(self) -> float:
        return self.reading.lam

    def strategies(self) -> dict[str, Strategy]:
        return {"fused": self.rank}

    def rank(self, q: Query, signals: Signals) -> Ranking:
        """Every signal's candidates, one feature vector each, scored by the ranker (engine.rank):
        the heuristic floor, blended with the learned model once its gate opens."""
        s = self.mem.settings
        cf = feats.build(self.mem, q, signals, self.meta, self._learned_columns,
                         max(q.top_k, s.candidate_k), self.extra_signals(), s.rrf_k)
        scores = heuristic_score(cf.matrix, cf.names)
        lam = self.reading.lam if cf.names == self.names else 0.0
        if lam > 0 and len(scores):
            scores = (1 - lam) * _standardise(scores) + lam * _standardise(self.model.score(cf.matrix))
        order = np.lexsort((cf.slots, -scores))
        found = {int(k): v for k, v in cf.found_by.items()}
        return Ranking(cf.slots[order], scores[order], found, cf.as_dict(order), {"lambda": lam})

    def _learned_columns(self, slots: np.ndarray, q: Query, rrf: np.ndarray) -> dict[str, np.ndarray]:
        index = self.mem.index
        ids = index.item_ids[slots]
        trust, uses = self.feedback_state.trust_and_uses(ids)
        match = self.feedback_state.feedback_match(ids, q.term_ids, index.bm25.idf, len(index.vocab))
        co = self.feedback_state.coaccess(index.slot_of, index.n_slots, slots, rrf)[slots]
        best = co.max() if len(co) else 0.0
        prior = self.prior.score(self._descriptors(slots)) if self.prior.trained else np.zeros(len(slots))
        return {"trust": trust, "uses": uses, "feedback_match": match, "coaccess": co / best if best > 0 else co,
                "answer_prior": prior}

    # -- tokens and feedback ------------------------------------------------------------------

    def complete(self, q: Query, ranking: Ranking, hits: list[Hit], result: Recall) -> None:
        """A token for feedback on these hits (its row is one nobody ranks from), and how a fused
        score is made: the heuristic's weights and λ, the learned model's share."""
        result.token = self.issue_token(q, ranking, hits)
        result.lam = self.reading.lam
        result.weights = {n: float(w) for n, w in zip(self.names, weights_for(self.names)) if w}

    def issue_token(self, q: Query, ranking: Ranking, hits: list[Hit]) -> str:
        """Persist what this recall showed, for feedback later (possibly from another process)."""
        shown = [h.item.id for h in hits]
        names = [n for n in self.names if n in ranking.features]
        matrix = None
        if len(names) == len(self.names) and shown:
            row_of = {int(s): n for n, s in enumerate(ranking.slots.tolist())}
            rows = [row_of[self.mem.index.slot_of[i]] for i in shown]
            matrix = np.column_stack([ranking.features[n] for n in names])[rows]
        token = TokenRow(secrets.token_urlsafe(12), time.time(), q.text, shown, names if matrix is not None else [], matrix)
        with self.mem.store.transaction():
            self.mem.store.insert_token(token)
            self.mem.store.expire_tokens(token.created_at - self.mem.settings.token_ttl_hours * 3600)
        return token.token

    def feedback(self, token: str, used_ids: list[int], ignored_ids: list[int] | None = None,
                 now: float | None = None) -> FeedbackResult:
        """Learn from one recall: ``used_ids`` helped; every other shown hit counts as ignored."""
        started = time.perf_counter()
        now = time.time() if now is None else now
        row = self._check(token, used_ids, ignored_ids or [], now)
        used = [i for i in row.shown if i in set(used_ids)]
        ignored = [i for i in row.shown if i not in set(used_ids)]
        changes = self.feedback_state.changes(used, ignored, now)
        prior = self._trained_prior(self.prior, row.shown, set(used))
        model, reading, curve = self.model, self.reading, self.curve
        train, held = self.train, self.held_out
        with self.mem.store.transaction():
            event_id = self.mem.store.insert_feedback(row, now, used, ignored)
            self.mem.store.delete_token(token)
            self.mem.store.upsert_trust(changes.trust)
            self.mem.store.upsert_edges(changes.edges)
            self.mem.store.delete_edges(changes.pruned)
            self.mem.activity.record("feedback", row.query, count=len(used))
            n_train = n_held = 0
            if row.features is not None and tuple(row.names) == self.names:
                (tb, tw), (hb, hw) = self._pairs(event_id, row.shown, set(used), row.features)
                n_train, n_held = len(tb), len(hb)
                model = PairwiseMLP.from_arrays({k: v.copy() for k, v in self.model.arrays().items()}, self.mlp_params)
                model.norm.update(row.features)
                rng = np.random.default_rng([self.mem.settings.ranker_seed, event_id])
                loss = model.train(tb, tw, rng, train.better, train.worse)
                train, held = train.with_added(tb, tw), held.with_added(hb, hw)
                reading = self._referee(model, held)
                curve = [*curve, CurvePoint(event_id, reading.lam, reading.lower_bound, loss)][-1000:]
            self.mem.store.set_ranker_state(self._state_blob(model, reading, curve, prior), now)
        self.feedback_state.apply(changes, now)
        self.feedback_state.add_query(used, self.mem.index.query_terms(row.query)[0])
        self.model, self.reading, self.curve, self.train, self.held_out = model, reading, curve, train, held
        self.prior = prior
        self.state_problem = "" if n_train or n_held else self.state_problem
        return FeedbackResult(event_id, used, ignored, n_train, n_held, reading, len(changes.edges),
                              len(changes.pruned), (time.perf_counter() - started) * 1000)

    def _check(self, token: str, used_ids: list[int], ignored_ids: list[int], now: float) -> TokenRow:
        row = self.mem.store.token(token) if isinstance(token, str) and token else None
        if row is None:
            raise FeedbackError(f"unknown recall token {token!r} (already used, expired, or never issued)")
        if row.created_at < now - self.mem.settings.token_ttl_hours * 3600:
            raise FeedbackError(f"recall token {token!r} has expired; recall again")
        for name, ids in (("used", used_ids), ("ignored", ignored_ids)):
            if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in ids):
                raise FeedbackError(f"{name} ids must be integers")
            stray = sorted(set(ids) - set(row.shown))
            if stray:
                raise FeedbackError(f"{name} id(s) {', '.join(map(str, stray[:5]))} were not shown by this recall")
        both = sorted(set(used_ids) & set(ignored_ids))
        if both:
            raise FeedbackError(f"id(s) {', '.join(map(str, both[:5]))} are both used and ignored")
        return row

    def _referee(self, model: PairwiseMLP, held: PairBuffer) -> GateReading:
        if not len(held):
            return GateReading()
        h = weights_for(self.names)
        return referee(model.score(held.better) - model.score(held.worse), (held.better - held.worse) @ h,
                       self.gate_params)

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

    # -- the app's and the CLI's view -----------------------------------------------------------

    def status(self) -> RankerStatus:
        lam = self.reading.lam
        state = self.state_problem or ("blended" if lam > 0 else "learning" if len(self.train) else "heuristic")
        return RankerStatus(
            lam=lam, events=self.mem.store.count_feedback(), train_pairs=len(self.train),
            held_out_pairs=len(self.held_out), gate=self.reading, model_steps=self.model.steps,
            coaccess_edges=len(self.feedback_state.edges), trusted_items=len(self.feedback_state.trust),
            features=list(self.names), heuristic={n: float(w) for n, w in zip(self.names, weights_for(self.names)) if w},
            state=state, curve=list(self.curve))

    def feedback_log(self, limit: int = 100) -> list[FeedbackRow]:
        """The most recent feedback events, newest first."""
        return self.mem.store.feedback_events(limit, newest_first=True)

    def learning_curve(self) -> list[CurvePoint]:
        return list(self.curve)

    def reset(self) -> None:
        """Forget all learning (state, log, edges, trust, tokens); ranking returns to the heuristic."""
        with self.mem.store.transaction():
            self.mem.store.clear_feedback()
            self.mem.activity.record("ranker.reset")
        self.load()

    def export(self) -> dict[str, Any]:
        """Everything the ranker knows, as plain JSON-ready data."""
        return {
            "status": self.status().to_dict(),
            "model": {k: v.tolist() for k, v in self.model.arrays().items()},
            "feedback": [{k: v for k, v in asdict(e).items() if k != "features"} for e in self.feedback_log(10**9)],
            "coaccess_edges": [list(map(float, r)) for r in self.mem.store.coaccess_edges()],
            "trust": [list(map(float, r)) for r in self.mem.store.trust_rows()],
            "answer_prior": self._prior_export(),
        }

    def _prior_export(self) -> dict[str, Any]:
        """The answer prior's weights: its style flags by name, its term buckets where non-zero."""
        w = self.prior.weights
        terms = w[:-1 - len(STYLE)]
        return {"intercept": float(w[-1]), "style": dict(zip(STYLE, map(float, w[-1 - len(STYLE):-1]))),
                "term_buckets": {int(b): float(terms[b]) for b in np.flatnonzero(terms)}}

    def export_records(self) -> list[dict[str, Any]]:
        """Trust and co-access rows for ``Memory.export`` (keyed by item ids)."""
        out = [{"type": "ranker_trust", "item_id": i, "trust": t, "uses": u, "updated_at": at}
               for i, t, u, at in self.mem.store.trust_rows()]
        out += [{"type": "ranker_edge", "a": a, "b": b, "weight": w, "updated_at": at}
                for a, b, w, at in self.mem.store.coaccess_edges()]
        return out

    @contextmanager
    def importing(self, path: Path, records: list[tuple[int, dict[str, Any]]], exported: Any) -> Iterator[None]:
        """Frame ``Memory.import_``: check the export's trust and co-access records before
        anything is written; a bad one raises :class:`engine.ingest.IngestError` naming its line."""
        for line, record in records:
            fields = RECORD_FIELDS.get(record.get("type"), ())
            bad = [f for f in fields if not _finite_number(record.get(f))]
            if bad:
                raise IngestError(path, f"{record['type']} record: {', '.join(bad)} missing or not a number", line)
        yield

    def import_records(self, records: list[dict[str, Any]], id_map: dict[int, int]) -> None:
        trust = [(id_map[r["item_id"]], r["trust"], r["uses"], r["updated_at"])
                 for r in records if r.get("type") == "ranker_trust" and r.get("item_id") in id_map]
        edges = []
        for r in records:
            if r.get("type") == "ranker_edge" and r.get("a") in id_map and r.get("b") in id_map:
                a, b = sorted((id_map[r["a"]], id_map[r["b"]]))
                edges.append((a, b, r["weight"], r["updated_at"]))
        if trust or edges:
            with self.mem.store.transaction():
                self.mem.store.upsert_trust(trust)
                self.mem.store.upsert_edges(edges)
            self.load()


def _pack(meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> bytes:
    """A JSON header line (meta, array names and shapes) and the arrays' float64 bytes.

    Written on every feedback event, so it must be cheap: a zip archive (np.savez) cost ~10 ms."""
    header = {**meta, "arrays": [[name, list(a.shape)] for name, a in arrays.items()]}
    body = b"".join(np.ascontiguousarray(a, dtype=np.float64).tobytes() for a in arrays.values())
    return json.dumps(header).encode() + b"\n" + body


def _unpack(blob: bytes) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    head, _, body = blob.partition(b"\n")
    meta = json.loads(head.decode())
    arrays, offset = {}, 0
    for name, shape in meta.pop("arrays"):
        size = int(np.prod(shape)) * 8
        if offset + size > len(body):
            raise ValueError("truncated state")
        arrays[name] = np.frombuffer(body[offset:offset + size], dtype=np.float64).reshape(shape).copy()
        offset += size
    return meta, arrays


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _standardise(x: np.ndarray) -> np.ndarray:
    spread = x.std()
    return (x - x.mean()) / spread if spread > 1e-12 else np.zeros_like(x)
