"""A catch-up reads a long source in pieces, each its own transaction, so that its memory and what
a crash loses are bounded by the piece, not by the source (a year of one conversation). The store
it leaves is the one a single pass leaves: the same entities, mentions, facts, episodes, events,
topic assignments and moves, and the same fact graph and topic move counts in memory, in this
process and in another that follows it piece by piece. Conflicts and decisions are the same too, numbered in the
order the pieces found them."""

import json
import re
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory
from tests.support.stores import DEMO_DIR, shared_store

CONVERSATION = DEMO_DIR / "conversation.json"  # 206 turns in 8 sessions, read after the guides' topic tree
NUMBERED = {"conflicts": "id", "decisions": "id"}  # rows numbered as found: compared without their ids
NOT_COMPARED = {"activity", "schema_migrations", "kv", "extraction_queue"}  # a log of the writes, and the emptied queue
WEIGHED = {"topic_items": "weight"}  # P(leaf | item): a product of a piece's rows, equal to float32 rounding


# A name of three words met in the first episode, then written in lower case: one read of the
# whole source does not know it yet where it comes again (the gazetteer is the store's as the
# source began), so neither may a later piece.
CLUB = [("Ana", "I joined the Riverside Climbing Club last week."), ("Ben", "Nice, how is it going?"),
        ("Ana", "Hard, my arms are sore."), ("Ben", "Did you try the big wall?"), ("Ana", "Not yet, next month."),
        ("Ben", "I will come along then."), ("Ana", "Bring chalk and shoes."), ("Ben", "I have both."),
        ("Ana", "Great, see you there."), ("Ben", "What time on Thursday?"),
        ("Ana", "the riverside climbing club opens at six."), ("Ben", "Six works for me.")]


def _queued(path: Path) -> None:
    club = path.parent / "club.jsonl"
    club.write_text("".join(json.dumps({"speaker": who, "text": said}) + "\n" for who, said in CLUB), encoding="utf-8")
    with Memory(path) as mem:
        mem.ingest(sorted(DEMO_DIR.glob("*.md")))
        mem.ingest([CONVERSATION, club], defer=True, catch_up=False)


@pytest.fixture(scope="module")
def queued(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the demo's guides read by every area and its conversation waiting in the queue."""
    return shared_store(tmp_path_factory, "conversation-queued", _queued)


def rows(path: Path) -> dict[str, list[tuple[str, float]]]:
    """Every table's rows but the write log's, without the times they were written at: each row
    as text, with its weight apart where it has one."""
    conn = sqlite3.connect(path)
    out = {}
    try:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"):
            if table in NOT_COMPARED:
                continue
            cursor = conn.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            kept = [n for n, name in enumerate(names) if not name.endswith("_at") and name != "at"
                    and name not in (NUMBERED.get(table), WEIGHED.get(table))]
            weighed = names.index(WEIGHED[table]) if table in WEIGHED else None
            out[table] = sorted((re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "T", repr([r[n] for n in kept])),
                                 r[weighed] if weighed is not None else 0.0) for r in cursor)
    finally:
        conn.close()
    return out


def differing(expected: dict[str, list[tuple[str, float]]], got: dict[str, list[tuple[str, float]]]) -> list[str]:
    """The tables whose rows differ (weights by more than float32 rounding)."""
    return [t for t, want in expected.items() if [r for r, _ in got[t]] != [r for r, _ in want]
            or not np.allclose([w for _, w in got[t]], [w for _, w in want], rtol=1e-5, atol=1e-7)]


def held(mem: Memory) -> dict:
    """What a memory's areas hold: each fact-graph edge type's edges (an episode's cliques, the
    links from one turn to the next …) as a multiset, and the topics' move counts."""
    arrays, _phrases = mem.knowledge.graph.arrays()
    kinds = {name.rsplit(".", 1)[0] for name in arrays if name.endswith(".a")}
    edges = {kind: sorted(zip(np.minimum(arrays[f"{kind}.a"], arrays[f"{kind}.b"]).tolist(),
                              np.maximum(arrays[f"{kind}.a"], arrays[f"{kind}.b"]).tolist(), arrays[f"{kind}.w"].tolist()))
             for kind in kinds}
    moves = mem.topics.state.markov.arrays()
    return {"edges": edges, "moves": (moves["keys"].tolist(), moves["weights"].tolist())}


def caught_up(queued: Path, folder: Path, piece_items: int, **settings) -> tuple[dict, dict, dict]:
    """(rows, what the memory holds, what a follower holds) of a copy of ``queued`` caught up in
    pieces of at most ``piece_items`` items; the follower, another memory on the store, takes
    in each piece as it is committed."""
    folder.mkdir(exist_ok=True)
    path = folder / "s.db"
    shutil.copy(queued, path)
    with Memory(path, **settings) as mem, Memory(path, **settings) as follower:
        follower.warm_up()
        mem.catch_up(piece_items=piece_items, progress=lambda *_: follower.refresh())
        assert mem.store.deferred_count() == 0
        follower.refresh()
        return rows(path), held(mem), held(follower)


KEEP_TREE = {"topic_rebuild_drift": 10.0}  # the guides' tree stays: the pieces' own leaves and moves are compared


@pytest.fixture(scope="module")
def one_pass(queued: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict, dict]:
    return caught_up(queued, tmp_path_factory.mktemp("one-pass"), 10**6, **KEEP_TREE)


@pytest.mark.parametrize("piece_items", [1, 7, 8, 9, 50, 205])
def test_a_conversation_caught_up_in_pieces_ends_as_one_pass(queued, one_pass, tmp_path, piece_items):
    expected_rows, expected_held, _ = one_pass
    assert all(expected_rows[t] for t in ("episodes", "facts", "topic_items", "topic_transitions", "conflicts", "decisions"))
    assert expected_held["edges"]["next"] and expected_held["edges"]["episode"] and expected_held["moves"][0]
    got_rows, got_held, followed = caught_up(queued, tmp_path, piece_items, **KEEP_TREE)
    assert differing(expected_rows, got_rows) == []
    assert got_held == expected_held
    assert followed == expected_held


def test_the_topic_tree_is_rebuilt_once_the_source_is_read_as_after_one_pass(queued, tmp_path):
    """Past the rebuild drift (the default): the tree is rebuilt at the source's end, not after a
    piece, so it is built from the same items as after one pass."""
    expected_rows, expected_held, _ = caught_up(queued, tmp_path / "one", 10**6)
    got_rows, got_held, _ = caught_up(queued, tmp_path / "pieces", 9)
    assert differing(expected_rows, got_rows) == []
    assert got_held == expected_held


def test_an_interrupted_catch_up_loses_only_its_piece_and_resumes(queued, tmp_path):
    path = tmp_path / "s.db"
    shutil.copy(queued, path)
    with Memory(path) as mem:
        queued_items = mem.store.deferred_count()
        pieces = []
        read = mem.catch_up(piece_items=50, cancelled=lambda: len(pieces) >= 2,
                            progress=lambda done, total, what: pieces.append(done))
        assert read == pieces[-1] and 0 < read < queued_items
        assert mem.store.deferred_count() == queued_items - read  # the rest is still queued
    with Memory(path) as reopened:
        assert reopened.catch_up(piece_items=50) == queued_items - read
        store = reopened.store
        turns = [i for source in store.sources() if not source.name.endswith(".md") for i in store.item_ids_of_source(source.id)]
        episodes = store.episodes_of_items(turns)
        assert len(turns) == queued_items and set(episodes) == set(turns)  # every turn read, in an episode
