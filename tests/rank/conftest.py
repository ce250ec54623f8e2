"""A small conversation store for the ranker tests, built once per run and copied per test."""

import shutil
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from tests.support.stores import DEMO_DIR, shared_store

DEMO = DEMO_DIR / "conversation.json"
SETTINGS = {"fused_signals": ""}  # the core signals only: other areas' signals are tested by them


def _ingest_conversation(path: Path) -> None:
    with Memory(path, **SETTINGS) as mem:
        mem.ingest(DEMO)


@pytest.fixture(scope="session")
def built_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_store(tmp_path_factory, "rank-conversation", _ingest_conversation)


@pytest.fixture
def mem(built_store: Path, tmp_path: Path):
    path = tmp_path / "store.db"
    shutil.copy(built_store, path)
    memory = Memory(path, **SETTINGS)
    yield memory
    memory.close()


def reopened_after(mem: Memory, sql: str) -> Memory:
    """``mem``'s store opened again after ``sql`` changed it behind the engine's back (what a
    crash or another tool might leave); ``mem`` is closed."""
    with mem.store.transaction():
        mem.store.conn.execute(sql)
    mem.close()
    return Memory(mem.path, **SETTINGS)
