"""Tables whose columns have fixed widths, fitted to the width their pane will have."""

from __future__ import annotations

from textual.widgets import DataTable

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
