"""An import is all or nothing: killed, interrupted or refused midway, the store and the memory
that reads it are exactly what they were before."""

import io
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from mnemoscope.app.cli import main
from mnemoscope.engine import Memory
from mnemoscope.engine.transfer import write_records
from tests.support.openai_server import hashed_vector
from tests.support.processes import dies_on_third_insert
from tests.support.stores import shared_folder

ROOT = Path(__file__).resolve().parents[2]

WORDS = ("river mountain harbour violin garden lantern meadow comet pepper tulip glacier canyon orchard falcon "
         "saffron quartz maple ember willow coral").split()

# Import an export, dying (SIGKILL) as the third source's items are written.
KILLED_IMPORT = dies_on_third_insert('', 'mem.import_(sys.argv[2])')


def write_chats(folder: Path, n: int, tag: str) -> Path:
    """``n`` small transcripts whose words differ per file (``tag`` keeps two folders apart)."""
    folder.mkdir()
    for f in range(n):
        turns = [f"{'Ann' if i % 2 else 'Ben'}: {tag} talk {f} about the {WORDS[(f + i) % len(WORDS)]} "
                 f"and the {WORDS[(3 * f + 2 * i) % len(WORDS)]} by {tag}{f}x{i}." for i in range(8)]
        (folder / f"{tag}{f}.txt").write_text("\n".join(turns), encoding="utf-8")
    return folder


def _export_and_target(folder: Path) -> None:
    """An export of five sources, with the knowledge snapshot and every area's lines (all.jsonl);
    and a store that holds two sources of its own and an older version of the first exported one
    (target.db; the import replaces it: what the rollback must bring back includes a deletion)."""
    with Memory(folder / "origin.db") as mem:
        mem.ingest(write_chats(folder / "exported", 5, "ex"))
        mem.export(folder / "all.jsonl")
    older = folder / "exported" / "ex0.txt"
    older.write_text("Ann: the older version of ex0 spoke of a lighthouse.\nBen: a lighthouse by the river.", encoding="utf-8")
    with Memory(folder / "target.db") as mem:
        mem.ingest([write_chats(folder / "own", 2, "own"), older])


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The export and the target, built once per run; each test copies what it uses."""
    return shared_folder(tmp_path_factory, "import-atomic", _export_and_target)


@pytest.fixture
def export_file(built: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(built / "all.jsonl", tmp_path / "all.jsonl"))


@pytest.fixture
def target(built: Path, tmp_path: Path) -> Path:
    return Path(shutil.copy(built / "target.db", tmp_path / "target.db"))


def state(path: Path) -> dict:
    """What a person sees of a store: its counts and the top hits of a few queries."""
    with Memory(path) as mem:
        return {"counts": mem.counts(), "sources": sorted(s.name for s in mem.sources()),
                "hits": {q: [h.item.key for h in mem.recall(q, strategy="bm25").hits] for q in ("river", "lighthouse", "ex2", "coral")}}


def test_an_import_killed_midway_leaves_exactly_the_sources_it_had(export_file, target, checksum):
    before, rows_before = state(target), checksum(target)
    done = subprocess.run([sys.executable, "-c", KILLED_IMPORT, str(target), str(export_file)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert checksum(target) == rows_before
    assert state(target) == before
    with Memory(target) as mem:
        assert mem.store.integrity_ok()
        report = mem.import_(export_file)  # the same import, run again to the end, stores all five
    assert [s.status for s in report.sources] == ["replaced"] + ["added"] * 4
    assert len(state(target)["sources"]) == 7


def test_an_export_whose_last_source_is_corrupt_is_refused_whole_by_the_cli(export_file, target, checksum):
    lines = export_file.read_text(encoding="utf-8").splitlines()
    last = max(n for n, line in enumerate(lines) if json.loads(line)["type"] == "item")
    record = json.loads(lines[last])
    lines[last] = json.dumps({**record, "text": 5})
    write_records(export_file, [json.loads(line) for line in lines[:-1]])  # sealed again: the record check speaks
    before, rows_before = state(target), checksum(target)
    err = io.StringIO()
    with redirect_stderr(err):
        code = main(["--store", str(target), "import", str(export_file)], out=io.StringIO())
    assert code == 2
    assert err.getvalue().splitlines() == [
        f"mnemoscope: error: {export_file}:{last + 1}: not a Mnemoscope export record "
        "(item field 'text' must be str, not 5)"]
    assert checksum(target) == rows_before and state(target) == before


@pytest.mark.parametrize("line, message", [
    ('{"type": "item", "id": 9, "source_id": 1, "text": "x"}', "item 9 belongs to source 1, which no line before it defines"),
    ('{"type": "source", "id": 1, "name": "a", "kind": "note", "colour": "red"}', "a source has no field 'colour'"),
    ('{"type": "source", "id": 1, "kind": "note"}', "a source needs the field 'name'"),
    ('[1, 2]', 'expected an object with a string field "type"'),
    ('{"type": "source", "id": 1, "name": "a", "kind": "note"}\n{"type": "item", "id": 2, "source_id": 1, "text": "x", '
     '"key": "k"}\n{"type": "item", "id": 3, "source_id": 1, "text": "y", "key": "k"}', "two items of source 1 have the key 'k'"),
    ('{"type": "source", "id": 1, "name": "a", "kind": "note"}\n{"type": "item", "id": 2, "source_id": 1, "text": "x", '
     '"speaker": ["Ann"]}', "item field 'speaker' must be str or null, not ['Ann']"),
])
def test_every_core_record_is_checked_before_the_first_write(target, tmp_path, checksum, line, message):
    bad = tmp_path / "bad.jsonl"
    write_records(bad, [json.loads(part) for part in line.split("\n")])
    rows_before = checksum(target)
    err = io.StringIO()
    with redirect_stderr(err):
        assert main(["--store", str(target), "import", str(bad)], out=io.StringIO()) == 2
    assert err.getvalue().strip().endswith(f"{bad}:{line.count(chr(10)) + 1}: not a Mnemoscope export record ({message})")
    assert checksum(target) == rows_before


def in_memory(mem: Memory) -> dict:
    """What an open Memory holds in memory: index, vocabulary, graph and what a recall returns."""
    graph = mem.knowledge.graph
    return {"items": mem.index.n_items, "terms": len(mem.index.vocab), "entities": len(graph.entity_ids),
            "edges": {kind: len(edges) for kind, edges in graph.edges.items()},
            "hits": [(h.item.id, round(h.score, 6)) for h in mem.recall("ex3 river lighthouse").hits]}


def test_an_interrupted_import_leaves_nothing_of_itself_in_memory(export_file, target, checksum, monkeypatch):
    """Ctrl-C as the fourth source is written: the rollback reaches the open Memory too."""
    rows_before = checksum(target)
    with Memory(target) as mem:
        mem.warm_up()
        before = in_memory(mem)
        insert_items, calls = mem.store.insert_items, []

        def interrupt_on_fourth(*args, **kwargs):
            calls.append(1)
            if len(calls) == 4:
                raise KeyboardInterrupt
            return insert_items(*args, **kwargs)

        monkeypatch.setattr(mem.store, "insert_items", interrupt_on_fourth)
        with pytest.raises(KeyboardInterrupt):
            mem.import_(export_file)
        monkeypatch.undo()
        assert in_memory(mem) == before
        assert mem.import_(export_file).items == 40  # and the same Memory then imports it whole
        assert not mem.recall("lighthouse", strategy="bm25").hits  # the older ex0 replaced
    assert checksum(target) != rows_before


def test_an_import_calls_the_embedding_endpoint_with_no_write_lock_held(export_file, target, openai_server):
    """Another process could still write while the texts are embedded: only the writes are one transaction."""
    writable = []

    def embed(texts):
        with sqlite3.connect(target, timeout=0) as other:
            try:
                other.execute("BEGIN IMMEDIATE")
                other.execute("ROLLBACK")
                writable.append(True)
            except sqlite3.OperationalError:  # database is locked
                writable.append(False)
        return [hashed_vector(t) for t in texts]

    openai_server.on_embeddings = embed
    with Memory(target, embedder="openai", embed_base_url=openai_server.base_url, embed_model="e") as mem:
        assert mem.import_(export_file).items == 40
        assert mem.recall("ex3 river", strategy="dense").hits
    assert writable and all(writable)
