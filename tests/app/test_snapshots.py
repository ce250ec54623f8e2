"""Snapshots of every screen on the demo store at 100x32 (cursor blink off, no timings); queries
pin the fused strategy, so that the snapshots do not follow the engine's default.

Regenerate after an intended change: ``pytest tests/app --snapshot-update``.
"""

from __future__ import annotations

import pytest

from tests.app.mnemo_testing import DEMO_DIR, SIZE, ask, build_app, settle


@pytest.fixture(autouse=True)
def no_llm_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MNEMOSCOPE_LLM_BASE_URL", "MNEMOSCOPE_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)


def snapshot(snap_compare, store, mode: str | None = None, steps=None) -> bool:
    """The app on ``store`` in ``mode`` (default: the query screen), settled, after ``steps(pilot)``."""
    async def run_before(pilot) -> None:
        await settle(pilot)
        if steps is not None:
            await steps(pilot)

    return snap_compare(build_app(store, start_mode=mode), terminal_size=SIZE, run_before=run_before)


def pressing(*keys: str):
    async def steps(pilot) -> None:
        await pilot.press(*keys)
        await settle(pilot)

    return steps


def test_ingest_screen(snap_compare, demo_copy):
    async def preview(pilot) -> None:
        pilot.app.screen.toggle(DEMO_DIR / "conversation.json")
        await pressing("p")(pilot)

    assert snapshot(snap_compare, demo_copy, "ingest", preview)


def test_sources_screen(snap_compare, demo_copy):
    assert snapshot(snap_compare, demo_copy, "sources", pressing("down"))  # the conversation


def test_topics_screen(snap_compare, demo_copy):
    assert snapshot(snap_compare, demo_copy, "topics", pressing("down", "enter"))


def test_facts_screen(snap_compare, demo_copy):
    assert snapshot(snap_compare, demo_copy, "facts")


def test_memories_screen(snap_compare, demo_copy):
    assert snapshot(snap_compare, demo_copy, "memories")


def test_query_screen(snap_compare, demo_copy):
    async def mark_used(pilot) -> None:
        await ask(pilot, "what did Maya adopt", strategy="fused")
        await pilot.press("u")

    assert snapshot(snap_compare, demo_copy, steps=mark_used)


def test_query_trace(snap_compare, demo_copy):
    async def trace(pilot) -> None:
        await ask(pilot, "tell me more about sourdough starters", strategy="fused")
        await pilot.press("t")
        await pilot.pause()

    assert snapshot(snap_compare, demo_copy, steps=trace)


def test_compare_view(snap_compare, demo_copy):
    async def compare(pilot) -> None:
        await ask(pilot, "sourdough starter", strategy="fused")
        await pressing("c")(pilot)

    assert snapshot(snap_compare, demo_copy, steps=compare)


def test_ranker_screen(snap_compare, demo_copy):
    async def teach(pilot) -> None:
        for text in ("sourdough starter", "what did Maya adopt", "alpine weather"):
            await ask(pilot, text, strategy="fused")
            await pressing("u", "down", "u", "f")(pilot)
        await pressing("7")(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snapshot(snap_compare, demo_copy, steps=teach)


def test_help_screen(snap_compare, demo_copy):
    async def help_(pilot) -> None:
        pilot.app.screen.query_one("#hits").focus()
        await pilot.press("question_mark")
        await pilot.pause()

    assert snapshot(snap_compare, demo_copy, steps=help_)
