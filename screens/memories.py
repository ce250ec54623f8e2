"""Memories: waits for the engine's `knowledge` area (Memory.knowledge)."""

from __future__ import annotations

from textual.app import ComposeResult

from screens.base import BaseScreen


class MemoriesScreen(BaseScreen):
    NAME = "memories"
    TITLE = "Memories"
    AREA = "knowledge"
    HELP = "### Memories\n\nThis screen needs the engine's `knowledge` area."

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()


SCREEN = MemoriesScreen
