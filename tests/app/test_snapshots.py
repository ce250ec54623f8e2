"""Snapshots of every screen on the demo store at 100x32 (cursor blink off, no timings); queries
pin the fused strategy, so that the snapshots do not follow the engine's default.

The screens that only read the store are taken in one app session, one after the other (an app
start and a first query cost more than most of the screens); the Ranker screen, which needs
feedback written first, has its own.

Regenerate after an intended change: ``pytest tests/app --snapshot-update``, then look at the
changed SVGs (rsvg-convert to PNG).
"""

from __future__ import annotations

import time
from typing import Awaitable, Callable

import pytest
from pytest_textual_snapshot import SVGImageExtension
from syrupy import SnapshotAssertion
from textual.pilot import Pilot

from mnemoscope.screens.ranker import RankerScreen
from tests.app.mnemo_testing import DEMO_DIR, SIZE, ask, build_app, screenshot, settle

Steps = Callable[[Pilot], Awaitable[None]]


@pytest.fixture(autouse=True)
def no_llm_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MNEMOSCOPE_LLM_BASE_URL", "MNEMOSCOPE_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def pressing(*keys: str) -> Steps:
    async def steps(pilot: Pilot) -> None:
        await pilot.press(*keys)
        await settle(pilot)

    return steps


def showing(mode: str, *keys: str) -> Steps:
    """Switch to ``mode``, then press ``keys``."""
    async def steps(pilot: Pilot) -> None:
        await pilot.app.switch_mode(mode)
        await settle(pilot)
        await pressing(*keys)(pilot)

    return steps


async def help_over_the_hits(pilot: Pilot) -> None:
    pilot.app.screen.query_one("#hits").focus()
    await pilot.press("question_mark")
    await pilot.pause()


async def a_hit_marked_used(pilot: Pilot) -> None:
    await pilot.press("escape")  # the help, still open
    await ask(pilot, "what did Maya adopt", strategy="fused")
    await pilot.press("u")


async def the_trace(pilot: Pilot) -> None:
    await ask(pilot, "tell me more about sourdough starters", strategy="fused")
    await pilot.press("t")
    await pilot.pause()


async def two_strategies_compared(pilot: Pilot) -> None:
    await ask(pilot, "sourdough starter", strategy="fused")
    await pressing("c")(pilot)


async def a_conversation_previewed(pilot: Pilot) -> None:
    await pilot.press("escape")  # the compare view
    await pilot.app.switch_mode("ingest")
    await settle(pilot)
    pilot.app.screen.toggle(DEMO_DIR / "conversation.json")
    await pressing("p")(pilot)


# In this order, in one app: each step starts where the previous one left the app.
READ_ONLY_SCREENS: list[tuple[str, Steps]] = [
    ("help", help_over_the_hits),
    ("query", a_hit_marked_used),
    ("trace", the_trace),
    ("compare", two_strategies_compared),
    ("ingest", a_conversation_previewed),
    ("sources", showing("sources", "down")),  # the conversation
    ("topics", showing("topics", "down", "enter")),
    ("facts", showing("facts")),
    ("memories", showing("memories")),
]


async def test_each_screen_that_reads_the_store(snapshot: SnapshotAssertion, demo_copy):
    snapshots = snapshot.use_extension(SVGImageExtension)
    differ: list[str] = []
    app = build_app(demo_copy)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for name, steps in READ_ONLY_SCREENS:
            await steps(pilot)
            if not snapshots(name=name) == await screenshot(pilot):
                differ.append(name)
    assert not differ, f"these screens differ from their snapshots: {differ}"


def test_ranker_screen(snap_compare, demo_copy, monkeypatch):
    taught_after = time.time()  # every event is newer: each reads "just now", however slow the run
    monkeypatch.setattr(RankerScreen, "clock", staticmethod(lambda: taught_after))

    async def teach(pilot: Pilot) -> None:
        await settle(pilot)
        for text in ("sourdough starter", "what did Maya adopt", "alpine weather"):
            await ask(pilot, text, strategy="fused")
            await pressing("u", "down", "u", "f")(pilot)
        await pressing("7")(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(build_app(demo_copy), terminal_size=SIZE, run_before=teach)
