"""The Query screen as of a date: the hits, the Why, the Knowledge and the trace answer with what
the store had heard and what held then, as `mnemoscope recall --as-of` does."""

from __future__ import annotations

from textual.widgets import Input

from mnemoscope.app.widgets.trace import TraceView
from tests.app.mnemo_testing import SIZE, ask, settle, text_of


async def test_a_question_asked_as_of_a_date_and_a_date_that_is_none(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await ask(pilot, "where does Daniel work", strategy="fused")
        now = screen.recall
        assert any(h.item.timestamp > "2023-05-01" for h in now.hits), [h.item.timestamp for h in now.hits]

        await pilot.press("escape", "a")  # the as-of box, from the hits
        assert app.focused is screen.query_one("#query-date")
        await pilot.press(*"2023-05-01", "enter")
        await settle(pilot)
        then = screen.recall
        assert then is not now and then.hits and (now.as_of, then.as_of) == (None, "2023-05-01")
        assert all(h.item.timestamp[:10] <= "2023-05-01" for h in then.hits), [h.item.timestamp for h in then.hits]
        assert app.focused is screen.query_one("#hits")  # the keys act on the hits again
        assert "as of 2023-05-01" in text_of(screen.query_one("#query-status"))
        assert "as of 2023-05-01" in text_of(screen.query_one("#why-body"))
        await pilot.press("k")
        knowledge = text_of(screen.query_one("#knowledge-body"))
        assert knowledge.startswith("As of 2023-05-01") and "Cartwheel" in knowledge and "Lumen" not in knowledge
        await pilot.press("t")
        await settle(pilot)
        assert text_of(screen.query_one(TraceView).query_one("#trace-status")).startswith("as of 2023-05-01")

        # a date that is none: one notice, no traceback, the recall and the date in force unchanged
        await pilot.press("escape", "a", "ctrl+u", *"2023-13-45", "enter")
        await settle(pilot)
        assert [n.severity for n in app.titled("As of")] == ["error"], app.notices
        assert "2023-13-45" in app.titled("As of")[0].message and "\n" not in app.titled("As of")[0].message
        assert screen.recall is then
        await pilot.press("escape")  # leaving the box puts back the date in force
        assert screen.query_one("#query-date", Input).value == "2023-05-01"

        await pilot.press("a", "ctrl+u", "enter")  # empty: now
        await settle(pilot)
        assert [h.item.id for h in screen.recall.hits] == [h.item.id for h in now.hits]
        assert "as of" not in text_of(screen.query_one("#query-status"))


async def test_a_hit_moved_after_it_was_scored_says_so(demo_app):
    """'where does Daniel work': the present rule puts a newer turn telling of a change above the
    hits it passes, with the place's score (review's 16:50: the Why listed its reasons as if they
    made that score). Its found letter is explained in the help, and its Why says it was moved."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await ask(pilot, "where does Daniel work", strategy="fused")
        moved = [n for n, h in enumerate(screen.recall.hits) if {"change", "value", "successor"} & set(h.sources)]
        assert moved, [h.sources for h in screen.recall.hits]
        table = screen.query_one("#hits")
        table.move_cursor(row=moved[0])
        await pilot.pause()
        letters = table.get_row_at(moved[0])[3]
        assert set("CVS") & set(letters) and all(f"**{c}**" in screen.HELP for c in letters), letters
        why = text_of(screen.query_one("#why-body"))  # in words a newcomer reads ("the place's" did not say whose)
        assert "▲ moved up" in why and "its score is that of the place it took, not the sum of the features below" in why, why


async def test_the_newer_claim_of_an_open_conflict_comes_first_and_its_why_names_the_conflict(demo_app):
    """'where does Maya live now': her move "into a little house with a big backyard" names no
    place, so its clash with Sellwood waits in the inbox; the move comes first, found by L, and
    its Why says that it is one side of that conflict, not decided yet, and where to decide it."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await ask(pilot, "where does Maya live now", strategy="fused")
        first = screen.recall.hits[0]
        assert first.item.key == "D6:17" and "claim" in first.sources, [h.item.key for h in screen.recall.hits]
        table = screen.query_one("#hits")
        table.move_cursor(row=0)
        await pilot.pause()
        assert "L" in table.get_row_at(0)[3] and "**L**" in screen.HELP
        why = text_of(screen.query_one("#why-body"))
        assert "▲ moved up: a newer claim of the slot asked" in why, why
        assert f"the newer claim of open conflict #{first.conflict.conflict} (home), not decided yet" in why, why
        assert "inbox (4, then i)" in why, why


async def test_a_hit_moved_up_as_the_latest_value_is_not_called_a_change(demo_app):
    """Review (requests 07:46 #2): as of 2023-06-30, "where does Maya live now" puts "I live in
    Sellwood" (D1:6) first: it is the latest home said by then, no change. Fails before: marked C,
    whose Why and help said "a newer change, or the latest value" (a person could not tell which);
    now V, a newer value, and C says a change only."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await ask(pilot, "where does Maya live now", strategy="fused")
        await pilot.press("escape", "a", *"2023-06-30", "enter")
        await settle(pilot)
        first = screen.recall.hits[0]
        assert first.item.key == "D1:6" and "value" in first.sources and "change" not in first.sources, \
            [(h.item.key, h.sources) for h in screen.recall.hits]
        table = screen.query_one("#hits")
        table.move_cursor(row=0)
        await pilot.pause()
        assert "V" in table.get_row_at(0)[3] and "C" not in table.get_row_at(0)[3]
        why = text_of(screen.query_one("#why-body"))
        assert "▲ moved up: a newer value of what the question asks" in why and "a newer change" not in why, why
        help_text = " ".join(screen.HELP.split())
        assert "**V** it states a value of what the question asks" in help_text
        assert "**C** it tells of a change of what the question asks" in help_text
