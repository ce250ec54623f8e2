"""The app as a whole: start-up, header, help, palette, a bad store, concurrent tasks."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from textual.command import CommandPalette

from mnemoscope.app.services import Services
from mnemoscope.app.tui import make_app
from mnemoscope.app.widgets import ChoiceDialog, HelpScreen
from mnemoscope.screens.query import QueryScreen

from tests.app.mnemo_testing import DEMO_DIR, SIZE, build_app, hold_each_source, note_folder, settle, text_of


async def test_opens_on_query_with_counts_in_header(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, QueryScreen)
        assert app.store_stats["items"] > 300
        header = text_of(app.screen.query_one("#store-header"))
        assert "demo.db" in header and "6 sources" in header
        assert app.ready_seconds is not None


async def test_number_keys_switch_screens_and_help_opens(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#hits").focus()
        await pilot.press("2")
        await settle(pilot)
        assert app.current_mode == "sources"
        await pilot.press("1")
        await settle(pilot)
        assert app.current_mode == "ingest"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.current_mode == "ingest" and not isinstance(app.screen, HelpScreen)


async def test_palette_offers_every_action(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = {c.title for c in app.get_system_commands(app.screen)}
        for wanted in ("Ingest files or folders", "Paste a note", "Open store", "Export store", "Rebuild the index",
                       "Load demo content", "Go to Query", "Theme"):
            assert any(t.startswith(wanted) for t in titles), wanted
        await pilot.press("ctrl+p")
        assert isinstance(app.screen, CommandPalette)


async def test_empty_store_offers_the_demo(tmp_path: Path):
    app = build_app(tmp_path / "empty.db", offer_demo=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.click("#choice-load")
        await settle(pilot)
        assert app.store_stats["items"] > 300
        assert any("Demo content loaded" in (n.title or "") for n in app._notifications)


async def test_demo_flag_opens_a_temporary_store_with_the_demo(tmp_path: Path):
    services = Services(demo=True)
    app = make_app(services, offer_demo=True, browse_root=DEMO_DIR)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.store_stats["items"] > 300
            assert app.store_label == "demo (temporary store)"
            assert not isinstance(app.screen, ChoiceDialog)
            temp = services.mem.path
    finally:
        services.close()
    assert not temp.exists()


async def test_corrupt_store_shows_a_dialog_and_the_app_stays_usable(tmp_path: Path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"this is not a sqlite file at all" * 100)
    app = build_app(bad)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        body = text_of(app.screen.query_one("#dialog-text"))
        assert "not a Mnemoscope store" in body
        await pilot.click("#choice-temp")
        await settle(pilot)
        assert app.services.mem is not None
        assert app.store_stats["items"] == 0


async def test_ingest_in_a_worker_does_not_block_a_query(demo_app, tmp_path: Path):
    """A slow ingest runs in its worker while a query is answered."""
    folder = note_folder(tmp_path, 12, "Plain words about kettles and bicycles")
    app = demo_app(start_mode="ingest")
    release = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.services.recall("warm up the intent classifier", top_k=1)  # the engine fits it on first use
        hold_each_source(app.services.mem, release)  # the ingest stays open until the query is answered
        screen = app.screen
        screen.toggle(folder)
        parsed, _, _ = app.services.parse([folder])
        screen.start_ingest(parsed)
        await pilot.pause(0.2)
        assert "ingest" in app.tasks

        await app.switch_mode("query")
        await pilot.pause()
        query = app.screen
        started = time.perf_counter()
        query.run_query("sourdough starter")
        while query.recall is None and time.perf_counter() - started < 20:
            await pilot.pause(0.05)
        assert query.recall is not None and query.recall.hits, text_of(query.query_one("#query-status"))
        assert "ingest" in app.tasks, "the query had to wait for the ingest"
        release.set()
        await settle(pilot)
        assert "ingest" not in app.tasks
        assert app.store_stats["sources"] == 6 + 12


async def test_escape_cancels_a_running_ingest(demo_app, tmp_path: Path):
    folder = note_folder(tmp_path, 8, "Words about teapots")
    app = demo_app(start_mode="ingest")
    step = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        hold_each_source(app.services.mem, step)
        screen = app.screen
        parsed, _, _ = app.services.parse([folder])
        screen.start_ingest(parsed)
        await pilot.pause(0.2)
        assert app.screen.query_one("#task-panel").display, "the progress bar shows"
        await pilot.press("escape")
        step.set()
        await settle(pilot)
        assert "ingest" not in app.tasks
        assert 6 < app.store_stats["sources"] < 6 + 8, "stopped between sources; what was stored stays whole"
        log = "\n".join(line.text for line in screen.query_one("#ingest-log").lines)
        assert "Cancelled after" in log


async def test_palette_jumps_to_a_source(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"Source: sourdough")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await settle(pilot)
        assert app.current_mode == "sources"
        assert "sourdough" in app.screen.current_source().name
