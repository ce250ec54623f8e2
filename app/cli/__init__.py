"""``mnemoscope``: the command line. With no command it opens the app.

Commands are grouped by area, one module each (``core``, ``evaluate``, …); every module has a
``register(subparsers)`` that adds its commands with a ``handler(args, out) -> int``. Errors the
user can act on (a ``MnemoscopeError``) print one line and exit 2; what the commands share is in
``common``.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from . import core, evaluate, images, knowledge, mcp, ranker, topics
from .common import store_path

COMMAND_MODULES = [core, evaluate, knowledge, ranker, topics, images, mcp]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mnemoscope", description="Explore, curate and teach an agent memory store.")
    parser.add_argument("--store", help="store file (default: $MNEMOSCOPE_STORE or the user data directory)")
    parser.add_argument("--demo", action="store_true", help="open the app on a temporary store with the demo content")
    sub = parser.add_subparsers(dest="command", metavar="command")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        from mnemoscope.app.tui import run

        run(store_path(args), demo=args.demo)
        return 0
    from mnemoscope.engine.errors import MnemoscopeError

    try:
        return int(args.handler(args, out) or 0)
    except MnemoscopeError as exc:  # meant for the person: one line; anything else is a bug, with its traceback
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"mnemoscope: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mnemoscope: interrupted", file=sys.stderr)
        return 130


def run() -> None:
    sys.exit(main())
