"""Fixtures every test folder may use."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.support.openai_server import OpenAIServer


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
