"""Reading the knowledge area: facts, entities and episodes as the app, the CLI and recall see them.

Every call returns the dataclasses of :mod:`.records`, read from the store (entity names and
synonymy through the loaded registry).
"""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..as_of import later, parse_as_of, said_on_items
from ..errors import KnowledgeError, quoted
from ..pipeline import Query
from ..text import lexical_tokens
from .building import KnowledgeBuilding
from .entities import entity_key
from .extract import WEEKDAY_NAMES, capitalised_spans
from .in_time import facts_in_time
from .records import Entity, Episode, Event, Fact
from .timeline import fact_of_row

FACTS_PER_ENTITY = 50  # a query's entity contributes its latest facts as candidates
KEPT_SOURCES = 100_000  # facts whose provenance (or record without it) one store state keeps for recalls
KEPT_EPISODES = 20_000  # items and episodes one store state keeps for recalls
NEAREST_AMONG = 2000  # the most mentioned entities a name that names none is compared with (a typo names a frequent one)


@dataclass
class KeptReads:
    """Fact reads of recalls, kept while the store stays as it was (``Store.read_state``): the
    people a store is about, and their facts, come back in recall after recall."""

    state: tuple[int, int]
    newest: dict[int, list[tuple]] = field(default_factory=dict)  # entity id → rows of its newest facts
    sources: dict[int, tuple[int, ...]] = field(default_factory=dict)  # fact id → the items stating it
    facts: dict[int, Fact] = field(default_factory=dict)  # fact id → its record (never handed out)
    unsourced: dict[int, Fact] = field(default_factory=dict)  # fact id → its record without sources, to score


@dataclass
class KeptEpisodes:
    """Episode reads of recalls, kept while nothing an episode shows changes (``Store.episode_state``):
    the hits of one conversation's questions fall in the same few episodes recall after recall,
    and a feedback event between them changes none of it."""

    state: int
    of_item: dict[int, int | None] = field(default_factory=dict)  # item id → its episode (None: none)
    by_id: dict[int, Episode | None] = field(default_factory=dict)  # None: not a live episode


class KnowledgeReading(KnowledgeBuilding):
    """Browse the knowledge of one store."""

    _kept: KeptReads | None = None
    _kept_episodes: KeptEpisodes | None = None

    def query_entities(self, text: str) -> list[int]:
        """Entities the query names (known names in it, and its capitalised spans, a span no
        entity has being the speaker whose first name it shortens: :meth:`.EntityRegistry.speaker_called`);
        never a day of the week, which a store may hold as an entity from an older extraction."""
        registry = self.registry
        spans = [entity_key(s) for s in capitalised_spans(text, lambda key: registry.lookup(key) is not None)]
        keys = [k for k in dict.fromkeys(registry.find_in(text) + spans) if k not in WEEKDAY_NAMES]
        found = [registry.lookup(k) if registry.lookup(k) is not None else registry.speaker_called(k) for k in keys]
        return list(dict.fromkeys(eid for eid in found if eid is not None))

    def named_in(self, q: Query) -> list[int]:
        """:meth:`query_entities` of a recall's query, found once per recall: the graph's seeds,
        the successor lift and the facts all start from them."""
        if "entities" not in q.notes:
            q.notes["entities"] = self.query_entities(q.text)
        return q.notes["entities"]

    def _facts(self, ids: Sequence[int] | None = None, entity_id: int | None = None) -> list[Fact]:
        rows = self.store.fact_rows(ids, entity_id) if ids is not None or entity_id is not None else self.store.fact_rows()
        return self._facts_of_rows(rows)

    def _facts_of_rows(self, rows: Sequence[tuple]) -> list[Fact]:
        sources = self.store.fact_sources_of([r[0] for r in rows])
        return [fact_of_row(r, sources.get(r[0], [])) for r in rows]

    def facts(self, entity: str | int | None = None, limit: int | None = None, as_of: Any = None) -> list[Fact]:
        """Every fact the store believes, or those naming an entity (by id, or by name: exact
        key, else substring); with ``as_of`` (a date), only those said by then that held then."""
        if entity is None:
            out = self._facts()
        else:
            ids = self._entity_ids_for(entity)
            seen: dict[int, Fact] = {}
            for eid in ids:
                for f in self._facts(entity_id=eid):
                    seen[f.id] = f
            out = sorted(seen.values(), key=lambda f: f.id)
        when = parse_as_of(as_of)
        if when is not None:
            out = sorted(self._known_at(out, when), key=lambda f: f.id)
            for f in out:
                f.seen_at = when
        return out[:limit] if limit else out

    def facts_page(self, entity_id: int, offset: int, limit: int) -> tuple[list[Fact], int]:
        """A page of the facts the store believes that name an entity (by id, in the order
        :meth:`facts` lists them), and how many there are in all (the store keeps the count):
        a frequent entity's tens of thousands are not read to show a page."""
        rows = self.store.entity_fact_rows(entity_id, offset, limit)
        total = self.store.entity_counts([entity_id]).get(entity_id, (0, 0))[1]
        return self._facts_of_rows(rows), total

    def _known_at(self, facts: list[Fact], as_of: str | None) -> list[Fact]:
        """The facts known and not retired at the reference time, current ones first (when their
        evidence was said matters only before now). The facts are not changed: a recall's are
        kept records, shared with later recalls."""
        said = said_on_items(self.store, self.mem.index, sorted({i for f in facts for i in f.provenance})) \
            if as_of is not None else {}
        return facts_in_time(facts, said, as_of)

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

    def entities(self, kind: str | None = None, limit: int | None = None, containing: str = "") -> list[Entity]:
        """Entities, most mentioned first (ties by id), with their counts and synonyms; those of
        one ``kind``, or whose name or key contains some text, the first ``limit`` of them. Reads
        only the entities returned (the store keeps the counts)."""
        rows = self.store.ranked_entity_rows(kind, containing, limit or None)
        synonyms = self._synonyms([r[0] for r in rows])
        return [Entity(id=eid, key=key, name=name, kind=k, items=items, facts=facts, synonyms=synonyms.get(eid, []))
                for eid, key, name, k, items, facts in rows]

    def entity_counts_as_of(self, entity_ids: Sequence[int], as_of: Any) -> dict[int, tuple[int, int]]:
        """entity id → (items mentioning it said by ``as_of``, facts naming it that held then):
        the counts :meth:`entities` gives for now, as of a date (each entity's mentions and facts
        read: for the page a list shows, not a store's every entity)."""
        when = parse_as_of(as_of)
        out = {}
        for eid in entity_ids:
            mentioned = sorted({item for item, _surface, _role in self.store.mentions_of_entity(eid)})
            said = said_on_items(self.store, self.mem.index, mentioned)
            by_then = sum(1 for day in said.values() if when is None or not later(day, when))
            out[eid] = (by_then, len(self.facts(eid, as_of=when)))
        return out

    def entity(self, entity_id: int) -> Entity:
        row = self.store.entity_row(entity_id)
        if row is None:
            raise KnowledgeError(f"no entity with id {entity_id}")
        items, facts = self.store.entity_counts([entity_id]).get(entity_id, (0, 0))
        return Entity(id=row[0], key=row[1], name=row[2], kind=row[3], items=items, facts=facts,
                      synonyms=self._synonyms([entity_id]).get(entity_id, []))

    def entity_id_of(self, typed: str) -> int:
        """The id of the entity a person typed: its id (digits), else its name."""
        typed = typed.strip()
        return int(typed) if typed.isdigit() else self._entity_id_named(typed)

    def check_entity_named(self, typed: str, listed_by: str) -> None:
        """Refuse ``typed`` (an entity's id, or a name or a part of one, as :meth:`facts` reads it)
        when it names no entity, with the names nearest to it, else saying what lists them
        (``listed_by``): an empty list for a typo ("Mya") reads as "Maya has no facts" (review,
        newcomer tour; the CLI's ``facts --entity`` and the MCP tool ``facts``)."""
        import difflib

        if typed.strip().isdigit():
            self.entity(int(typed))  # "no entity with id N"
            return
        if self.entities(containing=typed.strip(), limit=1):
            return
        names = [e.name for e in self.entities(limit=NEAREST_AMONG)]
        near = difflib.get_close_matches(typed.strip(), names, n=3)
        raise KnowledgeError(f"no entity is named {quoted(typed)} or has it in its name"
                             + (f"; did you mean {', '.join(map(repr, near))}?" if near else f" ({listed_by})"))

    def _entity_id_named(self, name: str) -> int:
        """One look-up by the store's unique key, however many entities contain the name."""
        entity_id = self.store.entity_id_by_key(entity_key(name))
        if entity_id is None:
            raise KnowledgeError(f"no entity is named {name.strip()!r}")
        return entity_id

    def _synonyms(self, entity_ids: list[int]) -> dict[int, list[int]]:
        """entity id → the ids of its synonyms, sorted, for these entities."""
        wanted, out = set(entity_ids), defaultdict(set)
        for a, b in self.store.synonyms_of(entity_ids):
            for one, other in ((a, b), (b, a)):
                if one in wanted:
                    out[one].add(other)
        return {eid: sorted(ids) for eid, ids in out.items()}

    def episodes(self, source_id: int | None = None, ids: Sequence[int] | None = None) -> list[Episode]:
        """Live episodes (all, of one source, or by id) with items, events and images."""
        return self._episodes_shown(self.store.shown_episodes(ids=ids, source_id=source_id))

    def _episodes_shown(self, rows: Sequence[tuple]) -> list[Episode]:
        """The episodes of these rows (``Store.shown_episodes``), their items and events read
        for all of them at once."""
        if not rows:
            return []
        members = self.store.episode_members([r[0] for r in rows])
        events = self.store.events_of_items(list(dict.fromkeys(m.item_id for ms in members.values() for m in ms)))
        out = []
        for eid, source, session, summary, origin, merged_from in rows:
            items = sorted(members.get(eid, []), key=lambda m: (m.source_id, m.position))
            ev = events_for([m.item_id for m in items], events)
            times = sorted(m.timestamp for m in items if m.timestamp)
            out.append(Episode(
                id=eid, source_id=source, session=session, summary=summary, items=[m.item_id for m in items], events=ev,
                participants=list(dict.fromkeys(p for e in ev for p in e.participants)) or
                list(dict.fromkeys(m.speaker for m in items if m.speaker)),
                time_start=times[0] if times else None, time_end=times[-1] if times else None,
                images=[{"item_id": m.item_id, "url": m.image_meta.get("image_url", ""), "caption": m.image_meta["image_caption"]}
                        for m in items if m.image_meta and m.image_meta.get("image_caption")],
                merged_from=merged_from, origin=origin))
        return out

    def timeline_page(self, limit: int, offset: int = 0) -> tuple[list[Episode], int]:
        """``limit`` live episodes of the timeline (dated by session date, undated last) from
        the ``offset``-th, and the number of live episodes: reads only the episodes shown,
        whatever the store's size."""
        ids, total = self.store.episode_timeline(limit, offset)
        by_id = {e.id: e for e in self.episodes(ids=ids)} if ids else {}
        return [by_id[i] for i in ids if i in by_id], total

    def episode(self, episode_id: int) -> Episode:
        found = self.episodes(ids=[episode_id])
        if not found:
            raise KnowledgeError(f"no episode with id {episode_id}")
        return found[0]

    def episodes_of_hits(self, item_ids: Sequence[int]) -> list[Episode]:
        """The live episodes of these items (a recall's hits, best first), each once, in the order
        of its first item. Read once per store state: each a copy the caller owns."""
        state, kept = self.store.episode_state(), self._kept_episodes
        if state is None:  # inside a transaction: read for this call alone
            kept = KeptEpisodes(-1)
        elif kept is None or kept.state != state or len(kept.of_item) + len(kept.by_id) > KEPT_EPISODES:
            kept = self._kept_episodes = KeptEpisodes(state)
        # Each read is added whole, in one update: another thread's recall shares these dicts and
        # must never see an item's episode or an episode as unknown while it is being read.
        shown: dict[int, tuple | None] = {}  # episode id → its row as shown (None: not live), read with the items
        if unknown := [i for i in dict.fromkeys(item_ids) if i not in kept.of_item]:
            found: dict[int, int] = {}
            for item_id, episode_id, row in self.store.shown_episodes_of_items(unknown):
                found[item_id], shown[episode_id] = episode_id, row
            kept.of_item.update({i: found.get(i) for i in unknown})
        order = list(dict.fromkeys(e for i in item_ids if (e := kept.of_item[i]) is not None))
        if unread := [e for e in order if e not in kept.by_id]:
            rows = [row for e in sorted(unread) if e in shown and (row := shown[e]) is not None]
            if missing := [e for e in unread if e not in shown]:  # items known, their episode not (evicted)
                rows = sorted(rows + self.store.shown_episodes(ids=missing))
            read = {e.id: e for e in self._episodes_shown(rows)}
            kept.by_id.update({e: read.get(e) for e in unread})
        return [_copy_of(e) for i in order if (e := kept.by_id[i]) is not None]

    def facts_for(self, text: str, item_scores: dict[int, float], k: int, as_of: str | None = None,
                  entity_ids: list[int] | None = None) -> list[Fact]:
        """Facts ranked for a query: those stated by the hits or naming the query's entities
        (``entity_ids``: those already found in ``text``), known at the reference time
        (``as_of``, default now), scored by word overlap with the query plus the best score of
        the items stating them; those that hold then come first. Of a recall at the present
        time, only the facts returned have their every source read: a fact's hits are the
        hits' own provenance rows, and a fact said in a thousand turns (a million-item store
        repeats its people's facts) no longer costs a thousand rows per recall."""
        entity_ids = self.query_entities(text) if entity_ids is None else entity_ids
        kept = self._kept_reads()
        rows = {r[0]: r for e in entity_ids for r in self._newest_facts(e, kept)}
        stated_by = self.store.facts_of_items(list(item_scores))
        of_hits = sorted({f for f, _ in stated_by} - rows.keys())
        rows.update((r[0], r) for r in self.store.fact_rows(of_hits))  # the entities' rows are not read twice
        if as_of is None:
            facts = self._known_at(self._scoring_records(rows, kept), None)
        else:  # known by then: when each fact's evidence was said, so every source
            facts = self._known_at(self._fact_records(rows, kept), as_of)
        if not facts:
            return []
        query_terms = set(lexical_tokens(text))
        top_item = max(item_scores.values(), default=0.0) or 1.0
        named_ids = set(entity_ids)
        hit_scores: dict[int, list[float]] = defaultdict(list)
        for fact_id, item in stated_by:
            hit_scores[fact_id].append(item_scores[item])
        scores: dict[int, float] = {}
        for f in facts:
            terms = self._fact_terms.get(f.id)
            if terms is None:
                terms = self._fact_terms[f.id] = frozenset(lexical_tokens(f.triple()))
            overlap = len(terms & query_terms) / max(len(query_terms), 1)
            stated = self._best_stating(f, hit_scores.get(f.id, []), item_scores, kept) / top_item
            named = 0.5 if {f.subject_id, f.object_id} & named_ids else 0.0
            scores[f.id] = round(overlap + stated + named, 6)
        facts.sort(key=lambda f: (f.state(as_of) != "current", -scores[f.id], f.id))
        chosen = facts[:k]
        full = {f.id: f for f in self._fact_records({f.id: rows[f.id] for f in chosen}, kept)}
        return [_scored_copy(full[f.id], scores[f.id], as_of) for f in chosen]

    def _best_stating(self, fact: Fact, hit_scores: list[float], item_scores: dict[int, float],
                      kept: KeptReads | None) -> float:
        """The best score among the items stating ``fact``, an item that is no hit scoring 0:
        0 when it is stated by no hit, the best of its hits' scores (``hit_scores``) when one is
        not negative; else its every source is read, to know whether one of them is no hit."""
        if not hit_scores:
            return 0.0
        if max(hit_scores) >= 0.0:
            return max(hit_scores)
        provenance = fact.provenance or self._sources([fact.id], kept)[fact.id]
        return max((item_scores.get(i, 0.0) for i in provenance), default=0.0)

    def _scoring_records(self, rows: dict[int, tuple], kept: KeptReads | None) -> list[Fact]:
        """The facts of these rows (by id) in id order, to score and sort: the kept record where
        there is one, else one without its sources (:meth:`_fact_records` reads them), kept too."""
        if kept is None:
            return [fact_of_row(rows[f]) for f in sorted(rows)]
        if missing := [f for f in rows if f not in kept.facts and f not in kept.unsourced]:
            kept.unsourced.update((f, fact_of_row(rows[f])) for f in missing)
        return [kept.facts.get(f) or kept.unsourced[f] for f in sorted(rows)]

    def _fact_records(self, rows: dict[int, tuple], kept: KeptReads | None) -> list[Fact]:
        """The facts of these rows (by id) in id order, each built once per store state and kept:
        shared records that :meth:`facts_for` scores without changing, copying the few it returns."""
        ids = sorted(rows)
        if kept is None:
            sources = self._sources(ids, kept)
            return [fact_of_row(rows[f], sources[f]) for f in ids]
        if missing := [f for f in ids if f not in kept.facts]:
            sources = self._sources(missing, kept)
            kept.facts.update((f, fact_of_row(rows[f], sources[f])) for f in missing)
        return [kept.facts[f] for f in ids]

    def _kept_reads(self) -> KeptReads | None:
        """The reads kept for the store's present state (None inside a transaction)."""
        state = self.store.read_state()
        if state is None:
            return None
        if self._kept is None or self._kept.state != state or max(len(self._kept.sources), len(self._kept.unsourced)) > KEPT_SOURCES:
            self._kept = KeptReads(state)
        return self._kept

    def _newest_facts(self, entity_id: int, kept: KeptReads | None) -> list[tuple]:
        """Rows of the newest facts naming an entity (``FACTS_PER_ENTITY``)."""
        if kept is None:
            return self.store.fact_rows(entity_id=entity_id, latest=FACTS_PER_ENTITY)
        if entity_id not in kept.newest:
            kept.newest[entity_id] = self.store.fact_rows(entity_id=entity_id, latest=FACTS_PER_ENTITY)
        return kept.newest[entity_id]

    def _sources(self, fact_ids: list[int], kept: KeptReads | None) -> dict[int, list[int]]:
        """The items stating each fact, in item order (a fresh list each: a fact record owns it)."""
        if kept is None:
            found = self.store.fact_sources_of(fact_ids)
            return {f: found.get(f, []) for f in fact_ids}
        missing = [f for f in fact_ids if f not in kept.sources]
        if missing:
            found = self.store.fact_sources_of(missing)
            kept.sources.update((f, tuple(found.get(f, ()))) for f in missing)
        return {f: list(kept.sources[f]) for f in fact_ids}


def _copy_of(episode: Episode) -> Episode:
    """A copy of a kept episode whose lists are its own (its events are shared: nothing changes them)."""
    out = copy.copy(episode)
    out.items, out.events, out.participants = list(episode.items), list(episode.events), list(episode.participants)
    out.images, out.merged_from = [dict(image) for image in episode.images], list(episode.merged_from)
    return out


def _scored_copy(fact: Fact, score: float, seen_at: str | None) -> Fact:
    """A copy of a kept fact with its own provenance list, scored for a query."""
    out = copy.copy(fact)
    out.provenance, out.score, out.seen_at = list(fact.provenance), score, seen_at
    return out


def events_for(item_ids: list[int], events: dict[int, list[tuple[str, dict[str, Any]]]]) -> list[Event]:
    """Events of these items; where the LLM has described an item, its events replace the rule's."""
    out = []
    for item_id in item_ids:
        rows = events.get(item_id, [])
        best = [r for r in rows if r[0] == "llm"] or rows
        out += [Event(item_id=item_id, origin=origin, **body) for origin, body in best]
    return out
