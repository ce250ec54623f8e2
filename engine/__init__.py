"""Mnemoscope's memory engine: a library with no UI, usable from Python and the CLI."""

from .config import Settings
from .memory import IngestFailed, IngestReport, Memory, RequestError
from .recall import Hit, Recall, RecallError

__version__ = "0.1.0"
__all__ = ["Memory", "Settings", "Recall", "Hit", "RecallError", "IngestFailed", "IngestReport", "RequestError", "__version__"]
