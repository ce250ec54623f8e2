"""``mnemoscope check``: is the store healthy; ``--salvage FILE`` exports what can still be read;
``--recount`` sets the counts the store keeps to a recount of its rows."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TextIO

from .common import UsageError, store_path

if TYPE_CHECKING:
    from mnemoscope.engine.store.check import CountDrift

LISTED = 5  # kept counts named in check's line; the rest are counted


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="check the store file (integrity, schema, permissions, kept counts); --salvage FILE"
                                     " exports every record that can still be read")
    p.add_argument("--salvage", metavar="FILE", help="write what can be read as an export, for `import` into a new store")
    p.add_argument("--recount", action="store_true",
                   help="set the counts the store keeps (sources, items, facts, episodes, events, each entity's items and"
                        " facts) to a recount of its rows")
    p.set_defaults(handler=check)


def check(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.config import default_store_path
    from mnemoscope.engine.errors import StoreError
    from mnemoscope.engine.store.check import check_file, recount
    from mnemoscope.engine.transfer import salvage

    path = Path(store_path(args) or default_store_path()).expanduser()
    if not path.exists():
        raise StoreError(f"no store at {path}")
    if args.salvage and args.recount:
        raise UsageError("check takes --salvage FILE or --recount, not both")
    if args.recount:
        drifts = recount(path)
        out.write(f"recounted {path}: " + _listed(drifts, lambda d: f"{d.name} {d.counted} (kept {d.kept})") + "\n"
                  if drifts else f"{path}: the kept counts equal a recount; nothing changed\n")
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
        kept = _listed(report.drifts, lambda d: f"{d.name} kept {d.kept}, counted {d.counted}", "; ")
        problems.append(f"the kept counts differ from a recount ({kept}): the app's header shows them;"
                        f" `mnemoscope --store {path} check --recount` sets them to the recount")
    lines = [f"{path}: {'ok' if report.ok else f'{len(problems)} problem(s)'}",
             *(f"  {note}" for note in report.notes), *(f"  problem: {p}" for p in problems)]
    if report.problems:
        lines.append(f"  to save what can be read: mnemoscope --store {path} check --salvage FILE")
    out.write("\n".join(lines) + "\n")
    return 0 if report.ok else 1


def _listed(drifts: list[CountDrift], said: Callable[[CountDrift], str], sep: str = ", ") -> str:
    """The first few drifts, and how many more: many entities' counts off stay one line."""
    shown = sep.join(said(d) for d in drifts[:LISTED])
    return shown + (f"{sep}and {len(drifts) - LISTED} more" if len(drifts) > LISTED else "")
