"""Query: ask the store, see the hits, why each one ranked, the trace, and teach the ranking."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Input, Select, Static, TabbedContent, TabPane

from mnemoscope.app.services import RecallRequest
from mnemoscope.app.widgets import AsOfBox, ChoiceDialog, TextBox, highlight, item_text, query_terms, split_summary
from mnemoscope.app.widgets.recall import INTENTS, MODES, HitsTable, hit_source_label
from mnemoscope.app.widgets.trace import TraceView
from mnemoscope.screens.base import BaseScreen, typing_keys

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from textual.worker import Worker

    from mnemoscope.engine.knowledge.records import Episode, Fact
    from mnemoscope.engine.pipeline import AnswerNote, Hit, MarkNote, Recall

SELECT_CHROME = 3  # a compact Select's cells around its label: padding and the ▼
WHY_BAR = 10  # cells of a feature's bar in the Why panel, where the panel has room for them
# the rules that move a hit after it was scored, as its Why says so: its score is then its place's
# (or just above the hit it passes), not the sum of the reasons listed under it
MOVED = {"change": "a newer change of what the question asks",  # the help's C, V, S and L
         "value": "a newer value of what the question asks",
         "successor": "what replaced a fact below",
         "claim": "a newer claim of the slot asked"}


def knowledge_text(episodes: list[Episode], facts: list[Fact], as_of: str | None = None) -> Text:
    """The episodes and facts of a recall (Lite: these are the answer; Pro and Max: beside the
    items). An episode's date once (its summary's head says it again); each fact with when it
    held, and one that no longer holds dim and said so, as the CLI does ("superseded by #197"):
    the recall returns it because it was once true, which is not the answer to "now". Asked as
    of a date, the states are as of that date (a fact replaced later holds), and the head says so."""
    text = Text()
    if as_of:
        text.append(f"As of {as_of}: what had been said by then, and the facts that held then\n\n", style="cyan")
    text.append(f"Episodes ({len(episodes)})\n", style="bold")
    for e in episodes:
        text.append("• ")
        if e.time_start:
            text.append(f"{e.time_start[:10]} ", style="cyan")
        who, what = split_summary(e.summary)
        text.append(f"{who}: {what}\n" if who else f"{what}\n")
    text.append(f"\nFacts ({len(facts)})\n", style="bold")
    for f in facts:
        note = f.state_note()
        dim = "dim" if note else ""
        text.append("• ", style=dim)
        text.append(f.subject, style=f"bold {dim}")
        text.append(f" {f.predicate} ", style=dim)
        text.append(f.object, style=f"bold {dim}")
        if f.time and f.time != f.valid_from:
            text.append(f"  {f.time}", style="cyan")
        text.append(f"  {f.validity()}", style="cyan")
        if note:
            text.append(f"  {note}", style="bold yellow")
        text.append(f"  ({len(f.provenance)} source{'s' if len(f.provenance) != 1 else ''})\n", style="dim")
    return text


def taught_line(note: MarkNote) -> Text:
    """What feedback did to a hit, and where to undo it; or why an alike question's mark left it
    where it was (a person who taught it looks for it to move)."""
    if note.held:
        return Text("◦ " + note.describe(), style="italic")
    line = Text(("▲ raised: " if note.used else "▼ lowered: ") + note.describe(),
                style="bold green" if note.used else "bold yellow")
    line.append(f" · feedback event {note.event} (the Ranker screen, 7, withdraws it)", style="dim")
    return line


def answered_line(note: AnswerNote) -> Text:
    """An answer ranked on the words of the question it answers: fused read that question's
    scores for it where they were higher, so the values in the table are the question's, and
    the turn's own follow."""
    own = ", ".join(f"{name} {value:.2f}" for name, value in note.lent.items())
    line = Text("words matched through the question it answers: ")
    line.append(f"“{' '.join(note.question.split())}”", style="italic")
    line.append(f" · its own {own}", style="dim")
    return line


@dataclass(frozen=True)
class FeatureRow:
    """One feature of a hit in the Why panel."""

    name: str
    value: str  # as shown
    share: float  # of the best value among the hits, 0…1: the bar's length
    part: str  # w × value, signed (fused), or ""
    weight: float = 0.0  # |w × value|: how much the feature moved the score (fused)


def reasons_first(rows: list[FeatureRow]) -> tuple[list[FeatureRow], list[str]]:
    """The rows that carry a value, those that moved the score most first (in a short terminal
    the panel shows a few rows: they are the reasons), the rest in the engine's order; and the
    names of the features that are 0 for this hit, said in one line under the table."""
    shown = [r for r in rows if r.share or r.part.strip("+-0.")]
    shown.sort(key=lambda r: -r.weight)  # stable: unweighted features keep the engine's order
    return shown, [r.name for r in rows if r not in shown]


@dataclass
class FeatureBars:
    """The Why panel's features, each with a bar against the best hit and, for fused, w × value.
    Drawn at the panel's width: beside the hits (from 110 columns) the panel is narrower than
    full bars and every name, and Rich would cut the names; the bars give way instead."""

    part_head: str  # "w × value", or "" when no weights apply
    rows: list[FeatureRow] = field(default_factory=list)  # in the engine's order; drawn reasons first

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        rows, zero = reasons_first(self.rows)
        words = (max((len(r.name) for r in rows), default=0) + max((len(r.value) for r in rows), default=0)
                 + max([len(self.part_head), *(len(r.part) for r in rows)]) + 3)  # and a space between columns
        bar = max(3, min(WHY_BAR, options.max_width - words))
        table = Table.grid(padding=(0, 1))
        table.add_column(style="bold")
        table.add_column(justify="right")
        table.add_column()
        table.add_column(justify="right")
        table.add_row(Text("feature", style="dim"), Text("value", style="dim"), "", Text(self.part_head, style="dim"))
        for r in rows:
            full = round(bar * r.share)
            table.add_row(r.name, r.value, Text("█" * full + "░" * (bar - full), style="cyan"),
                          Text(r.part, style="red" if r.part.startswith("-") else "green"))
        yield table
        if zero:
            yield Text("0 for this hit: " + ", ".join(zero), style="dim")


class QueryScreen(BaseScreen):
    NAME = "query"
    TITLE = "Query"
    HELP = """\
### Query

Type a query and press **Enter**. Choose the **intent** (auto infers one and shows it), the
**mode** (lite: episodes and facts; pro: plus the items; max: plus backfill from the same
episodes), the **strategy** (fused, or one signal alone), **top k** and the date to answer
**as of** (2023-05-01, 2023-05 or 2023; empty: now): what had been said by then, the facts that
held then.

| key | does |
|---|---|
| `Enter` | run the query |
| `Esc` | leave the query box (in it, digits are text); then `1`…`8` switch screens; `/` comes back |
| a letter | on the hits, one no key below takes (`W`, `b`…) starts a new query; a key below typed just before it (0.4 s) is its first letter |
| `↑` `↓` | move through the hits; the right panel explains the selected one |
| `u` | mark the selected hit as used (toggle); `✓` in the list |
| `f` | send feedback: used hits, and the unused ones shown above the lowest used one as ignored (none used: every shown hit, asked first) |
| `w` `x` `t` `k` | right panel: why · text · trace · knowledge (episodes and facts) |
| `space` `.` `r` | trace: play/pause · single step · replay |
| `c` | compare two strategies or intents on this query |
| `a` | the as-of box: type a date and Enter to ask as of then (empty: now) |

The **found** column says which signals found each hit: **B** BM25, **D** dense, **W** the
topic walk, **P** PageRank over the knowledge graph, **A** it holds the kind of answer the
question asks for (a time for *when*, a place for *where*, a person for *who*), **N** a
neighbouring turn of a hit, **E** from the same episode as a hit (the max mode's backfill);
and moved after it was scored: **C** it tells of a change of what the question asks newer than the
hits it passes ("I moved", "I've left the bakery"), **V** it states a value of what the question asks
(a home, a job) said later than the hits it passes (said by the date asked as of), **S** it
states what replaced a fact of a hit below it, **L** it states the latest claim of what a
question about now asks (a home, a job) for the person it names, also when an open conflict of
the inbox holds it (the Why panel names the conflict), **F** feedback marked it used for this
question or one alike (the Why panel says which).
"""

    BINDINGS = [
        # the trace's keys: in the key bar (first, at 80 columns the others give way) while its tab
        # is shown; from another tab the same keys, hidden, show the trace and act on it
        Binding("space", "trace('toggle')", "Play/pause", id="trace-toggle", tooltip="Play or pause the trace"),
        Binding("full_stop", "trace('single_step')", "Step", id="trace-step", tooltip="The trace's next step"),
        Binding("r", "trace('replay')", "Replay", id="trace-replay", tooltip="Play the trace from its start"),
        *[Binding(key, f"trace('{what}', 'show')", "Trace", id=f"trace-show-{what}", show=False)
          for key, what in (("space", "toggle"), ("full_stop", "single_step"), ("r", "replay"))],
        Binding("u", "toggle_used", "Used", id="query-used", tooltip="Mark the selected hit used (or not)"),
        Binding("f", "feedback", "Feedback", id="query-feedback",
                tooltip="Send feedback: the hits marked used; those shown above the lowest used one as ignored"),
        Binding("c", "compare", "Compare", id="query-compare",
                tooltip="Compare two strategies or intents on this query"),
        Binding("a", "as_of", "As of", id="query-as-of", tooltip="Ask as of a date"),
        Binding("w", "panel('why')", "Why", id="query-why", tooltip="Why the selected hit ranked"),
        Binding("x", "panel('text')", "Text", id="query-text", show=False, tooltip="The selected hit's text"),
        Binding("t", "panel('trace')", "Trace", id="query-trace", tooltip="How the walk found the hits"),
        Binding("k", "panel('knowledge')", "Knowledge", id="query-knowledge", show=False,
                tooltip="The episodes and facts the mode found"),
    ]
    BINDINGS += typing_keys("query", BINDINGS)
    TYPE_INTO = "#query-input"

    def __init__(self) -> None:
        super().__init__()
        self.recall: Recall | None = None
        self.used: set[int] = set()
        self.source_names: dict[int, str] = {}
        self.submitted_at = 0.0
        self.last_render_ms: float | None = None
        self.timeline: dict[str, float] = {}  # when each stage of the last query ended (perf_counter)
        self.strategy_chosen = False
        self.trace_pending = False
        self.taught_token: str | None = None  # a recall's token teaches once: the engine forgets it after
        self.strategies: list[str] = []  # what the engine can run, fused first
        self.waiting_query: str | None = None  # sent before the store was open: runs once it is
        self.queries_sent = 0  # the newest query's number: an older one's outcome is dropped
        self.query_worker: Worker | None = None  # the newest query's: cancelled (Esc), its hits are dropped
        self.strategy_docs: dict[str, str] = {}  # what each strategy does, in the engine's words

    def compose_body(self) -> ComposeResult:
        with Horizontal(id="query-bar"):
            # short: the box is narrow at 80 columns; the status line under it says "press Enter"
            yield TextBox(placeholder="Ask the store…", id="query-input", compact=True)
            with Horizontal(id="query-options"):  # beside the box when wide, under it when narrow
                yield Select([(f"intent {i}", i) for i in INTENTS], value="auto", allow_blank=False, compact=True,
                             id="query-intent", tooltip="Intent: auto infers one from the words")
                yield Select([(f"mode {m}", m) for m in MODES], value="pro", allow_blank=False, compact=True,
                             id="query-mode", tooltip="Recall mode")
                yield Select([("hybrid", "hybrid")], value="hybrid", allow_blank=False, compact=True,
                             id="query-strategy", tooltip="Strategy: fused, or one signal alone")
                yield TextBox("10", type="integer", compact=True, id="query-topk", tooltip="top k", max_length=3)
                yield AsOfBox(id="query-date", tooltip="As of a date (2023-05-01, 2023-05 or 2023): what had been "
                              "said by then, the facts that held then. Empty: now")
        yield Static("Type a query and press Enter.", id="query-status")
        with Horizontal(id="query-results", classes="split"):
            yield HitsTable(mark="✓", mark_width=1, rank_width=3, details=True, id="hits")
            with TabbedContent(id="query-detail", initial="why"):
                with TabPane("Why", id="why"):
                    yield VerticalScroll(Static("", id="why-body"))
                with TabPane("Text", id="text"):
                    yield VerticalScroll(Static("", id="hit-text"))
                with TabPane("Trace", id="trace"):
                    yield TraceView(id="trace-view")
                with TabPane("Knowledge", id="knowledge"):
                    yield VerticalScroll(Static("", id="knowledge-body"))

    def on_mount(self) -> None:
        self.show_selected()  # the panel says what it will show
        self.query_one("#query-input", Input).focus()

    def fit_columns(self) -> None:
        self.query_one("#hits", HitsTable).fit(self.pane_width(3 / 5))

    def redraw(self) -> None:
        if self.recall is not None:
            row = self.query_one("#hits", DataTable).cursor_row
            self.fill_hits(self.recall).move_cursor(row=row)

    def refresh_data(self) -> None:
        services = self.services

        def load() -> tuple[dict[int, str], list[str], str]:
            # in the worker: the strategies' names, not their docs (which would build every area)
            return services.source_names(), services.strategy_names(), services.default_strategy()

        self.run_task("strategies", "Loading strategies", load, progress=False, show=False, replace=True,
                      done=lambda loaded: self.show_strategies(*loaded))

    def show_strategies(self, source_names: dict[int, str], strategies: list[str], default: str) -> None:
        self.source_names, self.strategies, self.strategy_docs = source_names, strategies, {}
        select = self.query_one("#query-strategy", Select)
        current = select.value if self.strategy_chosen else None
        select.set_options([(s, s) for s in strategies])
        select.styles.width = max(map(len, strategies)) + SELECT_CHROME  # every name shown whole
        select.value = current if current in strategies else default if default in strategies else strategies[0]
        self.strategy_chosen = True
        if self.waiting_query is not None:  # sent while the store was opening
            text, self.waiting_query = self.waiting_query, None
            self.run_query(text)

    # -- running a query ----------------------------------------------------------------------

    def recall_request(self) -> RecallRequest:
        try:
            top_k = max(1, min(200, int(self.query_one("#query-topk", Input).value or 10)))
        except ValueError:
            top_k = 10
        intent = self.query_one("#query-intent", Select).value
        return RecallRequest(strategy=str(self.query_one("#query-strategy", Select).value),
                             mode=str(self.query_one("#query-mode", Select).value), top_k=top_k,
                             intent=None if intent == "auto" else str(intent),
                             as_of=self.query_one("#query-date", AsOfBox).when)

    @on(Input.Submitted, "#query-input")
    @on(Input.Submitted, "#query-topk")
    def submit(self, event: Input.Submitted) -> None:
        # the query as it was at Enter: keys typed after it may be in the box by now
        self.run_query(event.value if event.input.id == "query-input" else self.query_one("#query-input", Input).value)

    @on(AsOfBox.Chosen, "#query-date")
    def as_of_chosen(self, event: AsOfBox.Chosen) -> None:
        """A date in force: the question in the box is asked again as of it, and the keys act on
        its hits (the box would take them as text)."""
        if self.query_one("#query-input", Input).value.strip():
            self.leave_box()
            self.run_query(self.query_one("#query-input", Input).value)
        else:
            self.set_status(f"Ask a question: it is answered as of {event.when or 'now'}.")

    def action_as_of(self) -> None:
        self.query_one("#query-date", AsOfBox).focus()

    def run_query(self, text: str) -> None:
        if not text.strip():
            self.set_status("Type a query first.", "warning")
            return
        opening = self.services.mem is None and self.app.ready_seconds is None  # the app is still opening its store
        if opening or (self.services.mem is not None and not self.strategy_chosen):  # or reading its strategies:
            self.waiting_query = text  # the picker's first value is a placeholder (show_strategies runs it)
            self.set_status(f"Opening the store; “{text}” runs as soon as it is open…")
            return
        request = self.recall_request()
        self.submitted_at = time.perf_counter()
        self.timeline = {"submitted": self.submitted_at}
        self.set_status(f"Searching for “{text}”…")
        timeline, services = self.timeline, self.services

        def waiting(cause: str) -> None:
            self.app.call_from_thread(self.set_status, f"Waiting for {cause}; then “{text}” runs…")

        def ask(progress: object, cancelled: Callable[[], bool]) -> "Recall | None":
            timeline["worker"] = time.perf_counter()
            result = services.recall(text, request, waiting, cancelled)
            if result is None:  # cancelled (Esc), or replaced by a newer query, while it waited
                return None
            timeline["engine_done"] = time.perf_counter()
            if not self.strategy_docs:  # the recall built every area: what each strategy does is cheap now
                self.strategy_docs = services.strategies()
            if any(h.item.source_id not in self.source_names for h in result.hits):  # a source another process added
                self.source_names = services.source_names()
            return result

        self.queries_sent += 1
        sent = self.queries_sent
        # kept when cancelled: a query cancelled with Esc while it waited says so (not "Waiting for …")
        self.query_worker = self.run_task("query", "Query", ask, replace=True, show=False, keep_cancelled=True,
                                          done=lambda recall: self.answered(recall, text, sent),
                                          failed=self.query_failed)

    def query_failed(self, error: str) -> None:
        self.set_status(error, "error")
        self.notify(error, title="Query", severity="error", markup=False)

    def answered(self, recall: "Recall | None", text: str, sent: int) -> None:
        """The ``sent``-th query's outcome: None when it was cancelled while
        it waited. Cancelled while the engine ran it (a thread runs to its end), its hits are
        dropped all the same."""
        if sent != self.queries_sent:  # a newer query replaced it: its outcome is not news
            return
        if recall is None:
            self.set_status(f"Cancelled: “{text}” did not run.", "warning")
            return
        if self.query_worker is not None and self.query_worker.is_cancelled:
            self.set_status(f"Cancelled: “{text}”; its results are not shown.", "warning")
            return
        self.timeline["received"] = time.perf_counter()
        self.show_recall(recall)
        self.timeline["shown"] = time.perf_counter()

    def show_recall(self, recall: "Recall") -> None:
        self.recall = recall
        self.used = set()
        table = self.fill_hits(recall)
        self.set_status(self.describe_recall(recall), "warning" if not recall.hits else "")
        if not recall.hits and (recall.episodes or recall.facts):
            self.action_panel("knowledge")
        elif not recall.hits and not (self.app.store_stats and self.app.store_stats.items):
            self.notify("The store is empty: ingest files on the Ingest screen (Esc, then 1), or load the demo content "
                        "(Ctrl+P → Load demo content).", title="No results", severity="warning")
        elif not recall.hits:
            self.notify(f"Nothing found for “{recall.query}”. Try other words or another strategy.",
                        title="No results", severity="warning", markup=False)
        self.show_selected()
        self.show_knowledge()
        if self.query_one("#query-detail", TabbedContent).active == "trace":
            self.query_one(TraceView).load(recall, animate=self.app.animate_trace)
        else:
            self.trace_pending = True  # built when its tab is shown: the tree costs layout time
        if recall.hits and self.focused is self.query_one("#query-input"):
            table.focus()
        self.call_after_refresh(self._rendered)

    def fill_hits(self, recall: "Recall") -> HitsTable:
        """The hits as rows, the ones marked used with ✓ (also when redrawn for a new width)."""
        table = self.query_one("#hits", HitsTable)
        table.show(recall, self.source_names, lambda hit: "✓" if hit.item.id in self.used else "")
        return table

    def _rendered(self) -> None:
        self.timeline["rendered"] = time.perf_counter()
        self.last_render_ms = (self.timeline["rendered"] - self.submitted_at) * 1000

    def describe_recall(self, recall: Recall) -> str:
        """What the recall found, news first: the line is cut at its end in a narrow terminal, and
        the strategy and mode it ran with are the bar's choices above it."""
        parts = [f"{len(recall.hits)} item{'s' if len(recall.hits) != 1 else ''}"]
        if recall.as_of:
            parts.append(f"as of {recall.as_of}")
        if recall.intent:
            name = recall.intent.get("name")
            parts.append(f"intent auto → {name}" if recall.intent.get("inferred") else f"intent {name}")
        if recall.facts or recall.episodes:
            parts.append(f"{len(recall.episodes)} episodes, {len(recall.facts)} facts")
        parts += [f"strategy {recall.strategy}", f"mode {recall.mode}"]
        if self.app.show_timings and recall.timings.get("total_ms") is not None:
            parts.append(f"{recall.timings['total_ms']:.1f} ms")
        return " · ".join(parts)

    def set_status(self, text: str, severity: str = "") -> None:
        status = self.query_one("#query-status", Static)
        status.update(Text(text), layout=False)  # one line at any text (app.tcss): no new layout
        status.set_class(severity == "error", "-error")
        status.set_class(severity == "warning", "-warning")

    # -- the selected hit ---------------------------------------------------------------------

    def selected_hit(self) -> Hit | None:
        table = self.query_one("#hits", DataTable)
        if self.recall is None or not table.row_count:
            return None
        row = table.cursor_row
        return self.recall.hits[row] if 0 <= row < len(self.recall.hits) else None

    @on(DataTable.RowHighlighted, "#hits")
    def show_selected(self) -> None:
        hit = self.selected_hit()
        why = self.query_one("#why-body", Static)
        text = self.query_one("#hit-text", Static)
        if hit is None:
            why.update("No hit selected." if self.recall else "Run a query to see why each hit ranked.")
            text.update("")
            return
        why.update(self.explain(hit))
        item = hit.item
        head = Text.assemble((hit_source_label(hit, self.source_names), "bold"),
                             f"  {item.kind}" + (f" · {item.speaker}" if item.speaker else "")
                             + (f" · {item.timestamp[:10]}" if item.timestamp else ""))
        body = Text("\n")
        if item.title:
            body.append(item.title + "\n\n", style="italic")
        body.append_text(highlight(item_text(item), query_terms(self.recall.query)))
        text.update(head + body)

    def explain(self, hit: "Hit") -> Group:
        """The hit's features, each with a bar against the best value among the hits."""
        recall = self.recall
        fused = recall.strategy == "fused" and recall.lam is not None  # how a fused score is made, from the recall
        weights, lam = (recall.weights, recall.lam) if fused else ({}, 0.0)
        table = FeatureBars("w × value" if weights else "")
        floor = 0.0
        for name, value in hit.features.items():
            best = max((abs(h.features.get(name, 0.0)) for h in self.recall.hits), default=0.0) or 1.0
            part, moved = "", 0.0
            if name in weights:
                moved = weights[name] * value
                floor += moved
                part = f"{moved:+.3f}"
            table.rows.append(FeatureRow(name, f"{value:.4g}", abs(value) / best, part, abs(moved)))
        head = Text()
        head.append(f"rank {hit.rank}", style="bold")
        head.append(f" · score {hit.score:.4f} · found by ")
        head.append(", ".join(hit.sources) or "–", style="bold")
        if self.recall.as_of:
            head.append(f" · as of {self.recall.as_of}", style="cyan")
        moved = [MOVED[name] for name in hit.sources if name in MOVED]
        notes = [Text(f"▲ moved up: {', '.join(moved)}; its score is that of the place it took, not the sum of"
                      " the features below", style="bold cyan")] if moved else []
        if hit.taught is not None:
            notes.append(taught_line(hit.taught))
        if hit.answers is not None:
            notes.append(answered_line(hit.answers))
        if hit.conflict is not None:
            notes.append(Text(f"⚠ {hit.conflict.describe()}; the Facts screen's inbox (4, then i) decides it",
                              style="bold yellow"))
        parts: list[RenderableType] = [head, *notes, table]
        if weights:
            parts.append(Text(f"heuristic floor Σ w × value = {floor:+.3f}; λ = {lam:.2f}: the learned model "
                              f"carries {lam:.0%} of the score" + (" (the floor alone ranks)" if not lam else ""),
                              style="italic"))
        note = self.strategy_docs.get(self.recall.strategy, "")
        if note:
            parts.append(Text(f"\n{self.recall.strategy}: {note}", style="dim"))
        return Group(*parts)

    def show_knowledge(self) -> None:
        body = self.query_one("#knowledge-body", Static)
        recall = self.recall
        if not self.services.has("knowledge"):
            body.update("The engine has no knowledge area (episodes and facts).")
            return
        body.update(knowledge_text(recall.episodes, recall.facts, recall.as_of))

    @on(TabbedContent.TabActivated, "#query-detail")
    def detail_shown(self, event: TabbedContent.TabActivated) -> None:
        self.refresh_bindings()  # the trace's keys come and go with its tab
        if event.pane.id == "trace" and self.trace_pending and self.recall is not None:
            self.trace_pending = False
            self.query_one(TraceView).load(self.recall, animate=self.app.animate_trace)

    def leave_box(self) -> None:
        self.set_focus(self.query_one("#hits", DataTable))  # at once: widget.focus() waits for the queued keys

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The trace's keys: the shown ones while the Trace tab is, the hidden ones elsewhere."""
        if action == "trace":
            shown = any(tabs.active == "trace" for tabs in self.query("#query-detail").results(TabbedContent))
            return shown if len(parameters) == 1 else not shown
        return super().check_action(action, parameters)

    def action_trace(self, what: str, _show: str = "") -> None:
        """Play, step or replay the trace (``_show``: the key came from another tab, which the
        trace's replaces)."""
        self.action_panel("trace")
        getattr(self.query_one(TraceView), what)()

    def action_panel(self, pane: str) -> None:
        self.query_one("#query-detail", TabbedContent).active = pane

    # -- teaching -----------------------------------------------------------------------------

    def action_toggle_used(self) -> None:
        hit = self.selected_hit()
        if hit is None:
            return
        self.used ^= {hit.item.id}
        self.query_one("#hits", HitsTable).set_mark(hit, "✓" if hit.item.id in self.used else "")

    def action_feedback(self) -> None:
        recall = self.recall
        if recall is None:
            self.notify("Run a query first.", severity="warning")
            return
        if not self.services.has("ranker") or recall.token is None:
            self.notify("This engine does not learn from feedback yet (no ranker area).", severity="warning")
            return
        if recall.token == self.taught_token:
            self.notify("Feedback for these results is already sent. Run the query again to teach more.",
                        severity="warning")
            return
        used = [h.item.id for h in recall.hits if h.item.id in self.used]
        memory = self.services.memory

        def send() -> tuple[str, int, int]:
            result = memory.feedback(recall.token, used)  # ignored: the engine's default, those above the lowest used
            return recall.token, len(result.used), len(result.ignored)

        def sent_if(choice: str | None) -> None:
            if choice == "send":
                self.run_task("feedback", "Sending feedback", send, progress=False, done=self.feedback_sent,
                              failed=self.app.refused("Feedback"))

        if used:
            sent_if("send")
        else:  # asked: a stray f (the first letter of "find …" typed on the hits) taught that nothing helped
            self.app.push_screen(ChoiceDialog(
                "Send feedback", f"None of the {len(recall.hits)} hits is marked used (u marks one). Send them all as "
                "ignored, that none of them helped?", [("cancel", "Cancel"), ("send", "Send")]), sent_if)

    def feedback_sent(self, sent: tuple[str, int, int]) -> None:
        self.taught_token, used, ignored = sent
        self.notify(f"{used} used, {ignored} ignored.", title="Feedback sent")
        self.app.store_changed()

    def action_compare(self) -> None:
        text = self.query_one("#query-input", Input).value
        if not text.strip():
            self.notify("Type a query to compare.", severity="warning")
            return
        from mnemoscope.screens.compare import CompareScreen

        request = self.recall_request()
        self.app.push_screen(CompareScreen(text, request, self.strategies or [request.strategy], self.source_names))


SCREEN = QueryScreen
