"""Real processes: a store survives SIGKILL mid-ingest, and a reader queries while another process ingests."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from tests.support.processes import store_held

ROOT = Path(__file__).resolve().parents[2]

# Ingest every file of a folder, one transaction per source, printing each source once committed;
# with a third argument, wait for a line after the first one (a reader looks before the rest comes).
WRITER = """
import sys
from mnemoscope.engine import Memory
gate = len(sys.argv) > 3
def said(done, total, name):
    global gate
    print(name, flush=True)
    if gate:
        gate = False
        sys.stdin.readline()
mem = Memory(sys.argv[1], extensions=False)
mem.ingest(sys.argv[2], progress=said)
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


def start_writer(store: Path, folder: Path, gated: bool = False) -> subprocess.Popen:
    """The writer (:data:`WRITER`); ``gated``: it waits for a line on stdin after its first source."""
    return subprocess.Popen([sys.executable, "-c", WRITER, str(store), str(folder), *(["gated"] if gated else [])],
                            cwd=ROOT, stdin=subprocess.PIPE if gated else None, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def items_per_source(store: Path) -> dict[str, int]:
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT s.name, COUNT(i.id) FROM sources s LEFT JOIN items i ON i.source_id = s.id GROUP BY s.id")
        return dict(rows.fetchall())


def test_sigkill_mid_ingest_keeps_committed_sources_whole(tmp_path):
    expected = make_sources(tmp_path / "many", n_files=200, lines=5)  # many sources: the kill lands mid-ingest
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
    make_sources(tmp_path / "stream", n_files=200, lines=8)
    store = tmp_path / "shared.db"
    reader = Memory(store, extensions=False)
    writer = start_writer(store, tmp_path / "stream", gated=True)
    seen, latencies = [], []
    try:
        writer.stdout.readline()  # the first source is committed, and the writer waits
        seen.append(reader.stats().items)  # (a loaded machine could otherwise see every source at once)
        writer.stdin.write("go\n")
        writer.stdin.flush()
        while writer.poll() is None:
            started = time.perf_counter()
            hits = reader.recall("turn about the glacier", strategy="bm25", top_k=5).hits
            latencies.append(time.perf_counter() - started)
            seen.append(reader.stats().items)
            assert hits
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0, writer.stderr.read()
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] > seen[0]  # the reader follows the writer
    reader.refresh()
    assert reader.stats().items == 200 * 8
    assert reader.recall("token199x7", strategy="bm25").hits[0].item.text.endswith("token199x7.")
    assert sorted(latencies)[len(latencies) // 2] < 5.0  # never blocked behind the writer
    reader.close()


def test_a_recall_holds_its_own_writes_at_once_and_others_within_the_refresh_interval(tmp_path):
    """Bounded staleness: another process's commit waits for the interval (or this memory's next
    write, which takes in every commit before it writes); this memory's own write never waits."""
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "kingfisher.md").write_text("The kingfisher nests by the weir.", encoding="utf-8")
    store = tmp_path / "shared.db"
    reader = Memory(store, extensions=False, refresh_interval=3600)
    assert reader.recall("heron", strategy="bm25").hits == []  # looked at the store just now
    writer = start_writer(store, tmp_path / "other")
    assert writer.wait(timeout=120) == 0, writer.stderr.read()

    assert reader.recall("kingfisher", strategy="bm25").hits == []  # another process's commit: within the interval
    reader.add_note("A grey heron fished below the heronry.", name="heron")  # a write builds on every commit
    assert [h.item.text for h in reader.recall("heronry", strategy="bm25").hits] == ["A grey heron fished below the heronry."]
    assert reader.recall("kingfisher", strategy="bm25").hits[0].item.text == "The kingfisher nests by the weir."
    reader.close()


# Ingest a folder with every area on, announcing the start (the store exists by then).
AREA_WRITER = """
import sys
from mnemoscope.engine import Memory
mem = Memory(sys.argv[1])
mem.warm_up()
print("ready", flush=True)
sys.stdin.readline()
mem.ingest(sys.argv[2])
"""

# Recall in a loop (fused, every area) until one refresh interval after the stop file appears,
# following the writers; then
# compare with a memory opened afresh on the final store.
READER = """
import json, os, sys, time
from mnemoscope.engine import Memory
mem = Memory(sys.argv[1])
mem.warm_up()
print("ready", flush=True)
errors, seen, writers_done = [], [], None
while True:
    try:
        mem.recall("the river near the harbour", strategy="fused", top_k=5)
        seen.append(mem.index.n_items)
    except Exception as exc:
        errors.append(repr(exc))
    if writers_done is None and os.path.exists(sys.argv[2]):
        writers_done = time.monotonic()
    if writers_done is not None and time.monotonic() - writers_done > mem.settings.refresh_interval:
        break  # a recall looks at other processes' commits once per refresh interval: writers that finished inside one were not seen yet
mem.refresh()
fresh = Memory(sys.argv[1])
queries = ["river mountain", "violin lantern token3x4", "falcon saffron quartz", "who talked about the comet"]
same = {s: all([h.item.id for h in mem.recall(q, strategy=s).hits] == [h.item.id for h in fresh.recall(q, strategy=s).hits]
               for q in queries) for s in ("bm25", "hybrid", "ppr", "walk", "fused")}
print(json.dumps({"errors": errors, "recalls": len(seen), "followed": seen == sorted(seen) and seen[-1] > seen[0],
                  "items": mem.index.n_items, "facts": len(mem.knowledge.facts()) == len(fresh.knowledge.facts()), "same": same}))
"""


def spawn(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args], cwd=ROOT, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_writers_and_a_reader_lose_nothing_and_the_reader_follows_exactly(tmp_path):
    store = tmp_path / "shared.db"
    Memory(store).close()  # the store exists before three processes open it
    expected = {**make_sources(tmp_path / "a", n_files=12, lines=10), **make_sources(tmp_path / "b", n_files=12, lines=10)}
    stop = tmp_path / "stop"
    reader = spawn(READER, str(store), str(stop))
    writers = [spawn(AREA_WRITER, str(store), str(tmp_path / folder)) for folder in ("a", "b")]
    try:
        for process in (reader, *writers):
            assert process.stdout.readline().strip() == "ready", process.stderr.read()
        for writer in writers:  # both start at once, and queue for the write lock
            writer.stdin.write("go\n")
            writer.stdin.flush()
        for writer in writers:
            writer.wait(timeout=180)
            assert writer.returncode == 0, writer.stderr.read()
        stop.touch()
        report = json.loads(reader.stdout.readline())
    finally:
        for process in (reader, *writers):
            process.kill()
            process.wait()
    assert items_per_source(store) == expected  # nothing lost, nothing doubled
    assert report["errors"] == [] and report["recalls"] >= 20 and report["followed"]
    assert report["items"] == len(expected) * 10 and report["facts"]
    assert report["same"] == dict.fromkeys(("bm25", "hybrid", "ppr", "walk", "fused"), True)  # as if opened afresh


def test_recall_never_waits_for_a_write_lock_another_process_holds(demo_copy):
    from mnemoscope.engine.errors import StoreBusy

    with Memory(demo_copy, lock_timeout=0.3) as mem:  # a recall that wrote would fail after 0.3 s
        mem.warm_up()
        with store_held(demo_copy):
            for strategy in ("fused", "ppr", "walk", "hybrid_walk"):
                rec = mem.recall("when did Maya adopt Pepper", strategy=strategy, mode="max")
                assert rec.hits and rec.token  # the feedback token is issued without writing
            with pytest.raises(StoreBusy, match=r"busy: .*nothing was changed"):  # a write waits, then says so
                mem.delete_item(rec.hits[0].item.id)
        mem.feedback(rec.token, [rec.hits[0].item.id])  # the token recall issued is good once the lock is free
