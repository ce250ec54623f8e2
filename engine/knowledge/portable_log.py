"""The audit log in an export: every decision, and on import the same decisions, undoable there.

A decision keeps the before and after images of the rows it changed (entities, facts, conflicts,
mentions, synonymy, provenance: :data:`engine.store.knowledge.AUDITED`), and undo puts the
before images back once it finds the after images still in place. The images name the
exporting store's ids: of the entities, facts and conflicts, and of the items and other
decisions. An import gives all of them new ids, so each image is translated into the importing
store's: an entity by its key, a fact and a conflict by what the import restored them as, an item
by the import's map. A row the decision deleted (an entity merged into another) has no row to be
found by; it gets an id no row of the store holds, which it takes again if the decision is
undone. A decision comes along only when every row it names is one this import restored (or
one it deleted): a source the target already held keeps its own curation, and the exporter's
decisions about it are not the target's to list or undo; neither is one about an item the
export no longer holds.

Record (format version 4, after the conflicts; ids are the exporting store's)::

    {"type": "knowledge.decision", "version": 4, "id", "at", "actor", "action", "conflict_id",
     "summary", "changes": [{"table", "key", "before", "after"}, ...], "undoes", "undone_by"}

An image is checked against the importing store's own tables before anything is written: a
table an image names must be one a decision changes, and its columns the table's own (the undo
writes them by name).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..as_of import is_date
from ..ingest import fitted_label
from ..records import label_problem
from .dedup import fact_key

if TYPE_CHECKING:
    from ..store import Store

DECISION = "knowledge.decision"
_GONE = -1  # a row the import did not write (or an item the export does not hold): no row has this id


@dataclass
class DecisionRecord:
    id: int
    at: str
    actor: str
    action: str
    conflict_id: int | None
    summary: str
    changes: list[dict[str, Any]]
    undoes: int | None
    undone_by: int | None


def decision_records(store: "Store", version: int) -> list[dict[str, Any]]:
    """The whole audit log as export records, oldest first."""
    return [{"type": DECISION, "version": version, "id": i, "at": at, "actor": actor, "action": action,
             "conflict_id": conflict, "summary": summary, "changes": changes, "undoes": undoes, "undone_by": undone_by}
            for i, at, actor, action, conflict, summary, changes, undoes, undone_by
            in reversed(store.decision_rows())]


def read_decision(r: dict[str, Any], columns: dict[str, frozenset[str]], fail: Callable[[str], None]) -> DecisionRecord:
    """A checked decision record (``columns``: each audited table's columns in the importing store)."""
    def number(name: str, optional: bool = True) -> int | None:
        value = r.get(name)
        if value is None and optional:
            return None
        if type(value) is not int:
            fail(f"decision field {name!r} must be int{' or null' if optional else ''}, not {value!r}")
        return value

    def text(name: str) -> str:
        value = r.get(name)
        if not isinstance(value, str):
            fail(f"decision field {name!r} must be text, not {value!r}")
        return value

    changes = r.get("changes")
    if not isinstance(changes, list):
        fail(f"decision field 'changes' must be a list, not {changes!r}")
    for change in changes:
        _check_change(change, columns, fail)
    return DecisionRecord(number("id", optional=False), text("at"), text("actor"), text("action"),  # type: ignore[arg-type]
                          number("conflict_id"), text("summary"), changes, number("undoes"), number("undone_by"))


def _check_change(change: Any, columns: dict[str, frozenset[str]], fail: Callable[[str], None]) -> None:
    if not isinstance(change, dict) or change.get("table") not in columns:
        fail(f"a decision's change names a table no decision changes: {change!r}"[:200])
    table = change["table"]
    if not isinstance(change.get("key"), list) or not all(type(k) in (int, str) for k in change["key"]):
        fail(f"a decision's change of {table} needs its key as a list, not {change.get('key')!r}")
    images = [change.get("before"), change.get("after")]
    if all(image is None for image in images):
        fail(f"a decision's change of {table} has neither a before nor an after image")
    for image in images:
        if image is not None and (not isinstance(image, dict) or set(image) - columns[table]):
            fail(f"a decision's row image of {table} names columns the table does not hold: {image!r}"[:200])
        if image is not None:
            _check_values(table, image, fail)


_STAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")  # the store's clock (recorded_at, retired_at, decided_at)
_ID_COLUMNS = {"id", "subject_id", "object_id", "superseded_by", "version_of", "a", "b", "item_id", "entity_id", "fact_id"}


def _check_values(table: str, image: dict[str, Any], fail: Callable[[str], None]) -> None:
    """A row image's values as the table holds them: ids are integers, times are dates (a fact's
    validity as a date, month or year; the store's stamps as its clock writes them), the rest
    text or numbers; a fact is never its own successor."""
    for column, value in image.items():
        ok = value is None or (type(value) is int if column in _ID_COLUMNS else type(value) in (int, float, str))
        if ok and value is not None and column in ("valid_from", "valid_to"):
            ok = isinstance(value, str) and is_date(value)
        elif ok and value is not None and column in ("recorded_at", "retired_at", "created_at", "decided_at"):
            ok = is_stamp(value)
        if not ok:
            fail(f"a decision's row image of {table} holds {column} = {value!r}, which that column cannot hold"[:200])
    if table == "facts" and image.get("superseded_by") is not None and image.get("superseded_by") == image.get("id"):
        fail(f"a decision's row image of fact {image.get('id')} names it as its own successor")


def is_stamp(value: Any) -> bool:
    """Whether ``value`` is a time as the store's clock writes it (2023-06-01T10:00:00Z)."""
    return isinstance(value, str) and _STAMP.fullmatch(value) is not None


_ONE = {"entities": "entity", "facts": "fact", "conflicts": "conflict"}


def referenced_unknown(decisions: list[DecisionRecord], held: dict[str, set[int]]) -> tuple[int, str] | None:
    """The first decision whose images name an entity, fact or conflict that is neither a row the
    export holds nor one a decision deleted (a row image of its own), with what it names ("entity
    12"); None when there is none. (An item may be gone: deleted after the decision.)"""
    imaged = {kind: set() for kind in held}
    for d in decisions:
        for change in d.changes:
            for image in (change["before"], change["after"]):
                if image is not None and change["table"] in held and type(image.get("id")) is int:
                    imaged[change["table"]].add(image["id"])
    for d in decisions:
        for change in d.changes:
            for image in (change["before"], change["after"]):
                for kind, value in (_named(change["table"], image) if image is not None else []):
                    if kind in held and value is not None and value not in held[kind] | imaged[kind]:
                        return d.id, f"{_ONE[kind]} {value}"
    return None


@dataclass
class IdMaps:
    """Exported → importing store ids, by kind; a kind's unknown ids take fresh ones."""

    entities: dict[int, int]
    facts: dict[int, int]
    conflicts: dict[int, int]
    items: dict[int, int]
    fresh: dict[str, Iterator[int]]  # kind → ids no row of the store holds
    own: dict[str, set[int]]  # kind → the importing store's ids of the rows this import wrote (and the fresh ones)
    held: dict[str, set[int]]  # kind → the exported ids of the rows the export holds

    def of(self, kind: str, exported: Any) -> Any:
        """The importing store's id of an exported one: the row the import restored it as, a
        fresh id for a row the export does not hold (a decision deleted it), -1 for a row the
        export holds that the import did not restore (its source was in the store already)."""
        if exported is None or type(exported) is not int:
            return exported
        if kind == "items":
            return self.items.get(exported, _GONE)
        known: dict[int, int] = getattr(self, kind)
        if exported not in known:
            if exported in self.held[kind]:
                return _GONE
            known[exported] = next(self.fresh[kind])
            self.own[kind].add(known[exported])
        return known[exported]


def fresh_ids(first: int) -> Iterator[int]:
    return itertools.count(first)


def translate(changes: list[dict[str, Any]], ids: IdMaps) -> list[dict[str, Any]] | None:
    """A decision's changes with their keys and row images in the importing store's ids; None
    when one names a row this import did not write (see the module docstring)."""
    out = []
    for change in changes:
        table = change["table"]
        before, after = (_row(table, image, ids) if image is not None else None
                         for image in (change["before"], change["after"]))
        if not all(value in ids.own[kind] for row in (before, after) if row is not None
                   for kind, value in _named(table, row) if value is not None):
            return None
        image = before or after
        key = [image[k] for k in _PRIMARY[table]] if image is not None else change["key"]
        out.append({"table": table, "key": key, "before": before, "after": after})
    return out


_PRIMARY = {"entities": ("id",), "facts": ("id",), "conflicts": ("id",), "mentions": ("item_id", "entity_id", "surface"),
            "synonyms": ("a", "b"), "fact_sources": ("fact_id", "item_id")}
# Which id each column holds, by table; a conflict's a and b are entities or facts by its kind.
_COLUMN_KINDS = {
    "entities": {"id": "entities"},
    "facts": {"id": "facts", "subject_id": "entities", "object_id": "entities", "superseded_by": "facts",
              "version_of": "facts"},
    "conflicts": {"id": "conflicts"},
    "mentions": {"item_id": "items", "entity_id": "entities"},
    "synonyms": {"a": "entities", "b": "entities"},
    "fact_sources": {"fact_id": "facts", "item_id": "items"},
}


def _kinds(table: str, image: dict[str, Any]) -> dict[str, str]:
    kinds = dict(_COLUMN_KINDS[table])
    if table == "conflicts":
        kinds |= dict.fromkeys(("a", "b"), "entities" if image.get("kind") == "duplicate" else "facts")
    return kinds


def _named(table: str, row: dict[str, Any]) -> list[tuple[str, Any]]:
    """The (kind, id) pairs a row image names."""
    return [(kind, row[column]) for column, kind in _kinds(table, row).items() if column in row]


# The columns an import makes keep the label rule (:meth:`.portable._Reader.label`), by table: an image
# holds them as the export wrote them, the restored row as fitted.
_LABELS = {"entities": ("key", "name"), "mentions": ("surface",), "facts": ("subject", "predicate", "object"),
           "conflicts": ("reason",)}


def _row(table: str, image: dict[str, Any], ids: IdMaps) -> dict[str, Any]:
    kinds = _kinds(table, image)
    row = {column: ids.of(kinds[column], value) if column in kinds else value for column, value in image.items()}
    fitted = [c for c in _LABELS.get(table, ()) if isinstance(row.get(c), str) and label_problem(row[c]) is not None]
    for column in fitted:  # as the import restored the row, or its undo finds the row "changed after it"
        row[column] = fitted_label(row[column])[0]
    if table == "facts" and fitted and isinstance(row.get("key"), str) and all(isinstance(row.get(w), str) for w in _LABELS[table]):
        row["key"] = fact_key(row["subject"], row["predicate"], row["object"]) + "".join(row["key"].partition("#")[1:])
    if table == "facts" and isinstance(row.get("key"), str) and row["key"].endswith(f"#{image.get('id')}"):
        row["key"] = row["key"][: -len(str(image["id"]))] + str(row["id"])  # an archived version's key names its id
    if table == "conflicts" and "key" in image:
        row["key"] = conflict_key(row.get("kind", ""), row.get("a"), row.get("b"))
    return row


def conflict_key(kind: str, a: int, b: int | None) -> str:
    """A conflict's unique key in the store, from what it names in its order (as the rules and the
    inbox make it: "duplicate:<the shorter name's entity>:<the other>")."""
    return f"orphaned:{a}" if b is None else f"{kind}:{a}:{b}"
