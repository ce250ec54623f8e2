"""``mnemoscope check``: is the store healthy; ``--salvage FILE`` exports what can still be read."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TextIO

from .common import store_path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="check the store file (integrity, schema, permissions); --salvage FILE exports"
                                     " every record that can still be read")
    p.add_argument("--salvage", metavar="FILE", help="write what can be read as an export, for `import` into a new store")
    p.set_defaults(handler=check)


def check(args: argparse.Namespace, out: TextIO) -> int:
    from mnemoscope.engine.config import default_store_path
    from mnemoscope.engine.errors import StoreError
    from mnemoscope.engine.store.check import check_file
    from mnemoscope.engine.transfer import salvage

    path = Path(store_path(args) or default_store_path()).expanduser()
    if not path.exists():
        raise StoreError(f"no store at {path}")
    if args.salvage:
        saved = salvage(path, args.salvage)
        lines = [f"salvaged {saved.sources} source(s) and {saved.items} item(s) of {path} to {args.salvage}",
                 *(f"  lost: {line}" for line in saved.lost),
                 f"import it into a new store: mnemoscope --store NEW.db import {args.salvage}"]
        out.write("\n".join(lines) + "\n")
        return 0
    report = check_file(path)
    lines = [f"{path}: {'ok' if report.ok else f'{len(report.problems)} problem(s)'}",
             *(f"  {note}" for note in report.notes), *(f"  problem: {p}" for p in report.problems)]
    if not report.ok:
        lines.append(f"  to save what can be read: mnemoscope --store {path} check --salvage FILE")
    out.write("\n".join(lines) + "\n")
    return 0 if report.ok else 1
