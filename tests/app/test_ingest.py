"""Ingest: pick files, preview, confirm, see the summary; bad files show file and line; slow
ingests run in a worker that a query, a cancel or another store has to live with."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable, RichLog

from mnemoscope.app.services import Services
from mnemoscope.app.widgets import ChoiceDialog, NoteDialog
from tests.app.mnemo_testing import (DEMO_DIR, SIZE, ask, build_app, empty_store, hold_each_source, note_folder,
                                     screen_lines, settle, text_of, until)


def log_text(app) -> str:
    screen = app.screen_stack[0]  # the ingest screen, under any dialog
    return "\n".join(line.text for line in screen.query_one("#ingest-log", RichLog).lines)


@pytest.mark.slow
async def test_an_empty_store_fills_from_files_and_notes(tmp_path: Path):
    """From an empty store: a query says how to fill it; the tree shows what is in the folder,
    also files made later; previews write nothing; a bad file is named with its line and left
    out; a file typed as a path and a pasted note are stored."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "first.md").write_text("# First\n\nA note.\n")
    app = build_app(empty_store(tmp_path / "store.db"), browse_root=folder)
    async with app.run_test(size=(120, 36)) as pilot:  # wide: the log shares the width with the tree
        await settle(pilot)
        await ask(pilot, "anything at all")
        said = next(n.message for n in app.notices if "The store is empty" in n.message)
        # the way it names works from where the person is: the query box, where 1 alone is text
        assert app.focused.id == "query-input" and "(Esc, then 1)" in said, said
        await pilot.press("escape", "1")
        await settle(pilot)
        assert app.current_mode == "ingest"
        screen = app.screen
        tree = screen.query_one("#ingest-tree")
        assert [n.label.plain for n in tree.root.children] == ["first.md"]
        (folder / "second.md").write_text("# Second\n\nAnother note.\n")
        await pilot.press("2")
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)
        await until(pilot, lambda: [n.label.plain for n in tree.root.children] == ["first.md", "second.md"],
                    "the tree to read the folder again (in a worker)")
        assert "notes/" in screen_lines(app)[4], "the root keeps its name and slash"

        # the log wraps long lines instead of cutting them
        log = screen.query_one("#ingest-log", RichLog)
        screen.log_line("word " * 60)
        await pilot.pause()
        assert log.max_scroll_x == 0 and len(log.lines) > 1

        # a conversation's preview shows its speakers, sessions and turns, and writes nothing
        screen.toggle(DEMO_DIR / "conversation.json")
        await pilot.press("p")
        await settle(pilot)
        row = screen.query_one("#ingest-preview", DataTable).get_row_at(0)
        _source, kind, fmt, turns, speakers, sessions = row
        assert (kind, fmt) == ("conversation", "locomo")
        assert int(turns) > 100 and int(sessions) >= 2
        assert "Maya" in speakers and "Daniel" in speakers
        assert app.store_stats.items == 0, "a preview writes nothing"
        await pilot.press("backspace")  # clear the selection
        assert not screen.selection

        # a file typed as a path: previewed, confirmed, ingested
        screen.query_one("#ingest-path").focus()
        screen.query_one("#ingest-path").value = str(DEMO_DIR / "sourdough-baking.md")
        await pilot.press("enter")
        assert [p.name for p in screen.selection] == ["sourdough-baking.md"]
        screen.query_one("#ingest-tree").focus()
        await pilot.press("i")  # previews first, then asks
        await settle(pilot)
        preview = screen.query_one("#ingest-preview", DataTable)
        assert preview.row_count == 1
        assert preview.get_row_at(0)[:3] == ["sourdough-baking.md", "document", "markdown"]
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("enter")  # "Ingest" has focus
        await settle(pilot)
        assert app.store_stats.sources == 1 and app.store_stats.items > 10
        assert "✓ sourdough-baking.md" in log_text(app) and "1 added" in log_text(app)

        # a file the readers cannot parse shows its file and line, and is left out
        bad = tmp_path / "broken.json"
        bad.write_text('[\n  {"sample_id": "x",\n   "conversation": {\n  }\n  oops\n]\n')
        good = tmp_path / "fine.md"
        good.write_text("# Fine\n\nA perfectly readable note about kettles.\n")
        await pilot.press("backspace")
        screen.toggle(bad)
        screen.toggle(good)
        await pilot.press("i")
        await settle(pilot)
        assert "broken.json:5" in log_text(app).replace("\n", "")  # the log wraps long paths
        assert isinstance(app.screen, ChoiceDialog)
        assert "left out" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.press("enter")
        await settle(pilot)
        assert app.store_stats.sources == 2

        # a pasted note
        items = app.store_stats.items
        await pilot.press("n")
        assert isinstance(app.screen, NoteDialog)
        # the cursor is in the text box, under the title's: the empty box says what goes there
        await pilot.pause()
        assert app.focused.id == "note-text"
        assert any("Type or paste the note here" in line for line in screen_lines(app)), "\n".join(screen_lines(app))
        await pilot.press(*"Remember the blue kettle")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.store_stats.items == items + 1
        assert "Note stored" in log_text(app)


async def test_unreachable_llm_endpoint_is_shown(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MNEMOSCOPE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MNEMOSCOPE_LLM_MODEL", "tiny")
    app = build_app(empty_store(tmp_path / "store.db"), start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = text_of(app.screen.query_one("#llm-status"))
        assert "unreachable" in status and "127.0.0.1:9" in status


async def test_a_selection_is_what_gets_previewed_and_ingested(demo_app, monkeypatch):
    """Nothing selected: a warning, nothing pending; a preview only previews; a preview of a
    selection that changed meanwhile is not ingested; Esc leaves the path box."""
    reading = threading.Event()
    reading.set()
    original = Services.parse

    def slow_parse(self, paths):
        reading.wait(60)  # released by the test; the bound only keeps a failure from hanging
        return original(self, paths)

    monkeypatch.setattr(Services, "parse", slow_parse)
    app = demo_app(start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        await pilot.press("i")  # nothing selected: a warning, nothing pending
        await settle(pilot)
        screen.toggle(DEMO_DIR / "alpine-hiking.md")
        await pilot.press("p")  # a preview only
        await settle(pilot)
        assert not isinstance(app.screen, ChoiceDialog), "a preview does not ask to ingest"
        assert screen.query_one("#ingest-preview", DataTable).row_count == 1

        await pilot.press("backspace")  # a new selection: the same file again
        screen.toggle(DEMO_DIR / "alpine-hiking.md")
        reading.clear()
        await pilot.press("i")  # reads the files first
        assert "parse" in app.tasks
        screen.toggle(DEMO_DIR / "sourdough-baking.md")  # the selection changes meanwhile
        reading.set()
        await settle(pilot)
        assert not isinstance(app.screen, ChoiceDialog), "no confirmation for what is no longer selected"
        assert screen.parsed is None
        await pilot.press("i")
        await settle(pilot)
        assert isinstance(app.screen, ChoiceDialog)
        assert "2 source(s)" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.press("escape")
        await settle(pilot)

        # Esc leaves the path box, so that number keys switch screens again
        screen.query_one("#ingest-path").focus()
        await pilot.press("escape", "6")
        await settle(pilot)
        assert app.current_mode == "query"
        await app.switch_mode("ingest")
        assert "6" not in app.screen.query_one("#ingest-path").value


@pytest.mark.slow
async def test_a_slow_ingest_lets_queries_run_stops_on_escape_and_keeps_its_store_open(demo_app, tmp_path: Path):
    folder = note_folder(tmp_path, 12, "Plain words about kettles and bicycles")
    app = demo_app(start_mode="ingest")
    release = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.services.memory.recall("warm up the intent classifier", top_k=1)  # the engine fits it on first use
        store = app.services.mem
        hold_each_source(store, release)  # the ingest stays open until the query is answered
        screen = app.screen
        parsed = app.services.parse([folder]).parsed
        screen.start_ingest(parsed)
        await until(pilot, lambda: screen.query_one("#task-panel").display, "the progress bar")
        assert "ingest" in app.tasks

        # another store waits until the ingest is done: the store being written to stays open
        app.open_store(tmp_path / "other.db")
        await until(pilot, lambda: any("still running" in n.message for n in app.notices), "the refusal")
        assert app.services.mem is store

        # a query is answered while the ingest runs
        await app.switch_mode("query")
        await pilot.pause()
        query = app.screen
        query.run_query("sourdough starter")
        await until(pilot, lambda: query.recall is not None, "the query's answer")
        assert query.recall.hits, text_of(query.query_one("#query-status"))
        assert "ingest" in app.tasks, "the query had to wait for the ingest"
        release.set()
        await settle(pilot)
        assert "ingest" not in app.tasks
        assert app.store_stats.sources == 5 + 12
        assert not any(n.severity == "error" for n in app.notices)

        # Esc cancels a running ingest between sources; what was stored stays whole
        (tmp_path / "more").mkdir()
        more = note_folder(tmp_path / "more", 8, "Words about teapots")
        release.clear()
        await app.switch_mode("ingest")
        parsed = app.services.parse([more]).parsed
        screen.start_ingest(parsed)
        await until(pilot, lambda: screen.query_one("#task-panel").display, "the progress bar")
        await pilot.press("escape")
        release.set()
        await settle(pilot)
        assert "ingest" not in app.tasks
        assert 17 < app.store_stats.sources < 17 + 8, "stopped between sources; what was stored stays whole"
        assert "Cancelled after" in log_text(app)


async def test_a_pasted_note_past_max_text_bytes_is_refused_with_a_notification(tmp_path: Path, monkeypatch):
    """A note is one text stored whole: past the setting it is refused in one line naming the
    limit and its size (a notification and the log), and the store is unchanged."""
    monkeypatch.setenv("MNEMOSCOPE_MAX_TEXT_BYTES", "1000")
    app = build_app(empty_store(tmp_path / "store.db"))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("escape", "1", "n")
        await settle(pilot)
        assert isinstance(app.screen, NoteDialog)
        app.screen.query_one("#note-text").text = "The ferry left the harbour at dusk. " * 40  # 1,440 bytes
        await pilot.press("ctrl+s")
        await settle(pilot)
        failed = app.titled("Ingest failed")
        assert [n.message.split(": ", 1)[1] for n in failed] == [  # (fails before: stored)
            "the note is 1.4 KiB: more than max_text_bytes (1,000 bytes), what one text or Markdown file or note may add;"
            " nothing was stored (MNEMOSCOPE_MAX_TEXT_BYTES raises it)"]
        assert app.store_stats.items == 0
