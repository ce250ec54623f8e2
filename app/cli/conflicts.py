"""``mnemoscope conflicts``: the conflict inbox and the audit log of decisions, from the CLI.

``conflicts`` lists the open conflicts with the items behind each side; ``conflicts accept|both|
merge|retire ID`` settles one (each choice one audited decision, ``--dry-run`` reports it);
``conflicts undo DECISION`` undoes a decision; ``conflicts log`` prints the audit log;
``conflicts rescan`` applies the supersession rules to the facts already stored (after the
rules changed, or on a store made before them); ``conflicts rules`` shows the rules in use.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, TextIO

from ..snippets import query_terms, snippet
from .common import emit, json_option, open_memory

if TYPE_CHECKING:
    from mnemoscope.engine.knowledge.records import Conflict, Decision
    from mnemoscope.engine.records import Item

CHOICES = ("accept", "both", "merge", "retire")
SNIPPET = 100


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("conflicts", help="the conflict inbox: list, decide, undo, audit log, rescan")
    p.add_argument("--all", action="store_true", help="decided conflicts too")
    json_option(p)
    p.set_defaults(handler=list_conflicts)
    csub = p.add_subparsers(dest="action", metavar="action")
    for choice in CHOICES:
        d = csub.add_parser(choice, help=_HELP[choice])
        d.add_argument("id", type=int, help="the conflict's id")
        _writes(d)
        d.set_defaults(handler=decide, choice=choice)
    u = csub.add_parser("undo", help="undo a decision (its rows go back to how they were)")
    u.add_argument("decision", type=int, help="the decision's id (`conflicts log` lists them)")
    _writes(u)
    u.set_defaults(handler=undo)
    log = csub.add_parser("log", help="the audit log of decisions, newest first")
    log.add_argument("--fact", type=int, default=None, help="only decisions that changed this fact")
    log.add_argument("--limit", type=int, default=50, help="at most this many decisions (default: 50)")
    json_option(log)
    log.set_defaults(handler=decision_log)
    r = csub.add_parser("rescan", help="apply the supersession rules to every stored fact")
    _writes(r)
    r.set_defaults(handler=rescan)
    rules = csub.add_parser("rules", help="the supersession rules in use and where they come from")
    json_option(rules)
    rules.set_defaults(handler=show_rules)


_HELP = {"accept": "a clash: the later fact supersedes the other; a duplicate: merge; an orphan: keep it",
         "both": "both facts hold (or: two different entities)",
         "merge": "one value in other words: the second fact's evidence joins the first (or: one entity)",
         "retire": "the clash's second fact (or the orphan) is no longer believed"}


def _writes(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    json_option(p)


def list_conflicts(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        found = mem.conflicts(status=None if args.all else "open")
        items = mem.items({i for c in found for ids in c.evidence.values() for i in ids})
        rows = [{**c.to_dict(), "items": {str(i): _item_dict(items[i]) for ids in c.evidence.values() for i in ids
                                          if i in items}} for c in found]
        emit(out, rows, args.json, lambda: _conflicts_text(found, items, args.all))
    return 0


def _item_dict(item: Item) -> dict[str, Any]:
    return {"key": item.key, "speaker": item.speaker, "timestamp": item.timestamp, "text": item.text}


def _conflicts_text(found: list[Conflict], items: dict[int, Item], every: bool) -> str:
    lines = [f"{len(found)} {'' if every else 'open '}conflict(s)"]
    for c in found:
        status = f" [{c.status}]" if every else ""
        lines.append(f"#{c.id} {c.kind}{status}: {c.reason}")
        sides = c.facts or c.entities
        for label, side in zip("ab", sides):
            if c.facts:
                lines.append(f"   {label}) fact #{side.id} {side.subject} —{side.predicate}→ {side.object}  [{side.validity()}]")
            else:
                lines.append(f"   {label}) entity #{side.id} {side.name} ({side.kind}, {side.items} item(s))")
            named = side.object if c.facts else side.name
            for item_id in c.evidence.get(side.id, [])[:3]:
                if item_id in items:
                    lines.append(f"        {_snippet(items[item_id], named)}")
        lines.append(f"   choices: {' | '.join(c.choices)}")
    return "\n".join(lines)


def _snippet(item: Item, named: str) -> str:
    """An item behind a side, around the words of what that side names (the fact's object, the
    entity's name), as the app's inbox shows it: a long turn may say it far from its start."""
    who = f"{item.speaker}: " if item.speaker else ""
    day = f"[{item.timestamp[:10]}] " if item.timestamp else ""
    return f"{item.key} {day}{who}{snippet(item.text, query_terms(named), SNIPPET - len(who))}"


def decide(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        decision = mem.knowledge.decide(args.id, args.choice, dry_run=args.dry_run)
        _decided(out, decision, args)
    return 0


def undo(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        decision = mem.knowledge.undo(args.decision, dry_run=args.dry_run)
        _decided(out, decision, args)
    return 0


def _decided(out: TextIO, decision: Decision, args: argparse.Namespace) -> None:
    prefix = "would record" if args.dry_run else "recorded"
    emit(out, {**decision.to_dict(), "dry_run": args.dry_run}, args.json,
         f"{prefix} decision #{decision.id}: {decision.summary} ({decision.changes} row(s))")


def decision_log(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        found = mem.knowledge.decisions(limit=args.limit, fact_id=args.fact)

    def text() -> str:
        lines = [f"{len(found)} decision(s)"]
        for d in found:
            undone = f"  (undone by #{d.undone_by})" if d.undone_by else ""
            lines.append(f"#{d.id:<5} {d.at}  {d.actor:<5} {d.action:<10} {d.summary}{undone}")
        return "\n".join(lines)

    emit(out, [d.to_dict() for d in found], args.json, text)
    return 0


def rescan(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        report = mem.knowledge.rescan(dry_run=args.dry_run)
    prefix = "would supersede" if args.dry_run else "superseded"
    emit(out, {**report, "dry_run": args.dry_run}, args.json,
         f"{prefix} {report['superseded']} fact(s), {report['conflicts_opened']} new conflict(s)")
    return 0


def show_rules(args: argparse.Namespace, out: TextIO) -> int:
    """The rules come from the settings, not the store: shown before any store is made (a person
    reading them on a fresh install got "no store at ...": review, 07:44)."""
    from mnemoscope.engine import Settings
    from mnemoscope.engine.knowledge.supersession import load_rules, user_rules_path

    rules = load_rules(Settings.load().supersession_rules or None)
    payload = {"files": [str(p) for p in rules.files], "user_file": str(user_rules_path()),
               "slots": {name: {"predicates": sorted(s.predicates), "ends": sorted(s.ends), "subjects": list(s.subjects),
                                "objects": sorted(s.objects), "free_objects": s.free_objects, "asks": sorted(s.asks),
                                "cues": sorted(s.cues)}
                         for name, s in rules.slots.items()}}

    def text() -> str:
        lines = [f"rules from: {', '.join(payload['files'])}", f"your file (add slots or predicates): {payload['user_file']}"]
        for name, s in payload["slots"].items():
            lines.append(f"  {name}: {', '.join(s['predicates'])}" + (f"; ends: {', '.join(s['ends'])}" if s["ends"] else ""))
        return "\n".join(lines)

    emit(out, payload, args.json, text)
    return 0
