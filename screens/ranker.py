"""Ranker: waits for the engine's `ranker` area (Memory.ranker)."""

from __future__ import annotations

from textual.app import ComposeResult

from screens.base import BaseScreen


class RankerScreen(BaseScreen):
    NAME = "ranker"
    TITLE = "Ranker"
    AREA = "ranker"
    HELP = "### Ranker\n\nThis screen needs the engine's `ranker` area."

    def compose_body(self) -> ComposeResult:
        yield self.missing_area_note()


SCREEN = RankerScreen
