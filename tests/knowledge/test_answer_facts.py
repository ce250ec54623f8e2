"""Slot facts from answers (engine/knowledge/answers.py): "Where are you living now?" — "Still in
Jesmond." states a home; the slot comes from the question, the value from the answer."""

from __future__ import annotations

import pytest

from mnemoscope.engine.knowledge.entities import EntityRegistry
from mnemoscope.engine.knowledge.extract import RuleExtractor
from mnemoscope.engine.records import Item

from .conftest import locomo, stored

SLOTS = ("lives in", "works at", "is dating")


def read(*turns: tuple[str, str], day: str = "2024-03-05") -> list[tuple[str, str, str]]:
    """The slot facts of a conversation's turns, all said on one ``day``, as (subject, predicate, object)."""
    extractor = RuleExtractor(EntityRegistry())
    out = []
    for n, (speaker, text) in enumerate(turns):
        item = Item(text=text, kind="turn", key=f"D1:{n}", speaker=speaker, timestamp=f"{day}T10:{n:02d}:00", id=n + 1)
        out += [(f.subject, f.predicate, f.object) for f in extractor.extract(item).facts if f.predicate in SLOTS]
    return out


@pytest.mark.parametrize("question, answer, fact", [
    ("Where are you living now?", "Still in Jesmond, on Osborne Road.", ("Maya", "lives in", "Jesmond")),
    ("Where are you living?", "A rented flat in Kralingen, near the lake.", ("Maya", "lives in", "Kralingen")),
    ("Where are you living?", "I've got a one-bed flat in Lancaster, up by the canal.", ("Maya", "lives in", "Lancaster")),
    ("So where do you live these days, Maya?", "Yes, in Bergen.", ("Maya", "lives in", "Bergen")),
    ("And where do you work these days?", "At the Mill.", ("Maya", "works at", "Mill")),
    ("Who are you working for now?", "Access Cabs, nights.", ("Maya", "works at", "Access Cabs")),
    ("You two still in the Jesmond place?", "Still in Jesmond, Osborne Road, two floors up.", ("Maya", "lives in", "Jesmond")),
    ("Speaking of houses, are you still in the Agricola Street place?", "Still in the North End, third floor.",
     ("Maya", "lives in", "North End")),
    ("Who are you seeing now?", "Tamsin.", ("Maya", "is dating", "Tamsin")),
    ("Who are you dating?", "Still Tamsin, believe it or not.", ("Maya", "is dating", "Tamsin")),
])
def test_an_answer_naming_only_the_value_states_the_slot_the_question_asked(question, answer, fact):
    assert read(("Dan", question), ("Maya", answer)) == [fact]


@pytest.mark.parametrize("question, answer", [
    ("Where did you live before Portland?", "In Boston, for six years."),  # past: no current home
    ("Where were you living when you met Tom?", "In Leeds."),
    ("Where did your parents live when you were a kid?", "In Ohio."),  # someone else's, in the past
    ("Do you know where Hanne lives now?", "Yes, in Bergen."),  # Hanne's slot, not the answerer's
    ("Where do you think Rosa works?", "At the Mill, I think."),
    ("Where will you live after the wedding?", "In Leeds, probably."),  # a plan
    ("Where are you staying in Rome?", "Near the Pantheon."),  # a holiday
    ("Where are you living these days?", "Not sure yet, maybe Leeds."),  # a hedge
    ("Where are you living?", "My sister's in Leeds, I'm in her spare room."),  # another subject first
    ("Where are you living?", "With Tom, in Leeds."),  # a person first
    ("Who are you seeing?", "Dr Patel, about my knee."),  # a patient is asked so too
    ("Who are you seeing now?", "Dr Patel, the knee man."),  # a title names no partner
    ("Where are you living now?", "I used to be in Leeds, now I'm not sure."),
    ("Are you still in the band?", "Still in Los Quiltros, yes."),  # a band is no home
    ("Are you still in the flat with the guy who bakes?", "Callum, yes. Dumbarton Road."),  # asks more than the home
    ("Are you still in the Osborne Road flat?", "Nope, Tom's in Leeds."),  # someone's
])
def test_a_question_in_the_past_of_someone_else_or_a_hedged_answer_states_nothing(question, answer):
    assert read(("Dan", question), ("Maya", answer)) == []


def test_an_answer_to_ones_own_question_or_another_days_states_nothing():
    assert read(("Maya", "Where am I living now?"), ("Maya", "Still in Jesmond.")) == []
    extractor = RuleExtractor(EntityRegistry())
    asked = Item(text="Where are you living now?", kind="turn", key="D1:1", speaker="Dan",
                 timestamp="2024-03-05T10:00:00", id=1)
    answer = Item(text="Still in Jesmond.", kind="turn", key="D2:1", speaker="Maya", timestamp="2024-04-05T10:00:00", id=2)
    extractor.extract(asked)
    assert not [f for f in extractor.extract(answer).facts if f.predicate in SLOTS]


REVIEW = locomo("review", ("Maya", "Dan"),
    ("10:00 am on 5 January, 2024", [("Maya", "I live in Portland these days.")]),
    ("10:00 am on 5 March, 2024", [
        ("Dan", "Where did you live before Portland?"),
        ("Maya", "In Boston, for six years."),
        ("Dan", "Do you know where Hanne lives now?"),
        ("Maya", "Yes, in Bergen."),
        ("Dan", "Where do you think Rosa works?"),
        ("Maya", "At the Mill, I think."),
        ("Dan", "Where did your parents live when you were a kid?"),
        ("Maya", "In Ohio."),
    ]),
)
review = stored(REVIEW)


def test_answers_about_the_past_or_someone_else_leave_the_current_home_alone(review):
    """The reviewer's conversation: every answer there is of another time or another person's slot,
    so Portland is still where Maya lives, and no answer became a fact of hers."""
    facts = [f for f in review.knowledge.facts() if f.subject == "Maya" and f.predicate in SLOTS]
    assert [(f.predicate, f.object, f.superseded_by) for f in facts] == [("lives in", "Portland", None)]


MOVED = locomo("moved", ("Maya", "Dan"),
    ("10:00 am on 5 January, 2024", [("Maya", "I live in Portland these days, in a flat above a bakery.")]),
    ("10:00 am on 5 June, 2024", [
        ("Dan", "It's been ages. Where are you living now?"),
        ("Maya", "Still in Jesmond, on Osborne Road. The cat loves the garden."),
    ]),
)
moved = stored(MOVED)


def test_an_answered_home_supersedes_the_old_one_and_goes_first(moved):
    facts = {f"{f.subject} {f.predicate} {f.object}": f for f in moved.knowledge.facts()}
    assert facts["Maya lives in Portland"].superseded_by == facts["Maya lives in Jesmond"].id
    keys = [h.item.key for h in moved.recall("Where does Maya live now?", top_k=5, strategy="fused").hits]
    assert keys and keys[0] == "D2:2", keys
