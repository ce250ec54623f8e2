"""The activity log: what changed in a store, when, and through which client.

Every write records one line inside its own transaction, so the log holds exactly what was
committed: sources and items added, replaced or deleted, facts extracted, curation, feedback,
rebuilds. Each line names its client: ``cli``, ``app``, ``python`` (the library, the default) or
``mcp:<client name>`` (an agent through the MCP server). The log is bounded (the newest
:data:`KEEP` lines stay) and its ids are never reused, so they serve as a cursor.

The log is also the change feed other processes follow: a memory that sees lines it did not write
applies just those changes (:func:`changes_since`) instead of reloading the store, and reloads
everything only when it cannot tell (the lines it missed were pruned, or one it does not know).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable

if TYPE_CHECKING:
    from .store import Store

KEEP = 10_000  # lines kept; older ones are pruned as new ones are written
CLIENTS = ("cli", "app", "python")  # and "mcp:<client name>"

# What each action changes, for a memory following the log: "items" (the ids in the line's
# ``added`` and ``removed`` ranges), an area whose state is reloaded, or "all".
SOURCE_ADDED, SOURCE_REPLACED, SOURCE_DELETED, ITEM_DELETED = "source.added", "source.replaced", "source.deleted", "item.deleted"
FACTS_EXTRACTED = "facts.extracted"
# The deferred areas read items a deferred ingest stored (its ``source.added`` line says
# ``deferred``): a follower's deferred areas take them in now, its index already holds them.
AREAS_CAUGHT_UP = "areas.caught_up"
EFFECTS: dict[str, tuple[str, ...]] = {
    SOURCE_ADDED: ("items",), SOURCE_REPLACED: ("items", "knowledge", "ranker"),  # a deletion cascades in both
    SOURCE_DELETED: ("items", "knowledge", "ranker"), ITEM_DELETED: ("items", "knowledge", "ranker"),
    FACTS_EXTRACTED: (),  # said by the knowledge area inside the ingest that the source's line covers
    AREAS_CAUGHT_UP: ("caught_up",),
    "fact.added": ("knowledge",), "fact.edited": ("knowledge",), "fact.deleted": ("knowledge",),
    "entity.renamed": ("knowledge",), "entity.merged": ("knowledge",), "entity.split": ("knowledge",),
    "episode.merged": ("knowledge",), "episode.split": ("knowledge",), "facts.llm": ("knowledge",),
    "feedback": ("ranker",), "feedback.withdrawn": ("ranker",), "feedback.removed": ("ranker",),
    "ranker.reset": ("ranker",),
    "ranker.distilled": ("ranker",),
    # a process relearned from the log under its feature set: one with another set that reloaded
    # on this line would relearn under its own and write, and the two would follow each other
    "ranker.relearned": (),
    "topics.rebuilt": ("topics",),
    "index.refit": ("lsa",), "index.calibrated": ("calibration",),
    "store.cleared": ("all",), "store.imported": ("all",), "store.reindexed": ("all",),
}


@dataclass
class ActivityEvent:
    """One line of the log."""

    action: str  # one of EFFECTS' keys
    subject: str = ""  # what it concerns, as a person reads it: a source's name, "fact 12", a query
    count: int = 0  # how many items (facts, for facts.extracted) it concerns
    source_id: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)  # "added" / "removed": item id ranges, and more
    client: str = "python"
    at: float = 0.0  # seconds since 1970
    id: int = 0

    @property
    def added(self) -> list[int]:
        return expand(self.detail.get("added", []))

    @property
    def removed(self) -> list[int]:
        return expand(self.detail.get("removed", []))

    def describe(self) -> str:
        """The line as the app's Activity view shows it."""
        what = self.action.replace(".", " ")
        count = f" ({self.count})" if self.count else ""
        return f"{what}{count}: {self.subject}" if self.subject else f"{what}{count}"


def ranges(ids: Iterable[int]) -> list[list[int]]:
    """Item ids as ``[first, last]`` runs: an ingest's ids are one run, whatever its size."""
    out: list[list[int]] = []
    for i in sorted(set(ids)):
        if out and out[-1][1] == i - 1:
            out[-1][1] = i
        else:
            out.append([i, i])
    return out


def expand(runs: Iterable[Iterable[int]]) -> list[int]:
    return [i for first, last in runs for i in range(first, last + 1)]


@dataclass
class Changes:
    """What another process committed since a memory last looked, as it must apply it."""

    added: list[int] = field(default_factory=list)  # item ids to index (read from the store now)
    removed: list[int] = field(default_factory=list)  # item ids to drop
    deferred: set[int] = field(default_factory=set)  # of ``added``: not yet read by the deferred areas
    caught_up: list[int] = field(default_factory=list)  # item ids the deferred areas have now read
    reload: set[str] = field(default_factory=set)  # areas (or "lsa") whose state is read again
    everything: bool = False  # reload it all: the lines missed were pruned, or one is unknown

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.caught_up or self.reload or self.everything)


def changes_since(cursor: int, events: list[ActivityEvent], own: set[int]) -> Changes:
    """Fold the lines after ``cursor`` (in id order) into one change, skipping the lines this
    memory wrote itself (``own``): its state already holds them."""
    out = Changes()
    if cursor < 0 or events and events[0].id != cursor + 1:  # unknown, or the lines in between were pruned
        out.everything = True
        return out
    added: dict[int, None] = {}
    removed: set[int] = set()
    for event in events:
        if event.id in own:
            continue
        effects = EFFECTS.get(event.action, ("all",))
        if "all" in effects:
            out.everything = True
            return out
        if "items" in effects:
            for i in event.removed:
                if i in added:  # added and removed again within the window: never indexed here
                    del added[i]
                else:
                    removed.add(i)
            added.update(dict.fromkeys(event.added))
            if event.detail.get("deferred"):
                out.deferred.update(event.added)
        if "caught_up" in effects:  # read now: in this window's additions, or told on its own
            out.caught_up.extend(i for i in event.added if i not in out.deferred)
            out.deferred -= set(event.added)
        out.reload.update(e for e in effects if e not in ("items", "caught_up"))
    out.added, out.removed = list(added), sorted(removed)
    out.deferred &= set(added)
    out.caught_up = [i for i in out.caught_up if i not in removed]
    return out


class Activity:
    """A memory's end of the log: it writes lines as ``client`` and remembers which are its own."""

    def __init__(self, store: "Store", client: str = "python") -> None:
        self.store = store
        self.client = client
        self._own: set[int] = set()
        self._lock = threading.Lock()

    def record(self, action: str, subject: str = "", *, count: int = 0, source_id: int | None = None,
               **detail: Any) -> None:
        """Log one change. Call it inside the write transaction that makes the change, so the line
        commits (or rolls back) with it."""
        event = ActivityEvent(action, subject[:200], count, source_id, detail, self.client, time.time())
        event_id = self.store.insert_activity(event, KEEP)
        with self._lock:
            self._own.add(event_id)

    def recent(self, limit: int = 200, before: int | None = None) -> list[ActivityEvent]:
        """The newest lines first (those older than id ``before``, when given)."""
        return self.store.activity_lines(limit, before)

    def last_id(self) -> int:
        return self.store.last_activity_id()

    def changes(self, cursor: int) -> tuple[Changes, int]:
        """What others committed after ``cursor``, and the new cursor."""
        events = self.store.activity_after(max(cursor, 0))
        if not events:
            return Changes(everything=cursor < 0), max(cursor, 0)
        with self._lock:
            change = changes_since(cursor, events, self._own)
            self._own = {i for i in self._own if i > events[-1].id}
        return change, events[-1].id


def encode(detail: dict[str, Any]) -> str:
    return json.dumps(detail, ensure_ascii=False, separators=(",", ":"))
