"""``mem.knowledge``: the knowledge layer as an area of the engine (:class:`engine.area.Area`).

At ingest (inside the source's transaction) every item is read by the rule-based extractor:
its entities and mentions, facts (deduplicated: normalised key, then vector similarity within
the same subject), 5W1H events, and the episode it belongs to. A fact's subject becomes an
entity only when it is a name; a common noun phrase ("the dough", "poke test helps") files the
fact under the entity its item is about and joins the graph as a phrase node instead. After the
commit the typed graph grows by the same rows. When an LLM endpoint is configured the items also join a durable
queue that :meth:`KnowledgeArea.process_queue` works through (see :mod:`.llm`).

Browsing returns the dataclasses of :mod:`.records`; every curation call is one transaction
and takes ``dry_run`` (the same writes inside a rolled-back savepoint, so the report is exact).

Recall: the area adds the ``ppr`` signal (Personalized PageRank seeded by the query's entities and
the top BM25 items) and the strategy ``ppr``, which ranks by a blend of the normalised BM25 and PPR
scores, so a passage reached only through an entity named in the first hop (the second hop of a
multi-hop question) can rise. It completes each recall with facts and episodes as the mode asks:
``lite`` episodes and facts only; ``pro`` those plus the hits; ``max`` plus the other items of the
same episodes, at most ``2 × top_k`` hits, in a fixed order (episode of the best hit first, then
item position).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections import defaultdict
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

import numpy as np

from ..activity import FACTS_EXTRACTED
from ..area import Area
from ..errors import KnowledgeError
from ..lexical import top_k as top_k_of
from ..pipeline import Hit, Query, Ranking, Recall, Signal, Signals, Strategy
from ..records import Item, Source
from ..text import STOPWORDS, lexical_tokens, normalize
from .entities import EntityRegistry, entity_key, name_vector
from .episodes import group_items, session_of, summarize
from .extract import Extraction, FactDraft, RuleExtractor, capitalised_spans
from .graph import DEFAULT_WEIGHTS, EDGE_TYPES, KnowledgeGraph, local_pagerank, personalized_pagerank
from .portable import ImportRecords, SourcePart, read_records, snapshot_records
from .records import EVENT_ROLES, Entity, Episode, Event, Fact

if TYPE_CHECKING:
    from ..area import Engine
    from .llm import LLMExtraction

NICKNAME_WEIGHT = 0.9
KIND_RANK = {"speaker": 3, "title": 2, "name": 1, "tag": 0}  # one name seen in two roles keeps the stronger
FACTS_PER_ENTITY = 50  # a query's entity contributes its latest facts as candidates


def _atomic(method: Callable[..., Any]) -> Callable[..., Any]:
    """A curation call's checks and its writes in one transaction: what it checked (an entity
    exists, a name is free) cannot change before it writes, when another process merges or
    renames at the same moment. A dry run writes nothing and needs no lock."""
    signature = inspect.signature(method)

    @functools.wraps(method)
    def run(self: "KnowledgeArea", *args: Any, **kwargs: Any) -> Any:
        if signature.bind(self, *args, **kwargs).arguments.get("dry_run"):
            return method(self, *args, **kwargs)
        with self.store.transaction():
            return method(self, *args, **kwargs)

    return run


def _typed_time(time: str | None) -> str | None:
    """A fact's time as a person typed it: empty for none, else an ISO date (or date and time),
    the form the extractor resolves times to."""
    if not time or not time.strip():
        return None
    try:
        datetime.fromisoformat(time.strip())
    except ValueError:
        raise KnowledgeError(f"time {time!r} is not an ISO date such as 2023-05-20") from None
    return time.strip()


def fact_key(subject: str, predicate: str, obj: str) -> str:
    """Stage-one dedup key: normalised words of subject, predicate and object."""
    return "|".join(" ".join(re.findall(r"\w+", normalize(x))) for x in (subject, predicate, obj))


@dataclass
class _Batch:
    """Rows written in the ingest transaction, applied to memory after the commit."""

    entities: list[int] = field(default_factory=list)
    kinds: dict[int, str] = field(default_factory=dict)  # known entities seen in a stronger role
    facts: dict[str, int] = field(default_factory=dict)  # key → fact id
    provenance: list[tuple[int, int]] = field(default_factory=list)  # (fact id, item id) stated in this batch
    phrases: list[tuple[str, int]] = field(default_factory=list)  # (phrase, item id) for the graph
    edges: dict[str, tuple[list[int], list[int], list[float]]] = field(
        default_factory=lambda: {t: ([], [], []) for t in EDGE_TYPES})

    def edge(self, kind: str, a: int, b: int, w: float = 1.0) -> None:
        xs, ys, ws = self.edges[kind]
        xs.append(a), ys.append(b), ws.append(w)


@dataclass
class _Import:
    """An import in progress: its checked knowledge records and the items it has stored."""

    records: ImportRecords
    exported: dict[str, tuple[int, list[int]]]  # source name → (exported source id, its items' exported ids)
    stored: set[int] = field(default_factory=set)

    def part(self, name: str, items: list[Item]) -> tuple[SourcePart, dict[int, int]] | None:
        """The snapshot's part for a source this import is storing, with exported → new item
        ids; None when the source is to be extracted (no snapshot, or one that does not cover it)."""
        self.stored.update(i.id for i in items)
        snapshot = self.records.snapshot
        if snapshot is None or name not in self.exported:
            return None
        source_id, exported_ids = self.exported[name]
        part = snapshot.parts.get(source_id)
        return None if part is None else (part, dict(zip(exported_ids, (i.id for i in items))))


class _RowMatrix:
    """Vectors appended one at a time into a matrix that doubles its capacity."""

    def __init__(self, dim: int) -> None:
        self.ids: list[int] = []
        self.matrix = np.zeros((8, dim), dtype=np.float32)

    def add(self, row_id: int, vec: np.ndarray) -> None:
        if len(self.ids) == len(self.matrix):
            self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])
        self.matrix[len(self.ids)] = vec
        self.ids.append(row_id)

    def nearest(self, vec: np.ndarray) -> tuple[int | None, float]:
        if not self.ids:
            return None, 0.0
        sims = self.matrix[: len(self.ids)] @ vec
        best = int(np.argmax(sims))
        return self.ids[best], float(sims[best])


@dataclass
class GraphResult:
    """A PPR run for a query: item scores by slot, the seeds, and the nodes reached."""

    item_scores: np.ndarray
    seeds: list[dict[str, Any]]
    reached: list[dict[str, Any]]


class KnowledgeArea(Area):
    """Episodes, facts, entities and the typed graph of one store."""

    name = "knowledge"

    def __init__(self, mem: Engine) -> None:
        super().__init__(mem)
        self.store = mem.store
        self.registry = EntityRegistry()
        self.extractor = RuleExtractor(self.registry)
        self.graph = KnowledgeGraph()
        self._fact_ids: dict[str, int] = {}
        self._subject_vectors: dict[int, _RowMatrix] = {}  # per subject, "s p o" vectors of its facts
        self._fact_terms: dict[int, frozenset[str]] = {}
        self._name_vectors: dict[int, np.ndarray] = {}
        self._batch: _Batch | None = None
        self._import: _Import | None = None  # set while Memory.import_ runs (see importing())
        from .timeline import Timeline
        from .inbox import Inbox
        self.timeline = Timeline(self.store, self.registry, lambda: self.settings.supersession_rules)
        self.inbox = Inbox(self.store, self.timeline, mem.items)

    # -- lifecycle ----------------------------------------------------------------------------

    def load(self) -> None:
        """Rebuild the registry, the fact keys and the graph from the store."""
        store = self.store
        rows = store.entity_rows()
        self.registry.load(rows)
        self._fact_ids.clear()
        self._subject_vectors.clear()
        self._fact_terms.clear()
        self._name_vectors.clear()
        for fid, key, _subject_id in store.fact_keys():
            self._fact_ids[key] = fid
        with self.graph.lock:  # a recall in another thread sees the old graph or the new one
            self._load_graph(rows)

    def _load_graph(self, rows: list[tuple[int, str, str, str]]) -> None:
        store, g = self.store, self.graph
        g.clear()
        g.add_entities([r[0] for r in rows])
        batch = _Batch()
        mentions = store.mention_rows()
        for item_id, entity_id, _surface, role in mentions:
            batch.edge(_edge_type(role), item_id, -entity_id)
        facts = store.fact_rows()
        for fid, _s, _p, _o, sid, oid, *_ in facts:
            if sid is not None and oid is not None and sid != oid:
                batch.edge("fact", -sid, -oid)
        sources = store.fact_sources_of([r[0] for r in facts])
        self._link_statements(facts, [(f, i) for f, items in sources.items() for i in items], mentions, batch)
        for a, b, w in store.synonym_rows():
            batch.edge("synonym", -a, -b, w)
        members: dict[int, list[int]] = defaultdict(list)
        for item_id, episode_id, _home in store.episode_item_rows():
            members[episode_id].append(item_id)
        for ids in members.values():
            _clique(batch, sorted(ids))
        previous: tuple | None = None
        for item_id, source_id, _pos, kind, title, session in store.item_sequence_rows():
            group = (source_id, f"session {session}" if kind == "turn" and session is not None else title or "")
            if previous is not None and previous[1] == group:
                batch.edge("next", previous[0], item_id)
            previous = (item_id, group)
        self._apply_edges(batch)

    def _apply_edges(self, batch: _Batch) -> None:
        for kind, (a, b, w) in batch.edges.items():
            if a:
                self.graph.add_edges(kind, a, b, w)
        self.graph.add_phrases(batch.phrases)

    def _link_statements(self, facts: list[tuple], provenance: list[tuple[int, int]],
                         mentions: list[tuple[int, int, str, str]], batch: _Batch) -> None:
        """What stating a fact adds to the graph, per (fact, item) pair: its subject entity meets
        the other entities its object names (those the item mentions: "Gandhi —[founded]→ the
        Navajivan weekly" joins Gandhi and Navajivan), and the item joins the phrase nodes of the
        fact's object and of a subject that is no name (their head words: "adoption agencies" →
        "agencies"). Read from stored rows, so ingest and a reload build the same edges."""
        keys = {eid: key for key, eid in self.registry.ids.items()}
        named: dict[int, list[int]] = defaultdict(list)
        for item_id, entity_id, _surface, _role in mentions:
            named[item_id].append(entity_id)
        read = {}
        for fid, subject, _p, obj, sid, oid, *_ in facts:
            obj_key = entity_key(obj)
            read[fid] = (sid, oid, f" {obj_key} ", [h for h in (_head(obj_key), self._phrase_head(subject, sid)) if h])
        for fid, item_id in provenance:
            sid, oid, words, heads = read[fid]
            batch.phrases += [(h, item_id) for h in heads]
            if sid is not None:
                for eid in named[item_id]:
                    if eid not in (sid, oid) and f" {keys.get(eid)} " in words:
                        batch.edge("fact", -sid, -eid)

    def _phrase_head(self, subject: str, subject_id: int | None) -> str:
        """The head word of a subject that is a phrase filed under an entity ("dough" under a
        section); "" for the entity's own name."""
        key = entity_key(subject)
        return _head(key) if subject_id is not None and self.registry.lookup(key) != subject_id else ""

    def on_ingest(self, source: Source, items: list[Item]) -> None:
        self.registry.rollback()
        if self._batch is not None:  # the last ingest never committed: drop what it cached
            self._subject_vectors.clear()
        batch = self._batch = _Batch()
        restoring = self._import.part(source.name, items) if self._import else None
        if restoring is not None:
            self._restore(source, items, *restoring, batch)
            return
        self.extractor.reset()
        extractions = [self.extractor.extract(item) for item in items]
        ids = self._register_entities(extractions, batch)
        mentions = []
        for item, ex in zip(items, extractions):
            for surface, key, _kind, role in ex.mentions:
                mentions.append((item.id, ids[key], surface, role))
                batch.edge(_edge_type(role), item.id, -ids[key])
        self.store.insert_mentions(mentions)
        self._store_facts(items, extractions, ids, batch, origin="rule")
        self.timeline.apply_rules(sorted(batch.facts.values()))
        self.inbox.find_duplicates(batch.entities)
        self._store_episodes(source, items, extractions, batch)
        if batch.facts:
            self.mem.activity.record(FACTS_EXTRACTED, source.name, count=len(batch.facts), source_id=source.id)
        if self.llm_configured:
            self.store.enqueue_extraction([i.id for i in items])

    def on_indexed(self, items: list[Item]) -> None:
        batch, self._batch = self._batch, None
        self.registry.commit()
        if batch is None:
            return
        for eid, kind in batch.kinds.items():
            self.registry.kinds[eid] = kind
        self._fact_ids.update(batch.facts)
        self.graph.add_entities(batch.entities)
        if batch.provenance:
            items = sorted({i for _f, i in batch.provenance})
            self._link_statements(self.store.fact_rows(sorted({f for f, _i in batch.provenance})), batch.provenance,
                                  self.store.mentions_of_items(items), batch)
        self._apply_edges(batch)

    def on_changed_elsewhere(self, added: list[Item], removed: list[int]) -> None:
        """Items another process stored (its deletions reload this area): what
        :meth:`on_indexed` applied in that process, read back from the rows it wrote."""
        if removed:
            self.load()
            return
        store, ids = self.store, [i.id for i in added]
        known_facts, known_entities = set(self._fact_ids.values()), set(self.registry.names)
        rows = store.entity_rows()
        self.registry.load(rows)
        provenance = store.facts_of_items(ids)
        stated = sorted({f for f, _i in provenance})
        self._fact_ids.update((key, fid) for fid, key, _subject in store.fact_keys(stated))
        self._subject_vectors.clear()
        batch = _Batch(entities=[r[0] for r in rows if r[0] not in known_entities])
        mentions = store.mentions_of_items(ids)
        for item_id, entity_id, _surface, role in mentions:
            batch.edge(_edge_type(role), item_id, -entity_id)
        facts = store.fact_rows(stated)
        for fid, _s, _p, _o, sid, oid, *_ in facts:
            if fid not in known_facts and sid is not None and oid is not None and sid != oid:
                batch.edge("fact", -sid, -oid)
        self._link_statements(facts, provenance, mentions, batch)
        for members in store.items_of_episodes(sorted(set(store.episodes_of_items(ids).values()))).values():
            _clique(batch, sorted(members))
        by_source: dict[int | None, list[Item]] = defaultdict(list)
        for item in added:
            by_source[item.source_id].append(item)
        for items in by_source.values():
            _link_next(items, batch)
        with self.graph.lock:
            self.graph.add_entities(batch.entities)
            self._apply_edges(batch)

    def on_delete(self, item_ids: list[int], dry_run: bool) -> dict[str, Any]:
        """Facts and episodes that lose their last provenance go; the rest lose that pointer."""
        with self._writing(dry_run):
            report = self._cascade(item_ids)
        if not dry_run:
            self.load()
        return report

    def _cascade(self, item_ids: list[int]) -> dict[str, Any]:
        store = self.store
        losing = store.facts_losing_all(item_ids)
        kept = self.inbox.keep_for_review(losing)  # a chain or a person depends on them: the inbox asks
        facts_gone = sorted(set(losing) - set(kept))
        facts_touched = {f for f, _ in store.facts_of_items(item_ids)} - set(facts_gone)
        episodes_gone = store.episodes_losing_all(item_ids)
        episodes_touched = set(store.episodes_of_items(item_ids).values()) - set(episodes_gone)
        store.delete_facts(facts_gone)
        store.delete_episodes(episodes_gone)
        store.delete_mentions_of_items(item_ids)
        orphans = store.orphan_entities()
        store.delete_entities(orphans)
        return {"facts_deleted": len(facts_gone), "facts_losing_provenance": len(facts_touched),
                "facts_kept_for_review": len(kept),
                "episodes_deleted": len(episodes_gone), "episodes_losing_items": len(episodes_touched),
                "entities_deleted": len(orphans)}

    def _writing(self, dry_run: bool) -> AbstractContextManager:
        return self.store.dry_run() if dry_run else self.store.transaction()

    @contextmanager
    def _curating(self, dry_run: bool, action: str, subject: str) -> Iterator[None]:
        """A curation's one transaction (or dry run), with its line in the activity log."""
        with self._writing(dry_run):
            yield
            if not dry_run:
                self.mem.activity.record(action, subject)

    def counts(self) -> dict[str, Any]:
        """What the store holds (the same as :meth:`stats`: every figure is read from the store)."""
        return self.stats()

    def stats(self) -> dict[str, Any]:
        counts = self.store.knowledge_counts()
        queue = self.store.queue_counts()
        if queue:
            counts["extraction_queue"] = queue
        return counts

    # -- ingest steps -------------------------------------------------------------------------

    def _register_entities(self, extractions: list[Extraction], batch: _Batch) -> dict[str, int]:
        """Ids for every key the items name (new entities inserted and linked by synonymy)."""
        wanted: dict[str, tuple[str, str]] = {}
        for ex in extractions:
            named = [(s, k, kind) for s, k, kind, _role in ex.mentions] + \
                [(f.subject, f.subject_key, "name") for f in ex.facts if f.subject_named]
            for surface, key, kind in named:
                if key and (key not in wanted or KIND_RANK[kind] > KIND_RANK[wanted[key][1]]):
                    wanted[key] = (surface, kind)  # "Maya" named by Daniel first, then speaking: a speaker
        ids = {k: i for k in wanted if (i := self.registry.lookup(k)) is not None}
        for key, eid in ids.items():
            if KIND_RANK[wanted[key][1]] > KIND_RANK.get(self.registry.kinds.get(eid, "tag"), 0):
                batch.kinds[eid] = wanted[key][1]
        self.store.set_entity_kinds(batch.kinds.items())
        new = [(k, name, kind) for k, (name, kind) in wanted.items() if k not in ids]
        if new:
            fresh = self.store.upsert_entities(new)
            for key, name, kind in new:
                eid = fresh[key]
                ids[key] = eid
                self.registry.stage(eid, key, name, kind)
                batch.entities.append(eid)
            self._link_synonyms([(fresh[k], k, kind) for k, _n, kind in new], batch)
        return ids

    def _name_vector(self, entity_id: int, key: str) -> np.ndarray:
        vec = self._name_vectors.get(entity_id)
        if vec is None:
            vec = self._name_vectors[entity_id] = name_vector(key)
        return vec

    def _link_synonyms(self, new: list[tuple[int, str, str]], batch: _Batch) -> None:
        """Synonymy edges from each new entity to known ones: name similarity ≥ the link
        threshold, or a short name that starts a person's name ("Mel" → "Melanie")."""
        threshold = self.settings.entity_link_threshold
        names = {v: k for k, v in self.registry.ids.items()}
        rows: list[tuple[int, int, float]] = []
        for eid, key, kind in new:
            cands = [c for c in self.registry.candidates(key) if c != eid]
            if cands:
                sims = np.stack([self._name_vector(c, names.get(c, "")) for c in cands]) @ self._name_vector(eid, key)
                rows += [(eid, c, float(s)) for c, s in zip(cands, sims) if s >= threshold]
            if kind == "speaker":  # short forms of a person's first name: "Mel" for "Melanie"
                first = key.split()[0]
                for n in range(3, len(first)):
                    short = self.registry.lookup(first[:n])
                    if short is not None and short != eid:
                        rows.append((eid, short, NICKNAME_WEIGHT))
            elif " " not in key and len(key) >= 3:  # … and a new short form of a known person
                rows += [(eid, p, NICKNAME_WEIGHT) for p, first in self._first_names().items()
                         if first != key and first.startswith(key)]
        pairs = {(min(a, b), max(a, b)): w for a, b, w in rows}  # both sides may be new: one edge
        self.store.insert_synonyms((a, b, w) for (a, b), w in pairs.items())
        for (a, b), w in pairs.items():
            batch.edge("synonym", -a, -b, w)

    def _first_names(self) -> dict[int, str]:
        """Speakers (stored or in this batch) by id, with their first name's key."""
        speakers = {eid: key for key, eid in self.registry.ids.items() if self.registry.kinds.get(eid) == "speaker"}
        speakers.update({eid: key for key, (eid, _n, kind) in self.registry.pending.items() if kind == "speaker"})
        return {eid: key.split()[0] for eid, key in speakers.items() if key}

    def _store_facts(self, items: list[Item], extractions: list[Extraction], ids: dict[str, int], batch: _Batch,
                     origin: str) -> None:
        drafts = [(item, _home(ex, ids), d) for item, ex in zip(items, extractions) for d in ex.facts]
        vectors = self._fact_vectors([(d.subject, d.predicate, d.object) for _, _, d in drafts])
        provenance = []
        for (item, home, draft), vec in zip(drafts, vectors):
            provenance.append((self._dedup_or_insert(draft, vec, ids, batch, origin, home, item.timestamp), item.id))
        self.store.insert_fact_sources(provenance)
        batch.provenance += provenance

    def _dedup_or_insert(self, draft: FactDraft, vec: np.ndarray, ids: dict[str, int], batch: _Batch, origin: str,
                         home: int | None = None, said: str | None = None) -> int:
        """The id of the fact ``draft`` states: an existing one (exact key, then similar within
        the same subject), else a new row. A duplicate only ever adds provenance. A subject that
        is no name and no known entity ("the dough") files the fact under ``home``, the entity
        its item is about (the speaker of a turn, the section of a document)."""
        key = fact_key(draft.subject, draft.predicate, draft.object)
        hit = self._fact_ids.get(key) or batch.facts.get(key)
        subject_id = ids.get(draft.subject_key) or self.registry.lookup(draft.subject_key)
        if subject_id is None and not draft.subject_named:
            subject_id = home
        rows = self._vectors_of_subject(subject_id) if subject_id is not None else None
        if hit is None and rows is not None:
            near, sim = rows.nearest(vec)
            hit = near if sim >= self.settings.fact_dedup_threshold else None
        from .timeline import statement_valid_from
        valid_from = statement_valid_from(draft.time, said)
        if hit is not None:
            if draft.time:
                self.store.fill_fact_time(hit, draft.time)
            if valid_from:
                self.store.widen_validity(hit, valid_from)
            return hit
        object_id = None
        if draft.object_key:
            object_id = ids.get(draft.object_key) or self.registry.lookup(draft.object_key)
        fid = self.store.insert_fact(key, draft.subject, draft.predicate, draft.object, subject_id, object_id,
                                     draft.time, origin, valid_from)
        batch.facts[key] = fid
        if rows is not None:
            rows.add(fid, vec)
        if subject_id is not None and object_id is not None and subject_id != object_id:
            batch.edge("fact", -subject_id, -object_id)
        return fid

    def _fact_vectors(self, triples: list[tuple[str, str, str]]) -> np.ndarray:
        """Stage-two dedup vectors of "subject predicate object" (the offline hash embedder)."""
        hasher = self.mem.index.hash
        if not triples:
            return np.zeros((0, hasher.dim), dtype=np.float32)
        return hasher.embed([f"{s} {p} {o}" for s, p, o in triples])

    def _vectors_of_subject(self, subject_id: int) -> _RowMatrix:
        """The vectors of a subject's stored facts, read from the store on first use."""
        rows = self._subject_vectors.get(subject_id)
        if rows is None:
            rows = self._subject_vectors[subject_id] = _RowMatrix(self.mem.index.hash.dim)
            stored = [r for r in self.store.fact_rows(entity_id=subject_id) if r[4] == subject_id]
            for r, vec in zip(stored, self._fact_vectors([(r[1], r[2], r[3]) for r in stored])):
                rows.add(r[0], vec)
        return rows

    def _store_episodes(self, source: Source, items: list[Item], extractions: list[Extraction], batch: _Batch) -> None:
        events_of = {item.id: ex.events for item, ex in zip(items, extractions)}
        rows, events = [], []
        for draft in group_items(items, self.settings.episode_window):
            draft_events = [e for i in draft.items for e in events_of[i.id]]
            eid = self.store.insert_episode(source.id, draft.session, summarize(draft.items, draft_events))
            rows += [(i.id, eid) for i in draft.items]
            events += [(e.item_id, "rule", e.body()) for e in draft_events]
            _clique(batch, [i.id for i in draft.items])
        self.store.insert_episode_items(rows)
        self.store.insert_events(events)
        _link_next(items, batch)

    # -- graph and PPR ------------------------------------------------------------------------

    def edge_weights(self, overrides: dict[str, float] | None = None) -> dict[str, float]:
        weights = dict(DEFAULT_WEIGHTS)
        weights.update(overrides or {})
        return weights

    def query_entities(self, text: str) -> list[int]:
        """Entities the query names (known names in it, and its capitalised spans)."""
        spans = [entity_key(s) for s in capitalised_spans(text, lambda key: self.registry.lookup(key) is not None)]
        keys = list(dict.fromkeys(self.registry.find_in(text) + spans))
        return [eid for k in keys if (eid := self.registry.lookup(k)) is not None]

    def seed_vector(self, entity_ids: Sequence[int], first_stage: np.ndarray, weights: dict[str, float]) -> np.ndarray:
        """Seeds: the query's entities (rarer ones weigh more) and the top first-stage items
        (by their normalised score), each half of the mass when both exist."""
        index = self.mem.index
        n = self.graph.n_nodes(index)
        seeds = np.zeros(n, dtype=np.float64)
        nodes = [index.n_slots + node for e in entity_ids if (node := self.graph.entity_node(e)) is not None]
        if nodes:
            degree = self.graph.degrees(index, weights)[nodes]
            seeds[nodes] = 1.0 / np.log(np.e + degree)
            seeds[nodes] *= self.settings.ppr_entity_mass / seeds[nodes].sum()
        k = self.settings.ppr_seed_items
        top = top_k_of(first_stage, k)[0]
        if len(top):
            scores = first_stage[top] / first_stage[top].max()
            seeds[top] += (1.0 - self.settings.ppr_entity_mass if nodes else 1.0) * scores / scores.sum()
        return seeds

    def ppr(self, seeds: np.ndarray, weights: dict[str, float] | None = None) -> np.ndarray:
        """PPR over every node (items then entities) for a seed vector and edge-type weights."""
        weights = self.edge_weights(weights)
        index, alpha = self.mem.index, self.settings.ppr_alpha
        if self.graph.n_nodes(index) > self.settings.ppr_local_above:
            return local_pagerank(self.graph.forward(weights, index), seeds, alpha=alpha)
        return personalized_pagerank(self.graph.transition(weights, index), seeds, alpha=alpha)

    def graph_scores(self, text: str, first_stage: np.ndarray, weights: dict[str, float] | None = None,
                     reached: int = 20) -> GraphResult:
        """PPR from the query's entities and the top first-stage items; item scores by slot."""
        index = self.mem.index
        weights = self.edge_weights(weights)
        entities = self.query_entities(text)
        seeds = self.seed_vector(entities, first_stage, weights)
        visits = self.ppr(seeds, weights) if seeds.sum() > 0 else np.zeros(len(seeds), dtype=np.float32)
        items = np.zeros(index.n_slots, dtype=np.float64)
        items[:] = visits[: index.n_slots]
        items[~index.alive] = 0.0
        return GraphResult(items, self._describe(seeds, top=20), self._describe(visits, top=reached))

    def graph_features(self, text: str, first_stage: np.ndarray, slots: np.ndarray) -> dict[str, np.ndarray]:
        """Per-slot PPR score under each edge type alone (and the mix), for a learned ranker."""
        out = {"ppr": self.graph_scores(text, first_stage).item_scores[slots]}
        for kind in EDGE_TYPES:
            if self.graph.has_edges(kind):
                only = {t: (1.0 if t == kind else 0.0) for t in EDGE_TYPES}
                out[f"ppr_{kind}"] = self.graph_scores(text, first_stage, only).item_scores[slots]
            else:
                out[f"ppr_{kind}"] = np.zeros(len(slots))
        return out

    def _describe(self, scores: np.ndarray, top: int) -> list[dict[str, Any]]:
        index = self.mem.index
        out = []
        for node in top_k_of(scores, top)[0].tolist():
            if node < index.n_slots:
                out.append({"node": f"item:{int(index.item_ids[node])}", "kind": "item", "score": float(scores[node])})
            elif node < index.n_slots + len(self.graph.entity_ids):
                eid = int(self.graph.entity_ids[node - index.n_slots])
                out.append({"node": f"entity:{eid}", "kind": "entity", "name": self.registry.names.get(eid, ""),
                            "score": float(scores[node])})
            else:
                phrase = self.graph.phrase_of(node, index)
                out.append({"node": f"phrase:{phrase}", "kind": "phrase", "name": phrase, "score": float(scores[node])})
        return out

    # -- recall -------------------------------------------------------------------------------

    def signals(self) -> dict[str, Signal]:
        return {"ppr": self.ppr_signal}

    def strategies(self) -> dict[str, Strategy]:
        return {"ppr": self.ppr_strategy}

    def ppr_signal(self, q: Query, signals: Signals) -> np.ndarray:
        """Personalized PageRank over the knowledge graph, seeded by the query's entities and top BM25 items."""
        graph = self.graph_scores(q.text, signals["bm25"])
        q.notes["graph"] = {"seeds": graph.seeds, "reached": graph.reached}  # shown by any strategy that used it
        return graph.item_scores

    def ppr_strategy(self, q: Query, signals: Signals) -> Ranking:
        """BM25 blended with PPR over the knowledge graph: ``ppr_blend`` · BM25 + (1 − ``ppr_blend``)
        · PPR, both scaled to [0, 1] over the store."""
        first = signals["bm25"]
        graph = self.graph_scores(q.text, first)
        lexical, walk = _normalised(first), _normalised(graph.item_scores)
        blend = self.settings.ppr_blend
        combined = blend * lexical + (1.0 - blend) * walk
        slots, scores = top_k_of(combined, max(q.top_k, self.settings.candidate_k))
        found = {int(s): [name for name, v in (("bm25", first[s]), ("ppr", walk[s])) if v > 0] for s in slots}
        features = {"bm25": first[slots], "ppr": graph.item_scores[slots], "fused": scores}
        return Ranking(slots, scores, found, features, {"graph": {"seeds": graph.seeds, "reached": graph.reached}})

    def rerank(self, q: Query, ranking: Ranking) -> Ranking:
        """Above an item stating a fact superseded at the recall's reference time (``as_of``,
        default now) come the items stating what holds instead (:mod:`.in_time`)."""
        from .in_time import rerank_in_time
        return rerank_in_time(self.store, self.mem.index, self.timeline.rules, q.text, ranking, q.options.get("as_of"))

    def complete(self, q: Query, ranking: Ranking, hits: list[Hit], result: Recall) -> None:
        """Add facts, episodes and graph to ``result``; drop or backfill hits as the mode asks."""
        graph = ranking.extras.get("graph") or q.notes.get("graph")
        if graph:
            result.graph = graph
        scores = {h.item.id: h.score for h in result.hits}
        result.facts = self.facts_for(q.text, scores, self.settings.facts_top_k, q.options.get("as_of"))
        episode_of = self.episodes_of_items([h.item.id for h in result.hits])
        order = list(dict.fromkeys(episode_of[h.item.id] for h in result.hits if h.item.id in episode_of))
        by_id = {e.id: e for e in self.episodes(ids=order)}
        result.episodes = [by_id[e] for e in order if e in by_id]
        if q.mode == "lite":
            result.hits = []
        elif q.mode == "max":
            result.hits = result.hits + self._backfill(result, limit=2 * q.top_k)

    def _backfill(self, result: Recall, limit: int) -> list[Hit]:
        """Other items of the hits' episodes, episode by episode, in item order, up to ``limit``."""
        have = {h.item.id for h in result.hits}
        wanted = [i for e in result.episodes for i in e.items if i not in have][: max(0, limit - len(result.hits))]
        items = self.mem.items(wanted)
        out = []
        for item_id in wanted:
            if item_id in items:
                out.append(Hit(item=items[item_id], score=0.0, rank=len(result.hits) + len(out) + 1, sources=["episode"]))
        return out

    # -- recall support -----------------------------------------------------------------------

    def facts_for(self, text: str, item_scores: dict[int, float], k: int, as_of: str | None = None) -> list[Fact]:
        """Facts ranked for a query: those stated by the hits or naming the query's entities,
        scored by word overlap with the query plus the best score of the items stating them."""
        entity_ids = self.query_entities(text)
        fids = {f for f, _ in self.store.facts_of_items(list(item_scores))}
        for e in entity_ids:
            fids |= {r[0] for r in self.store.fact_rows(entity_id=e, latest=FACTS_PER_ENTITY)}
        from ..as_of import said_on_items
        from .in_time import facts_in_time
        facts = self._facts(sorted(fids))
        facts = facts_in_time(facts, said_on_items(self.store, self.mem.index, sorted({i for f in facts for i in f.provenance})), as_of)
        if not facts:
            return []
        query_terms = set(lexical_tokens(text))
        top_item = max(item_scores.values(), default=0.0) or 1.0
        for f in facts:
            terms = self._fact_terms.get(f.id)
            if terms is None:
                terms = self._fact_terms[f.id] = frozenset(lexical_tokens(f.triple()))
            overlap = len(terms & query_terms) / max(len(query_terms), 1)
            stated = max((item_scores.get(i, 0.0) for i in f.provenance), default=0.0) / top_item
            named = 0.5 if {f.subject_id, f.object_id} & set(entity_ids) else 0.0
            f.score = round(overlap + stated + named, 6)
        for f in facts:
            f.seen_at = as_of
        facts.sort(key=lambda f: (f.state(as_of) != "current", -f.score, f.id))
        return facts[:k]

    def episodes_of_items(self, item_ids: Sequence[int]) -> dict[int, int]:
        return self.store.episodes_of_items(list(item_ids))

    # -- browse -------------------------------------------------------------------------------

    def _facts(self, ids: Sequence[int] | None = None, entity_id: int | None = None) -> list[Fact]:
        from .timeline import fact_of_row
        rows = self.store.fact_rows(ids, entity_id) if ids is not None or entity_id is not None else self.store.fact_rows()
        sources = self.store.fact_sources_of([r[0] for r in rows])
        return [fact_of_row(r, sources.get(r[0], [])) for r in rows]

    def facts(self, entity: str | int | None = None, limit: int | None = None, as_of: Any = None) -> list[Fact]:
        """Every fact the store believes, or those naming an entity (by id, or by name: exact
        key, else substring); with ``as_of``, only those that held and were said by then."""
        from ..as_of import parse_as_of, said_on_items
        from .in_time import facts_in_time
        out = self._believed(entity)
        when = parse_as_of(as_of)
        if when is not None:
            out = sorted(facts_in_time(out, said_on_items(self.store, self.mem.index, sorted({i for f in out for i in f.provenance})), when),
                         key=lambda f: f.id)
            for f in out:
                f.seen_at = when
        return out[:limit] if limit else out

    def _believed(self, entity: str | int | None) -> list[Fact]:
        if entity is None:
            out = self._facts()
        else:
            ids = self._entity_ids_for(entity)
            seen: dict[int, Fact] = {}
            for eid in ids:
                for f in self._facts(entity_id=eid):
                    seen[f.id] = f
            out = sorted(seen.values(), key=lambda f: f.id)
        return out

    def fact(self, fact_id: int) -> Fact:
        found = self._facts([fact_id])
        if not found:
            raise KnowledgeError(f"no fact with id {fact_id}")
        return found[0]

    def _entity_ids_for(self, entity: str | int) -> list[int]:
        if isinstance(entity, int) or str(entity).isdigit():
            return [int(entity)]
        key = entity_key(str(entity))
        exact = self.registry.lookup(key)
        if exact is not None:
            return [exact]
        return [eid for k, eid in self.registry.ids.items() if key and key in k]

    def item_entities(self, item_id: int) -> list[Entity]:
        """The entities one item mentions (as speaker, title, name, tag or link)."""
        ids = list(dict.fromkeys(eid for _item, eid, _surface, _role in self.store.mentions_of_items([item_id])))
        return [self.entity(eid) for eid in ids]

    def entities(self, kind: str | None = None, limit: int | None = None) -> list[Entity]:
        """Entities, most mentioned first (ties by id), with their counts and synonyms."""
        counts = self.store.entity_counts()
        synonyms: dict[int, list[int]] = defaultdict(list)
        for a, b, _w in self.store.synonym_rows():
            synonyms[a].append(b)
            synonyms[b].append(a)
        out = [Entity(id=eid, name=name, key=key, kind=k, items=counts.get(eid, (0, 0))[0],
                      facts=counts.get(eid, (0, 0))[1], synonyms=sorted(synonyms.get(eid, [])))
               for eid, key, name, k in self.store.entity_rows() if kind is None or k == kind]
        out.sort(key=lambda e: (-(e.items + e.facts), e.id))
        return out[:limit] if limit else out

    def entity(self, entity_id: int) -> Entity:
        row = self.store.entity_row(entity_id)
        if row is None:
            raise KnowledgeError(f"no entity with id {entity_id}")
        items, facts = self.store.entity_counts().get(entity_id, (0, 0))
        syn = sorted({b if a == entity_id else a for a, b, _ in self.store.synonym_rows() if entity_id in (a, b)})
        return Entity(id=row[0], key=row[1], name=row[2], kind=row[3], items=items, facts=facts, synonyms=syn)

    def episodes(self, source_id: int | None = None, ids: Sequence[int] | None = None) -> list[Episode]:
        """Live episodes (all, of one source, or by id) with items, events and images."""
        rows = self.store.episode_rows(ids=ids, source_id=source_id)
        if not rows:
            return []
        members = self.store.items_of_episodes([r[0] for r in rows])
        all_items = self.mem.items([i for ids_ in members.values() for i in ids_])
        events = self.store.events_of_items(list(all_items))
        merged: dict[int, list[int]] = defaultdict(list)
        for gone, into in self.store.merged_into([r[0] for r in rows]):
            merged[into].append(gone)
        out = []
        for eid, source, session, summary, origin, _m in rows:
            items = sorted((all_items[i] for i in members.get(eid, []) if i in all_items), key=lambda i: (i.source_id, i.position))
            ev = _events_for(items, events)
            times = sorted(i.timestamp for i in items if i.timestamp)
            out.append(Episode(
                id=eid, source_id=source, session=session, summary=summary, items=[i.id for i in items], events=ev,
                participants=list(dict.fromkeys(p for e in ev for p in e.participants)) or
                list(dict.fromkeys(i.speaker for i in items if i.speaker)),
                time_start=times[0] if times else None, time_end=times[-1] if times else None,
                images=[{"item_id": i.id, "url": i.meta.get("image_url", ""), "caption": i.meta["image_caption"]}
                        for i in items if i.meta.get("image_caption")],
                merged_from=sorted(merged.get(eid, [])), origin=origin))
        return out

    def episode(self, episode_id: int) -> Episode:
        found = self.episodes(ids=[episode_id])
        if not found:
            raise KnowledgeError(f"no episode with id {episode_id}")
        return found[0]

    # -- curation -----------------------------------------------------------------------------

    def _would_orphan(self, entity_id: int | None) -> bool:
        """Whether an entity is named by one fact and nothing else."""
        if entity_id is None:
            return False
        items, facts = self.store.entity_counts().get(entity_id, (0, 0))
        return items == 0 and facts <= 1

    @_atomic
    def edit_fact(self, fact_id: int, *, subject: str | None = None, predicate: str | None = None,
                  object: str | None = None, time: str | None = None, dry_run: bool = False) -> dict[str, Any]:
        """Change a fact's words or time. Refused when it would duplicate another fact or leave
        an entity that nothing else names."""
        old = self.fact(fact_id)
        s, p, o = subject if subject is not None else old.subject, predicate if predicate is not None else old.predicate, \
            object if object is not None else old.object
        if not all(x.strip() for x in (s, p, o)):
            raise KnowledgeError(f"fact {fact_id}: subject, predicate and object must not be empty")
        key = fact_key(s, p, o)
        other = self.store.fact_id_by_key(key)
        if other is not None and other != fact_id:
            raise KnowledgeError(f"fact {fact_id}: the edit would duplicate fact {other}; delete one of them instead")
        subject_id = old.subject_id if s == old.subject else self.registry.lookup(entity_key(s))
        object_id = self.registry.lookup(entity_key(o))
        if subject_id is None:
            raise KnowledgeError(f"fact {fact_id}: no entity is named {s!r}; rename or create the entity first")
        for before, after in ((old.subject_id, subject_id), (old.object_id, object_id)):
            if before is not None and before != after and self._would_orphan(before):
                name = self.registry.names.get(before, str(before))
                raise KnowledgeError(f"fact {fact_id}: the edit would orphan entity {name!r} (nothing else names it);"
                                     " delete the fact instead")
        when = old.time if time is None else _typed_time(time)
        if (s, p, o, when) == (old.subject, old.predicate, old.object, old.time):
            return {"facts_changed": 0, "fact": fact_id}  # nothing to change: not even who stated it
        with self._curating(dry_run, "fact.edited", f"fact {fact_id}: {s} —{p}→ {o}"):
            self.store.update_fact(fact_id, key, s, p, o, subject_id, object_id, when)
        if not dry_run:
            self.load()
        return {"facts_changed": 1, "fact": fact_id}

    @_atomic
    def add_fact(self, subject: str, predicate: str, object: str, provenance: Sequence[int], *, time: str | None = None,
                 dry_run: bool = False) -> dict[str, Any]:
        """State a fact by hand (origin ``user``), supported by stored items; its subject
        becomes an entity if none has that name. Refused when it would duplicate a fact."""
        if not all(x.strip() for x in (subject, predicate, object)):
            raise KnowledgeError("a fact needs a subject, a predicate and an object")
        missing = sorted(set(provenance) - set(self.mem.items(provenance)))
        if not provenance or missing:
            raise KnowledgeError(f"a fact needs stored items as provenance; no item with id {missing[0] if missing else '(none given)'}")
        time = _typed_time(time)
        key = fact_key(subject, predicate, object)
        other = self.store.fact_id_by_key(key)
        if other is not None:
            raise KnowledgeError(f"that fact is already fact {other}; edit it instead")
        draft = FactDraft(subject, predicate, object, entity_key(subject), entity_key(object), time)
        self.registry.rollback()
        batch = _Batch()
        with self._curating(dry_run, "fact.added", f"{subject} —{predicate}→ {object}"):
            ids = self._register_entities([Extraction(facts=[draft])], batch)
            fid = self.store.insert_fact(key, subject, predicate, object, ids.get(draft.subject_key),
                                         self.registry.lookup(draft.object_key), time, "user")
            self.store.insert_fact_sources((fid, i) for i in provenance)
        self.load()  # also drops what a dry run staged
        return {"facts_added": 1, "fact": None if dry_run else fid}

    @_atomic
    def delete_fact(self, fact_id: int, dry_run: bool = False) -> dict[str, Any]:
        """Delete a fact; entities that nothing else names go with it."""
        self.fact(fact_id)
        with self._curating(dry_run, "fact.deleted", f"fact {fact_id}"):
            self.store.delete_facts([fact_id])
            orphans = self.store.orphan_entities()
            self.store.delete_entities(orphans)
        if not dry_run:
            self.load()
        return {"facts_deleted": 1, "entities_deleted": len(orphans)}

    @_atomic
    def rename_entity(self, entity_id: int, name: str, dry_run: bool = False) -> dict[str, Any]:
        """Give an entity a new name; facts that spelled the old name follow."""
        old = self.entity(entity_id)
        key = entity_key(name)
        if not key:
            raise KnowledgeError(f"entity {entity_id}: the new name is empty")
        other = self.store.entity_id_by_key(key)
        if other is not None and other != entity_id:
            raise KnowledgeError(f"entity {entity_id}: {name!r} is already entity {other}; merge them instead")
        with self._curating(dry_run, "entity.renamed", f"{old.name} → {name}"):
            self.store.rename_entity_row(entity_id, key, name)
            n = self.store.rename_in_facts(entity_id, old.name, name)
        if not dry_run:
            self.load()
        return {"entities_renamed": 1, "facts_changed": n}

    @_atomic
    def merge_entities(self, keep_id: int, other_id: int, dry_run: bool = False) -> dict[str, Any]:
        """Fold ``other_id`` into ``keep_id``: mentions, facts and synonyms move; the mentions keep
        their surface forms, so :meth:`split_entity` can separate them again."""
        if keep_id == other_id:
            raise KnowledgeError("an entity cannot be merged with itself")
        keep, other = self.entity(keep_id), self.entity(other_id)
        with self._curating(dry_run, "entity.merged", f"{other.name} into {keep.name}"):
            moved = self.store.move_mentions(other_id, keep_id)
            facts = self.store.repoint_facts(other_id, keep_id)
            self.store.move_synonyms(other_id, keep_id)
            self.store.delete_entities([other_id])
        if not dry_run:
            self.load()
        return {"entities_merged": 1, "kept": keep.name, "removed": other.name, "mentions_moved": moved, "facts_moved": facts}

    @_atomic
    def split_entity(self, entity_id: int, surfaces: Sequence[str], name: str | None = None,
                     dry_run: bool = False) -> dict[str, Any]:
        """Move the mentions written as ``surfaces`` (and the facts whose subject or object is
        spelled so) to a new entity named ``name`` (default: the first surface)."""
        self.entity(entity_id)
        forms = {surface for _item, surface, _role in self.store.mentions_of_entity(entity_id)}
        chosen = [s for s in surfaces if s in forms]
        if not chosen:
            raise KnowledgeError(f"entity {entity_id} has no mention written {', '.join(map(repr, surfaces))}; "
                                 f"its forms are: {', '.join(sorted(forms)) or 'none'}")
        if set(chosen) == forms:
            raise KnowledgeError(f"entity {entity_id}: splitting off every form would orphan it; rename it instead")
        new_name = name or chosen[0]
        key = entity_key(new_name)
        if self.store.entity_id_by_key(key) is not None:
            raise KnowledgeError(f"{new_name!r} is already an entity; choose another name")
        keys = {entity_key(s) for s in chosen}
        with self._curating(dry_run, "entity.split", f"{new_name} from entity {entity_id}"):
            new_id = self.store.upsert_entities([(key, new_name, self.registry.kinds.get(entity_id, "name"))])[key]
            moved = self.store.move_mentions(entity_id, new_id, chosen)
            spelled = [fid for fid, s, _p, o, *_ in self.store.fact_rows(entity_id=entity_id)
                       if entity_key(s) in keys or entity_key(o) in keys]
            facts = self.store.repoint_facts(entity_id, new_id, spelled)
        if not dry_run:
            self.load()
        return {"entities_created": 1, "entity": new_id if not dry_run else None, "mentions_moved": moved, "facts_moved": facts}

    @_atomic
    def merge_episodes(self, keep_id: int, other_id: int, dry_run: bool = False) -> dict[str, Any]:
        """Join two episodes of one source; every item keeps its own rows, and split undoes it."""
        keep, other = self.episode(keep_id), self.episode(other_id)
        if keep_id == other_id:
            raise KnowledgeError("an episode cannot be merged with itself")
        if keep.source_id != other.source_id:
            raise KnowledgeError(f"episodes {keep_id} and {other_id} come from different sources")
        with self._curating(dry_run, "episode.merged", f"episode {other_id} into {keep_id}"):
            self.store.merge_episode_rows(keep_id, other_id)
            self._resummarize(keep_id)
        if not dry_run:
            self.load()
        return {"episodes_merged": 1, "items_moved": len(other.items)}

    @_atomic
    def split_episode(self, episode_id: int, dry_run: bool = False) -> dict[str, Any]:
        """Undo the merges into an episode: items go back to the episodes they were built in."""
        ep = self.episode(episode_id)
        if not ep.merged_from:
            raise KnowledgeError(f"episode {episode_id} holds no merged episode to split off")
        with self._curating(dry_run, "episode.split", f"episode {episode_id}"):
            restored = self.store.split_episode_rows(episode_id)
            for eid in [episode_id, *restored]:
                self._resummarize(eid)
        if not dry_run:
            self.load()
        return {"episodes_restored": len(restored), "episodes": restored}

    def _resummarize(self, episode_id: int) -> None:
        """Recompute a rule-built summary after its items changed (an LLM summary is kept)."""
        row = self.store.episode_rows(ids=[episode_id])
        if not row or row[0][4] != "rule":
            return
        ids = self.store.items_of_episodes([episode_id]).get(episode_id, [])
        items = sorted(self.mem.items(ids).values(), key=lambda i: i.position)
        events = self.store.events_of_items(ids)
        self.store.set_episode_summary(episode_id, summarize(items, _events_for(items, events)))

    # -- facts through time -------------------------------------------------------------------

    def conflicts(self, status: str | None = "open") -> list:
        return self.inbox.conflicts(status)

    def conflict(self, conflict_id: int):
        return self.inbox.conflict(conflict_id)

    def decide(self, conflict_id: int, choice: str, dry_run: bool = False):
        with self._curating(dry_run, f"conflict.{choice}", f"conflict {conflict_id}"):
            decision = self.inbox.decide(conflict_id, choice)
        self.load()
        return decision

    def undo(self, decision_id: int, dry_run: bool = False):
        with self._curating(dry_run, "decision.undone", f"decision {decision_id}"):
            decision = self.timeline.undo(decision_id)
        self.load()
        return decision

    def decisions(self, limit: int | None = 50, fact_id: int | None = None) -> list:
        return self.timeline.decisions(limit, fact_id)

    def fact_history(self, fact_id: int) -> list[Fact]:
        self.fact(fact_id)
        return self.timeline.history(fact_id)

    def rescan(self, dry_run: bool = False) -> dict[str, Any]:
        with self._curating(dry_run, "facts.rescanned", "supersession rules"):
            rules = self.timeline.reload_rules()
            report = self.timeline.rescan()
            report.conflicts += self.inbox.find_duplicates([r[0] for r in self.store.entity_rows()])
        self.load()
        return {**report.to_dict(), "rules": [str(p) for p in rules.files]}

    # -- export / import ----------------------------------------------------------------------

    def export_records(self) -> list[dict[str, Any]]:
        """The whole knowledge state as a portable snapshot: entities with their mentions,
        synonymy, every fact with its origin, time and provenance, every episode (merged ones
        too) with its items, summary and events. See :mod:`.portable` for the format and why a
        snapshot rather than a replay of curation."""
        return snapshot_records(self.store)

    @contextmanager
    def importing(self, path: str | Path, records: list[tuple[int, dict[str, Any]]],
                  exported: dict[str, tuple[int, list[int]]]) -> Iterator[None]:
        """Frame ``Memory.import_``: check the export's knowledge records (``(line, record)``
        pairs) before anything is written — a bad one raises :class:`engine.ingest.IngestError`
        naming its line — then, while the import ingests, restore each source the snapshot
        covers from it instead of extracting it (:meth:`on_ingest`). ``exported`` maps a source
        name to its exported id and its items' exported ids, in the order they are ingested."""
        checked = read_records(path, records, dict(exported.values()))
        self._import = _Import(checked, exported)
        try:
            yield
        finally:
            self._import = None

    def import_records(self, records: list[dict[str, Any]], id_map: dict[Any, int]) -> None:
        """Lay version-1 records (LLM and user facts, LLM events and summaries) over the items
        this import stored by extraction (one transaction); a version-2 snapshot was restored
        source by source as it was ingested. Items of sources that were already present are
        left alone (an import never overwrites the target's curation); records whose items did
        not come back are skipped. ``records`` were read and checked by :meth:`importing`."""
        if self._import is None or not self._import.records.legacy:
            return
        stored = self._import.stored
        id_map = {old: new for old, new in id_map.items() if new in stored}
        self.registry.rollback()
        batch = self._batch = _Batch()
        with self.store.transaction():
            for r in self._import.records.legacy:
                if r["type"] == "knowledge.fact":
                    self._import_fact(r, id_map, batch)
                else:
                    self._import_episode(r, id_map)
        self.on_indexed([])

    def _import_fact(self, r: dict[str, Any], id_map: dict[Any, int], batch: _Batch) -> None:
        items = [id_map[i] for i in r.get("provenance", []) if i in id_map]
        if not items:
            return
        draft = FactDraft(r["subject"], r["predicate"], r["object"], entity_key(r["subject"]), entity_key(r["object"]), r.get("time"))
        ids = self._register_entities([Extraction(facts=[draft])], batch)
        fid = self._dedup_or_insert(draft, self._fact_vectors([(draft.subject, draft.predicate, draft.object)])[0], ids,
                                    batch, r.get("origin", "user"))
        self.store.insert_fact_sources((fid, i) for i in items)
        batch.provenance += [(fid, i) for i in items]

    def _import_episode(self, r: dict[str, Any], id_map: dict[Any, int]) -> None:
        events = [(id_map[e["item_id"]], "llm", {k: e.get(k) for k in EVENT_ROLES}) for e in r.get("events", [])
                  if e.get("item_id") in id_map]
        self.store.insert_events(events)
        episode_of = self.store.episodes_of_items([id_map[i] for i in r.get("items", []) if i in id_map])
        if r.get("summary") and episode_of:
            self.store.set_episode_summary(min(episode_of.values()), r["summary"], "llm")

    def _restore(self, source: Source, items: list[Item], part: SourcePart, id_map: dict[int, int], batch: _Batch) -> None:
        """Inside the source's ingest transaction: write its part of the snapshot for its new
        items (``id_map``: exported → new item ids). Entities and facts the target already has
        (same key) keep their name, kind, words and time, and only gain these items."""
        entity_ids = self._restore_entities(part, id_map, batch)
        self._restore_facts(part, id_map, entity_ids, batch)
        episode_ids = {ep.id: self.store.insert_episode(source.id, ep.session, ep.summary, ep.origin) for ep in part.episodes}
        self.store.set_merged_into((episode_ids[ep.id], episode_ids[ep.merged_into])
                                   for ep in part.episodes if ep.merged_into is not None)
        home = {i: episode_ids[ep.id] for ep in part.episodes for i in ep.home}
        self.store.insert_episode_members((id_map[i], episode_ids[ep.id], home[i]) for ep in part.episodes for i in ep.items)
        self.store.insert_events((id_map[i], origin, body) for ep in part.episodes for i, origin, body in ep.events)
        for ep in part.episodes:
            _clique(batch, sorted(id_map[i] for i in ep.items))
        _link_next(items, batch)
        if self.llm_configured:  # what the LLM already read stays as curated
            described = {i for ep in part.episodes for i, origin, _body in ep.events if origin == "llm"}
            self.store.enqueue_extraction([new for old, new in id_map.items() if old not in described])

    def _restore_entities(self, part: SourcePart, id_map: dict[int, int], batch: _Batch) -> dict[int, int]:
        """Exported → target ids of the entities this part names (new ones inserted), with
        their mentions and the synonymy of the new ones."""
        snapshot = self._import.records.snapshot  # type: ignore[union-attr]
        named = {e for _i, e, _s, _r in part.mentions} | {e for f in part.facts for e in (f.subject_entity, f.object_entity)}
        records = {e: snapshot.entities[e] for e in sorted(named - {None})}
        known = self.store.entity_ids([r.key for r in records.values()])
        fresh = self.store.upsert_entities([(r.key, r.name, r.kind) for r in records.values() if r.key not in known])
        target = {e: known.get(r.key) or fresh[r.key] for e, r in records.items()}
        for e, r in records.items():
            if r.key in fresh:
                self.registry.stage(target[e], r.key, r.name, r.kind)
                batch.entities.append(target[e])
        mentions = [(id_map[i], target[e], surface, role) for i, e, surface, role in part.mentions]
        self.store.insert_mentions(mentions)
        for item, eid, _surface, role in mentions:
            batch.edge(_edge_type(role), item, -eid)
        created = {e for e, r in records.items() if r.key in fresh}
        pairs = [(a, b, w) for a, b, w in snapshot.synonyms if a in created or b in created]
        ids = self.store.entity_ids([snapshot.entities[e].key for a, b, _w in pairs for e in (a, b)])
        rows = [(ids[ka], ids[kb], w) for a, b, w in pairs
                if (ka := snapshot.entities[a].key) in ids and (kb := snapshot.entities[b].key) in ids]
        self.store.insert_synonyms(rows)
        for a, b, w in rows:
            batch.edge("synonym", -a, -b, w)
        return target

    def _restore_facts(self, part: SourcePart, id_map: dict[int, int], entity_ids: dict[int, int], batch: _Batch) -> None:
        """Insert this part's facts (a fact the target already has by key only gains provenance)."""
        keyed = [(fact_key(f.subject, f.predicate, f.object), f) for f in part.facts]
        fact_ids = self.store.fact_ids([k for k, _f in keyed])
        provenance = []
        for key, f in keyed:
            fid = fact_ids.get(key)
            if fid is None:
                sid, oid = entity_ids.get(f.subject_entity), entity_ids.get(f.object_entity)
                fid = fact_ids[key] = batch.facts[key] = self.store.insert_fact(
                    key, f.subject, f.predicate, f.object, sid, oid, f.time, f.origin)
                self._subject_vectors.pop(sid, None)  # read again from the store on next use
                if sid is not None and oid is not None and sid != oid:
                    batch.edge("fact", -sid, -oid)
            provenance += [(fid, id_map[i]) for i in f.provenance if i in id_map]
        self.store.insert_fact_sources(provenance)
        batch.provenance += provenance

    # -- the LLM queue ------------------------------------------------------------------------

    @property
    def llm_configured(self) -> bool:
        s = self.settings
        return bool(s.llm_base_url and s.llm_model)

    def queue_status(self) -> dict[str, int]:
        return self.store.queue_counts()

    def apply_llm(self, episode_id: int | None, items: list[Item], result: "LLMExtraction") -> None:
        """Store a validated LLM reply for these items in one transaction: its events and facts
        replace what the rule extractor (or an earlier LLM run) said about these items — facts
        stated elsewhere too only lose these items — its summary replaces a rule-built one, and
        the items leave the queue."""
        from .llm import as_extractions

        self.registry.rollback()
        batch = self._batch = _Batch()
        extractions = as_extractions(items, result)
        item_ids = [i.id for i in items]
        try:
            with self.store.transaction():
                ids = self._register_entities(extractions, batch)
                self.store.delete_facts(self.store.drop_rule_provenance(item_ids))
                self.store.delete_events(item_ids, "llm")
                self.store.insert_events((e.item_id, "llm", e.body()) for ex in extractions for e in ex.events)
                self._store_facts(items, extractions, ids, batch, origin="llm")
                if episode_id is not None and result.summary:
                    self.store.set_episode_summary(episode_id, result.summary, "llm")
                self.store.mark_extraction(item_ids, "done")
                self.mem.activity.record("facts.llm", f"{len(items)} item(s) read by the LLM", count=len(batch.facts))
        except BaseException:
            self.registry.rollback()
            self._batch = None
            self._subject_vectors.clear()
            raise
        self._batch = None
        self.load()  # facts may have gone: rebuild rather than patch

    def process_queue(self, *, retry_failed: bool = True, limit: int | None = None,
                      progress: Callable[[int, int, str], None] | None = None) -> dict[str, Any]:
        """Run the LLM extractor over queued items, episode by episode (see :mod:`.llm`)."""
        from .llm import run_queue

        if not self.llm_configured:
            raise KnowledgeError("no LLM endpoint is configured (set MNEMOSCOPE_LLM_BASE_URL and MNEMOSCOPE_LLM_MODEL)")

        return run_queue(self, retry_failed=retry_failed, limit=limit, progress=progress)


def _normalised(scores: np.ndarray) -> np.ndarray:
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)


def _head(key: str) -> str:
    """The head word of a phrase's key: its last content word ("adoption agencies" → "agencies")."""
    return next((w for w in reversed(key.split()) if w.isalpha() and w not in STOPWORDS), "")


def _home(ex: Extraction, ids: dict[str, int]) -> int | None:
    """The entity an item is about: its speaker, else its title (None when it has neither)."""
    for role in ("speaker", "title"):
        key = next((k for _s, k, _kind, r in ex.mentions if r == role), None)
        if key is not None:
            return ids.get(key)
    return None


def _edge_type(role: str) -> str:
    """The graph edge type of a mention role (speaker and mention are both ``mention``)."""
    return {"tag": "link", "link": "link", "title": "title"}.get(role, "mention")


def _link_next(items: list[Item], batch: _Batch) -> None:
    """``next`` edges between consecutive items of one session (or one heading)."""
    ordered = sorted(items, key=lambda i: i.position)
    for a, b in zip(ordered, ordered[1:]):
        if session_of(a) == session_of(b):
            batch.edge("next", a.id, b.id)


def _clique(batch: _Batch, ids: list[int]) -> None:
    for n, a in enumerate(ids):
        for b in ids[n + 1:]:
            batch.edge("episode", a, b)


def _events_for(items: list[Item], events: dict[int, list[tuple[str, dict[str, Any]]]]) -> list[Event]:
    """Events of these items; where the LLM has described an item, its events replace the rule's."""
    out = []
    for item in items:
        rows = events.get(item.id, [])
        best = [r for r in rows if r[0] == "llm"] or rows
        out += [Event(item_id=item.id, origin=origin, **body) for origin, body in best]
    return out
