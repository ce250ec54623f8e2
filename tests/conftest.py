"""Fixtures every test folder may use: the demo store (built once per run), a store checksum and
a real OpenAI-compatible server."""

from __future__ import annotations

import compileall
import gc
import shutil
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tests.support.openai_server import OpenAIServer
from tests.support.stores import DEMO_DIR, shared_store, store_checksum


ROOT = Path(__file__).resolve().parents[1]
PROJECT_CODE = ("mnemoscope", "engine", "app", "screens", "tests/support")


def pytest_configure(config: pytest.Config) -> None:
    """Compile the project's modules once, before any worker starts, and let pytest keep the test
    modules it rewrites. The suite starts many Python processes (xdist workers, the engines and
    servers of the subprocess tests); where the environment forbids writing bytecode
    (PYTHONDONTWRITEBYTECODE), each of them compiled every module from source again, and every
    worker rewrote every test module's asserts again at each run (half of a worker's collection).
    Written bytecode is what Python does by default, into the ignored __pycache__ folders; an
    unwritable checkout is left as it is."""
    sys.dont_write_bytecode = False  # this process only: the test modules' rewritten code is kept
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has compiled the project
        return
    for folder in PROJECT_CODE:
        compileall.compile_dir(ROOT / folder, quiet=2, workers=1)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the test modules are imported (Textual, numpy, scipy, the engine: a large heap that
    lives to the end), take it out of the garbage collector's sight and collect young objects less
    often: a full collection walked all of it each time, a quarter of an app test's time. Tests
    that leave reference cycles behind are still collected; only the imported modules are frozen."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 10, 10)


@pytest.fixture(autouse=True, scope="session")
def no_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """No test reads the settings of the person running the suite (their config.toml)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("user-config")))
    yield
    patch.undo()


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A real OpenAI-compatible HTTP server on 127.0.0.1 (see tests/support/openai_server.py)."""
    with OpenAIServer() as server:
        yield server


def _ingest_demo(path: Path) -> None:
    from mnemoscope.engine import Memory

    with Memory(path) as mem:
        mem.ingest([DEMO_DIR])


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store with the demo content ingested, default settings: built once per run. Read it in
    place; a test that writes copies it first (``demo_copy``)."""
    return shared_store(tmp_path_factory, "demo", _ingest_demo)


@pytest.fixture
def demo_copy(demo_store: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store (the test may write to it)."""
    copy = tmp_path / "demo.db"
    shutil.copy(demo_store, copy)
    return copy


@pytest.fixture
def checksum() -> Callable[..., str]:
    """``checksum(path, skip=())``: a digest of every row of every table of a store."""
    return store_checksum
