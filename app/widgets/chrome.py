"""The chrome every screen shares: the store header and the screen tabs."""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

from textual.content import Content
from textual.markup import escape
from textual.reactive import reactive
from textual.style import Style as VisualStyle
from textual.widgets import Input, Static

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


class NavTabs(Static):
    """The screens as tabs: a line of their names over a bar that marks the current one; clicking
    a name switches to it (the number keys do the same).

    One widget drawing both lines, not Textual's Tabs: that mounts a widget per tab and an
    animated underline on every screen, a third of each screen's widgets, and each screen's first
    showing styles and lays out all of them."""

    COMPONENT_CLASSES = {"nav-tabs--tab", "nav-tabs--active", "nav-tabs--bar", "nav-tabs--mark"}

    auto_links = False  # the tab styles below, not the theme's link colours

    def __init__(self, active: str) -> None:
        super().__init__(id="nav-tabs")
        self.active = active

    def render(self) -> Content:
        """Each name after one space, at every width (the eight fit in 80 columns). The bar spans
        the width; under the current name it is the highlight, set off by half cells at its ends."""
        tab, active = self.get_visual_style("nav-tabs--tab"), self.get_visual_style("nav-tabs--active")
        names: list[tuple[str, VisualStyle]] = []
        marked = (0, 0)
        column = 0
        for mode, key, title in SCREENS:
            name = f"{key} {title}"
            label = f" {name}"
            click = VisualStyle.from_meta({"@click": f"app.goto({mode!r})"})
            names.append((label, (active if mode == self.active else tab) + click))
            if mode == self.active:
                marked = (column + 1, column + 1 + len(name))
            column += len(label)
        bar, mark = self.get_visual_style("nav-tabs--bar"), self.get_visual_style("nav-tabs--mark")
        start, end = marked
        rest = max(0, self.size.width - end - 1)
        line = Content.assemble(("━" * (start - 1), bar), ("╸", bar), ("━" * (end - start), mark), ("╺", bar),
                                ("━" * rest, bar))
        return Content.assemble(*names, "\n", line)
