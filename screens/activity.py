"""Activity: the store's change log, newest first — what changed, when, and through which client
(this app, the command line, a Python program, an agent through MCP)."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import PurePath
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from mnemoscope.app.widgets import clip
from mnemoscope.app.widgets.tables import PlainTable, set_columns
from mnemoscope.screens.base import WIDE, BaseScreen

if TYPE_CHECKING:
    from mnemoscope.engine.activity import ActivityEvent

LINES_SHOWN = 500


def short_subject(subject: str, client: str = "") -> str:
    """A file path as its name (``…/notes/alpine-hiking.md`` → ``alpine-hiking.md``; a
    conversation of an export keeps its ``#id``); a source an agent named after itself without
    that prefix, which the client column shows (``mcp:claude-code/trip plans`` → ``trip plans``);
    a name such as ``fact 12: …`` as it is."""
    flat = " ".join(subject.split())
    if client.startswith("mcp:") and flat.startswith(client + "/"):
        return flat[len(client) + 1:]
    head = flat.split("/", 1)[0]
    return PurePath(flat).name if "/" in flat and ":" not in head and " " not in head else flat


def clock(at: float, now: float) -> str:
    """A line's time as a person reads a log: the time of day today, the day this year, else the date."""
    moment, today = time.localtime(at), time.localtime(now)
    fmt = "%H:%M:%S" if moment[:3] == today[:3] else "%m-%d %H:%M" if moment[0] == today[0] else "%Y-%m-%d"
    return time.strftime(fmt, moment)


class ActivityScreen(BaseScreen):
    NAME = "activity"
    TITLE = "Activity"
    HELP = """\
### Activity

Every change to the store, newest first: sources and items added, replaced or deleted, facts
extracted, curation, feedback, rebuilds — and the client that made it: `app` (this app), `cli`
(the command line), `python` (a program using the library) or `mcp:<name>` (an agent through
`mnemoscope mcp`). It follows what other processes commit, like every screen. The log keeps
the newest 10,000 changes; this view lists the newest 500.

| key | does |
|---|---|
| `↑` `↓` | move |
| `Enter` | on a change to a source: show that source on the Sources screen |
"""
    def __init__(self) -> None:
        super().__init__()
        self.events: list[ActivityEvent] = []
        self.subject_width = self.client_width = 0

    def compose_body(self) -> ComposeResult:
        with Vertical(id="activity-main"):
            yield Static("", id="activity-summary")
            yield PlainTable(id="activity-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#activity-table", DataTable).focus()

    def fit_columns(self) -> None:
        self.client_width = 18 if self.app.size.width >= WIDE else 14
        self.subject_width = set_columns(self.query_one("#activity-table", DataTable),
                                         (("when", "when", 11), ("client", "client", self.client_width),
                                          ("change", "action", 15), ("n", "count", 5), ("what", "subject", None)),
                                         self.app.size.width)

    def refresh_data(self) -> None:
        services = self.services
        # one more than shown: whether the log holds older changes than the view lists
        self.run_task("activity", "Loading the activity log", lambda: services.memory.activity.recent(LINES_SHOWN + 1),
                      progress=False, show=False, replace=True, done=self.show_activity)

    def show_activity(self, read: list["ActivityEvent"]) -> None:
        table = self.query_one("#activity-table", DataTable)
        selected = self.current_event()
        events = self.events = read[:LINES_SHOWN]
        table.clear()
        now = time.time()
        for event in events:
            table.add_row(clock(event.at, now), clip(event.client, self.client_width), event.action.replace(".", " "),
                          f"{event.count:,}" if event.count else "",
                          clip(short_subject(event.subject, event.client), self.subject_width), key=str(event.id))
        if selected is not None and any(e.id == selected.id for e in events):  # the same line stays selected
            table.move_cursor(row=[e.id for e in events].index(selected.id), animate=False)
        clients = Counter(e.client for e in events)
        summary = Text(f"{len(events):,} change(s), newest first" if len(read) <= LINES_SHOWN else
                       f"The newest {len(events):,} changes (older ones are not listed)", style="bold")
        if clients:
            summary.append("  ·  " + "  ".join(f"{client} {n:,}" for client, n in clients.most_common()), style="dim")
        else:
            summary = Text("Nothing has changed in this store yet: ingest something (key 1), or let an agent "
                           "remember through `mnemoscope mcp`.", style="dim")
        self.query_one("#activity-summary", Static).update(summary)

    def current_event(self) -> "ActivityEvent | None":
        row = self.query_one("#activity-table", DataTable).cursor_row
        return self.events[row] if self.events and 0 <= row < len(self.events) else None

    @on(DataTable.RowSelected, "#activity-table")
    def open_source(self) -> None:
        """Enter on a change to a source that is still there: that source on the Sources screen."""
        event = self.current_event()
        if event is None or event.source_id is None or event.action.endswith("deleted"):
            return
        app, source_id = self.app, event.source_id

        async def go() -> None:
            await app.switch_mode("sources")
            app.screen.select_source(source_id)

        app.call_later(go)


SCREEN = ActivityScreen
