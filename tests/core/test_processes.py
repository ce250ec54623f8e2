"""Real processes: a store survives SIGKILL mid-ingest, and a reader queries while another process ingests."""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemoscope.engine import Memory

ROOT = Path(__file__).resolve().parents[2]

# Ingest every file of a folder, one transaction per source, printing each source once committed.
WRITER = """
import sys
from mnemoscope.engine import Memory
mem = Memory(sys.argv[1], extensions=False)
mem.ingest(sys.argv[2], progress=lambda done, total, name: print(name, flush=True))
"""

WORDS = ("river mountain harbour violin garden lantern meadow comet pepper tulip glacier canyon orchard falcon "
         "saffron quartz maple ember willow coral").split()


def make_sources(folder: Path, n_files: int, lines: int) -> dict[str, int]:
    """``n_files`` transcripts of ``lines`` turns each; returns lines per file path."""
    folder.mkdir()
    out = {}
    for f in range(n_files):
        turns = [f"{'Ann' if i % 2 else 'Ben'}: turn {i} of file {f} about the {WORDS[(f + i) % len(WORDS)]} "
                 f"and the {WORDS[(f * 7 + i * 3) % len(WORDS)]} near token{f}x{i}." for i in range(lines)]
        path = folder / f"t{f:04d}.txt"
        path.write_text("\n".join(turns), encoding="utf-8")
        out[str(path)] = lines
    return out


def start_writer(store: Path, folder: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(folder)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def items_per_source(store: Path) -> dict[str, int]:
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT s.name, COUNT(i.id) FROM sources s LEFT JOIN items i ON i.source_id = s.id GROUP BY s.id")
        return dict(rows.fetchall())


def test_sigkill_mid_ingest_keeps_committed_sources_whole(tmp_path):
    expected = make_sources(tmp_path / "many", n_files=200, lines=20)
    store = tmp_path / "crash.db"
    writer = start_writer(store, tmp_path / "many")
    committed = [writer.stdout.readline().strip() for _ in range(10)]
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait(timeout=10)
    assert writer.returncode == -signal.SIGKILL

    present = items_per_source(store)
    assert set(committed) <= present.keys()  # every source reported as committed is there …
    assert len(present) < len(expected)  # … the kill came mid-ingest …
    assert all(present[name] == expected[name] for name in present)  # … and none is half-written
    with Memory(store, extensions=False) as mem:
        assert mem.store.integrity_ok()
        assert mem.recall("river", strategy="bm25").hits
        report = mem.ingest(tmp_path / "many")  # resuming adds the rest, skips what is there
        assert sum(s.status == "unchanged" for s in report.sources) == len(present)
    assert items_per_source(store) == expected


def test_a_reader_queries_while_another_process_ingests(tmp_path):
    make_sources(tmp_path / "stream", n_files=200, lines=20)
    store = tmp_path / "shared.db"
    reader = Memory(store, extensions=False)
    writer = start_writer(store, tmp_path / "stream")
    seen, latencies = [], []
    try:
        writer.stdout.readline()  # the first source is committed
        while writer.poll() is None:
            started = time.perf_counter()
            hits = reader.recall("turn about the glacier", strategy="bm25", top_k=5).hits
            latencies.append(time.perf_counter() - started)
            seen.append(reader.stats()["items"])
            assert hits
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0, writer.stderr.read()
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] > seen[0]  # the reader follows the writer
    reader.refresh()
    assert reader.stats()["items"] == 200 * 20
    assert reader.recall("token199x19", strategy="bm25").hits[0].item.text.endswith("token199x19.")
    assert sorted(latencies)[len(latencies) // 2] < 5.0  # never blocked behind the writer
    reader.close()
