"""The index's arrays and the areas' state saved beside the store (engine/index_file.py,
engine/array_file.py): a store opens from them and answers exactly as one rebuilt from its rows; a
damaged, foreign, stale or public file is never trusted (the index or the area is built from the
rows, and the file written again); what another process commits after the file was saved is taken
in from the activity log."""

import json
import math
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.array_file import MAGIC, STAMP_SUFFIX, Unusable, map_arrays, read_arrays, write_arrays
from tests.support.stores import DEMO_DIR

ROOT = Path(__file__).resolve().parents[2]
QUERIES = ["who adopted a dog", "how hot is the oven for the loaf", "what does attention compute",
           "which hut did they sleep in"]
STRATEGIES = ("bm25", "dense", "hybrid", "ppr", "walk", "fused")
SAVE_ALWAYS = {"save_index_above": 0}


def sidecar(store: Path, part: str = "index") -> Path:
    return store.with_name(f"{store.name}-{part}")


@dataclass(frozen=True, eq=False)
class Ranked:
    """One recall's ranked ids and scores. Two are equal when the ids are, in order, and each score
    is within 2e-5: the PageRank of a store whose deleted items keep their slots sums in another
    order than one rebuilt without them (rounding both to 5 decimals flipped a score lying on the
    boundary)."""

    ids: tuple[int, ...]
    scores: tuple[float, ...]

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Ranked) and self.ids == other.ids
                and all(math.isclose(a, b, abs_tol=2e-5) for a, b in zip(self.scores, other.scores)))


def answers(store: Path, **settings: int) -> tuple[bool, dict[tuple[str, str], Ranked]]:
    """Whether the store opened from its saved arrays, and every strategy's ranked ids and scores."""
    with Memory(store, **settings) as mem:
        return mem.index_from_file, ranked_answers(mem)


def ranked_answers(mem: Memory) -> dict[tuple[str, str], Ranked]:
    hits = {(s, q): mem.recall(q, strategy=s).hits for s in STRATEGIES for q in QUERIES}
    return {key: Ranked(tuple(h.item.id for h in found), tuple(h.score for h in found)) for key, found in hits.items()}


def area_answers(store: Path, **settings: int) -> tuple[set[str], dict[tuple[str, str], Ranked]]:
    """The areas whose state came from the saved file, and every strategy's answers."""
    with Memory(store, **settings) as mem:
        ranked = ranked_answers(mem)
        return set(mem.areas_from_file), ranked


def rebuilt(store: Path, tmp_path: Path) -> dict:
    """The answers of the same store opened from its rows alone (a copy without the file)."""
    copy = tmp_path / "rebuilt" / store.name
    copy.parent.mkdir(exist_ok=True)
    shutil.copy(store, copy)
    from_file, ranked = answers(copy, save_index_above=10**9)
    assert not from_file and not sidecar(copy).exists()
    return ranked


@pytest.fixture(scope="module")
def expected(demo_store: Path) -> dict:
    """The demo store's answers, its index built from its rows."""
    from_file, ranked = answers(demo_store, save_index_above=10**9)
    assert not from_file and any(r.ids for r in ranked.values())
    return ranked


@pytest.fixture
def saved(demo_copy: Path) -> Path:
    """The demo store (every area) after an open that saved its index beside it."""
    Memory(demo_copy, **SAVE_ALWAYS).close()
    return demo_copy


def test_a_store_opens_from_its_saved_arrays_and_answers_as_if_rebuilt(saved: Path, expected: dict):
    assert sidecar(saved).stat().st_mode & 0o777 == 0o600
    assert answers(saved, **SAVE_ALWAYS) == (True, expected)


def test_the_word_space_is_saved_and_taken_back_as_placed(saved: Path, tmp_path: Path):
    copy = tmp_path / "rebuilt.db"
    shutil.copy(saved, copy)
    with Memory(copy, save_index_above=10**9) as mem:
        assert not mem.index_from_file
        live = np.flatnonzero(mem.index.alive)
        placed = mem.index.word_vectors.rows(live)
    file = read_arrays(sidecar(saved))
    assert np.array_equal(file.arrays["words.rows"][live], placed)  # placed by the store's model, then saved
    marked = {**file.arrays, "words.rows": file.arrays["words.rows"] * np.float32(0.5)}
    write_arrays(sidecar(saved), file.meta, marked)  # so that rows taken from the file show
    with Memory(saved, **SAVE_ALWAYS) as mem:
        assert mem.index_from_file
        assert np.array_equal(mem.index.word_vectors.rows(live), placed * np.float32(0.5))


def test_below_the_threshold_no_file_is_written(demo_copy: Path):
    with Memory(demo_copy) as mem:
        assert mem.index.n_items < mem.settings.save_index_above
    assert not sidecar(demo_copy).exists()


def _flip_bytes_in_the_arrays(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) * 2 // 3
    data[middle:middle + 256] = bytes(b ^ 0xFF for b in data[middle:middle + 256])  # wider than any gap between arrays
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _garbage(path: Path) -> None:
    path.write_bytes(b"not an index" * 100)


def _readable_by_others(path: Path) -> None:
    path.chmod(0o644)


@pytest.mark.parametrize("damage", [_flip_bytes_in_the_arrays, _truncate, _garbage, _readable_by_others])
def test_a_damaged_or_public_file_is_not_trusted_and_is_written_again(saved: Path, expected: dict, damage):
    damage(sidecar(saved))
    assert answers(saved, **SAVE_ALWAYS) == (False, expected)
    assert sidecar(saved).stat().st_mode & 0o777 == 0o600
    with Memory(saved, **SAVE_ALWAYS) as mem:  # the rebuild saved a good file
        assert mem.index_from_file


def test_another_stores_file_is_not_trusted(saved: Path, tmp_path: Path):
    other = tmp_path / "other.db"
    with Memory(other, extensions=False, **SAVE_ALWAYS) as mem:
        mem.ingest([DEMO_DIR / "sourdough-baking.md"])
    shutil.copy(sidecar(saved), sidecar(other))
    with Memory(other, extensions=False, **SAVE_ALWAYS) as mem:
        assert not mem.index_from_file
        assert mem.index.n_items == mem.counts().items


WRITER = """
import sys
from mnemoscope.engine import Memory
with Memory(sys.argv[1]) as mem:
    if sys.argv[2] == "clear":
        mem.clear()
    else:
        if sys.argv[3:] != ["--keep"]:
            mem.delete_source(mem.sources()[0].id)
        mem.add_note(sys.argv[2], name="written elsewhere")
"""


def other_process(store: Path, what: str, *flags: str) -> None:
    subprocess.run([sys.executable, "-c", WRITER, str(store), what, *flags], cwd=ROOT, check=True, timeout=120)


def test_what_another_process_commits_after_the_save_is_taken_in(saved: Path, tmp_path: Path):
    other_process(saved, "Zebulon the quokka keeps a diary of every sunrise")
    from_file, ranked = answers(saved, save_index_above=10**9)  # (no save: the file stays behind)
    assert from_file
    assert ranked == rebuilt(saved, tmp_path)
    with Memory(saved) as mem:
        assert mem.recall("Zebulon quokka sunrise", strategy="bm25").hits[0].item.text.startswith("Zebulon")


def test_a_clear_by_another_process_makes_the_file_stale(saved: Path):
    other_process(saved, "clear")
    with Memory(saved, **SAVE_ALWAYS) as mem:
        assert not mem.index_from_file
        assert mem.index.n_items == mem.counts().items == 0


def test_an_array_file_holds_numbers_only_and_replaces_itself_whole(tmp_path: Path):
    path = tmp_path / "arrays"
    arrays = {"ids": np.arange(5, dtype=np.int64), "codes": np.ones((3, 4), dtype=np.int8), "none": np.zeros(0, bool)}
    write_arrays(path, {"log_id": 7}, arrays)
    read = read_arrays(path)
    assert read.meta == {"log_id": 7} and set(read.arrays) == set(arrays)
    assert all(np.array_equal(read.arrays[k], v) and read.arrays[k].dtype == v.dtype for k, v in arrays.items())
    read.arrays["ids"][0] = 99  # copy-on-write: the file is untouched
    assert read_arrays(path).arrays["ids"][0] == 0
    with pytest.raises(TypeError):
        write_arrays(path, {}, {"objects": np.array([{"a": 1}], dtype=object)})
    assert read_arrays(path).meta == {"log_id": 7}  # the failed write left the old file whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arrays", "arrays" + STAMP_SUFFIX]  # and its stamp
    path.unlink()
    with pytest.raises(Unusable):
        read_arrays(path)


def _resident_file_kb() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("RssFile:"))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_the_checked_pages_of_an_array_file_do_not_stay_in_memory(tmp_path: Path):
    """The checksum reads every page; they leave the process's memory after it, and the arrays
    still read the file's numbers (and take writes, copy-on-write) afterwards."""
    path, big = tmp_path / "arrays", np.arange(8 << 20, dtype=np.int64)  # 64 MiB
    write_arrays(path, {}, {"big": big, "small": np.arange(3, dtype=np.int32)})
    path.with_name(path.name + STAMP_SUFFIX).unlink()  # (a stamped file is not read whole: this one is)
    before = _resident_file_kb()
    read = read_arrays(path)
    assert _resident_file_kb() - before < 16 << 10  # under 16 MiB of the 64 resident
    assert map_arrays(path).checked_before  # (it was read whole, and stamped)
    assert np.array_equal(read.arrays["big"], big) and read.arrays["small"].tolist() == [0, 1, 2]
    read.arrays["big"][1] = -1
    assert read.arrays["big"][1] == -1 and read_arrays(path).arrays["big"][1] == 1


# -- the areas' state ---------------------------------------------------------------------------

SAVED_AREAS = {"knowledge", "topics", "ranker"}  # the areas whose load reads every item's rows


@pytest.fixture
def areas_saved(demo_copy: Path) -> Path:
    """The demo store after a process loaded every area from its rows, which saved their state."""
    with Memory(demo_copy, **SAVE_ALWAYS) as mem:
        mem.recall("who adopted a dog")
        assert not mem.areas_from_file
    return demo_copy


def test_the_areas_open_from_their_saved_state_and_answer_as_if_read_from_the_rows(areas_saved: Path, expected: dict):
    assert sidecar(areas_saved, "areas").stat().st_mode & 0o777 == 0o600
    assert area_answers(areas_saved, **SAVE_ALWAYS) == (SAVED_AREAS, expected)


@pytest.mark.parametrize("flags, from_file", [(("--keep",), SAVED_AREAS), ((), {"topics"})],
                         ids=["an addition", "a deletion and an addition"])
def test_what_another_process_commits_after_the_areas_were_saved_is_taken_in(areas_saved: Path, tmp_path: Path, flags,
                                                                            from_file: set[str]):
    """(A deletion's line tells the knowledge area to read the store again.)"""
    other_process(areas_saved, "Zebulon the quokka keeps a diary of every sunrise", *flags)
    assert area_answers(areas_saved, save_index_above=10**9) == (from_file, rebuilt(areas_saved, tmp_path))


def test_a_damaged_areas_file_is_not_trusted_and_is_written_again(areas_saved: Path, expected: dict):
    _flip_bytes_in_the_arrays(sidecar(areas_saved, "areas"))
    assert area_answers(areas_saved, **SAVE_ALWAYS) == (set(), expected)
    assert area_answers(areas_saved, **SAVE_ALWAYS)[0] == SAVED_AREAS


def test_areas_saved_after_a_deferred_ingest_answer_as_if_read_from_the_rows(tmp_path: Path):
    store = tmp_path / "deferred.db"
    with Memory(store, **SAVE_ALWAYS) as mem:
        mem.ingest([DEMO_DIR], defer=True)  # the areas read the items a source at a time, then save
    assert sidecar(store, "areas").exists()
    assert area_answers(store, **SAVE_ALWAYS) == (SAVED_AREAS, rebuilt(store, tmp_path))


def test_the_areas_restored_from_one_file_read_what_came_after_it_once(areas_saved: Path):
    """Every area restored from the file is told the same commits since it was saved: the log and
    their items are read once for all of them, not once per area."""
    other_process(areas_saved, "Zebulon the quokka keeps a diary of every sunrise", "--keep")
    with Memory(areas_saved, save_index_above=10**9) as mem:
        statements: list[str] = []
        with mem.store.reading() as snapshot:  # the restore's own reading() joins this snapshot
            snapshot.set_trace_callback(statements.append)
            mem.areas
            snapshot.set_trace_callback(None)
        assert set(mem.areas_from_file) == SAVED_AREAS
        assert mem.recall("Zebulon quokka sunrise", strategy="fused").hits[0].item.text.startswith("Zebulon")
    assert sum("FROM activity WHERE id >" in s for s in statements) == 1


def test_areas_restored_from_their_saved_state_do_not_import_scipy_sparse(areas_saved: Path):
    """A process that restores the areas and reads no ranking (``stats``, a status line) does not
    pay for importing scipy.sparse: the intent classifier's fit is read from its cache (this
    process wrote it) and the topic space binds without a sparse matrix."""
    script = ("import json, sys\n"
              "from mnemoscope.engine import Memory\n"
              "mem = Memory(sys.argv[1], save_index_above=0)\n"
              "mem.areas\n"
              "print(json.dumps({'restored': sorted(mem.areas_from_file), 'sparse': 'scipy.sparse' in sys.modules}))\n")
    out = subprocess.run([sys.executable, "-c", script, str(areas_saved)], cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=120)
    assert json.loads(out.stdout) == {"restored": sorted(SAVED_AREAS), "sparse": False}


def test_the_first_recall_that_reads_the_areas_from_their_rows_does_not_write_their_file(demo_copy: Path, monkeypatch):
    """Saving the areas' state is the next process's gain: it is written aside, not by the recall
    that needed them (and closing the memory waits for it)."""
    import threading

    from mnemoscope.engine import index_file

    writers: list[threading.Thread] = []
    write = index_file.write_saved

    def recording(store, part, *args):
        if part == "areas":
            writers.append(threading.current_thread())
        return write(store, part, *args)

    monkeypatch.setattr(index_file, "write_saved", recording)
    with Memory(demo_copy, **SAVE_ALWAYS) as mem:
        assert mem.recall("who adopted a dog").hits and not mem.areas_from_file
    assert writers and threading.main_thread() not in writers
    assert area_answers(demo_copy, **SAVE_ALWAYS)[0] == SAVED_AREAS


def test_an_areas_file_that_cannot_be_written_aside_costs_a_warning_not_an_error(demo_copy: Path, monkeypatch, caplog):
    from mnemoscope.engine import index_file
    from mnemoscope.engine.errors import StoreBusy

    write = index_file.write_saved

    def busy(store, part, *args):
        if part == "areas":
            raise StoreBusy(f"{store.path} is busy")
        return write(store, part, *args)

    monkeypatch.setattr(index_file, "write_saved", busy)
    with caplog.at_level("WARNING"), Memory(demo_copy, **SAVE_ALWAYS) as mem:
        assert mem.recall("who adopted a dog").hits
    assert "was not saved" in caplog.text and not sidecar(demo_copy, "areas").exists()


def _read_from_disk() -> int:
    with open("/proc/self/io") as io:
        return next(int(line.split()[1]) for line in io if line.startswith("read_bytes"))


@pytest.mark.skipif(not Path("/proc/self/io").exists() or not hasattr(os, "posix_fadvise"), reason="Linux's /proc, fadvise")
def test_the_saved_files_are_read_ahead_in_one_go(areas_saved: Path):
    """What the warm-up and the first recalls read of the saved files is asked of the disk at once
    (index_file.read_ahead): reading them afterwards reads nothing more from the disk."""
    from mnemoscope.engine import index_file

    with Memory(areas_saved, **SAVE_ALWAYS) as mem:
        paths = [index_file.path_of(mem.store, part) for part in ("areas", "index")]
        assert all(path is not None and path.stat().st_size > 0 for path in paths)

        def read_after(ahead: bool) -> int:
            for path in paths:
                with open(path, "rb") as f:
                    os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # as after hours unread
            if ahead:
                thread = index_file.read_ahead(mem.store, ["areas", "index"])
                assert thread is not None
                thread.join(60)
            before = _read_from_disk()
            for path in paths:
                path.read_bytes()
            return _read_from_disk() - before

        size = sum(path.stat().st_size for path in paths)
        if read_after(False) < size // 2:
            pytest.skip("this file system keeps the files in memory (tmpfs)")
        assert read_after(True) < size // 10



def test_a_named_pipe_in_place_of_a_saved_file_is_not_waited_on_by_the_read_ahead(areas_saved: Path):
    """(Another user may place one where a store in a shared folder keeps a file: the open
    refuses it, and the read-ahead passes it by instead of waiting for a writer.)"""
    from mnemoscope.engine import index_file

    areas = sidecar(areas_saved, "areas")
    areas.unlink()
    os.mkfifo(areas, 0o600)
    with Memory(areas_saved, save_index_above=10**9) as mem:
        thread = index_file.read_ahead(mem.store, ["areas", "index"])
        assert thread is not None
        thread.join(10)
        assert not thread.is_alive()

def test_the_warm_up_asks_for_the_saved_files_it_and_the_first_recalls_read(areas_saved: Path, monkeypatch):
    from mnemoscope.engine import index_file

    asked: list[list[str]] = []
    monkeypatch.setattr(index_file, "read_ahead", lambda store, parts: asked.append(list(parts)))
    with Memory(areas_saved, **SAVE_ALWAYS) as mem:
        assert mem.index_from_file
        mem.warm_up()
        assert set(mem.areas_from_file) == SAVED_AREAS
        mem.warm_up()  # again (after following another process): the areas are loaded
    assert asked == [["areas", "index"], ["index"]]


# -- what a saved file is derived from ----------------------------------------------------------


@pytest.fixture
def migrated(monkeypatch) -> Callable[[str], None]:
    """``migrated(name)``: every store opened afterwards has one more migration, ``name`` (its
    part of the store before the dash), which adds a table of its own."""
    from mnemoscope.engine import store

    def add(name: str) -> None:
        table = name.replace("-", "_")
        monkeypatch.setattr(store, "MIGRATIONS", [*store.MIGRATIONS, (name, f"CREATE TABLE {table} (id INTEGER PRIMARY KEY);")])

    return add


def test_a_migration_of_another_part_of_the_store_keeps_the_saved_index_and_the_other_areas(
        areas_saved: Path, expected: dict, migrated):
    migrated("knowledge-test")
    with Memory(areas_saved, **SAVE_ALWAYS) as mem:
        assert mem.index_from_file
        assert "knowledge-test" in mem.store.applied_migrations()
        assert ranked_answers(mem) == expected
        assert set(mem.areas_from_file) == SAVED_AREAS - {"knowledge"}  # its own part moved: read from its rows
    assert area_answers(areas_saved, **SAVE_ALWAYS) == (SAVED_AREAS, expected)  # and saved again


def test_a_migration_of_the_items_rebuilds_the_saved_index_and_every_area(areas_saved: Path, expected: dict, migrated):
    migrated("records-test")
    with Memory(areas_saved, **SAVE_ALWAYS) as mem:
        assert not mem.index_from_file
        assert ranked_answers(mem) == expected
        assert not mem.areas_from_file
    assert area_answers(areas_saved, **SAVE_ALWAYS) == (SAVED_AREAS, expected)


def test_a_knowledge_migration_that_queues_items_is_read_into_the_saved_indexs_pending_flags(
        saved: Path, tmp_path: Path, monkeypatch):
    """The index's pending flags (the items the deferred areas have not read) come from the
    knowledge part's queue, not the items': a knowledge migration keeps the saved index, but its
    flags are read again, as a rebuild reads them."""
    from mnemoscope.engine import store

    monkeypatch.setattr(store, "MIGRATIONS", [*store.MIGRATIONS, (
        "knowledge-test", "INSERT OR REPLACE INTO extraction_queue (item_id, status, updated_at)"
                          " SELECT id, 'deferred', 0 FROM items WHERE id % 3 = 0;")])
    copy = tmp_path / "rebuilt" / saved.name
    copy.parent.mkdir()
    shutil.copy(saved, copy)
    with Memory(copy, save_index_above=10**9) as mem:
        assert not mem.index_from_file
        queued = set(mem.index.item_ids[mem.index.pending & mem.index.alive].tolist())
    assert queued
    with Memory(saved, **SAVE_ALWAYS) as mem:
        assert mem.index_from_file
        assert set(mem.index.item_ids[mem.index.pending & mem.index.alive].tolist()) == queued


def test_a_saved_index_of_another_layout_is_rebuilt(saved: Path, expected: dict, monkeypatch):
    from mnemoscope.engine import index_file

    monkeypatch.setattr(index_file, "INDEX_FORMAT", index_file.INDEX_FORMAT + 1)
    assert answers(saved, **SAVE_ALWAYS) == (False, expected)
    assert read_arrays(sidecar(saved)).meta["format"] == index_file.INDEX_FORMAT  # saved again in the new layout
    assert answers(saved, **SAVE_ALWAYS)[0]


def test_an_areas_state_of_another_layout_is_read_from_the_store(areas_saved: Path, expected: dict, monkeypatch):
    from mnemoscope.engine.topics import TopicsArea

    monkeypatch.setattr(TopicsArea, "saved_format", TopicsArea.saved_format + 1)
    assert area_answers(areas_saved, **SAVE_ALWAYS) == (SAVED_AREAS - {"topics"}, expected)
    assert area_answers(areas_saved, **SAVE_ALWAYS)[0] == SAVED_AREAS


def refused_by_readers_before_layouts(path: Path) -> bool:
    """Whether a reader from before the saved files' stamps held layouts (before 14b8ab6: it reads
    no layout) refuses the file: it refuses an array file whose header's format is not 1."""
    raw = path.read_bytes()
    at = len(MAGIC) + 8
    return json.loads(raw[at:at + int.from_bytes(raw[len(MAGIC):at], "little")])["format"] != 1


def raise_the_vectors_layout(monkeypatch) -> None:
    from mnemoscope.engine import vectors

    monkeypatch.setattr(vectors, "LAYOUT", vectors.LAYOUT + 1)


def raise_the_index_layout(monkeypatch) -> None:
    from mnemoscope.engine import index_file

    monkeypatch.setattr(index_file, "INDEX_FORMAT", index_file.INDEX_FORMAT + 1)


@pytest.mark.parametrize("bump", [raise_the_index_layout, raise_the_vectors_layout])
def test_the_next_index_layout_is_refused_by_older_readers_and_rebuilt_by_this_one(saved: Path, expected: dict, bump,
                                                                                 monkeypatch):
    """The next bump of a layout, simulated: the file saved in it is one that readers from before
    layouts were stamped refuse (they would misread it), and that this code, one layout behind,
    rebuilds rather than reads; a file of layout 1 stays readable to those readers."""
    assert not refused_by_readers_before_layouts(sidecar(saved))
    bump(monkeypatch)
    assert answers(saved, **SAVE_ALWAYS) == (False, expected)  # (the layout-1 file: rebuilt)
    assert refused_by_readers_before_layouts(sidecar(saved))
    assert answers(saved, **SAVE_ALWAYS)[0]
    monkeypatch.undo()
    assert answers(saved, **SAVE_ALWAYS) == (False, expected)
    assert not refused_by_readers_before_layouts(sidecar(saved))


def test_the_next_layout_of_an_areas_state_is_refused_by_older_readers_and_read_from_the_store_by_this_one(
        areas_saved: Path, expected: dict, monkeypatch):
    from mnemoscope.engine.topics import TopicsArea

    monkeypatch.setattr(TopicsArea, "saved_format", TopicsArea.saved_format + 1)
    assert area_answers(areas_saved, **SAVE_ALWAYS) == (SAVED_AREAS - {"topics"}, expected)
    assert refused_by_readers_before_layouts(sidecar(areas_saved, "areas"))
    monkeypatch.undo()
    assert area_answers(areas_saved, **SAVE_ALWAYS) == (SAVED_AREAS - {"topics"}, expected)
    # fenced as long as an area's own layout is past 1 (the ranker's is 2: its slots' ``request``)
    assert refused_by_readers_before_layouts(sidecar(areas_saved, "areas")) == any_area_layout_past_1()


def any_area_layout_past_1() -> bool:
    from mnemoscope.engine.knowledge.service import KnowledgeArea
    from mnemoscope.engine.rank.service import RankerArea
    from mnemoscope.engine.topics import TopicsArea

    return max(area.saved_format for area in (KnowledgeArea, TopicsArea, RankerArea)) > 1


def test_the_vectors_layout_is_stamped_on_the_areas_state_too(areas_saved: Path, expected: dict, monkeypatch):
    """The topics' state holds item vectors: a change of the vectors' layout reads it from the
    store again, as it rebuilds the index."""
    raise_the_vectors_layout(monkeypatch)
    assert area_answers(areas_saved, **SAVE_ALWAYS) == (set(), expected)
    assert refused_by_readers_before_layouts(sidecar(areas_saved, "areas"))


def test_every_migration_is_named_after_the_part_of_the_store_it_changes():
    """The saved files' stamps read what a migration changed from its name's part (records-…,
    knowledge-…): a migration in the knowledge module named otherwise would keep a knowledge
    state saved before it."""
    from mnemoscope.engine import store
    from mnemoscope.engine.store import activity, counts, knowledge, ranker, records, topics

    parts = {module.__name__.rsplit(".", 1)[1]: [name for name, _ in module.MIGRATIONS]
             for module in (records, knowledge, topics, ranker, activity, counts)}
    for part, names in parts.items():
        assert names and all(name.rsplit("-", 1)[0] == part for name in names), part
    assert sorted(name for name, _ in store.MIGRATIONS) == sorted(name for names in parts.values() for name in names)
