"""The command line run in the test's own process."""

from __future__ import annotations

import io
from pathlib import Path

from mnemoscope.app.cli import main


def cli(*argv: str | Path) -> tuple[int, str]:
    """``mnemoscope ARGV...`` in this process: (its exit code, what it printed)."""
    out = io.StringIO()
    return main([str(a) for a in argv], out), out.getvalue()
