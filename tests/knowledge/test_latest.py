"""The latest word on a topic holds (engine/knowledge/latest.py, read by the present-tense lift in
present.py): for a question whether something holds now, the latest turn on its words goes above
the older ones without any change word; an answer is about what the question just before it asked;
a name in a turn's words counts though no mention was made of it."""

from __future__ import annotations

from mnemoscope.engine.knowledge import present
from mnemoscope.engine.knowledge.latest import asks_state, of_subject, states
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

DANUBE = locomo("danube", ("Kate", "Lars"),
    ("9:00 am on 12 June, 2024", [
        ("Kate", "I'm cycling the Danube at Whitsun next year, Passau to Vienna with panniers."),
        ("Lars", "Jealous."),
    ]),
    ("7:00 pm on 2 October, 2024", [
        ("Kate", "The Danube's off, sadly. Work needs me in May, so Whitsun will be spreadsheets."),
        ("Lars", "Next year then."),
    ]),
)
danube = stored(DANUBE)

VESPA = locomo("vespa", ("Lucy", "Marco"),
    ("9:00 am on 4 March, 2024", [
        ("Lucy", "Me and my Vespa. A scooter is the only sane way through Rome traffic."),
        ("Marco", "Helmet on, please."),
    ]),
    ("6:00 pm on 9 September, 2024", [
        ("Lucy", "I sold the Vespa in August, the metro line opened by the office."),
        ("Marco", "End of an era."),
    ]),
)
vespa = stored(VESPA)


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


def test_a_name_after_a_determiner_is_what_the_question_is_about():
    question = present.present_question("Is Kate cycling the Danube this Whitsun?", load_rules(), ["Kate", "Danube", "Whitsun"])
    assert question is not None and {"danub", "whitsun"} <= question.terms and "kate" not in question.terms


def test_a_plan_called_off_in_the_words_of_its_name_is_the_latest_word(danube):
    assert above(ranked(danube, "Is Kate cycling the Danube this Whitsun?"), "D2:1", "D1:1")


DOG = locomo("dog", ("Jon", "Bea"),
    ("9:00 am on 3 March, 2024", [
        ("Jon", "I adopted a dog from the shelter, Bea! A scruffy terrier called Pip."),
        ("Bea", "Oh lovely, send photos."),
    ]),
    ("8:00 pm on 10 July, 2024", [
        ("Jon", "The neighbour's dog barked all night, I barely slept."),
        ("Bea", "Earplugs!"),
    ]),
    ("6:00 pm on 2 October, 2024", [
        ("Jon", "My dog went to live with my parents in Devon, the flat was too small for him."),
        ("Bea", "You'll miss him."),
    ]),
)
dog = stored(DOG)

QUIZ = locomo("quiz", ("Tom", "Ana"),
    ("9:00 am on 2 February, 2024", [
        ("Tom", "My wrist is broken, I came off the bike on the ice."),
        ("Ana", "Ouch. Take it easy."),
    ]),
    ("6:00 pm on 20 February, 2024", [
        ("Ana", "How's the wrist? And are you coming to the quiz on Friday?"),
        ("Tom", "Yes, count me in."),
    ]),
    ("7:00 pm on 30 April, 2024", [
        ("Ana", "And the wrist? Are you out of plaster yet?"),
        ("Tom", "Yes, good as new."),
    ]),
)
quiz = stored(QUIZ)


def test_the_latest_word_is_the_subjects_own_not_a_word_on_someone_elses(dog):
    assert above(ranked(dog, "Does Jon have a dog?", as_of="2024-08-01"), "D1:1", "D2:1")  # the neighbour's dog
    assert above(ranked(dog, "Does Jon have a dog?"), "D3:1", "D1:1")  # his own, no change word


def test_a_reply_answers_the_last_question_of_the_turn_before_it_and_those_it_follows_up(quiz):
    assert above(ranked(quiz, "Is Tom's wrist still broken?", as_of="2024-03-01"), "D1:1", "D2:2")  # "count me in": the quiz
    assert above(ranked(quiz, "Is Tom's wrist still broken?"), "D3:2", "D1:1")  # "out of plaster yet?" follows up the wrist


def test_a_change_naming_only_what_the_subject_called_theirs_is_on_the_topic(vespa):
    assert above(ranked(vespa, "Does Lucy have a scooter?"), "D2:1", "D1:1")  # "my Vespa" on a scooter: "sold the Vespa"


def test_whose_noun_phrase_a_word_stands_in():
    word = frozenset({"dog"})
    mine = ["I adopted a dog", "My scruffy old dog is asleep", "Jon's dog is asleep", "It's a dog's life"]
    assert mine and all(of_subject(s, word, ["Jon"], own_voice=True) for s in mine)
    theirs = ["The neighbour's dog barked", "The neighbours' big dog barked", "I walked Mia\u2019s dog", "Your dog is sweet"]
    assert not any(of_subject(s, word, ["Jon"], own_voice=True) for s in theirs)
    assert of_subject("Your dog is sweet", word, ["Jon"], own_voice=False)  # said to Jon
    assert not of_subject("My dog is sweet", word, ["Jon"], own_voice=False)  # the speaker's, not Jon's
    assert of_subject("A confession before you hear it from her: I'm smoking again.", frozenset({"smoke"}), ["Aino"],
                      own_voice=True)  # "her" opens no phrase across the colon


def test_an_appointment_whose_day_has_come_by_the_question_states_its_value():
    """The present-state check reads a sentence as of the day asked about, as the change check
    does: "I start at Beaumont in December", said in October, holds in January, not before."""
    said = "2025-10-02"
    assert states("I start at Beaumont in December.", frozenset({"beaumont"}), said=said, by="2026-01-10")
    assert not states("I start at Beaumont in December.", frozenset({"beaumont"}), said=said, by="2025-11-01")
    assert not states("I start at Beaumont in December.", frozenset({"beaumont"}), said=said)
