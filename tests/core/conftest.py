"""Shared helpers for the core tests: small corpora and a checksum of everything a store holds."""

import hashlib
import sqlite3
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


@pytest.fixture
def checksum():
    """``checksum(path)``: a digest of every row of every table of a store."""
    return store_checksum


def store_checksum(path: Path, skip: tuple[str, ...] = ()) -> str:
    """A digest of every row of every table but ``skip``, read through a separate connection."""
    digest = hashlib.sha256()
    with sqlite3.connect(path) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in (t for t in tables if t not in skip):
            digest.update(table.encode())
            for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2" if table != "sqlite_sequence" else f"SELECT * FROM {table}"):
                digest.update(repr(row).encode())
    return digest.hexdigest()
