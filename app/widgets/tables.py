"""Tables whose columns have fixed widths, fitted to the width their pane will have."""

from __future__ import annotations

import re
from typing import Any, Sequence

from rich.padding import Padding
from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import CellType, ColumnKey, RowKey

ColumnSpec = tuple[str, str, "int | None"]  # label, key, width (None: the flexible one)


def set_columns(table: DataTable, specs: tuple[ColumnSpec, ...] | list[ColumnSpec], width: int) -> int:
    """Fixed-width columns (label, key, width); the one with width None takes what ``width`` leaves.

    Fixed, because a DataTable sizes automatic columns when it next goes idle: a screen painted
    before that shows clipped columns, and snapshots would race it. Returns the flexible width.
    """
    fixed = sum(w for _label, _key, w in specs if w) + 2 * len(specs) + 1  # cell padding, scrollbar
    rest = max(12, width - fixed)
    for label, key, w in specs:
        table.add_column(label, key=key, width=w or rest)
    return rest


class PlainTable(DataTable):
    """A DataTable that shows a text cell as it is. Textual reads a ``str`` cell as markup: a
    document, a chat or an import with "[/b]" in a name or a line stopped the app (MarkupError),
    and "[@click=…]" made the cell run an action. Every table of the app is one of these; a cell
    is kept as a str (its tags escaped), as Textual would keep it."""

    def add_row(self, *cells: CellType, height: int | None = 1, key: str | None = None, label: Any = None) -> RowKey:
        return super().add_row(*(plain_cell(c) for c in cells), height=height, key=key, label=label)

    def update_cell(self, row_key: RowKey | str, column_key: ColumnKey | str, value: CellType, *,
                    update_width: bool = False) -> None:
        super().update_cell(row_key, column_key, plain_cell(value), update_width=update_width)

    def show_rows(self, rows: Sequence[tuple[str, Sequence[CellType]]], wrap: bool = False) -> None:
        """Show ``rows`` (key, cells), in their order, changing only what differs from the rows
        shown: a row gone (or changed) is removed where it is, a new one added after them; the
        cursor stays at its index (on the row after one removed), the view where it was. ``wrap``:
        each row as tall as its text wraps to, measured as it is added (Textual measures a row of
        height None only at the app's next idle, and shows nothing of it until then: the inbox
        went blank at 412 conflicts after each decision)."""
        wanted = {key: [plain_cell(c) for c in cells] for key, cells in rows}
        for row in list(self.ordered_rows):
            if wanted.get(row.key.value) != self.get_row(row.key):
                self.remove_row(row.key)
        shown = [row.key.value for row in self.ordered_rows]
        keys = list(wanted)
        kept = keys[:len(shown)] == shown
        scrolled, cursor = self.scroll_y, self.cursor_row
        if not kept:  # a row comes back between others (a decision undone): all again
            self.clear()
            shown = []
        for key in keys[len(shown):]:
            self.add_row(*wanted[key], key=key, height=self.wrapped_height(wanted[key]) if wrap else 1)
        if not kept and keys:
            self.scroll_to(y=scrolled, animate=False, immediate=True)
            self.move_cursor(row=min(cursor, len(keys) - 1), scroll=False)

    def wrapped_height(self, cells: Sequence[CellType]) -> int:
        """The lines the tallest of ``cells`` wraps to in its column, as the table renders it."""
        console, pad = self.app.console, self.cell_padding
        return max(1, *(len(console.render_lines(Padding(Text.from_markup(c) if isinstance(c, str) else c, (0, pad)),
                                                 self.app.console_options.update_width(column.get_render_width(self)),
                                                 pad=False))
                        for column, c in zip(self.ordered_columns, cells)))


_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")  # what Rich reads as a tag (rich.markup.escape's pattern)


def plain_cell(cell: CellType) -> CellType:
    """A ``str`` cell with every tag escaped, so that Textual shows it as the text it is (as
    rich.markup.escape, without the backslash it adds at the end for joining markup)."""
    if not isinstance(cell, str) or "[" not in cell:
        return cell
    return _TAG.sub(lambda tag: f"{tag[1]}{tag[1]}\\{tag[2]}", cell)


class PagedTable(PlainTable):
    """A long list shown a page at a time (a source's items, the episodes' timeline), moved
    through as if the table held it all: a key that would leave the page (Down on its last row,
    PgDn there, Up or PgUp on its first, Home and End anywhere) asks the screen for the page it
    leads to (:func:`turned_to`), when the list has one."""

    class LeavePage(Message):
        """The cursor leaves the page: ``to`` is next, previous, first or last."""

        def __init__(self, table: "PagedTable", to: str) -> None:
            super().__init__()
            self.table, self.to = table, to

        @property
        def control(self) -> "PagedTable":
            """The table left (``@on(PagedTable.LeavePage, "#its-id")`` selects by it)."""
            return self.table

    BINDINGS = [Binding("home", "scroll_top", show=False, id="table-top"),
                Binding("end", "scroll_bottom", show=False, id="table-bottom")]

    more_before = False  # whether the list goes on before the page and after it (the screen sets them)
    more_after = False

    def _leave(self, to: str, more: bool) -> bool:
        if more:
            self.post_message(self.LeavePage(self, to))
        return more

    def action_cursor_down(self) -> None:
        if not (self.cursor_row == self.row_count - 1 and self._leave("next", self.more_after)):
            super().action_cursor_down()

    def action_page_down(self) -> None:
        if self.cursor_row == self.row_count - 1:
            self.action_cursor_down()
        else:
            super().action_page_down()

    def action_cursor_up(self) -> None:
        if not (self.cursor_row == 0 and self._leave("previous", self.more_before)):
            super().action_cursor_up()

    def action_page_up(self) -> None:
        if self.cursor_row == 0:
            self.action_cursor_up()
        else:
            super().action_page_up()

    def action_scroll_top(self) -> None:
        if not self._leave("first", self.more_before):
            super().action_scroll_top()

    def action_scroll_bottom(self) -> None:
        if not self._leave("last", self.more_after):
            super().action_scroll_bottom()


def page_label(noun: str, start: int, shown: int, total: int, width: int) -> str:
    """A paged column's label: ``noun`` alone when the page holds every row, else which rows it
    holds, in the most words that fit the column's ``width``. A label clipped by the table misleads:
    'summary (1–200 of 464,' read as 464 episodes (the timeline beside its panel, at 1M)."""
    if shown >= total:
        return noun
    first, last = f"{start + 1:,}", f"{start + shown:,}"
    fitting = (f"{noun} ({first}–{last} of {total:,})", f"{first}–{last} of {total:,}", f"{first}+ of {total:,}")
    return next((label for label in fitting if len(label) <= width), fitting[-1])


def turned_to(to: str, start: int, size: int, total: int) -> tuple[int, int]:
    """Where a :class:`PagedTable` leaving its page (at ``start``, pages of ``size``, ``total``
    rows in all) goes: (the page's start, the cursor's row in it, -1 for its last): the next
    page's first row, the previous page's last, the list's first or last row."""
    last_page = max(0, total - 1) // size * size
    return {"next": (start + size, 0), "previous": (max(0, start - size), -1), "first": (0, 0), "last": (last_page, -1)}[to]
