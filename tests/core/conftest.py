"""Shared helpers for the core tests: small corpora and a core-only store (the checksum is in tests/conftest.py)."""

from pathlib import Path

import pytest

from mnemoscope.engine import Memory

GUIDE = """# Sourdough
A starter is flour and water that wild yeast and lactic bacteria ferment.

## Feeding
Feed the starter twice a day with equal weights of flour and water. Keep it at 24 degrees.

## Baking
Bake the loaf in a hot Dutch oven at 250 degrees for twenty minutes with the lid on.
"""

CHAT = "\n".join([
    "Maya: I finally adopted a puppy called Biscuit last weekend.",
    "Daniel: That is wonderful news! What breed is Biscuit?",
    "Maya: A beagle mix from the shelter downtown.",
    "Daniel: I am training for the Berlin marathon in September.",
    "Maya: Good luck with the marathon, how far do you run each week?",
    "Daniel: About sixty kilometres, mostly along the river.",
])


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "sourdough.md").write_text(GUIDE, encoding="utf-8")
    (folder / "chat.txt").write_text(CHAT, encoding="utf-8")
    return folder


@pytest.fixture
def core(tmp_path: Path):
    """A store with the core alone (no knowledge, topics or ranker), closed after the test."""
    mem = Memory(tmp_path / "core.db", extensions=False)
    yield mem
    mem.close()
