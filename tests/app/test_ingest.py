"""Ingest: pick a file, preview, confirm, and see the summary; bad files show file and line."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, RichLog

from mnemoscope.app.widgets import ChoiceDialog, NoteDialog
from tests.app.mnemo_testing import DEMO_DIR, SIZE, build_app, settle, text_of


def log_text(app) -> str:
    screen = app.screen_stack[0]  # the ingest screen, under any dialog
    return "\n".join(line.text for line in screen.query_one("#ingest-log", RichLog).lines)


async def test_ingest_a_file(tmp_path: Path):
    app = build_app(tmp_path / "store.db", start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.click("#ingest-path")
        await pilot.press(*str(DEMO_DIR / "sourdough-baking.md"), "enter")
        assert [p.name for p in app.screen.selection] == ["sourdough-baking.md"]
        app.screen.query_one("#ingest-tree").focus()
        await pilot.press("i")  # previews first, then asks
        await settle(pilot)
        preview = app.screen_stack[0].query_one("#ingest-preview", DataTable)
        assert preview.row_count == 1
        assert preview.get_row_at(0)[:3] == ["sourdough-baking.md", "document", "markdown"]
        assert isinstance(app.screen, ChoiceDialog)
        await pilot.press("enter")  # "Ingest" has focus
        await settle(pilot)
        assert app.store_stats["sources"] == 1 and app.store_stats["items"] > 10
        text = log_text(app)
        assert "✓ sourdough-baking.md" in text and "1 added" in text


async def test_conversation_preview_shows_speakers_sessions_and_turns(tmp_path: Path):
    app = build_app(tmp_path / "store.db", start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.toggle(DEMO_DIR / "conversation.json")
        await pilot.press("p")
        await settle(pilot)
        row = app.screen.query_one("#ingest-preview", DataTable).get_row_at(0)
        source, kind, fmt, turns, speakers, sessions = row
        assert (kind, fmt) == ("conversation", "locomo")
        assert int(turns) > 100 and int(sessions) >= 2
        assert "Maya" in speakers and "Daniel" in speakers
        assert app.store_stats["items"] == 0, "a preview writes nothing"


async def test_a_file_the_readers_cannot_parse_shows_file_and_line(tmp_path: Path):
    bad = tmp_path / "broken.json"
    bad.write_text('[\n  {"sample_id": "x",\n   "conversation": {\n  }\n  oops\n]\n')
    good = tmp_path / "fine.md"
    good.write_text("# Fine\n\nA perfectly readable note about kettles.\n")
    app = build_app(tmp_path / "store.db", start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.screen.toggle(bad)
        app.screen.toggle(good)
        await pilot.press("i")
        await settle(pilot)
        assert "broken.json:5" in log_text(app).replace("\n", "")  # the log wraps long paths
        assert isinstance(app.screen, ChoiceDialog)
        assert "left out" in text_of(app.screen.query_one("#dialog-text"))
        await pilot.press("enter")
        await settle(pilot)
        assert app.store_stats["sources"] == 1


async def test_paste_a_note(tmp_path: Path):
    app = build_app(tmp_path / "store.db", start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("n")
        assert isinstance(app.screen, NoteDialog)
        await pilot.press(*"Remember the blue kettle")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.store_stats["items"] == 1
        assert "Note stored" in log_text(app)


async def test_unreachable_llm_endpoint_is_shown(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("MNEMOSCOPE_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MNEMOSCOPE_LLM_MODEL", "tiny")
    app = build_app(tmp_path / "store.db", start_mode="ingest")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = text_of(app.screen.query_one("#llm-status"))
        assert "unreachable" in status and "127.0.0.1:9" in status
