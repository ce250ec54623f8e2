"""Topics: the topic tree (loaded lazily), the selected topic's terms, items and relations."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, OptionList, Static, Tree
from textual.widgets.option_list import Option
from textual.widgets.tree import TreeNode

from mnemoscope.app.widgets import ChoiceDialog, one_line
from mnemoscope.app.widgets.tables import PlainTable, set_columns
from mnemoscope.screens.base import BaseScreen

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.records import Item
    from mnemoscope.engine.topics.service import BuildReport, Neighbour, TopicInfo

ITEMS_SHOWN = 30


@dataclass(frozen=True)
class TopicDetail:
    """What the panel shows of the selected topic, read in one worker."""

    topic: TopicInfo
    parent: TopicInfo | None
    children: list[TopicInfo]
    siblings: list[TopicInfo]
    neighbours: list[Neighbour]
    items: list[Item]


def topic_label(topic: TopicInfo) -> Text:
    text = Text(topic.label or topic.id)
    text.append(f"  {topic.id}", style="dim")
    text.append(f"  {topic.size:,}", style="cyan")
    return text


def ancestors(topic_id: str) -> list[str]:
    """``t:0.1.2`` → ``["t:0", "t:0.1"]``: the path from the top down to the parent."""
    prefix, _, path = topic_id.partition(":")
    parts = path.split(".")
    return [f"{prefix}:{'.'.join(parts[:n])}" for n in range(1, len(parts))]


class TopicsScreen(BaseScreen):
    NAME = "topics"
    TITLE = "Topics"
    AREA = "topics"
    HELP = """\
### Topics

The topic tree: each node with its label, its path id (`t:0.1`) and its size (items in its
subtree). Children load when a node opens. The panel shows the selected topic's terms and
items, and its parent, children, siblings and semantic neighbours: Enter on one jumps there.

| key | does |
|---|---|
| `←` `→` `↑` `↓` / `Enter` | move, open and close nodes |
| `j` | focus the jumps list (Enter jumps) |
| `b` | rebuild the topic tree, once you confirm (in a worker; Esc cancels) |
"""
    BINDINGS = [
        Binding("j", "focus_jumps", "Jumps", id="topics-jumps"),
        Binding("b", "rebuild", "Rebuild", id="topics-rebuild"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.nodes: dict[str, TreeNode] = {}
        self.pending: str | None = None
        self.tree_note = ""

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()
        with Horizontal(id="topics-main", classes="split"):
            tree: Tree[str] = Tree("topics", id="topic-tree")
            tree.show_root = False
            yield tree
            with Vertical(id="topic-side"):
                with VerticalScroll(id="topic-detail"):
                    yield Static("", id="topic-body")
                yield OptionList(id="topic-jumps")
                yield PlainTable(id="topic-items", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.query_one("#topic-tree", Tree).focus()

    def fit_columns(self) -> None:
        self.text_width = set_columns(self.query_one("#topic-items", DataTable),
                                      (("item", "key", 7), ("text", "text", None)), self.pane_width(3 / 5, border=1))

    # -- the tree, lazily ---------------------------------------------------------------------

    def refresh_data(self) -> None:
        memory = self.services.memory

        def roots() -> tuple[list[TopicInfo], str]:
            topics = memory.topics  # in the worker: the first use loads the area
            return [t for t in topics.tree() if t.parent is None], topics.message

        self.run_task("topic-roots", "Loading topics", roots, progress=False, show=False, replace=True,
                      done=lambda found: self.show_roots(*found))

    def rebuilt(self, report: BuildReport) -> None:
        self.notify(report.summary(), title="Topics rebuilt", markup=False)
        self.app.store_changed()

    def show_roots(self, roots: list[TopicInfo], note: str) -> None:
        tree = self.query_one("#topic-tree", Tree)
        selected = tree.cursor_node.data if tree.cursor_node is not None else None
        tree.clear()
        self.nodes = {}
        for topic in roots:
            self.nodes[topic.id] = tree.root.add(topic_label(topic), data=topic.id, allow_expand=bool(topic.children))
        tree.root.expand()
        self.tree_note = note  # why the tree is flat, shown above the selected topic (the tree has no border)
        if not roots:
            self.query_one("#topic-body", Static).update(Text(note or "No topics yet.", style="dim"))
            return
        self.jump(self.pending or selected or roots[0].id)

    @on(Tree.NodeExpanded, "#topic-tree")
    def expanded(self, event: Tree.NodeExpanded) -> None:
        node = event.node
        if node.data is None or node.children:
            return
        node.add_leaf(Text("loading…", style="dim italic"))
        topics = self.services.memory.topics
        topic_id = node.data
        self.run_task(f"topic-children:{topic_id}", "Loading topics", lambda: topics.children(topic_id),
                      progress=False, show=False, done=partial(self.show_children, topic_id))

    def show_children(self, topic_id: str, children: list[TopicInfo]) -> None:
        node = self.nodes.get(topic_id)
        if node is None:
            return
        node.remove_children()
        for topic in children:
            self.nodes[topic.id] = node.add(topic_label(topic), data=topic.id, allow_expand=bool(topic.children))
        if self.pending:
            self.jump(self.pending)

    def jump(self, topic_id: str) -> None:
        """Select a topic, opening its ancestors first (each loads its children when opened)."""
        self.pending = topic_id
        for up in ancestors(topic_id):
            node = self.nodes.get(up)
            if node is None:
                return  # still loading; show_children calls back
            if not node.is_expanded:
                node.expand()
                return
        node = self.nodes.get(topic_id)
        if node is None:
            return
        self.pending = None
        tree = self.query_one("#topic-tree", Tree)
        # a node just added has no line yet: move once the tree has laid out its lines
        self.call_after_refresh(tree.move_cursor, node, animate=False)
        self.load_detail(topic_id)

    @on(Tree.NodeHighlighted, "#topic-tree")
    def highlighted(self, event: Tree.NodeHighlighted) -> None:
        if event.node.data is not None and self.pending is None:
            self.load_detail(event.node.data)

    # -- the selected topic -------------------------------------------------------------------

    def load_detail(self, topic_id: str) -> None:
        topics = self.services.memory.topics

        def detail() -> TopicDetail:
            return TopicDetail(topics.topic(topic_id), topics.parent(topic_id), topics.children(topic_id),
                               topics.siblings(topic_id), topics.neighbours(topic_id), topics.items(topic_id, ITEMS_SHOWN))

        self.run_task("topic-detail", "Loading topic", detail, progress=False, show=False, replace=True,
                      done=self.show_detail)

    def show_detail(self, detail: TopicDetail) -> None:
        topic, parent, items = detail.topic, detail.parent, detail.items
        body = Text(self.tree_note + "\n" if self.tree_note else "", style="dim italic")
        body.append(topic.label or topic.id, style="bold")
        body.append(f"  {topic.id} · depth {topic.depth} · {topic.size:,} items\n", style="dim")
        body.append("terms: ", style="dim")
        body.append(", ".join(topic.terms) + "\n")
        self.query_one("#topic-body", Static).update(body)
        jumps = self.query_one("#topic-jumps", OptionList)
        jumps.clear_options()
        options: list[Option] = []
        if parent is not None:
            options.append(Option(Text.assemble(("↑ parent   ", "bold"), topic_label(parent)), id=f"j-{parent.id}"))
        for c in detail.children:
            options.append(Option(Text.assemble(("↓ child    ", "bold"), topic_label(c)), id=f"j-{c.id}"))
        for s in detail.siblings:
            options.append(Option(Text.assemble(("↔ sibling  ", "bold"), topic_label(s)), id=f"j-{s.id}"))
        for n in detail.neighbours:
            options.append(Option(Text.assemble(("≈ semantic ", "bold"), topic_label(n.topic),
                                                (f"  {n.weight:.2f}", "dim")), id=f"j-{n.topic.id}"))
        jumps.add_options(options)
        jumps.border_title = f"relations ({len(options)}) · Enter jumps"
        table = self.query_one("#topic-items", DataTable)
        table.clear()
        for item in items:
            table.add_row(item.key or str(item.id), one_line(item, self.text_width), key=str(item.id))
        table.border_title = f"items (first {len(items)} of {topic.size:,})"

    @on(OptionList.OptionSelected, "#topic-jumps")
    def jump_selected(self, event: OptionList.OptionSelected) -> None:
        target = (event.option.id or "").removeprefix("j-")
        if target:
            self.jump(target)
            self.query_one("#topic-tree", Tree).focus()

    def action_focus_jumps(self) -> None:
        """Focus the relations with the first one highlighted: an OptionList focused with none
        highlighted takes Enter for nothing, and the help says j, then Enter jumps."""
        jumps = self.query_one("#topic-jumps", OptionList)
        if jumps.highlighted is None and jumps.option_count:
            jumps.highlighted = 0
        jumps.focus()

    # -- rebuild ------------------------------------------------------------------------------

    def action_rebuild(self) -> None:
        """Asked first: one key refitted the whole tree (minutes at a million items, its topics'
        ids and labels changed), and a word typed on the tree ("bread") began with it."""
        if not self.services.has("topics"):
            return
        items = (self.app.store_stats.totals() if self.app.store_stats else {}).get("items", 0)
        self.app.push_screen(ChoiceDialog(
            "Rebuild topics", f"Fit the topic tree again to the store's {items:,} items? Its topics' ids and labels "
            "may change. Esc cancels it while it runs.", [("cancel", "Cancel"), ("rebuild", "Rebuild")]),
            lambda choice: self.rebuild() if choice == "rebuild" else None)

    def rebuild(self) -> None:
        topics = self.services.memory.topics
        self.run_task("topics-rebuild", "Rebuilding topics",
                      lambda progress, cancelled: topics.rebuild(progress=progress, cancelled=cancelled),
                      done=self.rebuilt)


SCREEN = TopicsScreen
