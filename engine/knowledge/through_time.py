"""Facts through time, as the knowledge area offers them: the conflict inbox, the audit log of
decisions and their undo, a fact's history, the supersession rules applied again, and recall at
a reference time.

The work is done by :mod:`.timeline` (validity, the rules, decisions), :mod:`.inbox`
(conflicts) and :mod:`.in_time` (recall); here each write is one transaction with its line in
the activity log, a dry run reports exactly, and the area's in-memory state follows.
"""

from __future__ import annotations

from typing import Any

from ..as_of import earliest
from ..errors import KnowledgeError
from ..pipeline import Query, Ranking
from .curation import KnowledgeCuration
from .entities import one_shortens_the_other
from .in_time import rerank_in_time
from .present import asked_period, lift_changes
from .records import Conflict, Decision, Fact
from .supersession import Rules


class KnowledgeThroughTime(KnowledgeCuration):
    """The knowledge area's inbox, audit log and history."""

    def conflicts(self, status: str | None = "open") -> list[Conflict]:
        """Open conflicts (``status=None``: every one, decided too), with their evidence."""
        return self.inbox.conflicts(status)

    def conflict(self, conflict_id: int) -> Conflict:
        return self.inbox.conflict(conflict_id)

    def decide(self, conflict_id: int, choice: str, dry_run: bool = False) -> Decision:
        """Settle a conflict: ``accept``, ``both``, ``merge`` or ``retire`` (see :mod:`.inbox`)."""
        with self._curating(dry_run, f"conflict.{choice}", f"conflict {conflict_id}"):
            decision = self.inbox.decide(conflict_id, choice)
            stale = self._stale_after(decision)
        if stale:
            self.load()
        return decision

    def undo(self, decision_id: int, dry_run: bool = False) -> Decision:
        """Undo a decision of the audit log (refused when a later one changed the same rows)."""
        with self._curating(dry_run, "decision.undone", f"decision {decision_id}"):
            decision = self.timeline.undo(decision_id)
            stale = self._stale_after(decision)
        if stale:
            self.load()
        return decision

    def _stale_after(self, decision: Decision) -> bool:
        """Whether a decision (read inside its transaction, a dry run's too) changed what this area
        keeps in memory, which is then loaded again: the entities, mentions and synonyms, the facts
        believed and their evidence (the registry, the fact keys and the graph are built from them).
        Settling a clash by accepting it or keeping both changes only a conflict's status and when
        the older fact held, and loading the whole graph again was nearly all of that key press's
        cost in a large store."""
        changes = self.store.decision_rows(ids=[decision.id])[0][6]
        return any(c["table"] != "conflicts" and not (c["table"] == "facts" and _validity_only(c["before"], c["after"]))
                   for c in changes)

    def undo_last(self, dry_run: bool = False) -> Decision:
        """Undo the last decision of a person that is not undone yet (the app's one key press)."""
        last = self.store.last_undoable_decision("user")
        if last is None:
            raise KnowledgeError("there is no decision of yours to undo")
        return self.undo(last, dry_run)

    def open_conflicts_of(self, fact_ids: list[int]) -> dict[int, list[int]]:
        """The open conflicts (ids) of the inbox naming each of these facts: a fact that reads as
        current may wait there on a person's decision."""
        wanted, out = set(fact_ids), {}
        for a, b, conflict in self.store.open_conflicts_naming(fact_ids):
            for fact in {a, b} & wanted:
                out.setdefault(fact, []).append(conflict)
        return out

    def decisions(self, limit: int | None = 50, fact_id: int | None = None) -> list[Decision]:
        """The audit log, newest first (all, or those that changed one fact)."""
        return self.timeline.decisions(limit, fact_id)

    def fact_history(self, fact_id: int) -> list[Fact]:
        """A fact's chain: its versions, and the facts it superseded or that superseded it."""
        self.fact(fact_id)
        return self.timeline.history(fact_id)

    def supersession_rules(self) -> Rules:
        """The rules in use, read again from their files."""
        return self.timeline.reload_rules()

    def rescan(self, dry_run: bool = False) -> dict[str, Any]:
        """Read the rules again and apply them to every believed fact; look for near-duplicate
        entities among all of them (a store made before the rules, or after they changed)."""
        with self._curating(dry_run, "facts.rescanned", "supersession rules"):
            rules = self.timeline.reload_rules()
            report = self.timeline.rescan()
            report.conflicts += self.inbox.find_duplicates([r[0] for r in self.store.entity_rows()])
        self.load()
        return {**report.to_dict(), "rules": [str(p) for p in rules.files]}

    def rerank(self, q: Query, ranking: Ranking) -> Ranking:
        """Above an item stating a fact superseded at the recall's reference time (``as_of``,
        default now) come the items stating what holds instead (:mod:`.in_time`); then, for a
        question about the present, a newer turn that changes the answer above the older ones
        (:mod:`.present`), which reaches the changes no fact of a slot states. The people the
        question names are also those linked to them by synonymy: a turn about "Nico" is about
        Nicolás (:func:`.entities.nickname_of`). Only a short form: a name linked by its spelling
        alone ("Anna de la Fuente" for "Ana de la Fuente") may be someone else, whose news is theirs."""
        rules, index = self.timeline.rules, self.mem.index
        # "Where did Leah live in June 2023?" is asked as of June's end, whatever the recall's own as_of
        period = asked_period(q.text, rules)
        as_of = earliest(q.options.get("as_of"), period.last if period is not None else None)
        named, keys = self.named_in(q), self.registry.keys
        also = {other for entity, others in (self._synonyms(named) if named else {}).items() for other in others
                if one_shortens_the_other(keys.get(entity, ""), keys.get(other, ""))}
        subjects = {e: self.registry.names.get(e, "") for e in [*named, *sorted(also - set(named))]}
        ranking = rerank_in_time(self.store, index, rules, q.text, ranking, as_of, subjects)
        return lift_changes(self.store, index, rules, q.text, subjects, ranking, as_of, period)


# The columns of a fact that say when it held: the area keeps nothing read from them.
_VALIDITY = frozenset({"valid_from", "valid_to", "superseded_by"})


def _validity_only(before: dict[str, Any] | None, after: dict[str, Any] | None) -> bool:
    """Whether a fact row's change (its images before and after a decision) is in its validity alone."""
    return before is not None and after is not None and all(before.get(k) == v for k, v in after.items() if k not in _VALIDITY)
