"""Snapshots of every screen on the demo store at 100x32 (cursor blink off, no timings).

Regenerate after an intended change: ``pytest tests/app --snapshot-update``.
"""

from __future__ import annotations

import pytest

from tests.app.mnemo_testing import DEMO_DIR, SIZE, build_app, settle


@pytest.fixture(autouse=True)
def no_llm_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MNEMOSCOPE_LLM_BASE_URL", "MNEMOSCOPE_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


async def ask(pilot, text: str) -> None:
    """Run a query with the fused strategy (pinned: the snapshots must not follow the engine's default)."""
    from textual.widgets import Select

    pilot.app.screen.query_one("#query-strategy", Select).value = "fused"
    box = pilot.app.screen.query_one("#query-input")
    box.value = text
    box.focus()
    await pilot.press("enter")
    await settle(pilot)


def test_ingest_screen(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)
        pilot.app.screen.toggle(DEMO_DIR / "conversation.json")
        await pilot.press("p")
        await settle(pilot)

    assert snap_compare(build_app(demo_copy, start_mode="ingest"), terminal_size=SIZE, run_before=run_before)


def test_sources_screen(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("down", "down")
        await settle(pilot)

    assert snap_compare(build_app(demo_copy, start_mode="sources"), terminal_size=SIZE, run_before=run_before)


def test_topics_screen(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)

    assert snap_compare(build_app(demo_copy, start_mode="topics"), terminal_size=SIZE, run_before=run_before)


def test_facts_screen(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(build_app(demo_copy, start_mode="facts"), terminal_size=SIZE, run_before=run_before)


def test_memories_screen(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)

    assert snap_compare(build_app(demo_copy, start_mode="memories"), terminal_size=SIZE, run_before=run_before)


def test_query_screen(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await ask(pilot, "what did Maya adopt")
        await pilot.press("u")

    assert snap_compare(build_app(demo_copy), terminal_size=SIZE, run_before=run_before)


def test_query_trace(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await ask(pilot, "tell me more about sourdough starters")
        await pilot.press("t")
        await pilot.pause()

    assert snap_compare(build_app(demo_copy), terminal_size=SIZE, run_before=run_before)


def test_compare_view(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)
        await ask(pilot, "sourdough starter")
        await pilot.press("c")
        await settle(pilot)

    assert snap_compare(build_app(demo_copy), terminal_size=SIZE, run_before=run_before)


def test_ranker_screen(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)
        for text in ("sourdough starter", "what did Maya adopt", "alpine weather"):
            await ask(pilot, text)
            await pilot.press("u", "down", "u", "f")
            await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(build_app(demo_copy), terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare, demo_copy):
    async def run_before(pilot) -> None:
        await settle(pilot)
        pilot.app.screen.query_one("#hits").focus()
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(build_app(demo_copy), terminal_size=SIZE, run_before=run_before)
