"""Fixtures for the app's Pilot and snapshot tests: a demo store built once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, TextArea

from mnemoscope.engine import Memory
from tests.app.mnemo_testing import DEMO_DIR, build_app


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the demo content ingested (built once; tests copy it)."""
    path = tmp_path_factory.mktemp("demo-store") / "demo.db"
    with Memory(path) as mem:
        mem.ingest([DEMO_DIR])
    return path


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Snapshots must not depend on the blink phase of a cursor."""
    monkeypatch.setattr(Input, "cursor_blink", False)
    monkeypatch.setattr(TextArea, "cursor_blink", False)



@pytest.fixture
def demo_copy(demo_store: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store (tests may write to it)."""
    copy = tmp_path / "demo.db"
    shutil.copy(demo_store, copy)
    return copy


@pytest.fixture
def demo_app(demo_copy: Path):
    def build(**options) -> MnemoscopeApp:
        return build_app(demo_copy, **options)

    return build

