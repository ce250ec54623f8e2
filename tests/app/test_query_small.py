"""The Query screen at 80×24, the smallest terminal the app is made for: the question whole, the
hits, and the reasons a hit ranked, the weightiest first."""

from __future__ import annotations

from textual import events

from tests.app.mnemo_testing import ask, screen_lines, settle


async def test_the_answer_and_its_reasons_read_at_80_by_24(demo_app):
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        await ask(pilot, "when did Maya adopt Pepper", strategy="fused")
        recall = screen.recall
        lines = screen_lines(app)
        assert any(line.strip() == "when did Maya adopt Pepper" for line in lines), "\n".join(lines)  # whole
        tabs = next(n for n, line in enumerate(lines) if line.strip().startswith("Why  Text"))
        hits = [line for line in lines[:tabs] if line.split()[:1] and line.split()[0].isdigit()]
        assert len(hits) >= 6, "\n".join(lines)
        panel = lines[tabs + 1:-1]  # to the key bar
        assert panel[0].strip().startswith("rank 1 · score"), "\n".join(panel)
        # the features that moved the score most, in that order, each on a row of its own
        hit = recall.hits[0]
        moved = sorted((n for n in hit.features if n in recall.weights), key=lambda n: -abs(recall.weights[n] * hit.features[n]))
        assert moved
        rows = [line.split()[0] for line in panel[2:] if line.split()]
        assert len(rows) >= 5 and rows[:5] == moved[:5], ("\n".join(panel), moved[:5])


async def test_slash_then_keys_typed_fast_go_to_the_query_box(demo_app):
    """'/' and what is typed after it at once (a fast typist, keys queued while the app was busy)
    are the query box's: they went to the hits, whose keys they are too ('w' the Why panel)."""
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = app.screen
        await ask(pilot, "sourdough starter", strategy="fused")
        assert app.focused is screen.query_one("#hits")

        def burst(*keys: str) -> None:
            for key in keys:
                app.post_message(events.Key(key, key if len(key) == 1 else None))

        burst("slash", "ctrl+u", *"when", "enter")
        await settle(pilot)
        assert screen.recall.query == "when"


async def test_slash_is_text_in_every_box(demo_app):
    """Review's 17:23: with '/' a priority binding no box took it ('and/or' became 'andor', a path
    typed on the Ingest screen switched to the query box). In a box it is text; elsewhere the box."""
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#query-input")
        await pilot.press(*"sourdough and/or starter")
        assert box.value == "sourdough and/or starter"
        await pilot.press("escape", "1")
        await settle(pilot)
        path = app.screen.query_one("#ingest-path")
        path.focus()
        await pilot.press("ctrl+u", *"/tmp/x/y.md")
        assert app.current_mode == "ingest" and path.value == "/tmp/x/y.md"
        await pilot.press("escape", "slash")  # outside a box: the query box
        assert app.current_mode == "query" and app.focused is box
