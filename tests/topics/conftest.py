"""Shared stores for the topic tests: the demo content, built once per session."""

from pathlib import Path

import pytest

from mnemoscope.engine import Memory

DEMO = Path(__file__).resolve().parents[2] / "assets" / "demo"


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("topics-demo") / "demo.db"
    with Memory(path) as mem:
        mem.ingest(DEMO)
        mem.topics.rebuild()
    return path


@pytest.fixture()
def demo(demo_store):
    with Memory(demo_store) as mem:
        yield mem
