"""An entity's kind grows stronger when a later write names it in a stronger role (a tag that a
text then names, a name that later speaks); the writing process's registry then holds it as a
reopened store's registry does (one path, EntityRegistry._add), so that a name of two words,
now worth looking for in any case, is found in lower case by the next write."""

from mnemoscope.engine import Memory


def test_a_tag_named_later_is_found_in_lower_case(tmp_path):
    with Memory(tmp_path / "k.db") as mem:
        mem.add_note("Rehearsal notes for the spring concert.", name="n1", tags=["harbor choir"])
        mem.add_note("I sing in the Harbor Choir now.", name="n2")  # the tag, now a name
        said = mem.add_note("Tonight the harbor choir rehearses at the church.", name="n3")
        named = [e.name for e in mem.knowledge.item_entities(said.id)]
    assert named
    assert "harbor choir" in {n.lower() for n in named}
