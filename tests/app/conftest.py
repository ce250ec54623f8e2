"""Fixtures for the app's Pilot and snapshot tests (the demo store itself is in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
from textual.widgets import Input, TextArea

from tests.app.mnemo_testing import PilotApp, build_app


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots must not depend on the blink phase of a cursor."""
    monkeypatch.setattr(Input, "cursor_blink", False)
    monkeypatch.setattr(TextArea, "cursor_blink", False)


@pytest.fixture
def demo_app(demo_copy: Path) -> Callable[..., PilotApp]:
    """``demo_app(**options)``: the app on a private copy of the demo store."""

    def build(**options) -> PilotApp:
        return build_app(demo_copy, **options)

    return build
