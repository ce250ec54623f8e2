"""Compare: one query under two strategies or intents, side by side, shared hits marked."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Callable

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Select, Static

from mnemoscope.app.services import RecallRequest
from mnemoscope.app.widgets import KeyBar, StoreHeader
from mnemoscope.app.widgets.recall import INTENTS, HitsTable
from mnemoscope.screens.base import WIDE, FittedScreen

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.pipeline import Recall

SIDES = ("a", "b")


class CompareScreen(FittedScreen):
    """Pushed over the Query screen (key ``c``); Esc goes back."""

    TITLE = "Compare"
    HELP = """\
### Compare

The same query under two settings, side by side. Pick a strategy and an intent for each side;
the lists rerun at once. `◆` marks a hit both sides found, with its rank on the other side.

| key | does |
|---|---|
| `Esc` | back to the query |
| `Tab` | move between the pickers and the lists |
"""
    BINDINGS = [Binding("escape", "app.pop_screen", "Back", id="compare-back")]

    def __init__(self, query: str, request: RecallRequest, strategies: list[str], source_names: dict[int, str]) -> None:
        super().__init__(id="screen-compare")
        self.query_text, self.request, self.strategies, self.source_names = query, request, strategies, source_names

    def compose(self) -> ComposeResult:
        yield StoreHeader(id="store-header")
        yield Static(id="compare-title")
        first = self.request.strategy or self.strategies[0]
        other = next((s for s in self.strategies if s != first), first)
        with Horizontal(id="compare-main", classes="split"):  # stacked when narrow: a snippet needs the width
            for side, strategy in zip(SIDES, (first, other)):
                with Vertical(classes="compare-side"):
                    with Horizontal(classes="compare-pickers"):
                        yield Select([(s, s) for s in self.strategies], value=strategy, allow_blank=False,
                                     compact=True, id=f"strategy-{side}")
                        yield Select([(f"intent {i}", i) for i in INTENTS],
                                     value=self.request.intent or "auto", allow_blank=False, compact=True,
                                     id=f"intent-{side}")
                    yield Static("", id=f"summary-{side}", classes="compare-summary")
                    yield HitsTable(mark="◆", mark_width=3, rank_width=2, details=False, id=f"hits-{side}")
        yield KeyBar()

    def on_mount(self) -> None:
        self.show_title()
        self.rerun()

    def fit_columns(self) -> None:
        """Side by side when wide; stacked when narrow, where two halves of 80 columns left a
        snippet 11 characters."""
        width = self.app.size.width
        for side in SIDES:
            self.query_one(f"#hits-{side}", HitsTable).fit((width // 2 if width >= WIDE else width) - 2)

    def redraw(self) -> None:
        self.rerun()

    def side_request(self, side: str) -> RecallRequest:
        intent = self.query_one(f"#intent-{side}", Select).value
        return replace(self.request, strategy=str(self.query_one(f"#strategy-{side}", Select).value),
                       intent=None if intent == "auto" else str(intent))

    @on(Select.Changed)
    def rerun(self) -> None:
        if not self.is_mounted:
            return
        text, services = self.query_text, self.app.services
        a, b = self.side_request("a"), self.side_request("b")

        def waiting(cause: str) -> None:
            self.app.call_from_thread(self.show_title, f"Waiting for {cause}; then both sides run. Esc goes back.")

        def compare(progress: object, cancelled: Callable[[], bool]) -> "tuple[Recall, Recall] | None":
            first = services.recall(text, a, waiting, cancelled)
            second = services.recall(text, b, cancelled=cancelled) if first is not None else None
            return None if first is None or second is None else (first, second)

        self.app.run_task(self, "compare", "Comparing", compare, replace=True, show=False, done=self.compared,
                          failed=self.app.refused("Compare"))

    def show_title(self, waiting: str = "") -> None:
        """The query compared, and while the engine warms up what the comparison waits for."""
        title = Text.assemble(("Compare  ", "bold"), f"“{self.query_text}”")
        if self.request.as_of:
            title.append(f" as of {self.request.as_of}", style="cyan")
        if waiting:
            title.append(f"  {waiting}", style="italic")
        self.query_one("#compare-title", Static).update(title)

    @on(events.Unmount)
    def _drop_comparison(self) -> None:
        """Left (Esc, or / for the query box): a comparison still waiting for the warm-up or
        running is cancelled, not run for nobody beside the warm-up."""
        self.app.cancel_task("compare", self)

    def compared(self, both: "tuple[Recall, Recall] | None") -> None:
        if both is None:  # cancelled while it waited (never delivered: dropped as cancelled)
            return
        self.show_title()
        recalls = dict(zip(SIDES, both))
        ranks = {side: {h.item.id: h.rank for h in r.hits} for side, r in recalls.items()}
        shared = set(ranks["a"]) & set(ranks["b"])
        for side, other in (("a", "b"), ("b", "a")):
            recall = recalls[side]
            self.query_one(f"#hits-{side}", HitsTable).show(
                recall, self.source_names,
                lambda hit, other=other: f"◆{ranks[other][hit.item.id]}" if hit.item.id in shared else "")
            # the pickers above name the strategy and a chosen intent: only an inferred intent is news
            intent = recall.intent or {}
            inferred = f" · auto → {intent.get('name')}" if intent.get("inferred") else ""  # whole at 80 columns
            self.query_one(f"#summary-{side}", Static).update(
                f"{len(recall.hits)} hits · {len(shared)} shared{inferred}")


SCREEN = CompareScreen
