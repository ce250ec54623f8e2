"""Store commands: ingest, recall, stats, sources, export, import, delete, clear, reindex."""

from __future__ import annotations

import argparse
import sys
from argparse import ArgumentTypeError
from typing import TYPE_CHECKING, Any, TextIO

from ..snippets import query_terms, snippet, term_weights
from .common import DEMO_LOST, UsageError, emit, json_option, open_memory
from .parsing import a_date, count_int, plain_int
from .progress import ProgressLine

if TYPE_CHECKING:
    from mnemoscope.engine import Recall


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ingest", help="ingest files or folders")
    p.add_argument("paths", nargs="+", help="files or folders (.md, .txt, chats: docs/formats.md)")
    json_option(p)
    p.set_defaults(handler=ingest, without_demo=DEMO_LOST.format("ingest"))

    p = sub.add_parser("recall", help="ask the store a question")
    p.add_argument("query", help="the question, in words")
    p.add_argument("--strategy", default=None,
                   help="bm25, dense, hybrid, ppr, walk, hybrid_walk, fused, or image with an image model "
                        "(default: the default_strategy setting, fused)")
    p.add_argument("--top-k", type=count_int, default=10, help="how many hits to show (default: 10)")
    p.add_argument("--mode", default="pro", choices=["lite", "pro", "max"],
                   help="lite: episodes and facts only; pro: plus the hits (default); max: plus backfill from their episodes")
    p.add_argument("--intent", default=None, help="deepen | broaden | compare | apply | clarify | neutral (default: inferred)")
    p.add_argument("--trace", action="store_true", default=None, help="include the walk's step-by-step trace")
    p.add_argument("--seed", type=int, default=None, help="seed for a sampled walk (same seed, same walk)")
    p.add_argument("--as-of", type=a_date, default=None, metavar="DATE",
                   help="answer with what was said and held true at this date (2023-06-01, 2023-06 or 2023)")
    json_option(p)
    p.set_defaults(handler=recall)

    p = sub.add_parser("stats", help="counts of what the store holds")
    json_option(p)
    p.set_defaults(handler=stats)

    p = sub.add_parser("sources", help="list the sources: id, kind, items, and who stored each (you, or the agent)")
    json_option(p)
    p.set_defaults(handler=sources)

    p = sub.add_parser("export", help="write every record as JSON lines")
    p.add_argument("file", help="the export to write (replaced only once it is complete)")
    p.set_defaults(handler=export)

    p = sub.add_parser("import", help="read an export")
    p.add_argument("file", help="a file `mnemoscope export` wrote")
    p.set_defaults(handler=import_, without_demo=DEMO_LOST.format("import"))

    p = sub.add_parser("delete", help="delete an item (ID) or a source (source:ID), with cascade")
    p.add_argument("id", help="an item id (42) or a source (source:3)")
    p.add_argument("--dry-run", action="store_true", help="report what would change, change nothing")
    json_option(p)
    p.set_defaults(handler=delete)

    p = sub.add_parser("clear", help="delete everything in the store")
    p.add_argument("--yes", action="store_true", help="really do it")
    p.set_defaults(handler=clear)

    p = sub.add_parser("reindex", help="rebuild every derived index from the records")
    p.set_defaults(handler=reindex)


def ingest(args: argparse.Namespace, out: TextIO) -> int:
    """Store and index every item, then let the areas read them (a progress line on a terminal).
    Interrupted, it keeps what it stored; the same command again resumes. A named path that
    cannot be read is refused before the store is opened, so none is made for it."""
    from mnemoscope.engine.ingest import check_named

    check_named(args.paths)
    with open_memory(args, create=True) as mem:
        bar = ProgressLine() if sys.stderr.isatty() else None
        try:
            report = mem.ingest(args.paths, catch_up=False, progress=bar and bar.phase("storing"))
            mem.catch_up(progress=bar and bar.phase("facts, topics"))
        except KeyboardInterrupt:
            if bar:
                bar.close()
            print("mnemoscope: interrupted; what was stored stays (run the same command again to resume)", file=sys.stderr)
            return 130
        if bar:
            bar.close()
        payload = {"sources": [vars(s) for s in report.sources], "items": report.items,
                   "skipped": report.skipped, "links_not_followed": report.links, "warnings": report.warnings, "images_not_fetched": len(report.not_fetched),
                   "seconds": round(report.seconds, 3)}
        emit(out, payload, args.json, "\n".join([report.summary(), *report.warnings]))
    return 0


def recall(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        options = {k: v for k, v in vars(args).items() if k in RECALL_OPTIONS and v is not None}
        strategy = args.strategy or mem.default_strategy
        result = mem.recall(args.query, top_k=args.top_k, strategy=strategy, mode=args.mode, **options)

        emit(out, result.to_dict(), args.json, lambda: recall_text(result))
    return 0


def recall_text(result: Recall) -> str:
    """A recall for people: hits, then the mode's episodes and facts, the walk, the token."""
    intent = result.intent or {}
    how = f"{result.strategy}, {result.mode}"
    if intent:
        how += f", intent {intent.get('name')}{' (inferred)' if intent.get('inferred') else ''}"
    if result.as_of:
        how += f", as of {result.as_of}"
    lines = [f"{len(result.hits)} hit(s) for {result.query!r} [{how}, {result.timings.get('total_ms', 0):.1f} ms]"]
    terms = query_terms(result.query)
    weights = term_weights([h.item.text for h in result.hits], terms)
    for h in result.hits:
        who = f"{h.item.speaker}: " if h.item.speaker else ""
        line = who + snippet(h.item.text, terms, 110 - len(who), weights)
        lines.append(f"{h.rank:>3}. {h.score:8.4f}  #{h.item.id:<6} {line}")
        if h.taught:
            lines.append(f"{'':>16}{h.taught.describe()}")
        if h.conflict:
            lines.append(f"{'':>16}{h.conflict.describe()} (mnemoscope conflicts)")
    if result.episodes:
        lines.append(f"episodes ({len(result.episodes)}):")
        for e in result.episodes:
            when = f"[{e.time_start[:10]}] " if getattr(e, "time_start", None) else ""
            lines.append(f"  - {when}{' '.join(e.summary.split())[:120]}  ({len(e.items)} item(s))")
    if result.facts:
        lines.append(f"facts ({len(result.facts)}):")
        for f in result.facts:
            note = f.state_note()
            mark = f" ({note})" if note else ""
            lines.append(f"  - #{f.id} {f.subject} —{f.predicate}→ {f.object}  [{f.validity()}]{mark}"
                         f"  [{len(f.provenance)} source(s)]")
    if result.trace:
        lines.append("walk:")
        for step in result.trace:
            d = step.to_dict()
            lines.append(f"  {d['relation']:>8} → {d['node']} (depth {d['depth']})")
    if result.token:
        lines.append(f"feedback token: {result.token}")
    return "\n".join(lines)


# Recall options passed through to Memory.recall when given.
RECALL_OPTIONS = {"intent", "trace", "seed", "as_of"}


def stats(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        figures = mem.stats().to_dict()
        emit(out, figures, args.json, lambda: "\n".join(f"{k:>16}: {_stat_text(v)}" for k, v in figures.items()))
    return 0


def sources(args: argparse.Namespace, out: TextIO) -> int:
    """Every source with its id (what ``delete source:ID`` takes), kind, items and who stored it:
    the agent that remembered it through MCP, by its name, or "you"."""
    with open_memory(args) as mem:
        counts = mem.item_counts_by_source()
        rows = [{"id": s.id, "name": s.name, "kind": s.kind, "items": counts.get(s.id, 0), "agent": s.agent}
                for s in mem.sources()]
    by = [row["agent"] or "you" for row in rows]
    width = max(map(len, ["by", *by]))
    lines = [f"{'id':>4}  {'kind':<12} {'items':>7}  {'by':<{width}}  name"]
    lines += [f"{row['id']:>4}  {row['kind']:<12} {row['items']:>7,}  {who:<{width}}  {row['name']}" for row, who in zip(rows, by)]
    emit(out, rows, args.json, "\n".join(lines))
    return 0


def _stat_text(value: Any, nested: bool = False) -> str:
    """A figure on one line as a person reads it: – for none, a record as ``name value · …`` (a
    record inside it as ``name:value …``, e.g. the dense calibration's MRR by weight)."""
    if value is None:
        return "–"
    if isinstance(value, dict):
        return (" " if nested else " · ").join(f"{k}{':' if nested else ' '}{_stat_text(v, True)}" for k, v in value.items())
    return str(value)


def export(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        n = mem.export(args.file)
    out.write(f"wrote {n} record(s) to {args.file}\n")
    return 0


def import_(args: argparse.Namespace, out: TextIO) -> int:
    """Import an export. A file that is no export is refused before the store is opened, so a
    refused import into a new path leaves no store there (:func:`engine.transfer.check_export`)."""
    from mnemoscope.engine import Settings
    from mnemoscope.engine.transfer import check_export

    settings = Settings.load()
    check_export(args.file, settings.max_import_bytes)
    with open_memory(args, settings, create=True) as mem:
        report = mem.import_(args.file)
    out.write("\n".join([report.summary(), *report.warnings]) + "\n")
    return 0


def delete(args: argparse.Namespace, out: TextIO) -> int:
    kind, _, raw = args.id.rpartition(":")
    try:
        number = plain_int(raw)
    except ArgumentTypeError:
        number = None
    if number is None or kind not in ("", "item", "source"):
        raise UsageError(f"{args.id!r} is not an item id (123) or a source id (source:12)")
    with open_memory(args) as mem:
        if kind == "source":
            report = mem.delete_source(number, dry_run=args.dry_run)
        else:
            report = mem.delete_item(number, dry_run=args.dry_run)
    verb = "would delete" if args.dry_run else "deleted"
    emit(out, report, args.json, lambda: f"{verb}: " + ", ".join(f"{v} {k}" for k, v in report.items()))
    return 0


def clear(args: argparse.Namespace, out: TextIO) -> int:
    if not args.yes:
        raise UsageError("clear deletes everything in the store; run it again with --yes")
    with open_memory(args) as mem:
        mem.clear()
    out.write("store cleared\n")
    return 0


def reindex(args: argparse.Namespace, out: TextIO) -> int:
    with open_memory(args) as mem:
        r = mem.reindex()
    out.write(f"reindexed {r['items']} item(s), {r['terms']} term(s) in {r['seconds']:.2f}s\n")
    return 0
