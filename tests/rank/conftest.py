"""A small conversation store for the ranker tests, built once and copied per test."""

import shutil
from pathlib import Path

import pytest

from mnemoscope.engine import Memory

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo" / "conversation.json"
SETTINGS = {"fused_signals": ""}  # the core signals only: other areas' signals are tested by them


@pytest.fixture(scope="session")
def built_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("rank") / "demo.db"
    with Memory(path, **SETTINGS) as mem:
        mem.ingest(DEMO)
        mem.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


@pytest.fixture
def mem(built_store: Path, tmp_path: Path):
    path = tmp_path / "store.db"
    shutil.copy(built_store, path)
    memory = Memory(path, **SETTINGS)
    yield memory
    memory.close()
