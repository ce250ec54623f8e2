"""``mnemoscope check``: is the store healthy; ``--salvage FILE`` exports what can still be read;
``--recount`` sets the counts the store keeps to a recount of its rows."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from .common import UsageError, existing_store

if TYPE_CHECKING:
    from mnemoscope.engine.store.check import CountDrift

LISTED = 5  # kept counts named in check's line; the rest are counted


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="check the store file (integrity, schema, permissions, kept counts); --salvage FILE"
                                     " exports every record that can still be read")
    p.add_argument("--salvage", metavar="FILE", help="write what can be read as an export, for `import` into a new store")
    p.add_argument("--recount", action="store_true",
                   help="set the counts the store keeps (sources, items, facts, episodes, events, each entity's items and"
                        " facts, each source's items) to a recount of its rows")
    p.set_defaults(handler=check, without_demo="--demo's store is made new for each command and thrown away: check examines a"
                                                 " store file of yours (leave --demo out, or name it with --store)")


def check(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.store.check import KEPT_BY_MIGRATION, check_file, recount
    from mnemoscope.engine.transfer import salvage

    path = existing_store(args)
    if args.salvage and args.recount:
        raise UsageError("check takes --salvage FILE or --recount, not both")
    if args.recount:
        done = recount(path)
        lines = []
        if done.added:  # a store from before them: its open upgraded it, and the migrations counted every row
            rest = "" if done.drifts or len(done.added) == len(KEPT_BY_MIGRATION) else "; the rest equal a recount"
            lines.append(f"upgraded {path}: added the kept counts of {' and of '.join(done.added)}, counted from every"
                         f" row{rest}")
        if done.drifts:
            lines.append(f"recounted {path}: " + _listed(done.drifts, RECOUNTED))
        elif not done.added:
            lines.append(f"{path}: the kept counts equal a recount; nothing changed")
        out.write("\n".join(lines) + "\n")
        return 0
    if args.salvage:
        saved = salvage(path, args.salvage)
        lines = [f"salvaged {saved.sources} source(s) and {saved.items} item(s) of {path} to {args.salvage}",
                 *(f"  lost: {line}" for line in saved.lost),
                 f"import it into a new store: mnemoscope --store NEW.db import {args.salvage}"]
        out.write("\n".join(lines) + "\n")
        return 0
    report = check_file(path)
    problems = list(report.problems)
    if report.drifts:
        kept = _listed(report.drifts, FOUND, "; ")
        problems.append(f"the kept counts differ from a recount ({kept}): the app shows them;"
                        f" `mnemoscope --store {path} check --recount` sets them to the recount")
    lines = [f"{path}: {'ok' if report.ok else f'{len(problems)} problem(s)'}",
             *(f"  {note}" for note in report.notes), *(f"  problem: {p}" for p in problems)]
    if report.problems:
        lines.append(f"  to save what can be read: mnemoscope --store {path} check --salvage FILE")
    out.write("\n".join(lines) + "\n")
    return 0 if report.ok else 1


# a drift as check names it and as ``--recount`` says what it set: a count kept and counted, a row
# of an owner's counts missing, a row of counts of an owner that is gone
FOUND = ("{name} kept {kept}, counted {counted}", "{name} not kept, counted {counted}",
         "{name} kept {kept}, the {noun} is gone")
RECOUNTED = ("{name} {counted} (kept {kept})", "{name} {counted} (not kept)", "{name} dropped (kept {kept}; the {noun} is gone)")


def _listed(drifts: list[CountDrift], phrases: tuple[str, str, str], sep: str = ", ") -> str:
    """The first few drifts, each in its case's phrase, and how many more: many entities' counts
    off stay one line."""
    shown = sep.join(phrases[1 if d.kept is None else 2 if d.counted is None else 0].format(
        name=d.name, kept=d.kept, counted=d.counted, noun=d.noun) for d in drifts[:LISTED])
    return shown + (f"{sep}and {len(drifts) - LISTED} more" if len(drifts) > LISTED else "")
