"""The conflict inbox: what the rules could not decide, for a person to settle in one choice.

Three kinds of conflict, each with the facts or entities involved and the items behind them:

* ``clash``: two facts of one subject and single-valued slot with different objects whose
  order the rules could not tell (:mod:`.timeline`);
* ``duplicate``: two entities that may be one ("Priya", "Priya Raman"): one name is the other
  plus one capitalised word that names nothing of its own, and the short one is used as a name
  of its own somewhere (not only as a modifier, as "Swiss" in "Swiss bread");
* ``orphaned``: a fact whose every evidence item was deleted, kept because something depends
  on it (a supersession, a curated version) or a person stated it.

Choices: ``accept`` (a clash: the later fact supersedes the earlier; a duplicate: merge; an
orphan: keep it), ``both`` (both hold / two entities), ``merge`` (one value in other words:
the second fact's evidence joins the first, which stays; or one entity), ``retire`` (the
clash's second fact, or the orphan, is no longer believed; what it superseded holds again).
Each is one decision of the audit log (:meth:`.timeline.Timeline.decision`) and can be undone.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Sequence

from ..errors import KnowledgeError
from ..records import Item
from ..text import STOPWORDS
from .entities import entity_key
from .records import Conflict, Decision, Entity, Fact
from .supersession import before
from .timeline import Timeline, fact_of_row
from .verbs import is_verb

if TYPE_CHECKING:
    from ..store import Store

CHOICES = {"clash": ("accept", "both", "merge", "retire"), "duplicate": ("accept", "both", "merge"),
           "orphaned": ("accept", "retire")}
STATUS = {"accept": "accepted", "both": "both", "merge": "merged", "retire": "retired"}
EVIDENCE_PER_ENTITY = 5  # mention items shown beside a duplicate


class Inbox:
    """Conflicts of one store: found, listed with their evidence, decided and undone."""

    def __init__(self, store: "Store", timeline: Timeline, items: Callable[[Sequence[int]], dict[int, Item]]) -> None:
        self.store = store
        self.timeline = timeline
        self.items = items

    # -- finding ------------------------------------------------------------------------------

    def find_duplicates(self, entity_ids: Sequence[int]) -> list[int]:
        """Open a conflict for each pair of a name and that name plus one capitalised word
        where one of the two is among ``entity_ids``; returns the conflicts opened. Inside a
        transaction."""
        wanted = set(entity_ids)
        if not wanted:
            return []
        rows = self.store.entity_rows()
        by_key = {key: (eid, name, kind) for eid, key, name, kind in rows}
        opened = []
        for key, (eid, name, kind) in by_key.items():
            words = key.split()
            if len(words) < 2 or kind == "title" or "'" in name or "’" in name:
                continue
            extra = name.split()[-1]
            short = by_key.get(" ".join(words[:-1]))
            if short is None or short[2] == "title" or not (extra[:1].isupper() and extra.isalpha()) \
                    or not name.startswith(short[1] + " ") or entity_key(extra) in by_key:
                continue  # "Go Jon" is not "GO" plus a surname: Jon is someone of his own
            if {eid, short[0]} & wanted and self._named_alone(short[0], short[1]):
                conflict = self.store.open_conflict("duplicate", f"duplicate:{short[0]}:{eid}", short[0], eid,
                                                    f"{name!r} is {short[1]!r} with one more word")
                if conflict is not None:
                    opened.append(conflict)
        return opened

    def _named_alone(self, entity_id: int, name: str) -> bool:
        """Whether some item uses ``name`` as a name of its own: followed by a mark, a small
        word or a verb ("Priya started"), not only by a noun it modifies ("Swiss bread")."""
        items = self.items([i for i, _surface, _role in self.store.mentions_of_entity(entity_id)])
        pattern = re.compile(rf"\b{re.escape(name)}\b(?:\W+(\w+))?", re.I)
        for item in items.values():
            for m in pattern.finditer(item.text):
                after = (m.group(1) or "").lower()
                if not after or after in STOPWORDS or is_verb(after) or not after.isalpha():
                    return True
        return False

    def keep_for_review(self, fact_ids: Sequence[int]) -> list[int]:
        """Of facts about to lose their last evidence, those to keep and ask about: a person
        stated them, or they supersede or were superseded by another (their history would
        break). Opens an ``orphaned`` conflict for each; returns them. Inside the transaction."""
        rows = self.store.fact_rows(list(fact_ids))
        chained = set(self.store.chained_facts(list(fact_ids)))
        kept = [r[0] for r in rows if r[11] is None and (r[0] in chained or r[7] == "user")]
        for fid in kept:
            self.store.open_conflict("orphaned", f"orphaned:{fid}", fid, None,
                                     "its evidence was deleted; keep it, or retire it (what it superseded holds again)")
        return kept

    # -- listing ------------------------------------------------------------------------------

    def conflicts(self, status: str | None = "open", ids: Sequence[int] | None = None) -> list[Conflict]:
        """Conflicts (open ones by default; ``status=None`` for all) with their facts or
        entities and the items behind each."""
        out = []
        for cid, kind, _key, a, b, reason, st, created, decided in self.store.conflict_rows(status, ids):
            c = Conflict(id=cid, kind=kind, status=st, reason=reason, created_at=created, decided_at=decided,
                         choices=list(CHOICES.get(kind, ())))
            members = [x for x in (a, b) if x is not None]
            if kind == "duplicate":
                c.entities = [self._entity(e) for e in members if self.store.entity_row(e)]
                for e in c.entities:
                    c.evidence[e.id] = [i for i, _s, _r in self.store.mentions_of_entity(e.id)][:EVIDENCE_PER_ENTITY]
            else:
                rows = self.store.fact_rows(members)
                sources = self.store.fact_sources_of([r[0] for r in rows])
                c.facts = [fact_of_row(r, sources.get(r[0], [])) for r in rows]
                c.evidence = {f.id: f.provenance for f in c.facts}
            out.append(c)
        return out

    def _entity(self, entity_id: int) -> Entity:
        eid, key, name, kind = self.store.entity_row(entity_id)
        items, facts = self.store.entity_counts([eid]).get(eid, (0, 0))
        return Entity(id=eid, name=name, key=key, kind=kind, items=items, facts=facts)

    def conflict(self, conflict_id: int) -> Conflict:
        found = self.conflicts(status=None, ids=[conflict_id])
        if not found:
            raise KnowledgeError(f"no conflict with id {conflict_id}")
        return found[0]

    # -- deciding -----------------------------------------------------------------------------

    def decide(self, conflict_id: int, choice: str, actor: str = "user") -> Decision:
        """Settle an open conflict with ``choice`` (see the module docstring) as one decision.
        Inside a transaction."""
        c = self.conflict(conflict_id)
        if c.status != "open":
            raise KnowledgeError(f"conflict {conflict_id} is already decided ({c.status}); undo that decision first")
        if choice not in c.choices:
            raise KnowledgeError(f"conflict {conflict_id} ({c.kind}) takes {', '.join(c.choices)}, not {choice!r}")
        if c.kind == "duplicate":
            if len(c.entities) < 2:
                raise KnowledgeError(f"conflict {conflict_id}: one of its entities is gone")
            return self._decide_duplicate(c, choice, actor)
        if not c.facts or (c.kind == "clash" and len(c.facts) < 2):
            raise KnowledgeError(f"conflict {conflict_id}: one of its facts is gone")
        facts = [f.id for f in c.facts]
        summary = f"{choice} conflict {c.id}: {c.summary()}"
        with self.timeline.decision(actor, STATUS[choice], summary, facts=facts, conflict_id=c.id):
            if c.kind == "clash":
                self._settle_clash(c.facts, choice)
            elif choice == "retire":
                self._retire(c.facts[0])
            self.store.set_conflict_status(c.id, STATUS[choice])
        return self.timeline.decisions(limit=1)[0]

    def _settle_clash(self, facts: list[Fact], choice: str) -> None:
        first, second = facts
        if choice == "accept":
            order = before(first.valid_from, second.valid_from)
            older, newer = (second, first) if order is False else (first, second)
            self.store.set_validity(older.id, newer.valid_from, newer.id)
        elif choice == "merge":
            self.store.insert_fact_sources((first.id, i) for i in second.provenance)
            if second.valid_from:
                self.store.widen_validity(first.id, second.valid_from)
            self._retire(second)
        elif choice == "retire":
            self._retire(second)

    def _retire(self, fact: Fact) -> None:
        """Stop believing a fact; what it superseded holds again."""
        for other in self.store.superseded_by(fact.id):
            self.store.set_validity(other, None, None)
        self.store.retire_facts([fact.id])

    def _decide_duplicate(self, c: Conflict, choice: str, actor: str) -> Decision:
        short, full = c.entities
        ids = [short.id, full.id]
        summary = f"{choice} conflict {c.id}: {c.summary()}"
        with self.timeline.decision(actor, STATUS[choice], summary, entities=ids, conflict_id=c.id):
            if choice in ("accept", "merge"):  # the fuller name stays; mentions keep their surface for a split
                self.store.move_mentions(short.id, full.id)
                self.store.repoint_facts(short.id, full.id)
                self.store.move_synonyms(short.id, full.id)
            self.store.set_conflict_status(c.id, STATUS[choice])
            if choice in ("accept", "merge"):
                self.store.delete_entities([short.id])
        return self.timeline.decisions(limit=1)[0]

