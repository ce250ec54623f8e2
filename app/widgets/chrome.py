"""The chrome every screen shares: the store header and the screen tabs."""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

from textual.content import Content
from textual.markup import escape
from textual.reactive import reactive
from textual.widgets import Input, Static, Tab, Tabs

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.records import Counts

# (mode, key, title) in tab order.
SCREENS = [
    ("ingest", "1", "Ingest"),
    ("sources", "2", "Sources"),
    ("topics", "3", "Topics"),
    ("facts", "4", "Facts"),
    ("memories", "5", "Memories"),
    ("query", "6", "Query"),
    ("ranker", "7", "Ranker"),
    ("activity", "8", "Activity"),
]

SCREEN_KEYS = frozenset(key for _mode, key, _title in SCREENS)


class QueryBox(Input):
    """The query box the app opens in. While it is empty, 1…8 are the screen keys the footer
    promises, not text; once a question is begun, every digit is text (a question beginning with
    a number starts with a space)."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        if not self.value and character in SCREEN_KEYS:
            return False
        return super().check_consume_key(key, character)


COUNTS = [("sources", "sources"), ("items", "items"), ("episodes", "episodes"), ("facts", "facts"),
          ("entities", "entities"), ("topics", "topics"), ("feedback_events", "feedback")]


def describe_counts(counts: Counts | None) -> str:
    totals = counts.totals() if counts is not None else {}
    return " · ".join(f"{totals[key]:,} {noun}" for key, noun in COUNTS if key in totals)


class StoreHeader(Static):
    """One line: the app, the store and its counts, and what is running."""

    label: reactive[str] = reactive("opening…")
    counts: reactive[str] = reactive("")
    busy: reactive[str] = reactive("")

    def on_mount(self) -> None:
        app = self.app
        self.watch(app, "store_label", lambda v: setattr(self, "label", v))
        self.watch(app, "store_stats", lambda v: setattr(self, "counts", describe_counts(v)))
        self.watch(app, "busy", lambda v: setattr(self, "busy", v))

    def render(self) -> str:
        """Everything when it fits; else the brand goes, then the word "store", then the store's
        folder, so that the counts are cut (with an ellipsis) only when nothing else can give way.
        What runs comes first."""
        busy = f"[$warning]⟳ {escape(self.busy)}[/]  [dim]│[/dim] " if self.busy else ""
        counts = f"  [dim]│[/dim] {self.counts}" if self.counts else ""
        label, name = escape(self.label), escape(PurePath(self.label).name)
        room = self.content_size.width
        for head in ("[b]◆ Mnemoscope[/b]  [dim]store[/dim] " + label, "[dim]store[/dim] " + label, label, name):
            text = f"{busy}{head}{counts}"
            if Content.from_markup(text).cell_length <= room:
                break
        return text


class NavTabs(Tabs, can_focus=False):
    """The screens as tabs; clicking one switches to it (the number keys do the same)."""

    def __init__(self, active: str) -> None:
        super().__init__(*[Tab(f"{key} {title}", id=f"tab-{mode}") for mode, key, title in SCREENS],
                         active=f"tab-{active}")

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        event.stop()
        mode = (event.tab.id or "").removeprefix("tab-")
        if mode and mode != self.app.current_mode:
            self.app.switch_mode(mode)
