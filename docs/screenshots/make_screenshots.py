"""Render the README's screenshots from the app itself (Textual's SVG export), on the demo store.

    python docs/screenshots/make_screenshots.py            # writes docs/screenshots/*.svg at 120x36
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from textual.widgets import Input, Select  # noqa: E402

from mnemoscope.app.services import DEMO_DIR, Services  # noqa: E402
from mnemoscope.app.tui import make_app  # noqa: E402

OUT = Path(__file__).resolve().parent
SIZE = (120, 36)


async def settle(pilot) -> None:
    app = pilot.app
    quiet = 0
    while quiet < 5:
        await pilot.pause(0.05)
        quiet = 0 if app.tasks or not app.store_generation else quiet + 1
    await pilot.pause(0.2)


async def ask(pilot, text: str) -> None:
    screen = pilot.app.screen
    screen.query_one("#query-strategy", Select).value = "fused"
    box = screen.query_one("#query-input", Input)
    box.value = text
    box.focus()
    await pilot.press("enter")
    await settle(pilot)


async def shoot(store: Path, name: str, mode: str, steps) -> None:
    app = make_app(Services(store, label="demo"), offer_demo=False, browse_root=DEMO_DIR, animate=False,
                   show_timings=False, start_mode=mode)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await steps(pilot)
        await settle(pilot)
        app.clear_notifications()
        await pilot.pause(0.2)
        (OUT / f"{name}.svg").write_text(app.export_screenshot(title=f"Mnemoscope · {name}"), encoding="utf-8")
        print("wrote", OUT / f"{name}.svg")


async def main() -> None:
    Input.cursor_blink = False
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "demo.db"
        from mnemoscope.engine import Memory

        with Memory(store) as mem:
            mem.ingest([DEMO_DIR])

        async def nothing(pilot) -> None:
            return None

        async def query(pilot) -> None:
            await ask(pilot, "what did Maya adopt")
            await pilot.press("u", "down")

        async def trace(pilot) -> None:
            await ask(pilot, "tell me more about sourdough starters")
            await pilot.press("t")

        async def compare(pilot) -> None:
            await ask(pilot, "sourdough starter")
            await pilot.press("c")

        async def inbox(pilot) -> None:
            await pilot.press("i")

        async def topics(pilot) -> None:
            await pilot.press("down", "enter", "down")

        async def ingest(pilot) -> None:
            pilot.app.screen.toggle(DEMO_DIR / "conversation.json")
            await pilot.press("p")

        async def ranker(pilot) -> None:
            await pilot.app.switch_mode("query")
            await settle(pilot)
            for text in ("sourdough starter", "what did Maya adopt", "alpine weather", "attention heads",
                         "Pepper the dog", "how long to proof bread"):
                await ask(pilot, text)
                await pilot.press("u", "down", "u", "f")
                await settle(pilot)
            await pilot.press("7")

        await shoot(store, "query", "query", query)
        await shoot(store, "trace", "query", trace)
        await shoot(store, "compare", "query", compare)
        await shoot(store, "topics", "topics", topics)
        await shoot(store, "facts", "facts", nothing)
        await shoot(store, "inbox", "facts", inbox)
        await shoot(store, "memories", "memories", nothing)
        await shoot(store, "ingest", "ingest", ingest)
        await shoot(store, "sources", "sources", nothing)
        await shoot(store, "ranker", "query", ranker)


if __name__ == "__main__":
    asyncio.run(main())
