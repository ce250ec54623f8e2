"""What must not be read as a change of the speaker's own: ordinary sentences said after her home,
job, partner and favourite food were stated (the review's must-not-fire corpus, 04:53). Someone
else's news ("My brother just moved to Glasgow"), a question to the listener ("Ben, you moved to
Bristol, right?"), a denied change ("I'm not moving to London"), a wish ("Sometimes I think about
moving to Edinburgh one day") and someone else's "new house" change nothing of Ava's, and the
present stage (engine/knowledge/present.py) lifts none of them; her own move still is."""

from __future__ import annotations

import pytest

from mnemoscope.engine import Memory

from .conftest import locomo, stored

ORDINARY = [
    "I spent the afternoon at my brother's new house in Harrogate.",
    "My brother just moved to Glasgow for a new job.",
    "My neighbour moved out last month, the flat next door is empty.",
    "Ben, you moved to Bristol, right? How is it?",
    "Sometimes I think about moving to Edinburgh one day.",
    "I'm not moving to London, no matter what my boss says.",
    "My sister left her job at the bank.",
    "Ben, how is the new job at Google going?",
    "I'm not leaving the library, don't worry.",
    "My best friend Jess got married last month!",
    "My sister is engaged to a guy called Marco.",
    "Tom's favourite food is pizza, obviously.",
    "Ben, you live in Oxford now, don't you?",
]
AVA = locomo("ordinary", ("Ava", "Ben"),
    ("9:00 am on 14 January, 2023", [
        ("Ava", "I live in Leeds, in a flat near the canal."),
        ("Ben", "Nice. Are you still at the library?"),
        ("Ava", "Yes, I work at the Central Library as an archivist."),
        ("Ava", "My husband Tom and I just celebrated ten years."),
        ("Ava", "My favourite food is ramen."),
    ]),
    ("6:00 pm on 20 May, 2023", [("Ben", "Hey Ava, how have you been?")]
     + [turn for sentence in ORDINARY for turn in (("Ava", sentence), ("Ben", "Sounds good!"))]),
    ("6:00 pm on 2 September, 2023", [
        ("Ava", "Big news: we moved to York last month, a little terraced house near the Minster."),
    ]),
)
ava = stored(AVA)
QUESTIONS = ["Where does Ava live now?", "Where does Ava work now?", "What does Ava do for a living now?",
             "Who is Ava's partner now?", "What is Ava's favourite food now?"]


@pytest.mark.parametrize("question", QUESTIONS)
def test_no_ordinary_sentence_is_lifted_as_a_change_of_hers(ava: Memory, question: str):
    hits = ava.recall(question, top_k=20, strategy="fused", as_of="2023-06-01").hits
    lifted = [h.item.text for h in hits if {"change", "value"} & set(h.sources) and h.item.key.startswith("D2:")]
    assert hits and lifted == []


def test_her_own_move_is_still_lifted(ava: Memory):
    hits = ava.recall("Where does Ava live now?", top_k=20, strategy="fused").hits
    assert hits[0].item.key == "D3:1" and {"change", "successor"} & set(hits[0].sources), \
        [(h.item.key, h.sources) for h in hits]
