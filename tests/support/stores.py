"""Stores the tests share: built once per test run (also across pytest-xdist's workers), copied
by each test that writes; and one checksum of everything a store holds."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO_DIR = ROOT / "assets" / "demo"


def shared_store(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The store ``name``, made by ``build(path)`` once per run: the first worker to ask builds it
    under a lock, the others wait for it and then use the same file (read it, or copy it first).

    Under xdist every worker has its own base temp folder inside the run's; that shared folder
    holds the store. Without xdist the run's own base folder does (never one of an earlier run).
    """
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    path = shared / "shared-stores" / name / "store.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path.parent / "lock"):
        if not path.exists():
            partial = path.parent / "building" / path.name
            partial.parent.mkdir(exist_ok=True)
            build(partial)
            _checkpoint(partial)
            partial.replace(path)  # whole or absent: a worker never sees a half-built store
    return path


def shared_folder(factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``build(folder)`` once per run, as :func:`shared_store`
    makes a store: for what is costly to make and only read afterwards (files whose paths the
    results name, so the folder is built in place; a build that failed is started over)."""
    base = factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = shared / "shared-folders" / name
    folder.parent.mkdir(parents=True, exist_ok=True)
    with _locked(folder.parent / f"{name}.lock"):
        done = folder.parent / f"{name}.done"
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _checkpoint(path: Path) -> None:
    """Fold the write-ahead log into the file, so that copying the one file copies the store."""
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def store_checksum(path: Path, skip: tuple[str, ...] = ()) -> str:
    """A digest of every row of every table but ``skip``, read through a separate connection:
    to show that a refused, failed or dry-run action changed nothing."""
    digest = hashlib.sha256()
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        for table in (t for t in tables if t not in skip):
            digest.update(table.encode())
            order = "" if table == "sqlite_sequence" else " ORDER BY 1, 2"
            for row in conn.execute(f"SELECT * FROM {table}{order}"):
                digest.update(repr(row).encode())
    finally:
        conn.close()
    return digest.hexdigest()


def migrations_before(name: str) -> list[tuple[str, str]]:
    """The migrations of a store made before migration ``name`` (``knowledge-3``) existed: the
    other areas' and this area's earlier ones. A later one of the same area may read what
    ``name`` adds, so it is left out too."""
    from mnemoscope.engine.store import MIGRATIONS

    area, number = name.rsplit("-", 1)
    return [m for m in MIGRATIONS if not (m[0].rsplit("-", 1)[0] == area and int(m[0].rsplit("-", 1)[1]) >= int(number))]
