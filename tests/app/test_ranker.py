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


def taught_with_event_2_unreadable(path: Path) -> None:
    """:func:`teach`, then the second event's row damaged behind the engine's back."""
    import sqlite3

    teach(path)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE feedback_events SET shown = 'oops' WHERE id = 2")
    conn.close()


async def on_the_ranker_screen(pilot) -> None:
    await settle(pilot)
    await pilot.app.switch_mode("ranker")
    await settle(pilot)


async def test_the_feedback_events_queries_read_whole_at_80_by_24(demo_copy):
    """At 80×24 the table sits beside the event panel: its query column was 12 cells wide, so
    each query read 'when did Isl…' (fails before: no row holds a whole query)."""
    teach(demo_copy)
    app = build_app(demo_copy)
    async with app.run_test(size=(80, 24)) as pilot:
        await on_the_ranker_screen(pilot)
        lines = screen_lines(app)
        assert TAUGHT
        for text in TAUGHT:
            assert any(text in line for line in lines), f"{text!r} not whole on the Ranker screen:\n" + "\n".join(lines)


async def test_a_feedback_log_that_cannot_be_read_is_told_at_open_and_its_event_listed(demo_copy):
    """Recall falls back to no feedback; before, the app said so only in the Ranker screen's state
    row, and its events table read empty with "No feedback yet" under a title counting 3 events
    (fails before: no notice, no row). Now a notice at open, the event named in the table, and
    the events that can be read are said not to count."""
    taught_with_event_2_unreadable(demo_copy)
    app = build_app(demo_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        (told,) = app.titled("Feedback not used")
        assert told.severity == "warning" and "feedback event 2 cannot be read" in told.message
        await on_the_ranker_screen(pilot)
        lines = screen_lines(app)
        assert any("cannot be read" in line and line.split("▏")[-1].split()[0] == "2" for line in lines), "\n".join(lines)
        assert any("Not counted now" in line for line in lines), "\n".join(lines)
        assert not any("No feedback yet" in line for line in lines)


async def test_an_event_that_cannot_be_read_is_removed_with_w_and_the_others_count_again(demo_copy):
    """Before, w on it said no event could be withdrawn, and only R (forget every event) brought
    feedback back (fails before). Now w asks, then removes that one event; the other two count."""
    from textual.widgets import DataTable

    taught_with_event_2_unreadable(demo_copy)
    app = build_app(demo_copy)
    async with app.run_test(size=(120, 40)) as pilot:
        await on_the_ranker_screen(pilot)
        ranker = app.screen
        ranker.query_one("#feedback-table", DataTable).focus()
        await pilot.press("down")  # events 3, 2, 1, newest first
        assert ranker.selected_key() == "2"
        await pilot.press("w", "right", "enter")
        await settle(pilot)
        (told,) = app.titled("Feedback removed")
        assert told.message == "Feedback event 2 removed; the other events are kept."
        assert ranker.query_one("#feedback-table", DataTable).row_count == 2
        assert not any("cannot be read" in line or "Not counted now" in line for line in screen_lines(app))
        status = app.services.memory.ranker.status()
        assert status.events == 2 and not status.log_unreadable
