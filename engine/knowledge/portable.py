"""The knowledge records of an export: a snapshot of the state a person curated, not a replay.

Why a snapshot. Import re-ingests every source; had it re-run the extractor, curation would
come undone (a renamed entity back under its old name, merged entities apart, a deleted rule
fact back, an edited one reverted, merged episodes apart), and what came back would change
whenever the extractor changes. So the export carries the whole knowledge state, and import
writes exactly that for each source it adds *instead of* extracting it, as that source is
ingested; the whole import is one transaction, so the items and their knowledge commit together
or not at all.
A deletion needs no marker: nothing is re-extracted for a source the snapshot covers, so what
the snapshot lacks stays absent.

Format version 4, after the core's source and item lines (ids are the exporting store's;
import maps items by their exported ids, entities by normalised key, episodes and facts by
exported id)::

    {"type": "knowledge.snapshot", "version": 4, "sources": [source ids the snapshot covers]}
    {"type": "knowledge.entity", "version": 4, "id", "key", "name", "kind",
     "mentions": [[item id, surface, role], ...]}
    {"type": "knowledge.synonym", "version": 4, "a", "b", "weight"}          (entity ids)
    {"type": "knowledge.fact", "version": 4, "id", "subject", "predicate", "object",
     "subject_entity", "object_entity", "time", "origin", "provenance": [item ids],
     "valid_from", "valid_to", "recorded_at", "retired_at", "superseded_by", "version_of"}
    {"type": "knowledge.episode", "version": 4, "id", "source_id", "session", "summary",
     "origin", "merged_into", "items": [current members], "home": [items built in it],
     "events": [{"item_id", "origin", participants, action, time, location, reason, method}]}
    {"type": "knowledge.conflict", "version": 4, "id", "kind", "a", "b", "reason", "status",
     "created_at", "decided_at"}          (a, b: fact ids, or entity ids for a duplicate)
    {"type": "knowledge.decision", "version": 4, ...}   (the audit log: :mod:`.portable_log`)

An item's events travel with its home episode. Entities nothing names (no mention, no fact)
carry no knowledge and are not exported. Every fact travels, retired versions and superseded
facts too, with its times and the links of its history (``superseded_by``, ``version_of``: fact
ids), and so do the conflicts, decided or open (a decided one may name an entity its decision
merged away), and the audit log, whose decisions an imported
store can undo as the exporting one could (:mod:`.portable_log`). A fact no item states any more
(kept for the inbox) is restored after the sources. Version 3 (no audit log, conflicts without
ids) and version 2 (no times, no history) still import: a version-2 fact holds from its first
item's day, as a store migrated from that version gives it.

Version 1 (records without ``version``, written before curation travelled) held only what
extraction cannot rebuild: ``knowledge.fact`` lines of LLM or user facts and ``knowledge.episode``
lines of LLM events and summaries. Such an export still imports: its sources are extracted
and those records laid over them (:meth:`KnowledgeArea.import_records`).

Everything is checked before the first write: a bad record is refused as
``file:line: knowledge record: …`` and the store is left as it was. A name or a fact's words
that break the label rule (an invisible or control character, over 2,000 characters: an older
store's, or an edited file's) are made to keep it, as the core's labels are, and the import says
which (:attr:`ImportRecords.fitted`); a time that is no date is refused.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ..as_of import is_date
from ..ingest import IngestError, fitted_label
from ..records import label_problem
from .portable_log import DECISION, DecisionRecord, decision_records, is_stamp, read_decision, referenced_unknown
from .records import EVENT_ROLES

if TYPE_CHECKING:
    from ..store import Store

FORMAT_VERSION = 4
SNAPSHOT, ENTITY, SYNONYM, FACT, EPISODE, CONFLICT = (
    f"knowledge.{t}" for t in ("snapshot", "entity", "synonym", "fact", "episode", "conflict"))
ENTITY_KINDS = ("speaker", "title", "name", "tag")
ORIGINS = ("rule", "llm", "user")
CONFLICT_KINDS = ("clash", "duplicate", "orphaned")
CONFLICT_STATUSES = ("open", "accepted", "both", "merged", "retired")
TIMES = ("valid_from", "valid_to", "recorded_at", "retired_at")
STAMPS = ("recorded_at", "retired_at", "created_at", "decided_at")  # written by the store's clock


@dataclass
class FactRecord:
    subject: str
    predicate: str
    object: str
    subject_entity: int | None
    object_entity: int | None
    time: str | None
    origin: str
    provenance: list[int]
    id: int | None = None  # the exported fact id (None in version 2)
    times: dict[str, str | None] = field(default_factory=dict)  # valid_from, valid_to, recorded_at, retired_at
    superseded_by: int | None = None
    version_of: int | None = None


@dataclass
class ConflictRecord:
    id: int | None  # the exported conflict id (None before version 4)
    kind: str
    a: int
    b: int | None
    reason: str
    status: str
    created_at: str
    decided_at: str | None


@dataclass
class EpisodeRecord:
    id: int
    session: str
    summary: str
    origin: str
    merged_into: int | None
    items: list[int]
    home: list[int]
    events: list[tuple[int, str, dict[str, Any]]]  # (item id, origin, 5W1H body)


@dataclass
class EntityRecord:
    key: str
    name: str
    kind: str


@dataclass
class SourcePart:
    """What a snapshot holds for one exported source."""

    mentions: list[tuple[int, int, str, str]] = field(default_factory=list)  # (item, entity, surface, role)
    facts: list[FactRecord] = field(default_factory=list)  # every fact with provenance here
    episodes: list[EpisodeRecord] = field(default_factory=list)


@dataclass
class Snapshot:
    """A checked version-2 snapshot, split by exported source."""

    entities: dict[int, EntityRecord]
    synonyms: list[tuple[int, int, float]]
    parts: dict[int, SourcePart]  # by exported source id; a covered source with no knowledge has an empty part
    loose: list[FactRecord] = field(default_factory=list)  # facts no item states (kept for the inbox)
    facts: dict[int, FactRecord] = field(default_factory=dict)  # every fact by exported id (version 3)
    conflicts: list[ConflictRecord] = field(default_factory=list)
    decisions: list[DecisionRecord] = field(default_factory=list)  # the audit log, oldest first


@dataclass
class ImportRecords:
    """The knowledge lines of one export file: a snapshot, or version-1 records, or neither."""

    snapshot: Snapshot | None = None
    legacy: list[dict[str, Any]] = field(default_factory=list)
    fitted: list[str] = field(default_factory=list)  # "file:line: what: how it was made to keep the label rule"


# -- export -----------------------------------------------------------------------------------


def snapshot_records(store: "Store") -> list[dict[str, Any]]:
    """The whole knowledge state of ``store`` as version-2 records (see the module docstring)."""
    v = {"version": FORMAT_VERSION}
    mentions: dict[int, list[list[Any]]] = defaultdict(list)
    for item, eid, surface, role in sorted(store.mention_rows()):
        mentions[eid].append([item, surface, role])
    facts = store.fact_rows(retired=True)
    provenance = store.fact_sources_of([r[0] for r in facts])
    named = set(mentions) | {r[4] for r in facts} | {r[5] for r in facts}
    out: list[dict[str, Any]] = [{"type": SNAPSHOT, **v, "sources": [s.id for s in store.sources()]}]
    out += [{"type": ENTITY, **v, "id": eid, "key": key, "name": name, "kind": kind, "mentions": mentions.get(eid, [])}
            for eid, key, name, kind in store.entity_rows() if eid in named]
    out += [{"type": SYNONYM, **v, "a": a, "b": b, "weight": w}
            for a, b, w in store.synonym_rows() if a in named and b in named]
    out += [{"type": FACT, **v, "id": fid, "subject": s, "predicate": p, "object": o, "subject_entity": sid,
             "object_entity": oid, "time": t, "origin": origin, "provenance": provenance.get(fid, []),
             **dict(zip(TIMES, times)), "superseded_by": successor, "version_of": version}
            for fid, s, p, o, sid, oid, t, origin, *times, successor, version in facts]
    current: dict[int, list[int]] = defaultdict(list)
    home: dict[int, list[int]] = defaultdict(list)
    for item, episode, home_episode in sorted(store.episode_item_rows()):
        current[episode].append(item)
        home[home_episode].append(item)
    events: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for item, origin, body in store.event_rows():
        events[item].append({"item_id": item, "origin": origin, **body})
    out += [{"type": EPISODE, **v, "id": eid, "source_id": source, "session": session, "summary": summary,
             "origin": origin, "merged_into": into, "items": current[eid], "home": home[eid],
             "events": [e for item in home[eid] for e in events[item]]}
            for eid, source, session, summary, origin, into in store.episode_rows(include_merged=True)]
    exported = {"facts": {r[0] for r in facts}, "entities": {e for e, *_ in store.entity_rows() if e in named}}
    out += [{"type": CONFLICT, **v, "id": cid, "kind": kind, "a": a, "b": b, "reason": reason, "status": status,
             "created_at": created, "decided_at": decided}
            for cid, kind, _key, a, b, reason, status, created, decided in store.conflict_rows(status=None)
            if status != "open" or {a, b} - {None} <= exported["entities" if kind == "duplicate" else "facts"]]
    return out + decision_records(store, FORMAT_VERSION)


# -- import -----------------------------------------------------------------------------------


def read_records(path: str | Path, records: list[tuple[int, dict[str, Any]]],
                 exported_items: dict[int, list[int]], columns: dict[str, frozenset[str]]) -> ImportRecords:
    """Check the knowledge lines of an export (``(line number, record)`` pairs; other areas'
    lines are ignored) against the exported sources and items (``exported_items``: exported
    source id → its items' exported ids) and, for the audit log's row images, the importing
    store's tables (``columns``). Raises :class:`IngestError` naming the first bad line."""
    reader = _Reader(path, {item: source for source, items in exported_items.items() for item in items}, columns)
    mine = [(n, r) for n, r in records if str(r.get("type", "")).startswith("knowledge.")]
    for line, r in mine:
        version = r.get("version", 1)
        if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT_VERSION:
            reader.fail(line, f"format version {version!r} is not one this Mnemoscope reads (1 to {FORMAT_VERSION})")
    legacy = [(n, r) for n, r in mine if "version" not in r]
    for line, r in legacy:
        reader.legacy(line, r)
    current = [(n, r) for n, r in mine if "version" in r]
    snapshot = reader.snapshot(current, set(exported_items)) if current else None
    return ImportRecords(snapshot, [r for _, r in legacy], reader.fitted)


class _Reader:
    """Field checks that fail with the file, the line and what is wrong."""

    def __init__(self, path: str | Path, source_of_item: dict[int, int], columns: dict[str, frozenset[str]]) -> None:
        self.path = path
        self.source_of_item = source_of_item
        self.columns = columns
        self.fitted: list[str] = []

    def fail(self, line: int, message: str) -> NoReturn:
        raise IngestError(self.path, f"knowledge record: {message}", line)

    def field(self, line: int, r: dict[str, Any], name: str, kind: type | tuple[type, ...], optional: bool = False) -> Any:
        value = r.get(name)
        if value is None and optional:
            return None
        if not isinstance(value, kind) or (isinstance(value, bool) and kind in (int, (int, float))):
            wanted = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
            self.fail(line, f"{r.get('type')} field {name!r} must be {wanted}{' or null' if optional else ''}, not {value!r}")
        return value

    def text(self, line: int, r: dict[str, Any], name: str) -> str:
        value = self.field(line, r, name, str)
        if not value.strip():
            self.fail(line, f"{r.get('type')} field {name!r} is empty")
        return value

    def label(self, line: int, r: dict[str, Any], name: str, what: str) -> str:
        """A text shown as a name (an entity's, a mention's surface, a fact's words, a conflict's
        reason) made to keep the label rule: an export holds what a store held, and refusing a
        backup whole for one name would lose the lot (:func:`engine.ingest.fit_labels`)."""
        value = self.field(line, r, name, str)
        if label_problem(value) is None:
            return value
        fitted, done = fitted_label(value)
        self.fitted.append(f"{self.path}:{line}: {what}: {done}")
        return fitted

    def date(self, line: int, r: dict[str, Any], name: str, optional: bool = True) -> str | None:
        """A time the store keeps: a day, a month or a year (a fact's time and validity), or a
        stamp of the store's clock (when it was recorded, retired, opened, decided)."""
        value = self.field(line, r, name, str, optional)
        if value is not None and name in STAMPS and not is_stamp(value):
            self.fail(line, f"{r.get('type')} field {name!r} is no time such as 2023-06-01T10:00:00Z, not {value[:40]!r}")
        if value is not None and name not in STAMPS and not is_date(value):
            self.fail(line, f"{r.get('type')} field {name!r} is no date such as 2023-06-01, 2023-06 or 2023, not {value[:40]!r}")
        return value

    def item(self, line: int, value: Any, where: str) -> int:
        """An exported item id."""
        if isinstance(value, bool) or not isinstance(value, int) or value not in self.source_of_item:
            self.fail(line, f"{where} names item {value!r}, which the export does not hold")
        return value

    def items(self, line: int, r: dict[str, Any], name: str, source: int | None = None) -> list[int]:
        """A list of exported item ids (all of ``source`` when given)."""
        ids = [self.item(line, i, f"{r.get('type')} field {name!r}") for i in self.field(line, r, name, list)]
        for i in ids:
            if source is not None and self.source_of_item[i] != source:
                self.fail(line, f"{r.get('type')} field {name!r} names item {i}, which belongs to another source")
        return ids

    def legacy(self, line: int, r: dict[str, Any]) -> None:
        """A version-1 record: the fields its import reads."""
        if r["type"] == FACT:
            for name in ("subject", "predicate", "object"):
                self.text(line, r, name)
            self.field(line, r, "time", str, optional=True)
            self.field(line, r, "provenance", list)
        elif r["type"] == EPISODE:
            self.field(line, r, "items", list)
            self.field(line, r, "summary", str, optional=True)
            for event in self.field(line, r, "events", list):
                if not isinstance(event, dict):
                    self.fail(line, f"an event must be an object, not {event!r}")
        else:
            self.fail(line, f"{r['type']} has no version field (version-1 exports hold only facts and episodes)")

    def snapshot(self, records: list[tuple[int, dict[str, Any]]], sources: set[int]) -> Snapshot:
        by_type: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for line, r in records:
            if r["type"] not in (SNAPSHOT, ENTITY, SYNONYM, FACT, EPISODE, CONFLICT, DECISION):
                self.fail(line, f"unknown record type {r['type']!r}")
            by_type[r["type"]].append((line, r))
        if len(by_type[SNAPSHOT]) != 1:
            line = (by_type[SNAPSHOT][1:] or records)[0][0]
            self.fail(line, f"an export holds one {SNAPSHOT} line, this one {len(by_type[SNAPSHOT])}")
        line, head = by_type[SNAPSHOT][0]
        covered = self.field(line, head, "sources", list)
        if not all(type(s) is int for s in covered) or set(covered) - sources:
            self.fail(line, f"the snapshot covers source(s) {covered} and the export holds only {sorted(sources)}")
        parts = {s: SourcePart() for s in covered}
        entities = self._entities(by_type[ENTITY], parts)
        synonyms = []
        for line, r in by_type[SYNONYM]:
            a, b = self._entity(line, r, "a", entities), self._entity(line, r, "b", entities)
            synonyms.append((a, b, float(self.field(line, r, "weight", (int, float)))))
        snapshot = Snapshot(entities, synonyms, parts)
        for line, r in by_type[FACT]:
            self._fact(line, r, entities, snapshot)
        self._history(by_type[FACT], snapshot)
        self._episodes(by_type[EPISODE], parts)
        snapshot.conflicts = [self._conflict(line, r, snapshot) for line, r in by_type[CONFLICT]]
        lines: dict[int, int] = {}
        for line, r in by_type[DECISION]:
            decision = read_decision(r, self.columns, lambda message, at=line: self.fail(at, message))
            if decision.id in lines:
                self.fail(line, f"decision {decision.id} appears twice")
            lines[decision.id] = line
            snapshot.decisions.append(decision)
        snapshot.decisions.sort(key=lambda d: d.id)
        unknown = referenced_unknown(snapshot.decisions, {"entities": set(snapshot.entities), "facts": set(snapshot.facts),
                                                          "conflicts": {c.id for c in snapshot.conflicts if c.id is not None}})
        if unknown is not None:
            self.fail(lines[unknown[0]], f"decision {unknown[0]} names {unknown[1]}, which neither the export holds nor a decision deleted")
        return snapshot

    def _part(self, line: int, parts: dict[int, SourcePart], item: int) -> SourcePart:
        part = parts.get(self.source_of_item[item])
        if part is None:
            self.fail(line, f"item {item} belongs to a source the snapshot does not cover")
        return part

    def _entities(self, records: list[tuple[int, dict[str, Any]]],
                  parts: dict[int, SourcePart]) -> dict[int, EntityRecord]:
        out: dict[int, EntityRecord] = {}
        keys: dict[str, int] = {}
        for line, r in records:
            eid = self.field(line, r, "id", int)
            self.text(line, r, "key")
            key = self.label(line, r, "key", f"entity {eid}'s key")
            if eid in out or key in keys:
                self.fail(line, f"entity {eid} ({key!r}) appears twice")
            kind = self.field(line, r, "kind", str)
            if kind not in ENTITY_KINDS:
                self.fail(line, f"entity kind {kind!r} is not one of {', '.join(ENTITY_KINDS)}")
            out[eid], keys[key] = EntityRecord(key, self.label(line, r, "name", f"entity {eid}'s name"), kind), eid
            for mention in self.field(line, r, "mentions", list):
                if not (isinstance(mention, list) and len(mention) == 3 and all(isinstance(x, str) for x in mention[1:])):
                    self.fail(line, f"a mention is [item id, surface, role], not {mention!r}")
                item = self.item(line, mention[0], f"a mention of entity {eid}")
                surface = self.label(line, {"surface": mention[1]}, "surface", f"a mention of entity {eid}")
                self._part(line, parts, item).mentions.append((item, eid, surface, mention[2]))
        return out

    def _entity(self, line: int, r: dict[str, Any], name: str, entities: dict[int, Any], optional: bool = False) -> int | None:
        eid = self.field(line, r, name, int, optional)
        if eid is not None and eid not in entities:
            self.fail(line, f"{r['type']} field {name!r} names entity {eid}, which the export does not hold")
        return eid

    def _fact(self, line: int, r: dict[str, Any], entities: dict[int, Any], snapshot: Snapshot) -> None:
        origin = self.field(line, r, "origin", str)
        if origin not in ORIGINS:
            self.fail(line, f"fact origin {origin!r} is not one of {', '.join(ORIGINS)}")
        words = (self.label(line, r, name, f"fact {r.get('id')}'s {name}") for name in ("subject", "predicate", "object"))  # even blank
        fact = FactRecord(*words,
                          self._entity(line, r, "subject_entity", entities, optional=True),
                          self._entity(line, r, "object_entity", entities, optional=True),
                          self.date(line, r, "time"), origin, self.items(line, r, "provenance"),
                          self.field(line, r, "id", int, optional=r.get("version", 1) < 3),
                          {name: self.date(line, r, name) for name in TIMES})
        if fact.id is not None:
            if fact.id in snapshot.facts:
                self.fail(line, f"fact {fact.id} appears twice")
            snapshot.facts[fact.id] = fact
        one_item_per_source = {self.source_of_item[i]: i for i in fact.provenance}
        for item in one_item_per_source.values():
            self._part(line, snapshot.parts, item).facts.append(fact)
        if not fact.provenance:
            snapshot.loose.append(fact)

    def _history(self, records: list[tuple[int, dict[str, Any]]], snapshot: Snapshot) -> None:
        """The links between facts (checked once every fact is read: a link may point forward)."""
        for line, r in records:
            fact = snapshot.facts.get(r.get("id"))
            for name in ("superseded_by", "version_of"):
                target = self.field(line, r, name, int, optional=True)
                if target is not None and target not in snapshot.facts:
                    self.fail(line, f"fact field {name!r} names fact {target}, which the export does not hold")
                if fact is not None:
                    setattr(fact, name, target)

    def _conflict(self, line: int, r: dict[str, Any], snapshot: Snapshot) -> ConflictRecord:
        kind, status = self.field(line, r, "kind", str), self.field(line, r, "status", str)
        if kind not in CONFLICT_KINDS or status not in CONFLICT_STATUSES:
            self.fail(line, f"a conflict's kind is one of {', '.join(CONFLICT_KINDS)} and its status one of "
                            f"{', '.join(CONFLICT_STATUSES)}, not {kind!r} / {status!r}")
        named = snapshot.entities if kind == "duplicate" else snapshot.facts
        members = [self.field(line, r, "a", int), self.field(line, r, "b", int, optional=True)]
        for m in members:  # a decided one may name what its decision removed (an entity merged into the other)
            if m is not None and m not in named and status == "open":
                self.fail(line, f"conflict names {'entity' if kind == 'duplicate' else 'fact'} {m}, which the export does not hold")
        return ConflictRecord(self.field(line, r, "id", int, optional=r.get("version", 1) < 4), kind, members[0], members[1],
                              self.label(line, r, "reason", "a conflict's reason"), status,
                              self.date(line, r, "created_at", optional=False), self.date(line, r, "decided_at"))

    def _episodes(self, records: list[tuple[int, dict[str, Any]]], parts: dict[int, SourcePart]) -> None:
        source_of: dict[int, int] = {}
        placed: dict[str, set[int]] = {"items": set(), "home": set()}
        for line, r in records:
            eid, source = self.field(line, r, "id", int), self.field(line, r, "source_id", int)
            if source not in parts:
                self.fail(line, f"episode {eid} belongs to source {source}, which the snapshot does not cover")
            if eid in source_of:
                self.fail(line, f"episode {eid} appears twice")
            source_of[eid] = source
            members = {name: self.items(line, r, name, source) for name in ("items", "home")}
            for name, ids in members.items():
                if placed[name] & set(ids) or len(set(ids)) < len(ids):
                    self.fail(line, f"an item is in the {name!r} of two episodes")
                placed[name] |= set(ids)
            home = set(members["home"])
            parts[source].episodes.append(EpisodeRecord(
                eid, self.field(line, r, "session", str), self.field(line, r, "summary", str), self.field(line, r, "origin", str),
                self.field(line, r, "merged_into", int, optional=True), members["items"], members["home"],
                [self._event(line, e, home) for e in self.field(line, r, "events", list)]))
        for line, r in records:
            into = r.get("merged_into")
            if into is not None and source_of.get(into) != source_of[r["id"]]:
                self.fail(line, f"episode {r['id']} is merged into {into}, which is not an episode of the same source")
        if placed["items"] != placed["home"]:
            self.fail(records[-1][0], "every item in an episode needs both a current and a home episode")

    def _event(self, line: int, e: Any, home: set[int]) -> tuple[int, str, dict[str, Any]]:
        if not isinstance(e, dict) or e.get("item_id") not in home or not isinstance(e.get("origin"), str):
            self.fail(line, f"an event needs the item_id of an item built in this episode and an origin, not {e!r}")
        if not isinstance(e.get("participants", []), list) or not all(
                isinstance(e.get(k), (str, type(None))) for k in EVENT_ROLES if k != "participants"):
            self.fail(line, f"an event's participants are a list and its other roles text, not {e!r}")
        return e["item_id"], e["origin"], {k: e.get(k, [] if k == "participants" else None) for k in EVENT_ROLES}
