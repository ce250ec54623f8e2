"""Compare: one query under two strategies or intents, side by side, shared hits marked."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Select, Static

from mnemoscope.app.services import RecallRequest
from mnemoscope.app.widgets import KeyBar, StoreHeader
from mnemoscope.app.widgets.recall import INTENTS, SOURCE_WIDTH, HitsTable
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
        yield Static(Text.assemble(("Compare  ", "bold"), f"“{self.query_text}”"), id="compare-title")
        first = self.request.strategy or self.strategies[0]
        other = next((s for s in self.strategies if s != first), first)
        with Horizontal(id="compare-main"):
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
        self.rerun()

    def fit_columns(self) -> None:
        source_width = SOURCE_WIDTH if self.app.size.width >= WIDE else 12  # narrow: the snippet keeps some room
        for side in SIDES:
            self.query_one(f"#hits-{side}", HitsTable).fit(self.app.size.width // 2 - 2, source_width)

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
        self.app.run_task(self, "compare", "Comparing", lambda: (services.recall(text, a), services.recall(text, b)),
                          progress=False, replace=True, show=False, done=self.compared,
                          failed=self.app.refused("Compare"))

    def compared(self, both: tuple["Recall", "Recall"]) -> None:
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
            inferred = f" · intent auto → {intent.get('name')}" if intent.get("inferred") else ""
            self.query_one(f"#summary-{side}", Static).update(
                f"{len(recall.hits)} hits · {len(shared)} shared{inferred}")


SCREEN = CompareScreen
