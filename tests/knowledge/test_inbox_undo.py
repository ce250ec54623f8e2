"""The inbox's one-key undo (the Facts screen's `u`, KnowledgeThroughTime.undo_last): it undoes
the newest decision of a person that is no undo and is not undone, and reads that one decision
from the end of the audit log (the log was read and parsed whole at each key press); and what a
decision costs in a store of many conflicts."""

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


def test_a_decision_about_when_facts_held_loads_nothing_again(clashes, tmp_path, monkeypatch):
    """Accepting a clash or keeping both, and undoing either, change a conflict's status and when
    a fact held, nothing the knowledge area keeps in memory (before: its whole graph was loaded
    again at each decision and undo, nearly all of a key press's cost in a large store). Retiring a
    fact changes what the store believes: the area is loaded again. Either way it answers as the
    same store opened afresh does."""
    path = tmp_path / "s.db"
    shutil.copy(clashes, path)
    with Memory(path) as mem:
        k = mem.knowledge
        loads = []
        load = k.load
        monkeypatch.setattr(k, "load", lambda: loads.append(True) or load())
        first, second, third = k.conflicts()[:3]
        k.decide(first.id, "accept")
        k.decide(second.id, "both")
        k.undo_last()
        assert loads == []
        k.decide(third.id, "retire")
        assert loads == [True]
        question = f"Where does {first.facts[0].subject} live?"
        answered = [(h.item.id, h.sources) for h in mem.recall(question, top_k=10, strategy="ppr").hits]
        facts = [(f.id, f.state()) for f in k.facts(entity=first.facts[0].subject)]
    with Memory(path) as fresh:
        assert answered and answered == [(h.item.id, h.sources) for h in fresh.recall(question, top_k=10, strategy="ppr").hits]
        assert facts and facts == [(f.id, f.state()) for f in fresh.knowledge.facts(entity=first.facts[0].subject)]
        still_open = {c.id for c in fresh.knowledge.conflicts()}
        assert second.id in still_open and not {first.id, third.id} & still_open
