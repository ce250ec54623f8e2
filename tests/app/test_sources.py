"""Sources: browse sources and items; long lists say how much they show; deleting shows the dry
run first, and the lists stay where they were."""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable

from textual.widgets import DataTable

from mnemoscope.app.widgets import ChoiceDialog
from mnemoscope.app.widgets.tables import page_label
from tests.app.mnemo_testing import SIZE, ask, screen_lines, settle, text_of


async def test_browse_sources_long_lists_delete_with_dry_run_and_keep_the_place(demo_app, monkeypatch):
    from mnemoscope.screens import memories, sources

    monkeypatch.setattr(memories, "EPISODE_ROWS", 10)
    monkeypatch.setattr(sources, "ITEM_ROWS_SHOWN", 50)
    app = demo_app(start_mode="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        # a long list says how much of it shows
        episodes = app.screen.query_one("#episodes-table", DataTable)
        total = app.store_stats.totals()["episodes"]
        assert episodes.row_count == 10
        assert f"summary (1–10 of {total})" in "\n".join(screen_lines(app))

        await app.switch_mode("sources")
        await settle(pilot)
        screen = app.screen
        sources_table = screen.query_one("#sources-table", DataTable)
        items = screen.query_one("#items-table", DataTable)
        assert sources_table.row_count == 5  # the conversation and four guides
        assert items.row_count > 0
        await pilot.press("down")
        await settle(pilot)
        assert screen.current_source().kind == "conversation"
        assert "items 1–50 of 206 · [ ] pages" in "\n".join(screen_lines(app))
        assert items.get_row_at(0)[0] == "D1:1"
        assert "D1:1" in text_of(screen.query_one("#item-body"))

        # ] and [ turn the pages; a jump to an item opens the page that holds it
        conversation = screen.current_source()
        every = app.services.memory.source_items(conversation.id)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert "items 51–100 of 206" in "\n".join(screen_lines(app))
        assert [i.id for i in screen.items] == [i.id for i in every[50:100]]
        screen.select_source(conversation.id, every[160].id)
        await settle(pilot)
        assert "items 151–200 of 206" in "\n".join(screen_lines(app)) and screen.current_item().id == every[160].id
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert [i.id for i in screen.items] == [i.id for i in every[200:]]
        await pilot.press("right_square_bracket")  # no page after the last
        await settle(pilot)
        assert "items 201–206 of 206" in "\n".join(screen_lines(app))
        for _ in range(4):
            await pilot.press("left_square_bracket")
            await settle(pilot)
        assert items.get_row_at(0)[0] == "D1:1" and "items 1–50 of 206" in "\n".join(screen_lines(app))
        sources_table.focus()

        # the dry run of deleting the source, in sentences; cancelled, nothing changes
        await pilot.press("d")  # the sources list has focus: delete the source
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        report = text_of(app.screen.query_one("#dialog-text"))
        assert "would change" in report
        assert "• 1 source deleted" in report and " items deleted" in report
        assert "• 0 " not in report and "1 sources" not in report, report
        await pilot.press("enter")  # "Cancel" has focus
        await settle(pilot)
        assert app.store_stats.sources == 5

        # an item deleted
        await pilot.press("enter")  # into the items
        await pilot.press("d")
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert app.store_stats.items == 306

        # after a delete the lists stay where they were
        assert items.get_row_at(0)[0] == "D1:2" and items.cursor_row == 0, "the turn after the deleted one"
        await pilot.press("down", "down", "d")  # the conversation's third turn now
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert items.cursor_row == 2 and items.get_row_at(2)[0] == "D1:5", "the turn after the deleted one"
        sources_table.focus()
        await pilot.press("d")  # the conversation itself
        await settle(pilot)
        await pilot.click("#choice-apply")
        await settle(pilot)
        assert sources_table.cursor_row == 1
        shown = screen.current_source()
        assert shown.kind != "conversation" and {i.source_id for i in screen.items} == {shown.id}
        await app.switch_mode("query")  # a later refresh keeps the new place too
        app.store_changed()
        await app.switch_mode("sources")
        await settle(pilot)
        assert screen.current_source().id == shown.id


async def test_the_items_keys_move_through_the_whole_source_page_after_page(demo_app, monkeypatch):
    # a person on a source of many pages: End is its last item, Home its first, Down on a page's
    # last row its next item, PgUp on a page's first row the item before; ] ] turns two pages;
    # a page that fails to read leaves ] counting from the page shown
    from mnemoscope.engine.errors import StoreError

    async with sources_screen(demo_app, monkeypatch, ITEM_ROWS_SHOWN=50) as (app, pilot, screen):
        conversation = next(s for s in screen.sources if s.kind == "conversation")
        screen.select_source(conversation.id)
        await settle(pilot)
        every = app.services.memory.source_items(conversation.id)
        assert len(every) == 206
        screen.query_one("#items-table", DataTable).focus()

        press = place_after(pilot, lambda: [i.id for i in every].index(screen.current_item().id))

        assert await press("end") == 205 and screen.page_start == 200
        assert await press("home") == 0 and screen.page_start == 0
        assert await press("ctrl+end") == 205
        assert await press("ctrl+home") == 0
        for _ in range(49):
            await pilot.press("down")
        assert await press("down") == 50 and screen.page_start == 50  # the next page's first item
        assert await press("up") == 49 and screen.page_start == 0  # and back: the last of the page before
        assert await press("down") == 50 and await press("pageup") == 49  # PgUp on a page's first row
        assert await press("ctrl+home", "up") == 0  # nothing before the first: it stays
        assert await press("end", "pagedown") == 205  # nor after the last
        assert await press("home") == 0

        # ] pressed twice while the page after is still read: two pages on, not the same one twice
        memory, release = app.services.memory, threading.Event()
        read = type(memory).source_items
        monkeypatch.setattr(type(memory), "source_items", lambda *args, **kwargs: release.wait(60) and read(*args, **kwargs))
        await pilot.press("right_square_bracket", "right_square_bracket")
        release.set()
        await settle(pilot)
        assert screen.page_start == 100 and "items 101–150 of 206" in "\n".join(screen_lines(app))

        # the store busy as ] asks for the page after: an error, the page shown stays, and ] then
        # turns to the page after it (not two pages on, counted from the page that never came)
        def busy(*args, **kwargs):
            raise StoreError("the store is busy")

        monkeypatch.setattr(type(memory), "source_items", busy)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.page_start == 100 and any("busy" in n.message and n.severity == "error" for n in app.notices)
        monkeypatch.setattr(type(memory), "source_items", read)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert screen.page_start == 150 and "items 151–200 of 206" in "\n".join(screen_lines(app))


async def test_the_sources_keys_move_through_every_source_page_after_page(demo_app, monkeypatch):
    # thousands of sources show a page at a time (here 2 of the demo's 5): the keys move through
    # the whole list, each source landed on shows its items, a jump opens the page that holds it
    async with sources_screen(demo_app, monkeypatch, SOURCE_ROWS_SHOWN=2) as (app, pilot, screen):
        table = screen.query_one("#sources-table", DataTable)
        every = [s.id for s in app.services.memory.sources()]
        assert len(every) == 5 and table.row_count == 2 and "source (1–2 of 5)" in "\n".join(screen_lines(app))
        table.focus()

        def place() -> int:
            source = screen.current_source()
            assert {i.source_id for i in screen.items} == {source.id}  # its items are the ones shown
            return every.index(source.id)

        press = place_after(pilot, place)
        assert await press("end") == 4 and screen.sources_start == 4 and table.row_count == 1
        assert "source (5–5 of 5)" in "\n".join(screen_lines(app))
        assert await press("home") == 0 and screen.sources_start == 0
        assert await press("down", "down") == 2 and screen.sources_start == 2  # past the page's last row
        assert await press("up") == 1 and screen.sources_start == 0
        assert await press("up") == 0  # nothing before the first: it stays
        assert await press("pagedown", "pagedown", "pagedown") == 3
        screen.select_source(every[4])
        await settle(pilot)
        assert place() == 4 and screen.sources_start == 4


async def test_a_source_deleted_elsewhere_leaves_the_list_and_the_cursor_stays_on_its_source(demo_app, monkeypatch):
    # another source than the one selected is deleted (by another process, which the app follows):
    # its row leaves the list, and the row highlighted is the source whose items are shown
    async with sources_screen(demo_app, monkeypatch) as (app, pilot, screen):
        table = screen.query_one("#sources-table", DataTable)
        every = [s.id for s in screen.sources]
        assert len(every) == 5
        screen.select_source(every[2])
        await settle(pilot)
        app.services.memory.delete_source(every[0])
        app.store_changed()
        await settle(pilot)
        assert [table.get_row_at(row)[0] for row in range(table.row_count)] == [str(i) for i in every[1:]]
        assert table.get_row_at(table.cursor_row)[0] == str(every[2]) and screen.current_source().id == every[2]
        assert {i.source_id for i in screen.items} == {every[2]}


async def test_the_timeline_keys_move_through_every_episode_page_after_page(demo_app, monkeypatch):
    # the timeline of a big store is read a page at a time, and the keys go on past the page
    from mnemoscope.screens import memories

    monkeypatch.setattr(memories, "EPISODE_ROWS", 4)
    app = demo_app(start_mode="memories")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        every, total = app.services.memory.knowledge.timeline_page(1000)
        assert total == len(every) > 8
        assert [e.id for e in screen.episodes] == [e.id for e in every[:4]]

        press = place_after(pilot, lambda: [e.id for e in every].index(screen.current_episode().id))

        assert await press("end") == total - 1 and f"of {total})" in "\n".join(screen_lines(app))
        assert await press("home") == 0
        assert await press("down", "down", "down", "down") == 4 and screen.page_start == 4
        assert await press("up") == 3 and screen.page_start == 0
        assert "Episode" in text_of(screen.query_one("#episode-body"))


async def test_a_page_says_which_rows_it_holds_in_words_that_fit_its_column(demo_app, monkeypatch):
    """Beside the panel (120 columns) the timeline's summary column is narrow: 'summary (1–200 of
    464,' clipped there read as 464 episodes, so the label drops words until it fits."""
    from mnemoscope.screens import memories

    monkeypatch.setattr(memories, "EPISODE_ROWS", 4)
    app = demo_app(start_mode="memories")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen, total = app.screen, app.store_stats.totals()["episodes"]
        await pilot.press("end")
        await settle(pilot)
        assert screen.page_start > 0 and len(f"summary ({screen.page_start + 1}–{total} of {total})") > screen.summary_width
        assert f" {screen.page_start + 1}–{total} of {total} " in "\n".join(screen_lines(app))
    # at 1M, the widest words that fit
    assert page_label("summary", 0, 200, 464_037, 30) == "summary (1–200 of 464,037)"
    assert page_label("summary", 0, 200, 464_037, 22) == "1–200 of 464,037"
    assert page_label("summary", 464_000, 37, 464_037, 22) == "464,001+ of 464,037"
    assert page_label("source", 0, 500, 500, 30) == "source"  # the page holds them all


@asynccontextmanager
async def sources_screen(demo_app, monkeypatch, **page_sizes: int) -> AsyncIterator[tuple]:
    """The app on the demo store, opened on Sources with its pages this small (``ITEM_ROWS_SHOWN``,
    ``SOURCE_ROWS_SHOWN``) and settled: (app, pilot, screen)."""
    from mnemoscope.screens import sources

    for name, size in page_sizes.items():
        monkeypatch.setattr(sources, name, size)
    app = demo_app(start_mode="sources")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        yield app, pilot, app.screen


def place_after(pilot, place: Callable[[], int]) -> Callable[..., Awaitable[int]]:
    """``press(*keys)``: the keys pressed and their work on screen, then where the cursor stands
    in the whole list (``place``)."""
    async def press(*keys: str) -> int:
        await pilot.press(*keys)
        await settle(pilot)
        return place()
    return press



async def test_a_turn_with_a_photo_sent_inline_shows_its_meta_short(tmp_path):
    """A chat turn's photo sent as a data: URL is kept whole in its meta: the item's panel laid
    out megabytes of base64 and held the screen for seconds (review, s16). It says how long it is."""
    import base64
    import json

    from mnemoscope.engine import Memory
    from tests.app.mnemo_testing import build_app

    photo = "data:image/png;base64," + base64.b64encode(bytes(range(256)) * 2000).decode()
    chat = tmp_path / "chat.jsonl"
    chat.write_text(json.dumps({"role": "user", "content": [
        {"type": "text", "text": "Here is my red kayak on the lake"},
        {"type": "image_url", "image_url": {"url": photo}}]}) + "\n")
    store = tmp_path / "store.db"
    with Memory(store) as mem:
        mem.ingest([chat])
    app = build_app(store, start_mode="sources")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert screen.current_item() is not None and "image_url" in screen.current_item().meta
        body = text_of(screen.query_one("#item-body"))
        assert "red kayak" in body and f"data:image/png;base64,… ({len(photo):,} characters)" in body, body[:500]
        assert len(body) < 1000


async def test_the_sources_say_which_an_agent_stored(tmp_path):
    """A person curating an agent's memory sees which sources an agent stored through MCP, and
    which agent: the list's "by" column and the item's panel say it (fails before: no column,
    and an agent's source named "diary.md" looked like the person's file)."""
    import os

    from mnemoscope.engine import Memory
    from tests.app.mnemo_testing import build_app
    from tests.mcp.test_mcp_server import agent_session

    store = tmp_path / "store.db"
    with Memory(store) as mem:
        mem.add_note("The lanterns are lit at dusk by the keeper.")
    async with agent_session(store, dict(os.environ), name="claude-code") as session:
        await session.call_tool("remember", {"text": "The ferry leaves at noon.", "source": "diary.md"})
    app = build_app(store, start_mode="sources")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#sources-table", DataTable)
        rows = [table.get_row_at(n) for n in range(table.row_count)]
        assert len(rows) == 2
        by = {str(row[3]): str(row[2]) for row in rows}
        assert by["diary.md"] == "claude-c…" and [v for k, v in by.items() if k != "diary.md"] == ["you"]
        table.move_cursor(row=[str(row[3]) for row in rows].index("diary.md"))
        await settle(pilot)
        assert "stored by claude-code through MCP" in text_of(app.screen.query_one("#item-body"))


async def test_a_markdown_section_reads_without_its_marks(demo_app):
    """alpine-hiking.md's trail markings showed "In Switzerland, **yellow** signposts" as typed,
    in the items' list and the panel, and on the Query screen in the hit's line and its Text tab
    (its words highlighted)."""
    app = demo_app(start_mode="sources")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        guide = next(s for s in screen.sources if s.name.endswith("alpine-hiking.md"))
        item = next(i for i in app.services.memory.source_items(guide.id) if "**yellow**" in i.text)
        screen.select_source(guide.id, item.id)
        await settle(pilot)
        assert screen.current_item().id == item.id
        row = screen.query_one("#items-table", DataTable).get_row(str(item.id))
        assert "In Switzerland, yellow signposts" in row[-1], row
        body = screen.query_one("#item-body").content
        assert "In Switzerland, yellow signposts" in body.plain and "**" not in body.plain, body.plain
        at = body.plain.index("yellow signposts")
        assert any(span.start <= at < span.end and "bold" in str(span.style) for span in body.spans), body.spans

        await app.switch_mode("query")
        await settle(pilot)
        await ask(pilot, "yellow signposts", strategy="fused")
        hit = app.screen.selected_hit()
        assert hit is not None and hit.item.id == item.id, hit
        snippet = app.screen.query_one("#hits", DataTable).get_row(str(item.id))[-1]
        assert "yellow signposts" in snippet.plain and "**" not in snippet.plain, snippet.plain  # the hit's line too
        shown = app.screen.query_one("#hit-text").content
        assert "In Switzerland, yellow signposts" in shown.plain and "**" not in shown.plain, shown.plain
        at = shown.plain.index("yellow signposts")
        assert any(span.start <= at < span.end and "reverse" in str(span.style) for span in shown.spans), shown.spans
