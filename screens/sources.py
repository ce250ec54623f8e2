"""Sources: what the store holds, source by source, item by item; delete with a dry run first."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from mnemoscope.app.widgets import clip, item_text, one_line
from mnemoscope.app.widgets.tables import PagedTable, page_label, set_columns, turned_to
from mnemoscope.screens.base import BaseScreen

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.records import Item, Source

# one page of a source's items: filling a table row costs the UI thread whether anyone scrolls to
# it or not, and the keys move on to the next page, so a page is what a few screens show
ITEM_ROWS_SHOWN = 500
# one page of the sources list, for the same reason: a year of an agent's conversations is
# thousands of sources, read at once (a row each is cheap to read) but shown a page at a time
SOURCE_ROWS_SHOWN = 500
# the "by" column: the agent that stored a source through MCP (its name, cut), or "you" (ingested,
# imported or noted: the person's, which no agent may replace or delete)
BY_WIDTH = 9


@dataclass
class ItemPage:
    """One page of a source's items, as a worker read it."""

    offset: int  # how many of the source's items come before it
    items: list[Item]



# the most of one meta value the item's panel shows: a photo a chat sent inline is kept whole in
# its turn's meta (a data: URL, megabytes of base64), and laying that out held the screen for seconds
META_CHARS = 200


def shown_meta(value: Any) -> Any:
    """An item's meta value as its panel shows it: a text longer than META_CHARS cut, saying how
    long it is (a data: URL keeps its head, "data:image/png;base64,… (2,796,224 characters)"), in
    lists and objects too."""
    if isinstance(value, str) and len(value) > META_CHARS:
        comma = value.find(",", 0, META_CHARS) if value.startswith("data:") else -1
        return f"{value[:comma + 1] if comma >= 0 else value[:META_CHARS]}… ({len(value):,} characters)"
    if isinstance(value, dict):
        return {k: shown_meta(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown_meta(v) for v in value]
    return value


class SourcesScreen(BaseScreen):
    NAME = "sources"
    TITLE = "Sources"
    HELP = """\
### Sources

Every source in the store (documents, conversations, notes) and, for the selected one, its
items. The panel shows the selected item in full. The **by** column says who stored a source:
an agent through MCP (by its name; it may replace or forget only those), or you.

| key | does |
|---|---|
| `↑` `↓` | move; `Tab` switches between sources and items |
| `PgDn` `PgUp` `Home` `End` | move through the whole list of sources or items, page after page |
| `Enter` | on a source: go to its items |
| `]` `[` | the next or previous page of a source's items (a page holds 500) |
| `d` | delete the selected item (or source, when the sources list has focus), after a dry run |
"""

    BINDINGS = [
        Binding("d", "delete", "Delete", id="sources-delete"),
        # not in the key bar: the items' border names them when a source has more than a page
        Binding("right_square_bracket", "page(1)", "Next page", id="sources-next-page", show=False),
        Binding("left_square_bracket", "page(-1)", "Previous page", id="sources-previous-page", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.sources: list[Source] = []  # every source; the table shows a page of them
        self.sources_start = 0  # how many sources come before the page shown
        self.counts: dict[int, int | None] = {}  # items per source, as shown
        self.items: list[Item] = []  # the page shown
        self.page_start = 0  # how many of the source's items come before the page
        self.page_asked: int | None = None  # the page being read (] ] counts from it, not from the one shown)
        self.pending_row: int | None = None  # where the cursor goes in the page being read (-1: its last row)
        self.pending_source: int | None = None
        self.pending_item: int | None = None
        self.text_width = self.name_width = 0  # set with the columns

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="sources-main", classes="split"):
            with Vertical(id="sources-left"):
                yield PagedTable(id="sources-table", cursor_type="row")
                yield PagedTable(id="items-table", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="item-detail"):
                yield Static("", id="item-body")

    def on_mount(self) -> None:
        self.query_one("#sources-table", DataTable).focus()

    def fit_columns(self) -> None:
        self.name_width = set_columns(self.query_one("#sources-table", DataTable),
                                      (("id", "id", 4), ("kind", "kind", 12), ("by", "by", BY_WIDTH), ("source", "name", None),
                                       ("items", "items", 9)),
                                      self.pane_width(3 / 5))
        self.text_width = set_columns(self.query_one("#items-table", DataTable),
                                      (("key", "key", 6), ("speaker", "speaker", 10), ("date", "date", 10),
                                       ("text", "text", None)), self.pane_width(3 / 5))

    def refresh_data(self) -> None:
        services = self.services

        def load() -> list[tuple[Source, int | None]]:
            mem = services.memory
            counts = mem.item_counts_by_source()
            return [(s, counts.get(s.id, 0)) for s in mem.sources()]

        self.run_task("sources", "Loading sources", load, progress=False, show=False, replace=True,
                      done=self.show_sources)

    def show_sources(self, rows: list[tuple[Source, int | None]]) -> None:
        if self.grow_sources(rows):
            return
        table = self.query_one("#sources-table", DataTable)
        previous, previous_at = self.current_source(), self.sources_start + table.cursor_row
        self.sources, self.counts = [s for s, _ in rows], {s.id: count for s, count in rows}
        wanted = self.pending_source or (previous.id if previous else None)
        self.pending_source = None
        ids = [s.id for s in self.sources]
        if not ids:
            self.show_sources_page(0)
            self.show_items(None, [])
            return
        # the source shown before, or when it is gone (deleted) the one now in its place; the page
        # is filled again even when it stays: another of its sources may be gone
        at = ids.index(wanted) if wanted in ids else min(max(previous_at, 0), len(ids) - 1)
        self.show_sources_page(at - at % SOURCE_ROWS_SHOWN, at % SOURCE_ROWS_SHOWN)
        self.load_items(ids[at])

    def show_sources_page(self, start: int, row: int = 0) -> None:
        """The sources from the ``start``-th, a page of them, the cursor on its ``row`` (-1: the last)."""
        table = self.query_one("#sources-table", PagedTable)
        page = self.sources[start:start + SOURCE_ROWS_SHOWN]
        self.sources_start = start
        table.clear()
        for source in page:
            self.add_source_row(table, source)
        if page:
            table.move_cursor(row=row % len(page))
        table.more_before, table.more_after = start > 0, start + len(page) < len(self.sources)
        self.label_sources_page()

    def label_sources_page(self) -> None:
        """The name column says which sources the page holds, when it does not hold them all."""
        table, start = self.query_one("#sources-table", PagedTable), self.sources_start
        shown = table.row_count
        table.columns["name"].label = Text(page_label("source", start, shown, len(self.sources), self.name_width))

    def add_source_row(self, table: DataTable, source: Source) -> None:
        count = self.counts.get(source.id)
        table.add_row(str(source.id), source.kind, clip(source.agent or "you", BY_WIDTH), Path(source.name).name,
                      "" if count is None else f"{count:,}", key=str(source.id))

    def grow_sources(self, rows: list[tuple[Source, int | None]]) -> bool:
        """Sources only added, or their counts changed (another process ingesting): update the
        rows in place, so the cursor, the items shown and the scroll stay as they were, and the
        selected source's items are read again only if they changed. False: rebuild the list."""
        table = self.query_one("#sources-table", PagedTable)
        before, start = [s.id for s in self.sources], self.sources_start
        shown = before[start:start + SOURCE_ROWS_SHOWN]
        if not before or [s.id for s, _ in rows][:len(before)] != before or table.row_count != len(shown):
            return False
        selected = self.current_source()
        changed = {s.id for s, count in rows[:len(before)] if self.counts.get(s.id) != count}
        self.sources, self.counts = [s for s, _ in rows], {s.id: count for s, count in rows}
        for source in self.sources[start + len(shown):start + SOURCE_ROWS_SHOWN]:  # on the page's room
            self.add_source_row(table, source)
        for source_id in changed.intersection(shown):
            count = self.counts[source_id]
            table.update_cell(str(source_id), "items", "" if count is None else f"{count:,}")
        table.more_after = start + table.row_count < len(self.sources)
        self.label_sources_page()
        if selected is not None and selected.id in changed:
            self.load_items(selected.id)
        return True

    def current_source(self) -> Source | None:
        table = self.query_one("#sources-table", DataTable)
        at = self.sources_start + table.cursor_row
        return self.sources[at] if table.row_count and 0 <= at < len(self.sources) else None

    def select_source(self, source_id: int, item_id: int | None = None) -> None:
        """Move to a source (and one of its items): the jumps from the palette and from Memories.
        Waits for the lists if they are still loading."""
        self.pending_item = item_id
        ids = [s.id for s in self.sources]
        if source_id not in ids:
            self.pending_source = source_id
            return
        at = ids.index(source_id)
        start = at - at % SOURCE_ROWS_SHOWN
        if start != self.sources_start or self.query_one("#sources-table", DataTable).row_count == 0:
            self.show_sources_page(start, at - start)
        else:
            self.query_one("#sources-table", DataTable).move_cursor(row=at - start)
        self.load_items(source_id)

    @on(DataTable.RowHighlighted, "#sources-table")
    def source_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.load_items(int(event.row_key.value))

    @on(DataTable.RowSelected, "#sources-table")
    def source_selected(self) -> None:
        self.query_one("#items-table", DataTable).focus()

    def load_items(self, source_id: int, offset: int | None = None, row: int | None = None) -> None:
        """Read one page of the source's items in a worker: the page at ``offset``, else the one
        holding the item a jump asked for, else the page shown when the source is the same
        (read again after a change), else the first; the cursor on its ``row`` (-1: the last)."""
        services, wanted = self.services, self.pending_item
        same = bool(self.items) and self.items[0].source_id == source_id
        start = offset if offset is not None else self.page_start if same else 0
        self.page_asked, self.pending_row = (start if offset is not None else None), row

        def load() -> ItemPage:
            mem = services.memory
            at = start
            if offset is None and wanted is not None:
                found = mem.offset_in_source(wanted)
                at = at if found is None else found - found % ITEM_ROWS_SHOWN
            items = mem.source_items(source_id, at, ITEM_ROWS_SHOWN)
            if not items and at:  # the page's last items were deleted: the page before
                at = max(0, at - ITEM_ROWS_SHOWN)
                items = mem.source_items(source_id, at, ITEM_ROWS_SHOWN)
            return ItemPage(at, items)

        self.run_task("items", "Loading items", load, progress=False, show=False, replace=True,
                      done=lambda page: self.show_items(source_id, page.items, page.offset), failed=self.items_failed)

    def items_failed(self, error: str) -> None:
        """The page was not read: the page shown stays, and ] [ count from it again."""
        self.page_asked = self.pending_row = None
        self.app.refused(self.TITLE)(error)

    def action_page(self, step: int) -> None:
        """] and [: the page after (before) the one shown, or the one on its way (] ] turns two)."""
        page = self.page_asked if self.page_asked is not None else self.page_start
        self.turn_to(page + step * ITEM_ROWS_SHOWN)

    def turn_to(self, start: int, row: int | None = None) -> None:
        source = self.current_source()
        total = self.counts.get(source.id) if source is not None else None
        if source is not None and total and 0 <= start < total:
            self.load_items(source.id, start, row)

    @on(PagedTable.LeavePage, "#sources-table")
    def leave_sources_page(self, event: PagedTable.LeavePage) -> None:
        """The cursor moved past the sources' page shown: the page it leads to, and the items of
        the source it lands on."""
        start, row = turned_to(event.to, self.sources_start, SOURCE_ROWS_SHOWN, len(self.sources))
        self.show_sources_page(start, row)
        if (source := self.current_source()) is not None:
            self.load_items(source.id)

    @on(PagedTable.LeavePage, "#items-table")
    def leave_page(self, event: PagedTable.LeavePage) -> None:
        """The cursor moved past the page shown: the page it leads to."""
        source = self.current_source()
        total = (self.counts.get(source.id) if source is not None else None) or 0
        self.turn_to(*turned_to(event.to, self.page_start, ITEM_ROWS_SHOWN, total))

    def show_items(self, source_id: int | None, items: list[Item], offset: int = 0) -> None:
        table = self.query_one("#items-table", DataTable)
        # the same page again (an item of it deleted): the cursor stays where it was
        kept_row = table.cursor_row if self.items and self.items[0].source_id == source_id and offset == self.page_start else None
        self.items, self.page_start, self.page_asked = items, offset, None
        table.clear()
        for item in self.items:
            table.add_row(item.key, item.speaker or "", (item.timestamp or "")[:10],
                          one_line(item, self.text_width), key=str(item.id))
        wanted = self.pending_item
        if wanted is not None and source_id is not None and any(i.id == wanted for i in self.items):
            self.pending_item = None
            table.move_cursor(row=[i.id for i in self.items].index(wanted))
            table.focus()
        elif self.pending_row is not None and self.items:
            table.move_cursor(row=self.pending_row % len(self.items))
        elif kept_row is not None and self.items:
            table.move_cursor(row=min(kept_row, len(self.items) - 1))
        self.pending_row = None
        total = max(self.counts.get(source_id, 0) or 0, offset + len(items)) if source_id is not None else 0
        table.more_before, table.more_after = offset > 0, offset + len(items) < total
        table.border_title = (f"items {offset + 1:,}–{offset + len(items):,} of {total:,} · [ ] pages"
                              if total > len(items) else "")
        self.show_item()

    @on(DataTable.RowHighlighted, "#items-table")
    def show_item(self) -> None:
        body = self.query_one("#item-body", Static)
        item = self.current_item()
        source = self.current_source()
        if item is None:
            body.update(Text("This store holds no sources yet: ingest some on the Ingest screen (key 1).",
                             style="dim") if not self.sources else "")
            return
        text = Text()
        text.append(f"{Path(source.name).name if source else ''} · {item.kind} {item.key}", style="bold")
        if source is not None and source.agent is not None:
            text.append(f" · stored by {source.agent} through MCP", style="bold")
        text.append("\n")
        if item.speaker or item.timestamp:
            text.append(" · ".join(x for x in (item.speaker, item.timestamp) if x) + "\n", style="dim")
        if item.title:
            text.append(item.title + "\n", style="italic")
        text.append("\n")
        text.append_text(item_text(item))
        text.append("\n")
        extra = {k: shown_meta(v) for k, v in (item.meta or {}).items() if k not in ("heading_path",)}
        if item.tags or extra:
            text.append("\n" + json.dumps({"tags": item.tags, **extra}, ensure_ascii=False), style="dim")
        text.append(f"\nitem id {item.id}", style="dim")
        body.update(text)

    def current_item(self) -> Item | None:
        table = self.query_one("#items-table", DataTable)
        row = table.cursor_row
        return self.items[row] if self.items and 0 <= row < len(self.items) else None

    # -- delete, with the dry run first -------------------------------------------------------

    def action_delete(self) -> None:
        mem = self.services.memory
        if self.focused is self.query_one("#sources-table"):
            if (source := self.current_source()) is not None:
                self.curate("Delete source", f"Delete the source “{Path(source.name).name}” and all its items?",
                            lambda dry_run: mem.delete_source(source.id, dry_run=dry_run))
        elif (item := self.current_item()) is not None:
            self.curate("Delete item", f"Delete {item.kind} {item.key} (item {item.id})?",
                        lambda dry_run: mem.delete_item(item.id, dry_run=dry_run))


SCREEN = SourcesScreen
