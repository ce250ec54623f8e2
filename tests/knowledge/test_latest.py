"""The latest word on a topic holds (engine/knowledge/latest.py, read by the present-tense lift in
present.py): for a question whether something holds now, the latest turn on its words goes above
the older ones without any change word; an answer is about what the question just before it asked;
a name in a turn's words counts though no mention was made of it."""

from __future__ import annotations

from mnemoscope.engine.knowledge import present
from mnemoscope.engine.knowledge.latest import asks_state
from mnemoscope.engine.knowledge.supersession import load_rules

from .conftest import locomo, stored
from .test_present import above, ranked

HALF = locomo("half", ("Priya", "Dan"),
    ("9:00 am on 12 January, 2024", [
        ("Priya", "I've signed up for the half marathon in Bristol this October, my first one."),
        ("Dan", "Brave. I'll come and cheer with a sign."),
    ]),
    ("7:00 pm on 3 May, 2024", [
        ("Priya", "My physio says the hamstring won't cope, so no half marathon for me this year."),
        ("Dan", "That's rotten luck. Swimming?"),
    ]),
)
half = stored(HALF)

WRIST = locomo("wrist", ("Tom", "Ana"),
    ("9:00 am on 2 February, 2024", [
        ("Tom", "My wrist is broken, I came off the bike on the ice. Plaster on the wrist for six weeks."),
        ("Ana", "Ouch. Take it easy."),
        ("Tom", "I'm reading a lot, the new Le Carré."),
    ]),
    ("6:00 pm on 20 June, 2024", [
        ("Ana", "Lovely weather for it. How's the wrist?"),
        ("Tom", "Good as new. I rode to Whitby and back on Sunday."),
        ("Ana", "Show-off."),
    ]),
)
wrist = stored(WRIST)

SARA = locomo("sara", ("Ben", "Ruth"),
    ("9:00 am on 10 January, 2024", [
        ("Ben", "Our Sara is studying medicine in Leeds, first year."),
        ("Ruth", "You must be proud."),
    ]),
    ("5:00 pm on 14 April, 2024", [
        ("Ruth", "And Sara?"),
        ("Ben", "She switched to law, the medicine course was too long for her."),
    ]),
)
sara = stored(SARA)


def test_asking_whether_something_holds_now_takes_the_latest_word_without_a_change_word(half):
    assert above(ranked(half, "Is Priya running the half marathon?"), "D2:1", "D1:1")
    assert above(ranked(half, "Is Priya running the half marathon?", as_of="2024-02-01"), "D1:1", "D1:2")


def test_an_answer_is_about_what_the_question_just_before_it_asked(wrist):
    assert above(ranked(wrist, "Is Tom's wrist still broken?"), "D2:2", "D1:1")


def test_an_answer_is_about_whom_the_question_just_before_it_named(sara):
    assert above(ranked(sara, "What does Sara study?"), "D2:2", "D1:1")


def test_questions_of_what_holds_now_are_told_from_open_ones():
    for question in ("Is Maya vegetarian?", "Does Tom still cycle to work?", "Are Jo and Sam together?",
                     "Where does Julien live now?"):
        assert asks_state(question), question
    for question in ("What books has Tim read?", "Has Tim been to Leeds?", "What is Gina's favourite dance?",
                     "Would Tom still cycle if the path were closed?"):
        assert not asks_state(question), question


def test_a_name_after_a_preposition_is_what_the_question_is_about():
    question = present.present_question("When is Tom going to Lisbon?", load_rules(), ["Tom", "Lisbon"])
    assert question is not None and "lisbon" in question.terms and "tom" not in question.terms
