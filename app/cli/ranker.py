"""Ranker commands: ``ranker status|reset|export`` and ``feedback`` (``eval learning`` is in evaluate.py)."""

from __future__ import annotations

import argparse
import json
import time
from argparse import ArgumentTypeError
from typing import TYPE_CHECKING, TextIO

from mnemoscope.engine.files import atomic_writer

from .common import UsageError, emit, json_option, open_memory
from .parsing import plain_int

if TYPE_CHECKING:
    from mnemoscope.engine.rank.service import RankerStatus
    from mnemoscope.engine.store.ranker import CorruptFeedback


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ranker", help="the learned ranker: status, reset, export")
    rsub = p.add_subparsers(dest="action", metavar="action", required=True)
    q = rsub.add_parser("status", help="λ, the gate's referee, feedback counts, the learning curve")
    json_option(q)
    q.set_defaults(handler=status)
    q = rsub.add_parser("reset", help="forget all feedback and learning (records are untouched)")
    q.add_argument("--yes", action="store_true", help="really do it")
    q.set_defaults(handler=reset)
    q = rsub.add_parser("export", help="write the model, feedback log, edges and trust as JSON")
    q.add_argument("file", help="the JSON file to write")
    q.set_defaults(handler=export)

    p = sub.add_parser("feedback", help="tell the ranker which hits of a recall were used; list or undo feedback",
                       usage="mnemoscope feedback TOKEN --used IDS [--ignored IDS] | feedback list | feedback undo EVENT")
    p.add_argument("token", help="the token a recall printed (recall --json shows it); or 'list', or 'undo'")
    p.add_argument("event", nargs="?", help="with 'undo': the feedback event to withdraw")
    p.add_argument("--used", default="", help="comma-separated item ids that were used")
    p.add_argument("--ignored", default=None, help="comma-separated item ids that were not (default: the shown hits above the lowest used one)")
    json_option(p)
    p.set_defaults(handler=feedback)


def _ids(text: str, what: str) -> list[int]:
    try:
        return [plain_int(x.strip()) for x in text.split(",") if x.strip()]
    except ArgumentTypeError:
        raise UsageError(f"--{what} expects comma-separated item ids, got {text!r}") from None


def status(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        s = mem.ranker.status()
        emit(out, s.to_dict(), args.json, lambda: _status_text(s))
    return 0


def _status_text(s: RankerStatus) -> str:
    g = s.gate
    lines = [f"state {s.state}; λ {s.lam:.3f}; {s.events} feedback event(s), {s.train_pairs} training pair(s), "
             f"{s.held_out_pairs} held-out pair(s), {s.model_steps} SGD step(s)",
             f"gate: model wins {g.model_wins} vs heuristic {g.heuristic_wins} discordant held-out pairs, "
             f"Wilson lower bound {g.lower_bound:.3f}, permutation p {g.p_value:.3f}, {g.queries} held-out query(ies)",
             "λ " + ("open" if s.lam > 0 else "closed") + ": " + "; ".join(g.reasons),
             f"feedback memory: {s.marks} event(s) consulted at every recall",
             f"co-access edges {s.coaccess_edges}; items with trust {s.trusted_items}",
             "heuristic: " + ", ".join(f"{k} {v:+.2f}" for k, v in s.heuristic.items())]
    if s.curve:
        lines.append("curve (event: λ): " + ", ".join(f"{c.event}: {c.lam:.2f}" for c in s.curve[-10:]))
    return "\n".join(lines)


def reset(args: argparse.Namespace, out: TextIO) -> int:
    if not args.yes:
        raise UsageError("ranker reset forgets every feedback event; add --yes to do it")
    with open_memory(args) as mem:
        mem.ranker.reset()
    out.write("ranker reset: ranking is the heuristic floor again\n")
    return 0


def export(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        data = mem.ranker.export()
    with atomic_writer(args.file) as fh:  # private, whole or not at all, and only onto a file
        fh.write(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8"))
    left_out = data["unreadable_feedback"]
    out.write(f"ranker exported to {args.file} ({len(data['feedback'])} feedback event(s)"
              + (f"; left out, as they cannot be read: {'; '.join(left_out)}" if left_out else "") + ")\n")
    return 0


def feedback(args: argparse.Namespace, out: TextIO) -> int:
    if args.token == "undo":
        return undo(args, out)
    if args.token == "list":
        return feedback_list(args, out)
    if args.event is not None:
        raise UsageError(f"unexpected argument {args.event!r}: feedback TOKEN --used IDS, feedback list, feedback undo EVENT")
    with open_memory(args) as mem:
        r = mem.feedback(args.token, _ids(args.used, "used"), None if args.ignored is None else _ids(args.ignored, "ignored"))
    payload = {"event_id": r.event_id, "used": r.used, "ignored": r.ignored, "lambda": r.gate.lam,
               "pairs_trained": r.pairs_trained, "pairs_held_out": r.pairs_held_out, "ms": round(r.ms, 3)}
    emit(out, payload, args.json, f"feedback event {r.event_id}: {len(r.used)} used, {len(r.ignored)} ignored; λ {r.gate.lam:.3f}")
    return 0


def undo(args: argparse.Namespace, out: TextIO) -> int:
    """``feedback undo EVENT``: withdraw one event; its effect is gone at the next recall. One
    that cannot be read is removed from the log, the others kept."""
    event = _event_id(args.event)
    with open_memory(args) as mem:
        r = mem.ranker.undo(event)
    if r.removed:
        text = f"{r.removed}: removed from the log, the other events kept; λ {r.gate.lam:.3f}"
        text += f"\nstill {r.still_unreadable}" if r.still_unreadable else "; recall uses their feedback again"
    elif r.changed:
        text = f"feedback event {r.event_id} withdrawn ({r.query!r}); λ {r.gate.lam:.3f}"
    else:
        text = f"feedback event {r.event_id} was already withdrawn; nothing changed"
    emit(out, {"event_id": r.event_id, "changed": r.changed, "query": r.query, "withdrawn_at": r.withdrawn_at,
               "lambda": r.gate.lam, "removed": r.removed or None, "still_unreadable": r.still_unreadable or None},
         args.json, text)
    return 0


def feedback_list(args: argparse.Namespace, out: TextIO) -> int:
    """``feedback list``: the newest 50 events; one that cannot be read is listed as such, not
    left out (a log that looked empty hid why recall used no feedback)."""
    unreadable: list[CorruptFeedback] = []
    with open_memory(args) as mem:
        events = mem.ranker.feedback_log(50, unreadable)
    rows = sorted([{"event_id": e.id, "created_at": e.created_at, "query": e.query, "used": e.used,
                    "ignored": e.ignored, "withdrawn_at": e.withdrawn_at} for e in events]
                  + [{"event_id": exc.event_id, "unreadable": str(exc)} for exc in unreadable],
                  key=lambda row: -row["event_id"])
    emit(out, rows, args.json, lambda: "\n".join(map(_event_line, rows)) or "no feedback yet")
    return 0


def _event_line(row: dict) -> str:
    if "unreadable" in row:
        return f"{row['event_id']:>5}  {row['unreadable']}"
    return (f"{row['event_id']:>5}  {time.strftime('%Y-%m-%d %H:%M', time.localtime(row['created_at']))}  "
            f"{row['query'][:50]!r}  used {','.join(map(str, row['used'])) or '-'}"
            + ("  (withdrawn)" if row["withdrawn_at"] else ""))


def _event_id(text: str | None) -> int:
    if text is None:
        raise UsageError("feedback undo needs the event's id (`mnemoscope feedback list` shows them)")
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 2 ** 63:
        raise UsageError(f"feedback undo: {text!r} is not an event id (a positive whole number)")
    return int(text)
