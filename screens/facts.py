"""Facts: entities with a filter, the selected entity's facts (with their validity) and its
neighbourhood, as of now or of a date; curation; and the conflict inbox, a mode of this screen."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cache, partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.content import Content
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static

from mnemoscope.app.widgets import AsOfBox, ChoiceDialog, FormDialog, PromptDialog, TextBox, clip, highlight, query_terms, snippet
from mnemoscope.app.widgets.tables import PagedTable, PlainTable, set_columns, turned_to
from mnemoscope.screens.base import BaseScreen, typing_keys

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.knowledge.records import Conflict, CurationReport, Entity, Fact
    from mnemoscope.engine.records import Item

ENTITY_ROWS = 500  # the most mentioned entities (of those the filter names)
# seconds the entity filter waits for the next key before it asks the store: each ask reads a
# page of entities, and a text that names none reads every entity's name (a big store's thousands)
FILTER_PAUSE = 0.2
# a page of an entity's facts (by id): a speaker of a big store names tens of thousands, and
# reading them, or filling a table row, costs the same whether anyone scrolls to it or not
FACT_ROWS = 500
SUBJECT_WIDTH, PREDICATE_WIDTH = 14, 13
FACT_COLUMNS = (("subject", "subject", SUBJECT_WIDTH), ("predicate", "predicate", PREDICATE_WIDTH),
                ("object", "object", None), ("holds", "holds", 18), ("src", "sources", 3))  # object: what is left
CONFLICT_COLUMNS = (("kind", "kind", 9), ("conflict", "conflict", None))
ENTITY_ACTIONS = {"filter", "add_fact", "edit_fact", "delete_fact", "rename_entity", "merge_entity", "history",
                  "as_of", "earlier", "later", "inbox"}
INBOX_ACTIONS = {"decide", "undo", "leave_inbox"}


@dataclass(frozen=True)
class DecisionKey:
    """A key that settles a conflict, in the words of the conflict's kind: one choice reads
    differently for two facts that clash and for two entities that may be one."""

    choice: str  # the engine's choice (Conflict.choices)
    key: str
    label: str  # in the key bar
    detail: str  # in the conflict's panel, after the key
    done: str  # in the notice once decided
    show: bool = True  # False: the key works, but another in the bar already says the same


DECISION_KEYS = {  # per kind, in the order the panel lists them
    "clash": (DecisionKey("accept", "a", "Accept", "accept (the later replaces the other)",
                          "Accepted (the later replaces the other)"),
              DecisionKey("both", "b", "Keep both", "keep both", "Kept both"),
              DecisionKey("merge", "m", "Merge", "merge (one value)", "Merged (one value)"),
              DecisionKey("retire", "r", "Retire", "retire b", "Retired b")),
    "duplicate": (DecisionKey("accept", "a", "Merge", "merge", "Merged"),
                  DecisionKey("both", "b", "Keep apart", "keep apart", "Kept apart"),
                  DecisionKey("merge", "m", "Merge", "merge", "Merged", show=False)),
    "orphaned": (DecisionKey("accept", "a", "Keep it", "keep it", "Kept"),
                 DecisionKey("retire", "r", "Retire it", "retire it", "Retired")),
}


def keys_kind(conflict: Conflict) -> str:
    """The kind whose words settle ``conflict``: its own, or, for a kind this app does not know, a clash's."""
    return conflict.kind if conflict.kind in DECISION_KEYS else "clash"


def decision_keys(conflict: Conflict) -> list[DecisionKey]:
    """The keys that settle ``conflict``: those of its kind whose choice the engine offers for it."""
    return [k for k in DECISION_KEYS[keys_kind(conflict)] if k.choice in conflict.choices]


@dataclass(frozen=True)
class FactsRead:
    """What a page of facts on screen was read for: the same again need not be read."""

    entity: int
    as_of: str | None
    generation: int  # the app's store generation then
    start: int  # how many of the entity's facts come before the page


@dataclass
class FactPage:
    """A page of an entity's facts, as a worker read it."""

    start: int  # how many of its facts come before the page
    facts: list[Fact]
    total: int  # how many name it in all (as of the date asked)
    disputed: frozenset[int] = frozenset()  # those a conflict of the inbox holds open


def holds(fact: Fact, disputed: bool = False) -> Text:
    """When a fact holds, as the table shows it ("since 2023-04-03", "until 2023-07-10"); a
    superseded fact is dim, one an open conflict of the inbox holds is yellow and marked "?" (it
    may not hold; the mark for a reader who does not see the colour)."""
    state = fact.state(fact.seen_at)
    if state == "superseded":
        return Text(f"until {fact.valid_to}" if fact.valid_to else "superseded", style="dim")
    since = f"since {fact.valid_from}" if fact.valid_from else ""
    return Text(f"{since} ?", style="yellow") if disputed else Text(since)


EVIDENCE_INDENT = 3 + 3  # an evidence turn's lines after its first sit under its key ("   D1:6 …")
SCROLLBAR = 2  # cells the conflict panel's scrollbar takes when its text is longer than the panel


def line_breaks(text: str, first: int, rest: int) -> list[int]:
    """Where to break ``text`` at spaces so that its first line holds ``first`` cells and each next
    one ``rest``: the conflict panel indents an evidence turn's second line under its first, where
    the panel's own wrapping began it at the left edge, under the sides' labels."""
    breaks, start, room = [], 0, max(first, 1)
    while len(text) - start > room:
        cut = text.rfind(" ", start, start + room + 1)
        cut = cut + 1 if cut > start else start + room  # after the space (it ends the line), or mid-word
        breaks.append(cut)
        start, room = cut, max(rest, 1)
    return breaks


def describe_conflict(conflict: Conflict, items: dict[int, Item], width: int = 100) -> Text:
    """A conflict's two sides (facts with their validity, or entities) and the items behind each,
    one line per item (clipped to ``width``)."""
    text = Text()
    text.append(f"{conflict.kind}", style="bold")
    text.append(f" · {conflict.reason}\n\n", style="dim")
    # each side: (its id, what it is, its detail, the words its evidence is highlighted by)
    sides = [(f.id, f"{f.subject} —{f.predicate}→ {f.object}", f"holds {f.validity()}", f.object) for f in conflict.facts] \
        or [(e.id, e.name, f"{e.kind}, {e.items} item(s), {e.facts} fact(s)", e.name) for e in conflict.entities]
    for label, (side_id, what, detail, named) in zip("ab", sides):
        text.append(f"{label}) ", style="bold")
        text.append(f"{what}\n", style="bold")
        text.append(f"   {detail}\n", style="cyan")
        for item_id in conflict.evidence.get(side_id, [])[:3]:
            item = items.get(item_id)
            if item is not None:
                who = f"{item.speaker}: " if item.speaker else ""
                where = item.key if item.speaker or not item.title else f"“{clip(item.title, 24)}”"  # a turn, or a section
                head = f"   {where} " + (f"[{item.timestamp[:10]}] " if item.timestamp else "")
                words = query_terms(named)
                room = width - SCROLLBAR  # the panel's, beside its scrollbar
                # two lines at most (less a word's worth each, where a line breaks before a word)
                line = snippet(who + item.text, words, max(10, 2 * room - len(head) - EVIDENCE_INDENT - 12))
                text.append(head, style="dim")
                pieces = highlight(line, words, style="bold").divide(
                    line_breaks(line, room - len(head), room - EVIDENCE_INDENT))
                for n, piece in enumerate(pieces):
                    text.append(" " * EVIDENCE_INDENT if n else "")
                    text.append_text(piece)
                    text.append("\n")
        text.append("\n")
    shown = [f"{k.key} {k.detail}" for k in decision_keys(conflict) if k.show]
    text.append("  ·  ".join([*shown, "u undo the last decision"]), style="italic")
    return text


def neighbourhood(entity: Entity, facts: list[Fact], width: int = 60, elsewhere: int = 0) -> Text:
    """The entity in the middle, its outgoing facts to the right, incoming ones to the left;
    ``elsewhere``: how many facts name it on the pages not shown (``facts`` are of the page shown)."""
    out = [f for f in facts if f.subject_id == entity.id]
    inc = [f for f in facts if f.subject_id != entity.id]
    text = Text()
    name = entity.name
    pad = " " * (len(name) + 4)
    if inc:
        for n, f in enumerate(inc[:6]):
            glyph = "┌" if n == 0 else "├"
            text.append(f"{pad}{glyph}◀─ ", style="dim")
            text.append(f"{f.subject} ", style="bold")
            text.append(f"{f.predicate}\n", style="italic")
    text.append(f"[ {name} ]", style="bold reverse")
    if not out:
        text.append("\n")
    for n, f in enumerate(out[:10]):
        last = n == min(len(out), 10) - 1
        glyph = ("─┬─" if len(out) > 1 else "───") if n == 0 else " └─" if last else " ├─"
        lead = "" if n == 0 else pad
        predicate = f.predicate[:24]
        obj = f.object if len(f.object) <= width else f.object[: width - 1] + "…"
        text.append(f"{lead}{glyph} ", style="dim")
        if f.subject != name:  # a phrase about the entity ("Maya's kitchen"), not the entity itself
            text.append(f"{clip(f.subject, 28)}: ", style="bold")
        text.append(predicate, style="italic")
        text.append(" ─▶ ", style="dim")
        text.append(obj + (f"  {f.time}" if f.time else "") + "\n", style="cyan" if f.object_id else "")
    more = len(out) - 10 + max(0, len(inc) - 6)
    if more > 0:
        text.append(f"{pad}… and {more} more\n", style="dim")
    if elsewhere > 0:
        text.append(f"{pad}(drawn from the page of facts shown: {elsewhere:,} more on the others)\n", style="dim")
    return text


class FactsScreen(BaseScreen):
    NAME = "facts"
    TITLE = "Facts"
    AREA = "knowledge"
    HELP = """\
### Facts

Entities (most mentioned first) with a filter; the selected entity's facts (subject, predicate,
object, since when it holds or until when it held, how many sources state it) and a drawing of
its neighbourhood in the graph. A superseded fact is dim, and one whose *holds* is yellow and ends
in "?" waits in an open conflict of the inbox; `h` shows its history. Type a date in
the *as of* box (or step with `[` and `]` through the dates the entity's facts changed) to see
the facts as they stood then. Every change shows the engine's dry-run report before it is written.

`i` opens the **conflict inbox**: what the supersession rules could not decide (two values of
one thing), entities that may be one, facts whose evidence was deleted; each with the items
behind it, settled in one key press. Every decision is logged and `u` undoes the last one.

| key | does |
|---|---|
| `ctrl+f` | filter the entities (Enter keeps it); a letter no key below starts it too |
| `Enter` | on an entity: go to its facts |
| `h` | the selected fact's history: versions, what it replaced, what replaced it |
| `t` | type a date to see the facts as of then (empty: now) |
| `[` / `]` | as of the previous / next date this entity's facts changed |
| `a` | add a fact by hand (stated by the items you name) |
| `e` | edit the selected fact (a new version; the old one is kept) |
| `d` | delete the selected fact |
| `r` | rename the selected entity |
| `m` | merge another entity into the selected one |
| `i` | the conflict inbox (and back) |

In the inbox the key bar offers what applies to the selected conflict. Two facts that clash:
`a` accept (the later fact replaces the other), `b` keep both, `m` merge (one value in other
words), `r` retire the second fact. Two entities that may be one: `a` (or `m`) merge them, `b`
keep them apart. A fact whose evidence was deleted: `a` keep it, `r` retire it. `u` undoes the
last decision.
"""
    # in the key bar's order: at 80 columns the last ones give way to "? more", so what a person
    # looks for first comes first (the inbox, time), curation after it
    BINDINGS = [
        Binding("ctrl+f", "filter", "Filter", id="facts-filter"),
        Binding("i", "inbox", "Inbox", id="facts-inbox"),
        Binding("h", "history", "History", id="facts-history"),
        Binding("t", "as_of", "As of", id="facts-as-of"),
        Binding("left_square_bracket", "earlier", "Earlier", id="facts-earlier", show=False),
        Binding("right_square_bracket", "later", "Later", id="facts-later", show=False),
        Binding("a", "add_fact", "Add", id="facts-add"),
        Binding("e", "edit_fact", "Edit", id="facts-edit"),
        Binding("d", "delete_fact", "Delete", id="facts-delete"),
        Binding("r", "rename_entity", "Rename", id="facts-rename"),
        Binding("m", "merge_entity", "Merge", id="facts-merge"),
        # the inbox's: its choices in the panel's order (DECISION_KEYS), gated by the selected conflict's kind
        *[Binding(k.key, f"decide('{k.choice}', '{kind}')", k.label, id=f"inbox-{kind}-{k.choice}", show=k.show)
          for kind, keys in DECISION_KEYS.items() for k in keys],
        Binding("u", "undo", "Undo", id="inbox-undo"),
        Binding("i", "leave_inbox", "Back to facts", id="inbox-leave"),  # the same key, said as what it does there
    ]
    BINDINGS += typing_keys("facts", BINDINGS)
    TYPE_INTO = "#entity-filter"

    def __init__(self) -> None:
        super().__init__()
        self.entities: list[Entity] = []  # the rows shown
        self.facts: list[Fact] = []  # the page shown
        self.facts_start = 0  # how many of the entity's facts come before the page
        self.facts_total = 0  # how many name it in all
        self.entity: Entity | None = None
        self.facts_shown_for: FactsRead | None = None
        self.facts_asked: FactsRead | None = None  # the page read last: on its way, or shown
        self.object_width = 0
        self.name_width = 0  # the entity column's, once fitted
        self.as_of: str | None = None
        self.inbox = False
        self._direction = 1
        self.conflicts: list[Conflict] = []
        self.evidence: dict[int, Item] = {}
        self._filter_timer: Timer | None = None

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()
        with Horizontal(id="facts-main", classes="split"):
            with Vertical(id="facts-left"):
                yield TextBox(placeholder="Filter entities (Ctrl+F)", id="entity-filter", compact=True)
                yield PlainTable(id="entities-table", cursor_type="row", zebra_stripes=True)
                yield PlainTable(id="conflicts-table", cursor_type="row", zebra_stripes=True, classes="inbox")
            with Vertical(id="facts-right"):
                yield AsOfBox(placeholder="As of (YYYY-MM-DD, t): now", id="as-of-date")
                yield PagedTable(id="facts-table", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="entity-graph"):
                    yield Static("", id="graph-body")
                with VerticalScroll(id="conflict-view", classes="inbox"):
                    yield Static("", id="conflict-body")

    def on_mount(self) -> None:
        self._show_mode()
        self.query_one("#entities-table", DataTable).focus()

    def fit_columns(self) -> None:
        """Columns for the tables of the mode shown; a hidden table has none (it has no width to
        fit them to, and would hide them all past its edge)."""
        if self.inbox:
            set_columns(self.query_one("#conflicts-table", DataTable), CONFLICT_COLUMNS, self.pane_width(2 / 5))
            return
        self.name_width = set_columns(self.query_one("#entities-table", DataTable),
                                      (("entity", "name", None), ("kind", "kind", 8), ("items", "items", 7),
                                       ("facts", "facts", 6)), self.pane_width(2 / 5))
        self.object_width = set_columns(self.query_one("#facts-table", DataTable), FACT_COLUMNS,
                                        self.pane_width(3 / 5, border=1))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """One key, two meanings: the entity actions outside the inbox, its choices inside it."""
        if action in ENTITY_ACTIONS:
            return not self.inbox
        if action in INBOX_ACTIONS and not self.inbox:
            return False
        if action == "decide":
            choice, kind = parameters
            conflict = self.selected_conflict()
            return conflict is not None and kind == keys_kind(conflict) and choice in conflict.choices
        return super().check_action(action, parameters)

    # -- loading ------------------------------------------------------------------------------

    def refresh_data(self) -> None:
        if self.inbox:
            self.load_conflicts()
            return
        memory, text = self.services.memory, self.query_one("#entity-filter", Input).value.strip()
        as_of = self.as_of

        def load() -> list[Entity]:
            # the first use of memory.knowledge loads the area; the store keeps each entity's
            # counts (for now), so a page of the most mentioned costs a page at any store size
            found = memory.knowledge.entities(limit=ENTITY_ROWS, containing=text)
            if as_of is None:
                return found
            then = memory.knowledge.entity_counts_as_of([e.id for e in found], as_of)
            return [replace(e, items=then[e.id][0], facts=then[e.id][1]) for e in found]

        self.run_task("entities", "Loading entities", load, progress=False, show=False, replace=True,
                      done=self.show_entities)

    @property
    def filter_pending(self) -> bool:
        """A key was typed in the filter and the store not asked yet (it is once typing pauses)."""
        return self._filter_timer is not None

    @on(Input.Changed, "#entity-filter")
    def filter_changed(self) -> None:
        """Ask the store once typing pauses for ``FILTER_PAUSE``, not at every key."""
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(FILTER_PAUSE, self._filter_paused)

    def _filter_paused(self) -> None:
        self._filter_timer = None
        self.refresh_data()

    @on(Input.Submitted, "#entity-filter")
    def filter_done(self) -> None:
        if self._filter_timer is not None:  # Enter: the entities of the filter as typed, now
            self._filter_timer.stop()
            self._filter_paused()
        self.query_one("#entities-table", DataTable).focus()

    def action_filter(self) -> None:
        self.query_one("#entity-filter", Input).focus()

    def show_entities(self, entities: list[Entity]) -> None:
        if self.inbox:
            return  # loaded before the inbox opened: its table has no columns now, and leaving reloads it
        table = self.query_one("#entities-table", DataTable)
        keep = self.entity.id if self.entity is not None else None
        self.entities = entities
        table.clear()
        table.columns["name"].label = Text(self.entity_label())
        for e in entities:
            table.add_row(clip(e.name, self.name_width), e.kind, f"{e.items:,}", f"{e.facts:,}", key=str(e.id))
        ids = [e.id for e in entities]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
            self.load_facts(entities[ids.index(keep)], self.facts_start)  # the page shown, read again
        elif entities:
            self.load_facts(entities[0])
        else:
            self.show_facts(None, FactPage(0, [], 0))

    def entity_label(self) -> str:
        """The entity column's label: as of a date, that the counts beside it are (in the most
        words that fit the column)."""
        if not self.as_of:
            return "entity"
        fitting = (f"entity (counts as of {self.as_of})", f"as of {self.as_of}")
        return next((label for label in fitting if len(label) <= self.name_width), fitting[-1])

    @on(DataTable.RowHighlighted, "#entities-table")
    def entity_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.entities):
            entity, asked = self.entities[event.cursor_row], self.facts_asked
            # the table filled again highlights the row of the entity whose page was just asked
            # for (the first row added, the cursor put back): that page, not its first
            self.load_facts(entity, asked.start if asked is not None and asked.entity == entity.id else 0)

    @on(DataTable.RowSelected, "#entities-table")
    def entity_selected(self) -> None:
        self.query_one("#facts-table", DataTable).focus()

    def load_facts(self, entity: Entity, start: int = 0, row: int | None = None) -> None:
        """Read a page of the entity's facts in a worker (the page from its ``start``-th fact),
        the cursor on its ``row`` (-1: the last; None: where it was, for the same page again)."""
        read_for = FactsRead(entity.id, self.as_of, self.app.store_generation, start)
        if read_for == (self.facts_asked if "facts" in self.app.tasks else self.facts_shown_for):
            # on its way (its row highlighted anew as the table is filled), or on screen already
            # with no other entity's facts on their way to replace them (a key typed in the
            # filter moved the entity's row)
            return
        self.facts_asked = read_for
        knowledge, as_of = self.services.memory.knowledge, self.as_of

        def read(at: int) -> FactPage:
            if as_of is None:  # now: a page read, and the count the store keeps
                return FactPage(at, *knowledge.facts_page(entity.id, at, FACT_ROWS))
            held = knowledge.facts(entity.id, as_of=as_of)  # as of a date: each fact is judged in time
            return FactPage(at, held[at:at + FACT_ROWS], len(held))

        def page() -> FactPage:
            found = read(start)
            if not found.facts and start:  # the page's facts were deleted meanwhile: the last page
                found = read(max(0, found.total - 1) // FACT_ROWS * FACT_ROWS)
            return replace(found, disputed=frozenset(knowledge.open_conflicts_of([f.id for f in found.facts])))

        self.run_task("facts", "Loading facts", page, progress=False, show=False, replace=True,
                      done=lambda found: self.show_facts(entity, found, read_for=read_for, row=row))

    @on(PagedTable.LeavePage, "#facts-table")
    def leave_facts_page(self, event: PagedTable.LeavePage) -> None:
        """The cursor moved past the page of facts shown: the page it leads to."""
        if self.entity is not None:
            self.load_facts(self.entity, *turned_to(event.to, self.facts_start, FACT_ROWS, self.facts_total))

    def show_facts(self, entity: Entity | None, found: FactPage, read_for: FactsRead | None = None,
                   row: int | None = None) -> None:
        if self.inbox:
            return  # as show_entities
        start, facts, total = found.start, found.facts, found.total
        self.facts_shown_for = read_for
        table = self.query_one("#facts-table", PagedTable)
        # the same page of the same entity again (one of its facts edited or deleted): the cursor stays where it was
        same = entity is not None and self.entity is not None and entity.id == self.entity.id and start == self.facts_start
        kept_row = table.cursor_row if row is None and same else row
        self.entity, self.facts, self.facts_start, self.facts_total = entity, facts, start, total
        table.clear()
        for f in facts:
            dim = "dim" if f.state(f.seen_at) == "superseded" else ""
            table.add_row(Text(clip(f.subject, SUBJECT_WIDTH), style=dim), Text(clip(f.predicate, PREDICATE_WIDTH), style=dim),
                          Text(clip(f.object, self.object_width), style=dim), holds(f, f.id in found.disputed),
                          str(len(f.provenance)),
                          key=str(f.id))
        if kept_row is not None and facts:
            table.move_cursor(row=kept_row % len(facts) if kept_row < 0 else min(kept_row, len(facts) - 1))
        table.more_before, table.more_after = start > 0, start + len(facts) < total
        when = f" as of {self.as_of}" if self.as_of else ""
        shown = f"facts {start + 1:,}–{start + len(facts):,} of {total:,}" if total > len(facts) else f"{total:,} fact(s)"
        # Content, not a str (which Textual reads as markup): an imported entity's name is the store's text
        table.border_title = Content(f"{entity.name}: {shown}{when}") if entity else ""
        graph = self.query_one("#graph-body", Static)
        if entity is None:
            wanted = self.query_one("#entity-filter", Input).value.strip()
            graph.update(Text(f"No entity matches “{wanted}”." if wanted else "No entities yet.", style="dim"))
        else:
            graph.update(neighbourhood(entity, [f for f in facts if f.state(f.seen_at) != "superseded"],
                                       elsewhere=total - len(facts)))

    # -- time: as of a date, and a fact's history ----------------------------------------------

    def action_as_of(self) -> None:
        self.query_one("#as-of-date", Input).focus()

    @on(AsOfBox.Chosen, "#as-of-date")
    def as_of_typed(self, event: AsOfBox.Chosen) -> None:
        self.set_as_of(event.when)
        self.query_one("#facts-table", DataTable).focus()

    def set_as_of(self, when: str | None) -> None:
        """The facts, and the entities' counts beside them, as of ``when`` (None: now)."""
        self.as_of = when
        self.query_one("#as-of-date", AsOfBox).show(when)
        if self.entity is not None:
            self.load_facts(self.entity)
        self.refresh_data()

    def action_earlier(self) -> None:
        self._step(-1)

    def action_later(self) -> None:
        self._step(1)

    def _step(self, direction: int) -> None:
        """As of the previous or next date at which the entity's facts changed (past the last: now)."""
        if self.entity is None:
            return
        entity, knowledge = self.entity, self.services.memory.knowledge
        self._direction = direction

        def dates() -> list[str]:
            return sorted({d for f in knowledge.facts(entity.id) for d in (f.valid_from, f.valid_to) if d})

        self.run_task("change-dates", "Finding dates", dates, progress=False, show=False, replace=True,
                      done=self.step_to)

    def step_to(self, dates: list[str]) -> None:
        """A date typed as a month or a year ("2023-05") means all of it, as recall reads it: the
        next date is after that month, the previous one before it."""
        current, after = self.as_of, self.services.later
        if self._direction < 0:
            earlier = [d for d in dates if current is None or after(current, d)]
            self.set_as_of(earlier[-1] if earlier else (dates[0] if dates else None))
        else:
            later = [d for d in dates if current is not None and after(d, current)]
            self.set_as_of(later[0] if later else None)

    def action_history(self) -> None:
        fact = self.selected_fact()
        if fact is None:
            self.notify("Select a fact first.", severity="warning")
            return
        knowledge = self.services.memory.knowledge

        def load() -> tuple[str, str]:
            chain = knowledge.fact_history(fact.id)
            decisions = knowledge.decisions(limit=None, fact_id=fact.id)
            waiting = knowledge.open_conflicts_of([f.id for f in chain])
            lines = []
            for f in chain:
                state = f.state()
                mark = "▶ " if f.id == fact.id else "  "
                lines.append(f"{mark}#{f.id} {f.subject} —{f.predicate}→ {f.object}")
                lines.append(f"     holds {f.validity(at='9999')}; {state}" + (f", replaced by #{f.superseded_by}"
                                                                          if f.superseded_by else "")
                             + (f"; a version of #{f.version_of}" if f.version_of else ""))
                if f.id in waiting:  # reads as current, yet a person has a clash of it to decide
                    lines.append(f"     in open conflict {', '.join(f'#{c}' for c in waiting[f.id])} of the inbox"
                                 " (i, then a b m r decide)")
                lines.append(f"     recorded {f.recorded_at or '?'}" + (f", retired {f.retired_at}" if f.retired_at else ""))
            if decisions:
                lines += ["", "Decisions:"]
                lines += [f"  #{d.id} {d.at} {d.actor}: {d.summary}" + (f" (undone by #{d.undone_by})" if d.undone_by else "")
                          for d in decisions]
            return f"History of fact {fact.id}", "\n".join(lines)

        self.run_task("history", "Loading history", load, progress=False, show=False, done=self.show_history)

    def show_history(self, history: tuple[str, str]) -> None:
        title, body = history
        self.app.push_screen(ChoiceDialog(title, body, [("close", "Close")]))

    # -- the conflict inbox ---------------------------------------------------------------------

    def redraw(self) -> None:
        self.facts_shown_for = None  # the tables were emptied to fit a new width: fill them again
        super().redraw()

    def action_inbox(self) -> None:
        self.inbox = not self.inbox
        for table in self.query(DataTable):
            table.clear(columns=True)
        self.facts_shown_for = None
        self.fit_columns()
        self._show_mode()
        self.refresh_bindings()
        if self.inbox:
            self.query_one("#conflicts-table", DataTable).focus()
            self.load_conflicts()
        else:
            self.query_one("#entities-table", DataTable).focus()
            self.refresh_data()

    action_leave_inbox = action_inbox  # the inbox's own `i`, which the key bar names for what it does there

    def _show_mode(self) -> None:
        for widget in self.query(".inbox"):
            widget.display = self.inbox
        for selector in ("#entity-filter", "#entities-table", "#as-of-date", "#facts-table", "#entity-graph"):
            self.query_one(selector).display = not self.inbox

    def load_conflicts(self) -> None:
        memory = self.services.memory

        def load() -> tuple[list[Conflict], dict[int, Item]]:
            found = memory.knowledge.conflicts()
            return found, memory.items({i for c in found for ids in c.evidence.values() for i in ids})

        self.run_task("conflicts", "Loading conflicts", load, progress=False, show=False, replace=True,
                      done=self.show_conflicts)

    def show_conflicts(self, found: tuple[list[Conflict], dict[int, Item]]) -> None:
        if not self.inbox:
            return  # loaded before the inbox closed
        conflicts, items = found
        table = self.query_one("#conflicts-table", PlainTable)
        after = self.next_conflict([c.id for c in conflicts])
        self.conflicts, self.evidence = conflicts, items
        table.show_rows([(str(c.id), (c.kind, c.summary())) for c in conflicts], wrap=True)  # never cut
        if after is not None:
            table.move_cursor(row=table.get_row_index(str(after)))
        self._show_conflict()

    def next_conflict(self, open_ids: list[int]) -> int | None:
        """Of ``open_ids``, the one to select: the conflict selected, if still open; else the
        first after it in the list shown that is (the next to decide), else the last before it."""
        shown, row = [c.id for c in self.conflicts], self.query_one("#conflicts-table", DataTable).cursor_row
        row = min(max(row, 0), len(shown))
        still_open = set(open_ids)
        return next((i for i in shown[row:] + shown[:row][::-1] if i in still_open), open_ids[0] if open_ids else None)

    @on(DataTable.RowHighlighted, "#conflicts-table")
    def conflict_highlighted(self) -> None:
        self._show_conflict()

    def selected_conflict(self) -> Conflict | None:
        row = self.query_one("#conflicts-table", DataTable).cursor_row
        return self.conflicts[row] if self.conflicts and 0 <= row < len(self.conflicts) else None

    def _show_conflict(self) -> None:
        body = self.query_one("#conflict-body", Static)
        conflict = self.selected_conflict()
        table, count = self.query_one("#conflicts-table", DataTable), len(self.conflicts)
        # where the cursor is, too: at 80x24 the list shows four of hundreds
        table.border_title = f"Inbox: {table.cursor_row + 1:,} of {count:,} open conflicts" if conflict \
            else f"Inbox: {count:,} open conflicts"
        if conflict is None:
            body.update(Text("No open conflicts: nothing the rules could not decide.", style="dim"))
        else:
            body.update(describe_conflict(conflict, self.evidence, self.pane_width(3 / 5, border=1) - 3))
        self.refresh_bindings()  # the key bar says the choices in the words of this conflict's kind

    def action_decide(self, choice: str, kind: str) -> None:
        """Settle the selected conflict (the key is offered only where ``choice`` applies to it;
        ``kind`` tells the key bar's wordings apart, and words the notice as the key did)."""
        conflict = self.selected_conflict()
        if conflict is None:
            return
        key = next(k for k in DECISION_KEYS[kind] if k.choice == choice)
        knowledge = self.services.memory.knowledge
        self.run_task("decide", f"{key.label}: conflict {conflict.id}", lambda: knowledge.decide(conflict.id, choice),
                      progress=False, done=lambda decision: self.decided(
                          f"{key.done}: {conflict.summary()} · decision #{decision.id}, u undoes it"))

    def action_undo(self) -> None:
        """Undo the last decision not undone yet (an undo is not one: u again undoes the one before);
        the notice names the conflict it opened again, not only the decision's number (which the
        person who pressed the key a while ago never saw but in a notice)."""
        knowledge = self.services.memory.knowledge

        def undo() -> str:
            undone = knowledge.undo_last()
            told = f"Undone: decision #{undone.undoes} (logged as #{undone.id})"
            reopened = None if undone.conflict_id is None else knowledge.conflict(undone.conflict_id)
            return told if reopened is None or reopened.status != "open" else f"{told}: {reopened.summary()} is open again"

        self.run_task("decide", "Undo the last decision", undo, progress=False, done=self.decided)

    def decided(self, told: str) -> None:
        """A decision made or undone, said in the words of the key pressed, not the engine's
        choice ("accept" for two entities merged, "both" for two kept apart)."""
        self.notify(told, title="Inbox", markup=False)
        self.app.store_changed()

    def selected_fact(self) -> Fact | None:
        table = self.query_one("#facts-table", DataTable)
        row = table.cursor_row
        return self.facts[row] if self.facts and 0 <= row < len(self.facts) else None

    # -- curation -----------------------------------------------------------------------------

    def action_add_fact(self) -> None:
        if self.entity is None:
            self.notify("Select an entity first.", severity="warning")
            return
        knowledge, fact = self.services.memory.knowledge, self.selected_fact()
        items = ", ".join(map(str, fact.provenance)) if fact else ""

        def add(values: dict[str, str]) -> None:
            try:
                ids = [int(x) for x in values["items"].replace(",", " ").split()]
            except ValueError:
                form.refuse("items are item ids, separated by commas.")
                return
            subject, predicate, obj = values["subject"], values["predicate"], values["object"]
            self.curate("Add fact", f"State “{subject} —{predicate}→ {obj}”, supported by item(s) {ids}?",
                        lambda dry_run: knowledge.add_fact(subject, predicate, obj, ids, time=values["time"] or None,
                                                           dry_run=dry_run), form)

        form = FormDialog("Add a fact", [
            ("subject", "Subject", self.entity.name), ("predicate", "Predicate", ""), ("object", "Object", ""),
            ("items", "Items that state it (ids, comma-separated)", items),
            ("time", "Time (ISO date, optional)", "")], add)
        self.app.push_screen(form)

    def action_edit_fact(self) -> None:
        fact = self.selected_fact()
        if fact is None:
            self.notify("Select a fact first.", severity="warning")
            return
        knowledge = self.services.memory.knowledge

        def edit(values: dict[str, str]) -> None:
            changes = {k: v for k, v in values.items() if v != (getattr(fact, k) or "")}
            if not changes:
                form.dismiss(None)
                return
            self.curate("Edit fact", f"Change fact {fact.id} ({fact.triple()}): "
                        + ", ".join(f"{k} → {v!r}" for k, v in changes.items()),
                        lambda dry_run: knowledge.edit_fact(fact.id, dry_run=dry_run, **changes), form)

        form = FormDialog(f"Edit fact {fact.id}", [
            ("subject", "Subject", fact.subject), ("predicate", "Predicate", fact.predicate),
            ("object", "Object", fact.object), ("time", "Time (ISO date, optional)", fact.time or "")], edit)
        self.app.push_screen(form)

    def action_delete_fact(self) -> None:
        fact = self.selected_fact()
        if fact is None:
            self.notify("Select a fact first.", severity="warning")
            return
        knowledge = self.services.memory.knowledge
        self.curate("Delete fact", f"Delete fact {fact.id}: {fact.triple()}?",
                    lambda dry_run: knowledge.delete_fact(fact.id, dry_run=dry_run))

    def action_rename_entity(self) -> None:
        entity = self.entity
        if entity is None:
            self.notify("Select an entity first.", severity="warning")
            return
        knowledge = self.services.memory.knowledge

        def renamed(name: str | None) -> None:
            if name and name != entity.name:
                self.curate("Rename entity", f"Rename “{entity.name}” to “{name}”?",
                            lambda dry_run: knowledge.rename_entity(entity.id, name, dry_run=dry_run))

        self.app.push_screen(PromptDialog("Rename entity", f"New name for “{entity.name}”:", entity.name), renamed)

    def action_merge_entity(self) -> None:
        keep = self.entity
        if keep is None:
            self.notify("Select an entity first.", severity="warning")
            return
        knowledge = self.services.memory.knowledge

        def chosen(other: str | None) -> None:
            if not other:
                return

            # in a worker, once: the dry run and the merge after it fold the entity the name found
            other_id = cache(partial(knowledge.entity_id_of, other))

            def merge(dry_run: bool) -> CurationReport:
                return knowledge.merge_entities(keep.id, other_id(), dry_run=dry_run)

            self.curate("Merge entities", f"Merge entity “{other}” into “{keep.name}”?", merge)

        self.app.push_screen(PromptDialog("Merge entities", f"Merge which entity into “{keep.name}”? (name or id)"),
                             chosen)


SCREEN = FactsScreen
