"""Shared photos: each turn's image is read, embedded by a multimodal model and searched by text.

Off unless ``image_embed_model`` is set (offline nothing here runs: no read, no request). A turn
that shares a photo always keeps the reference (``meta.image_url``) and its caption, which the
lexical and dense indexes already see; this module adds a vector of the image itself, so a photo
can be found by what it shows even when its caption misses it.

**Wire format.** The OpenAI-compatible ``POST {base_url}/embeddings`` with Jina-style input items,
one image per item, always inline as a data URL::

    {"model": "jina-clip-v2", "input": [{"image": "data:image/jpeg;base64,/9j/4AAQ..."}, ...]}

and, for a query, the plain text through the same model: ``{"model": ..., "input": ["red kayak"]}``.
The model must put texts and images in one space (CLIP-style: jina-clip-v2, jina-embeddings-v4,
or a gateway that exposes such a model this way). The image is read or downloaded here, never by
the endpoint, so the cache key is the hash of the image's bytes and the endpoint needs no access
to the image's host.

**References** are read by :mod:`engine.image_refs`: a ``data:`` URL, an ``http(s)://`` URL of a
host the person listed in ``image_allow_hosts`` (downloaded in parallel with the request timeout;
only 429, 5xx and dropped connections are retried), or a file inside the folder the person
ingested; only image bytes (by their magic numbers) of at most ``image_refs.MAX_IMAGE_BYTES`` are
sent. A URL of a host not listed is not contacted: the turn keeps it as a reference, and the
ingest counts such URLs in one line naming the setting (not a failure: nothing was asked for). A
reference refused for another reason is a failure like any other: a warning naming
``file:line``, the turn kept with its caption.

**Failures lose nothing.** Images are read and embedded before the ingest transaction (no write
lock across network calls). An unreadable image or a failing endpoint leaves the turn stored with
its caption and no image vector; the ingest report carries one line per source saying why, and
:meth:`ImagesArea.resume` (``mnemoscope images --resume``) embeds what is missing later.
What is missing is derived from the store (an image reference without a vector of the model's
signature), so there is no queue to get out of step. At query time the endpoint gets one short
try (``QUERY_TIMEOUT``); if it fails, recall goes on without the image signal.
"""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from .area import Area
from .config import ConfigError
from .dense import EmbeddingUnavailable, OpenAIEmbedder
from .errors import FileRefused
from .files import read_regular
from .hosts import not_fetched_line
from .image_refs import Fetching, ImageData, ImageUnreadable, NotFetched, Place, read_image
from .conversations import line_of
from .ingest import MAX_FILE_BYTES
from .pipeline import Query, Signal, Signals, Strategy
from .recall import single_signal
from .records import IMAGE_SIGNATURE_PREFIX, ImageCounts, Item, ParsedSource, Prepared, Source

if TYPE_CHECKING:
    from .area import Engine
    from .config import Settings

log = logging.getLogger(__name__)

DOWNLOAD_THREADS = 8
QUERY_TIMEOUT = 5.0  # seconds a recall waits for the query's image-model embedding (no retry)
RESUME_HINT = "kept with its caption; `mnemoscope images --resume` embeds it later"

# -- results ----------------------------------------------------------------------------------


@dataclass
class ImageFailure:
    """One image that was not embedded, and where the turn that shares it came from."""

    item_key: str
    ref: str
    where: str  # "file:line", or the source's name
    reason: str

    def line(self) -> str:
        shown = self.ref if len(self.ref) <= 80 else self.ref[:60] + "…"
        return f"{self.where}: image {shown!r} of {self.item_key} not embedded: {self.reason}"


@dataclass
class ImageStatus:
    """What the app and ``mnemoscope images`` show."""

    enabled: bool
    model: str
    with_image: int  # items that share an image
    embedded: int  # of those, how many have a vector of the configured model

    @property
    def pending(self) -> int:
        return self.with_image - self.embedded


@dataclass
class ResumeReport:
    """The outcome of :meth:`ImagesArea.resume`."""

    embedded: int
    failures: list[ImageFailure] = field(default_factory=list)
    not_fetched: list[str] = field(default_factory=list)  # the host of each URL not fetched (not listed)
    seconds: float = 0.0

    def summary(self) -> str:
        text = f"{self.embedded} image(s) embedded in {self.seconds:.2f}s"
        text += f"; {len(self.failures)} still not embedded" if self.failures else ""
        return text + (f"; {not_fetched_line(self.not_fetched)}" if self.not_fetched else "")


@dataclass
class _Embedded:
    """What :meth:`ImagesArea._embed` made of a batch of items."""

    vectors: dict[int, np.ndarray] = field(default_factory=dict)  # by the item's position
    failures: list[ImageFailure] = field(default_factory=list)
    not_fetched: list[str] = field(default_factory=list)  # hosts, one per URL


# -- the area ---------------------------------------------------------------------------------


class ImagesArea(Area):
    """``mem.images``: image vectors at ingest, completion later, and the recall signal."""

    name = "images"

    def __init__(self, mem: Engine) -> None:
        super().__init__(mem)
        self._embedders: dict[bool, OpenAIEmbedder] = {}  # by for_query
        # (the source prepared, its images' vectors by item key), until its items are indexed
        self._prepared: tuple[Source, dict[str, np.ndarray]] | None = None

    @property
    def enabled(self) -> bool:
        return bool(self.mem.settings.image_embed_model)

    @property
    def signature(self) -> str:
        return IMAGE_SIGNATURE_PREFIX + self.mem.settings.image_embed_model

    def embedder(self, for_query: bool = False) -> OpenAIEmbedder:
        """The multimodal model's client, made on first use; its cache is the store's. Ingest waits
        ``request_timeout`` with ``max_retries``; a query waits at most ``QUERY_TIMEOUT`` seconds,
        once, so that recall goes on without the image signal rather than stall on a dead endpoint."""
        if for_query not in self._embedders:
            s = self.mem.settings
            base_url = s.base_url("image_embed")
            if not base_url:
                raise ConfigError("image_embed_model is set but neither image_embed_base_url nor embed_base_url is")
            self._embedders[for_query] = OpenAIEmbedder(
                base_url, s.image_embed_model, s.image_embed_api_key,
                timeout=min(s.request_timeout, QUERY_TIMEOUT) if for_query else s.request_timeout,
                max_retries=0 if for_query else s.max_retries, batch_size=s.image_batch_size,
                cache_get=self.mem.store.cached_embeddings, cache_put=self._cache_put, signature=self.signature,
                stored_dim=self._stored_dim)
        return self._embedders[for_query]

    def _stored_dim(self) -> int:
        """The length of the image vectors the index holds (0: none yet)."""
        stored = self.mem.index.vectors.get(self.signature)
        return stored.dim if stored else 0

    def _cache_put(self, signature: str, rows: list[tuple[str, np.ndarray]]) -> None:
        with self.mem.store.transaction():
            self.mem.store.cache_embeddings(signature, rows)

    # -- the area's hooks ----------------------------------------------------------------------

    def load(self) -> None:
        """Nothing to build: image vectors are loaded with the core index (``index.vectors``)."""

    def prepare(self, parsed: ParsedSource) -> Prepared | None:
        """Before the ingest transaction: read and embed the source's images; returns one warning
        for its failures and the hosts of the URLs not fetched (not in ``image_allow_hosts``)."""
        self._prepared = None
        if not self.enabled:
            return None
        shared = [(n, item) for n, item in enumerate(parsed.items) if item.meta.get("image_url")]  # (a long file's turns are read again, not held)
        embedded = self._embed(parsed.source, shared)
        keys = {n: item.key for n, item in shared}
        self._prepared = (parsed.source, {keys[n]: vector for n, vector in embedded.vectors.items()})
        return Prepared([_warning(parsed.source.name, embedded.failures)] if embedded.failures else [], embedded.not_fetched)

    def on_ingest(self, source: Source, items: list[Item]) -> None:
        """Store the prepared vectors of these items (the whole source, or a block of a long one)."""
        if self._prepared and self._prepared[0] is source:
            vectors = self._prepared[1]
            self.mem.store.insert_vectors(self.signature, ((i.id, vectors[i.key]) for i in items if i.key in vectors))

    def on_indexed(self, items: list[Item]) -> None:
        """Index the prepared vectors of these items; once every one is, nothing stays prepared."""
        if not self._prepared:
            return
        source, vectors = self._prepared
        mine = [i for i in items if i.source_id == source.id and i.key in vectors]
        if mine:
            self.mem.index.set_vectors(self.signature, [i.id for i in mine], np.stack([vectors.pop(i.key) for i in mine]))
        if not vectors:
            self._prepared = None

    def on_delete(self, item_ids: list[int], dry_run: bool) -> dict[str, int]:
        """Image vectors go with their items (foreign-key cascade); the cache keeps what was paid."""
        return {}

    def counts(self) -> ImageCounts | None:
        return ImageCounts.read(self.mem.store, self.mem.settings.image_embed_model)

    def stats(self) -> ImageCounts | None:
        return self.counts()

    # -- browsing and completion --------------------------------------------------------------

    def status(self) -> ImageStatus:
        model = self.mem.settings.image_embed_model
        return ImageStatus(bool(model), model, *self.mem.store.count_items_with_image(self.signature))

    def resume(self, progress: Callable[[int, int, str], None] | None = None) -> ResumeReport:
        """Embed every shared image that has no vector yet (after a failure, or a new model)."""
        if not self.enabled:
            raise ConfigError("no image model: set image_embed_model (and an endpoint) to embed images")
        self.embedder()  # a setting that is missing is reported even when nothing is pending
        started = time.perf_counter()
        self.mem.refresh()  # slots for what other processes added
        store = self.mem.store
        pending = store.items_with_image(unembedded_under=self.signature)
        report = ResumeReport(0)
        by_source: dict[int, list[Item]] = {}
        for item in pending:
            by_source.setdefault(int(item.source_id), []).append(item)
        for done, (source_id, items) in enumerate(by_source.items(), 1):
            source = store.source(source_id)
            embedded = self._embed(source, list(enumerate(items)))
            vectors = embedded.vectors
            report.failures.extend(embedded.failures)
            report.not_fetched.extend(embedded.not_fetched)
            if vectors:
                with store.transaction():
                    alive = store.items([items[n].id for n in vectors])  # deleted meanwhile: skipped
                    rows = [(items[n].id, v) for n, v in vectors.items() if items[n].id in alive]
                    store.insert_vectors(self.signature, rows)
                if rows:
                    self.mem.index.set_vectors(self.signature, [r[0] for r in rows], np.stack([r[1] for r in rows]))
                report.embedded += len(rows)
            if progress:
                progress(done, len(by_source), source.name)
        report.seconds = time.perf_counter() - started
        return report

    # -- recall -------------------------------------------------------------------------------

    def signals(self) -> dict[str, Signal]:
        return {"image": self.image_signal} if self.enabled else {}

    def strategies(self) -> dict[str, Strategy]:
        return {"image": single_signal(self.mem, "image")} if self.enabled else {}

    def unavailable(self) -> dict[str, str]:
        return {} if self.enabled else {"image": "it needs an image embedding model (set MNEMOSCOPE_IMAGE_EMBED_MODEL)"}

    def image_signal(self, q: Query, signals: Signals) -> np.ndarray:
        """Cosine of the query (embedded as text by the image model) to each item's image vector:
        0 for items without one. No image vectors, no request; an endpoint that fails at query
        time gives zeros and a note in the query (``q.notes["image_error"]``), never an error."""
        index = self.mem.index
        out = np.zeros(index.n_slots, dtype=np.float64)
        matrix = index.vectors.get(self.signature) if self.enabled else None
        if matrix is None or not matrix.dim:
            return out
        try:
            vec = self.embedder(for_query=True).embed_query(q.text)
        except EmbeddingUnavailable as exc:
            log.warning("image signal skipped: %s", exc)
            q.notes["image_error"] = str(exc)
            return out
        scores = matrix.scores(vec)
        out[: len(scores)] = scores
        out[~index.alive] = 0.0
        return out

    # -- embedding ----------------------------------------------------------------------------

    def _embed(self, source: Source | None, items: list[tuple[int, Item]]) -> _Embedded:
        """Vectors of the images the ``(position, item)`` pairs share, by position, the failures,
        and the URLs not fetched because their host is not listed (not failures: the person has
        not asked for them). Batches of ``image_batch_size`` keep at most that many images in
        memory; after the endpoint fails once the rest are not tried (each try would wait out the
        timeout)."""
        s = self.mem.settings
        origin = _SourceFile(source)
        out = _Embedded()
        vectors, failures = out.vectors, out.failures
        shared = [(n, item, str(item.meta["image_url"])) for n, item in items if item.meta.get("image_url")]
        endpoint_down = ""
        for start in range(0, len(shared), max(1, s.image_batch_size)):
            batch = shared[start:start + max(1, s.image_batch_size)]
            if endpoint_down:
                failures.extend(origin.failure(item, ref, endpoint_down) for _, item, ref in batch)
                continue
            read: list[tuple[int, Item, str, ImageData]] = []
            for (n, item, ref), got in zip(batch, _read_batch([ref for _, _, ref in batch], origin.place, s)):
                if isinstance(got, ImageData):
                    read.append((n, item, ref, got))
                elif isinstance(got, NotFetched):
                    out.not_fetched.append(got.host)
                else:
                    failures.append(origin.failure(item, ref, str(got)))
            if not read:
                continue
            images = [r[3] for r in read]
            try:
                matrix = self.embedder().embed_inputs([d.digest for d in images], _Inputs(images))
            except EmbeddingUnavailable as exc:
                endpoint_down = str(exc)
                failures.extend(origin.failure(item, ref, endpoint_down) for _, item, ref, _ in read)
                continue
            vectors.update((r[0], v) for r, v in zip(read, matrix))
        return out


def _read_batch(refs: list[str], place: Place, s: "Settings") -> list[ImageData | ImageUnreadable]:
    """The images behind ``refs``, or why not; downloads run in parallel (a slow host then
    delays its own images, not the whole batch)."""
    fetching = Fetching.from_list(s.request_timeout, s.max_retries, s.image_allow_hosts)

    def read(ref: str) -> ImageData | ImageUnreadable:
        try:
            return read_image(ref, place, fetching)
        except ImageUnreadable as exc:
            return exc

    if sum(ref.strip().lower().startswith(("http://", "https://")) for ref in refs) < 2:
        return [read(ref) for ref in refs]
    with ThreadPoolExecutor(max_workers=min(DOWNLOAD_THREADS, len(refs))) as pool:
        return list(pool.map(read, refs))


class _Inputs:
    """The endpoint's input items, base64-encoded only for the images the cache lacks."""

    def __init__(self, images: list[ImageData]) -> None:
        self.images = images

    def __len__(self) -> int:
        return len(self.images)

    def __getitem__(self, n: int) -> dict[str, str]:
        return self.images[n].as_input()


class _SourceFile:
    """The file a source was read from: relative image paths start there, failures point into
    it. Only a source ingested from a folder (``meta["root"]``, which import never carries) has
    one: an imported source's name is not trusted as a path, so nothing of it is read."""

    def __init__(self, source: Source | None) -> None:
        self.name = source.name if source else "?"
        root = source.meta.get("root") if source else None
        self.path = _source_path(self.name, Path(root)) if isinstance(root, str) else None
        self.place = Place(Path(root), self.path.parent) if self.path else Place()
        self._text: str | None = None

    def failure(self, item: Item, ref: str, reason: str) -> ImageFailure:
        line = item.meta.get("line") or self._line(ref, item.key)
        where = f"{self.path}:{line}" if self.path and line else str(self.path or self.name)
        return ImageFailure(item.key, ref, where, reason)

    def _line(self, ref: str, key: str) -> int | None:
        """The line of the image reference in the source file, else of the turn's key (a LoCoMo
        ``dia_id``, which repeats across the conversations of one file; references rarely do)."""
        if self.path is None:
            return None
        if self._text is None:
            try:
                self._text = read_regular(self.path, MAX_FILE_BYTES).decode("utf-8", errors="replace")
            except FileRefused:
                self._text = ""
        return line_of(self._text, ref) or (line_of(self._text, json.dumps(key)) if key else None)


def _source_path(name: str, root: Path) -> Path | None:
    """A source's file, inside ``root``: its name, or its name before ``#`` (one conversation
    of a LoCoMo file)."""
    for candidate in (name, name.rpartition("#")[0]):
        if candidate and root in Path(candidate).parents and Path(candidate).is_file():
            return Path(candidate)
    return None


def _warning(source_name: str, failures: list[ImageFailure]) -> str:
    """One line per source: the first failure, how many more, and how to finish later."""
    more = f" (and {len(failures) - 1} more image(s) of {source_name})" if len(failures) > 1 else ""
    return f"{failures[0].line()}{more}; {RESUME_HINT}"
