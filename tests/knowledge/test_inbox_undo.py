"""The inbox's one-key undo (the Facts screen's `u`, KnowledgeThroughTime.undo_last): it undoes
the newest decision of a person that is no undo and is not undone, and reads that one decision
from the end of the audit log (the log was read and parsed whole at each key press); after each
decision the open store answers as the same store opened afresh; and the inbox is listed from the
store alone."""

import json
import shutil
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.errors import KnowledgeError

PEOPLE = [f"Person{a}{b}" for a in "ABCDEFGH" for b in "ABCDE"]  # 40 people, each in two homes at once


@pytest.fixture(scope="module")
def clashes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with one open conflict per person: two homes stated on the same day."""
    folder = tmp_path_factory.mktemp("clashes")
    chat = folder / "homes.jsonl"
    chat.write_text("".join(json.dumps({"speaker": who, "text": f"I live in {city}.", "timestamp": "2024-01-05T10:00:00"})
                            + "\n" for who in PEOPLE for city in ("Lyon", "Berlin")), encoding="utf-8")
    with Memory(folder / "s.db") as mem:
        mem.ingest(chat)
        assert len(mem.knowledge.conflicts()) == len(PEOPLE)
    return folder / "s.db"


def decided(clashes: Path, folder: Path, count: int) -> Memory:
    """A copy of the store with its first ``count`` conflicts decided (a person's decisions)."""
    path = folder / f"{count}.db"
    shutil.copy(clashes, path)
    mem = Memory(path)
    for conflict in mem.knowledge.conflicts()[:count]:
        mem.knowledge.decide(conflict.id, "both")
    return mem


def test_undo_last_undoes_the_newest_decision_not_undone_then_the_one_before(clashes, tmp_path):
    with decided(clashes, tmp_path, 2) as mem:
        k = mem.knowledge
        first, second = sorted(d.id for d in k.decisions(limit=None))
        assert k.undo_last().undoes == second
        assert k.undo_last().undoes == first  # an undo is no decision to undo
        with pytest.raises(KnowledgeError, match="no decision of yours to undo"):
            k.undo_last()
        assert len(k.conflicts()) == len(PEOPLE)


def test_undo_last_reads_only_the_decision_it_undoes(clashes, tmp_path):
    """An older line of the log that cannot be read (its changes no JSON) does not stop the undo
    of the newest: the log is not read whole to find it."""
    with decided(clashes, tmp_path, 2) as mem:
        first, second = sorted(d.id for d in mem.knowledge.decisions(limit=None))
        mem.store.writer.execute("UPDATE decisions SET changes = 'damaged' WHERE id = ?", (first,))
        assert mem.knowledge.undo_last().undoes == second


def answers(mem: Memory, subject: str) -> tuple[list[tuple[int, list[str]]], list[tuple[int, str]], list[int]]:
    """What a store says of one person: the walk's hits for where they live (the graph the area
    keeps in memory), their facts and whether each is believed, and the conflicts still open."""
    hits = mem.recall(f"Where does {subject} live?", top_k=10, strategy="ppr").hits
    return ([(h.item.id, h.sources) for h in hits], [(f.id, f.state()) for f in mem.knowledge.facts(entity=subject)],
            sorted(c.id for c in mem.knowledge.conflicts()))


def test_after_each_decision_and_undo_the_store_answers_as_the_same_store_opened_afresh(clashes, tmp_path):
    """Accepting a clash, keeping both, undoing, and retiring a fact: after each, the open store
    answers as the same store opened afresh does (a decision that changes only when facts held
    keeps the knowledge area's graph; one that changes what is believed has it read again)."""
    path = tmp_path / "s.db"
    shutil.copy(clashes, path)
    with Memory(path) as mem:
        k = mem.knowledge
        first, second, third = k.conflicts()[:3]
        steps = [lambda: k.decide(first.id, "accept"), lambda: k.decide(second.id, "both"), k.undo_last,
                 lambda: k.decide(third.id, "retire")]
        for step, conflict in zip(steps, (first, second, second, third)):
            before = answers(mem, conflict.facts[0].subject)
            step()
            now = answers(mem, conflict.facts[0].subject)
            with Memory(path) as fresh:
                assert now[0] and now[1] and now == answers(fresh, conflict.facts[0].subject)
            assert now != before


def test_the_inbox_is_listed_from_the_store_without_loading_the_knowledge_area(clashes, tmp_path):
    """`mnemoscope conflicts` lists them so: loading the area (its graph) was most of its time."""
    with decided(clashes, tmp_path, 3) as mem:
        pass
    with Memory(tmp_path / "3.db") as mem:
        open_ones, every = mem.conflicts(), mem.conflicts(status=None)
        assert "knowledge" not in mem.loaded_areas()
        assert len(open_ones) == len(PEOPLE) - 3 and len(every) == len(PEOPLE)
        assert [c.to_dict() for c in open_ones] == [c.to_dict() for c in mem.knowledge.conflicts()]
        assert [c.to_dict() for c in every] == [c.to_dict() for c in mem.knowledge.conflicts(status=None)]
