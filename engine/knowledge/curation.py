"""Curating the knowledge area: a person edits, adds and deletes facts, renames, merges and
splits entities, merges and splits episodes.

Every call is one transaction, with its line in the activity log, and takes ``dry_run`` (the same
writes inside a rolled-back savepoint, so the report is exact). A request that would duplicate a
fact or orphan an entity is refused with one line (:class:`engine.errors.KnowledgeError`);
merges keep what a split needs to undo them.
"""

from __future__ import annotations

import functools
import inspect
from contextlib import contextmanager
from datetime import datetime
from typing import Callable, Concatenate, Iterator, ParamSpec, Sequence, TypeVar

from ..errors import KnowledgeError
from .building import Batch
from .dedup import fact_key
from .entities import entity_key
from .episodes import summarize
from .extract import Extraction
from .reading import KnowledgeReading, events_for
from .records import (EntitiesMerged, EntityRenamed, EntitySplit, EpisodeSplit, EpisodesMerged, FactAdded, FactDeleted,
                      FactDraft, FactEdited)

P = ParamSpec("P")
R = TypeVar("R")


def _atomic(method: Callable[Concatenate[KnowledgeCuration, P], R]) -> Callable[Concatenate[KnowledgeCuration, P], R]:
    """A curation call's checks and its writes in one transaction: what it checked (an entity
    exists, a name is free) cannot change before it writes, when another process merges or
    renames at the same moment. A dry run writes nothing and needs no lock."""
    signature = inspect.signature(method)

    @functools.wraps(method)
    def run(self: KnowledgeCuration, *args: P.args, **kwargs: P.kwargs) -> R:
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


class KnowledgeCuration(KnowledgeReading):
    """Curation calls of the knowledge area."""

    @contextmanager
    def _curating(self, dry_run: bool, action: str, subject: str) -> Iterator[None]:
        """A curation's one transaction (or dry run), with its line in the activity log."""
        with self._writing(dry_run):
            yield
            if not dry_run:
                self.mem.activity.record(action, subject)

    def _would_orphan(self, entity_id: int | None) -> bool:
        """Whether an entity is named by one fact and nothing else."""
        if entity_id is None:
            return False
        items, facts = self.store.entity_counts([entity_id]).get(entity_id, (0, 0))
        return items == 0 and facts <= 1

    @_atomic
    def edit_fact(self, fact_id: int, *, subject: str | None = None, predicate: str | None = None,
                  object: str | None = None, time: str | None = None, dry_run: bool = False) -> FactEdited:
        """Change a fact's words or time: a new version (origin ``user``) takes its place, the
        old one is retired, not overwritten (:meth:`fact_history` shows both; the decision can
        be undone). Refused for a retired fact, and when the edit would duplicate another fact
        or leave an entity that nothing else names."""
        old = self.fact(fact_id)
        if old.retired_at:
            raise KnowledgeError(f"fact {fact_id} is an earlier version (retired {old.retired_at}); edit its current one")
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
            return FactEdited(facts_changed=0, fact=fact_id)  # nothing to change: not even who stated it
        valid_from = old.valid_from if time is None else when
        summary = f"fact {fact_id}: {s} —{p}→ {o}"
        with self._curating(dry_run, "fact.edited", summary):
            with self.timeline.decision("user", "edited", f"edited {summary}", facts=[fact_id]):
                new_id = self.store.new_fact_version(fact_id, key, s, p, o, subject_id, object_id, when, valid_from)
            self.timeline.apply_rules([new_id], actor="rules")
        if not dry_run:
            self.load()
        return FactEdited(facts_changed=1, fact=None if dry_run else new_id, version_of=fact_id)

    @_atomic
    def add_fact(self, subject: str, predicate: str, object: str, provenance: Sequence[int], *, time: str | None = None,
                 dry_run: bool = False) -> FactAdded:
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
        batch = Batch()
        with self._curating(dry_run, "fact.added", f"{subject} —{predicate}→ {object}"):
            ids = self._register_entities([Extraction(facts=[draft])], batch)
            fid = self.store.insert_fact(key, subject, predicate, object, ids.get(draft.subject_key),
                                         self.registry.lookup(draft.object_key), time, "user")
            self.store.insert_fact_sources((fid, i) for i in provenance)
        self.load()  # also drops what a dry run staged
        return FactAdded(facts_added=1, fact=None if dry_run else fid)

    @_atomic
    def delete_fact(self, fact_id: int, dry_run: bool = False) -> FactDeleted:
        """Delete a fact; entities that nothing else names go with it."""
        fact = self.fact(fact_id)
        with self._curating(dry_run, "fact.deleted", f"fact {fact_id}: {fact.subject} —{fact.predicate}→ {fact.object}"):
            self.store.delete_facts([fact_id])
            orphans = self.store.orphan_entities()
            self.store.delete_entities(orphans)
        if not dry_run:
            self.load()
        return FactDeleted(facts_deleted=1, entities_deleted=len(orphans))

    @_atomic
    def rename_entity(self, entity_id: int, name: str, dry_run: bool = False) -> EntityRenamed:
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
        return EntityRenamed(entities_renamed=1, facts_changed=n)

    @_atomic
    def merge_entities(self, keep_id: int, other_id: int, dry_run: bool = False) -> EntitiesMerged:
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
        return EntitiesMerged(entities_merged=1, kept=keep.name, removed=other.name, mentions_moved=moved, facts_moved=facts)

    @_atomic
    def split_entity(self, entity_id: int, surfaces: Sequence[str], name: str | None = None,
                     dry_run: bool = False) -> EntitySplit:
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
        return EntitySplit(entities_created=1, entity=new_id if not dry_run else None, mentions_moved=moved, facts_moved=facts)

    @_atomic
    def merge_episodes(self, keep_id: int, other_id: int, dry_run: bool = False) -> EpisodesMerged:
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
        return EpisodesMerged(episodes_merged=1, items_moved=len(other.items))

    @_atomic
    def split_episode(self, episode_id: int, dry_run: bool = False) -> EpisodeSplit:
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
        return EpisodeSplit(episodes_restored=len(restored), episodes=restored)

    def _resummarize(self, episode_id: int) -> None:
        """Recompute a rule-built summary after its items changed (an LLM summary is kept)."""
        row = self.store.episode_rows(ids=[episode_id])
        if not row or row[0][4] != "rule":
            return
        ids = self.store.items_of_episodes([episode_id]).get(episode_id, [])
        items = sorted(self.mem.items(ids).values(), key=lambda i: i.position)
        events = self.store.events_of_items(ids)
        self.store.set_episode_summary(episode_id, summarize(items, events_for([i.id for i in items], events)))
