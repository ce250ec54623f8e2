"""What every command module shares: the store a command opens, printing, ``--set``, the one
error a command raises for a mistake on its command line."""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, TextIO

from mnemoscope.engine.errors import MnemoscopeError

if TYPE_CHECKING:
    from mnemoscope.engine import Memory, Settings

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"  # the benchmarks' default data folder
# Why ingest and import refuse --demo: what they put in would go with the store at the command's end.
DEMO_LOST = ("--demo is a temporary store, thrown away when the command ends: what {} puts in would be lost"
             " (leave --demo out, or name a store with --store)")


class UsageError(MnemoscopeError, ValueError):
    """A command-line mistake the user can fix."""


def store_path(args: argparse.Namespace, named: str | None = None) -> str | None:
    """The store a command opens: ``named`` (a command's own ``--store``), else ``--store``, else
    ``MNEMOSCOPE_STORE``, else None (the default store). A ``--store`` given empty is refused:
    it is ``--store "$STORE"`` with the variable unset, and the default store is the person's
    own memory, not where what was meant for another store may go. ``--demo`` with a ``--store``
    is refused too: the two name different stores, and either one silently lost is a surprise."""
    for given in (named, args.store):
        if given is not None:
            if not given.strip():
                raise UsageError("--store is empty: name a store file (leave --store out for the default store)")
            if args.demo:
                raise UsageError("--demo opens a temporary store with the demo content and --store names another: give one of them")
            return given
    return os.environ.get("MNEMOSCOPE_STORE") or None


@contextmanager
def open_memory(args: argparse.Namespace, settings: "Settings | None" = None, *, create: bool = False,
                named: str | None = None, client: str = "cli") -> Iterator["Memory"]:
    """The store a command opens (:func:`store_path`), with ``settings`` if the command has read
    them already (else they are read from the config file and the environment), closed when the
    command ends. With ``--demo``, the demo store (:func:`demo_memory`), as the app opens it.
    Only a command that puts content in (``create``: ingest, import, mcp) makes a store where
    none is; any other refuses the path in one line, as ``check`` does: a mistyped ``--store``
    made a new empty store (and its folders) that answered "0 hit(s)" or exported nothing, exit 0."""
    from mnemoscope.engine import Memory, Settings

    given = store_path(args, named)
    if args.demo:
        with demo_memory(settings, client) as mem:
            yield mem
        return
    if not create:
        settings = settings or Settings.load()
        existing_store(args, settings)
    with Memory(given, settings, client=client) as mem:
        yield mem


def existing_store(args: argparse.Namespace, settings: "Settings | None" = None) -> Path:
    """The store file a command names (:func:`store_path`, else the config file's ``store``, else
    the default), refused in one line where there is none: a command that puts nothing in makes
    no store, and ``check`` checks the one the other commands open (it read the default store's
    path when the config file named another)."""
    from mnemoscope.engine import Settings
    from mnemoscope.engine.errors import StoreError

    given = store_path(args)
    path = Path(given).expanduser() if given is not None else (settings or Settings.load()).store_path
    if not os.path.lexists(path):
        typo = "a mistyped --store? " if given is not None else ""
        raise StoreError(f"no store at {path}; nothing was done ({typo}ingest or import makes a store)")
    return path


@contextmanager
def demo_memory(settings: "Settings | None", client: str) -> Iterator["Memory"]:
    """The demo content (assets/demo) ingested into a new store in a private temporary folder,
    which is removed when the command ends, with whatever the command changed in it: the app's
    ``--demo`` store, for a command (about a second and a half to load)."""
    from mnemoscope.engine import Memory

    from ..services import DEMO_DIR

    with tempfile.TemporaryDirectory(prefix="mnemoscope-demo-") as folder:
        with Memory(Path(folder) / "demo.db", settings, client=client) as mem:
            mem.ingest([DEMO_DIR], strict=False)
            yield mem


def emit(out: TextIO, payload: Any, as_json: bool, text: Callable[[], str] | str | None = None) -> None:
    """Print JSON (one object or list) or the human text."""
    if as_json:
        out.write(json.dumps(payload, ensure_ascii=False, default=str) + "\n")
    else:
        out.write((text() if callable(text) else text or str(payload)) + "\n")


def json_option(parser: argparse.ArgumentParser) -> None:
    """The ``--json`` every listing and report offers."""
    parser.add_argument("--json", action="store_true", help="print JSON, the machine-readable form, instead of text")


def settings_of(pairs: list[str]) -> dict[str, Any]:
    """``--set NAME=VALUE`` options as engine settings."""
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep:
            raise UsageError(f"--set expects NAME=VALUE, got {pair!r}")
        out[name.strip()] = value.strip()
    return out
