"""A question about what holds now (engine/query.py's asks_now) favours newer items a little
(the ``present_recency`` feature): of two turns that answer it equally well, or equally badly,
the newer is likelier what holds now. A question with a past tense or a date, or one asking what
has happened so far, is left as it was."""

from pathlib import Path

import numpy as np
import pytest

from mnemoscope.engine import Memory
from mnemoscope.engine.query import asks_now
from mnemoscope.engine.recall import strategies
from mnemoscope.engine.records import Item, ParsedSource, Source

OFFICE = "Mornings at the office on the quay, and the evenings are mine."  # the two alike but for the place
SHOP = "Mornings at the shop on the quay, and the evenings are mine."
SESSIONS = [
    ("2025-03-06T23:40:00", [("Ilse", "How are things with you?"), ("Raúl", OFFICE), ("Ilse", "Talk soon!")]),
    ("2025-10-02T22:05:00", [("Ilse", "How are things with you?"), ("Raúl", SHOP), ("Ilse", "Talk soon!")]),
]


@pytest.fixture
def mem(tmp_path: Path):
    items = [Item(text=text, kind="turn", key=f"D{s}:{n}", position=10 * s + n, speaker=speaker, timestamp=when)
             for s, (when, turns) in enumerate(SESSIONS, 1) for n, (speaker, text) in enumerate(turns, 1)]
    with Memory(tmp_path / "now.db") as memory:
        memory.ingest_parsed([ParsedSource(Source(name="chat", kind="conversation", content_hash="h"), items)])
        yield memory


@pytest.mark.parametrize("question, now", [
    ("What does Raúl do for a living?", True),
    ("Who is Ilse crewed with these days?", True),
    ("Where did Raúl work?", False),
    ("What was Raúl's job?", False),
    ("Where was Raúl living in June 2025?", False),
    ("What did Raúl do before the hostel?", False),
    ("Which cities has Lena visited on her trips?", False),  # so far: every one counts, not the newest
    ("What has Joanna suggested to Nate?", False),
    ("Which style of yoga has Maria been practicing?", True),  # it goes on
    ("How long has Melanie been painting?", True),
])
def test_a_question_asks_what_holds_now_unless_it_names_a_past_or_a_date(question, now):
    assert asks_now(question) is now


def test_a_question_about_now_ranks_the_newer_of_two_unmatched_answers_first(mem: Memory):
    def order(question: str) -> tuple[list[str], dict[str, dict[str, float]]]:
        hits = mem.recall(question, strategy="fused", top_k=8).hits
        assert hits
        return [h.item.text for h in hits], {h.item.text: h.features for h in hits}

    ranked, features = order("What does Raúl do for a living?")
    assert features[SHOP]["present_recency"] == 1.0 and features[OFFICE]["present_recency"] == 0.0
    assert ranked.index(SHOP) < ranked.index(OFFICE)  # the older ranked first before the feature
    _, past = order("What did Raúl do for a living in March 2025?")
    assert {f["present_recency"] for f in past.values()} == {0.0}


def test_as_of_a_date_the_newest_item_said_by_then_is_now_and_a_month_weighs_as_much(tmp_path: Path):
    """As of a date, the recency clock runs as of it: the newest item said by then is 1. The unit of
    age stays the store's span: two turns differ as much as of that date as today (measured against
    the span up to the date instead, newer turns outranked current evidence: docs/benchmarks.md)."""
    bakery = "Mornings at the bakery on the quay, and the evenings are mine."
    sessions = [("2025-01-10T20:00:00", [("Raúl", bakery)]), *SESSIONS]
    items = [Item(text=text, kind="turn", key=f"D{s}:{n}", position=10 * s + n, speaker=speaker, timestamp=when)
             for s, (when, turns) in enumerate(sessions, 1) for n, (speaker, text) in enumerate(turns, 1)]
    with Memory(tmp_path / "then.db") as mem:
        mem.ingest_parsed([ParsedSource(Source(name="chat", kind="conversation", content_hash="h"), items)])
        now = {h.item.text: h.features for h in mem.recall("What does Raúl do for a living?", strategy="fused").hits}
        hits = mem.recall("What does Raúl do for a living?", strategy="fused", as_of="2025-06").hits
    then = {h.item.text: h.features for h in hits}
    assert SHOP not in then and then[OFFICE]["present_recency"] == 1.0 and now[SHOP]["present_recency"] == 1.0
    gap = {name: f[OFFICE]["present_recency"] - f[bakery]["present_recency"] for name, f in (("now", now), ("then", then))}
    assert 0.1 < gap["then"] == pytest.approx(gap["now"])
    assert [h.item.text for h in hits].index(OFFICE) < [h.item.text for h in hits].index(bakery)


def test_as_of_a_date_fused_ranks_its_candidates_as_the_stores_clock_does(mem: Memory):
    """Before the items said after the date leave (engine.as_of.said_by), fused ranks every
    candidate as it does now: the recency as of a date is the store clock's shifted, those said after
    it above 1, so what reranks the list before the filter finds it in the same order."""
    question = "What does Raúl do for a living?"
    rankings = {}
    for when in (None, "2025-06"):
        q, signals = mem.query(question, strategy="fused", top_k=8, as_of=when)
        rankings[when] = strategies(mem, mem.areas)["fused"](q, signals)
    now, then = rankings[None], rankings["2025-06"]
    assert len(now.slots) > 2 and list(then.slots) == list(now.slots)
    shift = then.features["recency"] - now.features["recency"]
    assert np.allclose(shift, shift[0]) and shift[0] > 0 and then.features["recency"].max() > 1.0
