"""The knowledge layer's records, as the app and the CLI see them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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
    """A subject–predicate–object statement with its time (when known) and every item stating it."""

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

    def triple(self) -> str:
        return f"{self.subject} {self.predicate} {self.object}"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
