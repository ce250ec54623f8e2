"""An open question about the present asks for a kind of value, and the latest one said on its
topic answers it (engine/knowledge/latest.py answer_kind, present.py): "when is" asks a time (a
clock time, a day, a date); and "what happened with" asks the latest word on its topic, as "is …
still …?" does. Each is a change said without a change word: a meeting moved to another hour, an
operation done."""

from __future__ import annotations

from mnemoscope.engine import Memory

from .conftest import locomo, stored

RUTH = locomo("kinds", ("Ruth", "Ivo"),
    ("10:00 am on 9 January, 2024", [
        ("Ruth", "Pavel and I are planning a trip to Portugal in August, Porto and the Douro valley."),
        ("Ivo", "Lovely. How is work?"),
        ("Ruth", "Busy. Our weekly planning meeting is at 8:30 every Tuesday, far too early for planning anything."),
        ("Ruth", "And my shoulder is bad again, I'm on the waiting list for shoulder surgery."),
        ("Ivo", "My sister is going to Sicily in August."),
    ]),
    ("7:00 pm on 3 April, 2024", [
        ("Ruth", "Pavel and I split up, so Portugal is off."),
        ("Ivo", "I'm sorry. What about August, then?"),
        ("Ruth", "I'm going walking in Slovenia in August with two friends from choir. Mountains, not vineyards!"),
        ("Ruth", "The meeting is at 10:00 on Tuesdays now, the new director hates early starts."),
        ("Ruth", "I finally had the shoulder surgery last week, the physio starts Monday."),
    ]),
)
ruth = stored(RUTH)


def top(mem: Memory, question: str) -> str:
    hits = mem.recall(question, top_k=10, strategy="fused", as_of="2024-05-01").hits
    assert hits
    return hits[0].item.key


def test_when_asks_a_time_and_the_latest_time_said_answers(ruth):
    assert top(ruth, "When is Ruth's planning meeting?") == "D2:4"


def test_what_happened_asks_the_latest_word_on_its_topic(ruth):
    assert top(ruth, "What happened with Ruth's shoulder?") == "D2:5"


def test_as_of_before_the_change_the_older_value_answers(ruth):
    hits = ruth.recall("When is Ruth's planning meeting?", top_k=10, strategy="fused", as_of="2024-02-01").hits
    assert hits and hits[0].item.key == "D1:3"
