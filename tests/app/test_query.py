"""Query: run a query in each mode, see why, mark hits used, send feedback, compare."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Select

from mnemoscope.screens.compare import CompareScreen
from tests.app.mnemo_testing import SIZE, settle, text_of


async def ask(pilot, text: str) -> None:
    app = pilot.app
    box = app.screen.query_one("#query-input")
    box.focus()
    box.value = ""
    await pilot.press(*text, "enter")
    await settle(pilot)


@pytest.mark.parametrize("mode", ["lite", "pro", "max"])
async def test_query_in_each_mode(demo_app, mode: str):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.query_one("#query-mode", Select).value = mode
        await ask(pilot, "what did Maya adopt")
        recall = screen.recall
        assert recall is not None and recall.mode == mode
        table = screen.query_one("#hits", DataTable)
        assert f"mode {mode}" in text_of(screen.query_one("#query-status"))
        knowledge = text_of(screen.query_one("#knowledge-body"))
        if app.services.has("knowledge"):
            assert recall.episodes and recall.facts and "Maya" in knowledge
        if mode == "lite" and app.services.has("knowledge"):
            assert not recall.hits  # Lite answers with episodes and facts alone
            assert screen.query_one("#query-detail").active == "knowledge"
            return
        assert table.row_count == len(recall.hits) > 0
        assert app.focused is table
        assert "found by" in text_of(screen.query_one("#why-body"))


async def test_hits_highlight_the_query_terms(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "starter")
        snippet = app.screen.query_one("#hits", DataTable).get_row_at(0)[-1]
        assert any("starter" in snippet.plain[s.start:s.end].lower() for s in snippet.spans)


async def test_a_query_that_returns_nothing_says_so(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "zzqxv")
        screen = app.screen
        assert screen.query_one("#hits", DataTable).row_count == 0
        assert "0 items" in text_of(screen.query_one("#query-status"))
        assert any(n.title == "No results" for n in app._notifications)


async def test_a_refused_query_is_a_message_not_a_traceback(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.run_query("x" * 30_000)  # longer than the engine accepts
        await settle(pilot)
        assert "limit" in text_of(screen.query_one("#query-status"))
        assert any(n.severity == "error" for n in app._notifications)
        await ask(pilot, "starter")
        assert screen.recall is not None and screen.recall.hits


async def test_mark_hits_used_and_send_feedback(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "sourdough starter")
        screen = app.screen
        table = screen.query_one("#hits", DataTable)
        await pilot.press("u")
        await pilot.press("down", "down", "u")
        assert table.get_row_at(0)[1] == "✓" and table.get_row_at(2)[1] == "✓"
        assert len(screen.used) == 2
        await pilot.press("up", "up", "u")  # toggles off
        assert table.get_row_at(0)[1] == "" and len(screen.used) == 1
        await pilot.press("f")
        await settle(pilot)
        if app.services.has("ranker"):
            assert any(n.title == "Feedback sent" for n in app._notifications)
        else:
            assert any("does not learn from feedback" in n.message for n in app._notifications)


async def test_compare_two_strategies(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "sourdough starter")
        await pilot.press("c")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        a, b = (screen.query_one(f"#hits-{s}", DataTable) for s in "ab")
        assert a.row_count > 0 and b.row_count > 0
        assert screen.query_one("#strategy-a", Select).value != screen.query_one("#strategy-b", Select).value
        marks = [a.get_row_at(r)[1] for r in range(a.row_count)]
        assert any(m.startswith("◆") for m in marks), "the two strategies share some hits"
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_escape_leaves_the_query_box_so_number_keys_switch_screens(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.focused.id == "query-input"
        await pilot.press("4")
        assert app.current_mode == "query" and app.focused.value == "4"
        await pilot.press("escape", "4")
        await settle(pilot)
        assert app.current_mode == "facts"
