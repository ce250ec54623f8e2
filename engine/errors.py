"""Every error a person using Mnemoscope may see, under one base: :class:`MnemoscopeError`.

The CLI and the app catch ``MnemoscopeError`` and nothing broader: its ``str()`` is one line a
person can act on (a file and line where there is one), so it is shown as it is, and anything
else is a bug that deserves its traceback. Raise a subclass of it for every refusal of bad input,
bad settings or an unusable store; add a new subclass here, beside the others, when none fits.

Each error also keeps the built-in base it had before the hierarchy existed (``ValueError``,
``RuntimeError``, ``FileNotFoundError``), so that Python callers who caught those still do.
This module imports nothing from the engine: the app imports it without paying for numpy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence


QUOTED_CHARS = 40  # characters of a refused value a message echoes: a pasted page is no one line


def quoted(value: object) -> str:
    """A refused value as a message quotes it: its ``repr``, the first :data:`QUOTED_CHARS`
    characters of it, marked when cut."""
    text = repr(str(value))
    return text if len(text) <= QUOTED_CHARS else text[:QUOTED_CHARS] + "…"


def cut_repr(value: object) -> str:
    """A value as a message about its type quotes it: its own ``repr`` (a number stays a number:
    "must be a string, not 5"), cut to 60 characters. :func:`quoted` quotes a refused text."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def some_of(values: Sequence[object], shown: int = 5) -> str:
    """The first ``shown`` of ``values`` as a message lists them, and how many more there are: a
    million ids refused are not one line, and five of them alone read as all of them."""
    more = f" and {len(values) - shown:,} more" if len(values) > shown else ""
    return ", ".join(map(str, values[:shown])) + more


def size_text(n: int) -> str:
    """A size in the unit that keeps it readable (a small cap in whole MiB would read "0 MiB"),
    to a tenth (a size just past a cap of 1 MiB is 1.1 MiB, not the cap's "1 MiB")."""
    if n < 2**10:
        return f"{n:,} bytes"
    value, unit = (n / 2**20, "MiB") if n >= 2**20 else (n / 2**10, "KiB")
    return f"{value:,.1f}".removesuffix(".0") + f" {unit}"


def over_limit(what: str, setting: str, limit: str, bounds: str, outcome: str) -> str:
    """The one line that refuses an input past a configurable limit before any work: ``what`` it
    is (its size), the ``setting`` and its ``limit``, what the limit ``bounds``, the ``outcome``
    (nothing stored) and the variable that raises it, for the person who runs Mnemoscope."""
    return f"{what}: more than {setting} ({limit}), {bounds}; {outcome} (MNEMOSCOPE_{setting.upper()} raises it)"


class MnemoscopeError(Exception):
    """An error meant for the person using Mnemoscope; ``str()`` is one line they can act on."""


class ConfigError(MnemoscopeError, ValueError):
    """A setting has an unknown name or a value of the wrong kind."""


class StoreError(MnemoscopeError, RuntimeError):
    """The store file cannot be opened or used (locked, corrupt, not a store)."""


class NotAStore(StoreError):
    """The file is not a Mnemoscope store (another application's database, or no database)."""


class NewerStore(StoreError):
    """The store was written by a newer Mnemoscope (migrations this one does not know)."""


class StoreBusy(StoreError):
    """Another process held the store's write lock for longer than the lock timeout."""


class StoreReadOnly(StoreError):
    """A write was asked of a store opened read-only."""


class StoreDamaged(StoreError):
    """SQLite found the file corrupt (``mnemoscope check`` says more and salvages)."""


class StoreDiskError(StoreError):
    """The disk refused a write (full, or failing)."""


class StoreClosed(StoreError):
    """The memory was closed (the app switched stores, a server stopped) while this read or write came."""


class RequestError(MnemoscopeError, RuntimeError):
    """A request the engine refuses (unknown id, bad import file); str() is one line."""


class OutOfRange(RequestError):
    """A number (an id, a count) beyond what the store can hold (2^63 - 1)."""


class NotText(RequestError):
    """A text holding an unpaired surrogate, which no file can store (bytes of a command line
    that are not UTF-8 become one)."""


class AreaMissing(RequestError):
    """A call needs an area (knowledge, topics, ranker, images) this memory was opened without."""

    def __init__(self, area: str) -> None:
        self.area = area
        super().__init__(f"this memory has no {area} area (it was opened with the core alone, e.g. --core)")


class RecallError(MnemoscopeError, ValueError):
    """A query the engine refuses (empty, too long, unknown strategy)."""


class UnknownIntent(RecallError):
    """An intent name outside the known intents (see :data:`engine.topics.intents.INTENTS`)."""


class IngestError(MnemoscopeError, ValueError):
    """A file that cannot be read as any supported format; ``str()`` is one line for the user."""

    def __init__(self, path: str | Path, message: str, line: int | None = None) -> None:
        self.path, self.line, self.message = str(path), line, message
        where = f"{path}:{line}" if line else str(path)
        super().__init__(f"{where}: {message}")


class FileRefused(MnemoscopeError, ValueError):
    """A path that is not to be read or written as asked (a FIFO, a device, a full disk)."""


class FileTooLarge(FileRefused):
    """A file past the size a reader takes: ``size`` as it was opened (None: it grew past
    ``limit`` while it was read), so that a caller may say which limit it was."""

    def __init__(self, size: int | None, limit: int) -> None:
        self.size, self.limit = size, limit
        what = f"{size // 2**20} MiB; " if size is not None else ""
        super().__init__(f"file too large ({what}the limit is {limit // 2**20} MiB)")


class ExportFailed(MnemoscopeError, ValueError):
    """An export could not be written; the previous file at the target is as it was."""


class IngestFailed(MnemoscopeError, ValueError):
    """One or more files could not be read; nothing was written."""

    def __init__(self, errors: Sequence[IngestError]) -> None:
        self.errors = list(errors)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{errors[0]}{more}")


class KnowledgeError(MnemoscopeError, ValueError):
    """A curation request the engine refuses; ``str()`` is one line for the user."""


class RulesError(ConfigError):
    """A supersession rules file that cannot be read; ``str()`` names the file and what is wrong."""


class RebuildCancelled(MnemoscopeError, RuntimeError):
    """The rebuild was cancelled before it wrote anything; the previous tree is in place."""


class FeedbackError(MnemoscopeError, ValueError):
    """Feedback the ranker refuses (unknown or expired token, ids that were not shown)."""


class DistillError(MnemoscopeError, ValueError):
    """Distillation cannot run (too few teacher vectors, no latent model)."""


class EmbeddingUnavailable(MnemoscopeError, RuntimeError):
    """The embedding endpoint could not be reached or answered wrongly."""


class LLMFailure(MnemoscopeError, RuntimeError):
    """The endpoint could not give a usable answer for this request; ``str()`` is one line."""


class DataMissing(MnemoscopeError, FileNotFoundError):
    """A benchmark file is not where it was asked for."""


class KeepRefused(MnemoscopeError, FileExistsError):
    """A benchmark was asked to keep its store where a file already is (nothing is overwritten)."""
