"""Whom a question and an answer are about (engine/knowledge/reading.py, present.py, latest.py):
a speaker called by a short form of their name, an answer that names only its value, a thing
that speaks through its owner, and a question about a past date."""

from __future__ import annotations

import json

from mnemoscope.engine import Memory
from mnemoscope.engine.knowledge import present
from mnemoscope.engine.knowledge.supersession import load_rules

from .conftest import locomo, stored


def ranked(mem: Memory, question: str, **options) -> list[str]:
    return [h.item.key for h in mem.recall(question, top_k=10, strategy="fused", **options).hits]


def above(keys: list[str], first: str, second: str) -> bool:
    assert first in keys and second in keys, keys
    return keys.index(first) < keys.index(second)


SHORT = locomo("short", ("Rosalind", "Padraig"),
    ("9:00 am on 3 February, 2025", [
        ("Padraig", "Ros, are you alive? Your mother says you never ring."),
        ("Rosalind", "Work is mad. I work every early shift at the bakery on Mill Lane, and work eats the weekends."),
        ("Padraig", "Rossy, you need a holiday."),
    ]),
    ("9:00 am on 20 August, 2025", [
        ("Rosalind", "I've left the bakery. I'm at the florist on Quay Street now, and I love it."),
        ("Padraig", "About time."),
    ]),
)
short = stored(SHORT)


def test_a_short_form_of_one_speakers_name_in_a_question_is_that_speaker(short):
    """"Ros" is never a name of the store (only a vocative, "Ros, are you alive?"): the question
    calls Rosalind by it, and asks about her job, so her new job goes above the old one."""
    rosalind = next(e.id for e in short.knowledge.entities() if e.name == "Rosalind")
    for question in ("Where does Ros work now?", "Is Ros's job still at the bakery?"):
        assert short.knowledge.query_entities(question) == [rosalind]
    assert above(ranked(short, "Where does Ros work now?"), "D2:1", "D1:2")


def test_the_short_form_a_question_calls_someone_by_is_no_word_of_its_topic():
    """"Ros" names Rosalind: a turn that says "Ros, are you alive?" is not on the topic of where she
    works."""
    question = present.present_question("Where does Ros work now?", load_rules(), ["Rosalind"])
    named = present.present_question("Where does Rosalind work now?", load_rules(), ["Rosalind"])
    assert question is not None and named is not None and question.slots
    assert question.terms == named.terms


def test_a_short_form_of_two_speakers_or_a_whole_other_name_names_no_one(tmp_path):
    """"Ali" starts both Alice and Alison: either may be meant. "Ro" is too short to be a form of
    anyone's, "Rosalinda" is another name, and "Rosalin" leaves out one letter only."""
    conversations = [locomo("a", ("Alice", "Rosalind"), ("9:00 am on 3 February, 2025", [
                         ("Alice", "Morning!"), ("Rosalind", "Morning to you.")])),
                     locomo("b", ("Alison", "Tom"), ("9:00 am on 3 February, 2025", [
                         ("Alison", "Hello there."), ("Tom", "Hi.")]))]
    path = tmp_path / "two.json"
    path.write_text(json.dumps(conversations), encoding="utf-8")
    with Memory(tmp_path / "two.db") as mem:
        mem.ingest(path)
        for question in ("Where does Ali live?", "Where does Ro live?", "Where does Rosalinda live?",
                         "Where does Rosalin live?"):
            assert mem.knowledge.query_entities(question) == [], question
        rosalind = next(e.id for e in mem.knowledge.entities() if e.name == "Rosalind")
        assert mem.knowledge.query_entities("Where does Rosa live?") == [rosalind]


HOMES_THEN = locomo("homes-then", ("Wanjiru", "Bram"),
    ("9:00 am on 12 January, 2025", [
        ("Wanjiru", "I'm living in the flat above the chemist on Dock Street, living on toast, living the dream."),
        ("Bram", "Glamorous."),
        ("Wanjiru", "Work is the bakery on Quay Street, early shifts, and the work never stops."),
    ]),
    ("9:00 am on 3 May, 2025", [
        ("Wanjiru", "We moved! A cottage in Kilkeel, with a garden."),
        ("Bram", "A garden!"),
        ("Wanjiru", "And I've left the bakery, I'm a gardener at the castle now."),
    ]),
    ("9:00 am on 20 October, 2025", [
        ("Wanjiru", "I moved in with Femi in Newry last week."),
        ("Bram", "Big step."),
    ]),
)
homes_then = stored(HOMES_THEN)


def test_a_slot_asked_in_the_past_tense_of_a_named_period_is_read_as_of_then(homes_then):
    """"Where was Wanjiru living in June 2025?" asks what held then: the move of May goes above the
    flat of January, and the move of October, after June, is not lifted above either; the same with
    the recall's reference time inside the period, and for her job."""
    june = ranked(homes_then, "Where was Wanjiru living in June 2025?")
    assert above(june, "D2:1", "D1:1")
    assert not above(june, "D3:1", "D2:1")
    assert above(ranked(homes_then, "Where was Wanjiru living in June 2025?", as_of="2025-06-10"), "D2:1", "D1:1")
    assert above(ranked(homes_then, "What was Wanjiru's job in June 2025?"), "D2:3", "D1:3")
    assert above(ranked(homes_then, "What was Wanjiru's job in the summer of 2025?", as_of="2025-08-31"), "D2:3", "D1:3")


def test_did_with_a_slots_verb_and_a_named_period_is_read_as_of_then(homes_then):
    """"Where did Wanjiru live in June 2025?" asks what held then, as "where was she living" does: the
    move of May above the flat of January, October's move not above May's; "did" lends its tense to
    the slot's verb ("live", "work")."""
    june = ranked(homes_then, "Where did Wanjiru live in June 2025?")
    assert above(june, "D2:1", "D1:1")
    assert not above(june, "D3:1", "D2:1")
    assert above(ranked(homes_then, "Where did Wanjiru work in June 2025?"), "D2:3", "D1:3")


def test_the_period_a_question_asks_about_is_its_first_and_last_days_and_no_word_of_its_topic():
    """The past period a question about a slot names is its first and last days (both "" for a
    season, whose bounds the recall's reference time gives), and the question the present stage
    reads carries it; its words ("June", "2025") are no word of the topic. A question about the
    present or an event asked about with a date names no such period."""
    rules = load_rules()
    periods = {"Where did Wanjiru live in June 2025?": present.Period("2025-06-01", "2025-06-30"),
               "Where was Wanjiru living in 2025?": present.Period("2025-01-01", "2025-12-31"),
               "Where was Wanjiru living in early 2026?": present.Period("", "")}
    for question, period in periods.items():
        assert present.asked_period(question, rules) == period, question
        asked = present.present_question(question, rules, ["Wanjiru"], period=period)
        assert asked is not None and asked.period == period and asked.terms == {"live"}, question
    for question in ("Where does Wanjiru live now?", "Where did Wanjiru go in June 2025?",
                     "What did Joanna accomplish in January 2022?"):
        assert present.asked_period(question, rules) is None, question


def test_a_past_date_without_a_slot_or_with_did_and_an_event_keeps_the_order(homes_then):
    """An event asked about with a date ("Where was Wanjiru in June 2025?": no slot; "Where did
    Wanjiru go in June 2025?", "What major move did Wanjiru make in May 2025?": "did" with a verb of
    no slot, "move" before it) and a season with no reference time keep the strategy's order."""
    for question in ("Where was Wanjiru in June 2025?", "Where did Wanjiru go in June 2025?",
                     "What major move did Wanjiru make in May 2025?", "Where was Wanjiru living in early 2025?"):
        hits = homes_then.recall(question, top_k=10, strategy="fused").hits
        assert hits and not any({"change", "value"} & set(h.sources) for h in hits), question


def test_a_period_no_calendar_holds_is_no_period(homes_then):
    """"in December 9999" (its last day would be in year 10000), "in January 0000" and a day no
    month has are read as no period: the recall answers (before: a ValueError traceback)."""
    for question in ("Where was Wanjiru living in December 9999?", "Where was Wanjiru living in January 0000?",
                     "Where was Wanjiru living on 2025-02-30?"):
        assert homes_then.recall(question, top_k=10, strategy="fused").hits, question


def test_a_recall_as_of_a_date_shows_no_turn_said_after_it_in_its_graph(homes_then):
    """The walk's report (the Trace panel's nodes reached) keeps to what was said by the date, as
    the hits do: as of April 2025 no turn of May or October."""
    every = homes_then.recall("Where does Wanjiru live?", top_k=20, strategy="ppr")
    key_of = {h.item.id: h.item.key for h in every.hits}
    assert every.graph and any(key_of.get(int(n["node"].split(":")[1]), "").startswith("D3")
                               for n in every.graph["reached"] if n["kind"] == "item")
    then = homes_then.recall("Where does Wanjiru live?", top_k=20, strategy="ppr", as_of="2025-04-01")
    shown = [int(n["node"].split(":")[1]) for part in ("seeds", "reached") for n in then.graph[part] if n["kind"] == "item"]
    assert shown and all(key_of[i].startswith("D1") for i in shown)
