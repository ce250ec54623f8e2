"""A question about now on a slot with a newer claim (an open clash of the inbox, or a recorded
supersession) finds that claim first, marked while nobody has decided it (engine.knowledge.claims).

The demo's Maya moves from Sellwood "into a little house with a big backyard", a place the rules
cannot tell from Sellwood: the clash waits in the inbox, and the turn shares no word with "where
does Maya live now?" (it ranked about 33rd, below the present stage's window)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import cli

MOVE = "D6:17"  # "... And I moved into a little house with a big backyard, ten minutes from the bakery."
SELLWOOD = "D1:6"  # "I live in Sellwood, ..."
QUESTION = "where does Maya live now"


def recall(store: Path, *extra: str) -> list[dict]:
    code, out = cli("--store", store, "recall", QUESTION, "--strategy", "fused", "--json", *extra)
    assert code == 0, out
    hits = json.loads(out)["hits"]
    assert hits
    return hits


def home_clash(store: Path) -> int:
    code, out = cli("--store", store, "conflicts", "--json")
    assert code == 0, out
    clashes = [c["id"] for c in json.loads(out) if c["kind"] == "clash" and c["reason"].startswith("home:")]
    assert len(clashes) == 1, out
    return clashes[0]


def test_the_newer_claim_of_an_open_clash_comes_first_and_names_its_conflict(demo_store):
    hits = recall(demo_store)
    conflict = home_clash(demo_store)
    first = hits[0]
    assert first["item"]["key"] == MOVE, [h["item"]["key"] for h in hits]
    assert "claim" in first["sources"]
    assert first["conflict"] == {"conflict": conflict, "slot": "home", "newer": True,
                                 "fact": "Maya moved into little house with a big backyard",
                                 "other": "Maya lives in Sellwood"}
    older = next(h for h in hits if h["item"]["key"] == SELLWOOD)
    assert older["conflict"]["newer"] is False and older["conflict"]["conflict"] == conflict
    code, text = cli("--store", demo_store, "recall", QUESTION, "--strategy", "fused")
    assert f"the newer claim of open conflict #{conflict} (home), not decided yet" in text.splitlines()[2], text


def test_as_of_before_the_move_the_claim_is_not_brought(demo_store):
    hits = recall(demo_store, "--as-of", "2023-06-01")
    assert MOVE not in [h["item"]["key"] for h in hits]
    assert hits[0]["item"]["key"] == SELLWOOD and hits[0]["conflict"] is None
    assert not any("claim" in h["sources"] for h in hits)


def test_a_question_about_the_past_or_another_slot_is_left_alone(demo_store):
    code, out = cli("--store", demo_store, "recall", "where did Maya live before", "--strategy", "fused", "--json")
    assert code == 0, out
    past = json.loads(out)["hits"]
    assert past and not any("claim" in h["sources"] for h in past)
    code, out = cli("--store", demo_store, "recall", "where does Daniel live now", "--strategy", "fused", "--json")
    assert code == 0, out
    daniel = json.loads(out)["hits"]
    assert daniel and MOVE not in [h["item"]["key"] for h in daniel[:20]]
    # about her mother's home, not hers: Maya is named only as whose mother it is
    code, out = cli("--store", demo_store, "recall", "where does Maya's mother live now", "--strategy", "fused", "--json")
    assert code == 0, out
    mother = json.loads(out)["hits"]
    assert mother and not any("claim" in h["sources"] for h in mother), [h["sources"] for h in mother]


def test_once_decided_the_claim_is_no_longer_marked_and_retired_it_is_not_brought(demo_copy):
    conflict = home_clash(demo_copy)
    assert cli("--store", demo_copy, "conflicts", "accept", str(conflict))[0] == 0  # the move replaces Sellwood
    hits = recall(demo_copy)
    assert hits[0]["item"]["key"] == MOVE and hits[0]["conflict"] is None
    assert all(h["conflict"] is None for h in hits)

    code, out = cli("--store", demo_copy, "conflicts", "log", "--json")
    assert code == 0, out
    assert cli("--store", demo_copy, "conflicts", "undo", str(json.loads(out)[0]["id"]))[0] == 0
    assert cli("--store", demo_copy, "conflicts", "retire", str(conflict))[0] == 0  # the move is not believed
    hits = recall(demo_copy)
    assert hits[0]["item"]["key"] != MOVE and not any("claim" in h["sources"] for h in hits)


def test_a_fact_in_an_open_clash_is_listed_so(demo_store):
    """`facts` marks a fact the inbox holds in an open clash (review, requests 07:46 #1): Sellwood
    reads "since 2023-04-03", current, while a person has yet to decide it against the move."""
    conflict = home_clash(demo_store)
    code, out = cli("--store", demo_store, "facts", "--entity", "Maya")
    assert code == 0 and f"—[lives in]→ Sellwood  [since 2023-04-03]  in open conflict #{conflict}" in out, out
    code, out = cli("--store", demo_store, "facts", "--entity", "Maya", "--json")
    waiting = {f["object"]: f.get("open_conflicts") for f in json.loads(out)}
    assert waiting["Sellwood"] == [conflict] and waiting["little house with a big backyard"] == [conflict]
    assert sum(1 for v in waiting.values() if v) == 2


def test_the_inbox_from_the_cli_shows_each_side_where_its_turn_says_it(demo_store):
    """`mnemoscope conflicts` shows an item behind a side around the words that side names, as
    the app's inbox does: the move is said at the end of a long turn about a new job, and its
    line showed only the turn's first words (the job), not the house the clash is about."""
    code, out = cli("--store", demo_store, "conflicts")
    moves = [line for line in out.splitlines() if line.strip().startswith(MOVE)]
    assert code == 0 and len(moves) == 1, out
    assert "Maya: …" in moves[0] and "moved into a little house with a big backyard" in moves[0]
