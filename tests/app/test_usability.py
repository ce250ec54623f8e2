"""What a demanding first user ran into: clipped labels and columns, stale views, doubled loads,
messages in the engine's words. Each test drives the real app through Textual's pilot."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable, RichLog, Select

from mnemoscope.app.widgets import ChoiceDialog, HelpScreen, PromptDialog
from mnemoscope.app.widgets.trace import TraceView
from mnemoscope.screens.base import BaseScreen
from tests.app.mnemo_testing import DEMO_DIR, SIZE, build_app, hold_each_source, note_folder, settle, text_of

SCREEN_SIZES = [(80, 24), (120, 36), (200, 50)]


def screen_lines(app) -> list[str]:
    """The screen as a person sees it, one string per terminal row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


async def ask(pilot, text: str) -> None:
    box = pilot.app.screen.query_one("#query-input")
    box.focus()
    box.value = text
    await pilot.press("enter")
    await settle(pilot)


async def test_every_choice_of_the_query_bar_shows_whole(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        for select_id in ("#query-intent", "#query-mode", "#query-strategy"):
            select = screen.query_one(select_id, Select)
            for label, value in list(select._options):
                select.value = value
                await pilot.pause()
                assert label in screen_lines(app)[4], f"{select_id}: {label!r} is cut"


@pytest.mark.parametrize("size", SCREEN_SIZES[:2])  # 200 wide: in the resize test
async def test_no_table_needs_a_sideways_scroll(demo_app, size):
    """Every column of every table fits its pane: none hides past the right edge."""
    app = demo_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await ask(pilot, "sourdough starter")
        for mode in ("ingest", "sources", "topics", "facts", "memories", "query", "ranker"):
            await app.switch_mode(mode)
            await settle(pilot)
            for table in app.screen.query(DataTable):
                assert table.max_scroll_x == 0, f"{mode} #{table.id} at {size}: {table.max_scroll_x} cells hidden"


async def test_a_screen_loads_its_data_once_when_first_shown(demo_app, monkeypatch):
    loads: list[str] = []
    original = BaseScreen._refresh_if_ready

    def counting(self) -> None:
        loads.append(self.NAME)
        original(self)

    monkeypatch.setattr(BaseScreen, "_refresh_if_ready", counting)
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for mode in ("facts", "memories", "sources"):
            loads.clear()
            await app.switch_mode(mode)
            await settle(pilot)
            assert loads == [mode]


async def test_the_trace_stops_saying_playing_when_the_walk_ends(demo_app, monkeypatch):
    monkeypatch.setattr(TraceView, "INTERVAL", 0.02)
    app = demo_app(animate=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "tell me more about sourdough starters")
        await pilot.press("t")
        trace = app.screen.query_one(TraceView)
        assert len(trace.steps) >= 2
        for _ in range(100):
            if not trace.playing:
                break
            await pilot.pause(0.02)
        await pilot.pause()
        status = text_of(app.screen.query_one("#trace-status"))
        assert f"step {len(trace.steps)}/{len(trace.steps)}" in status
        assert "playing" not in status and "paused" in status


async def test_feedback_twice_for_the_same_results_says_what_to_do(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        if not app.services.has("ranker"):
            pytest.skip("no ranker area")
        await ask(pilot, "sourdough starter")
        await pilot.press("u", "f")
        await settle(pilot)
        events = app.services.memory.ranker.status().events
        app.clear_notifications()
        await pilot.press("f")
        await settle(pilot)
        messages = [n.message for n in app._notifications]
        assert any("already sent" in m for m in messages), messages
        assert not any("token" in m for m in messages), "no engine jargon"
        assert app.services.memory.ranker.status().events == events
        await ask(pilot, "sourdough starter")  # new results can be taught again
        await pilot.press("f")
        await settle(pilot)
        assert app.services.memory.ranker.status().events == events + 1


async def test_the_why_panel_says_what_it_is_for_before_the_first_query(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "Run a query" in text_of(app.screen.query_one("#why-body"))


async def test_the_ingest_log_wraps_instead_of_cutting_lines(tmp_path: Path):
    app = build_app(tmp_path / "store.db", browse_root=DEMO_DIR)
    async with app.run_test(size=(120, 36)) as pilot:
        await app.switch_mode("ingest")
        await settle(pilot)
        log = app.screen.query_one("#ingest-log", RichLog)
        app.screen.log_line("word " * 60)
        await pilot.pause()
        assert log.max_scroll_x == 0 and len(log.lines) > 1


async def test_the_file_tree_shows_files_made_since_it_was_read(tmp_path: Path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nA note.\n")
    app = build_app(tmp_path / "store.db", browse_root=folder)
    async with app.run_test(size=SIZE) as pilot:
        await app.switch_mode("ingest")
        await settle(pilot)
        tree = app.screen.query_one("#ingest-tree")
        assert [n.label.plain for n in tree.root.children] == ["first.md"]
        (folder / "second.md").write_text("# Second\n\nAnother note.\n")
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        await pilot.pause(0.2)  # the tree reads the folder in a worker
        assert [n.label.plain for n in tree.root.children] == ["first.md", "second.md"]
        assert "notes/" in screen_lines(app)[4], "the root keeps its name and slash"


async def test_a_store_that_cannot_be_opened_offers_to_keep_the_open_one(demo_app, tmp_path: Path):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        before = app.services.mem
        app.action_open_store()
        await settle(pilot)
        assert isinstance(app.screen, PromptDialog)
        app.screen.query_one("#prompt-input").value = str(tmp_path)  # a folder, not a store
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "demo.db is still open" in text_of(app.screen.query_one("#dialog-text"))
        assert app.screen.query_one("#choice-keep").has_focus
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ChoiceDialog)
        assert app.services.mem is before and app.store_label == "demo.db"


async def test_help_lists_every_global_key(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        from mnemoscope.app.widgets.dialogs import GLOBAL_KEYS

        for binding in app.BINDINGS:
            for key in binding.key.split(","):
                shown = {"slash": "/", "question_mark": "?", "escape": "Esc"}.get(key, key)
                if key.startswith("ctrl+"):
                    shown = "Ctrl+" + key[5:].upper()
                elif key.startswith("f") and key[1:].isdigit():
                    shown = key.upper()
                assert shown in GLOBAL_KEYS or key in "12345678", f"{key} is not in the help"


async def test_the_palette_offers_one_screenshot_command(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert sum("creenshot" in t for t in titles) == 1, titles


async def test_facts_keys_without_an_entity_say_so(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "4")
        await settle(pilot)
        await pilot.press("ctrl+f", *"zzqxv")
        await settle(pilot)
        assert "No entity matches “zzqxv”" in text_of(app.screen.query_one("#graph-body"))
        await pilot.press("enter")
        for key in "adrm":
            app.clear_notifications()
            await pilot.press(key)
            await settle(pilot)
            assert app._notifications, f"{key} did nothing and said nothing"


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_compare_fits_both_sides_and_says_what_they_share(demo_app, size):
    app = demo_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await ask(pilot, "sourdough starter")
        await pilot.press("c")
        await settle(pilot)
        for side in "ab":
            assert app.screen.query_one(f"#hits-{side}", DataTable).max_scroll_x == 0
            assert " shared" in screen_lines(app)[4].split("││")["ab".index(side)]


@pytest.mark.parametrize(("start", "end"), [((200, 50), (80, 24)), ((80, 24), (200, 50))])
async def test_tables_fit_again_after_the_terminal_is_resized(demo_app, start, end):
    app = demo_app()
    async with app.run_test(size=start) as pilot:
        await settle(pilot)
        await ask(pilot, "sourdough starter")
        await pilot.press("u")  # a mark survives the redraw
        for mode in ("facts", "query"):
            await app.switch_mode(mode)
            await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        await pilot.resize_terminal(*end)
        await pilot.pause(0.5)  # the tables are fitted again once a resize has rested (0.2 s)
        await settle(pilot)
        fitted(app.screen.query(DataTable), start, end)
        await pilot.press("escape")
        await settle(pilot)
        hits = app.screen.query_one("#hits", DataTable)
        assert hits.get_row_at(0)[1] == "✓"
        fitted([hits], start, end)
        await app.switch_mode("facts")  # resized while hidden: fitted when shown
        await settle(pilot)
        fitted(app.screen.query(DataTable), start, end)


def fitted(tables, start, end) -> None:
    """Each table's columns fill its width, no more (the last cell: the scrollbar's)."""
    for table in tables:
        spare = table.region.width - table.virtual_size.width
        assert 0 <= spare <= 2, f"#{table.id}: {spare} cells spare after {start} → {end}"


async def test_the_engine_areas_load_in_workers_not_on_the_ui_thread(demo_app, monkeypatch):
    import threading

    from mnemoscope.app.services import Services

    monkeypatch.setattr(Services, "warm_up", lambda self: None)  # the screens are the first to need the areas
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        mem = app.services.mem
        loaded_on: dict[str, str] = {}
        for name, area in mem._areas.items():
            def load(original=area.load, name=name) -> None:
                loaded_on[name] = threading.current_thread().name
                original()

            monkeypatch.setattr(area, "load", load)
        for mode in ("topics", "facts", "ranker"):
            await app.switch_mode(mode)
            await settle(pilot)
        assert loaded_on and threading.main_thread().name not in loaded_on.values(), loaded_on


async def test_long_lists_say_how_much_they_show(demo_app, monkeypatch):
    from mnemoscope.screens import memories, sources

    monkeypatch.setattr(memories, "EPISODE_ROWS", 10)
    monkeypatch.setattr(sources, "ITEM_ROWS_SHOWN", 50)
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.switch_mode("memories")
        await settle(pilot)
        episodes = app.screen.query_one("#episodes-table", DataTable)
        total = app.store_stats["episodes"]
        assert episodes.row_count == 10
        assert f"summary (10/{total})" in "\n".join(screen_lines(app))
        await app.switch_mode("sources")
        await settle(pilot)
        conversation = next(s for s in app.screen.sources if s.kind == "conversation")
        app.screen.select_source(conversation.id)
        await settle(pilot)
        assert "the first 50 of 206 items" in "\n".join(screen_lines(app))


@pytest.mark.parametrize(("mode", "box"), [("facts", "#entity-filter"), ("ingest", "#ingest-path")])
async def test_escape_leaves_any_text_box_so_number_keys_switch_screens(demo_app, mode, box):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.switch_mode(mode)
        await settle(pilot)
        app.screen.query_one(box).focus()
        await pilot.press("escape", "6")
        await settle(pilot)
        assert app.current_mode == "query"
        await app.switch_mode(mode)
        assert "6" not in app.screen.query_one(box).value


async def test_a_dry_run_report_reads_as_sentences(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.switch_mode("sources")
        await settle(pilot)
        app.screen.query_one("#sources-table").focus()
        await pilot.press("d")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        report = text_of(app.screen.query_one("#dialog-text"))
        assert "• 1 source deleted" in report and " items deleted" in report
        assert "• 0 " not in report and "1 sources" not in report, report
        await pilot.press("escape")


async def test_after_a_delete_the_lists_stay_where_they_were(demo_app):
    app = demo_app(start_mode="sources")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        sources, items = (screen.query_one(f"#{name}-table", DataTable) for name in ("sources", "items"))
        await pilot.press("down", "down", "enter", "down", "down", "d")  # the conversation's third turn
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert items.cursor_row == 2 and items.get_row_at(2)[0] == "D1:4", "the turn after the deleted one"
        sources.focus()
        await pilot.press("d")  # the conversation itself
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert sources.cursor_row == 2
        shown = screen.current_source()
        assert shown.kind != "conversation" and {i.source_id for i in screen.items} == {shown.id}
        await app.switch_mode("query")  # a later refresh keeps the new place too
        app.store_changed()
        await app.switch_mode("sources")
        await settle(pilot)
        assert screen.current_source().id == shown.id


async def test_panel_titles_and_notes_are_visible(demo_app, tmp_path: Path):
    app = demo_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await app.switch_mode("facts")
        await settle(pilot)
        entity = app.screen.entity
        assert f"{entity.name}: {len(app.screen.facts)} fact(s)" in "\n".join(screen_lines(app))
        await app.switch_mode("ranker")
        await settle(pilot)
        assert "feedback events (0)" in "\n".join(screen_lines(app))
    app = build_app(tmp_path / "two-notes.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for title, text in (("bees", "Bees make honey in hives."), ("cheese", "Cheddar is an aged cheese.")):
            app.services.memory.add_note(text, title=title)
        app.store_changed()
        await app.switch_mode("topics")
        await settle(pilot)
        assert "too few for a topic hierarchy" in text_of(app.screen.query_one("#topic-body"))


async def test_after_deleting_a_fact_the_cursor_stays_in_its_row(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        facts = app.screen.query_one("#facts-table", DataTable)
        facts.focus()
        await pilot.press("down", "down")
        following = app.screen.facts[3].id
        await pilot.press("d")
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert facts.cursor_row == 2 and app.screen.selected_fact().id == following


async def test_the_header_gives_way_so_the_counts_show(tmp_path: Path, demo_copy: Path):
    from mnemoscope.app.services import Services
    from mnemoscope.app.tui import make_app

    store = tmp_path / "a folder with a long name" / "my [old] store.db"  # brackets: not markup
    store.parent.mkdir()
    demo_copy.rename(store)
    for width, head in ((120, " my [old] store.db  │"), (240, " ◆ Mnemoscope  store ")):
        app = make_app(Services(store), offer_demo=False, browse_root=DEMO_DIR, animate=False, show_timings=False)
        async with app.run_test(size=(width, 32)) as pilot:
            await settle(pilot)
            header = screen_lines(app)[0]
            assert header.startswith(head) and "0 feedback" in header, header
            app.busy = "Ingesting"
            await pilot.pause()
            assert screen_lines(app)[0].startswith(" ⟳ Ingesting")


async def test_another_store_waits_until_the_ingest_is_done(demo_app, tmp_path: Path):
    import threading

    folder = note_folder(tmp_path, 4, "Words about lanterns")
    app = demo_app(start_mode="ingest")
    release = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        store = app.services.mem
        hold_each_source(store, release)
        parsed, _, _ = app.services.parse([folder])
        app.screen.start_ingest(parsed)
        await pilot.pause(0.2)
        app.open_store(tmp_path / "other.db")
        await pilot.pause(0.2)
        assert app.services.mem is store, "the store being written to stays open"
        assert any("still running" in n.message for n in app._notifications)
        release.set()
        await settle(pilot)
        assert app.store_stats["sources"] == 6 + 4
        assert not any(n.severity == "error" for n in app._notifications)


async def test_a_form_fits_a_small_terminal(demo_app):
    app = demo_app(start_mode="facts")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        screen = app.screen
        assert "Subject" in "\n".join(screen_lines(app)), "the first field's label is shown"
        for button in ("#form-ok", "#form-cancel"):
            assert screen.query_one(button).region.bottom <= 24, f"{button} is off the screen"
        await pilot.press("tab", "tab", "tab", "tab")
        await settle(pilot)
        assert app.focused.id == "form-time"
        assert app.focused.region.bottom <= screen.query_one("#dialog-body").region.bottom


async def test_the_graph_expansion_names_its_nodes(demo_app):
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.query_one("#query-strategy", Select).value = "fused"
        await ask(pilot, "tell me more about sourdough starters")
        await pilot.press("t")
        await settle(pilot)
        graph = text_of(app.screen.query_one("#trace-graph"))
        assert "seeds (" in graph and "item:" in graph, graph
        assert "{" not in graph and "'node'" not in graph, "no raw dicts"


async def test_a_query_on_an_empty_store_says_how_to_fill_it(tmp_path: Path):
    app = build_app(tmp_path / "empty.db")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await ask(pilot, "anything at all")
        assert any("The store is empty" in n.message for n in app._notifications)


def test_an_undated_episode_is_listed_without_a_gap():
    from types import SimpleNamespace

    from mnemoscope.screens.query import knowledge_text

    episodes = [SimpleNamespace(time_start=None, summary="Shaping"),
                SimpleNamespace(time_start="2023-04-03T18:42", summary="Daniel and Maya")]
    lines = knowledge_text(episodes, []).plain.splitlines()
    assert lines[1:3] == ["• Shaping", "• 2023-04-03 Daniel and Maya"]


@pytest.mark.parametrize("size", SCREEN_SIZES)
async def test_the_path_box_says_what_it_takes_in_full(demo_app, size):
    app = demo_app(start_mode="ingest")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        box = app.screen.query_one("#ingest-path")
        assert box.region.width - 2 >= len(box.placeholder), f"the placeholder is cut at {size}"


async def test_ingest_with_nothing_selected_does_not_linger(demo_app):
    app = demo_app(start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("i")  # nothing selected: a warning, nothing pending
        await settle(pilot)
        app.screen.toggle(DEMO_DIR / "alpine-hiking.md")
        await pilot.press("p")  # a preview only
        await settle(pilot)
        assert not isinstance(app.screen, ChoiceDialog), "a preview does not ask to ingest"
        assert app.screen.query_one("#ingest-preview", DataTable).row_count == 1


async def test_a_preview_of_an_older_selection_is_not_ingested(demo_app, monkeypatch):
    import threading

    from mnemoscope.app.services import Services

    reading = threading.Event()
    original = Services.parse

    def slow_parse(self, paths):
        reading.wait(5)
        return original(self, paths)

    monkeypatch.setattr(Services, "parse", slow_parse)
    app = demo_app(start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        screen.toggle(DEMO_DIR / "alpine-hiking.md")
        await pilot.press("i")  # reads the files first
        await pilot.pause(0.1)
        screen.toggle(DEMO_DIR / "sourdough-baking.md")  # the selection changes meanwhile
        reading.set()
        await settle(pilot)
        assert not isinstance(app.screen, ChoiceDialog), "no confirmation for what is no longer selected"
        assert screen.parsed is None
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "2 source(s)" in text_of(app.screen.query_one("#dialog-text"))
