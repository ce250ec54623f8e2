"""Mnemoscope's memory engine: a library with no UI, usable from Python and the CLI.

The public names load on first use (PEP 562), so that importing one light module of the engine
(``mnemoscope.engine.errors``, ``mnemoscope.engine.config``) does not pay for numpy and scipy:
the CLI and the app catch :class:`MnemoscopeError` from their first line and start without the engine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .config import Settings
    from .errors import IngestFailed, MnemoscopeError, RecallError, RequestError
    from .memory import Memory
    from .pipeline import Hit, Recall
    from .records import IngestReport

__version__ = "0.1.0"

_HOMES = {"Memory": "memory", "Settings": "config", "Recall": "pipeline", "Hit": "pipeline",
          "MnemoscopeError": "errors", "RecallError": "errors", "IngestFailed": "errors", "RequestError": "errors",
          "IngestReport": "records"}
__all__ = ["Memory", "Settings", "Recall", "Hit", "MnemoscopeError", "RecallError", "IngestFailed", "IngestReport",
           "RequestError", "__version__"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
