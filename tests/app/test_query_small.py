"""The Query screen at 80×24, the smallest terminal the app is made for: the question whole, the
hits, and the reasons a hit ranked, the weightiest first."""

from __future__ import annotations

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
