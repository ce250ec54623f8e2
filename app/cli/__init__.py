"""``mnemoscope``: the command line. With no command it opens the app.

Commands are grouped by area, one module each (``core``, ``evaluate``, …); every module has a
``register(subparsers)`` that adds its commands with a ``handler(args, out) -> int``. Errors the
user can act on (a ``MnemoscopeError``) print one line and exit 2; what the commands share is in
``common``.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from typing import TextIO

from mnemoscope.engine.config import env_file
from mnemoscope.engine.errors import MnemoscopeError

from . import check, conflicts, core, evaluate, images, knowledge, mcp, ranker, topics
from .common import UsageError, store_path
from .parsing import Parser
from .terminal import VisibleText, visible

COMMAND_MODULES = [core, evaluate, knowledge, conflicts, ranker, topics, images, mcp, check]


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="mnemoscope", description="Explore, curate and teach an agent memory store.")
    parser.add_argument("--store", help="store file (default: $MNEMOSCOPE_STORE or the user data directory;"
                        " where none is, the app asks before making one)")
    parser.add_argument("--demo", action="store_true",
                        help="a temporary store with the demo content, for the app or a command (thrown away when it ends, with any change)")
    parser.set_defaults(without_demo=None)  # a command that cannot take --demo sets why
    parser.add_argument("--env-file", metavar="PATH",
                        help="also read MNEMOSCOPE_* settings from this file of NAME=value lines (a .env is never read unless named)")
    sub = parser.add_subparsers(dest="command", metavar="command")
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = VisibleText(out or sys.stdout)  # a document's text must not drive the terminal
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed in one line
        return int(exc.code or 0)
    try:
        with env_file(args.env_file) as names:
            if args.env_file:
                print(visible(f"mnemoscope: settings read from {args.env_file}: {', '.join(names) or 'none'}"), file=sys.stderr)
            if args.demo and args.without_demo:
                raise UsageError(args.without_demo)
            if args.command is None:
                from mnemoscope.app.tui import run

                run(store_path(args), demo=args.demo)
                return 0
            return int(args.handler(args, out) or 0)
    except MnemoscopeError as exc:  # meant for the person: one line; anything else is a bug, with its traceback
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"mnemoscope: error: {visible(message)}", file=sys.stderr)
        return 2
    except sqlite3.IntegrityError as exc:  # a write broke a rule of the store: it is undone; the store is not damaged
        print(f"mnemoscope: error: the store refused a write that breaks one of its rules ({exc}); that write was undone."
              " If `mnemoscope check` finds the store sound, this is a bug in Mnemoscope", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as exc:  # met while reading rows (the store translates what its statements raise)
        print(f"mnemoscope: error: the store failed ({exc}); `mnemoscope check` checks it", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mnemoscope: interrupted", file=sys.stderr)
        return 130


def run() -> None:
    """The console script: :func:`main`, and a reader that goes away before the output ends
    (``mnemoscope facts | head``) stops the command quietly, as ``yes | head`` stops ``yes``:
    exit 141 (128 + SIGPIPE), no traceback."""
    try:
        code = main()
        sys.stdout.flush()  # here, not at the interpreter's exit, where a closed pipe is one more message
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # what is left buffered goes nowhere
        code = 141  # 128 + SIGPIPE (13), as a shell reports a command the signal stopped
    sys.exit(code)
