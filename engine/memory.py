"""``Memory``: the one facade the app, the CLI and Python users call.

It owns the store (records, on disk) and the index (search state, in memory, derived from the
store). Each write is one transaction per source (an import, one for the whole file); the
in-memory index changes only after the commit, so a failed write leaves both exactly as they were.

Areas that grow the engine (knowledge, topics, ranking) plug in as *extensions*: objects that
build their state from the store, take part in the ingest and delete transactions, and answer
their own browsing and curation calls (``mem.knowledge``, ``mem.topics``, ``mem.ranker``).
"""

from __future__ import annotations

import functools
import gc
import logging
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence

import numpy as np

from . import activity as log_actions
from .activity import Activity, Changes
from .config import Settings
from .extensions import extension_factories
from .dense import HashEmbedder, OpenAIEmbedder, VectorIndex
from .images import SIGNATURE_PREFIX as IMAGE_SIGNATURE_PREFIX
from .index import LSA_KEY, Index
from .ingest import IngestError, discover, note, read_path
from .lexical import BM25Params
from .recall import SIGNALS, STRATEGIES, Query, Recall, recall, signal_available
from .records import Item, ParsedSource, Source
from .store import Store

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]  # (done, total, what)


class RequestError(RuntimeError):
    """A request the engine refuses (unknown id, bad import file); str() is one line."""


class Extension(Protocol):
    """An area of the engine living beside the core (knowledge, topics, ranker)."""

    name: str

    def load(self) -> None:
        """Build in-memory state from the store (at open and after reindex or import)."""

    def on_ingest(self, source: Source, items: list[Item]) -> None:
        """Inside the ingest transaction: derive and store this area's rows for new items."""

    def on_indexed(self, items: list[Item]) -> None:
        """After the commit: update in-memory state (slots are assigned by now)."""

    def on_delete(self, item_ids: list[int], dry_run: bool) -> dict[str, Any]:
        """Inside the delete transaction (or a dry run): cascade, and report what changes."""

    def stats(self) -> dict[str, Any]: ...

    def counts(self) -> dict[str, Any]:
        """A few figures read from the store alone: callable before :meth:`load`."""


@dataclass
class SourceReport:
    name: str
    status: str  # added | replaced | unchanged
    items: int
    source_id: int
    warnings: list[str] = field(default_factory=list)  # stored, but something derived is missing (e.g. an image vector)


@dataclass
class IngestReport:
    sources: list[SourceReport] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def items(self) -> int:
        return sum(s.items for s in self.sources if s.status != "unchanged")

    @property
    def warnings(self) -> list[str]:
        return [w for s in self.sources for w in s.warnings]

    def summary(self) -> str:
        counts = {k: sum(1 for s in self.sources if s.status == k) for k in ("added", "replaced", "unchanged")}
        parts = [f"{counts['added']} added", f"{counts['replaced']} replaced", f"{counts['unchanged']} unchanged"]
        text = f"{len(self.sources)} source(s): {', '.join(parts)}; {self.items} item(s) indexed in {self.seconds:.2f}s"
        if self.skipped:
            text += f"; {len(self.skipped)} file(s) skipped (unsupported type)"
        if self.errors:
            text += f"; {len(self.errors)} error(s)"
        if self.warnings:
            text += f"; {len(self.warnings)} warning(s)"
        return text


class IngestFailed(ValueError):
    """One or more files could not be read; nothing was written."""

    def __init__(self, errors: list[IngestError]) -> None:
        self.errors = errors
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(f"{errors[0]}{more}")


def _one_writer(method: Callable[..., Any]) -> Callable[..., Any]:
    """A write that may span several transactions (an ingest of many sources, an import) runs
    alone: another thread's write waits for it instead of interleaving with it."""
    @functools.wraps(method)
    def exclusive(self: "Memory", *args: Any, **kwargs: Any) -> Any:
        with self._write_lock:
            return method(self, *args, **kwargs)

    return exclusive


class Memory:
    """An agent memory in one SQLite file."""

    def __init__(self, path: str | Path | None = None, settings: Settings | None = None, *, extensions: bool = True,
                 client: str = "python", **overrides: Any) -> None:
        """Open (or create) a store. ``extensions=False`` opens the core alone (lexical and dense
        recall, no knowledge, topics or ranker), for benchmarks of the core and scripts.

        Opening loads the core index only; each area builds its in-memory state on first use
        (``mem.knowledge``, a recall, an ingest) or in :meth:`warm_up`, so a store opens, and its
        :meth:`counts` show, before the graph, the topic tree and the ranker are read.

        ``client`` names who writes through this memory in the store's activity log: ``cli``,
        ``app``, ``python`` or ``mcp:<client name>`` (:mod:`engine.activity`)."""
        self.settings = settings or Settings.load(**overrides)
        if path is not None:
            self.settings.store = str(path)
        self.path = self.settings.store_path
        self.store = Store(self.path)
        self.activity = Activity(self.store, client)
        self._areas: dict[str, Extension] = {}  # by name, in load order; loaded ones are also attributes
        self._area_lock = threading.RLock()  # one thread loads an area while others wait for it
        self._write_lock = threading.RLock()  # see _one_writer
        self._cursor = 0  # the last activity-log line this memory's state includes
        self._looked = 0.0  # when refresh last looked at the log (time.monotonic)
        self._external: OpenAIEmbedder | None = None
        self._load()
        for factory in extension_factories() if extensions else []:
            self.add_extension(factory(self), lazy=True)

    # -- lifecycle ----------------------------------------------------------------------------

    def _new_index(self) -> Index:
        s = self.settings
        return Index(BM25Params(k1=s.bm25_k1, b=s.bm25_b), lsa_dim=s.lsa_dim, hash_dim=s.hash_dim, char_ngrams=s.char_ngrams)

    def _load(self) -> None:
        """(Re)build the in-memory index from the store, as of one moment (see :meth:`refresh`)."""
        with self.store.snapshot():
            self._cursor = self.activity.last_id()
            self._load_index()

    def _load_index(self) -> None:
        index = self._new_index()
        index.vocab = self.store.vocabulary()
        ids, source_ids, positions, timestamps, _ = list(zip(*self.store.item_index_rows())) or [()] * 5
        terms = {iid: (t, c) for iid, t, c in self.store.all_item_terms()}
        empty = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
        index.add_rows(ids, source_ids, positions, timestamps, [terms.get(i, empty) for i in ids])
        for signature in self.store.vector_signatures():
            ids, matrix = self.store.vectors(signature)
            index.set_vectors(signature, ids.tolist(), matrix)
        blob = self.store.get_kv(LSA_KEY)
        if blob:
            index.load_lsa(blob)
        self.index = index
        for ext in self._loaded_areas():
            ext.load()

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
            with self.store.snapshot():
                changes, cursor = self.activity.changes(self._cursor)
                if changes.everything:
                    self._load()
                elif changes:
                    self._apply(changes)
                self._cursor = cursor
        finally:
            self._write_lock.release()
        return bool(changes)

    def _apply(self, changes: Changes) -> None:
        """Another process's commits, in the index and in every loaded area."""
        store, index = self.store, self.index
        index.remove(changes.removed)
        fresh = [i for i in changes.added if i not in index.slot_of]
        items = [it for _, it in sorted(store.items(fresh).items())]
        if items:
            if store.vocab_size() > len(index.vocab):
                index.merge_vocab(store.terms_from(len(index.vocab)))
            terms = store.item_terms([i.id for i in items])
            empty = (np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.float32))
            index.add(items, [terms.get(i.id, empty) for i in items])
            for signature in store.vector_signatures():
                ids, matrix = store.vectors(signature, [i.id for i in items])
                if len(ids):
                    index.set_vectors(signature, ids.tolist(), matrix)
        if "lsa" in changes.reload and (blob := store.get_kv(LSA_KEY)):
            index.load_lsa(blob)
        for ext in self._loaded_areas():
            if ext.name in changes.reload:
                ext.load()
            elif items or changes.removed:
                follow = getattr(ext, "on_changed_elsewhere", None)
                follow(items, changes.removed) if follow else ext.load()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_extension(self, ext: Extension, *, lazy: bool = False) -> None:
        """Plug an area in as ``mem.<name>``; loaded now, or on first use when ``lazy``."""
        self._areas[ext.name] = ext
        if not lazy:
            self._area(ext.name)

    def __getattr__(self, name: str) -> Any:
        """``mem.knowledge`` and the other areas: an area not yet loaded is loaded here, once."""
        areas = self.__dict__.get("_areas")
        if areas is None or name not in areas:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return self._area(name)

    def _area(self, name: str) -> Extension:
        with self._area_lock:
            ext = self._areas[name]
            if name not in self.__dict__:
                self.refresh()  # the area reads the store as it is now: the core must not lag behind it
                with self.store.snapshot():
                    if self.activity.last_id() != self._cursor:  # a commit came in between (or a write is running)
                        self._cursor = -1  # the next refresh reads everything again, the area included
                    ext.load()
                setattr(self, name, ext)  # from now on a plain attribute: no lock, no __getattr__
            return ext

    def _loaded_areas(self) -> list[Extension]:
        return [ext for name, ext in self._areas.items() if name in self.__dict__]

    @property
    def extensions(self) -> list[Extension]:
        """Every area, loaded (the ingest and delete hooks need their state), in load order."""
        return [self._area(name) for name in self._areas]

    def has_area(self, name: str) -> bool:
        """Whether the engine has an area, without loading it."""
        return name in self._areas

    def warm_up(self) -> None:
        """Load every area and build the search matrices now, so that the first query need not
        (the app calls this behind its usable screen)."""
        self._load_areas()
        self.index.bm25.prepare()
        self.index.lsa_vectors  # items projected into the latent space

    def _load_areas(self) -> None:
        """Every write calls this before its transaction opens: an area loaded inside one would
        read the half-written rows and then be told of them again."""
        self.extensions

    # -- dense --------------------------------------------------------------------------------

    @property
    def external_embedder(self) -> OpenAIEmbedder | None:
        s = self.settings
        if self._external is None and s.embed_base_url and s.embed_model:
            self._external = OpenAIEmbedder(
                s.embed_base_url, s.embed_model, s.embed_api_key, timeout=s.request_timeout, max_retries=s.max_retries,
                batch_size=s.embed_batch_size,
                cache_get=self.store.cached_embeddings, cache_put=self._cache_put,
            )
        return self._external

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
            distilled = getattr(self, "ranker", None) and self.ranker.distilled  # fitted to teacher vectors
            if distilled:
                return distilled.query(self, q.term_ids, q.term_weights), distilled.vectors
            return self.index.lsa_query(q.term_ids, q.term_weights), self.index.lsa_vectors
        embedder = self._stored_embedder()
        if embedder is None:
            return None, None
        return embedder.embed_query(q.text), self.index.vectors.get(embedder.signature)

    # -- ingest -------------------------------------------------------------------------------

    def parse(self, paths: Iterable[str | Path]) -> tuple[list[ParsedSource], list[Path], list[IngestError]]:
        """Read files without writing anything: (sources, skipped files, errors)."""
        files, skipped = discover(paths)
        parsed: list[ParsedSource] = []
        errors: list[IngestError] = []
        for f in files:
            try:
                parsed.extend(read_path(f, self.settings.chunk_tokens))
            except IngestError as exc:
                errors.append(exc)
        return parsed, skipped, errors

    def ingest(self, paths: Iterable[str | Path] | str | Path, *, strict: bool = True, progress: Progress | None = None,
               cancelled: Callable[[], bool] | None = None) -> IngestReport:
        """Ingest files and folders. With ``strict`` any unreadable file aborts before a write."""
        if isinstance(paths, (str, Path)):
            paths = [paths]
        try:
            parsed, skipped, errors = self.parse(paths)
        except IngestError as exc:
            raise IngestFailed([exc]) from None
        if errors and strict:
            raise IngestFailed(errors)
        report = self.ingest_parsed(parsed, progress=progress, cancelled=cancelled)
        report.skipped = [str(p) for p in skipped]
        report.errors = [str(e) for e in errors]
        return report

    def add_note(self, text: str, name: str | None = None, title: str = "", tags: list[str] | None = None) -> Item:
        parsed = note(text, name or f"note:{time.time_ns()}", title, tags)
        self.ingest_parsed([parsed])
        return parsed.items[0]

    @_one_writer
    def ingest_parsed(self, parsed: Sequence[ParsedSource], *, progress: Progress | None = None,
                      cancelled: Callable[[], bool] | None = None) -> IngestReport:
        """Store parsed sources, one transaction each; unchanged sources are skipped."""
        started = time.perf_counter()
        self.refresh()  # build on what other processes committed, not on a stale index
        self._load_areas()
        report = IngestReport()
        total = sum(len(p.items) for p in parsed)
        done = 0
        gc_was_enabled = gc.isenabled()
        gc.disable()  # per-token allocations make the collector a third of bulk-ingest time
        try:
            for p in parsed:
                if cancelled and cancelled():
                    break
                report.sources.append(self._ingest_source(p))
                done += len(p.items)
                if progress:
                    progress(done, total, p.source.name)
        finally:
            if gc_was_enabled:
                gc.enable()
        if self.index.needs_lsa_fit():
            self._refit_lsa()
        report.seconds = time.perf_counter() - started
        return report

    def _ingest_source(self, p: ParsedSource) -> SourceReport:
        store, index = self.store, self.index
        existing = store.source_by_name(p.source.name)
        if existing and existing.content_hash == p.source.content_hash:
            return SourceReport(p.source.name, "unchanged", len(p.items), existing.id)
        # Embed before the transaction: no write lock is held across network calls, and vectors
        # already paid for stay in the embedding cache even if this ingest fails.
        embedder = self._stored_embedder()
        vectors = embedder.embed([i.search_text() for i in p.items]) if embedder else None
        warnings = [w for ext in self.extensions if hasattr(ext, "prepare") for w in ext.prepare(p)]  # e.g. images
        vocab_before = len(index.vocab)
        removed: list[int] = []
        try:
            with store.transaction():
                if store.vocab_size() > vocab_before:  # another process added terms meanwhile
                    index.merge_vocab(store.vocabulary())
                first_new_term = len(index.vocab)
                if existing:
                    removed = store.item_ids_of_source(existing.id)
                    self._cascade(removed, dry_run=False)
                    store.replace_source(existing.id, p.source)
                    source_id = existing.id
                else:
                    source_id = store.insert_source(p.source)
                p.source.id = source_id
                store.insert_items(source_id, p.items)
                rows, new_terms = [], []
                for item in p.items:
                    tids, counts, fresh = index.analyze(item.search_text())
                    rows.append((tids, counts))
                    new_terms.extend(fresh)
                store.insert_terms(new_terms, first_new_term)
                store.insert_item_terms((item.id, t, c) for item, (t, c) in zip(p.items, rows))
                if vectors is not None:
                    store.insert_vectors(embedder.signature, zip((i.id for i in p.items), vectors))
                self.activity.record(log_actions.SOURCE_REPLACED if existing else log_actions.SOURCE_ADDED, p.source.name,
                                     count=len(p.items), source_id=source_id, added=log_actions.ranges(i.id for i in p.items),
                                     removed=log_actions.ranges(removed))
                for ext in self.extensions:
                    ext.on_ingest(p.source, p.items)
        except BaseException:
            for term in [t for t, i in index.vocab.items() if i >= vocab_before]:
                del index.vocab[term]
            raise
        index.remove(removed)
        index.add(p.items, rows)
        if vectors is not None:
            index.set_vectors(embedder.signature, [i.id for i in p.items], vectors)
        for ext in self.extensions:
            ext.on_indexed(p.items)
        return SourceReport(p.source.name, "replaced" if existing else "added", len(p.items), source_id, warnings)

    def _refit_lsa(self) -> None:
        blob = self.index.fit_lsa()
        if blob is not None:
            with self.store.transaction():
                self.store.set_kv(LSA_KEY, blob)
                self.activity.record("index.refit", count=self.index.n_items)

    # -- recall -------------------------------------------------------------------------------

    @property
    def default_strategy(self) -> str:
        return self.settings.default_strategy

    def strategies(self) -> dict[str, str]:
        """Every recall strategy this engine offers, with what it does (its docstring's first paragraph)."""
        return {name: " ".join((fn.__doc__ or "").strip().split("\n\n")[0].split()) for name, fn in STRATEGIES.items()
                if name not in SIGNALS or signal_available(self, name)}

    def recall(self, query: str, top_k: int = 10, strategy: str | None = None, mode: str = "pro", **options: Any) -> Recall:
        """Rank items for ``query``. Read-only: the next recall is not affected.

        What other processes commit is taken in at most every ``Settings.refresh_interval``
        seconds (each change costs its first recall some work; a reader following a busy writer
        pays it once per interval, not once per commit); call :meth:`refresh` to look at once."""
        if time.monotonic() - self._looked >= self.settings.refresh_interval:
            self.refresh()
        return recall(self, query, top_k=top_k, strategy=strategy or self.default_strategy, mode=mode, **options)

    def feedback(self, token: str, used_ids: Sequence[int], ignored_ids: Sequence[int] = ()) -> Any:
        """Tell the ranker which hits of the recall behind ``token`` were used; every other hit
        it showed counts as ignored. Returns the ranker's :class:`engine.rank.FeedbackResult`."""
        self.refresh()
        return self.ranker.feedback(token, list(used_ids), list(ignored_ids))

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

    def source_items(self, source_id: int) -> list[Item]:
        return self.store.items_of_source(source_id)

    def counts(self) -> dict[str, Any]:
        """How many sources, items, facts, topics, ... the store holds; cheap (no area is loaded)."""
        out: dict[str, Any] = dict(self.store.counts())
        for ext in self._areas.values():
            out.update(ext.counts())
        return out

    def stats(self) -> dict[str, Any]:
        """Counts and every area's figures (drift, λ, ...): loads the areas that are not yet loaded."""
        out: dict[str, Any] = {"store": str(self.path), **self.store.counts(), "terms": len(self.index.vocab),
                               "schema_version": self.store.schema_version, "embedder": self.settings.embedder,
                               "lsa_dim": self.index.lsa.dim if self.index.lsa else 0}
        for ext in self.extensions:
            out.update(ext.stats())
        return out

    # -- delete -------------------------------------------------------------------------------

    def _cascade(self, item_ids: list[int], dry_run: bool) -> dict[str, Any]:
        report: dict[str, Any] = {"items": len(item_ids)}
        for ext in self.extensions:
            report.update(ext.on_delete(item_ids, dry_run))
        return report

    @_one_writer
    def delete_item(self, item_id: int, dry_run: bool = False) -> dict[str, Any]:
        """Delete one item; facts and episodes that lose their last provenance go with it."""
        self.item(item_id)
        self._load_areas()
        if dry_run:
            return self._cascade([item_id], dry_run=True)
        source = self.store.source(self.item(item_id).source_id)
        with self.store.transaction():
            report = self._cascade([item_id], dry_run=False)
            self.store.delete_item_row(item_id)
            self.activity.record(log_actions.ITEM_DELETED, f"item {item_id} of {source.name if source else '?'}", count=1,
                                 source_id=source.id if source else None, removed=[[item_id, item_id]])
        self.index.remove([item_id])
        return report

    @_one_writer
    def delete_source(self, source_id: int, dry_run: bool = False) -> dict[str, Any]:
        source = self.store.source(source_id)
        if source is None:
            raise RequestError(f"no source with id {source_id}")
        ids = self.store.item_ids_of_source(source_id)
        self._load_areas()
        if dry_run:
            return {"sources": 1, **self._cascade(ids, dry_run=True)}
        with self.store.transaction():
            report = self._cascade(ids, dry_run=False)
            self.store.delete_source_row(source_id)
            self.activity.record(log_actions.SOURCE_DELETED, source.name, count=len(ids), source_id=source_id,
                                 removed=log_actions.ranges(ids))
        self.index.remove(ids)
        return {"sources": 1, **report}

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
            self.activity.record("store.cleared")
        self._load()

    # -- maintenance --------------------------------------------------------------------------

    @_one_writer
    def reindex(self, progress: Progress | None = None) -> dict[str, Any]:
        """Rebuild every derived row (terms, vectors, latent model) from the records."""
        started = time.perf_counter()
        self._load_areas()
        index = self._new_index()
        with self.store.transaction():
            self.store.clear_item_terms()
            self.store.delete_vectors(keep_prefix=IMAGE_SIGNATURE_PREFIX)  # image vectors need no text; a re-download may fail
            items = list(self.store.iter_items())
            rows, new_terms = [], []
            for n, item in enumerate(items):
                tids, counts, fresh = index.analyze(item.search_text())
                rows.append((tids, counts))
                new_terms.extend(fresh)
                if progress and n % 500 == 0:
                    progress(n, len(items), "terms")
            self.store.insert_terms(new_terms, 0)
            self.store.insert_item_terms((item.id, t, c) for item, (t, c) in zip(items, rows))
            embedder = self._stored_embedder()
            if embedder is not None and items:
                vectors = embedder.embed([i.search_text() for i in items])
                self.store.insert_vectors(embedder.signature, zip((i.id for i in items), vectors))
            index.add(items, rows)
            blob = index.fit_lsa()
            self.store.set_kv(LSA_KEY, blob)
            self.activity.record("store.reindexed", count=len(items))
        self._load()
        return {"items": len(items), "terms": len(self.index.vocab), "seconds": time.perf_counter() - started}

    # -- export / import (engine/transfer.py) ------------------------------------------------

    def export(self, path: str | Path) -> int:
        """Write every record as JSON lines; returns the line count (:func:`engine.transfer.export`)."""
        from .transfer import export

        return export(self, path)

    @_one_writer
    def import_(self, path: str | Path) -> IngestReport:
        """Read an export and store all of it or none of it (:func:`engine.transfer.import_`)."""
        from .transfer import import_

        return import_(self, path)
