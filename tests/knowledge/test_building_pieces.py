"""The extractor's reading across the pieces of a catch-up (engine/knowledge/building.py): it
continues from the piece before only when that piece committed, and only the source's own pieces
shape it. A piece that fails is read again as a reopened store reads it, so nothing it read before
the failure (a name met later in it) leaks into the retry; a fact stated by hand between two
pieces names an entity the rest of the source knows, as it would had it been stated before."""

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from tests.core.test_ingest_pieces import differing, rows

PIECE = 8  # the rule episodes' window: a piece of 8 turns ends at an episode's end

# Three episodes of eight turns. "Zorba" opens a sentence in the second one before any sentence
# names him inside it: no name there in one read of the chat (a capitalised first word is a name
# only when known), so no mention either when that piece is read again after failing.
TURNS = [("Ana", "Morning, how was the weekend?"), ("Ben", "Quiet, I fixed the fence."), ("Ana", "Good for you."),
         ("Ben", "And yours?"), ("Ana", "I baked bread all day."), ("Ben", "Sounds lovely."),
         ("Ana", "It was, the crust came out well."), ("Ben", "Save me a slice."),
         ("Ana", "Zorba is sleeping on my bed again."), ("Ben", "Who is that?"), ("Ana", "My new cat."),
         ("Ben", "Cute name."), ("Ana", "I found Zorba at the shelter."), ("Ben", "Good find."),
         ("Ana", "He purrs all night."), ("Ben", "Lucky you."),
         ("Ana", "Tonight I sing with the harbor lights choir."), ("Ben", "Since when?"), ("Ana", "Since May."),
         ("Ben", "Where do you rehearse?"), ("Ana", "At the old church."), ("Ben", "Nice acoustics there."),
         ("Ana", "Very nice."), ("Ben", "Have fun tonight.")]
FAILING_TURN = 11  # in the second piece, after its Zorba turns: the piece reads both, then fails


@pytest.fixture
def queued(tmp_path: Path) -> Path:
    """A store with the chat stored and waiting for the deferred areas."""
    chat = tmp_path / "chat.jsonl"
    chat.write_text("".join(json.dumps({"speaker": who, "text": said}) + "\n" for who, said in TURNS), encoding="utf-8")
    path = tmp_path / "queued" / "s.db"
    path.parent.mkdir()
    with Memory(path) as mem:
        mem.ingest([chat], defer=True, catch_up=False)
    return path


def copy_of(queued: Path, name: str) -> Path:
    path = queued.parent.parent / name / "s.db"
    path.parent.mkdir()
    shutil.copy(queued, path)
    return path


def turn_ids(mem: Memory) -> list[int]:
    return sorted(i for source in mem.store.sources() for i in mem.store.item_ids_of_source(source.id))


def fault(path: Path, item_id: int | None) -> None:
    """A write that fails inside the piece's transaction, after every area read the piece: the
    queue row of ``item_id`` cannot leave (SQLite aborts the statement); None: the fault is gone."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("DROP TRIGGER IF EXISTS fault")
        if item_id is not None:
            conn.execute(f"CREATE TRIGGER fault BEFORE DELETE ON extraction_queue WHEN old.item_id = {item_id}"
                         " BEGIN SELECT RAISE(ABORT, 'injected fault'); END")
        conn.commit()
    finally:
        conn.close()


@pytest.mark.parametrize("reopen", [False, True])
def test_a_piece_that_failed_is_read_again_with_nothing_lost_or_doubled(queued, reopen):
    one_pass = copy_of(queued, "one-pass")
    with Memory(one_pass) as mem:
        assert mem.catch_up() == len(TURNS)
    expected = rows(one_pass)
    assert expected["mentions"] and expected["facts"] and expected["episodes"]

    path = copy_of(queued, "failed")
    mem = Memory(path)
    try:
        fault(path, turn_ids(mem)[FAILING_TURN])
        with pytest.raises(sqlite3.IntegrityError, match="injected fault"):
            mem.catch_up(piece_items=PIECE)
        assert mem.store.deferred_count() == len(TURNS) - PIECE  # the first piece committed, the rest waits
        fault(path, None)
        if reopen:
            mem.close()
            mem = Memory(path)
        assert mem.catch_up(piece_items=PIECE) == len(TURNS) - PIECE
    finally:
        mem.close()
    assert differing(expected, rows(path)) == []


def test_a_fact_stated_by_hand_between_pieces_names_an_entity_the_rest_of_the_source_knows(queued):
    path = copy_of(queued, "curated")
    with Memory(path) as mem:
        ids = turn_ids(mem)
        assert mem.catch_up(piece_items=PIECE, cancelled=lambda: mem.store.deferred_count() < len(TURNS)) == PIECE
        mem.knowledge.add_fact("Harbor Lights Choir", "rehearses at", "the old church", [ids[-4]])
        mem.catch_up(piece_items=PIECE)
        named = {e.name for e in mem.knowledge.item_entities(ids[16])}
    assert "Harbor Lights Choir" in named  # written in lower case there: found by the registry's gazetteer
