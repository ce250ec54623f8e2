"""``Memory``: the one facade the app, the CLI and Python users call.

It owns the store (records, on disk) and the index (search state, in memory, derived from the
store). Each write is one transaction per source (an import, one for the whole file); the
in-memory index changes only after the commit, so a failed write leaves both exactly as they were.

Areas that grow the engine (knowledge, topics, ranking, images) plug in as :class:`engine.area.Area`
subclasses: they build their state from the store, take part in the ingest and delete
transactions, add signals and strategies to recall, and answer their own browsing and curation
calls through typed properties (``mem.knowledge``, ``mem.topics``, ``mem.ranker``, ``mem.images``),
each loaded on first use. ``Memory(extensions=False)`` opens the core alone: no area, and only
the core's strategies.
"""

from __future__ import annotations

import functools
import gc
import logging
import threading
import time
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Concatenate, Iterable, Iterator, ParamSpec, Sequence, TypeVar, Unpack, cast

import numpy as np

from . import activity as log_actions
from . import index_file, transfer
from .activity import Activity, Changes
from .area import Area, Piece
from .array_file import ArrayFile
from .calibration import CALIBRATION_KEY, calibrate
from .calibration import SAMPLE as CALIBRATION_SAMPLE
from .config import Settings
from .dense import HashEmbedder, OpenAIEmbedder
from .errors import AreaMissing, IngestFailed, RequestError, StoreError
from .extensions import AREAS, AreaPlug
from .arrays import Rows
from .index import LSA_KEY, WORDS_KEY, Index, ItemColumns
from .ingest import FilesRead, IngestError, discover, hold_to_limits, note, read_path
from .lexical import BM25Params
from .pipeline import Query, QueryOptions, Recall, Signal, Signals
from .query import english_lexicon
from .recall import CORE_STRATEGIES, describe, prepare_query, recall, signals, strategies
from .records import AreaFigures, Calibration, Counts, IngestReport, Item, ParsedSource, Source, SourceReport, Stats, WalkedItems
from .store import Store
from .vectors import VectorIndex

if TYPE_CHECKING:  # imported when the area is first used (engine/extensions.py)
    from .images import ImagesArea
    from .knowledge.records import Conflict
    from .knowledge.service import KnowledgeArea
    from .rank import FeedbackResult, RankerArea
    from .topics import TopicsArea

log = logging.getLogger(__name__)
# What a damaged model blob raises as np.load reads it (allow_pickle off: never code)
UNREADABLE_MODEL = (ValueError, KeyError, EOFError, OSError, zipfile.BadZipFile)

Progress = Callable[[int, int, str], None]  # (done, total, what)
MIDWAY_FIT_AHEAD = 100_000  # items still to ingest for a refit of the latent model along the way
# Items a catch-up reads per transaction, at most: a long source (a year of one conversation) is
# read in pieces, so that the catch-up's memory is the piece's, not the source's.
CATCH_UP_PIECE = 2_000
# Items of a long file's source (engine/ingest.py's ``ReadAgain``) parsed and stored at a time by
# a deferred ingest, in the source's one transaction: its memory is the block's, not the source's.
INGEST_BLOCK = 10_000
P = ParamSpec("P")
R = TypeVar("R")
AreaT = TypeVar("AreaT", bound=Area)
# Signature prefixes of the vectors the core derives from text (the embedders of engine.dense):
# a reindex rebuilds these and leaves every other kind.
TEXT_VECTORS = ("hash-", "openai:")
INDEX_PART, AREAS_PART = "index", "areas"  # the files saved beside a large store (engine/index_file.py)
FIGURED_AREAS = tuple(plug.name for plug in AREAS)  # the areas whose figures Counts and Stats carry


@dataclass
class Commits:
    """Commits an area has not seen, as it is told of them: what the log says changed, and the
    records of the items they added and of those the deferred areas read, in id order."""

    changes: Changes
    added: list[Item]
    read: list[Item]


# What each write is called while it runs, for a process that waits for its lock (StoreBusy).
_ACTIVITIES = {"ingest_parsed": "ingesting", "import_": "importing", "reindex": "reindexing", "clear": "clearing the store",
               "delete_item": "deleting", "delete_source": "deleting", "catch_up": "extracting facts and topics"}


@contextmanager
def _bulk_work() -> Iterator[None]:
    """A bulk write's loop (an ingest's sources, a catch-up's), with the garbage collector off:
    per-token allocations made it a third of bulk-ingest time."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc_was_enabled:
            gc.enable()


@dataclass
class _StoredBlock:
    """A block of a source stored by an ingest, as the index takes it after the commit; its
    items where they were held anyway (the whole source in one block), else None: read back for
    the areas that read them after the commit."""

    columns: ItemColumns
    rows: Rows
    items: list[Item] | None


def _joined(blocks: list[_StoredBlock]) -> tuple[ItemColumns, Rows]:
    """The blocks' columns and term rows as one: the index's arrays then grow once, to the
    source's size, as when a source was added whole (a block at a time, they doubled their room
    and touched all of it)."""
    if len(blocks) == 1:
        return blocks[0].columns, blocks[0].rows
    columns = ItemColumns(*(np.concatenate([getattr(b.columns, name) for b in blocks])
                            for name in ("ids", "source_ids", "positions", "times")))
    lengths = np.concatenate([b.rows.lengths for b in blocks])
    rows = Rows.adopt(np.concatenate([[0], np.cumsum(lengths)]), np.concatenate([b.rows.indices.view for b in blocks]),
                      np.concatenate([b.rows.values.view for b in blocks]))
    return columns, rows


def _blocks(items: Sequence[Item] | WalkedItems, size: int) -> Iterator[list[Item]]:
    """``items`` ``size`` at a time: a source read again from its file (engine/ingest.py's
    ``ReadAgain``) is never held whole; a list, held by its caller anyway, is one block, itself."""
    if isinstance(items, list):
        yield items
        return
    them = iter(items)
    while block := list(islice(them, size)):
        yield block


def _taken_from(sources: list[ParsedSource]) -> Iterator[ParsedSource]:
    """The sources in order, each taken out of the list as it is given."""
    sources.reverse()
    while sources:
        yield sources.pop()


def _of_kind(area: Area, kind: type[AreaT]) -> AreaT:
    """``area`` as the built-in area of ``kind``'s name; an area of another class plugged in under
    that name (``Memory.add_extension``) is no such area."""
    if not isinstance(area, kind):
        raise AreaMissing(kind.name)
    return area


def _stored_as_it_is(stored: Source, parsed: Source) -> bool:
    """Whether a source of the same name is stored as ``parsed`` would be: the same content, by
    the same hand (through MCP by an agent, or by the person: :attr:`Source.by_agent`). The
    person ingesting or importing what an agent stored makes it theirs (it is stored again), so
    that an agent that stored a file's bytes under its path first does not keep the person's
    document for its own to replace or forget."""
    return stored.content_hash == parsed.content_hash and stored.by_agent == parsed.by_agent


def _one_writer(method: Callable[Concatenate[Memory, P], R]) -> Callable[Concatenate[Memory, P], R]:
    """A write that may span several transactions (an ingest of many sources, an import) runs
    alone: another thread's write waits for it instead of interleaving with it. While it runs,
    the store names it to other processes (``StoreBase.activity``)."""
    label = _ACTIVITIES.get(method.__name__, "writing")

    @functools.wraps(method)
    def exclusive(self: Memory, *args: P.args, **kwargs: P.kwargs) -> R:
        with self._write_lock, self.store.activity(label):
            return method(self, *args, **kwargs)

    return exclusive


class Memory:
    """An agent memory in one SQLite file."""

    def __init__(self, path: str | Path | None = None, settings: Settings | None = None, *, extensions: bool = True,
                 client: str = "python", **overrides: Any) -> None:
        """Open (or create) a store. ``extensions=False`` opens the core alone (lexical and dense
        recall, no knowledge, topics, ranker or images), for benchmarks of the core and scripts.

        Opening loads the core index only; each area builds its in-memory state on first use
        (``mem.knowledge``, a recall, an ingest) or in :meth:`warm_up`, so a store opens, and its
        :meth:`counts` show, before the graph, the topic tree and the ranker are read.

        ``client`` names who writes through this memory in the store's activity log: ``cli``,
        ``app``, ``python`` or ``mcp:<client name>`` (:mod:`engine.activity`)."""
        self.settings = settings or Settings.load(**overrides)
        if path is not None:
            self.settings.store = str(path)
        self.path = self.settings.store_path
        self.store = Store(self.path, lock_timeout=self.settings.lock_timeout)
        self.activity = Activity(self.store, client)
        self._areas: dict[str, Area | AreaPlug] = {}  # by name, in load order; a plug until first used
        self._loaded: set[str] = set()  # the areas whose load() has finished
        self._area_locks: dict[str, threading.RLock] = {}  # one per area: loading one never holds up another
        self._write_lock = threading.RLock()  # see _one_writer
        self._cursor = 0  # the last activity-log line this memory's state includes
        self._looked = 0.0  # when refresh last looked at the log (time.monotonic)
        self._external: OpenAIEmbedder | None = None
        self.calibration: Calibration | None = None  # what an external embedder earns in fusion (engine/calibration.py)
        self.index_from_file = False  # whether the index was read from the arrays saved beside the store
        self.areas_from_file: list[str] = []  # the areas whose state was read from the file saved beside the store
        self._saved_areas: tuple[ArrayFile, int] | bool | None = None  # that file as read (False: none usable)
        self._areas_file_unusable = False  # missing, damaged or not fitting an area: saved again once every area is loaded
        self._since_saved: tuple[tuple[int, int], Commits] | None = None  # (saved line, cursor): what came after it
        self._saving: threading.Thread | None = None  # writing the areas' file aside (see _save_areas_aside)
        self._listing: threading.Thread | None = None  # making the index's inverted lists aside (see _make_lists_aside)
        self._closed = threading.Event()  # set by close: the lists' thread stops
        self._load(saved=True)
        self.store.on_write = self._sync_with_store
        for plug in AREAS if extensions else []:
            self._areas[plug.name] = plug
            self._area_locks[plug.name] = threading.RLock()

    # -- lifecycle ----------------------------------------------------------------------------

    def _new_index(self) -> Index:
        s = self.settings
        index = Index(BM25Params(k1=s.bm25_k1, b=s.bm25_b), lsa_dim=s.lsa_dim, hash_dim=s.hash_dim, char_ngrams=s.char_ngrams,
                      related_words=s.related_words)
        index.stored_rows = self._stored_rows
        return index

    def _stored_rows(self, signature: str, item_ids: np.ndarray) -> np.ndarray:
        """Stored vectors of items, in the order asked (zeros for an item without one)."""
        found, matrix = self.store.vectors(signature, item_ids.tolist())
        out = np.zeros((len(item_ids), matrix.shape[1] if len(found) else 0), dtype=np.float32)
        if len(found):
            at = np.searchsorted(found, item_ids)
            hit = at < len(found)
            hit[hit] = found[at[hit]] == item_ids[hit]
            out[hit] = matrix[at[hit]]
        return out

    def _load(self, *, saved: bool = False) -> None:
        """(Re)build the in-memory index from the store, as of one moment (see :meth:`refresh`);
        with ``saved``, from the arrays saved beside the store when they are usable
        (engine/index_file.py), and then saved there when they were not."""
        with self.store.reading():
            self._cursor = self.activity.last_id()
            self.index_from_file = saved and self._load_saved_index()
            if self.index_from_file:
                return
            self._load_index()
        if saved:
            self._save_index(behind=0)  # the saved arrays were missing or unusable

    def _load_saved_index(self) -> bool:
        """The index from its saved arrays, with what was committed after them taken in from the
        activity log, as a follower does (:meth:`_apply`). Only when no area is loaded yet and
        this memory has written nothing: the log's lines are then all others'."""
        restored = index_file.load(self.store, self._new_index)
        if restored is None:
            return False
        index, log_id = restored
        changes, cursor = self.activity.changes(log_id)
        if changes.everything:
            return False
        self.index = index
        self.calibration = self._stored_calibration()
        self._apply(changes)
        self._cursor = cursor
        return True

    def _save_index(self, behind: float = index_file.SAVE_AFTER_SHARE, wait: bool = True,
                    parts: Sequence[str] = (INDEX_PART, AREAS_PART)) -> None:
        """Save the index's arrays beside the store, and the areas' state once every area is
        loaded, when it holds ``save_index_above`` items and the saved ones are missing or
        ``behind`` a share of the store (a store growing by small writes is not saved at each:
        the next open takes them in from the log). Without ``wait``, not while another thread
        writes (a recall never waits for a save). ``parts``: which of the two to consider."""
        n = self.index.n_items
        if n < max(self.settings.save_index_above, 1):
            return
        if not (self._areas and len(self._loaded) == len(self._areas)):
            parts = [part for part in parts if part != AREAS_PART]
        stale = [part for part in parts if (changed := index_file.changed_since_saved(self.store, part) if behind else None) is None
                 or changed >= behind * n]
        if not stale or not self._write_lock.acquire(blocking=wait):
            return
        try:
            with self.store.reading():
                self.refresh()  # the index and the areas then hold the store exactly as of the log's newest line
                if INDEX_PART in stale:
                    index_file.save(self.store, self.index, self._cursor)
                if AREAS_PART in stale and self._cursor >= 0:
                    self._save_areas()
        finally:
            self._write_lock.release()

    def _save_areas(self) -> None:
        """Every loaded area's saved state in one file, stamped with this memory's cursor (each
        area's arrays under its name: ``knowledge.``, ``topics.``, ...)."""
        meta: dict[str, object] = {}
        formats: dict[str, int] = {}
        arrays: dict[str, np.ndarray] = {}
        for area in self._loaded_areas():
            saved = area.saved()
            if saved is not None:
                meta[area.name], formats[area.name] = saved.meta, area.saved_format
                arrays.update((f"{area.name}.{k}", a) for k, a in saved.arrays.items())
        if meta:
            index_file.write_saved(self.store, AREAS_PART, self._cursor, index_file.AREAS_FORMAT, {**meta, "formats": formats},
                                   arrays)

    def _load_index(self) -> None:
        index = self._new_index()
        index.vocab = self.store.vocabulary()
        for b in self.store.iter_index_batches():
            index.add_rows(b.ids, b.source_ids, b.positions, b.timestamps, b.lengths, b.terms, b.counts)
        index.set_pending(self.store.queued_items(["deferred"]), True)
        for signature in self.store.vector_signatures():
            ids, matrix = self.store.vectors(signature)
            index.set_vectors(signature, ids.tolist(), matrix)
        self._load_models(index)
        self.calibration = self._stored_calibration()
        self.index = index
        for area in self._loaded_areas():
            area.load()

    def _load_models(self, index: Index) -> None:
        """Give ``index`` the latent and word models stored beside the items. Both are derived from
        the items: a damaged one (a store edited by hand, a torn copy) counts as not stored, so
        the store still opens and the model is fitted again at the next refit."""
        try:
            if blob := self.store.get_kv(LSA_KEY):
                index.load_lsa(blob)
        except UNREADABLE_MODEL as exc:
            log.warning("the store's latent model is unreadable (%s); it is fitted again at the next refit", exc)
        try:
            index.load_words(self.store.get_kv(WORDS_KEY))
        except UNREADABLE_MODEL as exc:
            log.warning("the store's word model is unreadable (%s); it is fitted again at the next refit", exc)
            index.load_words(None)

    def reload(self) -> None:
        """Rebuild the in-memory index, and the areas loaded so far, from the store."""
        self._load()

    def refresh(self) -> bool:
        """Take in what other processes committed since this memory last looked: the items they
        added or deleted, and the areas they changed, as the activity log tells (the whole store
        is read again only when the log cannot tell). Returns whether anything changed.

        A write running in another thread of this process is not waited for: it refreshed before
        it began, and the next call takes in the rest."""
        self._looked = time.monotonic()
        if self.activity.last_id() == self._cursor or not self._write_lock.acquire(blocking=False):
            return False
        try:
            with self.store.reading():
                changes, cursor = self.activity.changes(self._cursor)
                if changes.everything:
                    self._load()
                elif changes:
                    self._apply(changes)
                self._cursor = cursor
        finally:
            self._write_lock.release()
        return bool(changes)

    def caught_up(self) -> bool:
        """Whether a read now only reads: every area loaded, and nothing that other processes
        committed waits to be taken in (one look at the activity log)."""
        return len(self._loaded) == len(self._areas) and self.activity.last_id() == self._cursor

    def _sync_with_store(self) -> None:
        """Called as each write transaction begins, with the write lock held: what other
        processes committed since this memory last looked is taken in first, so that a write
        checks and builds on the store as it is (two processes ingesting one file, crossed
        merges), not as it was."""
        self.refresh()

    def _apply(self, changes: Changes) -> None:
        """Another process's commits, in the index and in every loaded area."""
        store, index = self.store, self.index
        index.remove(changes.removed)
        fresh = [i for i in changes.added if i not in index.slot_of]
        if fresh:
            if store.vocab_size() > len(index.vocab):
                index.merge_vocab(store.terms_from(len(index.vocab)))
            for b in store.iter_index_batches(ids=fresh):  # (those since deleted are not found)
                index.add_rows(b.ids, b.source_ids, b.positions, b.timestamps, b.lengths, b.terms, b.counts)
            index.set_pending(changes.deferred, True)
            for signature in store.vector_signatures():
                ids, matrix = store.vectors(signature, fresh)
                if len(ids):
                    index.set_vectors(signature, ids.tolist(), matrix)
        index.set_pending(changes.caught_up, False)
        if "lsa" in changes.reload:
            self._load_models(index)
        if "calibration" in changes.reload:
            self.calibration = self._stored_calibration()
        areas = self._loaded_areas()
        if areas:  # (none while a store opens: no item records are built then)
            self._tell(areas, self._commits(changes, fresh))

    def _commits(self, changes: Changes, added: list[int]) -> Commits:
        """Other commits as the areas are told of them: with the item records they added (those
        in ``added``) and the deferred areas read."""
        items = self.store.items(added)
        read = self.store.items(changes.caught_up)
        return Commits(changes, [it for _, it in sorted(items.items())], [it for _, it in sorted(read.items())])

    def _tell(self, areas: list[Area], commits: Commits) -> None:
        """Other commits in these areas (the items added by them, the deferred areas' reads, the
        deletions), as a follower takes them in; an area the log says to read again is loaded."""
        changes = commits.changes
        ready = [i for i in commits.added if i.id not in changes.deferred] + commits.read
        for area in areas:
            told = ready if area.deferred else commits.added
            if area.name in changes.reload:
                area.load()
            elif told or changes.removed:
                area.on_changed_elsewhere(told, changes.removed)

    def close(self) -> None:
        if self._saving is not None:
            self._saving.join()
        self._closed.set()
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_extension(self, area: Area) -> None:
        """Plug an area in (reached as ``mem.<name>``) and load it now (this memory's own areas
        are plugged in at its opening and loaded on first use)."""
        self._areas[area.name] = area
        self._area_locks[area.name] = threading.RLock()
        self._area(area.name)

    # -- the areas ----------------------------------------------------------------------------

    # Each accessor imports its area's class once the area is found: the memory's own area was
    # built from it on first use anyway, and neither opening a store nor asking a memory opened
    # without the area imports it (engine/extensions.py).

    @property
    def knowledge(self) -> KnowledgeArea:
        """Episodes, facts, entities and the typed graph (:mod:`engine.knowledge`)."""
        area = self._area("knowledge")
        from .knowledge.service import KnowledgeArea
        return _of_kind(area, KnowledgeArea)

    @property
    def topics(self) -> TopicsArea:
        """The topic tree, intents and the intent-steered walk (:mod:`engine.topics`)."""
        area = self._area("topics")
        from .topics import TopicsArea
        return _of_kind(area, TopicsArea)

    @property
    def ranker(self) -> RankerArea:
        """The fused strategy's ranker, recall tokens and feedback (:mod:`engine.rank`)."""
        area = self._area("ranker")
        from .rank import RankerArea
        return _of_kind(area, RankerArea)

    @property
    def images(self) -> ImagesArea:
        """Image vectors of shared photos and their recall signal (:mod:`engine.images`)."""
        area = self._area("images")
        from .images import ImagesArea
        return _of_kind(area, ImagesArea)

    def conflicts(self, status: str | None = "open") -> list[Conflict]:
        """The conflict inbox (open conflicts; ``status=None``: every one, decided too) with its
        evidence, as :meth:`KnowledgeArea.conflicts` lists it but read from the store alone, in one
        snapshot: the knowledge area is not loaded (its entities, facts and graph, seconds in a large
        store, of which a listing reads nothing), so ``mnemoscope conflicts`` does not wait for it."""
        from .knowledge.service import KnowledgeArea
        area = _of_kind(self._built("knowledge"), KnowledgeArea)
        with self.store.reading():
            return area.inbox.conflicts(status)

    def has_area(self, name: str) -> bool:
        """Whether this memory has an area (``knowledge``, ``topics``, ``ranker``, ``images``),
        without loading it. Reading a missing area raises :class:`engine.errors.AreaMissing`."""
        return name in self._areas

    def loaded_areas(self) -> list[str]:
        """The areas whose in-memory state is built, in load order."""
        return [name for name in self._areas if name in self._loaded]

    def _built(self, name: str) -> Area:
        """An area as an object, its module imported on first use (not loaded: see :meth:`_area`)."""
        area = self._areas.get(name)
        if area is None:
            raise AreaMissing(name)
        if isinstance(area, AreaPlug):
            with self._area_locks[name]:
                if isinstance(area := self._areas[name], AreaPlug):
                    area = self._areas[name] = area.area_class()(self)
        return cast(Area, area)

    def _every_area(self) -> list[Area]:
        """Every area as an object (built, not loaded), in load order."""
        return [self._built(name) for name in self._areas]

    def _area(self, name: str) -> Area:
        """An area, loaded on first use. Once loaded it is returned without taking a lock; while
        one thread loads it, another asking for the same area waits (never for another area)."""
        area = self._built(name)
        if name not in self._loaded:
            with self._area_locks[name]:
                if name not in self._loaded:
                    self.refresh()  # the area reads the store as it is now: the core must not lag behind it
                    with self.store.reading():
                        if self.activity.last_id() != self._cursor:  # a commit came in between (or a write is running)
                            self._cursor = -1  # the next refresh reads everything again, the area included
                            area.load()
                        elif self._restore_area(area):
                            self.areas_from_file.append(name)
                        else:
                            area.load()
                    self._loaded.add(name)
        return area

    def _restore_area(self, area: Area) -> bool:
        """Whether the area's state came from the areas' file saved beside the store, with what
        was committed after it taken in as a follower takes it in; False: load it from the
        store. Called inside one read of the store, with the index as of the log's newest line."""
        if self._saved_areas is None:
            self._saved_areas = index_file.read_saved(self.store, AREAS_PART, index_file.AREAS_FORMAT) or False
        if not self._saved_areas:
            self._areas_file_unusable = True
            return False
        saved, log_id = self._saved_areas
        prefix = f"{area.name}."
        meta = saved.meta.get(area.name)
        commits = self._commits_since_saved(log_id)
        changes = commits.changes
        if not isinstance(meta, dict) or changes.everything or area.name in changes.reload:
            return False
        if unfit := index_file.unfit_area(self.store, saved.meta, area.name, area.saved_format):
            log.info("not using the saved %s state beside %s: %s", area.name, self.path, unfit)
            self._areas_file_unusable = True
            return False
        try:
            area.restore(ArrayFile(meta, {k[len(prefix):]: a for k, a in saved.arrays.items() if k.startswith(prefix)}))
        except (KeyError, ValueError, TypeError) as exc:
            log.warning("the saved %s state beside %s does not fit (%s); it is read from the store", area.name, self.path, exc)
            self._areas_file_unusable = True
            return False
        self._tell([area], commits)
        return True

    def _commits_since_saved(self, log_id: int) -> Commits:
        """What was committed after the areas' file was saved, this memory's own lines too: read
        from the log, with its items, once for every area restored as of the same newest line."""
        key = (log_id, self._cursor)
        if self._since_saved is None or self._since_saved[0] != key:
            changes = log_actions.changes_since(log_id, self.store.activity_after(log_id), own=set())
            self._since_saved = (key, self._commits(changes, changes.added))
        return self._since_saved[1]

    def _loaded_areas(self) -> list[Area]:
        return [self._built(name) for name in self.loaded_areas()]

    @property
    def areas(self) -> list[Area]:
        """Every area, loaded (the ingest and delete hooks need their state), in load order. The
        first time they are all loaded, and one was read from the store's rows, their state is
        saved beside a large store for the next process (see :meth:`_save_index`)."""
        if len(self._loaded) == len(self._areas):
            return self._every_area()
        areas = [self._area(name) for name in self._areas]
        self._saved_areas = self._since_saved = None  # (what was restored keeps the mapped pages it adopted)
        if len(self.areas_from_file) < len(areas):
            self._save_areas_aside()
        return areas

    def _save_areas_aside(self) -> None:
        """Save the areas' state (see :meth:`_save_index`) in a thread of its own: the search
        that first needed every area does not wait for the file to be written; :meth:`close`
        does."""
        if self._saving is not None and self._saving.is_alive():
            return
        self._saving = threading.Thread(target=self._save_areas_now, name="mnemoscope-save-areas")
        self._saving.start()

    def _save_areas_now(self) -> None:
        """The areas' file written aside: a store that fails meanwhile (busy, full disk) leaves it
        unwritten, which costs the next process a read from the rows, never this one an error."""
        try:
            self._save_index(0 if self._areas_file_unusable else index_file.SAVE_AFTER_SHARE, wait=False, parts=[AREAS_PART])
        except StoreError as exc:
            log.warning("the areas' state beside %s was not saved (%s)", self.path, exc)

    def warm_up(self) -> None:
        """Load every area and build the search matrices now, so that the first query need not
        (the app calls this behind its usable screen, and again after following another process).
        The saved files it and the first queries read are asked of the disk first, all at once."""
        parts = [AREAS_PART] if len(self._loaded) < len(self._areas) else []
        index_file.read_ahead(self.store, parts + ([INDEX_PART] if self.index_from_file else []))
        self._load_areas()
        self.index.bm25.prepare()
        self.index.lsa_vectors  # items projected into the latent space
        if self.settings.related_words:
            english_lexicon()  # the bundled lexicon (engine/query.py), read once per process
        if self.settings.word_vectors_weight > 0 and self.settings.embedder != "openai":
            self.index.word_vectors  # the items in the bundled word vectors' space (engine/wordvec.py)
        if self.index.lists_due():  # a store grown past LISTS_ABOVE by another process (engine/vectors.py):
            self._make_lists_aside()  # not here: a query waits for the warm-up, not for the lists
        for area in self._loaded_areas():
            area.warm_up()

    def _load_areas(self) -> None:
        """Every write calls this before its transaction opens: an area loaded inside one would
        read the half-written rows and then be told of them again."""
        self.areas

    # -- dense --------------------------------------------------------------------------------

    @property
    def external_embedder(self) -> OpenAIEmbedder | None:
        s = self.settings
        if self._external is None and s.embed_base_url and s.embed_model:
            self._external = OpenAIEmbedder(
                s.embed_base_url, s.embed_model, s.embed_api_key, timeout=s.request_timeout, max_retries=s.max_retries,
                batch_size=s.embed_batch_size,
                cache_get=self.store.cached_embeddings, cache_put=self._cache_put, stored_dim=self._stored_dim,
            )
        return self._external

    def _stored_dim(self) -> int:
        """The length of the endpoint's vectors the index holds (0: none yet)."""
        stored = self.index.vectors.get(self._external.signature) if self._external else None
        return stored.dim if stored else 0

    def _cache_put(self, signature: str, rows: list[tuple[str, np.ndarray]]) -> None:
        with self.store.transaction():
            self.store.cache_embeddings(signature, rows)

    def _stored_embedder(self) -> HashEmbedder | OpenAIEmbedder | None:
        """The embedder whose vectors are computed at ingest and stored per item."""
        kind = self.settings.embedder
        if kind == "hash":
            return self.index.hash
        if kind == "openai":
            return self.external_embedder
        return None

    def dense_query(self, q: Query) -> tuple[np.ndarray | None, VectorIndex | None]:
        """The query vector and the matrix it is compared with, under the configured embedder."""
        if self.settings.embedder == "lsa":
            for area in self.areas:  # an area may replace the latent space (the ranker's distilled one)
                space = area.dense_space(q)
                if space is not None:
                    return space
            return self.index.lsa_query(q.term_ids, q.term_weights), self.index.lsa_vectors
        embedder = self._stored_embedder()
        if embedder is None:
            return None, None
        return embedder.embed_query(q.text), self.index.vectors.get(embedder.signature)

    # -- ingest -------------------------------------------------------------------------------

    def parse(self, paths: Iterable[str | Path]) -> FilesRead:
        """Read files without writing anything: the sources, the files left out, the errors."""
        found = discover(paths)
        parsed: list[ParsedSource] = []
        errors: list[IngestError] = []
        for f in found.files:
            try:
                parsed.extend(read_path(f.path, self.settings.chunk_tokens, root=f.root,
                                        max_text_bytes=self.settings.max_text_bytes))
            except IngestError as exc:
                errors.append(exc)
        return FilesRead(parsed, found.skipped, errors, found.links)

    def ingest(self, paths: Iterable[str | Path] | str | Path, *, strict: bool = True, progress: Progress | None = None,
               cancelled: Callable[[], bool] | None = None, defer: bool | None = None,
               catch_up: bool = True) -> IngestReport:
        """Ingest files and folders. With ``strict`` any unreadable file aborts before a write
        (``defer``, ``catch_up``: see :meth:`ingest_parsed`)."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        try:
            parsed, skipped, errors, links = self.parse(paths)
        except IngestError as exc:
            raise IngestFailed([exc]) from None
        if errors and strict:
            raise IngestFailed(errors)
        report = self.ingest_parsed(parsed, progress=progress, cancelled=cancelled, defer=defer, catch_up=catch_up,
                                    let_go=True)
        report.skipped = [str(p) for p in skipped]
        report.errors = [str(e) for e in errors]
        report.links = [str(p) for p in links]
        return report

    def add_note(self, text: str, name: str | None = None, title: str = "", tags: list[str] | None = None) -> Item:
        parsed = note(text, name or f"note:{time.time_ns()}", title, tags, self.settings.max_text_bytes)
        self.ingest_parsed([parsed])
        return parsed.items[0]

    @_one_writer
    def ingest_parsed(self, parsed: Sequence[ParsedSource], *, progress: Progress | None = None,
                      cancelled: Callable[[], bool] | None = None, defer: bool | None = None,
                      catch_up: bool = True, before_replacing: Callable[[Source], None] | None = None,
                      let_go: bool = False) -> IngestReport:
        """Store parsed sources, one transaction each; unchanged sources are skipped.

        With ``defer`` (by default: when the sources hold at least ``defer_above`` items) every
        item is stored and indexed first, and the deferred areas' work (extraction, episodes,
        topic assignment) waits in the store's durable queue: recall works as soon as the core
        has them (another thread's, another process's), on the core's strategies and on what
        the areas already hold. :meth:`catch_up` then works through the queue (here, unless
        ``catch_up`` is false); an interrupted ingest is resumed by ingesting the same files
        again (stored sources are skipped) or by :meth:`catch_up`.

        ``before_replacing`` is called with a stored source that a parsed one of the same name
        would replace, under the write lock (so no other writer comes in between); it raises to
        refuse, and that source's transaction stores nothing (an MCP agent may not replace what a
        person stored: app/mcp_server.py).

        ``let_go``: ``parsed`` is a list that no one reads after (:meth:`ingest` parses its own):
        each source is taken out of it as it is stored, so that its parsed items (about 1 KB each)
        are not held through the models' fits, the inverted lists and the catch-up."""
        started = time.perf_counter()
        hold_to_limits(parsed)  # (before any write: a refusal leaves the store as it was)
        self.refresh()  # build on what other processes committed, not on a stale index
        self._load_areas()
        report = IngestReport()
        total = sum(len(p.items) for p in parsed)
        if defer is None:
            defer = 0 < self.settings.defer_above <= total
        defer = defer and any(area.deferred for area in self.areas)  # (the core alone has nothing to defer)
        with _bulk_work():
            refitted = self._store_sources(_taken_from(parsed) if let_go else parsed, total, defer, report, progress,
                                           cancelled, before_replacing)
        if self.index.needs_lsa_fit() or (refitted and self.index.lsa_fitted_on < self.index.n_items):
            self._refit_lsa()  # the model an ingest leaves is fitted on everything it ingested
        self._calibrate_dense()
        self.index.make_lists()  # (for the recalls during the catch-up too: engine/vectors.py)
        if catch_up and (defer or self.index.pending.any()) and not (cancelled and cancelled()):
            self.catch_up(progress=progress, cancelled=cancelled)  # (and what an interrupted ingest left queued)
        self._save_index()
        report.seconds = time.perf_counter() - started
        return report

    def _store_sources(self, sources: Iterable[ParsedSource], total: int, defer: bool, report: IngestReport,
                       progress: Progress | None, cancelled: Callable[[], bool] | None,
                       before_replacing: Callable[[Source], None] | None) -> bool:
        """Store each source, refitting the models midway when due (:meth:`_refit_midway`);
        returns whether they were. No source is held here once this returns (``let_go``)."""
        done, refitted = 0, False
        for p in sources:
            if cancelled and cancelled():
                break
            report.sources.append(self._ingest_source(p, defer, before_replacing))
            done += len(p.items)
            if self._refit_midway(total - done):
                self._refit_lsa()
                refitted = True
            if progress:
                progress(done, total, p.source.name)
        return refitted

    def _refit_midway(self, ahead: int) -> bool:
        """Whether a long ingest refits the latent model now, so that the dense signal stays usable
        as the store grows: when the store has quadrupled since the last fit and at least as many
        items as it holds, and ``MIDWAY_FIT_AHEAD`` at least, are still ahead. A fit costs about
        the same at any size (the vocabulary sets it, and the sample is capped), so a shorter
        ingest pays for one fit, at its end, as before."""
        return ahead >= max(self.index.n_items, MIDWAY_FIT_AHEAD) and self.index.needs_lsa_fit(growth=4.0)

    def _ingest_source(self, p: ParsedSource, defer: bool = False,
                       before_replacing: Callable[[Source], None] | None = None) -> SourceReport:
        store, index = self.store, self.index
        now = [area for area in self.areas if not (defer and area.deferred)]  # the areas that read it now
        count = len(p.items)
        existing = store.source_by_name(p.source.name)
        if existing and _stored_as_it_is(existing, p.source):
            return SourceReport(p.source.name, "unchanged", count, existing.id)
        # Embed before the transaction: no write lock is held across network calls, and vectors
        # already paid for stay in the embedding cache even if this ingest fails.
        embedder = self._stored_embedder()
        vectors = embedder.embed([i.search_text() for i in p.items]) if embedder else None
        prepared = [said for area in now if (said := area.prepare(p))]  # e.g. images
        vocab_before = len(index.vocab)
        removed: list[int] = []
        stored: list[_StoredBlock] = []
        try:
            with store.transaction():  # (which takes in what other processes committed meanwhile)
                index, vocab_before = self.index, len(self.index.vocab)
                existing = store.source_by_name(p.source.name)  # again, under the write lock
                if existing and _stored_as_it_is(existing, p.source):  # another process stored it
                    return SourceReport(p.source.name, "unchanged", count, existing.id)
                if store.vocab_size() > vocab_before:  # another process added terms meanwhile
                    index.merge_vocab(store.vocabulary())
                if existing and before_replacing:
                    before_replacing(existing)
                if existing:
                    removed = store.item_ids_of_source(existing.id)
                    self._cascade(removed, dry_run=False)
                    store.replace_source(existing.id, p.source)
                    source_id = existing.id
                else:
                    source_id = store.insert_source(p.source)
                p.source.id = source_id
                first = store.next_item_id()
                added = list(range(first, first + count))  # (the ids its blocks are given, in order)
                self.activity.record(log_actions.SOURCE_REPLACED if existing else log_actions.SOURCE_ADDED, p.source.name,
                                     count=count, source_id=source_id, added=log_actions.ranges(added),
                                     removed=log_actions.ranges(removed), **({"deferred": True} if defer else {}))
                for block in _blocks(p.items, INGEST_BLOCK if defer else count):
                    done = sum(len(b.columns.ids) for b in stored)
                    block_vectors = vectors[done:done + len(block)] if vectors is not None else None
                    stored.append(self._store_block(source_id, block, defer, block_vectors, embedder,
                                                    keep=len(block) == count))
                    for area in now:
                        area.on_ingest(p.source, block)
        except BaseException:
            for term in [t for t, i in index.vocab.items() if i >= vocab_before]:
                del index.vocab[term]
            raise
        index.remove(removed)
        index.add(*_joined(stored), pending=defer)
        if vectors is not None:
            index.set_vectors(embedder.signature, added, vectors)
        for b in stored:
            self._indexed(now, b)
        return SourceReport(p.source.name, "replaced" if existing else "added", count, source_id,
                            [w for said in prepared for w in said.warnings], [h for said in prepared for h in said.not_fetched])

    def _store_block(self, source_id: int, block: list[Item], defer: bool, vectors: np.ndarray | None,
                     embedder: HashEmbedder | OpenAIEmbedder | None, keep: bool) -> _StoredBlock:
        """Store a block of a source's items (in the source's transaction) with their terms and
        their ``vectors``, and queue them for the deferred areas; returns what the index takes of
        them after the commit, and the items themselves if ``keep`` (the block is the whole
        source, held through the transaction anyway)."""
        store, index = self.store, self.index
        first_new_term = len(index.vocab)
        store.insert_items(source_id, block)
        rows, new_terms = index.analyze_all(item.search_text() for item in block)
        store.insert_terms(new_terms, first_new_term)
        store.insert_item_terms((item.id, *rows.row(n)) for n, item in enumerate(block))
        if vectors is not None and embedder is not None:
            store.insert_vectors(embedder.signature, zip((i.id for i in block), vectors))
        if defer:
            store.defer_items([i.id for i in block])
        return _StoredBlock(ItemColumns.of(block), rows, block if keep else None)

    def _indexed(self, areas: list[Area], block: _StoredBlock) -> None:
        """Tell ``areas`` of a block indexed, its items read back from the store where they were
        not held (a source read again from its file, stored a block at a time)."""
        if not areas:
            return
        items = block.items
        if items is None:
            found = self.store.items(block.columns.ids.tolist())
            items = [found[i] for i in block.columns.ids.tolist() if i in found]
        for area in areas:
            area.on_indexed(items)

    @_one_writer
    def catch_up(self, *, progress: Progress | None = None, cancelled: Callable[[], bool] | None = None,
                 piece_items: int = CATCH_UP_PIECE) -> int:
        """Let the deferred areas (knowledge, topics) read what a deferred ingest stored: the
        oldest queued source first, in pieces of at most ``piece_items`` items (more only where an
        area cannot end a piece sooner: an episode longer than that), each in one transaction.
        Interrupting it (``cancelled``, a crash) loses nothing: what is not read stays queued
        for the next call. Returns how many items were read."""
        self.refresh()
        self._load_areas()
        areas = [area for area in self.areas if area.deferred]
        total, done = self.store.deferred_count(), 0
        with _bulk_work():
            while not (cancelled and cancelled()):
                with self.store.transaction():  # (taken under the write lock: another process may be reading the same queue)
                    found = self._next_piece(areas, piece_items)
                    if found is None:
                        break
                    source, items, piece = found
                    for area in areas:
                        area.on_ingest(source, items, piece)
                    ids = [item.id for item in items]
                    self.store.finish_deferred(ids)
                    self.activity.record(log_actions.AREAS_CAUGHT_UP, source.name, count=len(ids), source_id=source.id,
                                         added=log_actions.ranges(ids))
                self.index.set_pending(ids, False)
                for area in areas:
                    area.on_indexed(items)
                done += len(ids)
                if progress:
                    progress(done, max(total, done), source.name)
        self._save_index()
        return done

    def _next_piece(self, areas: list[Area], limit: int) -> tuple[Source, list[Item], Piece] | None:
        """The queue's next piece: the oldest queued source's next items, ended where every area
        can end it (:meth:`Area.cut`; a larger piece where one cannot), with where it lies."""
        while (queued := self.store.next_deferred(limit)) is not None:
            items = [item for _, item in sorted(self.store.items(queued.ids).items())]
            keep = min((area.cut(items) for area in areas), default=len(items)) if queued.more else len(items)
            if keep:
                return self.store.source(queued.source_id), items[:keep], \
                    Piece(self.store.item_before(queued.source_id, items[0].position), last=keep == len(items) and not queued.more)
            limit *= 2
        return None

    def _refit_lsa(self) -> None:
        """Fit the latent model and the word model (engine/wordvec.py) on the store as it is, and
        keep both in it: every process then places new items with the same models."""
        blob, words = self.index.fit_lsa(), self.index.fit_words()
        with self.store.transaction():
            if blob is not None:
                self.store.set_kv(LSA_KEY, blob)
            self.store.set_kv(WORDS_KEY, words)
            self.activity.record("index.refit", count=self.index.n_items)

    def _calibrate_dense(self) -> None:
        """Measure what an external embedder earns in fusion on this store's own items, when it
        was never measured or the store has grown by half since (engine/calibration.py)."""
        embedder = self._stored_embedder()
        current = self.calibration
        if not isinstance(embedder, OpenAIEmbedder) or not self.settings.dense_calibrate or (
                current is not None and current.signature == embedder.signature
                and self.index.n_items < 1.5 * current.items):
            return
        live = self.index.item_ids[self.index.alive]
        sample = np.random.default_rng(0).permutation(live)[: 4 * CALIBRATION_SAMPLE].tolist()
        found = self.store.items(sample)
        result = calibrate(self.index, [found[i] for i in sample if i in found], embedder.signature,
                           lambda texts: embedder.embed(texts, remember=False))
        if result is not None:
            with self.store.transaction():
                self.store.set_kv(CALIBRATION_KEY, result.to_json())
                self.activity.record("index.calibrated", count=result.items, weight=result.weight)
            self.calibration = result

    def _stored_calibration(self) -> Calibration | None:
        blob = self.store.get_kv(CALIBRATION_KEY)
        return Calibration.from_json(blob) if blob else None

    def dense_weight(self) -> float:
        """The dense signal's weight in hybrid fusion: an external embedder's calibrated weight
        when it has one (and ``dense_calibrate`` is on), else the ``dense_weight`` setting."""
        embedder = self._stored_embedder()
        calibrated = self.calibration
        if (self.settings.dense_calibrate and isinstance(embedder, OpenAIEmbedder) and calibrated is not None
                and calibrated.signature == embedder.signature):
            return calibrated.weight
        return self.settings.dense_weight

    # -- recall -------------------------------------------------------------------------------

    @property
    def default_strategy(self) -> str:
        """The configured default strategy. When nobody chose one and this memory cannot run the
        built-in default (``fused`` needs the ranker: ``extensions=False``), ``hybrid``, the core's
        best; a strategy a person chose is kept, so that a misspelt one is refused at recall."""
        configured = self.settings.default_strategy
        if configured != Settings.default_strategy or configured in self.strategy_names():
            return configured
        return "hybrid"

    def strategies(self) -> dict[str, str]:
        """Every recall strategy this memory can run, with what it does (its docstring's first paragraph)."""
        return {name: describe(strategy) for name, strategy in strategies(self, self._every_area()).items()}

    def strategy_names(self) -> list[str]:
        """The names of :meth:`strategies`, in its order, cheap: an area not used yet is not
        built for them (its plug names them)."""
        names = list(CORE_STRATEGIES)
        for area in self._areas.values():
            names += area.offers(self) if isinstance(area, AreaPlug) else list(area.strategies())
        return names

    def signals(self) -> dict[str, Signal]:
        """Every scorer recall may use, by name: the core's (bm25, dense), then each area's."""
        return signals(self, self._every_area())

    def recall(self, query: str, top_k: int = 10, strategy: str | None = None, mode: str = "pro",
               **options: Unpack[QueryOptions]) -> Recall:
        """Rank items for ``query``. Read-only: the next recall is not affected.

        What this memory wrote it holds at once. What other processes committed is taken in
        first when ``Settings.refresh_interval`` (default 0.5 s) has passed since this memory
        last looked: each change costs its first recall some work, so a reader beside a busy
        writer pays it once per interval, not once per commit (bounded staleness, as a search
        engine's refresh interval; 0 takes in every commit before each recall). The app and the
        MCP server look at every poll or call themselves."""
        if time.monotonic() - self._looked >= self.settings.refresh_interval:
            self.refresh()
        result = recall(self, self.areas, query, top_k=top_k, strategy=strategy or self.default_strategy, mode=mode,
                        **options)
        if self.index.lists_due():
            self._make_lists_aside()
        return result

    def _make_lists_aside(self) -> None:
        """Make the index's inverted lists in a thread of its own, when a recall or a warm-up found
        a vector space grown past their threshold without them (the store grew in another process,
        or this one's recall placed the items that crossed it): recalls scan every row meanwhile,
        and probe the lists once they are made (engine/vectors.py). Not in the warm-up itself: the
        app's queries wait for its warm-up (after following another process too), and the lists
        take seconds of CPU at 200k rows. A daemon that :meth:`close` does not wait for, and that
        stops at its next block once the memory is closed: nobody asks a closed memory, and the
        process may go on (the app opening another store)."""
        if self._listing is not None and self._listing.is_alive():
            return
        self._listing = threading.Thread(target=self.index.make_lists, args=(self._closed.is_set,),
                                         name="mnemoscope-lists", daemon=True)
        self._listing.start()

    def query(self, text: str, top_k: int = 10, strategy: str | None = None, mode: str = "pro",
              **options: Unpack[QueryOptions]) -> tuple[Query, Signals]:
        """What a recall ranks from: the query checked and analysed, and its signals (computed
        lazily). For benchmarks and tools that read the features; :meth:`recall` is the way to ask."""
        areas = self.areas
        q = prepare_query(self, areas, text, top_k, strategy or self.default_strategy, mode, **options)
        return q, Signals(q, signals(self, areas))

    def feedback(self, token: str, used_ids: Sequence[int], ignored_ids: Sequence[int] | None = None) -> FeedbackResult:
        """Tell the ranker which hits of the recall behind ``token`` were used and which were
        ignored (None: those it showed above the lowest used one). Returns the ranker's
        :class:`engine.rank.FeedbackResult`."""
        self.refresh()
        return self.ranker.feedback(token, list(used_ids), None if ignored_ids is None else list(ignored_ids))

    # -- browse -------------------------------------------------------------------------------

    def item(self, item_id: int) -> Item:
        found = self.store.items([item_id]).get(item_id)
        if found is None:
            raise RequestError(f"no item with id {item_id}")
        return found

    def items(self, ids: Iterable[int]) -> dict[int, Item]:
        return self.store.items(ids)

    def sources(self) -> list[Source]:
        return self.store.sources()

    def item_counts_by_source(self) -> dict[int, int]:
        """Items per source, as the store keeps them (a row per source, not a count of every
        item); sources without items are absent."""
        return self.store.item_counts_by_source()

    def source_items(self, source_id: int, offset: int = 0, limit: int | None = None) -> list[Item]:
        """A source's items in order: all, or a page of ``limit`` from the ``offset``-th (a source
        of a year's conversation holds a hundred thousand)."""
        return self.store.items_of_source(source_id, offset, limit)

    def offset_in_source(self, item_id: int) -> int | None:
        """Where an item stands in its source (how many come before it); None for no such item."""
        return self.store.offset_in_source(item_id)

    def counts(self) -> Counts:
        """How many sources, items, facts, topics, ... the store holds; cheap (no area is loaded,
        nor its module imported)."""
        return Counts(**self.store.counts(), **{name: self._counts_of(name) for name in FIGURED_AREAS})

    def stats(self) -> Stats:
        """Counts and every area's figures (drift, λ, ...): loads the areas that are not yet loaded."""
        self._load_areas()
        return Stats(**self.store.counts(), store=str(self.path), terms=len(self.index.vocab),
                     schema_version=self.store.schema_version, embedder=self.settings.embedder,
                     lsa_dim=self.index.lsa.dim if self.index.lsa else 0, dense_weight=self.dense_weight(),
                     dense_calibration=self.calibration,
                     **{name: self._built(name).stats() if name in self._areas else None for name in FIGURED_AREAS})

    def _counts_of(self, name: str) -> AreaFigures | None:
        """An area's counts, read from the store alone (by its plug before its first use); None
        for an area this memory does not have."""
        area = self._areas.get(name)
        if area is None:
            return None
        return area.counts(self) if isinstance(area, AreaPlug) else area.counts()

    # -- delete -------------------------------------------------------------------------------

    def _cascade(self, item_ids: list[int], dry_run: bool) -> dict[str, int]:
        report: dict[str, int] = {"items": len(item_ids)}
        for area in self.areas:
            report.update(area.on_delete(item_ids, dry_run))
        return report

    @_one_writer
    def delete_item(self, item_id: int, dry_run: bool = False,
                    before_deleting: Callable[[Source | None], None] | None = None) -> dict[str, int]:
        """Delete one item; facts and episodes that lose their last provenance go with it.

        ``before_deleting`` is called with the item's source, in a dry run too, and again under
        the write lock (so that no other writer comes in between); it raises to refuse, and
        nothing is deleted (an MCP agent may not delete what a person stored: app/mcp_server.py)."""
        source = self.store.source(self.item(item_id).source_id)
        if before_deleting:
            before_deleting(source)
        self._load_areas()
        if dry_run:
            return self._cascade([item_id], dry_run=True)
        with self.store.transaction():  # checked again with the write lock held: another process may have deleted it
            source = self.store.source(self.item(item_id).source_id)
            if before_deleting:
                before_deleting(source)
            report = self._cascade([item_id], dry_run=False)
            self.store.delete_item_row(item_id)
            self.activity.record(log_actions.ITEM_DELETED, f"item {item_id} of {source.name if source else '?'}", count=1,
                                 source_id=source.id if source else None, removed=[[item_id, item_id]])
        self.index.remove([item_id])
        return report

    @_one_writer
    def delete_source(self, source_id: int, dry_run: bool = False,
                      before_deleting: Callable[[Source], None] | None = None) -> dict[str, int]:
        """Delete a source and its items (see :meth:`delete_item`, ``before_deleting`` too)."""
        source, ids = self._source_and_items(source_id)
        if before_deleting:
            before_deleting(source)
        self._load_areas()
        if dry_run:
            return {"sources": 1, **self._cascade(ids, dry_run=True)}
        with self.store.transaction():  # checked again with the write lock held: another process may have changed it
            source, ids = self._source_and_items(source_id)
            if before_deleting:
                before_deleting(source)
            report = self._cascade(ids, dry_run=False)
            self.store.delete_source_row(source_id)
            self.activity.record(log_actions.SOURCE_DELETED, source.name, count=len(ids), source_id=source_id,
                                 removed=log_actions.ranges(ids))
        self.index.remove(ids)
        return {"sources": 1, **report}

    def _source_and_items(self, source_id: int) -> tuple[Source, list[int]]:
        source = self.store.source(source_id)
        if source is None:
            raise RequestError(f"no source with id {source_id}")
        return source, self.store.item_ids_of_source(source_id)

    @_one_writer
    def clear(self) -> None:
        """Delete every source (and with them every item and derived row)."""
        self._load_areas()
        with self.store.transaction():
            for source in self.store.sources():
                self._cascade(self.store.item_ids_of_source(source.id), dry_run=False)
                self.store.delete_source_row(source.id)
            self.store.clear_item_terms()
            self.store.delete_vectors()
            self.store.set_kv(LSA_KEY, None)
            self.store.set_kv(WORDS_KEY, None)
            self.store.set_kv(CALIBRATION_KEY, None)
            self.activity.record("store.cleared")
        self._load()

    # -- maintenance --------------------------------------------------------------------------

    @_one_writer
    def reindex(self, progress: Progress | None = None) -> dict[str, float]:
        """Rebuild every derived row (terms, vectors, latent model) from the records; the items and
        terms it indexed and the seconds it took."""
        started = time.perf_counter()
        self._load_areas()
        index = self._new_index()
        with self.store.transaction():
            self.store.clear_item_terms()
            for signature in self.store.vector_signatures():
                if signature.startswith(TEXT_VECTORS):  # the others (an image model's) need no text
                    self.store.delete_vectors(signature)
            items = list(self.store.iter_items())

            def texts() -> Iterator[str]:
                for n, item in enumerate(items):
                    if progress and n % 500 == 0:
                        progress(n, len(items), "terms")
                    yield item.search_text()

            rows, new_terms = index.analyze_all(texts())
            self.store.insert_terms(new_terms, 0)
            self.store.insert_item_terms((item.id, *rows.row(n)) for n, item in enumerate(items))
            embedder = self._stored_embedder()
            if embedder is not None and items:
                vectors = embedder.embed([i.search_text() for i in items])
                self.store.insert_vectors(embedder.signature, zip((i.id for i in items), vectors))
            index.add(ItemColumns.of(items), rows)
            self.store.set_kv(LSA_KEY, index.fit_lsa())
            self.store.set_kv(WORDS_KEY, index.fit_words())
            self.activity.record("store.reindexed", count=len(items))
        self._load()
        return {"items": len(items), "terms": len(self.index.vocab), "seconds": time.perf_counter() - started}

    # -- export / import (engine/transfer.py) ------------------------------------------------

    def export(self, path: str | Path) -> int:
        """Write every record as JSON lines; returns the line count (:func:`engine.transfer.export`)."""
        return transfer.export(self, path)

    @_one_writer
    def import_(self, path: str | Path) -> IngestReport:
        """Read an export and store all of it or none of it (:func:`engine.transfer.import_`)."""
        return transfer.import_(self, path)
