"""The knowledge layer's records, as the app and the CLI see them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, NotRequired, TypedDict

EVENT_ROLES = ("participants", "action", "time", "location", "reason", "method")


@dataclass
class Entity:
    """A named thing: a speaker, a passage title, a capitalised name, a tag."""

    id: int
    name: str
    key: str  # the normalised name every extractor links by
    kind: str = "name"  # speaker | title | name | tag
    items: int = 0  # items that mention it
    facts: int = 0  # facts that name it
    synonyms: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Fact:
    """A subject–predicate–object statement with its time (when known) and every item stating it.

    Two kinds of time: when it held in the world (``valid_from`` … ``valid_to``; ISO dates at the
    precision known, an open end is None) and when the store believed it (``recorded_at`` …
    ``retired_at``, UTC). A superseded fact names its successor; a curated version names the
    version it replaced."""

    id: int
    subject: str
    predicate: str
    object: str
    time: str | None = None
    subject_id: int | None = None
    object_id: int | None = None
    origin: str = "rule"  # rule | llm | user
    provenance: list[int] = field(default_factory=list)  # item ids
    score: float = 0.0  # relevance to a query, when retrieved for one
    valid_from: str | None = None
    valid_to: str | None = None
    recorded_at: str | None = None
    retired_at: str | None = None
    superseded_by: int | None = None
    version_of: int | None = None
    seen_at: str | None = None  # the reference time it was recalled at (None: now), for its state

    def triple(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"

    def state(self, at: str | None = None) -> str:
        """``retired`` (no longer believed), ``superseded`` (replaced by ``at``, default now),
        ``not yet`` (holds only after ``at``) or ``current``."""
        if self.retired_at:
            return "retired"
        if at is not None and self.valid_from and self.valid_from[: len(at)] > at[: len(self.valid_from)]:
            return "not yet"
        if self.superseded_by is not None or self.valid_to is not None:
            if at is None or self.valid_to is None or self.valid_to[: len(at)] <= at[: len(self.valid_to)]:
                return "superseded"
        return "current"

    def state_note(self) -> str:
        """The state as a listing marks it beside the fact ("superseded by #12", "not yet",
        "retired"), empty while it holds; as of when it was recalled."""
        state = self.state(self.seen_at)
        if state == "superseded" and self.superseded_by is not None:
            return f"{state} by #{self.superseded_by}"
        return "" if state == "current" else state

    def validity(self, at: str | None = None) -> str:
        """The validity as a person reads it ("2023-04-01 → 2023-06", "since 2023-04-01", "–"),
        as known at ``at`` (default: when it was recalled; an end after that is not shown)."""
        at = at or self.seen_at
        ended = self.valid_to is not None and (at is None or self.valid_to[: len(at)] <= at[: len(self.valid_to)])
        if ended:
            return f"{self.valid_from or '?'} → {self.valid_to}"
        if self.superseded_by is not None and at is None:
            return f"{self.valid_from or '?'} → ?"
        return f"since {self.valid_from}" if self.valid_from else "–"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["state"] = self.state(self.seen_at)
        return d


@dataclass
class Decision:
    """One entry of the audit log: what decided (``rules``, ``llm``, ``user``), what it did,
    and whether it was undone (by which decision) or undoes another."""

    id: int
    at: str
    actor: str
    action: str
    summary: str
    conflict_id: int | None = None
    changes: int = 0  # rows it changed
    undoes: int | None = None
    undone_by: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Conflict:
    """An open question for a person: two facts that clash (``clash``), two entities that may be
    one (``duplicate``), or a fact whose evidence was deleted (``orphaned``), with the facts or
    entities and the items behind each, and the choices that apply."""

    id: int
    kind: str
    status: str  # open | accepted | both | merged | retired
    reason: str
    created_at: str
    decided_at: str | None = None
    facts: list[Fact] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    evidence: dict[int, list[int]] = field(default_factory=dict)  # fact or entity id → item ids
    choices: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.kind == "duplicate":
            return " = ".join(repr(e.name) for e in self.entities) + "?"  # one entity?
        if self.kind == "orphaned":
            return f"{self.facts[0].triple()}: its evidence was deleted" if self.facts else "a fact lost its evidence"
        if len(self.facts) == 2 and self.facts[0].subject == self.facts[1].subject:  # the subject once
            return f"{self.facts[0].subject}: " + "  vs  ".join(f"{f.predicate} {f.object}" for f in self.facts)
        return "  vs  ".join(f.triple() for f in self.facts)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["summary"] = self.summary()
        return d


@dataclass
class Event:
    """One 5W1H event: who, what, when, where, why, how; ``item_id`` is the turn that states it."""

    item_id: int
    participants: list[str] = field(default_factory=list)
    action: str = ""
    time: str | None = None
    location: str | None = None
    reason: str | None = None
    method: str | None = None
    origin: str = "rule"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def body(self) -> dict[str, Any]:
        """What the store keeps (the item id and origin are columns)."""
        return {k: getattr(self, k) for k in EVENT_ROLES}


@dataclass
class FactDraft:
    """A fact as an extractor (the rules, a restatement, an LLM, an import) reads it: names and
    keys, not yet entity ids; the building step links and stores it."""

    subject: str
    predicate: str
    object: str
    subject_key: str
    object_key: str | None
    time: str | None = None
    subject_named: bool = True  # False for a common noun phrase ("the dough"): no entity of its own


@dataclass
class Episode:
    """An episodic memory: a summary and events over a run of items, with provenance to each."""

    id: int
    source_id: int
    session: str
    summary: str
    items: list[int] = field(default_factory=list)  # provenance, in item order
    events: list[Event] = field(default_factory=list)
    participants: list[str] = field(default_factory=list)
    time_start: str | None = None
    time_end: str | None = None
    images: list[dict[str, str]] = field(default_factory=list)  # {item_id, url, caption}
    merged_from: list[int] = field(default_factory=list)  # episodes merged into this one (split undoes it)
    origin: str = "rule"
    score: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["provenance"] = list(self.items)
        return d


class GraphNode(TypedDict):
    """One node of the knowledge graph in a recall's graph expansion."""

    node: str  # "item:<id>", "entity:<id>" or "phrase:<text>"
    kind: Literal["item", "entity", "phrase"]
    score: float
    name: NotRequired[str]  # an entity's or a phrase's name


class GraphReport(TypedDict):
    """A recall's graph expansion (Personalized PageRank): the seeds and the nodes reached, best first."""

    seeds: list[GraphNode]
    reached: list[GraphNode]


# -- what a curation changed ---------------------------------------------------------------------


_UNLESS_NONE = {"unless_none": True}  # a field left out of to_dict() when it is None


@dataclass(frozen=True)
class CurationReport:
    """What a curation changed, or in a dry run would change: how many of each kind, and the ids
    of what it made (None in a dry run). Each action has its own record below."""

    def to_dict(self) -> dict[str, Any]:
        """The report as the CLI prints it (and ``--json``), in the record's field order."""
        return {f.name: value for f in fields(self)
                if (value := getattr(self, f.name)) is not None or not f.metadata.get("unless_none")}


@dataclass(frozen=True)
class FactEdited(CurationReport):
    facts_changed: int  # 0 when the edit changes nothing (then ``fact`` is the fact itself)
    fact: int | None  # the new version
    version_of: int | None = field(default=None, metadata=_UNLESS_NONE)  # the fact it replaces


@dataclass(frozen=True)
class FactAdded(CurationReport):
    facts_added: int
    fact: int | None


@dataclass(frozen=True)
class FactDeleted(CurationReport):
    facts_deleted: int
    entities_deleted: int  # that nothing else named


@dataclass(frozen=True)
class EntityRenamed(CurationReport):
    entities_renamed: int
    facts_changed: int  # that spelled the old name


@dataclass(frozen=True)
class EntitiesMerged(CurationReport):
    entities_merged: int
    kept: str
    removed: str
    mentions_moved: int
    facts_moved: int


@dataclass(frozen=True)
class EntitySplit(CurationReport):
    entities_created: int
    entity: int | None
    mentions_moved: int
    facts_moved: int


@dataclass(frozen=True)
class EpisodesMerged(CurationReport):
    episodes_merged: int
    items_moved: int


@dataclass(frozen=True)
class EpisodeSplit(CurationReport):
    episodes_restored: int
    episodes: list[int]  # the episodes given back their items
