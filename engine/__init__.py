"""Mnemoscope's memory engine: a library with no UI, usable from Python and the CLI."""

from .config import Settings
from .errors import IngestFailed, MnemoscopeError, RecallError, RequestError
from .memory import Memory
from .pipeline import Hit, Recall
from .records import IngestReport

__version__ = "0.1.0"
__all__ = ["Memory", "Settings", "Recall", "Hit", "MnemoscopeError", "RecallError", "IngestFailed", "IngestReport",
           "RequestError", "__version__"]
