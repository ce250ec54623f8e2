"""Tables whose columns have fixed widths, fitted to the width their pane will have."""

from __future__ import annotations

import re
from typing import Any

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


_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")  # what Rich reads as a tag (rich.markup.escape's pattern)


def plain_cell(cell: CellType) -> CellType:
    """A ``str`` cell with every tag escaped, so that Textual shows it as the text it is (as
    rich.markup.escape, without the backslash it adds at the end for joining markup)."""
    if not isinstance(cell, str) or "[" not in cell:
        return cell
    return _TAG.sub(lambda tag: f"{tag[1]}{tag[1]}\\{tag[2]}", cell)
