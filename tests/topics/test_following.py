"""The topic tree of a memory that follows another writer is the tree a fresh open reads, to the
last bit: a walk ranks ties by these weights, so a few ulps apart is a different answer."""

from pathlib import Path

from mnemoscope.engine import Memory

WORDS = "river mountain harbour violin garden lantern meadow comet pepper tulip glacier canyon orchard falcon".split()


def write_sources(folder: Path, first: int, n: int) -> list[Path]:
    folder.mkdir(exist_ok=True)
    paths = []
    for f in range(first, first + n):
        turns = [f"{'Ann' if i % 2 else 'Ben'}: the {WORDS[(f + i) % len(WORDS)]} and the "
                 f"{WORDS[(f * 5 + i * 3) % len(WORDS)]} near token{f}x{i}." for i in range(10)]
        paths.append(folder / f"t{f:03d}.txt")
        paths[-1].write_text("\n".join(turns), encoding="utf-8")
    return paths


def assignments(mem: Memory) -> dict[int, list[tuple[str, float]]]:
    ids = [int(i) for i in mem.index.item_ids[mem.index.alive]]
    assert ids
    return {i: [(t.id, w) for t, w in mem.topics.topic_of(i)] for i in ids}


def test_a_follower_takes_the_leaves_the_writer_stored(tmp_path):
    store = tmp_path / "s.db"
    with Memory(store, topic_rebuild_drift=100.0, topic_leaf_size=4) as writer, Memory(store) as follower:
        for path in write_sources(tmp_path / "a", 0, 6):
            writer.ingest(path)
        assert len(writer.topics.rebuild().summary()) and len(writer.topics.tree()) > 4  # leaves to choose between
        follower.warm_up()
        followed_from = follower.activity.last_id()
        for path in write_sources(tmp_path / "a", 6, 9):  # one at a time there, all at once here
            writer.ingest(path)
        assert follower.refresh()
        assert "topics.rebuilt" not in {e.action for e in follower.activity.recent(50) if e.id > followed_from}  # not reloaded
        with Memory(store) as fresh:
            assert assignments(follower) == assignments(fresh)


def test_a_rebuild_assigns_what_another_writer_committed_while_it_fitted(tmp_path):
    store = tmp_path / "s.db"
    late = write_sources(tmp_path / "late", 50, 2)
    with Memory(store) as builder, Memory(store) as other:
        for path in write_sources(tmp_path / "a", 0, 6):
            builder.ingest(path)

        def meanwhile(_done: int, _total: int, stage: str) -> None:
            if stage == "assigning items":  # the tree is fitted; its transaction has not begun
                for path in late:
                    other.ingest(path)

        builder.topics.rebuild(progress=meanwhile)
        with Memory(store) as fresh:
            ids, _leaves, _weights = fresh.store.topic_assignments()
            assert set(ids.tolist()) == set(fresh.index.item_ids[fresh.index.alive].tolist())  # every item has its stored leaf
            late_sources = [s.id for s in fresh.sources() if s.name.endswith(("t050.txt", "t051.txt"))]
            assert len(late_sources) == 2
            assert fresh.store.topic_transitions(late_sources)  # and the late sources their transitions
            assert assignments(builder) == assignments(fresh)
