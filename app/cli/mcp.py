"""``mnemoscope mcp``: serve the store to agent hosts over MCP (app/mcp_server.py)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TextIO

from .common import UsageError, open_memory, store_path
from .terminal import visible


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="serve the store to an agent host over MCP (stdio; --http PORT for HTTP)")
    p.add_argument("--store", dest="mcp_store", metavar="PATH", help="store file (default: as for every command)")
    p.add_argument("--http", type=int, metavar="PORT", help="streamable HTTP on 127.0.0.1:PORT (path /mcp) instead of"
                   " stdio; clients send the bearer token it prints (kept in the user config folder's mcp-token)")
    p.set_defaults(handler=mcp)


def mcp(args: argparse.Namespace, out: TextIO) -> int:
    """Open the store first, so that a store that cannot be opened is one line and exit 2, then
    serve (the demo store with ``--demo``: an agent's try-out, gone when the server stops)."""
    from mnemoscope.engine import Settings

    from ..mcp_server import serve

    given = store_path(args, args.mcp_store)  # an empty --store, or one beside --demo, is refused before a token is made
    token = None
    if args.http is not None:
        if not 1 <= args.http <= 65535:
            raise UsageError(f"--http expects a port number from 1 to 65535, got {args.http}")
        from ..mcp_http import http_token, token_path

        token = http_token(token_path())  # before the store: a refused token file opens nothing
    new = not args.demo and not os.path.lexists(Path(given).expanduser() if given else Settings.load().store_path)
    with open_memory(args, create=True, named=args.mcp_store, client="mcp:unknown") as mem:
        if new:  # the host's log says it: an agent writing into a mistyped path's new store looks like amnesia
            typo = " (a mistyped --store?)" if given else ""
            print(visible(f"mnemoscope mcp: no store was at {mem.path}: a new empty one was made{typo}"), file=sys.stderr)
        serve(mem, args.http, token)
    return 0
