"""Memories: episodes on a timeline by session date, with summary, 5W1H events and source turns."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from mnemoscope.app.widgets import PromptDialog, clip, one_line, split_summary
from mnemoscope.app.widgets.tables import PagedTable, PlainTable, page_label, set_columns, turned_to
from mnemoscope.screens.base import BaseScreen

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.knowledge.records import Episode, Event
    from mnemoscope.engine.records import Item

# a page of the timeline: filling a table row costs the UI thread whether anyone scrolls to it or
# not, and the keys move on to the next page, so a page is what a few screens show
EPISODE_ROWS = 200

PANEL_NAMES = 6  # the most names the panel's line of who and when lists besides the speakers


def listed_summary(summary: str) -> str:
    """What the timeline lists of an episode's summary: what happened, without the head that
    says who and when (another summary is listed as it is)."""
    return split_summary(" ".join(summary.split()))[1]


def panel_head(episode: Episode) -> tuple[str, str]:
    """The panel's line of when and who, and the summary under it. A conversation's summary opens
    with who spoke and on which days ("Daniel and Maya (2023-04-03): …"): the line says that
    (the speakers, then the others its events name), and the summary is shown from what happened."""
    when = episode.time_start[:16].replace("T", " ") if episode.time_start else "undated"
    if episode.time_end and episode.time_start and episode.time_end[:10] != episode.time_start[:10]:
        when += f" to {episode.time_end[:10]}"
    speakers, summary = split_summary(episode.summary)
    others = [name for name in episode.participants if name not in speakers.split(" and ")][:PANEL_NAMES]
    who = speakers + (" · about " if speakers and others else "") + ", ".join(others)
    return f"{when} · {len(episode.items)} turn(s) · {who}", summary


ROLES = (("who", "participants"), ("what", "action"), ("when", "time"), ("where", "location"),
         ("why", "reason"), ("how", "method"))


def events_table(events: list[Event]) -> Table:
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold", expand=True)
    for short, role in ROLES:  # folded, but a date (YYYY-MM-DD) whole in the narrow panel beside the timeline
        table.add_column(short, overflow="fold", min_width=10 if role == "time" else None)
    for ev in events:
        row = []
        for _short, role in ROLES:
            value = getattr(ev, role)
            row.append(", ".join(value) if isinstance(value, list) else (value or ""))
        table.add_row(*row)
    return table


class MemoriesScreen(BaseScreen):
    NAME = "memories"
    TITLE = "Memories"
    AREA = "knowledge"
    HELP = """\
### Memories

Episodic memories on a timeline (by session date; document sections, which have none, come
last), 200 at a time: the keys move on through the whole timeline. The panel shows the selected episode's summary, its 5W1H events and the source turns it
was built from: Enter on a turn jumps to it on the Sources screen.

| key | does |
|---|---|
| `Enter` | on an episode: go to its turns; on a turn: show it on the Sources screen |
| `PgDn` `PgUp` `Home` `End` | move through the whole timeline, page after page |
| `m` | merge the next episode of the same source into this one (dry run first) |
| `s` | split: undo the merges into this episode (dry run first) |
"""
    BINDINGS = [
        Binding("m", "merge", "Merge", id="memories-merge"),
        Binding("s", "split", "Split", id="memories-split"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.episodes: list[Episode] = []
        self.turns: list[Item] = []
        self.source_names: dict[int, str] = {}
        self.page_start = 0  # how many episodes of the timeline come before the page
        self.total = 0  # live episodes
        self.pending_row: int | None = None  # where the cursor goes in the page being read (-1: its last row)

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()
        with Horizontal(id="memories-main", classes="split"):
            yield PagedTable(id="episodes-table", cursor_type="row")
            with Vertical(id="episode-side"):
                with VerticalScroll(id="episode-detail"):
                    yield Static("", id="episode-body")
                yield PlainTable(id="turns-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#episodes-table", DataTable).focus()

    def fit_columns(self) -> None:
        self.summary_width = set_columns(self.query_one("#episodes-table", DataTable),
                                         (("date", "date", 10), ("", "line", 1), ("source", "source", 18),
                                          ("summary", "summary", None)), self.pane_width(1 / 2))
        self.turn_width = set_columns(self.query_one("#turns-table", DataTable),
                                      (("turn", "key", 6), ("speaker", "speaker", 10), ("text", "text", None)),
                                      self.pane_width(1 / 2, border=1))

    def refresh_data(self) -> None:
        self.load_page(self.page_start)

    def load_page(self, start: int, row: int | None = None) -> None:
        """Read the timeline's page from its ``start``-th episode in a worker; the cursor on its
        ``row`` (-1: the last), else on the episode it was on."""
        mem = self.services.memory
        self.pending_row = row

        def load() -> tuple[list[Episode], int, dict[int, str], int]:
            episodes, total = mem.knowledge.timeline_page(EPISODE_ROWS, start)
            if not episodes and start:  # the page's episodes went (merged, deleted): the first page
                return *mem.knowledge.timeline_page(EPISODE_ROWS), {s.id: s.name for s in mem.sources()}, 0
            return episodes, total, {s.id: s.name for s in mem.sources()}, start

        self.run_task("episodes", "Loading episodes", load, progress=False, show=False, replace=True,
                      done=lambda loaded: self.show_episodes(*loaded))

    @on(PagedTable.LeavePage)
    def leave_page(self, event: PagedTable.LeavePage) -> None:
        start, row = turned_to(event.to, self.page_start, EPISODE_ROWS, self.total)
        if start != self.page_start and 0 <= start < self.total:
            self.load_page(start, row)

    def show_episodes(self, episodes: list[Episode], total: int, source_names: dict[int, str], start: int = 0) -> None:
        table = self.query_one("#episodes-table", PagedTable)
        current = self.current_episode()
        self.episodes, self.source_names, self.page_start, self.total = episodes, source_names, start, total
        table.clear()
        table.more_before, table.more_after = start > 0, start + len(episodes) < total
        table.columns["summary"].label = Text(page_label("summary", start, len(episodes), total, self.summary_width))
        previous = object()
        for e in self.episodes:
            date = (e.time_start or "")[:10] or "undated"
            first = date != previous
            previous = date
            source = Path(source_names.get(e.source_id, "?").split("#")[0]).stem
            table.add_row(date if first else "", "┬" if first else "│", source[:18],
                          clip(listed_summary(e.summary), self.summary_width), key=str(e.id))
        ids = [e.id for e in self.episodes]
        if self.pending_row is not None and ids:
            table.move_cursor(row=self.pending_row % len(ids))
        elif current is not None and current.id in ids:
            table.move_cursor(row=ids.index(current.id))
        self.pending_row = None
        self.show_episode()

    def current_episode(self) -> Episode | None:
        table = self.query_one("#episodes-table", DataTable)
        row = table.cursor_row
        return self.episodes[row] if self.episodes and 0 <= row < len(self.episodes) else None

    @on(DataTable.RowHighlighted, "#episodes-table")
    def show_episode(self) -> None:
        ep = self.current_episode()
        body = self.query_one("#episode-body", Static)
        if ep is None:
            body.update(Text("No episodes yet: ingest a conversation or documents.", style="dim"))
            self.show_turns(None, [])
            return
        head = Text()
        head.append(f"Episode {ep.id} · {ep.session}\n", style="bold")
        line, summary = panel_head(ep)
        head.append(line + "\n", style="dim")
        if ep.merged_from:
            head.append(f"merged from episode(s) {', '.join(map(str, ep.merged_from))} (s splits)\n", style="yellow")
        head.append("\n" + summary + "\n")
        parts: list[RenderableType] = [head]
        if ep.events:
            parts.append(Text(f"\nEvents (5W1H, {len(ep.events)})", style="bold"))
            parts.append(events_table(ep.events))
        body.update(Group(*parts))
        mem = self.services.memory
        ids = list(ep.items)
        self.run_task("turns", "Loading turns", lambda: list(mem.items(ids).values()),
                      progress=False, show=False, replace=True, done=partial(self.show_turns, ep))

    def show_turns(self, episode: Episode | None, items: list[Item]) -> None:
        table = self.query_one("#turns-table", DataTable)
        table.clear()
        self.turns = sorted(items, key=lambda i: (i.source_id, i.position))
        for item in self.turns:
            table.add_row(item.key, item.speaker or item.kind, one_line(item, self.turn_width),
                          key=str(item.id))
        table.border_title = f"source turns ({len(self.turns)}) · Enter shows one in Sources" if self.turns else ""

    @on(DataTable.RowSelected, "#episodes-table")
    def to_turns(self) -> None:
        self.query_one("#turns-table", DataTable).focus()

    @on(DataTable.RowSelected, "#turns-table")
    def jump_to_turn(self, event: DataTable.RowSelected) -> None:
        if not (0 <= event.cursor_row < len(self.turns)):
            return
        item = self.turns[event.cursor_row]
        app = self.app

        async def go() -> None:
            await app.switch_mode("sources")
            app.screen.select_source(item.source_id, item.id)

        app.call_later(go)

    # -- curation -----------------------------------------------------------------------------

    def action_merge(self) -> None:
        ep = self.current_episode()
        if ep is None:
            return
        knowledge = self.services.memory.knowledge
        later = [e for e in self.episodes[self.episodes.index(ep) + 1:] if e.source_id == ep.source_id]
        suggestion = str(later[0].id) if later else ""

        def chosen(value: str | None) -> None:
            if not value:
                return
            if not value.isdigit():
                self.notify("An episode id is a number.", severity="error")
                return
            other = int(value)
            self.curate("Merge episodes", f"Merge episode {other} into episode {ep.id} ({ep.session})?",
                        lambda dry_run: knowledge.merge_episodes(ep.id, other, dry_run=dry_run))

        self.app.push_screen(PromptDialog("Merge episodes", f"Merge which episode into episode {ep.id}? (its id; "
                                          "the next one of the same source is suggested)", suggestion), chosen)

    def action_split(self) -> None:
        ep = self.current_episode()
        if ep is None:
            return
        knowledge = self.services.memory.knowledge
        self.curate("Split episode", f"Split episode {ep.id} back into the episodes merged into it?",
                    lambda dry_run: knowledge.split_episode(ep.id, dry_run=dry_run))


SCREEN = MemoriesScreen
