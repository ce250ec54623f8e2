"""The demo's changes asked about as a newcomer asks after reading the README's list of them
(session 20's review, requests 05:26 and 05:29): fused recall, the CLI, the demo store."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import cli

BOULDER = "D7:25"  # Maya: "... Leah moved to Boulder in July and hikes the Flatirons every weekend."
DENVER = "D3:18"  # Maya: "Yes! Leah lives in Denver and has been hiking in the Rockies for years, ..."


def keys(store: Path, question: str) -> list[str]:
    code, out = cli("--store", store, "recall", question, "--strategy", "fused", "--json")
    assert code == 0, out
    hits = [h["item"]["key"] for h in json.loads(out)["hits"]]
    assert hits
    return hits


def test_where_leah_lives_now_is_her_move_not_maya_s_own_news(demo_store):
    """Fails before: Maya's "My favourite hike is now the Faulhorn trail" (D8:2) first, as a
    change: Leah's fact "moved to Boulder in July and hikes the Flatirons …" put "hike" on topic."""
    assert keys(demo_store, "where does Leah live now")[0] == BOULDER


def test_a_date_in_the_question_is_its_reference_time_for_what_replaced_what(demo_store):
    """Fails before: Boulder (July) first as Denver's successor, the successor stage reading now."""
    hits = keys(demo_store, "where did Leah live in June 2023")
    assert hits[0] == DENVER and (BOULDER not in hits or hits.index(BOULDER) > hits.index(DENVER))
    assert keys(demo_store, "where did Leah live in September 2023")[0] == BOULDER


def test_a_value_the_rules_found_held_through_the_period_asked_comes_first(demo_store):
    """Fails before: "I still work at Cartwheel" (D1:13, April) 12th, below turns of its day and
    later that name Daniel; the rules know Cartwheel held until July (Lumen Labs after)."""
    assert keys(demo_store, "where did Daniel work in May 2023")[0] == "D1:13"
    august = keys(demo_store, "where did Daniel work in August 2023")
    assert "D6:1" in august[:2] and "D1:13" not in august[:5]  # "I started at Lumen Labs", not Cartwheel


def test_the_latest_value_passes_a_turn_of_its_day_that_says_nothing_of_the_topic(demo_store):
    """Fails before: "Yes, August 12th in Spokane. And I'm the best man …" (D6:22, his brother's
    wedding) first, said later on the day Daniel told he started at Lumen Labs (D6:1): a turn of
    the value's day may tell a newer value, but not one with no word of the topic."""
    assert keys(demo_store, "where did Daniel work in August 2023")[:2] == ["D6:1", "D6:22"]


def test_a_home_held_through_most_of_the_period_asked_comes_before_a_plan_for_its_last_day(demo_store):
    """Fails before: "We found a place in Fremont … We move in on September 30th" (D6:20, said in
    July) first; the rules know the studio in Capitol Hill (D2:22) held until that day, 29 of
    September's 30. A move that happened later in the period is no answer to where he lived in it."""
    september = keys(demo_store, "where did Daniel live in September 2023")
    assert september[0] == "D2:22" and september.index("D2:22") < september.index("D6:20")
    assert keys(demo_store, "where did Daniel live in October 2023")[0] == "D8:17"  # "We moved into the new place"


def test_a_reply_is_about_whom_its_question_names_not_whom_the_asking_turn_spoke_of(demo_store):
    """Fails before: Daniel's "We moved into the new place in Fremont yesterday!" (D8:17) first as
    a change of Tomás's: it answers "… Tomás said she herded Bruno … Did you move yet?"."""
    hits = keys(demo_store, "where does Tomás live")
    assert hits[0] == "D1:6" and "D8:17" not in hits[:5]  # "… my coworker Tomás lives two blocks away"


def test_for_a_living_asks_a_job_not_what_replaced_a_home(demo_store):
    """Fails before: Daniel's move into the new place in Fremont (D8:17) first, lifted as the
    successor of "I live in a tiny studio …": "living" read as a word of where he lives."""
    hits = keys(demo_store, "what does Daniel do for a living now")
    assert hits[0] == "D6:1" and "D8:17" not in hits[:5]  # "I started at Lumen Labs last Monday"
