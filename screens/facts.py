"""Facts: waits for the engine's `knowledge` area (Memory.knowledge)."""

from __future__ import annotations

from textual.app import ComposeResult

from screens.base import BaseScreen


class FactsScreen(BaseScreen):
    NAME = "facts"
    TITLE = "Facts"
    AREA = "knowledge"
    HELP = "### Facts\n\nThis screen needs the engine's `knowledge` area."

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()


SCREEN = FactsScreen
