"""The README's example of a fact's history, run on the demo as a newcomer would run it: fact ids
follow the extractor's order, so a change to the extractor can leave the example pointing at a fact
with no history to show (it pointed at "Daniel has gotten obsessed …", one version, nothing
replaced)."""

from __future__ import annotations

import io
import re
from pathlib import Path

from mnemoscope.app.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readmes_history_example_shows_a_chain_on_the_demo(demo_store: Path) -> None:
    examples = re.findall(r"^mnemoscope facts --history (\d+)\s+# (.*)$", README.read_text(encoding="utf-8"), re.M)
    assert examples, "the README no longer gives a `facts --history` example"
    for fact_id, comment in examples:
        assert "chain" in comment
        out = io.StringIO()
        assert main(["--store", str(demo_store), "facts", "--history", fact_id], out) == 0
        lines = out.getvalue().splitlines()
        assert int(lines[0].split()[0]) >= 2, lines  # "2 fact(s) in the history of fact 44"
        assert "superseded by" in out.getvalue()
