"""Which fact subjects become entities: names do; a common noun phrase files its fact under the
entity its item is about (a document's section, a turn's speaker) instead of becoming one."""

import time
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.knowledge.entities import nickname_of, one_shortens_the_other, short_forms

from .conftest import ingested

NOTE = """# Bread

## Proofing

The poke test helps judge readiness. The dough becomes airy after a long rest.
The Swiss Alpine Club runs many huts.
"""

CHAT = "Maya: My kitchen is cold this week.\nDaniel: The dough needs a warmer spot then.\n"


@pytest.fixture
def note_mem(tmp_path: Path) -> Memory:
    with ingested(tmp_path, "note.md", NOTE) as m:
        yield m


def test_phrase_subjects_are_not_entities_but_names_are(note_mem):
    k = note_mem.knowledge
    names = {e.name for e in k.entities()}
    assert "Swiss Alpine Club" in names
    assert not names & {"poke test helps", "dough"}
    by_subject = {f.subject: f for f in k.facts()}
    assert by_subject["Swiss Alpine Club"].subject_id == k.registry.lookup("swiss alpine club")


def test_a_phrase_subject_files_its_fact_under_the_items_section(note_mem):
    k = note_mem.knowledge
    section = k.registry.lookup("proofing")
    dough = next(f for f in k.facts() if f.subject == "dough")
    assert dough.subject_id == section
    assert dough.id in {f.id for f in k.facts(entity=section)}


def test_a_phrase_subject_in_a_turn_files_under_the_speaker(tmp_path):
    with ingested(tmp_path, "chat.txt", CHAT) as m:
        k = m.knowledge
        assert "dough" not in {e.name for e in k.entities()}
        dough = next(f for f in k.facts() if f.subject == "dough")
        assert dough.subject_id == k.registry.lookup("daniel")
        kitchen = next(f for f in k.facts() if f.subject.startswith("Maya's"))
        assert kitchen.subject_id == k.registry.lookup("maya")


def test_a_phrase_subject_fact_can_be_edited_without_renaming_its_subject(note_mem):
    k = note_mem.knowledge
    dough = next(f for f in k.facts() if f.subject == "dough")
    edited = k.fact(k.edit_fact(dough.id, object="light and airy").fact)
    assert (edited.subject, edited.object, edited.subject_id) == ("dough", "light and airy", dough.subject_id)


def test_a_nickname_is_the_one_person_whose_first_name_it_starts():
    assert nickname_of("nico", ["javiera", "nicolás", "benja"]) == "nicolás"
    assert nickname_of("sam", ["samantha okafor"]) == "samantha okafor"
    assert nickname_of("ali", ["alice", "alison"]) is None  # either may be meant: apart
    assert nickname_of("al", ["alice"]) is None  # too short to tell
    assert nickname_of("nico", ["nico", "javiera"]) is None  # a name is no nickname of itself
    assert nickname_of("ann", ["ann", "anna"]) is None  # one letter more is another name: sisters
    assert nickname_of("jan", ["jane"]) is None


def test_a_sister_whose_name_starts_the_speakers_is_not_taken_for_her(tmp_path):
    chat = tmp_path / "chat.txt"
    chat.write_text("Anna: My sister Ann moved to Rome last year.\nBen: Does Ann like it there?\n"
                    "Anna: Ann loves it, she works at a bakery now.\nBen: And you still work at the library?\n"
                    "Anna: Yes, I still work at the library.\n", encoding="utf-8")
    with Memory(tmp_path / "m.db") as mem:
        mem.ingest([chat])
        hits = mem.recall("Where does Anna work now?", strategy="fused", top_k=3).hits
    assert hits and hits[0].item.text == "Yes, I still work at the library."


def test_a_first_name_too_long_for_a_person_has_no_short_forms():
    """A speaker "name" of 100,000 letters (content, not a person) made 100,000 prefixes, gigabytes
    and tens of seconds at every ingest of a turn of theirs (guard's finding): a first name longer
    than a person's has none, and a short form is checked without listing them."""
    started = time.process_time()
    assert short_forms("x" * 100_000) == []
    assert nickname_of("xxx", ["x" * 100_000]) is None
    assert not one_shortens_the_other("xxx", "x" * 100_000)
    assert time.process_time() - started < 0.5
    assert short_forms("gustavo reyes") == ["gus", "gust", "gusta"]
    assert one_shortens_the_other("gus", "gustavo reyes")
