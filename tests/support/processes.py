"""Another process holding a store's lock, for the tests of what this process does meanwhile."""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

# Holds the lock until a line comes on stdin. "write": a write transaction left open (readers go
# on, another writer waits); "exclusive": locking_mode EXCLUSIVE, which shuts readers out too.
_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":
    conn.execute("PRAGMA locking_mode=EXCLUSIVE")
    conn.execute("BEGIN EXCLUSIVE")
else:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT OR REPLACE INTO kv (key, value) VALUES ('held', 'yes')")
print("held", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
conn.close()
"""


@contextmanager
def store_held(path: str | Path, how: str = "write") -> Iterator[None]:
    """While the block runs, another process holds ``path``'s lock (``how``: "write" or
    "exclusive", see :data:`_HOLDER`); it lets go when the block ends, and must end cleanly."""
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(path), how], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held", holder.stderr
        yield
    finally:
        _, err = holder.communicate("go\n", timeout=30)
    assert holder.returncode == 0, err


def dies_on_third_insert(setup: str, call: str) -> str:
    """A script for ``python -c`` that opens the store ``sys.argv[1]``, runs ``setup``, then
    ``call``, and is killed (SIGKILL) as the store's third batch of items is written: a crash in the
    middle of a write, for the tests that the store is left as it was."""
    return f"""
import os, signal, sys
from mnemoscope.engine import Memory, memory
{setup}
mem = Memory(sys.argv[1])
insert_items = mem.store.insert_items
calls = []
def insert_or_die(*args, **kwargs):
    calls.append(1)
    if len(calls) == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return insert_items(*args, **kwargs)
mem.store.insert_items = insert_or_die
{call}
"""
