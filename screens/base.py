"""What every screen shares: the header, the tabs, the task bar, the footer, the store hooks."""

from __future__ import annotations

import string
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.markup import escape
from textual.timer import Timer
from textual.widgets import DataTable, Input, Static, Tree

from mnemoscope.app.commands import Command
from mnemoscope.app.restyle import RestyledScreen
from mnemoscope.app.widgets import ChoiceDialog, FormDialog, KeyBar, NavTabs, StoreHeader, TaskPanel

if TYPE_CHECKING:
    from textual.worker import Worker

    from mnemoscope.app.services import Services
    from mnemoscope.app.tui import MnemoscopeApp
    from mnemoscope.engine.knowledge.records import CurationReport

    Curated = CurationReport | dict[str, int]  # a curation's report, or a delete's counts

T = TypeVar("T")


WIDE = 110  # the app's breakpoint: from this width panes sit side by side (see MnemoscopeApp)
# seconds: a letter key of the screen pressed this shortly before a letter that starts its box was
# the first letter of what is typed ("where" on the hits: `w` showed the Why panel, and the query
# went as "here"); people type a word's letters well within it, and press a key of the screen alone
TYPING_GAP = 0.4


def typing_keys(screen: str, taken: list[Binding]) -> list[Binding]:
    """Each letter no key of ``taken`` (a screen's bindings) is, bound to start the screen's box
    (``BaseScreen.TYPE_INTO``) with it: a person types a name or a question on a list, where the
    box is not, and the letters reached the screen's one-letter keys ("Daniel": `a` opened Add a
    fact). Priority: the keys typed after it are the box's, however fast they come (see
    ``start_typing``); their own keys stay theirs (a lower-case letter bound on the screen)."""
    bound = {key for binding in taken for key in binding.key.split(",")}
    return [Binding(letter, f"start_typing('{letter}')", "", show=False, priority=True, id=f"{screen}-type-{letter}")
            for letter in string.ascii_letters if letter not in bound]


class FittedScreen(RestyledScreen):
    """A screen whose tables have fixed-width columns (``app.widgets.tables.set_columns``) fitted to the terminal's
    width when it mounts, and fitted again when the terminal is resized."""

    REFIT_DELAY = 0.2  # seconds a resize must rest before the tables are fitted again

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._fitted_width = 0  # the terminal width the tables' columns were fitted to
        self._refit_timer: Timer | None = None

    @property
    def fitted_width(self) -> int:
        """The terminal width the tables' columns are fitted to (the app's width once a resize rested)."""
        return self._fitted_width

    @property
    def refit_pending(self) -> bool:
        """A resize came and the tables are not fitted to it yet (they will be once it rests)."""
        return self._refit_timer is not None

    def fit_columns(self) -> None:
        """Give each table its columns for the terminal's width (with ``set_columns``)."""

    def redraw(self) -> None:
        """Fill the tables again after their columns were fitted anew."""

    # Decorated handlers: Textual calls an ``on_<event>`` method of every class in the MRO, so a
    # subclass's on_mount calling super() would run it twice.

    @on(events.Mount)
    def _first_fit(self) -> None:
        self._fitted_width = self.app.size.width
        self.fit_columns()

    @on(events.Resize)
    def _resized(self) -> None:
        if self._refit_timer is not None:  # a window being dragged sends many: fit once it rests
            self._refit_timer.stop()
        self._refit_timer = self.set_timer(self.REFIT_DELAY, self._refit)

    def _refit(self) -> None:
        self._refit_timer = None
        if self.app.size.width == self._fitted_width or not self._fitted_width:
            return
        self._fitted_width = self.app.size.width
        for table in self.query(DataTable):
            table.clear(columns=True)
        self.fit_columns()
        self.redraw()


class BaseScreen(FittedScreen):
    """A screen of the app. Subclasses set NAME, TITLE, HELP and write ``compose_body``."""

    NAME = ""
    TITLE = ""
    HELP = ""
    AREA: str | None = None  # the engine area the screen needs (knowledge, topics, ranker)
    TYPE_INTO: str | None = None  # the box a letter typed on the screen's lists starts (see typing_keys)
    # in the key bar while a text box has focus: there digits are text, and Esc is the way to the screen keys.
    # priority: run as the app takes the key, before the keys typed after it are handed to the box
    # (else "abc", Esc, "2" typed fast put the 2 into the box: Esc reached the screen after it)
    BINDINGS = [Binding("escape", "escape", "Leave the box", id="screen-escape", priority=True)]

    app: "MnemoscopeApp"

    def __init__(self) -> None:
        super().__init__(id=f"screen-{self.NAME}")
        self._stale = True

    def compose(self) -> ComposeResult:
        yield StoreHeader(id="store-header")
        yield NavTabs(self.NAME)
        yield from self.compose_body()
        yield TaskPanel(id="task-panel")
        yield KeyBar()

    def compose_body(self) -> ComposeResult:
        yield from ()

    def pane_width(self, share_when_wide: float, border: int = 0) -> int:
        """The width a pane will have, from the terminal's width and the layout's breakpoint;
        ``border``: the cells its left border takes when the panes sit side by side.

        Computed, not measured: a table filled before its first layout would measure 0, and
        text clipped to that would differ from run to run.
        """
        width = self.app.size.width
        return int(width * share_when_wide) - border if width >= WIDE else width

    @property
    def services(self) -> "Services":
        return self.app.services

    # -- the store changed: refresh now if shown, else when next shown --------------------------

    @on(events.Mount)
    def _watch_store(self) -> None:
        self.watch(self.app, "store_generation", self._store_changed, init=False)

    def _store_changed(self, _generation: int) -> None:
        self._stale = True
        if self.is_current:
            self._refresh_if_ready()

    @on(events.ScreenResume)
    def _refresh_if_stale(self) -> None:
        """Shown (first or again): the terminal's new width and what changed meanwhile apply now."""
        self._refit()
        if self._stale and self.app.store_generation:
            self._refresh_if_ready()

    def _refresh_if_ready(self) -> None:
        if self.services.mem is None:
            return
        self._stale = False
        if self.AREA and not self.services.has(self.AREA):
            self.show_missing_area()
            return
        self.refresh_data()

    def refresh_data(self) -> None:
        """Reload what the screen shows from the store (called on the UI thread)."""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Esc is the screen's while a text box has focus (the key bar names it); elsewhere it is
        the app's, which cancels a task."""
        if action == "escape":
            return isinstance(self.focused, Input)
        if action == "start_typing":  # from a list or a tree, where letters are no text; the box shown
            return isinstance(self.focused, (DataTable, Tree)) and self.query_one(self.TYPE_INTO).display
        return True

    def action_start_typing(self, letter: str) -> None:
        """Start the screen's box anew with ``letter``: focused at once (``Screen.set_focus``, not
        ``widget.focus()``, which waits for the keys already queued: "Daniel" typed fast gave
        the box "D" and the screen's `a` the rest), the letter typed in its turn, after the box
        took the focus (which selects what it holds: the next key replaced the letter); after the
        screen's letter key it followed closely, if one did (TYPING_GAP)."""
        (before, at), (_letter, now) = self.app.key_before, self.app.last_key
        typed = (before if before.isalpha() and now - at < TYPING_GAP else "") + letter
        box = self.query_one(self.TYPE_INTO, Input)
        box.value = ""
        self.set_focus(box)
        box.call_later(box.insert_text_at_cursor, typed)

    def action_escape(self) -> None:
        """Esc in a text box cancels the task the panel shows, if one runs; else it leaves the box
        (where digits are typed, not screens switched)."""
        if not any(state.show for state in self.app.tasks.values()):
            self.leave_box()
        else:
            self.app.action_cancel_task()

    def leave_box(self) -> None:
        """Focus what comes after the box, at once (not after the keys already queued: see BINDINGS)."""
        self.focus_next()

    def redraw(self) -> None:
        """By default the tables are filled again by reloading them."""
        self._stale = True
        if self.is_current:
            self._refresh_if_ready()

    def show_missing_area(self) -> None:
        """The engine has no such area yet: say so instead of showing anything made up."""
        for note in self.query(".area-missing"):
            note.display = True
            note.update(f"This engine has no [b]{self.AREA}[/b] area (Memory.{self.AREA} is missing), "
                        f"so there is nothing to show here yet.")

    def missing_area_note(self) -> Static:
        note = Static("", classes="area-missing")
        note.display = False
        return note

    # -- tasks ------------------------------------------------------------------------------------

    def run_task(self, task: str, title: str, fn: Callable[..., T], *, done: Callable[[T], object] | None = None,
                 **options: Any) -> "Worker | None":
        """``app.run_task`` owned by this screen: ``done(result)`` is called only while it is shown or kept."""
        return self.app.run_task(self, task, title, fn, done=done, **options)

    # -- curation: the engine's dry run first, then the write ------------------------------------

    def curate(self, title: str, what: str, call: Callable[[bool], Curated], form: FormDialog | None = None) -> None:
        """Run ``call(dry_run=True)``, show its report, and on confirmation ``call(dry_run=False)``.
        ``form``: the dialog the change was typed in; a refused dry run's reason is shown there,
        the dialog left open with the text, and it closes once the report is shown."""
        refused = self.app.refused(f"{title}: refused")

        def curated(report: Curated) -> None:
            self.notify(describe_report(report), title=f"{title}: done", markup=False)
            self.app.store_changed()

        def form_open() -> bool:
            return form is not None and form in self.app.screen_stack

        def dry_run_shown(report: Curated) -> None:
            if form is not None:
                if not form_open():
                    return  # the person left the form (Esc) while the dry run ran: nothing to confirm
                form.dismiss(None)
            body = f"{what}\n\nThe dry run says this would change:\n\n{describe_report(report)}"
            self.app.push_screen(
                ChoiceDialog(title, body, [("cancel", "Cancel"), ("apply", title)], danger="apply"),
                lambda choice: self.run_task("curate", title, lambda: call(False), progress=False, done=curated,
                                             failed=refused) if choice == "apply" else None)

        self.run_task("dry-run", f"{title}: dry run", lambda: call(True), progress=False, show=False,
                      done=dry_run_shown,
                      failed=lambda reason: form.refuse(reason) if form_open() else refused(reason))

    def commands(self) -> Iterator[Command]:
        """Palette commands of this screen (title, help, callback): each of its own keys (those
        with an id: not Textual's focus keys) that acts now, the key bar's and those it leaves
        out for room, so that the palette offers every action; the help line is the binding's
        tooltip, if it has one, and its key. One command per title: the key the bar shows, if
        one does (the Query screen's hidden space, . and r also show the trace)."""
        offered: set[str] = set()
        bindings = sorted(self.active_bindings.values(), key=lambda active: not active.binding.show)
        for node, binding, enabled, tooltip in bindings:
            if (node is not self or not enabled or binding.id is None or binding.key == "escape"
                    or not binding.description or binding.description in offered):  # no description: a letter typed
                continue
            offered.add(binding.description)
            key = f"key {self.app.get_key_display(binding)}"
            yield (f"{self.TITLE}: {binding.description}", escape(f"{tooltip} ({key})" if tooltip else key),
                   partial(self.run_action, binding.action))


REPORT_LABELS = {"items": "items deleted", "sources": "sources deleted",
                 "coaccess_edges": "co-access edges of the ranker", "trust_rows": "trust records of the ranker"}


def singular_phrase(label: str) -> str:
    """``topic assignments`` → ``topic assignment``, ``entities deleted`` → ``entity deleted``: the
    first plural word of a report's label made singular."""
    words = label.split(" ")
    for n, word in enumerate(words):
        if word.endswith("s") and not word.endswith("ss"):
            words[n] = word[:-3] + "y" if word.endswith("ies") else word[:-1]
            break
    return " ".join(words)


def describe_report(report: Curated) -> str:
    """A curation report (dry run or done) as lines a person reads: what changes, in words; what
    does not (a count of 0) is left out."""
    lines = []
    for key, value in (report if isinstance(report, dict) else report.to_dict()).items():
        if value in (None, [], 0) or isinstance(value, bool) or key in ("fact", "entity", "episodes", "version_of"):
            continue
        label = REPORT_LABELS.get(key, key.replace("_", " "))
        if isinstance(value, int):
            lines.append(f"• {value:,} {singular_phrase(label) if value == 1 else label}")
        else:
            lines.append(f"• {label}: {value}")
    return "\n".join(lines) or "• nothing else changes"
