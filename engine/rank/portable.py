"""The ranker's records of an export: trust, co-access edges, and the feedback log itself.

The feedback log is what a person taught: the feedback memory, the answer prior, the learned
model and the gate are all rebuilt from it, so an export carries it (withdrawn events too, as
withdrawn) and an import rebuilds the learned state from the log it then holds. Trust and
co-access rows travel as well (an export made before the log travelled has only those).

Item ids are the exporting store's; import maps them to the ids the items got. A token id is
kept, so importing the same export twice adds its events once (the log's unique index). An
event that showed an item the export no longer holds keeps what remains and drops its feature
vectors (they no longer match what was shown), as a rebuild after a delete does. Lines::

    {"type": "ranker_trust", "item_id", "trust", "uses", "updated_at"}
    {"type": "ranker_edge", "a", "b", "weight", "updated_at"}
    {"type": "ranker_feedback", "token", "created_at", "withdrawn_at" (null or a time), "query",
     "shown", "used", "ignored" (item ids), "names" (feature names),
     "features" (null, or the shown × names float32 matrix, little-endian, base64)}

Everything is checked before the first write; a bad record is refused as
``file:line: ranker_… record: …``.
"""

from __future__ import annotations

import base64
import binascii
import math
from typing import Any

import numpy as np

from ..store.ranker import FeedbackRow

TRUST, EDGE, FEEDBACK = "ranker_trust", "ranker_edge", "ranker_feedback"
# The numeric fields of each record, which must be finite numbers.
NUMBERS = {TRUST: ("item_id", "trust", "uses", "updated_at"), EDGE: ("a", "b", "weight", "updated_at"),
           FEEDBACK: ("created_at",)}


def trust_records(rows: list[tuple[int, float, int, float]]) -> list[dict[str, Any]]:
    return [{"type": TRUST, "item_id": i, "trust": t, "uses": u, "updated_at": at} for i, t, u, at in rows]


def edge_records(rows: list[tuple[int, int, float, float]]) -> list[dict[str, Any]]:
    return [{"type": EDGE, "a": a, "b": b, "weight": w, "updated_at": at} for a, b, w, at in rows]


def feedback_record(event: FeedbackRow) -> dict[str, Any]:
    features = None
    if event.features is not None:
        features = base64.b64encode(event.features.astype("<f4").tobytes()).decode("ascii")
    return {"type": FEEDBACK, "token": event.token, "created_at": event.created_at,
            "withdrawn_at": event.withdrawn_at, "query": event.query, "shown": event.shown, "used": event.used,
            "ignored": event.ignored, "names": event.names, "features": features}


def problem(record: dict[str, Any]) -> str:
    """What is wrong with one of the ranker's records ("" if nothing, or not the ranker's)."""
    kind = record.get("type")
    bad = [f for f in NUMBERS.get(kind, ()) if not _finite_number(record.get(f))]
    if bad:
        return f"{', '.join(bad)} missing or not a number"
    return _feedback_problem(record) if kind == FEEDBACK else ""


def _feedback_problem(record: dict[str, Any]) -> str:
    if not isinstance(record.get("token"), str) or not record["token"]:
        return "token missing or not a string"
    if not isinstance(record.get("query"), str):
        return "query missing or not a string"
    withdrawn = record.get("withdrawn_at")
    if withdrawn is not None and not _finite_number(withdrawn):
        return "withdrawn_at must be null or a number"
    for name in ("shown", "used", "ignored"):
        ids = record.get(name)
        if not isinstance(ids, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            return f"{name} must be a list of item ids"
    if not set(record["used"]) | set(record["ignored"]) <= set(record["shown"]):
        return "used and ignored ids must be among the shown ones"
    names = record.get("names")
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return "names must be a list of feature names"
    features = record.get("features")
    if features is None:
        return ""
    if not isinstance(features, str):
        return "features must be null or base64 text"
    try:
        size = len(base64.b64decode(features, validate=True))
    except (binascii.Error, ValueError):
        return "features are not base64"
    if size != 4 * len(record["shown"]) * len(names):
        return f"features hold {size} bytes, not 4 × {len(record['shown'])} shown × {len(names)} names"
    return ""


def feedback_row(record: dict[str, Any], id_map: dict[int, int]) -> FeedbackRow:
    """A checked ``ranker_feedback`` record as a log row of this store (its id is given on insert)."""
    shown = [id_map[i] for i in record["shown"] if i in id_map]
    features = None
    if record.get("features") is not None and shown and record["names"] and len(shown) == len(record["shown"]):
        raw = np.frombuffer(base64.b64decode(record["features"]), dtype="<f4")
        features = raw.reshape(len(shown), -1).astype(np.float64)
    return FeedbackRow(0, record["token"], float(record["created_at"]), record["query"], shown,
                       [id_map[i] for i in record["used"] if i in id_map],
                       [id_map[i] for i in record["ignored"] if i in id_map], list(record["names"]), features,
                       None if record.get("withdrawn_at") is None else float(record["withdrawn_at"]))


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
