"""The knowledge area's part of export and import (:mod:`engine.transfer` does the core's).

Export writes the whole knowledge state as a snapshot (:mod:`.portable` has the format and why a
snapshot rather than a replay of curation). Import checks every knowledge record before anything
is written, then, as each source is ingested, restores that source's part of the snapshot for
its new items *instead of* extracting it, in the import's one transaction; records of an older
export (version 1) are laid over the extracted sources afterwards.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from ..area import WHOLE, Piece
from ..records import Item, Source
from .building import Batch, KnowledgeBuilding, clique, edge_type, link_next
from .dedup import fact_key
from .entities import entity_key
from .extract import Extraction
from .portable import FactRecord, ImportRecords, SourcePart, read_records, snapshot_records
from .portable_log import DecisionRecord, IdMaps, conflict_key, fresh_ids, translate
from .records import EVENT_ROLES, FactDraft
from .timeline import statement_valid_from

if TYPE_CHECKING:
    from ..area import Engine


@dataclass
class _Import:
    """An import in progress: its checked knowledge records and the items it has stored."""

    records: ImportRecords
    exported: dict[str, tuple[int, list[int]]]  # source name → (exported source id, its items' exported ids)
    stored: set[int] = field(default_factory=set)
    facts: dict[int, int] = field(default_factory=dict)  # exported fact id (or id() of a version-2 record) → stored
    created: set[int] = field(default_factory=set)  # stored fact ids this import inserted (their history is the export's)
    entities: set[int] = field(default_factory=set)  # stored entity ids this import inserted

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


class KnowledgeTransfer(KnowledgeBuilding):
    """Export and import of the knowledge state."""

    def __init__(self, mem: Engine) -> None:
        super().__init__(mem)
        self._import: _Import | None = None  # set while Memory.import_ runs (see importing())

    def on_ingest(self, source: Source, items: list[Item], piece: Piece = WHOLE) -> None:
        """While an import runs, a source its snapshot covers is restored from it, not extracted."""
        restoring = self._import.part(source.name, items) if self._import else None
        if restoring is None:
            super().on_ingest(source, items, piece)
        else:
            self._restore(source, items, *restoring, self._begin_batch())

    def export_records(self) -> list[dict[str, Any]]:
        """The whole knowledge state as a portable snapshot: entities with their mentions,
        synonymy, every fact with its origin, time and provenance, every episode (merged ones
        too) with its items, summary and events. See :mod:`.portable` for the format and why a
        snapshot rather than a replay of curation."""
        return snapshot_records(self.store)

    def reads(self, record_type: str) -> bool:
        return record_type.startswith("knowledge.")

    @contextmanager
    def importing(self, path: str | Path, records: list[tuple[int, dict[str, Any]]],
                  exported: dict[str, tuple[int, list[int]]]) -> Iterator[None]:
        """Frame ``Memory.import_``: check the export's knowledge records (``(line, record)``
        pairs) before anything is written — a bad one raises :class:`engine.ingest.IngestError`
        naming its line — then, while the import ingests, restore each source the snapshot
        covers from it instead of extracting it (:meth:`on_ingest`). ``exported`` maps a source
        name to its exported id and its items' exported ids, in the order they are ingested."""
        checked = read_records(path, records, dict(exported.values()), self.store.audited_columns())
        self._import = _Import(checked, exported)
        try:
            yield
        finally:
            self._import = None

    def import_notes(self) -> list[str]:
        """The names and words the import made keep the label rule, said in one line."""
        fitted = self._import.records.fitted if self._import is not None else []
        if not fitted:
            return []
        more = f"; and {len(fitted) - 1:,} more" if len(fitted) > 1 else ""
        return [f"{len(fitted):,} name(s) or fact word(s) of the knowledge records made to keep the label rule"
                f" ({fitted[0]}{more})"]

    def import_records(self, records: list[dict[str, Any]], id_map: dict[int, int]) -> None:
        """Lay version-1 records (LLM and user facts, LLM events and summaries) over the items
        this import stored by extraction (one transaction); a snapshot was restored source by
        source as it was ingested, and its history (facts no item states, the links between
        facts, the conflicts) is restored now. Items of sources that were already present are
        left alone (an import never overwrites the target's curation); records whose items did
        not come back are skipped. ``records`` were read and checked by :meth:`importing`."""
        if self._import is None:
            return
        if self._import.records.snapshot is not None:
            batch = self._begin_batch()
            with self.store.transaction():
                self._restore_history(batch, id_map)
            self.on_indexed([])
        if not self._import.records.legacy:
            return
        stored = self._import.stored
        id_map = {old: new for old, new in id_map.items() if new in stored}
        batch = self._begin_batch()
        with self.store.transaction():
            for r in self._import.records.legacy:
                if r["type"] == "knowledge.fact":
                    self._import_fact(r, id_map, batch)
                else:
                    self._import_episode(r, id_map)
        self.on_indexed([])

    def _import_fact(self, r: dict[str, Any], id_map: dict[Any, int], batch: Batch) -> None:
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

    def _restore(self, source: Source, items: list[Item], part: SourcePart, id_map: dict[int, int], batch: Batch) -> None:
        """Inside the source's ingest transaction: write its part of the snapshot for its new
        items (``id_map``: exported → new item ids). Entities and facts the target already has
        (same key) keep their name, kind, words and time, and only gain these items."""
        entity_ids = self._restore_entities(part, id_map, batch)
        said = {i.id: i.timestamp for i in items}
        self._restore_facts(part.facts, id_map, entity_ids, batch, said)
        episode_ids = {ep.id: self.store.insert_episode(source.id, ep.session, ep.summary, ep.origin) for ep in part.episodes}
        self.store.set_merged_into((episode_ids[ep.id], episode_ids[ep.merged_into])
                                   for ep in part.episodes if ep.merged_into is not None)
        home = {i: episode_ids[ep.id] for ep in part.episodes for i in ep.home}
        self.store.insert_episode_members((id_map[i], episode_ids[ep.id], home[i]) for ep in part.episodes for i in ep.items)
        self.store.insert_events((id_map[i], origin, body) for ep in part.episodes for i, origin, body in ep.events)
        for ep in part.episodes:
            clique(batch, sorted(id_map[i] for i in ep.items))
        link_next(items, batch)
        if self.llm_configured:  # what the LLM already read stays as curated
            described = {i for ep in part.episodes for i, origin, _body in ep.events if origin == "llm"}
            self.store.enqueue_extraction([new for old, new in id_map.items() if old not in described])

    def _restore_entities(self, part: SourcePart, id_map: dict[int, int], batch: Batch) -> dict[int, int]:
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
            batch.edge(edge_type(role), item, -eid)
        created = {e for e, r in records.items() if r.key in fresh}
        self._import.entities.update(target[e] for e in created)  # type: ignore[union-attr]
        pairs = [(a, b, w) for a, b, w in snapshot.synonyms if a in created or b in created]
        ids = self.store.entity_ids([snapshot.entities[e].key for a, b, _w in pairs for e in (a, b)])
        rows = [(ids[ka], ids[kb], w) for a, b, w in pairs
                if (ka := snapshot.entities[a].key) in ids and (kb := snapshot.entities[b].key) in ids]
        self.store.insert_synonyms(rows)
        for a, b, w in rows:
            batch.edge("synonym", -a, -b, w)
        return target

    def _restore_facts(self, facts: list[FactRecord], id_map: dict[int, int], entity_ids: dict[int, int], batch: Batch,
                       said: dict[int, str | None]) -> None:
        """Insert these facts with their times (a believed fact the target already has by key
        only gains provenance; a retired version is always its own row). ``said``: stored item
        id → its timestamp, for the validity of a version-2 record, which has none."""
        imp = self._import
        assert imp is not None
        keyed = [(fact_key(f.subject, f.predicate, f.object), f) for f in facts]
        fact_ids = self.store.fact_ids([k for k, f in keyed if not f.times.get("retired_at")])
        provenance = []
        for key, f in keyed:
            handle = f.id if f.id is not None else id(f)
            retired = f.times.get("retired_at")
            fid = imp.facts.get(handle) or (None if retired else fact_ids.get(key))
            if fid is None:
                sid, oid = entity_ids.get(f.subject_entity), entity_ids.get(f.object_entity)
                stored = [id_map[i] for i in f.provenance if i in id_map]
                valid_from = f.times.get("valid_from") if f.id is not None else min(
                    (v for i in stored if (v := statement_valid_from(f.time, said.get(i)))), default=None)
                fid = self.store.insert_fact(f"{key}#import" if retired else key, f.subject, f.predicate, f.object, sid,
                                             oid, f.time, f.origin, valid_from, f.times.get("recorded_at"))
                self.store.restore_fact_times(fid, f.times.get("valid_to"), retired, key)
                imp.created.add(fid)
                if not retired:
                    fact_ids[key] = batch.facts[key] = fid
                self._subject_vectors.pop(sid, None)  # read again from the store on next use
                if sid is not None and oid is not None and sid != oid and not retired:
                    batch.edge("fact", -sid, -oid)
            imp.facts[handle] = fid
            provenance += [(fid, id_map[i]) for i in f.provenance if i in id_map]
        self.store.insert_fact_sources(provenance)
        batch.provenance += provenance

    def _restore_history(self, batch: Batch, item_ids: dict[int, int]) -> None:
        """After every source is in: the facts no item states, the links between the facts this
        import inserted, the conflicts (by the stored ids of what they name) and the audit log
        (``item_ids``: exported → stored item ids)."""
        imp = self._import
        snapshot = imp.records.snapshot if imp else None
        if imp is None or snapshot is None or not snapshot.facts:
            return
        if snapshot.loose:
            records = {e: snapshot.entities[e] for f in snapshot.loose for e in (f.subject_entity, f.object_entity)
                       if e is not None}
            known = self.store.entity_ids([r.key for r in records.values()])
            fresh = self.store.upsert_entities([(r.key, r.name, r.kind) for r in records.values() if r.key not in known])
            for r in records.values():
                if r.key in fresh:
                    self.registry.stage(fresh[r.key], r.key, r.name, r.kind)
                    batch.entities.append(fresh[r.key])
            imp.entities.update(fresh.values())
            self._restore_facts(snapshot.loose, {}, {e: known.get(r.key) or fresh[r.key] for e, r in records.items()},
                                batch, {})
        for exported, record in snapshot.facts.items():
            fid = imp.facts.get(exported)
            if fid in imp.created and (record.superseded_by is not None or record.version_of is not None):
                self.store.link_fact(fid, imp.facts.get(record.superseded_by), imp.facts.get(record.version_of))
        entity_of = {e: i for e, r in snapshot.entities.items() if (i := self.store.entity_id_by_key(r.key)) is not None}
        ids = IdMaps(entity_of, dict(imp.facts), {}, {old: new for old, new in item_ids.items() if new in imp.stored},
                     {kind: fresh_ids(first) for kind, first in self.store.next_ids().items()},
                     {"entities": set(imp.entities), "facts": set(imp.created), "conflicts": set(), "items": set(imp.stored)},
                     {"entities": set(snapshot.entities), "facts": set(snapshot.facts),
                      "conflicts": {c.id for c in snapshot.conflicts if c.id is not None}})
        restoring = []
        for c in snapshot.conflicts:
            kind = "entities" if c.kind == "duplicate" else "facts"
            restored, held = (entity_of, snapshot.entities) if kind == "entities" else (imp.facts, snapshot.facts)
            if any(m is not None and m in held and m not in restored for m in (c.a, c.b)):
                continue  # of a source this import did not restore (the target had it)
            a, b = ids.of(kind, c.a), ids.of(kind, c.b)  # an entity its decision merged away: a fresh id, as in the log
            restoring.append((c, conflict_key(c.kind, a, b), a, b))
        keys = [key for _c, key, _a, _b in restoring]
        had = self.store.conflict_ids(keys)
        for c, key, a, b in restoring:
            self.store.restore_conflict(c.kind, key, a, b, c.reason, c.status, c.created_at, c.decided_at)
        stored = self.store.conflict_ids(keys)
        ids.conflicts.update((c.id, stored[key]) for c, key, _a, _b in restoring if c.id is not None and key in stored)
        ids.own["conflicts"].update(i for key, i in stored.items() if key not in had)
        ids.fresh["conflicts"] = fresh_ids(self.store.next_ids()["conflicts"])  # above the conflicts just restored
        self._restore_decisions(snapshot.decisions, ids)

    def _restore_decisions(self, decisions: list[DecisionRecord], ids: IdMaps) -> None:
        """The audit log, its row images in this store's ids (:mod:`.portable_log`), oldest first:
        the decisions about what this import restored (and no undo of one left behind)."""
        new: dict[int, int] = {}
        for d in decisions:
            changes = translate(d.changes, ids)
            if changes is None or d.undoes is not None and d.undoes not in new:
                continue
            new[d.id] = self.store.restore_decision(
                d.at, d.actor, d.action, ids.conflicts.get(d.conflict_id) if d.conflict_id is not None else None,
                d.summary, changes, new.get(d.undoes) if d.undoes is not None else None)
        self.store.set_undone_by((new[d.id], new[d.undone_by]) for d in decisions
                                 if d.undone_by is not None and d.undone_by in new)
