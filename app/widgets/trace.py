"""The live path trace: the walk over the topic tree, step by step, and the graph expansion.

A trace step (``Recall.trace``, a :class:`WalkStep`) names the node it stands on, its depth, the
relation taken to get there (start, child, parent, sibling, semantic), the scored candidates (each
with its policy terms) and the probability of the chosen move.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static, Tree
from textual.widgets.tree import TreeNode

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.knowledge.records import GraphNode, GraphReport
    from mnemoscope.engine.pipeline import Recall
    from mnemoscope.engine.topics.navigate import WalkStep

RELATION_MARK = {"start": "◎", "child": "↓", "parent": "↑", "sibling": "↔", "semantic": "≈"}
NO_WALK = ("No walk in this recall (the walk runs with the walk and fused strategies when the engine "
           "has a topic tree).")


def step_line(step: int, total: int, playing: bool) -> str:
    """Where the walk stands and whether it plays (its keys are in the key bar while the trace is shown)."""
    return f"step {step}/{total} · {'▶ playing' if playing else 'paused'}"


class TraceLine(Widget):
    """The line over the walk (:func:`step_line`); or why the recall has no walk, wrapped. A step
    repaints the line alone: no new layout."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.at: tuple[int, int, bool] | None = None  # the step (from 1), of how many, playing
        self.note = ""  # shown while there is no step: nothing before the first recall
        self.as_of: str | None = None  # the date the recall was asked as of (None: now)

    def show_step(self, step: int, total: int, playing: bool) -> None:
        was_note, self.at = self.at is None, (step, total, playing)
        self.refresh(layout=was_note)

    def show_no_walk(self) -> None:
        self.at, self.note = None, NO_WALK
        self.refresh(layout=True)

    def render(self) -> Text:
        when = Text(f"as of {self.as_of} · ", style="cyan") if self.as_of else Text()
        if self.at is None:
            return when + Text(self.note, style="dim")
        return when + Text(step_line(*self.at))


def graph_node(node: GraphNode) -> str:
    """A node of the graph expansion as a person reads it: an entity by its name, an item by its
    id (``item:37``), with its score."""
    return f"{node.get('name') or node['node']} {node['score']:.2f}"


def parent_id(topic: str) -> str | None:
    """``t:0.1.2`` → ``t:0.1``; the root ``t:0`` (or ``t:``) has none."""
    prefix, _, path = topic.partition(":")
    if "." not in path:
        return None
    return f"{prefix}:{path.rsplit('.', 1)[0]}"


class TraceView(Vertical):
    """Animated over the steps; space plays or pauses, ``.`` steps, ``r`` replays."""

    step: reactive[int] = reactive(-1)
    playing: reactive[bool] = reactive(False)
    INTERVAL = 0.6

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.steps: list[WalkStep] = []
        self.graph: GraphReport | None = None
        self._topic_nodes: dict[str, TreeNode[str]] = {}
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield TraceLine(id="trace-status")
        tree: Tree[str] = Tree("topics", id="trace-tree")
        tree.show_root = False
        yield tree
        with VerticalScroll(id="trace-detail"):
            yield Static("", id="trace-step")
            yield Static("", id="trace-graph")

    def load(self, recall: Recall, animate: bool = True) -> None:
        """Show ``recall``'s walk (asked as of a date: the line over it says so)."""
        self.stop()
        self.query_one("#trace-status", TraceLine).as_of = recall.as_of
        self.steps = list(recall.trace)
        self.graph = recall.graph
        self._build_tree()
        self.query_one("#trace-graph", Static).update(self._graph_text())
        if not self.steps:
            self.step = -1
            self._show_step()
            return
        if animate:
            self.replay()
        else:
            self.step = len(self.steps) - 1

    def _build_tree(self) -> None:
        tree = self.query_one("#trace-tree", Tree)
        tree.clear()
        self._topic_nodes = {}
        labels: dict[str, str] = {}
        for s in self.steps:
            labels.setdefault(s.node, s.label)
        visited = list(labels)
        for s in self.steps:  # candidates name topics the walk did not visit (ancestors among them)
            for c in s.candidates:
                if not labels.get(c.node):
                    labels[c.node] = c.label
        for topic in visited:  # visited nodes with their ancestors, in path order
            chain = [topic]
            while (up := parent_id(chain[-1])) is not None:
                chain.append(up)
            parent = tree.root
            for tid in reversed(chain):
                if tid not in self._topic_nodes:
                    self._topic_nodes[tid] = parent.add(self._label(tid, labels.get(tid, ""), None), data=tid, expand=True)
                parent = self._topic_nodes[tid]
        tree.root.expand_all()
        self._labels = labels

    def _label(self, tid: str, label: str, mark: str | None) -> Text:
        text = Text()
        if mark:
            text.append(mark + " ", style="bold")
        text.append(label or tid, style="bold" if mark == "▶" else "")
        if label:
            text.append(f" {tid}", style="dim")
        return text

    def watch_step(self, _old: int, _new: int) -> None:
        self._show_step()

    def _show_step(self) -> None:
        status = self.query_one("#trace-status", TraceLine)
        detail = self.query_one("#trace-step", Static)
        if not self.steps:
            status.show_no_walk()
            detail.update("")
            return
        current = self.steps[self.step] if self.step >= 0 else None
        visited = {s.node for s in self.steps[: self.step + 1]}
        for tid, tree_node in self._topic_nodes.items():
            mark = "▶" if current is not None and tid == current.node else "●" if tid in visited else None
            tree_node.set_label(self._label(tid, self._labels.get(tid, ""), mark))
        if current is not None:
            tree = self.query_one("#trace-tree", Tree)
            node = self._topic_nodes.get(current.node)
            if node is not None:  # once the tree has its lines (nodes may have just been added)
                self.call_after_refresh(tree.move_cursor, node, animate=False)
        status.show_step(self.step + 1, len(self.steps), self.playing)
        detail.update(self._step_text(current))

    def _step_text(self, step: WalkStep | None) -> RenderableType:
        if step is None:
            return ""
        relation = step.relation
        head = Text()
        head.append(f"{RELATION_MARK.get(relation, '·')} {relation or 'step'} ", style="bold")
        head.append(f"→ {step.label or step.node} ({step.node})")
        head.append(f"  depth {step.depth}", style="dim")
        head.append(f"  p={step.probability:.2f}", style="dim")
        candidates = step.candidates
        if not candidates:
            return head
        # the policy terms go on a line of their own under each candidate: as a fourth column they
        # squeezed the candidate's name to a few letters in the narrow panel
        table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold", expand=True)
        table.add_column("candidate · policy terms", ratio=1, overflow="fold")
        table.add_column("score", justify="right", no_wrap=True)
        table.add_column("p", justify="right", no_wrap=True)
        for c in candidates:
            chosen = c.node == step.node
            table.add_row(Text(f"{'▶ ' if chosen else '  '}{c.label or c.node}", style="bold" if chosen else ""),
                          f"{c.total:.3f}", f"{c.probability:.2f}")
            shown = " · ".join(f"{k} {v:+.3f}" for k, v in c.terms.items() if abs(v) >= 0.0005)
            if shown:  # indented as a block: a line that wraps stays under its candidate
                table.add_row(Padding(Text(shown, style="dim"), (0, 0, 0, 4)), "", "")
        grid = Table.grid()
        grid.add_row(head)
        grid.add_row(table)
        return grid

    def _graph_text(self) -> Text:
        graph = self.graph
        if not graph:
            return Text("")
        seeds, reached = graph["seeds"], graph["reached"]
        text = Text("\nGraph expansion\n", style="bold")
        text.append(f"seeds ({len(seeds)}): ", style="dim")
        text.append(", ".join(map(graph_node, seeds[:12])) + ("…" if len(seeds) > 12 else "") + "\n")
        text.append(f"reached ({len(reached)}): ", style="dim")
        text.append(", ".join(map(graph_node, reached[:20])) + ("…" if len(reached) > 20 else ""))
        return text

    # -- playback -----------------------------------------------------------------------------

    def replay(self) -> None:
        if not self.steps:
            return
        self.stop()
        self.step = 0
        self.playing = True
        self._timer = self.set_interval(self.INTERVAL, self._tick)

    def _tick(self) -> None:
        if self.step >= len(self.steps) - 1:
            self.stop()
            self._show_step()  # the status line says the walk stopped playing
        else:
            self.step += 1

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.playing = False

    def toggle(self) -> None:
        if self.playing:
            self.stop()
        elif self.step >= len(self.steps) - 1:
            self.replay()
        elif self.steps:
            self.playing = True
            self._timer = self.set_interval(self.INTERVAL, self._tick)
        self._show_step()

    def single_step(self) -> None:
        self.stop()
        if self.steps:
            self.step = (self.step + 1) % len(self.steps)
        self._show_step()
