"""Mnemoscope: explore, curate and teach an LLM agent's memory store.

The installed package maps the repository's top-level folders to subpackages
(``mnemoscope.engine``, ``mnemoscope.app``, ``mnemoscope.screens``, ``mnemoscope.assets``; see
``pyproject.toml``), so that nothing of ours lands in site-packages under a common name like ``app``.
The engine's public names are importable from here; they load on first use, so that a command
that never touches the engine (``mnemoscope --help``) does not pay for numpy.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

# In a checkout the subpackages are the repository's top-level folders, linked into this one
# (engine -> ../engine, …: tools that read folders, such as lint-imports, see the installed layout).
# Where the links are missing (a checkout made without symbolic links), Python finds the folders
# through this package's path. Either way the checkout it runs from is the code that runs (an
# editable install and a git worktree alike). An installed wheel has them inside this folder.
_checkout = Path(__file__).resolve().parent.parent
if not (Path(__file__).parent / "engine").is_dir() and (_checkout / "engine" / "__init__.py").is_file():
    __path__.append(str(_checkout))

if TYPE_CHECKING:
    from mnemoscope.engine import (Hit, IngestFailed, IngestReport, Memory, MnemoscopeError, Recall, RecallError,
                                   RequestError, Settings)

__all__ = ["Memory", "Settings", "Recall", "Hit", "MnemoscopeError", "RecallError", "IngestFailed", "IngestReport",
           "RequestError"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("mnemoscope.engine"), name)
    raise AttributeError(f"module 'mnemoscope' has no attribute {name!r}")
