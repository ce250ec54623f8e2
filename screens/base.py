"""What every screen shares: the header, the tabs, the task bar, the footer, the store hooks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer, Static

from app.widgets import NavTabs, StoreHeader, TaskPanel

if TYPE_CHECKING:
    from app.services import Services
    from app.tui import MnemoscopeApp


class BaseScreen(Screen):
    """A screen of the app. Subclasses set NAME, TITLE, HELP and write ``compose_body``."""

    NAME = ""
    TITLE = ""
    HELP = ""
    AREA: str | None = None  # the engine area the screen needs (knowledge, topics, ranker)

    app: "MnemoscopeApp"

    def __init__(self) -> None:
        super().__init__(id=f"screen-{self.NAME}")
        self._stale = True

    def compose(self) -> ComposeResult:
        yield StoreHeader(id="store-header")
        yield NavTabs(self.NAME)
        yield from self.compose_body()
        yield TaskPanel(id="task-panel")
        yield Footer()

    def compose_body(self) -> ComposeResult:
        yield from ()

    @property
    def services(self) -> "Services":
        return self.app.services

    # -- the store changed: refresh now if shown, else when next shown --------------------------

    def on_mount(self) -> None:
        self.watch(self.app, "store_generation", self._store_changed, init=False)
        if self.app.store_generation:
            self.call_after_refresh(self._refresh_if_ready)

    def _store_changed(self, _generation: int) -> None:
        self._stale = True
        if self.is_current:
            self._refresh_if_ready()

    def on_screen_resume(self) -> None:
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

    def run_task(self, task: str, title: str, fn: Callable[..., Any], **options: Any):
        return self.app.run_task(self, task, title, fn, **options)

    def commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        """Palette commands of this screen (title, help, callback)."""
        yield from ()
