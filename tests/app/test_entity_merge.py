"""The Facts screen's merge of an entity typed by name: found once, for the dry run and the merge."""

from __future__ import annotations

from textual.widgets import DataTable

from mnemoscope.app.widgets import ChoiceDialog, PromptDialog
from tests.app.mnemo_testing import SIZE, settle, text_of


async def test_an_entity_typed_by_name_is_looked_up_once_for_the_dry_run_and_the_merge(demo_app, monkeypatch):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.query_one("#entity-filter").value = "maya"
        await settle(pilot)
        assert screen.query_one("#entities-table", DataTable).get_row_at(0)[0] == "Maya"
        other = next(e for e in screen.services.memory.knowledge.entities() if e.kind == "name" and e.name != "Maya")
        # a spy on the store's lookup, not SQLite's trace callback: the connection is shared with the
        # app's workers (following other processes, the counts), and a callback that needs the GIL
        # inside one thread's statement while another holds the GIL waiting for that connection
        # deadlocked the test (seen in a full suite run under load)
        store, looked_up = screen.services.memory.store, []
        lookup = store.entity_id_by_key
        monkeypatch.setattr(store, "entity_id_by_key", lambda key: looked_up.append(key) or lookup(key))
        await pilot.press("m")
        assert isinstance(app.screen, PromptDialog)
        app.screen.query_one("#prompt-input").value = other.name.upper()
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "1 entity merged" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert other.name not in {e.name for e in screen.services.memory.knowledge.entities()}
        assert len(looked_up) == 1
