"""Ranker: what the ranking has learned from feedback, how far it is trusted (λ), and a reset."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Callable, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static
from textual.worker import Worker, get_current_worker

from mnemoscope.app.widgets import ChoiceDialog, ColumnChart, clip, one_line
from mnemoscope.app.widgets.tables import PlainTable, set_columns
from mnemoscope.screens.base import WIDE, BaseScreen

if TYPE_CHECKING:
    from mnemoscope.engine.rank.gate import GateReading
    from mnemoscope.engine.rank.service import EventEffect, RankerStatus, UndoResult
    from mnemoscope.engine.records import Item
    from mnemoscope.engine.store.ranker import CorruptFeedback

EVENTS_SHOWN = 200
LOAD = "ranker"  # the task that loads the screen
ITEMS_NAMED = 3  # items of each kind the event panel names


def win_rate(gate: GateReading) -> float | None:
    decided = gate.model_wins + gate.heuristic_wins
    return gate.model_wins / decided if decided else None


def status_table(status: RankerStatus) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    rate = win_rate(status.gate)
    table.add_row("state", status.state)
    table.add_row("λ", f"{status.lam:.3f}  (the learned model's share of the score; 0 = heuristic only)")
    table.add_row("feedback events", f"{status.events:,}")
    table.add_row("pairs", f"{status.train_pairs:,} to train · {status.held_out_pairs:,} held out")
    table.add_row("held-out win rate",
                  ("no held-out pairs yet" if not status.held_out_pairs else
                   "no held-out pair where model and heuristic disagree yet") if rate is None else
                  f"{rate:.0%} (model {status.gate.model_wins} vs heuristic {status.gate.heuristic_wins}; "
                  f"lower bound {status.gate.lower_bound:.2f})")
    table.add_row("model", f"{status.model_steps:,} training steps · {status.coaccess_edges:,} co-access edges · "
                           f"{status.trusted_items:,} trusted items")
    weights = ", ".join(f"{k} {v:+.2f}" for k, v in status.heuristic.items())
    table.add_row("heuristic floor", weights)
    return table


def item_line(item: Item, width: int) -> str:
    """An item on one line: where it is from, then its text."""
    if item.kind == "turn" and item.key:
        where = f"{item.key} {item.speaker or ''}".strip()
    else:  # a chunk: the last heading of its title is where it sits
        where = item.title.split("›")[-1].strip() or f"item {item.id}"
    return one_line(item, width, f"{where}: ")


def effect_text(effect: EventEffect, now: float, width: int) -> Text:
    """What a feedback event does at recall: for which queries, which items it raises and lowers."""
    e = effect.event
    text = Text()
    text.append(f"feedback event {e.id}", style="bold")
    text.append(f" · {when(e.created_at, now)}")
    if effect.withdrawn:
        text.append(f"\nwithdrawn {when(e.withdrawn_at, now)}: it no longer counts at recall\n", style="yellow")
    text.append("\nfor " if not effect.withdrawn else "\nwas for ")
    text.append(repr(" ".join(e.query.split())), style="bold")
    text.append(" and queries alike it")
    for query, similarity in effect.alike:
        text.append(f"\n  also {clip(repr(query), width - 16)} ({similarity:.2f})", style="dim")
    if effect.untaught:
        text.append(f"\n  also helps {effect.untaught}: its used items come into view there", style="dim")
    kinds = (("marked used", "shown, not used") if effect.withdrawn else
             ("raises (marked used)", "lowers (shown, not used)"))
    for items, mark, what, style in ((effect.raised, "▲", kinds[0], "green"), (effect.lowered, "▼", kinds[1], "yellow")):
        text.append(f"\n{what}: {len(items)}", style=f"bold {style}")
        for item in items[:ITEMS_NAMED]:
            text.append(f"\n{mark} {item_line(item, width - 2)}")
        if len(items) > ITEMS_NAMED:
            text.append(f"\n  … and {len(items) - ITEMS_NAMED} more", style="dim")
    if not effect.withdrawn:
        text.append("\n\nw withdraws it: its effect is gone at the next recall", style="dim")
    return text


UNREADABLE = ("While the log holds an event that cannot be read, recall uses no feedback at all. w on that "
              "event removes it and keeps the others; R resets learning, forgetting them all (the records are "
              "untouched).")


WHEN_WIDTH = len("withdrawn")  # the when column's widest: a withdrawn event says so there, whole


def when(timestamp: float, now: float) -> str:
    age = max(0.0, now - timestamp)
    for unit, seconds in (("d", 86400), ("h", 3600), ("m", 60)):
        if age >= seconds:
            return f"{int(age // seconds)}{unit} ago"
    return "just now"


class RankerScreen(BaseScreen):
    NAME = "ranker"
    TITLE = "Ranker"
    #: The time the events' ages are counted to. A snapshot test holds it still, so that what it
    #: shows does not depend on how long the run took.
    clock: ClassVar[Callable[[], float]] = staticmethod(time.time)
    AREA = "ranker"
    HELP = """\
### Ranker

The ranking learns from feedback (mark hits used with `u` on the Query screen, send with `f`).
A marked item rises at once for its query and for queries alike it about the same people (another
person's question in the same words is not alike); ignored hits sink a little, for the same question.
The feedback events are listed beside the state and charts (below them in a narrow terminal): the
highlighted one shows which items it raises and lowers, and for which queries. A learned model is blended with a heuristic floor by λ, which a
referee raises only when the model beats the heuristic on held-out queries; so learning can help
and never makes ranking worse.

| key | does |
|---|---|
| `w` | withdraw the highlighted feedback event (its effect is gone at the next recall); one that cannot be read is removed |
| `R` | reset: forget all learning (after a confirmation) |
"""
    BINDINGS = [Binding("w", "withdraw", "Withdraw", id="ranker-withdraw",
                        tooltip="Withdraw the highlighted feedback event"),
                Binding("R", "reset", "Reset", id="ranker-reset", tooltip="Forget all learning")]

    def __init__(self) -> None:
        super().__init__()
        self.effects: dict[str, EventEffect] = {}
        self.unreadable: dict[str, str] = {}  # events that cannot be read, by key: why
        self.log_unreadable = False  # some event cannot be read (maybe one not listed): no feedback counts
        self.columns: list[str] = []  # the feedback table's column keys, as fitted to the width
        self.reload_queued = False  # the store changed while a load ran: load once more after it
        self.waiting: Worker | None = None  # the wait for a background relearning's end

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()
        with Horizontal(id="ranker-main", classes="split"):
            with Vertical(id="ranker-left"):
                with VerticalScroll(id="ranker-status"):
                    yield Static("", id="ranker-body")
                with Horizontal(id="ranker-charts"):
                    yield ColumnChart("λ per feedback event", id="curve-lambda")
                    yield ColumnChart("held-out lower bound", id="curve-bound", style="green")
            with Vertical(id="ranker-events"):
                yield PlainTable(id="feedback-table", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="event-panel"):
                    yield Static("", id="event-detail")

    def fit_columns(self) -> None:
        """Wide: the table is half the terminal. Narrow, it sits beside the event panel: it takes
        3/5 of the width and leaves out the when column (the panel says when), so that a query
        reads (at 80 columns: 33 cells, not 12)."""
        wide = self.app.size.width >= WIDE
        columns = (("#", "id", 3), *((("when", "when", WHEN_WIDTH),) if wide else ()), ("query", "query", None),
                   ("used", "used", 5))
        self.columns = [key for _label, key, _width in columns]
        self.query_width = set_columns(self.query_one("#feedback-table", DataTable), columns,
                                       self.pane_width(1 / 2, border=1) if wide else self.app.size.width * 3 // 5)

    def refresh_data(self) -> None:
        """Load the status and the events, one load at a time: changes that come while one runs
        (another process's feedback, a commit each) load once more after it, not once each."""
        if LOAD in self.app.tasks:
            self.reload_queued = True
            return
        memory = self.services.memory  # its ranker is loaded in the worker, on first use

        def load() -> tuple[RankerStatus, list[EventEffect], list[CorruptFeedback]]:
            unreadable: list[CorruptFeedback] = []
            return memory.ranker.status(), memory.ranker.feedback_effects(EVENTS_SHOWN, unreadable), unreadable

        self.run_task(LOAD, "Loading the ranker", load,
                      progress=False, show=False, done=lambda loaded: self.loaded(lambda: self.show_status(*loaded)),
                      failed=lambda reason: self.loaded(lambda: self.notify(reason, title=self.TITLE, severity="error",
                                                                            markup=False)))

    def loaded(self, show: Callable[[], object]) -> None:
        """A load's outcome is shown; the changes that came meanwhile are loaded now."""
        show()
        if self.reload_queued:
            self.reload_queued = False
            self.call_later(self.redraw)  # once the load's task has left app.tasks

    def wait_for_relearning(self) -> None:
        """Reload once when the relearning in the background ends (it changes λ, the model, the
        curve), not again and again while it runs: one wait at a time, in a thread."""
        if self.waiting is not None and not self.waiting.is_finished:
            return
        services = self.services

        def wait() -> None:
            worker = get_current_worker()
            if services.wait_relearned(lambda: worker.is_cancelled):
                self.app.call_from_thread(self.redraw)

        self.waiting = self.run_worker(wait, name="relearning", group="ranker-relearning", thread=True,
                                       exit_on_error=False)

    def reset_done(self, _result: None) -> None:
        self.notify("Learning forgotten: ranking is the heuristic again.", title="Ranker reset")
        self.app.store_changed()

    def show_status(self, status: RankerStatus, effects: list[EventEffect], unreadable: list[CorruptFeedback]) -> None:
        if status.relearning:
            self.wait_for_relearning()
        self.query_one("#ranker-body", Static).update(status_table(status))
        curve = status.curve
        self.query_one("#curve-lambda", ColumnChart).values = [p.lam for p in curve]
        self.query_one("#curve-bound", ColumnChart).values = [p.lower_bound for p in curve]
        table = self.query_one("#feedback-table", DataTable)
        selected = self.selected_key()
        table.clear()
        now = self.clock()
        self.effects = {str(f.event.id): f for f in effects}
        self.unreadable = {str(exc.event_id): str(exc) for exc in unreadable}
        self.log_unreadable = status.log_unreadable
        rows = [(f.event.id, {"id": str(f.event.id), "when": "withdrawn" if f.withdrawn else when(f.event.created_at, now),
                              "query": self.query_cell(f.event.query, f.withdrawn),
                              "used": f"{len(f.event.used)}/{len(f.event.shown)}"}) for f in effects]
        rows += [(exc.event_id, {"id": str(exc.event_id), "when": "", "used": "",
                                 "query": Text(clip("cannot be read", self.query_width), style="red")})
                 for exc in unreadable]
        for event_id, cells in sorted(rows, key=lambda row: -row[0]):
            table.add_row(*(cells[key] for key in self.columns), key=str(event_id))
        if selected in self.effects or selected in self.unreadable:  # new events come in above: the cursor stays on its own
            table.move_cursor(row=table.get_row_index(selected), animate=False)
        table.border_title = f"feedback events ({status.events:,}" + (
            f", {len(effects) - sum(not f.withdrawn for f in effects)} withdrawn)" if any(f.withdrawn for f in effects) else ")")
        self.show_event()

    def query_cell(self, query: str, withdrawn: bool) -> Text:
        """A withdrawn event's query is struck through; without the when column (narrow) it also
        says withdrawn, first: a terminal may not draw the strike."""
        text = " ".join(query.split())
        if not withdrawn:
            return Text(clip(text, self.query_width))
        said = "" if "when" in self.columns else "withdrawn "
        cell = Text(said, style="yellow")
        cell.append(clip(text, self.query_width - len(said)), style="dim strike")
        return cell

    def selected_key(self) -> str | None:
        table = self.query_one("#feedback-table", DataTable)
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value if table.row_count else None

    @on(DataTable.RowHighlighted, "#feedback-table")
    def show_event(self) -> None:
        key = self.selected_key() or ""
        effect = self.effects.get(key)
        detail = self.query_one("#event-detail", Static)
        if key in self.unreadable:
            detail.update(Text(f"{self.unreadable[key]}.\n\n{UNREADABLE}", style="yellow"))
        elif effect is None:
            detail.update(Text(f"The feedback log cannot be read. {UNREADABLE}", style="yellow") if self.log_unreadable
                          else Text("No feedback yet. On the Query screen, mark the hits that helped with u and "
                                    "send them with f: they rise at once for that question.", style="dim"))
        else:
            text = effect_text(effect, self.clock(), max(20, self.query_one("#event-panel").size.width - 2))
            detail.update(Text.assemble((f"Not counted now. {UNREADABLE}\n\n", "yellow"), text)
                          if self.log_unreadable else text)

    def action_withdraw(self) -> None:
        key = self.selected_key() or ""
        effect = self.effects.get(key)
        if key in self.unreadable:
            self.remove_unreadable(int(key))
            return
        if self.log_unreadable:
            self.notify("An event of the feedback log cannot be read: no other can be withdrawn until it is removed "
                        "(w on its row, or the command the state line names). R resets learning (the records are "
                        "untouched).", severity="warning", markup=False)
            return
        if effect is None or not self.services.has("ranker"):
            self.notify("No feedback event to withdraw.", severity="warning")
            return
        if effect.withdrawn:
            self.notify(f"Feedback event {effect.event.id} is already withdrawn.", severity="warning")
            return
        ranker, event = self.services.memory.ranker, effect.event
        self.app.push_screen(
            ChoiceDialog("Withdraw feedback", f"Withdraw feedback event {event.id} for {event.query!r}? Its marks stop "
                         "counting at the next recall, and the ranker relearns from the other events.",
                         [("cancel", "Keep it"), ("withdraw", "Withdraw")], danger="withdraw"),
            lambda choice: self.run_task("ranker-withdraw", "Withdrawing feedback", lambda: ranker.undo(event.id),
                                         progress=False, done=self.withdrawn) if choice == "withdraw" else None)

    def remove_unreadable(self, event_id: int) -> None:
        """An event that cannot be read is removed, not withdrawn: nothing of it can be shown."""
        ranker = self.services.memory.ranker
        self.app.push_screen(
            ChoiceDialog("Remove feedback", f"{self.unreadable[str(event_id)]}. Remove it from the log? The other "
                         "events are kept, and recall uses their feedback again.",
                         [("cancel", "Keep it"), ("remove", "Remove")], danger="remove"),
            lambda choice: self.run_task("ranker-withdraw", "Removing feedback", lambda: ranker.undo(event_id),
                                         progress=False, done=self.withdrawn) if choice == "remove" else None)

    def withdrawn(self, result: UndoResult) -> None:
        if result.removed:
            self.notify(f"Feedback event {result.event_id} removed; the other events are kept."
                        + (f" Still: {result.still_unreadable}" if result.still_unreadable else ""),
                        title="Feedback removed", markup=False)
        else:
            self.notify(f"Feedback event {result.event_id} withdrawn: its marks no longer count.", title="Feedback withdrawn")
        self.app.store_changed()

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
