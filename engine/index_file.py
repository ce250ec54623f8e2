"""The index's arrays saved beside the store, so that a large store opens without reading every row.

Opening a store rebuilds its index (columns, BM25 postings, vectors) from the store's rows: a
few seconds per million items, on every open. Instead, a memory saves :meth:`Index.arrays` to
``<store>-index`` (engine/array_file.py: private, written whole and renamed, checked once per version)
and the next open maps them, then takes in what was committed after them from the activity log,
as a memory following another process does (:meth:`Memory.refresh`).

The file is stamped with the store's state it was taken at: the id of the activity log's newest
line then, that line's time, how many schema migrations the store had applied, and the layout of
its arrays. It is used only if that very line is still in the store's log (a file of another
store, or of this store before a clear, an import or a reindex, or whose lines since were pruned,
is not), no migration since changed a part of the store it is derived from, its layout is the
one this code writes, and every check passes; otherwise it is ignored and the index is rebuilt
from the store, exactly as without it. It is only ever a cache.

A migration names the part of the store it changes (``records-2``, ``knowledge-10``: the store's
modules, engine/store). The index is derived from the items, their terms and vectors and the
activity log (``ITEM_PARTS``), but for its pending flags, read from the knowledge part's deferred
queue (``QUEUE_PART``: read again after its migration); each area's saved state from those and
from its own part, named as the area is. So a migration of the knowledge tables keeps the index and the topics' state (at
a million items their rebuild takes minutes), and one of the items rebuilds them all.

Layouts, and how to raise one. A file's stamp names the layout of what it holds: ``format``, the
index's own arrays (``INDEX_FORMAT``: the columns and BM25 arrays of :meth:`Index.arrays`) or the
areas' file's (``AREAS_FORMAT``); ``formats``, each area's state (``Area.saved_format``); and
``vector_format``, the vector arrays (``engine.vectors.LAYOUT``: :meth:`VectorIndex.arrays` with its
inverted lists), which both files hold, the index for its dense spaces and the topics' state for
its item vectors: one number for both, so that a change of the vectors cannot be stamped in one
file and forgotten in the other. When what is saved is laid out otherwise, raise the number of
that part, and only that: every reader since layouts were stamped (14b8ab6) compares each number
with its own and rebuilds what differs, never misreading it. Readers from before (cc38bb6, which
A/B runs still open copies of stores with) read no layout: they check the array file's own
format, so a file in which any layout is past 1 is written in the container's format 2
(:data:`FENCED`), which they refuse, and they rebuild. Layout 1 files stay readable to them.
tests/core/test_index_file.py raises each number as the next bump will and checks both readers.
"""

from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from typing import Callable, Mapping, Sequence

import numpy as np

from . import vectors
from .activity import EFFECTS
from .array_file import FORMAT, ArrayFile, MappedArrays, Unusable, map_arrays, open_private, read_header, write_arrays
from .errors import FileRefused
from .heap import keep_freed_blocks
from .index import LSA_KEY, WORDS_KEY, Index
from .store import Store

log = logging.getLogger(__name__)

# An ingest saves the file again once the items it (and others) changed since the file was saved
# reach this share of the store: saving costs about what reading that many items from the store
# would, so a store that grows by small writes is not saved at every one.
SAVE_AFTER_SHARE = 0.25
# The kernel reads at most its read-ahead window (read_ahead_kb, 8 MB here) for one piece of
# advice: a whole file asked for at once is read only that far, so it is asked for in pieces.
READ_AHEAD_PIECE = 8 << 20
# The layouts of the saved files' own arrays (see the module's docstring for the others and how
# to raise one): what Index.arrays() lays out beside the vectors, and the areas' file's
# arrangement. A file saved before layouts were stamped is of layout 1.
INDEX_FORMAT = 1
AREAS_FORMAT = 1
# The array file's format for a file with any layout past 1: the same container, which readers
# from before the layouts were stamped refuse (they know format 1 only).
FENCED = 2
ITEM_PARTS = ("records", "activity")  # the parts of the store every saved file is derived from
# The part holding the deferred queue (extraction_queue), from which the index's pending flags are
# read: after a migration of it the saved index is kept and those flags alone are read again.
QUEUE_PART = "knowledge"


@dataclass(frozen=True)
class Stamp:
    """The store's state that a saved file is of, and the layout of its arrays."""

    log_id: int  # the activity log's newest line
    log_at: float  # that line's time: another store's line of the same id has another
    schema: int  # how many migrations the store had applied (it applies them in one order)
    format: int  # the layout of the file's own arrays
    vector_format: int  # the layout of the vector arrays it holds (engine.vectors.LAYOUT)

    @classmethod
    def of(cls, store: Store, log_id: int, format: int) -> "Stamp | None":
        """The stamp of the store at its line ``log_id``, or None when the log no longer holds it."""
        log_at = _line_time(store, log_id)
        if log_at is None:
            return None
        return cls(log_id, log_at, len(store.applied_migrations()), format, vectors.LAYOUT)


def _line_time(store: Store, log_id: int) -> float | None:
    """When the store's log line ``log_id`` was written (None: the log does not hold it)."""
    lines = store.activity_lines(1, before=log_id + 1) if log_id > 0 else []
    if not lines or lines[0].id != log_id:
        return None
    return lines[0].at


def migrated_since(store: Store, meta: Mapping[str, object], parts: Sequence[str]) -> list[str]:
    """The migrations of the store's ``parts`` applied since a file with stamp ``meta`` was
    saved. Raises Unusable for a stamp of more migrations than the store has."""
    applied = store.applied_migrations()
    count = meta.get("schema")
    if not isinstance(count, int) or count > len(applied):
        raise Unusable(f"saved under another schema ({count!r} migrations; the store has {len(applied)})")
    return [name for name in applied[count:] if name.rsplit("-", 1)[0] in parts]


def unfit_area(store: Store, meta: Mapping[str, object], area: str, format: int) -> str | None:
    """Why an area's state in the areas' file (stamp ``meta``, already usable for the store's
    items) cannot be taken back: its own part of the store migrated since, or it was saved in
    another layout than ``format``. None: it can."""
    formats = meta.get("formats", {})
    saved_format = formats.get(area, 1) if isinstance(formats, dict) else None
    if saved_format != format:
        return f"its layout is {saved_format!r}, not {format}"
    moved = migrated_since(store, meta, (area,))
    return f"the store's {', '.join(moved)} changed what it was taken from" if moved else None


def path_of(store: Store, part: str = "index") -> Path | None:
    """Where a store's saved ``part`` lives: ``<store>-index``, ``<store>-areas`` (None for a
    store in memory)."""
    if str(store.path) == ":memory:":
        return None
    return store.path.with_name(f"{store.path.name}-{part}")


def read_saved(store: Store, part: str, format: int) -> tuple[ArrayFile, int] | None:
    """A saved part's arrays and the log line they are as of, if the file is usable for
    ``store`` (see :func:`_map_saved`); None otherwise. Call it inside one read of the store
    (``store.reading()``)."""
    found = _map_saved(store, part, format)
    if found is None or not _checked(found[0], store, part):
        return None
    return found[0].file, found[1]


def _map_saved(store: Store, part: str, format: int) -> tuple[MappedArrays, int] | None:
    """A saved part mapped (its checksums not read yet) and its log line, if its stamp is of
    ``store`` as it is: its log line still in the log, no migration of the items' parts since,
    its arrays in layout ``format``; None otherwise."""
    path = path_of(store, part)
    if path is None or not path.exists():
        return None
    try:
        mapped = map_arrays(path)
        meta = mapped.file.meta
        log_id = int(meta.get("log_id", 0))
        log_at = _line_time(store, log_id)
        if log_at is None or log_at != meta.get("log_at"):
            raise Unusable("of another state of the store, or of another store")
        if meta.get("format", 1) != format:
            raise Unusable(f"its layout is {meta.get('format')!r}, not {format}")
        if meta.get("vector_format", 1) != vectors.LAYOUT:
            raise Unusable(f"its vectors' layout is {meta.get('vector_format')!r}, not {vectors.LAYOUT}")
        if moved := migrated_since(store, meta, ITEM_PARTS):
            raise Unusable(f"the store's {', '.join(moved)} changed what it was taken from")
    except (Unusable, ValueError, TypeError) as exc:
        log.info("not using the saved %s %s: %s", part, path, exc)
        return None
    return mapped, log_id


def _checked(mapped: MappedArrays, store: Store, part: str) -> bool:
    """Whether every array of a mapped part passes its checksum (logged when one does not)."""
    try:
        mapped.check()
    except Unusable as exc:
        log.info("not using the saved %s %s: %s", part, path_of(store, part), exc)
        return False
    return True


def write_saved(store: Store, part: str, log_id: int, format: int, meta: Mapping[str, object],
                arrays: Mapping[str, np.ndarray]) -> bool:
    """Save a part that holds the store exactly as of its log line ``log_id``, its arrays in
    layout ``format``. Returns whether it was saved (not for a store in memory, an empty log,
    or a folder it cannot write)."""
    path, stamp = path_of(store, part), Stamp.of(store, log_id, format)
    if path is None or stamp is None:
        return False
    formats = meta.get("formats")
    layouts = [stamp.format, stamp.vector_format, *(formats.values() if isinstance(formats, dict) else ())]
    try:
        write_arrays(path, {**asdict(stamp), **meta}, arrays, FORMAT if max(layouts) == 1 else FENCED)
    except (OSError, FileRefused) as exc:  # FileRefused: a full disk or a non-file in the way
        log.info("could not save the %s to %s: %s", part, path, exc)
        return False
    return True


def read_ahead(store: Store, parts: Sequence[str]) -> threading.Thread | None:
    """Ask the kernel to read the saved ``parts`` into the page cache, in this order, in a daemon
    thread (the advice waits while the disk's queue is full). An open maps the saved files and
    reads what it needs of them page by page, each page waiting on the disk when the store was
    not read for hours: the areas' restore reads most of their file so, and the first recalls
    the index's. Asked for at once, the disk delivers whole files in a fraction of that time. A
    file already cached costs a few milliseconds; None where the system gives no such advice."""
    paths = [path for part in parts if (path := path_of(store, part)) is not None]
    if not paths or not hasattr(os, "posix_fadvise"):
        return None
    thread = threading.Thread(target=_advise, args=(paths,), name="mnemoscope-read-ahead", daemon=True)
    thread.start()
    return thread


def _advise(paths: Sequence[Path]) -> None:
    """The advice for each of ``paths`` that is a private regular file of this user, opened as
    the saved files are read (:func:`engine.array_file.open_private`: a named pipe there is not
    waited on)."""
    for path in paths:
        try:
            with open_private(path) as f:
                size = os.fstat(f.fileno()).st_size
                for offset in range(0, size, READ_AHEAD_PIECE):
                    os.posix_fadvise(f.fileno(), offset, READ_AHEAD_PIECE, os.POSIX_FADV_WILLNEED)
        except Unusable:  # none saved (a small store), or not a file of ours: nothing to read
            continue
        except OSError:  # advice only: a filesystem that refuses it reads the file when it is needed
            continue


def load(store: Store, new_index: Callable[[], Index]) -> tuple[Index, int] | None:
    """The index from the saved file, if it is usable for ``store``, and the log line it is as
    of (the caller takes in what came after); None: rebuild it from the store. Call it inside
    one read of the store (``store.reading()``).

    The arrays' checksums are read in another thread while the index is made from them (the
    two take about as long at a million items, and the check does not hold the GIL); the index
    is returned only once every array has passed. A file unchanged since it was written or last
    checked whole is not read again (its stamp: engine/array_file.py)."""
    found = _map_saved(store, "index", INDEX_FORMAT)
    if found is None:
        return None
    mapped, log_id = found
    with ThreadPoolExecutor(1, thread_name_prefix="mnemoscope-check") as pool:
        checking = pool.submit(_checked, mapped, store, "index")
        try:
            index = new_index()
            index.vocab = store.vocabulary()
            index.restore(mapped.file.arrays, mapped.file.meta, store.get_kv(LSA_KEY), store.get_kv(WORDS_KEY))
        except (KeyError, ValueError, TypeError) as exc:
            log.info("not using the saved index %s: %s", path_of(store), exc)
            return None
        if not checking.result():
            return None
    if migrated_since(store, mapped.file.meta, (QUEUE_PART,)):
        index.set_pending(index.item_ids, False)
        index.set_pending(store.queued_items(["deferred"]), True)
    keep_freed_blocks()
    return index, log_id


def save(store: Store, index: Index, log_id: int) -> bool:
    """Save ``index``, which holds the store exactly as of its log line ``log_id``."""
    arrays, meta = index.arrays()
    return write_saved(store, "index", log_id, INDEX_FORMAT, meta, arrays)


def changed_since_saved(store: Store, part: str = "index") -> int | None:
    """How many items the store's log says were added, replaced, removed or read by the deferred
    areas since a saved part's line (None when there is no usable saved file, or its line is
    gone)."""
    path = path_of(store, part)
    if path is None or not path.exists():
        return None
    try:
        log_id = int(read_header(path).get("log_id", 0))
    except (Unusable, ValueError, TypeError):
        return None
    if _line_time(store, log_id) is None:
        return None
    return sum(line.count for line in store.activity_after(log_id) if {"items", "caught_up"} & set(EFFECTS.get(line.action, ())))
