"""Facts: entities with a filter, the selected entity's facts and its neighbourhood; curation."""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Input, Static

from mnemoscope.app.widgets import FormDialog, PromptDialog, clip
from mnemoscope.app.widgets.tables import set_columns
from mnemoscope.screens.base import BaseScreen

ENTITY_ROWS = 500  # the most mentioned entities; the filter searches them all
SUBJECT_WIDTH, PREDICATE_WIDTH = 14, 13
FACT_COLUMNS = (("subject", "subject", SUBJECT_WIDTH), ("predicate", "predicate", PREDICATE_WIDTH),
                ("object", "object", None), ("time", "time", 10), ("src", "sources", 3))  # object: what is left


def neighbourhood(entity: Any, facts: list[Any], width: int = 60) -> Text:
    """The entity in the middle, its outgoing facts to the right, incoming ones to the left."""
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
    return text


class FactsScreen(BaseScreen):
    NAME = "facts"
    TITLE = "Facts"
    AREA = "knowledge"
    HELP = """\
### Facts

Entities (most mentioned first) with a filter; the selected entity's facts (subject, predicate,
object, time, how many sources state it) and a drawing of its neighbourhood in the graph.
Every change shows the engine's dry-run report before it is written.

| key | does |
|---|---|
| `ctrl+f` | filter the entities (type; Enter keeps the filter) |
| `Enter` | on an entity: go to its facts |
| `a` | add a fact by hand (stated by the items you name) |
| `e` | edit the selected fact |
| `d` | delete the selected fact |
| `r` | rename the selected entity |
| `m` | merge another entity into the selected one |
"""
    BINDINGS = [
        Binding("ctrl+f", "filter", "Filter", id="facts-filter"),
        Binding("a", "add_fact", "Add", id="facts-add"),
        Binding("e", "edit_fact", "Edit", id="facts-edit"),
        Binding("d", "delete_fact", "Delete", id="facts-delete"),
        Binding("r", "rename_entity", "Rename", id="facts-rename"),
        Binding("m", "merge_entity", "Merge", id="facts-merge"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.entities: list[Any] = []
        self.facts: list[Any] = []
        self.entity: Any = None
        self.object_width = 0

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()
        with Horizontal(id="facts-main", classes="split"):
            with Vertical(id="facts-left"):
                yield Input(placeholder="Filter entities (Ctrl+F)", id="entity-filter", compact=True)
                yield DataTable(id="entities-table", cursor_type="row", zebra_stripes=True)
            with Vertical(id="facts-right"):
                yield DataTable(id="facts-table", cursor_type="row", zebra_stripes=True)
                with VerticalScroll(id="entity-graph"):
                    yield Static("", id="graph-body")

    def on_mount(self) -> None:
        self.query_one("#entities-table", DataTable).focus()

    def fit_columns(self) -> None:
        set_columns(self.query_one("#entities-table", DataTable),
                    (("entity", "name", None), ("kind", "kind", 8), ("items", "items", 5), ("facts", "facts", 5)),
                    self.pane_width(2 / 5))
        self.object_width = set_columns(self.query_one("#facts-table", DataTable), FACT_COLUMNS,
                                        self.pane_width(3 / 5, border=1))

    # -- loading ------------------------------------------------------------------------------

    def refresh_data(self) -> None:
        text = self.query_one("#entity-filter", Input).value.strip().lower()
        memory = self.services.memory

        def load() -> list[Any]:
            found = memory.knowledge.entities()  # in the worker: the first use loads the area
            if text:
                found = [e for e in found if text in e.name.lower() or text in e.key]
            return found[:ENTITY_ROWS]

        self.run_task("entities", "Loading entities", load, progress=False, show=False, replace=True,
                      done=self.show_entities)

    @on(Input.Changed, "#entity-filter")
    def filter_changed(self) -> None:
        if self.services.has("knowledge"):
            self.refresh_data()

    @on(Input.Submitted, "#entity-filter")
    def filter_done(self) -> None:
        self.query_one("#entities-table", DataTable).focus()

    def action_filter(self) -> None:
        self.query_one("#entity-filter", Input).focus()

    def show_entities(self, entities: list[Any]) -> None:
        table = self.query_one("#entities-table", DataTable)
        keep = self.entity.id if self.entity is not None else None
        self.entities = entities
        table.clear()
        for e in entities:
            table.add_row(e.name, e.kind, str(e.items), str(e.facts), key=str(e.id))
        ids = [e.id for e in entities]
        if keep in ids:
            table.move_cursor(row=ids.index(keep))
            self.load_facts(entities[ids.index(keep)])
        elif entities:
            self.load_facts(entities[0])
        else:
            self.show_facts(None, [])

    @on(DataTable.RowHighlighted, "#entities-table")
    def entity_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if 0 <= event.cursor_row < len(self.entities):
            self.load_facts(self.entities[event.cursor_row])

    @on(DataTable.RowSelected, "#entities-table")
    def entity_selected(self) -> None:
        self.query_one("#facts-table", DataTable).focus()

    def load_facts(self, entity: Any) -> None:
        knowledge = self.services.memory.knowledge
        self.run_task("facts", "Loading facts", lambda: knowledge.facts(entity.id), progress=False,
                      show=False, replace=True, done=partial(self.show_facts, entity))

    def show_facts(self, entity: Any, facts: list[Any]) -> None:
        table = self.query_one("#facts-table", DataTable)
        # the same entity again (one of its facts edited or deleted): the cursor stays where it was
        kept_row = table.cursor_row if entity is not None and self.entity is not None and entity.id == self.entity.id \
            else None
        self.entity, self.facts = entity, facts
        table.clear()
        for f in facts:
            table.add_row(clip(f.subject, SUBJECT_WIDTH), clip(f.predicate, PREDICATE_WIDTH),
                          clip(f.object, self.object_width), f.time or "", str(len(f.provenance)), key=str(f.id))
        if kept_row is not None and facts:
            table.move_cursor(row=min(kept_row, len(facts) - 1))
        table.border_title = f"{entity.name}: {len(facts)} fact(s)" if entity else ""
        graph = self.query_one("#graph-body", Static)
        if entity is None:
            wanted = self.query_one("#entity-filter", Input).value.strip()
            graph.update(Text(f"No entity matches “{wanted}”." if wanted else "No entities yet.", style="dim"))
        else:
            graph.update(neighbourhood(entity, facts))

    def selected_fact(self) -> Any:
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

        def added(values: dict[str, str] | None) -> None:
            if values is None:
                return
            try:
                ids = [int(x) for x in values["items"].replace(",", " ").split()]
            except ValueError:
                self.notify("Items are item ids, separated by commas.", title="Add fact: refused", severity="error")
                return
            subject, predicate, obj = values["subject"], values["predicate"], values["object"]
            self.curate("Add fact", f"State “{subject} —{predicate}→ {obj}”, supported by item(s) {ids}?",
                        lambda dry_run: knowledge.add_fact(subject, predicate, obj, ids, time=values["time"] or None,
                                                           dry_run=dry_run))

        self.app.push_screen(FormDialog("Add a fact", [
            ("subject", "Subject", self.entity.name), ("predicate", "Predicate", ""), ("object", "Object", ""),
            ("items", "Items that state it (ids, comma-separated)", items),
            ("time", "Time (ISO date, optional)", "")]), added)

    def action_edit_fact(self) -> None:
        fact = self.selected_fact()
        if fact is None:
            self.notify("Select a fact first.", severity="warning")
            return
        knowledge = self.services.memory.knowledge

        def edited(values: dict[str, str] | None) -> None:
            if values is None:
                return
            changes = {k: v for k, v in values.items() if v != (getattr(fact, k) or "")}
            if not changes:
                return
            self.curate("Edit fact", f"Change fact {fact.id} ({fact.triple()}): "
                        + ", ".join(f"{k} → {v!r}" for k, v in changes.items()),
                        lambda dry_run: knowledge.edit_fact(fact.id, dry_run=dry_run, **changes))

        self.app.push_screen(FormDialog(f"Edit fact {fact.id}", [
            ("subject", "Subject", fact.subject), ("predicate", "Predicate", fact.predicate),
            ("object", "Object", fact.object), ("time", "Time (ISO date, optional)", fact.time or "")]), edited)

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
            if other.isdigit():
                other_id = int(other)
            else:
                match = [e for e in knowledge.entities() if e.name.lower() == other.lower()]
                if not match:
                    self.notify(f"No entity is named “{other}”.", severity="error", markup=False)
                    return
                other_id = match[0].id
            self.curate("Merge entities", f"Merge entity {other_id} (“{other}”) into “{keep.name}”?",
                        lambda dry_run: knowledge.merge_entities(keep.id, other_id, dry_run=dry_run))

        self.app.push_screen(PromptDialog("Merge entities", f"Merge which entity into “{keep.name}”? (name or id)"),
                             chosen)


SCREEN = FactsScreen
