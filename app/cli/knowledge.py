"""Knowledge commands: facts, entities, episodes, extract, and their curation.

Listings print text, or with ``--json`` one JSON list; every curation command takes
``--dry-run`` and prints what would change (or what changed).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from mnemoscope.engine.errors import quoted

from .common import UsageError, emit, json_option, open_memory
from .parsing import a_date

if TYPE_CHECKING:
    from mnemoscope.engine.knowledge.records import CurationReport


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("facts", help="list facts (subject, predicate, object, validity, provenance)")
    p.add_argument("--entity", default=None, help="only facts naming this entity (id or name)")
    p.add_argument("--limit", type=int, default=None, help="at most this many facts")
    p.add_argument("--as-of", type=a_date, default=None, metavar="DATE", help="only facts that held and were said by this date")
    p.add_argument("--history", type=int, default=None, metavar="ID",
                   help="a fact's chain: the versions and facts it replaced or that replaced it")
    json_option(p)
    p.set_defaults(handler=facts)

    p = sub.add_parser("entities", help="list entities, most mentioned first")
    p.add_argument("--kind", default=None, help="speaker | title | name | tag")
    p.add_argument("--limit", type=int, default=None, help="at most this many entities")
    json_option(p)
    p.set_defaults(handler=entities)

    p = sub.add_parser("episodes", help="list episodic memories (summary, events, provenance)")
    p.add_argument("--source", type=int, default=None, help="only episodes of this source id")
    json_option(p)
    p.set_defaults(handler=episodes)

    p = sub.add_parser("extract", help="run the LLM extractor over the queue (needs an LLM endpoint)")
    p.add_argument("--resume", action="store_true", help="also retry items that failed before")
    p.add_argument("--limit", type=int, default=None, help="at most this many items")
    json_option(p)
    p.set_defaults(handler=extract)

    p = sub.add_parser("fact", help="add, edit or delete a fact")
    fsub = p.add_subparsers(dest="action", metavar="action", required=True)
    a = fsub.add_parser("add", help="state a fact by hand, supported by stored items")
    for name in ("subject", "predicate", "object"):
        a.add_argument(name, help=f"the fact's {name}, in words")
    a.add_argument("--item", type=int, action="append", required=True, dest="items",
                   help="an item that states it (repeat for more)")
    a.add_argument("--time", default=None, help="when it held (2023-05-01, 2023-05 or 2023)")
    _curation(a, add_fact)
    e = fsub.add_parser("edit", help="change a fact's words or time")
    e.add_argument("id", type=int, help="the fact's id")
    for name in ("subject", "predicate", "object", "time"):
        e.add_argument(f"--{name}", default=None, help=f"the new {name} (default: unchanged)")
    _curation(e, edit_fact)
    d = fsub.add_parser("delete", help="delete a fact")
    d.add_argument("id", type=int, help="the fact's id")
    _curation(d, delete_fact)

    p = sub.add_parser("entity", help="rename, merge or split entities")
    esub = p.add_subparsers(dest="action", metavar="action", required=True)
    r = esub.add_parser("rename", help="give an entity a new name")
    r.add_argument("id", type=int, help="the entity's id")
    r.add_argument("name", help="its new name")
    _curation(r, rename_entity)
    _merge_parser(esub, "fold entity OTHER into KEEP (each an id or a name)", merge_entities, str)
    s = esub.add_parser("split", help="move the mentions written SURFACE… to a new entity")
    s.add_argument("id", type=int, help="the entity's id")
    s.add_argument("surfaces", nargs="+", help="the ways of writing it whose mentions move")
    s.add_argument("--name", default=None, help="the new entity's name (default: the first surface)")
    _curation(s, split_entity)

    p = sub.add_parser("episode", help="merge or split episodes")
    psub = p.add_subparsers(dest="action", metavar="action", required=True)
    _merge_parser(psub, "join episode OTHER into KEEP (reversible)", merge_episodes)
    s = psub.add_parser("split", help="undo the merges into an episode")
    s.add_argument("id", type=int, help="the episode's id")
    _curation(s, split_episode)


def _merge_parser(sub: argparse._SubParsersAction, help_text: str, handler, argument_type: type = int) -> None:
    p = sub.add_parser("merge", help=help_text)
    p.add_argument("keep", type=argument_type, help="the one that stays")
    p.add_argument("other", type=argument_type, help="the one folded into it")
    _curation(p, handler)


def _curation(p: argparse.ArgumentParser, handler) -> None:
    p.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    json_option(p)
    p.set_defaults(handler=handler)


# -- listings ---------------------------------------------------------------------------------


def facts(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        if args.history is not None:
            found = mem.knowledge.fact_history(args.history)
        else:
            found = mem.knowledge.facts(entity=args.entity, limit=args.limit, as_of=args.as_of)
            if not found and args.entity is not None:
                mem.knowledge.check_entity_named(args.entity, "`mnemoscope entities` lists them")
        waiting = mem.knowledge.open_conflicts_of([f.id for f in found])
    rows = [{**f.to_dict(), **({"open_conflicts": waiting[f.id]} if f.id in waiting else {})} for f in found]

    def text() -> str:
        lines = [f"{len(found)} fact(s)" + (f" in the history of fact {args.history}" if args.history is not None else "")]
        for f in found:
            note = f.state_note()
            mark = f"  {note}" if note else ""
            version = f"  (version of #{f.version_of})" if f.version_of else ""
            inbox = f"  in open conflict {', '.join(f'#{c}' for c in waiting[f.id])}" if f.id in waiting else ""
            lines.append(f"#{f.id:<6} {f.subject} —[{f.predicate}]→ {f.object}  [{f.validity()}]{mark}{version}{inbox}"
                         f"  (items {', '.join(map(str, f.provenance))})")
        return "\n".join(lines)

    emit(out, rows, args.json, text)
    return 0


def entities(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.knowledge.portable import ENTITY_KINDS  # (the engine: not at the parser's build)

    if args.kind is not None and args.kind not in ENTITY_KINDS:  # "0 entities" said no such kind was there
        raise UsageError(f"--kind {quoted(args.kind)} is no kind of entity; choose one of: {', '.join(ENTITY_KINDS)}")
    with open_memory(args) as mem:
        found = mem.knowledge.entities(kind=args.kind, limit=args.limit)
    emit(out, [e.to_dict() for e in found], args.json, lambda: "\n".join(
        [f"{len(found)} entit{'y' if len(found) == 1 else 'ies'}"] +
        [f"#{e.id:<6} {e.name:<32} {e.kind:<8} items {e.items:<5} facts {e.facts:<5}"
         + (f" synonyms {e.synonyms}" if e.synonyms else "") for e in found]))
    return 0


def episodes(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        found = mem.knowledge.episodes(source_id=args.source)
        if not found and args.source is not None and all(s.id != args.source for s in mem.sources()):
            raise UsageError(f"no source with id {args.source} (`mnemoscope sources` lists them)")

    def text() -> str:
        lines = [f"{len(found)} episode(s)"]
        for e in found:
            lines.append(f"#{e.id:<6} {e.session:<12} items {e.items[0]}–{e.items[-1] if e.items else ''} {e.summary}")
            lines += [f"         · {ev.action}" + (f" [{ev.time}]" if ev.time else "") for ev in e.events[:5]]
        return "\n".join(lines)

    emit(out, [e.to_dict() for e in found], args.json, text)
    return 0


def extract(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        report = mem.knowledge.process_queue(retry_failed=args.resume, limit=args.limit)
    emit(out, report, args.json, lambda: ", ".join(f"{k} {v}" for k, v in report.items()))
    return 0


# -- curation ---------------------------------------------------------------------------------


def _report(args: argparse.Namespace, out: TextIO, curated: CurationReport) -> int:
    """The curation's report; the text leaves out the ids a dry run has not made ("fact None"),
    which the JSON keeps as null."""
    verb = "would change" if args.dry_run else "changed"
    report = curated.to_dict()
    emit(out, report, args.json,
         lambda: f"{verb}: " + ", ".join(f"{k} {v}" for k, v in report.items() if v is not None))
    return 0


def add_fact(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        report = mem.knowledge.add_fact(args.subject, args.predicate, args.object, args.items, time=args.time,
                                        dry_run=args.dry_run)
    return _report(args, out, report)


def edit_fact(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        report = mem.knowledge.edit_fact(args.id, subject=args.subject, predicate=args.predicate, object=args.object,
                                         time=args.time, dry_run=args.dry_run)
    return _report(args, out, report)


def delete_fact(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        return _report(args, out, mem.knowledge.delete_fact(args.id, dry_run=args.dry_run))


def rename_entity(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        return _report(args, out, mem.knowledge.rename_entity(args.id, args.name, dry_run=args.dry_run))


def merge_entities(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        keep, other = (mem.knowledge.entity_id_of(typed) for typed in (args.keep, args.other))
        return _report(args, out, mem.knowledge.merge_entities(keep, other, dry_run=args.dry_run))


def split_entity(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        return _report(args, out, mem.knowledge.split_entity(args.id, args.surfaces, args.name, dry_run=args.dry_run))


def merge_episodes(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        return _report(args, out, mem.knowledge.merge_episodes(args.keep, args.other, dry_run=args.dry_run))


def split_episode(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        return _report(args, out, mem.knowledge.split_episode(args.id, dry_run=args.dry_run))
