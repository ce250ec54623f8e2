"""The command palette's search over the store's sources (Ctrl+P, then type a source's name); the
app's own actions are its system commands (``MnemoscopeApp.get_system_commands``)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Callable

from textual.command import Hit, Hits, Provider

Command = tuple[str, str, Callable[[], object]]
"""A palette command: title, help, what it does."""


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
