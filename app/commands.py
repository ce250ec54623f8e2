"""Command palette (Ctrl+P): every app action, and a search over the store's sources."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

from textual.command import Hit, Hits, Provider
from textual.screen import Screen

from .widgets.chrome import SCREENS

if TYPE_CHECKING:
    from .tui import MnemoscopeApp

Command = tuple[str, str, Callable[[], object]]


def app_commands(app: "MnemoscopeApp", screen: Screen) -> Iterator[Command]:
    """The app's actions as (title, help, callback); screens add their own with ``commands()``."""
    for mode, key, title in SCREENS:
        yield f"Go to {title}", f"Show the {title} screen (key {key})", partial(app.action_goto, mode)
    yield "Ingest files or folders", "Pick files and folders to add to the store", partial(app.action_goto, "ingest")
    yield "Paste a note", "Type or paste text and store it as a note", lambda: _screen_action(app, "ingest", "note")
    yield "Load demo content", "Ingest the demo guides and conversation into this store", app.load_demo
    yield "Open store", "Open another store file (Ctrl+O)", app.action_open_store
    yield "Export store", "Write every record to a JSON-lines file", app.action_export
    yield "Import export file", "Read records from a Mnemoscope export", app.action_import
    yield "Rebuild the index", "Recompute terms and vectors from the records (reindex)", app.action_reindex
    if app.services.has("topics"):
        yield "Rebuild topics", "Refit the topic tree", lambda: _screen_action(app, "topics", "rebuild")
    yield "Save screenshot", "Write an SVG of the screen to the current folder (F12)", app.action_screenshot
    yield "Help", "The keys of this screen (?)", app.action_help
    extra = getattr(screen, "commands", None)
    if extra is not None:
        yield from extra()


def _screen_action(app: "MnemoscopeApp", mode: str, action: str) -> None:
    """Switch to ``mode`` and run one of its actions once it is shown."""

    async def go() -> None:
        await app.switch_mode(mode)
        await app.screen.run_action(action)

    app.call_later(go)


class MnemoscopeCommands(Provider):
    """Jump to a source of the store by name."""

    async def search(self, query: str) -> Hits:
        app = self.app
        services = getattr(app, "services", None)
        if services is None or services.mem is None:
            return
        matcher = self.matcher(query)
        for source in services.mem.sources():
            name = f"Source: {Path(source.name).name}"
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(self._open, source.id),
                          help=f"{source.kind} · {source.name}")

    async def discover(self) -> Hits:
        return
        yield  # an async generator with nothing to discover: sources are found by typing

    def _open(self, source_id: int) -> None:
        app = self.app

        async def go() -> None:
            await app.switch_mode("sources")
            app.screen.select_source(source_id)

        app.call_later(go)
