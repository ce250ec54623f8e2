"""Ordinary sentences change no fact: after Ava has said where she lives, where she works, who her
husband is and so on, a trip, a shift, a visit, a hobby, a plan, someone else's news, a
hypothetical, quoted speech, a negation or a question supersedes none of it, opens no clash in
the inbox and states no new value of a slot for her.

Each reading of a change is written from a few studied sentences, and such readings have made
wrong current facts of ordinary ones (session 19 reverted 3aba920: "still in <Place>" read "I'm
still in Lisbon until Friday for the conference" as her new home). Every sentence here is one
Ava says in a session of its own, weeks after the first."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from mnemoscope.engine.knowledge.supersession import load_rules

from .conftest import locomo, stored

BASELINE = [
    ("Ava", "I live in Leeds, in a flat near the canal."),
    ("Ben", "Nice. Are you still at the library?"),
    ("Ava", "Yes, I work at the Central Library as an archivist."),
    ("Ava", "I'm married to Tom, ten years this spring."),
    ("Ava", "We have a cat called Biscuit."),
    ("Ava", "My favourite food is ramen."),
    ("Ava", "I'm learning Italian on Tuesday evenings."),
    ("Ava", "I drive an old blue Fiesta."),
    ("Ava", "I'm vegetarian, have been for years."),
]

ORDINARY = [
    # trips and stays away
    "I'm spending two weeks in Lisbon in August, can't wait.",
    "I flew to Berlin for a conference last week, it was exhausting.",
    "We're staying at my sister's place in York for the weekend.",
    "I'm in Paris this week for work, the hotel room is tiny.",
    "We rented a cottage in Wales for half term.",
    "I'm house-sitting for a friend in Otley this month.",
    "I'm still in Lisbon until Friday for the conference.",
    "Still at the airport, the flight is delayed again.",
    "We're living out of suitcases in a hotel in Rome this week.",
    "I'm staying with Tom's parents in Bath until the boiler is fixed.",
    "We're on holiday in Crete now, the sea is warm.",
    # shifts and work that is not a new job
    "I'm on the late shift all this week.",
    "I covered a shift at the Chapel Allerton branch on Saturday.",
    "I've been working from a café in Headingley all week.",
    "I'm still in the office, working late on the catalogue.",
    "I'm working as a steward at the festival this weekend, for extra cash.",
    "I'm filling in as the library's receptionist while Jo is off.",
    "I'm back at the library after two weeks off.",
    # visits and appointments
    "I visited my parents in Manchester on Sunday.",
    "I'm seeing the dentist on Friday, wish me luck.",
    "I'm seeing a physio about my shoulder.",
    "I started with a new physio on Monday, my shoulder is better already.",
    "I met an old friend, Sam, for coffee yesterday.",
    # hobbies
    "I've started volunteering at the food bank on Sundays.",
    "I started as a volunteer at the cat shelter last month.",
    "I started with the choir at St Mary's in March.",
    "I joined a climbing club at the leisure centre.",
    "I've taken up pottery, I'm terrible at it.",
    "I tried sushi for the first time, it was good.",
    # someone else's news
    "My brother just moved to Glasgow for a new job.",
    "My neighbour moved out last month, the flat next door is empty.",
    "Tom got a job at the hospital, he starts Monday.",
    "My sister left her job at the bank.",
    "My best friend Jess got married last month!",
    "My sister is engaged to a guy called Marco.",
    "My sister adopted a puppy called Max.",
    "Tom's favourite food is pizza, obviously.",
    "My brother bought a Tesla.",
    "Tom is married to his job these days, ha.",
    # hypotheticals, plans, quoted speech
    "If I won the lottery I'd move to the coast.",
    "Sometimes I think about moving to Edinburgh one day.",
    "We might move to a bigger place next year, who knows.",
    "If the museum offered me a job I'd take it in a heartbeat.",
    "In the play I'm married to the villain, it's hilarious.",
    "Maybe I'll learn Japanese one day.",
    "My friend said, 'You should move to Dublin!' Ha, no way.",
    "My boss joked, 'One day you'll run the museum instead.'",
    # negations and questions
    "I'm not moving to London, no matter what my boss says.",
    "I didn't get the job at the museum, oh well.",
    "I'm not leaving the library, don't worry.",
    "Do you think I should move to Sheffield?",
    "Should I apply for the job at the museum?",
    "Ben, are you still dating Priya?",
    "Ben, you live in Oxford now, don't you?",
]


def _sessions() -> list[tuple[str, list[tuple[str, str]]]]:
    """The baseline, then each ordinary sentence in a session of its own, a week apart."""
    first = date(2023, 1, 14)
    sessions = [(f"9:00 am on {first.day} {first:%B}, {first.year}", BASELINE)]
    for n, sentence in enumerate(ORDINARY, 1):
        day = first + timedelta(weeks=4 + n)
        sessions.append((f"6:00 pm on {day.day} {day:%B}, {day.year}", [("Ben", "How have you been?"), ("Ava", sentence)]))
    return sessions


ordinary = stored(locomo("ordinary-sentences", ("Ava", "Ben"), *_sessions()))


@pytest.fixture(scope="module")
def later_items(ordinary) -> set[int]:
    """The ids of the turns after the baseline's session."""
    later = {i.id for s in ordinary.sources() for i in ordinary.source_items(s.id) if not i.key.startswith("D1:")}
    assert len(later) == 2 * len(ORDINARY)
    return later


def test_the_baseline_states_a_value_of_each_slot_it_should(ordinary):
    """The sentences below can only be judged against values the rules know Ava holds."""
    rules = load_rules()
    slots = {found[0].name for f in ordinary.knowledge.facts() if f.subject == "Ava"
             if (found := rules.slot_of(f.subject, f.predicate, f.object)) is not None}
    assert {"home", "employer", "role", "partner", "drives", "diet"} <= slots, slots


def test_no_ordinary_sentence_supersedes_a_fact(ordinary):
    superseded = [f"{f.subject} {f.predicate} {f.object}" for f in ordinary.knowledge.facts() if f.superseded_by]
    assert not superseded


def test_no_ordinary_sentence_opens_a_clash(ordinary):
    clashes = [c.reason for c in ordinary.knowledge.conflicts(None) if c.kind == "clash"]
    assert not clashes


def test_no_ordinary_sentence_states_a_value_of_a_slot_for_her(ordinary, later_items):
    rules = load_rules()
    stated = [f"{f.subject} {f.predicate} {f.object}" for f in ordinary.knowledge.facts()
              if f.subject == "Ava" and later_items & set(f.provenance)
              and rules.slot_of(f.subject, f.predicate, f.object) is not None]
    assert not stated
