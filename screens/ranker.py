"""Ranker: what the ranking has learned from feedback, how far it is trusted (λ), and a reset."""

from __future__ import annotations

import time
from typing import Any

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from mnemoscope.app.widgets import ChoiceDialog, ColumnChart, clip
from mnemoscope.app.widgets.tables import set_columns
from mnemoscope.screens.base import BaseScreen

EVENTS_SHOWN = 200


def win_rate(gate: Any) -> float | None:
    decided = gate.model_wins + gate.heuristic_wins
    return gate.model_wins / decided if decided else None


def status_table(status: Any) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    rate = win_rate(status.gate)
    table.add_row("state", status.state)
    table.add_row("λ", f"{status.lam:.3f}  (the learned model's share of the score; 0 = heuristic only)")
    table.add_row("feedback events", f"{status.events:,}")
    table.add_row("pairs", f"{status.train_pairs:,} to train · {status.held_out_pairs:,} held out")
    table.add_row("held-out win rate",
                  "no held-out pairs yet" if rate is None else
                  f"{rate:.0%} (model {status.gate.model_wins} vs heuristic {status.gate.heuristic_wins}; "
                  f"lower bound {status.gate.lower_bound:.2f})")
    table.add_row("model", f"{status.model_steps:,} training steps · {status.coaccess_edges:,} co-access edges · "
                           f"{status.trusted_items:,} trusted items")
    weights = ", ".join(f"{k} {v:+.2f}" for k, v in status.heuristic.items())
    table.add_row("heuristic floor", weights)
    return table


def when(timestamp: float, now: float) -> str:
    age = max(0.0, now - timestamp)
    for unit, seconds in (("d", 86400), ("h", 3600), ("m", 60)):
        if age >= seconds:
            return f"{int(age // seconds)}{unit} ago"
    return "just now"


class RankerScreen(BaseScreen):
    NAME = "ranker"
    TITLE = "Ranker"
    AREA = "ranker"
    HELP = """\
### Ranker

The ranking learns from feedback (mark hits used with `u` on the Query screen, send with `f`).
A learned model is blended with a heuristic floor by λ, which a referee raises only when the
model beats the heuristic on held-out pairs; so learning can help and never makes ranking worse.

| key | does |
|---|---|
| `R` | reset: forget all learning (after a confirmation) |
"""
    BINDINGS = [Binding("R", "reset", "Reset", id="ranker-reset")]

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()
        with Horizontal(id="ranker-main", classes="split"):
            with Vertical(id="ranker-left"):
                with VerticalScroll(id="ranker-status"):
                    yield Static("", id="ranker-body")
                with Horizontal(id="ranker-charts"):
                    yield ColumnChart("λ per feedback event", id="curve-lambda")
                    yield ColumnChart("held-out lower bound", id="curve-bound", style="green")
            yield DataTable(id="feedback-table", cursor_type="row", zebra_stripes=True)

    def fit_columns(self) -> None:
        self.query_width = set_columns(self.query_one("#feedback-table", DataTable),
                                       (("#", "id", 3), ("when", "when", 8), ("query", "query", None),
                                        ("shown", "shown", 5), ("used", "used", 4), ("ignored", "ignored", 7)),
                                       self.pane_width(1 / 2, border=1))

    def refresh_data(self) -> None:
        memory = self.services.memory  # its ranker is loaded in the worker, on first use
        self.run_task("ranker", "Loading the ranker",
                      lambda: (memory.ranker.status(), memory.ranker.feedback_log(EVENTS_SHOWN)),
                      progress=False, show=False, replace=True, done=lambda loaded: self.show_status(*loaded))

    def reset_done(self, _result: None) -> None:
        self.notify("Learning forgotten: ranking is the heuristic again.", title="Ranker reset")
        self.app.store_changed()

    def show_status(self, status: Any, events: list[Any]) -> None:
        self.query_one("#ranker-body", Static).update(status_table(status))
        curve = status.curve
        self.query_one("#curve-lambda", ColumnChart).values = [p.lam for p in curve]
        self.query_one("#curve-bound", ColumnChart).values = [p.lower_bound for p in curve]
        table = self.query_one("#feedback-table", DataTable)
        selected = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.row_count else None
        table.clear()
        now = time.time()
        for e in events:
            query = " ".join(e.query.split())
            table.add_row(str(e.id), when(e.created_at, now), clip(query, self.query_width),
                          str(len(e.shown)), str(len(e.used)), str(len(e.ignored)), key=str(e.id))
        if selected in {str(e.id) for e in events}:  # new events come in above: the cursor stays on its own
            table.move_cursor(row=table.get_row_index(selected), animate=False)
        table.border_title = f"feedback events ({status.events:,})"

    def action_reset(self) -> None:
        if not self.services.has("ranker"):
            return
        ranker = self.services.memory.ranker
        self.app.push_screen(
            ChoiceDialog("Reset the ranker", "Forget every feedback event, the learned model, co-access edges and "
                         "trust? Ranking returns to the heuristic. This cannot be undone.",
                         [("cancel", "Keep learning"), ("reset", "Reset")], danger="reset"),
            lambda choice: self.run_task("ranker-reset", "Resetting the ranker", ranker.reset, progress=False,
                                         done=self.reset_done) if choice == "reset" else None)


SCREEN = RankerScreen
