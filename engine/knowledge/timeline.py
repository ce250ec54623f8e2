"""Facts through time: when a statement holds, which fact replaces which, and the audit log.

A fact holds in the world from its statement's own date ("I moved to Berlin last week" said on
8 April 2023 holds from 2023-04-01), else its session's date; a date in the future of the
session ("a trip to Greece in July") is when the plan is carried out, not when it holds, so the
session's date is used. When a new fact shares a subject and a single-valued slot with a known
one (:mod:`.supersession`), the later one supersedes the earlier: the earlier's ``valid_to`` is
set and it links to its successor; nothing is deleted. What the rules cannot decide becomes a
conflict for the inbox (:mod:`.inbox`).

Every change to the facts' validity, every curated version and every inbox choice is a
*decision* in the store's audit log, with the before and after images of the rows it changed,
so each can be undone (refused, with the reason, when a later change touched the same rows).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from ..as_of import later
from ..errors import KnowledgeError
from ..store.knowledge import StaleUndo
from .entities import entity_key
from .records import Decision, Fact
from .supersession import Rules, Slot, before, fact_forms, load_rules, span, verdict

if TYPE_CHECKING:
    from ..store import Store
    from .entities import EntityRegistry


_CURRENT = frozenset("new current latest present now".split())  # "my new manager" is my manager


def statement_valid_from(stated: str | None, said: str | None) -> str | None:
    """When a statement holds from: its own date, unless that lies after the day it was said
    (a plan's date), else the day it was said (``said``: the item's timestamp)."""
    day = said[:10] if said else None
    if stated and (day is None or stated[: len(day)] <= day[: len(stated)]):
        return stated
    return day


def fact_of_row(row: Sequence[Any], provenance: list[int] | None = None) -> Fact:
    """A store row (``KnowledgeSQL._FACT_COLUMNS``) as a :class:`Fact`."""
    return Fact(id=row[0], subject=row[1], predicate=row[2], object=row[3], subject_id=row[4], object_id=row[5],
                time=row[6], origin=row[7], provenance=provenance or [], valid_from=row[8], valid_to=row[9],
                recorded_at=row[10], retired_at=row[11], superseded_by=row[12], version_of=row[13])


def decision_of_row(row: Sequence[Any]) -> Decision:
    return Decision(id=row[0], at=row[1], actor=row[2], action=row[3], conflict_id=row[4], summary=row[5],
                    changes=len(row[6]), undoes=row[7], undone_by=row[8])


@dataclass
class RuleReport:
    """What one run of the rules did."""

    superseded: list[tuple[int, int]] = field(default_factory=list)  # (older fact, its successor)
    conflicts: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"superseded": len(self.superseded), "conflicts_opened": len(self.conflicts)}


class Timeline:
    """The time model of one store's facts (used by the knowledge area inside its transactions)."""

    def __init__(self, store: "Store", registry: "EntityRegistry", rules_file: Callable[[], str] = lambda: "") -> None:
        self.store = store
        self.registry = registry
        self._rules_file = rules_file
        self._rules: Rules | None = None

    @property
    def rules(self) -> Rules:
        """The supersession rules, read once (:meth:`reload_rules` reads them again)."""
        if self._rules is None:
            self._rules = load_rules(self._rules_file() or None)
        return self._rules

    def reload_rules(self) -> Rules:
        self._rules = None
        return self.rules

    # -- the rules ----------------------------------------------------------------------------

    def _subject(self, fact: Fact) -> tuple[str, Any]:
        """Who a fact is about: the entity when the subject is its name ("Lena") or ends with a
        known name ("Greg's daughter Fiona" is Fiona), else the subject's own words, less those
        that only say it is the current one ("Sofia's new manager" is "Sofia's manager")."""
        key = entity_key(fact.subject)
        if fact.subject_id is not None and self.registry.lookup(key) == fact.subject_id:
            return "entity", fact.subject_id
        tail = fact.subject.rsplit("'s ", 1)[-1].split()
        for n in (2, 1):
            named = tail[-n:]
            if len(tail) > n and all(w[:1].isupper() for w in named):
                eid = self.registry.lookup(entity_key(" ".join(named)))
                if eid is not None:
                    return "entity", eid
        return "words", " ".join(w for w in key.split() if w not in _CURRENT)

    def apply_rules(self, fact_ids: Sequence[int], actor: str = "rules") -> RuleReport:
        """Compare each of these facts with the known facts of its subject and slot: supersede
        what the rules can order, open a conflict for what they cannot. Inside a transaction."""
        report = RuleReport()
        facts = sorted((fact_of_row(r) for r in self.store.fact_rows(list(fact_ids))),
                       key=lambda f: (f.valid_from or "", f.id))
        for fact in facts:
            found = self.rules.slot_of(fact.subject, fact.predicate, fact.object)
            if fact.retired_at or fact.subject_id is None or found is None:
                continue
            slot, ends = found
            for other in self._slot_mates(fact, slot):
                self._judge(slot, other, self._fresh(fact), ends, actor, report)
        return report

    def _fresh(self, fact: Fact) -> Fact:
        return fact_of_row(self.store.fact_rows([fact.id])[0])

    def _slot_mates(self, fact: Fact, slot: Slot) -> list[Fact]:
        """The believed facts about the same subject that state a value of the same slot. Only
        the rows filed under the subject whose predicate is one of the slot's are looked at
        closely: a speaker has thousands of facts, read again for each new fact of a slot."""
        who = self._subject(fact)
        filed_under = {fact.subject_id} | ({who[1]} if who[0] == "entity" else set())
        out = []
        for row in self.store.facts_filed_under(sorted(filed_under)):  # each row once, by id
            if row[0] == fact.id or slot.predicates.isdisjoint(fact_forms(row[2], row[3])):
                continue
            other = fact_of_row(row)
            if self._subject(other) != who:
                continue
            found = self.rules.slot_of(other.subject, other.predicate, other.object)
            if found is not None and found[0].name == slot.name and not found[1]:
                out.append(other)
        return out

    def _judge(self, slot: Slot, known: Fact, new: Fact, ends: bool, actor: str, report: RuleReport) -> None:
        v = verdict(slot, (known.object, known.valid_from), (new.object, new.valid_from), ends)
        if v.kind == "supersedes":
            older, newer = known, new
        elif v.kind == "superseded":
            older, newer = new, self._fresh(known)
        elif v.kind in ("unordered", "undecided") and not ends:
            if _ended_before(known, new) or _ended_before(new, known):
                return  # one held only before the other began: no clash
            a, b = sorted((known.id, new.id))
            conflict = self.store.open_conflict("clash", f"clash:{a}:{b}", a, b, f"{slot.name}: {v.reason}")
            if conflict is not None:
                report.conflicts.append(conflict)
            return
        else:
            return
        if older.superseded_by is not None and not _starts_before(newer.valid_from, older.valid_to):
            return  # already replaced by something earlier than this
        action = "ended" if ends else "superseded"
        summary = f"{older.triple()} {action} by {newer.triple()} ({newer.valid_from or 'no date'})"
        with self.decision(actor, action, summary, facts=[older.id, newer.id]):
            self.store.set_validity(older.id, newer.valid_from, newer.id)
        report.superseded.append((older.id, newer.id))

    def replaced(self, older_id: int, newer_id: int, actor: str) -> bool:
        """A judge (the LLM) says fact ``newer_id`` makes ``older_id`` no longer true: supersede
        it, unless the dates say the newer one held first (then a conflict asks); returns
        whether it was superseded. Inside a transaction."""
        rows = {r[0]: fact_of_row(r) for r in self.store.fact_rows([older_id, newer_id])}
        older, newer = rows.get(older_id), rows.get(newer_id)
        if older is None or newer is None or older_id == newer_id or older.retired_at or newer.retired_at \
                or older.superseded_by is not None:
            return False
        if before(older.valid_from, newer.valid_from) is False:
            a, b = sorted((older_id, newer_id))
            self.store.open_conflict("clash", f"clash:{a}:{b}", a, b, f"{actor}: it replaces the other, which holds later")
            return False
        with self.decision(actor, "superseded", f"{older.triple()} superseded by {newer.triple()} "
                                                f"({newer.valid_from or 'no date'}; judged by the {actor})",
                           facts=[older_id, newer_id]):
            self.store.set_validity(older_id, newer.valid_from, newer_id)
        return True

    def rescan(self) -> RuleReport:
        """Apply the rules to every believed fact (after the rules changed, or on a store
        older than them), oldest validity first. Inside a transaction."""
        return self.apply_rules([r[0] for r in self.store.fact_rows()])

    # -- decisions ----------------------------------------------------------------------------

    @contextmanager
    def decision(self, actor: str, action: str, summary: str, *, facts: Sequence[int] = (),
                 entities: Sequence[int] = (), conflicts: Sequence[int] = (), conflict_id: int | None = None,
                 undoes: int | None = None) -> Iterator[None]:
        """Record the enclosed writes (about these facts, entities and conflicts) as one
        decision of the audit log. Inside a transaction."""
        with self.store.recording(facts, entities, [*conflicts, *([conflict_id] if conflict_id else [])]) as changes:
            yield
        self.store.insert_decision(actor, action, summary, changes, conflict_id, undoes)

    def decisions(self, limit: int | None = 50, fact_id: int | None = None) -> list[Decision]:
        return [decision_of_row(r) for r in self.store.decision_rows(limit=limit, fact_id=fact_id)]

    def undo(self, decision_id: int, actor: str = "user") -> Decision:
        """Undo a decision: its rows go back to how they were before it, as a new decision that
        names it. Inside a transaction; refused for an undo, a decision already undone, or one
        whose rows changed since (undo the later decision first)."""
        rows = self.store.decision_rows(ids=[decision_id])
        if not rows:
            raise KnowledgeError(f"no decision with id {decision_id}")
        _id, _at, _actor, action, conflict_id, summary, changes, undoes, undone_by = rows[0]
        if undoes is not None:
            raise KnowledgeError(f"decision {decision_id} is an undo; take the decision again instead")
        if undone_by is not None:
            raise KnowledgeError(f"decision {decision_id} was already undone (by decision {undone_by})")
        try:
            self.store.undo_changes(changes)
        except StaleUndo as exc:
            raise KnowledgeError(f"decision {decision_id} cannot be undone: {exc}; undo the later decision first") from None
        reverse = [{**c, "before": c["after"], "after": c["before"]} for c in changes]
        new = self.store.insert_decision(actor, "undone", f"undo of {decision_id}: {summary}", reverse, conflict_id,
                                         undoes=decision_id)
        return decision_of_row(self.store.decision_rows(ids=[new])[0])

    # -- reading ------------------------------------------------------------------------------

    def history(self, fact_id: int) -> list[Fact]:
        """A fact's chain: the versions it replaced or was replaced by, and the facts it
        superseded or was superseded by, oldest validity first."""
        rows = self.store.fact_history(fact_id)
        sources = self.store.fact_sources_of([r[0] for r in rows])
        facts = [fact_of_row(r, sources.get(r[0], [])) for r in rows]
        return sorted(facts, key=lambda f: (f.valid_from or "", f.recorded_at or "", f.id))


def _ended_before(a: Fact, b: Fact) -> bool:
    """Whether fact ``a``'s validity ended by the time ``b``'s began."""
    return a.valid_to is not None and b.valid_from is not None and not later(a.valid_to, b.valid_from)


def _starts_before(a: str | None, b: str | None) -> bool:
    """Whether validity start ``a`` lies before the end ``b`` (an open or unknown end: yes)."""
    sa, sb = span(a), span(b)
    return sb is None or sa is None or sa[0] < sb[0]
