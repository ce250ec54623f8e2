"""The demo content with its topic tree rebuilt from scratch, built once per run from the shared
demo store; tests read it in place (a test that writes copies it)."""

import shutil
from pathlib import Path

import pytest

from mnemoscope.engine import Memory
from tests.support.stores import shared_store


@pytest.fixture(scope="session")
def topic_store(tmp_path_factory: pytest.TempPathFactory, demo_store: Path) -> Path:
    def rebuild(path: Path) -> None:
        shutil.copy(demo_store, path)
        with Memory(path) as mem:
            mem.topics.rebuild()

    return shared_store(tmp_path_factory, "demo-topics", rebuild)


@pytest.fixture()
def demo(topic_store: Path):
    with Memory(topic_store) as mem:
        yield mem
