"""The Ranker screen: its feedback events read at every width."""

from __future__ import annotations

from pathlib import Path

from mnemoscope.engine import Memory
from tests.app.mnemo_testing import build_app, screen_lines, settle

TAUGHT = ("what did Maya adopt", "when did Isla move to Edinburgh", "how do I know the dough is ready")


def teach(path: Path) -> None:
    """One feedback event per question of TAUGHT, its second hit marked used."""
    with Memory(path) as mem:
        for text in TAUGHT:
            rec = mem.recall(text, strategy="fused")
            mem.feedback(rec.token, [rec.hits[1].item.id])


async def test_the_feedback_events_queries_read_whole_at_80_by_24(demo_copy):
    """At 80×24 the table sits beside the event panel: its query column was 12 cells wide, so
    each query read 'when did Isl…' (fails before: no row holds a whole query)."""
    teach(demo_copy)
    app = build_app(demo_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await app.switch_mode("ranker")
        await settle(pilot)
        lines = screen_lines(app)
        assert TAUGHT
        for text in TAUGHT:
            assert any(text in line for line in lines), f"{text!r} not whole on the Ranker screen:\n" + "\n".join(lines)


async def test_a_feedback_log_that_cannot_be_read_is_told_at_open_and_its_event_listed(demo_copy):
    """Recall falls back to no feedback; before, the app said so only in the Ranker screen's state
    row, and its events table read empty with "No feedback yet" under a title counting 3 events
    (fails before: no notice, no row). Now a notice at open, the event named in the table, and
    the events that can be read are said not to count."""
    import sqlite3

    teach(demo_copy)
    with sqlite3.connect(demo_copy) as conn:
        conn.execute("UPDATE feedback_events SET shown = 'oops' WHERE id = 2")
    conn.close()
    app = build_app(demo_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        (told,) = app.titled("Feedback not used")
        assert told.severity == "warning" and "feedback event 2 cannot be read" in told.message
        await app.switch_mode("ranker")
        await settle(pilot)
        lines = screen_lines(app)
        assert any("cannot be read" in line and line.split("▏")[-1].split()[0] == "2" for line in lines), "\n".join(lines)
        assert any("Not counted now" in line for line in lines), "\n".join(lines)
        assert not any("No feedback yet" in line for line in lines)
