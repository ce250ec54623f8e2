"""Slot facts said in other words (engine/knowledge/restate.py): the extractor adds a restated twin
beside the literal fact, so that supersession can order changes people announce in their own words."""

from __future__ import annotations

import pytest

from .conftest import locomo, stored
from .test_extract_rules import said


@pytest.mark.parametrize("speaker, text, twins", [
    ("Lena", "Big news: I'm now head baker at Café Morgen.",
     [("Lena", "works at", "Café Morgen"), ("Lena", "works as", "head baker")]),
    ("Mira", "Work is great. I'm an intern at Inkwell Press and they let me write.",
     [("Mira", "works at", "Inkwell Press"), ("Mira", "works as", "intern")]),
    ("Greg", "I've been a train driver for ScotRail for thirty-one years.",
     [("Greg", "works at", "ScotRail"), ("Greg", "works as", "train driver")]),
    ("Lena", "Yep, I still work at Le Fournil as a pastry chef.", [("Lena", "works as", "pastry chef")]),
    ("Lena", "It's grey and freezing, but I still love living in Lyon.", [("Lena", "lives in", "Lyon")]),
    ("Lena", "I moved to Berlin in April. None at all, Berlin is home now.", [("Lena", "lives in", "Berlin")]),
    ("Mira", "I'm still living with my parents in Cardiff until I find a job.", [("Mira", "lives in", "Cardiff")]),
    ("Bea", "I'm renting a tiny room in Brixton above a launderette.", [("Bea", "lives in", "Brixton")]),
    ("Asha", "I share a flat in Bristol with my friend Rosa.", [("Asha", "lives in", "Bristol")]),
    ("Callum", "News from school: they've made me deputy head of Kelvin High.",
     [("Callum", "works as", "deputy head"), ("Callum", "works at", "Kelvin High")]),
    ("Mira", "They made me an assistant editor at Inkwell Press.",
     [("Mira", "works as", "assistant editor"), ("Mira", "works at", "Inkwell Press")]),
    ("Ingrid", "I've taken a job as a music teacher at a primary school.", [("Ingrid", "works as", "music teacher")]),
    ("Jo", "I started a job as a barista last week.", [("Jo", "works as", "barista")]),
    ("Rory", "I'm a staff nurse at the Western General, on the stroke ward.",
     [("Rory", "works at", "Western General"), ("Rory", "works as", "staff nurse")]),
    ("Rory", "I've been head chef at the Anchor since March.",
     [("Rory", "works at", "Anchor"), ("Rory", "works as", "head chef")]),
    ("Tomasz", "I quit Mirelle in August. I run the kitchen at Ostra now.", [("Tomasz", "works at", "Ostra")]),
    ("Bea", "I'm managing the bar at the Crown these days.", [("Bea", "works at", "Crown")]),
    ("Kofi", "We moved out of Leith, we're in a house in Portobello now.", [("Kofi", "lives in", "Portobello")]),
    ("Ana", "I'm in a tiny flat in Hackney these days.", [("Ana", "lives in", "Hackney")]),
])
def test_a_home_a_job_and_a_title_said_in_other_words_gain_a_slot_fact(speaker, text, twins):
    facts = said(text, speaker=speaker, addressee="Omar")
    for twin in twins:
        assert twin in facts, facts


@pytest.mark.parametrize("text", [
    "I'm always here for you, Omar!",  # LoCoMo's most common "is … for <name>": a mood, no job
    "I'm so happy for you and your new wife!",
    "I'm really thankful for my friends at Pride.",
    "Lisbon is a dream for a pescatarian, by the way.",
    "I'm a student at Leeds University.",
    "I miss living in Lyon.",
    "I live with my boyfriend and two cats.",
    "We rented a cottage in Cornwall for the holidays.",  # a holiday, not a home
    "We are renting a cottage in Cornwall for the summer.",
    "They made me cry at the Odeon.",
    "I lost my job as a banker yesterday.",  # a job ended, no title held
    "I got a job as soon as I could.",
    "I'm a regular at the Crown on Fridays.",
    "I was a waiter at the Ritz years ago.",  # past, not what holds
    "I'm a bridesmaid at the Harrisons' wedding in May!",  # their wedding, no employer
    "I'm a volunteer at the Oxfam shop on Saturdays.",  # unpaid: no employer
    "I run the book club at St Mary's.",  # a club run is no job there
    "I run the kitchen at Tom's on Sundays.",  # Tom's own
    "We're in a cottage in Cornwall for the week.",  # a holiday, not a home
    "I'm in a hotel room in Lisbon until Friday.",
    "I'm with a friend called Tom at the pub.",  # where the speaker is, with someone no partner
])
def test_moods_and_wishes_gain_no_slot_fact(text):
    facts = said(text, speaker="Lena", addressee="Omar")
    assert not [f for f in facts if f[1] in ("works at", "works as", "lives in", "is in a relationship with")], facts


LENA = locomo("lena", ("Lena", "Omar"),
    ("1:00 pm on 14 January, 2023", [
        ("Lena", "I still love living in Lyon, even in this grey winter."),
        ("Lena", "Yep, I still work at Le Fournil as a pastry chef."),
    ]),
    ("2:00 pm on 8 April, 2023", [("Lena", "I did it! I moved to Berlin last week.")]),
    ("3:00 pm on 19 August, 2023", [("Lena", "Big news: I'm now head baker at Café Morgen.")]),
)
moved = stored(LENA)


def test_the_restated_facts_are_superseded_by_the_later_change(moved):
    facts = {f"{f.subject} {f.predicate} {f.object}": f for f in moved.knowledge.facts()}
    by_id = {f.id: f for f in facts.values()}
    assert by_id[facts["Lena lives in Lyon"].superseded_by].object == "Berlin"
    assert by_id[facts["Lena works as pastry chef"].superseded_by].object == "head baker"
    role = moved.recall("What is Lena's role?", top_k=5, strategy="fused").hits
    keys = [h.item.key for h in role]
    assert "D3:1" in keys and ("D1:2" not in keys or keys.index("D3:1") < keys.index("D1:2"))


TOMASZ = locomo("tomasz", ("Tomasz", "Bea"),
    ("8:10 pm on 9 January, 2025", [("Tomasz", "I'm a sous chef at Mirelle in Soho, eighty covers a night.")]),
    ("9:45 pm on 3 October, 2025", [("Tomasz", "I quit Mirelle in August. I run the kitchen at Ostra now.")]),
)
kitchen = stored(TOMASZ)


def test_a_kitchen_run_somewhere_else_after_quitting_is_a_job_change(kitchen):
    """"I quit Mirelle in August. I run the kitchen at Ostra now": the job at Mirelle ends, and Ostra is
    where Tomasz works, a change the rules order."""
    facts = {f"{f.subject} {f.predicate} {f.object}": f for f in kitchen.knowledge.facts()}
    by_id = {f.id: f for f in facts.values()}
    assert by_id[facts["Tomasz works at Mirelle"].superseded_by].object == "Ostra"



KOFI = locomo("kofi", ("Kofi", "Jen"),
    ("6:15 pm on 9 March, 2024", [
        ("Kofi", "I live in Leith, right by the shore."),
        ("Kofi", "I'm going out with a lovely guy called Tunde."),
        ("Kofi", "My manager is Fiona, she's very supportive."),
    ]),
    ("12:40 pm on 21 September, 2024", [
        ("Kofi", "We moved out of Leith, we're in a house in Portobello now."),
        ("Kofi", "I broke up with Tunde in May, it was a long time coming."),
        ("Kofi", "Fiona left, my new manager is called Graham."),
    ]),
)
kofi = stored(KOFI)


def test_a_move_out_a_break_up_and_a_new_manager_said_in_other_words_are_changes(kofi):
    """Review's must-fire sentences (sessions 22-23): "moved out of" and "broke up with" are listed as
    ends in supersession.toml but the extractor reads "moved out" "of Leith" and "broke up" "with
    Tunde", so they ended nothing; "we're in a house in Portobello now" and "my new manager is called
    Graham" stated no value of a slot."""
    facts = {f"{f.subject} {f.predicate} {f.object}": f for f in kofi.knowledge.facts()}
    by_id = {f.id: f for f in facts.values()}
    replaced = {old: by_id[f.superseded_by].triple() for old, f in facts.items() if f.superseded_by}
    assert replaced == {"Kofi lives in Leith": "Kofi lives in Portobello",
                        "Kofi is going out with a lovely guy called Tunde": "Kofi broke up with Tunde",
                        "Kofi's manager is Fiona": "Kofi's new manager is called Graham"}, sorted(facts)
