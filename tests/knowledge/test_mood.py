"""What a sentence states as holding or done on the day it is said, and what it tells as still to
come (engine/knowledge/extract.py: realis), read from the verb group and the times it names."""

from __future__ import annotations

import pytest

from mnemoscope.engine.knowledge.extract import realis


@pytest.mark.parametrize("sentence", [
    "The vet wants to operate on her hip.",
    "I'm supposed to start at the depot soon.",
    "We're thinking of selling the van.",
    "He'll take over the shop.",
    "She’ll take over the shop.",
    "They might close the pool.",
    "We view the flat on Saturday.",
    "Maybe October.",
    "The 14th of November in Cork.",
])
def test_a_plan_a_wish_or_an_appointment_states_nothing_as_of_its_day(sentence):
    assert realis(sentence, "2025-09-10") == ""


@pytest.mark.parametrize("sentence", [
    "I sold the van last week.",
    "We moved to Cork in May.",
    "I've handed in my notice.",
    "The pool is open Monday to Friday.",
    "From June it's open Thursday to Sunday.",
    "I'm leaving the depot.",
    "I swim on Wednesdays.",
])
def test_what_holds_or_was_done_is_stated(sentence):
    assert realis(sentence, "2025-09-10") == sentence


@pytest.mark.parametrize("sentence", [
    "I'd say I have three cats.",
    "I would guess we keep about forty hives now.",
    "I'll admit I sold the car.",
    "I'd imagine the rent is 900 a month.",
])
def test_a_modal_before_a_verb_of_saying_or_thinking_frames_what_follows_as_stated(sentence):
    """"I'd say", "I'll admit": the modal hedges the saying, not what is said, which holds now."""
    assert realis(sentence, "2025-09-10") == sentence


@pytest.mark.parametrize("sentence", [
    "We'll think about moving to Cork.",
    "I'll think about selling the van.",
    "We would think of leaving the depot.",
    "I'll think it over.",
    "We'll think the offer over.",
])
def test_a_modal_before_thinking_about_something_weighs_what_is_to_come(sentence):
    """"Think about/of", "think it over": no clause follows the verb, which is itself what is still
    to come (a plan under consideration, as "we're thinking of moving" is)."""
    assert realis(sentence, "2025-09-10") == ""


@pytest.mark.parametrize("sentence", [
    "I'd think that we have enough hay.",
    "I'd say my sister sold the van.",
])
def test_a_clause_after_the_verb_of_saying_is_what_is_said(sentence):
    assert realis(sentence, "2025-09-10") == sentence


def test_a_modal_before_a_verb_of_saying_still_tells_a_plan_said_after_it():
    assert realis("I'd say we'll move to Cork.", "2025-09-10") == ""


def test_only_the_clauses_still_to_come_are_left_out():
    assert realis("I'll be honest, I've handed in my notice.", "2025-09-10") == "I've handed in my notice."
    assert realis("We're thinking of leaving Cork, the rent went up.", "2025-09-10") == "the rent went up."


def test_an_appointment_is_stated_once_its_time_has_come():
    said = "2025-09-10"
    assert realis("I start at the depot in November.", said, by="2025-10-01") == ""
    assert realis("I start at the depot in November.", said, by="2025-12-01") == "I start at the depot in November."
    assert realis("We view the flat on Saturday.", said, by="2025-09-20") == "We view the flat on Saturday."
    assert realis("The vet wants to operate on her hip.", said, by="2030-01-01") == ""  # no time: never


def test_a_plan_that_starts_from_a_month_comes_in_that_month():
    said = "2025-04-10"
    assert realis("From June we'll open Thursday to Sunday.", said, by="2025-05-01") == ""
    assert realis("From June we'll open Thursday to Sunday.", said, by="2025-07-01") == "From June we'll open Thursday to Sunday."


@pytest.mark.parametrize("sentence", [
    "In the winter I work at the ski shop.",
    "The garden is lovely in the spring.",
    "I coach the team during the summer.",
    "In the summer I work at the sailing school instead.",
    "We moved to Cork in the spring.",
])
def test_a_season_in_the_present_or_the_past_is_a_habit_or_done_not_a_plan(sentence):
    """A present-simple clause with a season tells a habit ("In the winter I work at the ski shop"),
    said while the season runs or not (the review's cases against reading a season as the next one)."""
    assert realis(sentence, "2024-06-05") == sentence


def test_a_season_with_a_verb_group_to_come_is_to_come():
    assert realis("We'll move to Cork in the spring.", "2024-10-05") == ""


@pytest.mark.parametrize("sentence", [
    "We will sell the car and move to Cork.",
    "I'm going to hand in my notice and start at the bakery.",
    "We'll sell the house, and buy a boat.",
])
def test_a_verb_that_shares_a_plans_subject_is_part_of_the_plan(sentence):
    """"We will sell the car and move to Cork": "move to Cork" has no verb group of its own, it
    shares "will" with "sell", so the move is still to come too."""
    assert realis(sentence, "2025-09-10") == ""


def test_a_clause_with_its_own_subject_after_a_plan_keeps_its_own_verb_group():
    assert realis("I'll sell the van and work is busy.", "2025-09-10") == "and work is busy."
