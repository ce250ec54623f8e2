"""The chrome every screen shares: the store header and the screen tabs."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import PurePath
from typing import TYPE_CHECKING, Callable, Iterable

from textual import events, on
from textual.content import Content
from textual.markup import escape
from textual.binding import ActiveBinding, Binding
from textual.dom import DOMNode
from textual.reactive import reactive
from textual.screen import Screen
from textual.style import Style as VisualStyle
from textual.widgets import Input, Static

if TYPE_CHECKING:  # the engine loads in a worker, after the first paint
    from mnemoscope.engine.records import Counts

# (mode, key, title) in tab order.
SCREENS = [
    ("ingest", "1", "Ingest"),
    ("sources", "2", "Sources"),
    ("topics", "3", "Topics"),
    ("facts", "4", "Facts"),
    ("memories", "5", "Memories"),
    ("query", "6", "Query"),
    ("ranker", "7", "Ranker"),
    ("activity", "8", "Activity"),
]

class TextBox(Input):
    """The app's text box: an Input whose own keys (Backspace, the arrows, Ctrl+U, Enter, …) act
    in the order they were typed. Textual inserts a printable key at once but runs a focused
    widget's bindings only once the key has bubbled up to the app, through each parent's queue:
    in a burst of keys (typed fast, queued while the UI thread was busy, or sent at once by the
    terminal) "dox", Backspace, "g" gave "dox", and Ctrl+U then "what" gave "" (Textual issue
    6605). A key bound on the box itself runs here, in turn; every other key goes on as before."""

    @on(events.Blur)
    def _show_the_start(self) -> None:
        """Left, the box shows the start of what it holds (a long query, a path), not the end the
        cursor was at; back in it, Textual selects it all, and the cursor's end shows again."""
        self.scroll_to(x=0, animate=False, immediate=True)

    @on(events.Key)
    async def _own_key_in_turn(self, event: events.Key) -> None:
        active = self.screen.active_bindings.get(event.key)
        if active is None or active.node is not self or not active.enabled or active.binding.priority:
            return
        event.stop()
        event.prevent_default()  # nor Input's own handler, nor the app's look at its bindings
        await self.run_action(active.binding.action)


COUNTS = [("sources", "sources"), ("items", "items"), ("episodes", "episodes"), ("facts", "facts"),
          ("entities", "entities"), ("topics", "topics"), ("feedback_events", "feedback")]


def describe_counts(counts: Counts | None) -> str:
    totals = counts.totals() if counts is not None else {}
    return " · ".join(f"{totals[key]:,} {noun}" for key, noun in COUNTS if key in totals)


class StoreHeader(Static):
    """One line: the app, the store and its counts, and what is running."""

    label: reactive[str] = reactive("opening…")
    counts: reactive[str] = reactive("")
    busy: reactive[str] = reactive("")

    def on_mount(self) -> None:
        app = self.app
        self.watch(app, "store_label", lambda v: setattr(self, "label", v))
        self.watch(app, "store_stats", lambda v: setattr(self, "counts", describe_counts(v)))
        self.watch(app, "busy", lambda v: setattr(self, "busy", v))

    def render(self) -> str:
        """Everything when it fits; else the brand goes, then the word "store", then the store's
        folder, so that the counts are cut (with an ellipsis) only when nothing else can give way.
        What runs comes first."""
        busy = f"[$warning]⟳ {escape(self.busy)}[/]  [dim]│[/dim] " if self.busy else ""
        counts = f"  [dim]│[/dim] {self.counts}" if self.counts else ""
        label, name = escape(self.label), escape(PurePath(self.label).name)
        room = self.content_size.width
        for head in ("[b]◆ Mnemoscope[/b]  [dim]store[/dim] " + label, "[dim]store[/dim] " + label, label, name):
            text = f"{busy}{head}{counts}"
            if Content.from_markup(text).cell_length <= room:
                break
        return text


class NavTabs(Static):
    """The screens as tabs: a line of their names over a bar that marks the current one; clicking
    a name switches to it (the number keys do the same).

    One widget drawing both lines, not Textual's Tabs: that mounts a widget per tab and an
    animated underline on every screen, a third of each screen's widgets, and each screen's first
    showing styles and lays out all of them."""

    COMPONENT_CLASSES = {"nav-tabs--tab", "nav-tabs--active", "nav-tabs--bar", "nav-tabs--mark"}

    auto_links = False  # the tab styles below, not the theme's link colours

    def __init__(self, active: str) -> None:
        super().__init__(id="nav-tabs")
        self.active = active
        self._names: tuple[Content, int, int] | None = None  # the styled names, the current one's columns

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._names = None  # drawn in the styles of before (a new theme)

    def _styled_names(self) -> tuple[Content, int, int]:
        """The line of names, styled once: only the bar under it depends on the width."""
        if self._names is None:
            tab, active = self.get_visual_style("nav-tabs--tab"), self.get_visual_style("nav-tabs--active")
            names: list[tuple[str, VisualStyle]] = []
            start = end = column = 0
            for mode, key, title in SCREENS:
                name = f"{key} {title}"
                label = f" {name}"
                click = VisualStyle.from_meta({"@click": f"app.goto({mode!r})"})
                names.append((label, (active if mode == self.active else tab) + click))
                if mode == self.active:
                    start, end = column + 1, column + 1 + len(name)
                column += len(label)
            self._names = (Content.assemble(*names), start, end)
        return self._names

    def render(self) -> Content:
        """Each name after one space, at every width (the eight fit in 80 columns). The bar spans
        the width; under the current name it is the highlight, set off by half cells at its ends."""
        names, start, end = self._styled_names()
        bar, mark = self.get_visual_style("nav-tabs--bar"), self.get_visual_style("nav-tabs--mark")
        rest = max(0, self.size.width - end - 1)
        line = Content.assemble(("━" * (start - 1), bar), ("╸", bar), ("━" * (end - start), mark), ("╺", bar),
                                ("━" * rest, bar))
        return Content.assemble(names, "\n", line)


def _declared_order(active: Iterable[ActiveBinding]) -> Callable[[ActiveBinding], tuple[int, int]]:
    """The key bar's order: each node's keys together (the focused widget's first, as Textual
    chains them), and a node's keys in the order its class declares them. Not Textual's order,
    which is that of each key's first binding: a screen that binds one key twice, for two modes
    (Facts' `a`, `m`, `r`: curation outside the inbox, decisions in it), would list the second
    mode's keys in the first mode's order."""
    nodes: dict[DOMNode, int] = {}
    for node, *_rest in active:
        nodes.setdefault(node, len(nodes))

    def order(key: ActiveBinding) -> tuple[int, int]:
        declared = _declared_ids(type(key.node))
        return nodes[key.node], declared.get(key.binding.id or "", len(declared))

    return order


@cache
def _declared_ids(cls: type) -> dict[str, int]:
    """Binding id → its place among a class's bindings, its bases' first (as Textual merges them)."""
    ids: dict[str, int] = {}
    for klass in reversed(cls.__mro__):
        for binding in vars(klass).get("BINDINGS", ()):
            if isinstance(binding, Binding) and binding.id:
                ids.setdefault(binding.id, len(ids))
    return ids


MORE_KEYS = "more"  # the help key's description in a bar too narrow for every key


@dataclass(frozen=True)
class StyledKeys:
    """A key bar's pieces, styled: each key; the palette's key for the right end; the keys but the
    help key, and "more" (the help key, then the palette's key alone) for the right end when not
    every key fits (None without a help key)."""

    keys: list[Content]
    palette: Content
    others: list[Content]
    more: Content | None


class KeyBar(Static):
    """The keys of what has focus, each with what it does, and the command palette's key at the
    right; a click on a key presses it.

    One widget drawing the line, not Textual's Footer: that mounts a widget per key, composes
    them again at every focus change, and each screen's first showing styles and lays them out
    (a quarter of an app session's work)."""

    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description", "key-bar--disabled", "key-bar--edge"}
    ALLOW_SELECT = False

    auto_links = False  # the key styles below, not the theme's link colours

    def __init__(self) -> None:
        super().__init__()
        self.keys: list[tuple[Binding, bool]] = []  # (binding, enabled), as the screen last had them
        self.palette: tuple[Binding, bool] | None = None
        self._drawn: StyledKeys | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        """Read when the screen's keys change, as Textual's footer does: a screen under a dialog
        keeps showing its own keys, not the dialog's."""
        if not self.app.app_focus or not self.is_attached or screen is not self.screen:
            return
        bindings = screen.active_bindings
        first: dict[str, tuple[Binding, bool]] = {}
        for _node, binding, enabled, _tooltip in sorted(bindings.values(), key=_declared_order(bindings.values())):
            if binding.show:
                first.setdefault(binding.action, (binding, enabled))
        self.keys = list(first.values())
        palette = bindings.get(self.app.COMMAND_PALETTE_BINDING) if self.app.ENABLE_COMMAND_PALETTE else None
        self.palette = (palette.binding, palette.enabled) if palette else None
        self._drawn = None
        self.refresh()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn = None  # drawn in the styles of before (a new theme)

    def _styled_keys(self) -> StyledKeys:
        """The pieces, styled once per change of the keys: a repaint (a resize, the screen
        refreshed) only fits them to the width."""
        if self._drawn is None:
            keys = [Content.assemble(*self._key(binding, enabled), " ") for binding, enabled in self.keys]
            palette = short_palette = Content("")
            if self.palette is not None:
                edge = ("▏", self.get_visual_style("key-bar--edge"))
                key, description = self._key(*self.palette)
                palette, short_palette = Content.assemble(edge, key, description, " "), Content.assemble(edge, key, " ")
            helps = [n for n, (binding, _enabled) in enumerate(self.keys) if binding.action == "help"]
            more = None
            if helps:
                more = Content.assemble(*self._key(*self.keys[helps[0]], description=MORE_KEYS), " ", short_palette)
            self._drawn = StyledKeys(keys, palette, [k for n, k in enumerate(keys) if n not in helps], more)
        return self._drawn

    def render(self) -> Content:
        """As Textual's compact footer: one key per action (its first binding), dimmed while
        disabled. When they do not all fit, the help key (which lists every key) goes last as
        "more", the palette's key loses its description, and a key that does not fit whole is
        left out, not cut."""
        drawn = self._styled_keys()
        keys, right = drawn.keys, drawn.palette
        if drawn.more is not None and sum(k.cell_length for k in keys) + right.cell_length > self.size.width:
            keys, right = drawn.others, drawn.more
        room = max(0, self.size.width - right.cell_length)
        shown: list[Content] = []
        for key in keys:
            if key.cell_length > room:
                break
            shown.append(key)
            room -= key.cell_length
        return Content.assemble(*shown, " " * room, right)

    def _key(self, binding: Binding, enabled: bool, description: str | None = None
             ) -> tuple[tuple[str, VisualStyle], tuple[str, VisualStyle]]:
        """A key and what it does (its binding's description unless given), styled; a click
        presses it (a disabled one rings the bell)."""
        click = VisualStyle.from_meta({"@click": f"app.simulate_key({binding.key!r})" if enabled
                                       else "app.bell"})
        key, description_style = self.get_visual_style("key-bar--key"), self.get_visual_style("key-bar--description")
        if not enabled:
            dim = self.get_visual_style("key-bar--disabled")
            key, description_style = key + dim, description_style + dim
        return ((self.app.get_key_display(binding), key + click),
                (f" {description or binding.description}", description_style + click))
