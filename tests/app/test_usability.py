"""What a demanding first user ran into: clipped labels and columns, stale views, doubled loads,
the UI thread blocked by the engine. Each test drives the real app through Textual's pilot."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input

from mnemoscope.app.services import Services
from mnemoscope.app.widgets import FormDialog, HelpScreen
from mnemoscope.app.widgets.chrome import KeyBar
from mnemoscope.app.widgets.tables import PlainTable
from mnemoscope.screens.base import BaseScreen
from tests.app.mnemo_testing import SIZE, ask, build_app, empty_store, screen_lines, settle, text_of, until

MODES = ("ingest", "sources", "topics", "facts", "memories", "query", "ranker")


def fitted(tables, start, end) -> None:
    """Each shown table's columns fill its width, no more (the last cell: the scrollbar's)."""
    tables = [table for table in tables if table.display]
    assert tables
    for table in tables:
        spare = table.region.width - table.virtual_size.width
        assert 0 <= spare <= 2, f"#{table.id}: {spare} cells spare after {start} → {end}"


def tables_fit(app, mode: str, size) -> None:
    """Every column of every table the screen shows fits its pane (none hides past the right
    edge); every text box shows its whole placeholder; the LLM line names the setting whole."""
    tables = [table for table in app.screen.query(DataTable) if table.display]  # not a mode's hidden one
    assert tables, mode
    for table in tables:
        assert table.max_scroll_x == 0, f"{mode} #{table.id} at {size}: {table.max_scroll_x} cells hidden"
    boxes = [box for box in app.screen.query(Input) if box.display and box.placeholder]
    for box in boxes:
        assert box.content_region.width >= len(box.placeholder), f"{mode} #{box.id}: the placeholder is cut at {size}"
    if mode == "ingest":
        assert boxes
        assert "set MNEMOSCOPE_LLM_BASE_URL)" in text_of(app.screen.query_one("#llm-status"))
        assert "set MNEMOSCOPE_LLM_BASE_URL)" in "\n".join(screen_lines(app)), f"the LLM line is cut at {size}"


def keys_reachable(app, mode: str, size) -> None:
    """Each key the screen offers is in the bar at the bottom, or the bar says "? more" (the help,
    which lists them all)."""
    bar = screen_lines(app)[-1]
    offered = [binding.description for binding, _enabled in app.screen.query_one(KeyBar).keys]
    assert offered, mode
    hidden = [description for description in offered if f" {description} " not in bar]
    assert not hidden or "? more " in bar, f"{mode} at {size} hides {hidden} and does not say so: {bar!r}"


async def visit_every_screen(app, pilot, size) -> None:
    for mode in MODES:
        await app.switch_mode(mode)
        await settle(pilot)
        tables_fit(app, mode, size)
        keys_reachable(app, mode, size)
        # a plain DataTable reads a document's text as markup ("[/b]" stops the app)
        assert all(isinstance(t, PlainTable) for t in app.screen.query(DataTable)), mode


async def more_keys_open_the_help(app, pilot) -> None:
    """Facts has more keys than 80 columns hold: the bar keeps the first ones and ends on "? more",
    whose click opens the help that lists the rest (merging entities' `m`)."""
    await app.switch_mode("facts")
    await settle(pilot)
    bar = screen_lines(app)[-1]
    assert "i Inbox" in bar and " Merge " not in bar and bar.rstrip().endswith("? more ▏^p"), bar
    await pilot.click("KeyBar", offset=(bar.index("more"), 0))
    assert isinstance(app.screen, HelpScreen) and "| `m` |" in app.screen.screen_help
    await pilot.press("escape")
    await settle(pilot)


async def resize(pilot, size) -> None:
    await pilot.resize_terminal(*size)
    await until(pilot, lambda: pilot.app.screen.fitted_width == size[0], "the tables to be fitted again")
    await settle(pilot)


@pytest.mark.slow
async def test_each_screen_loads_once_when_first_shown_and_every_table_fits_at_either_layout_and_after_a_resize(
        demo_app, monkeypatch):
    """One app: the screens' first showing (before any query, so that the screens are the first to
    need the areas), then every table at both layouts, resized with the compare view open."""
    from mnemoscope.engine.extensions import AREAS

    loads: list[str] = []
    original = BaseScreen._refresh_if_ready

    def counting(self) -> None:
        loads.append(self.NAME)
        original(self)

    monkeypatch.setattr(BaseScreen, "_refresh_if_ready", counting)
    monkeypatch.setattr(Services, "warm_up", lambda self: None)  # the screens are the first to need the areas
    loaded_on: dict[str, str] = {}
    for area in (plug.area_class() for plug in AREAS):
        def load(self, original=area.load, name=area.__name__) -> None:
            loaded_on[name] = threading.current_thread().name
            original(self)

        monkeypatch.setattr(area, "load", load)
    narrow, wide = (80, 24), (120, 36)  # below and above the breakpoint (110) where panes sit side by side
    app = demo_app()
    async with app.run_test(size=wide) as pilot:
        await settle(pilot)
        for mode in MODES:
            loads.clear()
            await app.switch_mode(mode)
            await settle(pilot)
            if mode in ("topics", "facts", "ranker", "memories", "sources"):
                assert loads == [mode], f"{mode} loaded {loads} when first shown"
            # and the panels' titles show (the facts table's once had no top rule to sit on)
            if mode == "facts":
                entity = app.screen.entity
                assert f"{entity.name}: {len(app.screen.facts)} fact(s)" in "\n".join(screen_lines(app))
            elif mode == "ranker":
                assert "feedback events (0)" in "\n".join(screen_lines(app))
            tables_fit(app, mode, wide)
        assert loaded_on and threading.main_thread().name not in loaded_on.values(), loaded_on

        await app.switch_mode("query")
        await settle(pilot)
        await ask(pilot, "sourdough starter")
        await pilot.press("u")  # a mark survives every redraw
        for start, end in ((wide, narrow), (narrow, wide)):
            await app.switch_mode("query")
            await settle(pilot)
            await pilot.press("c")
            await settle(pilot)
            await resize(pilot, end)
            fitted(app.screen.query(DataTable), start, end)  # the compare view, open during the resize
            await pilot.press("escape")
            await settle(pilot)
            hits = app.screen.query_one("#hits", DataTable)
            assert hits.get_row_at(0)[1] == "✓"
            fitted([hits], start, end)
            await app.switch_mode("facts")  # resized while hidden: fitted when shown
            await settle(pilot)
            fitted(app.screen.query(DataTable), start, end)
            if end == narrow:
                await visit_every_screen(app, pilot, narrow)
                await a_form_fits(app, pilot, narrow)
                await more_keys_open_the_help(app, pilot)


async def a_form_fits(app, pilot, size) -> None:
    """A form fits a small terminal."""
    await app.switch_mode("facts")
    await settle(pilot)
    await pilot.press("a")
    await settle(pilot)
    assert isinstance(app.screen, FormDialog)
    assert "Subject" in "\n".join(screen_lines(app)), "the first field's label is shown"
    for button in ("#form-ok", "#form-cancel"):
        assert app.screen.query_one(button).region.bottom <= size[1], f"{button} is off the screen"
    await pilot.press("tab", "tab", "tab", "tab")
    await settle(pilot)
    assert app.focused.id == "form-time"
    assert app.focused.region.bottom <= app.screen.query_one("#dialog-body").region.bottom
    await pilot.press("escape")
    await settle(pilot)


async def test_a_store_too_small_for_topics_says_so(tmp_path: Path):
    app = build_app(empty_store(tmp_path / "two-notes.db"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for title, text in (("bees", "Bees make honey in hives."), ("cheese", "Cheddar is an aged cheese.")):
            app.services.memory.add_note(text, title=title)
        app.store_changed()
        await app.switch_mode("topics")
        await settle(pilot)
        assert "too few for a topic hierarchy" in text_of(app.screen.query_one("#topic-body"))

