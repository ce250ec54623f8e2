"""The command palette's search over the store's sources (Ctrl+P, then type a source's name); the
app's own actions are its system commands (``MnemoscopeApp.get_system_commands``)."""

from __future__ import annotations

import asyncio
import heapq
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from textual.command import Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher
from textual.markup import escape

from .services import MnemoscopeError, describe_error

if TYPE_CHECKING:
    from mnemoscope.engine.records import Source

Command = tuple[str, str, Callable[[], object]]
"""A palette command: title, help, what it does."""

# The best-matching sources offered: the palette styles and lays out every hit it is given, and
# "Sou" matches every source's "Source: …" title, each key typed.
SOURCE_HITS = 30
MATCHED_PER_TURN = 500  # sources matched between two looks at the keyboard (a newer key cancels the search)


class MnemoscopeCommands(Provider):
    """Jump to a source of the store by name."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        # the sources, read once per palette opening (in a thread) rather than at every key; a read
        # that failed is forgotten, not kept as the list
        self._sources: asyncio.Future[list[Source]] | None = None

    async def search(self, query: str) -> Hits:
        services = getattr(self.app, "services", None)
        if services is None or services.mem is None:
            return
        if self._sources is None:
            self._sources = asyncio.ensure_future(asyncio.to_thread(services.mem.sources))
        reading = self._sources
        try:
            sources = await asyncio.shield(reading)  # a search cancelled by the next key leaves the read going
        except MnemoscopeError as exc:  # the store busy, a disk error: said once, and the next key reads again
            if self._sources is reading:
                self._sources = None
                self.app.notify(describe_error(exc), title="Sources", severity="error", markup=False)
            return
        matcher = self.matcher(query)
        scored: list[tuple[float, int]] = []
        for n, source in enumerate(sources):
            if n % MATCHED_PER_TURN == MATCHED_PER_TURN - 1:
                await asyncio.sleep(0)
            score = matcher.match(self.title(source))
            if score > 0:
                scored.append((score, -n))  # equal scores: in the store's order
        for score, minus_n in heapq.nlargest(SOURCE_HITS, scored):
            source = sources[-minus_n]
            # the palette reads the help as markup: a name is shown as it is
            yield Hit(score, self.highlighted(matcher, self.title(source)), partial(self._open, source.id),
                      help=escape(f"{source.kind} · {source.name}"))

    @staticmethod
    def title(source: Source) -> str:
        return f"Source: {Path(source.name).name}"

    @staticmethod
    def highlighted(matcher: Matcher, text: str) -> Content:
        """``text`` as it is, with the letters the query matched marked. Not Matcher.highlight: it
        reads its text as markup, so a name's brackets had to be escaped, and it marks the places
        matched in the escaped text, one further on in the name per bracket before them."""
        content = Content(text)
        _score, offsets = matcher.fuzzy_search.match(matcher.query, text)
        for offset in offsets:
            if not text[offset].isspace():
                content = content.stylize(matcher.match_style, offset, offset + 1)
        return content

    async def discover(self) -> Hits:
        return
        yield  # an async generator with nothing to discover: sources are found by typing

    def _open(self, source_id: int) -> None:
        app = self.app

        async def go() -> None:
            await app.switch_mode("sources")
            app.screen.select_source(source_id)

        app.call_later(go)
