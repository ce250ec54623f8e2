"""Fixtures every test folder may use."""

from __future__ import annotations

from typing import Iterator

import pytest

from tests.support.openai_server import OpenAIServer


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A real OpenAI-compatible HTTP server on 127.0.0.1 (see tests/support/openai_server.py)."""
    with OpenAIServer() as server:
        yield server
