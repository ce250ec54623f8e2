"""The command line run in the test's own process."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from mnemoscope.app.cli import main


def cli(*argv: str | Path) -> tuple[int, str]:
    """``mnemoscope ARGV...`` in this process: (its exit code, what it printed)."""
    out = io.StringIO()
    return main([str(a) for a in argv], out), out.getvalue()


def new_store(path: str | Path) -> Path:
    """An empty store at ``path``, made as a person makes one from the command line: ``ingest`` of
    an empty folder (a command that only reads refuses a path where no store is)."""
    with tempfile.TemporaryDirectory() as nothing:
        code, out = cli("--store", path, "ingest", nothing)
    assert code == 0 and out.startswith("0 source(s)"), out
    return Path(path)
