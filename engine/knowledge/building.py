"""Ingest-time knowledge: what the knowledge area derives from items as they are stored.

At ingest (inside the source's transaction) every item is read by the rule-based extractor:
its entities and mentions, facts (deduplicated by :mod:`.dedup`: normalised key, then vector
similarity within the same subject), 5W1H events, and the episode it belongs to. A fact's subject becomes an
entity only when it is a name; a common noun phrase ("the dough", "poke test helps") files the
fact under the entity its item is about and joins the graph as a phrase node instead. The rows
are written in the transaction; what the in-memory state gains (entities, fact keys, graph
edges) is staged in a :class:`Batch` and applied after the commit (:meth:`on_indexed`), so a
failed ingest leaves memory as it was. Each fact holds from its statement's own date, else the
item's; after a source's facts are stored, the supersession rules run on the new ones and the new
entities are checked for near-duplicates (:mod:`.timeline`, :mod:`.inbox`). When an LLM endpoint
is configured the items also join the extraction queue (:mod:`.queue`).

:class:`KnowledgeBuilding` holds the area's in-memory state (the entity registry, the typed
graph, the fact keys and the caches the dedup reads) and builds it from the store
(:meth:`load`), from an ingest, or from another process's commits; the other parts of the area
(:mod:`.reading`, :mod:`.curation`, :mod:`.transfer`, :mod:`.queue`) build on it.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, AbstractSet

import numpy as np

from ..activity import FACTS_EXTRACTED
from ..area import WHOLE, Area, Piece
from ..array_file import ArrayFile
from ..dense import one_blas_thread
from ..records import Item, Source
from ..text import STOPWORDS
from .dedup import RowMatrix, fact_key, fact_words
from .entities import EntityRegistry, entity_key, name_vector, nickname_of, short_forms
from .episodes import group_items, session_of, summarize
from .extract import Extraction, RuleExtractor
from .graph import EDGE_TYPES, KnowledgeGraph
from .inbox import Inbox
from .records import FactDraft
from .timeline import Timeline, statement_valid_from

if TYPE_CHECKING:
    from ..area import Engine

NICKNAME_WEIGHT = 0.9
KIND_RANK = {"speaker": 3, "title": 2, "name": 1, "tag": 0}  # one name seen in two roles keeps the stronger


@dataclass
class Batch:
    """Rows written in the ingest transaction, applied to memory after the commit."""

    entities: list[int] = field(default_factory=list)
    kinds: dict[int, str] = field(default_factory=dict)  # known entities seen in a stronger role
    facts: dict[str, int] = field(default_factory=dict)  # key → fact id
    provenance: list[tuple[int, int]] = field(default_factory=list)  # (fact id, item id) stated in this batch
    phrases: list[tuple[str, int]] = field(default_factory=list)  # (phrase, item id) for the graph
    gone: set[int] = field(default_factory=set)  # facts deleted by this write: no dedup lands on them
    edges: dict[str, tuple[list[int], list[int], list[float]]] = field(
        default_factory=lambda: {t: ([], [], []) for t in EDGE_TYPES})

    def edge(self, kind: str, a: int, b: int, w: float = 1.0) -> None:
        xs, ys, ws = self.edges[kind]
        xs.append(a), ys.append(b), ws.append(w)


class KnowledgeBuilding(Area):
    """The knowledge area's state, built from the store and kept current by each ingest."""

    name = "knowledge"
    deferred = True

    def __init__(self, mem: Engine) -> None:
        super().__init__(mem)
        self.store = mem.store
        self.registry = EntityRegistry()
        self.extractor = RuleExtractor(self.registry)
        self.graph = KnowledgeGraph()
        self._fact_ids: dict[str, int] = {}
        self._subject_vectors: dict[int, RowMatrix] = {}  # per subject, "s p o" vectors of its facts
        self._fact_terms: dict[int, frozenset[str]] = {}
        self._name_vectors: dict[int, np.ndarray] = {}
        self._batch: Batch | None = None
        self._read_to: int | None = None  # the last item the extractor read, in a write that committed
        self.timeline = Timeline(self.store, self.registry, lambda: self.settings.supersession_rules)
        self.inbox = Inbox(self.store, self.timeline, mem.items)

    # -- loading ------------------------------------------------------------------------------

    def load(self) -> None:
        """Rebuild the registry, the fact keys and the graph from the store."""
        rows = self._load_keys()
        with self.graph.lock:  # a recall in another thread sees the old graph or the new one
            self._load_graph(rows)

    def _load_keys(self) -> list[tuple[int, str, str, str]]:
        """The entity registry and the fact keys from the store (the dedup caches emptied); the
        entity rows read."""
        store = self.store
        rows = store.entity_rows()
        self.registry.load(rows)
        self._fact_ids.clear()
        self._subject_vectors.clear()
        self._fact_terms.clear()
        self._name_vectors.clear()
        for fid, key, _subject_id in store.fact_keys():
            self._fact_ids[key] = fid
        return rows

    def saved(self) -> ArrayFile:
        """The graph (the most of a load's cost: every mention, fact, episode and item row read
        and linked); the registry and the fact keys are read from the store at a restore."""
        arrays, phrases = self.graph.arrays()
        return ArrayFile({"phrases": phrases}, arrays)

    def restore(self, saved: ArrayFile) -> None:
        phrases = saved.meta["phrases"]
        if not isinstance(phrases, list) or not all(isinstance(p, str) for p in phrases):
            raise ValueError("saved phrases are not a list of strings")
        self._load_keys()
        self.graph.restore(saved.arrays, phrases)

    def _load_graph(self, rows: list[tuple[int, str, str, str]]) -> None:
        store, g = self.store, self.graph
        g.clear()
        g.add_entities([r[0] for r in rows])
        batch = Batch()
        mentions, facts = store.mention_rows(), store.fact_rows()
        _stored_edges(mentions, facts, batch)
        sources = store.fact_sources_of([r[0] for r in facts])
        self._link_statements(facts, [(f, i) for f, items in sources.items() for i in items], mentions, batch)
        for a, b, w in store.synonym_rows():
            batch.edge("synonym", -a, -b, w)
        members: dict[int, list[int]] = defaultdict(list)
        for item_id, episode_id, _home in store.episode_item_rows():
            members[episode_id].append(item_id)
        for ids in members.values():
            clique(batch, sorted(ids))
        previous: tuple | None = None
        index = self.mem.index
        waiting = set(index.item_ids[index.pending].tolist())  # a deferred ingest's: linked when this area reads them
        for item_id, source_id, _pos, kind, title, session in store.item_sequence_rows():
            if item_id in waiting:
                continue
            group = (source_id, f"session {session}" if kind == "turn" and session is not None else title or "")
            if previous is not None and previous[1] == group:
                batch.edge("next", previous[0], item_id)
            previous = (item_id, group)
        self._apply_edges(batch)

    def _apply_edges(self, batch: Batch) -> None:
        for kind, (a, b, w) in batch.edges.items():
            if a:
                self.graph.add_edges(kind, a, b, w)
        self.graph.add_phrases(batch.phrases)

    def _link_statements(self, facts: list[tuple], provenance: list[tuple[int, int]],
                         mentions: list[tuple[int, int, str, str]], batch: Batch) -> None:
        """What stating a fact adds to the graph, per (fact, item) pair: its subject entity meets
        the other entities its object names (those the item mentions: "Gandhi —[founded]→ the
        Navajivan weekly" joins Gandhi and Navajivan), and the item joins the phrase nodes of the
        fact's object and of a subject that is no name (their head words: "adoption agencies" →
        "agencies"). Read from stored rows, so ingest and a reload build the same edges."""
        keys = self.registry.keys
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

    # -- ingest -------------------------------------------------------------------------------

    def on_ingest(self, source: Source, items: list[Item], piece: Piece = WHOLE) -> None:
        """Inside the source's transaction: extract its entities, mentions, facts, events and
        episodes by rule, store them, and stage what the graph gains (see :meth:`on_indexed`).
        A piece of a source continues the extractor's reading (its speakers, the people it
        introduced, whom "she" means) when this area read the item before it in a write that
        committed; only this path adds to what the source's later pieces take as unknown
        (``extractor.fresh``), not a hand edit or an import between two pieces."""
        batch = self._begin_batch()
        if piece.before is None or piece.before.id != self._read_to:
            self.extractor.reset()
        self._read_to = None  # until this write commits: a piece that fails is read again afresh, as after a reopen
        extractions = [self.extractor.extract(item) for item in items]
        ids = self._register_entities(extractions, batch)
        new = set(batch.entities)
        self.extractor.fresh.update(key for key, eid in ids.items() if eid in new)  # (for the source's next piece)
        mentions = []
        for item, ex in zip(items, extractions):
            for surface, key, _kind, role in ex.mentions:
                mentions.append((item.id, ids[key], surface, role))
                batch.edge(edge_type(role), item.id, -ids[key])
        self.store.insert_mentions(mentions)
        self._store_facts(items, extractions, ids, batch, origin="rule")
        self.timeline.apply_rules(sorted(batch.facts.values()))
        self.inbox.find_duplicates(batch.entities)
        self._store_episodes(source, items, extractions, batch, piece.before)
        if batch.facts:
            self.mem.activity.record(FACTS_EXTRACTED, source.name, count=len(batch.facts), source_id=source.id)
        if self.llm_configured:
            self.store.enqueue_extraction([i.id for i in items])

    def _begin_batch(self) -> Batch:
        """A fresh batch for one write (what an ingest that never committed staged is dropped)."""
        self.registry.rollback()
        if self._batch is not None:  # the last ingest never committed: drop what it cached
            self._subject_vectors.clear()
        self._batch = Batch()
        return self._batch

    def cut(self, items: list[Item]) -> int:
        """A piece ends before its last episode, which the next items may still join."""
        drafts = group_items(items, self.settings.episode_window)
        return len(items) - len(drafts[-1].items) if drafts else 0

    def on_indexed(self, items: list[Item]) -> None:
        batch, self._batch = self._batch, None
        self.registry.commit()
        self._read_to = items[-1].id if items else None
        if batch is None:
            return
        for eid, kind in batch.kinds.items():
            self.registry.set_kind(eid, kind)
        self._fact_ids.update(batch.facts)
        if batch.provenance:
            items = sorted({i for _f, i in batch.provenance})
            self._link_statements(self.store.fact_rows(sorted({f for f, _i in batch.provenance})), batch.provenance,
                                  self.store.mentions_of_items(items), batch)
        with self.graph.lock:  # a recall in another thread sees the source's nodes and edges together
            self.graph.add_entities(batch.entities)
            self._apply_edges(batch)

    def on_changed_elsewhere(self, added: list[Item], removed: list[int]) -> None:
        """Items another process stored (its deletions reload this area): what
        :meth:`on_indexed` applied in that process, read back from the rows it wrote."""
        if removed:
            self.load()
            return
        store, ids = self.store, [i.id for i in added]
        known_facts = set(self._fact_ids.values())
        mentions = store.mentions_of_items(ids)
        # new entities, and those the items mention (an ingest makes a known name's kind stronger)
        rows = store.entity_rows_since(max(self.registry.names, default=0), sorted({m[1] for m in mentions}))
        batch = Batch(entities=[r[0] for r in rows if r[0] not in self.registry.names])
        self.registry.take_in(rows)
        provenance = store.facts_of_items(ids)
        stated = sorted({f for f, _i in provenance})
        self._fact_ids.update((key, fid) for fid, key, _subject in store.fact_keys(stated))
        self._subject_vectors.clear()
        facts = store.fact_rows(stated)
        _stored_edges(mentions, facts, batch, known_facts)
        self._link_statements(facts, provenance, mentions, batch)
        for members in store.items_of_episodes(sorted(set(store.episodes_of_items(ids).values()))).values():
            clique(batch, sorted(members))
        by_source: dict[int | None, list[Item]] = defaultdict(list)
        for item in added:
            by_source[item.source_id].append(item)
        for source_id, items in by_source.items():  # (from the item before them: a catch-up's piece continues one)
            before = store.item_before(source_id, min(i.position for i in items)) if source_id is not None else None
            link_next([before, *items] if before is not None else items, batch)
        with self.graph.lock:
            self.graph.add_entities(batch.entities)
            self._apply_edges(batch)

    def _writing(self, dry_run: bool) -> AbstractContextManager:
        return self.store.dry_run() if dry_run else self.store.transaction()

    @property
    def llm_configured(self) -> bool:
        s = self.settings
        return bool(s.llm_base_url and s.llm_model)

    # -- ingest steps -------------------------------------------------------------------------

    def _register_entities(self, extractions: list[Extraction], batch: Batch) -> dict[str, int]:
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

    def _link_synonyms(self, new: list[tuple[int, str, str]], batch: Batch) -> None:
        """Synonymy edges from each new entity to known ones: name similarity ≥ the link
        threshold, or a short name that starts one person's first name ("Mel" → "Melanie", "Nico"
        → "Nicolás": :func:`.entities.nickname_of`)."""
        threshold = self.settings.entity_link_threshold
        names = self.registry.keys
        people: dict[str, int] | None = None  # read once, when a new name needs them
        rows: list[tuple[int, int, float]] = []
        for eid, key, kind in new:
            cands = [c for c in self.registry.candidates(key) if c != eid]
            if cands:
                sims = np.stack([self._name_vector(c, names.get(c, "")) for c in cands]) @ self._name_vector(eid, key)
                rows += [(eid, c, float(s)) for c, s in zip(cands, sims) if s >= threshold]
            if kind == "speaker":  # short forms of a person's first name: "Mel" for "Melanie"
                rows += [(eid, short, NICKNAME_WEIGHT) for form in short_forms(key)
                         if (short := self.registry.lookup(form)) is not None and short != eid]
            elif " " not in key and len(key) >= 3:  # … and a new short form of a known person
                people = self._people() if people is None else people
                if (person := nickname_of(key, people)) is not None:
                    rows.append((eid, people[person], NICKNAME_WEIGHT))
        pairs = {(min(a, b), max(a, b)): w for a, b, w in rows}  # both sides may be new: one edge
        self.store.insert_synonyms((a, b, w) for (a, b), w in pairs.items())
        for (a, b), w in pairs.items():
            batch.edge("synonym", -a, -b, w)

    def _people(self) -> dict[str, int]:
        """The people a new short name may stand for, by key: the speakers (stored or in this
        batch) and those the batch's conversation introduced as persons ("my husband Nicolás",
        "me and Nico"), so that "Nico" is Nicolás in the conversation that says both."""
        registry = self.registry
        people = {key: eid for key, eid in registry.ids.items() if registry.kinds.get(eid) == "speaker"}
        people.update({key: eid for key, (eid, _n, kind) in registry.pending.items() if kind == "speaker"})
        people.update({key: eid for key in self.extractor.people if (eid := registry.lookup(key)) is not None})
        return people

    def _store_facts(self, items: list[Item], extractions: list[Extraction], ids: dict[str, int], batch: Batch,
                     origin: str) -> dict[int, int]:
        """Store the drafts' facts with their items as provenance; returns ``id(draft)`` → fact id.
        BLAS runs on one thread meanwhile: each draft's dedup is a product with a few thousand of
        its subject's rows, and a second OpenBLAS thread spinning beside it cost ten times its CPU."""
        drafts = [(item, _home(ex, ids), d) for item, ex in zip(items, extractions) for d in ex.facts]
        vectors = self._fact_vectors([(d.subject, d.predicate, d.object) for _, _, d in drafts])
        provenance, stored = [], {}
        with one_blas_thread():
            for (item, home, draft), vec in zip(drafts, vectors):
                fid = stored[id(draft)] = self._dedup_or_insert(draft, vec, ids, batch, origin, home, item.timestamp)
                provenance.append((fid, item.id))
        self.store.insert_fact_sources(provenance)
        batch.provenance += provenance
        return stored

    def _dedup_or_insert(self, draft: FactDraft, vec: np.ndarray, ids: dict[str, int], batch: Batch, origin: str,
                         home: int | None = None, said: str | None = None) -> int:
        """The id of the fact ``draft`` states: an existing one (exact key, then similar within
        the same subject), else a new row. A duplicate only ever adds provenance (and may start
        its validity earlier). A subject that is no name and no known entity ("the dough") files
        the fact under ``home``, the entity its item is about (the speaker of a turn, the
        section of a document). ``said``: when the item was said, for the fact's validity."""
        key = fact_key(draft.subject, draft.predicate, draft.object)
        known = self._fact_ids.get(key)  # (a fact this write deleted may still be here; its id may be reused)
        hit = batch.facts.get(key) or (known if known not in batch.gone else None)
        subject_id = ids.get(draft.subject_key) or self.registry.lookup(draft.subject_key)
        if subject_id is None and not draft.subject_named:
            subject_id = home
        rows = self._vectors_of_subject(subject_id) if subject_id is not None else None
        triple_words = fact_words(draft.subject, draft.predicate, draft.object)
        if hit is None and rows is not None:
            near, sim = rows.nearest(vec, triple_words)
            hit = near if sim >= self.settings.fact_dedup_threshold and (near not in batch.gone
                                                                          or near in batch.facts.values()) else None
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
            rows.add(fid, vec, triple_words)
        if subject_id is not None and object_id is not None and subject_id != object_id:
            batch.edge("fact", -subject_id, -object_id)
        return fid

    def _fact_vectors(self, triples: list[tuple[str, str, str]]) -> np.ndarray:
        """Stage-two dedup vectors of "subject predicate object" (the offline hash embedder)."""
        hasher = self.mem.index.hash
        if not triples:
            return np.zeros((0, hasher.dim), dtype=np.float32)
        return hasher.embed([f"{s} {p} {o}" for s, p, o in triples])

    def _vectors_of_subject(self, subject_id: int) -> RowMatrix:
        """The vectors of a subject's stored facts, read from the store on first use."""
        rows = self._subject_vectors.get(subject_id)
        if rows is None:
            stored = self.store.subject_triples(subject_id)
            triples = [(s, p, o) for _id, s, p, o in stored]
            rows = self._subject_vectors[subject_id] = RowMatrix(
                [r[0] for r in stored], self._fact_vectors(triples), [fact_words(*t) for t in triples])
        return rows

    def _store_episodes(self, source: Source, items: list[Item], extractions: list[Extraction], batch: Batch,
                        before: Item | None = None) -> None:
        """The items' episodes (a piece of a source holds whole episodes: :meth:`cut`), and the
        ``next`` edges between them, from the item ``before`` them in the source on."""
        events_of = {item.id: ex.events for item, ex in zip(items, extractions)}
        rows, events = [], []
        for draft in group_items(items, self.settings.episode_window):
            draft_events = [e for i in draft.items for e in events_of[i.id]]
            eid = self.store.insert_episode(source.id, draft.session, summarize(draft.items, draft_events))
            rows += [(i.id, eid) for i in draft.items]
            events += [(e.item_id, "rule", e.body()) for e in draft_events]
            clique(batch, [i.id for i in draft.items])
        self.store.insert_episode_items(rows)
        self.store.insert_events(events)
        link_next([before, *items] if before is not None else items, batch)


def _stored_edges(mentions: list[tuple[int, int, str, str]], facts: list[tuple], batch: Batch,
                  known_facts: AbstractSet[int] = frozenset()) -> None:
    """The edges of stored rows: each mention joins its item and its entity, each fact (but those
    of ``known_facts``, in the graph already) its subject and object entities."""
    for item_id, entity_id, _surface, role in mentions:
        batch.edge(edge_type(role), item_id, -entity_id)
    for fid, _s, _p, _o, sid, oid, *_ in facts:
        if fid not in known_facts and sid is not None and oid is not None and sid != oid:
            batch.edge("fact", -sid, -oid)


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


def edge_type(role: str) -> str:
    """The graph edge type of a mention role (speaker and mention are both ``mention``)."""
    return {"tag": "link", "link": "link", "title": "title"}.get(role, "mention")


def link_next(items: list[Item], batch: Batch) -> None:
    """``next`` edges between consecutive items of one session (or one heading)."""
    ordered = sorted(items, key=lambda i: i.position)
    for a, b in zip(ordered, ordered[1:]):
        if session_of(a) == session_of(b):
            batch.edge("next", a.id, b.id)


def clique(batch: Batch, ids: list[int]) -> None:
    for n, a in enumerate(ids):
        for b in ids[n + 1:]:
            batch.edge("episode", a, b)
