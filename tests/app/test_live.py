"""The live view: the app open while another process writes follows it within the deadline —
header counts, Sources (the cursor kept), the Activity view — and the query names new sources."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from textual.widgets import DataTable

from mnemoscope.app.services import Services
from mnemoscope.app.widgets import StoreHeader
from mnemoscope.engine import Memory
from tests.app.mnemo_testing import DEMO_DIR, SIZE, build_app, screen_lines, settle

ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 5.0  # seconds: the target is 1 s; a loaded test machine gets slack, not a different path


async def wait_for(pilot, condition, deadline: float = DEADLINE) -> float:
    """Seconds until ``condition()`` holds (pausing the app between looks), or fail at the deadline."""
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < deadline, "the app did not follow within the deadline"
        await pilot.pause(0.05)
    return time.monotonic() - started


async def test_the_app_follows_another_process(tmp_path, monkeypatch):
    monkeypatch.setattr("mnemoscope.screens.activity.LINES_SHOWN", 3)  # the log holds more: the view says so
    store = tmp_path / "live.db"
    with Memory(store) as mem:
        mem.ingest([DEMO_DIR / "sourdough-baking.md"])
    app = build_app(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await app.switch_mode("sources")  # the cursor on the first source
        await settle(pilot)
        sources = app.screen.query_one("#sources-table", DataTable)
        assert sources.row_count == 1 and "1 sources" in app.screen.query_one(StoreHeader).counts

        subprocess.run([sys.executable, "-m", "mnemoscope", "--store", str(store), "ingest",
                        str(DEMO_DIR / "alpine-hiking.md")], cwd=ROOT, check=True, capture_output=True)
        await wait_for(pilot, lambda: "2 sources" in app.screen.query_one(StoreHeader).counts)
        await wait_for(pilot, lambda: sources.row_count == 2)
        assert sources.cursor_row == 0  # the cursor stays where it was

        await pilot.press("8")  # the Activity view
        await settle(pilot)
        log = app.screen.query_one("#activity-table", DataTable)
        newest = [str(cell) for cell in log.get_row_at(0)]
        rows = [[str(cell) for cell in log.get_row_at(n)] for n in range(log.row_count)]
        assert any(r[1] == "cli" and r[2] == "source added" and "alpine-hiking.md" in r[4] for r in rows), rows
        assert newest[1] == "cli"
        assert log.row_count == 3 and "The newest 3 changes (older ones are not listed)" in "\n".join(screen_lines(app))


async def test_the_activity_view_says_older_changes_are_not_listed_only_when_there_are(demo_app, monkeypatch):
    """A log that holds exactly as many changes as the view lists has none older to leave out."""
    app = demo_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        held = len(app.services.memory.activity.recent(100_000))
        assert held > 1
        for shown, summary in ((held, f"{held} change(s), newest first"),
                               (held - 1, f"The newest {held - 1} changes (older ones are not listed)")):
            monkeypatch.setattr("mnemoscope.screens.activity.LINES_SHOWN", shown)
            await app.switch_mode("activity")
            app.screen.refresh_data()
            await settle(pilot)
            assert app.screen.query_one("#activity-table", DataTable).row_count == shown
            assert summary in "\n".join(screen_lines(app))
            await app.switch_mode("query")


def test_hits_and_changes_name_an_agents_conversation():
    """A chat's turns are numbered by their place (keys "0", "1", …): the hit's source column
    names the conversation and the speaker; the Activity view leaves out the agent's prefix that
    its client column already shows."""
    from types import SimpleNamespace

    from mnemoscope.screens.activity import short_subject
    from mnemoscope.app.widgets.recall import hit_source_label

    names = {1: "mcp:claude-code/Lisbon trip (1e0b7c54)", 2: "/home/me/chats/trip.jsonl", 3: "conversation.json#demo-1"}

    def label(source_id: int, key: str, speaker: str, kind: str = "turn") -> str:
        item = SimpleNamespace(kind=kind, key=key, speaker=speaker, source_id=source_id, title="", id=7)
        return hit_source_label(SimpleNamespace(item=item), names, 16)

    assert label(1, "0", "User") == "Lisbon tri… User"  # not "0 User"; the speaker kept, the name cut
    assert label(2, "3", "Maya") == "trip Maya"
    assert label(3, "D1:3", "Maya") == "D1:3 Maya"  # a dialogue id says where it is
    assert short_subject("mcp:claude-code/Lisbon trip (1e0b7c54)", "mcp:claude-code") == "Lisbon trip (1e0b7c54)"
    assert short_subject("/home/me/notes/alpine-hiking.md", "cli") == "alpine-hiking.md"


class SlowOpen(Services):
    """A store that opens only when the test lets it, as on a loaded machine."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.may_open = threading.Event()

    def open(self, path=None):
        self.may_open.wait(30)
        return super().open(path)


async def test_a_query_sent_while_the_store_opens_runs_once_it_is_open(demo_copy):
    services = SlowOpen(demo_copy, label="demo")
    app = build_app(services)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(*"sourdough starter", "enter")  # typed at once, before the store is open
        assert services.mem is None
        assert "runs as soon as it is open" in screen_lines(app)[5]  # the status line; not "no store is open"
        services.may_open.set()
        await wait_for(pilot, lambda: app.screen.query_one("#hits", DataTable).row_count > 0, deadline=30.0)
