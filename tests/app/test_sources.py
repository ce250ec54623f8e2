"""Sources: browse sources and items; deleting shows the dry run first."""

from __future__ import annotations

from textual.widgets import DataTable

from mnemoscope.app.widgets import ChoiceDialog
from tests.app.mnemo_testing import SIZE, settle, text_of


async def test_browse_sources_and_delete_with_dry_run(demo_app):
    app = demo_app(start_mode="sources")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        sources = screen.query_one("#sources-table", DataTable)
        items = screen.query_one("#items-table", DataTable)
        assert sources.row_count == 6
        assert items.row_count > 0
        await pilot.press("down", "down")
        await settle(pilot)
        assert screen.current_source().kind == "conversation"
        assert items.get_row_at(0)[0] == "D1:1"
        assert "D1:1" in text_of(screen.query_one("#item-body"))
        await pilot.press("d")  # the sources list has focus: delete the source
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "would change" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.press("enter")  # "Cancel" has focus
        await settle(pilot)
        assert app.store_stats["sources"] == 6
        await pilot.press("enter")  # into the items
        await pilot.press("d")
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats["items"] == 313
