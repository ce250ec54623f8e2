"""Topics: waits for the engine's `topics` area (Memory.topics)."""

from __future__ import annotations

from textual.app import ComposeResult

from screens.base import BaseScreen


class TopicsScreen(BaseScreen):
    NAME = "topics"
    TITLE = "Topics"
    AREA = "topics"
    HELP = "### Topics\n\nThis screen needs the engine's `topics` area."

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()


SCREEN = TopicsScreen
