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
