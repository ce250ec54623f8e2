"""The in-memory search state of one store: slots, vocabulary, BM25 and dense matrices.

Every item gets a *slot*, a dense row number used by every matrix (BM25 postings, vectors,
graph adjacency). Slots are allocated in item-id order and never reused while the process runs;
a deleted item's slot is masked. Per-slot columns live in growable numpy arrays
(:mod:`engine.arrays`), so appending a batch costs O(batch), not O(store). Everything here is derived from the store and rebuilt by
:meth:`Index.load`, so a reopened store answers exactly like the live one.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .arrays import Column, Rows, SlotMap
from .dense import HashEmbedder, LatentSemanticModel, one_blas_thread
from .lazy import sparse as sp
from .lexical import BM25Index, BM25Params
from .records import Item
from .query import QueryPlan, english_lexicon
from .query import plan as query_plan
from .text import lexical_tokens
from .vectors import LISTS_ABOVE, VectorIndex
from .wordvec import WordModel, WordSpace, english_vectors
from .wordvec import fit as fit_words

LSA_KEY = "dense.lsa_model"
WORDS_KEY = "dense.word_model"  # fitted beside the latent model (engine/wordvec.py)
# The latent model is fitted on at most this many items, evenly spread over the store, so that
# refits stay affordable in large stores. A sample loses the rare terms it lacks (a half-sized fit
# costs MuSiQue dense recall: docs/benchmarks.md), so it is generous; every benchmark corpus is
# smaller, and 10k-item ingest (half of it the fit) is unaffected.
LSA_FIT_ITEMS = 20_000
PROJECT_BLOCK = 20_000  # items projected into the latent space at a time
# The word space keeps float32 rows until it has inverted lists (past LISTS_ABOVE items): at 50
# dimensions they are small, and decoding codes cost more per scan than the whole float product.
# Its lists are probed less than the latent ones (its 50 dimensions cluster tightly), and fewer
# probed rows are scored again exactly: hybrid takes its candidates' word scores from their exact
# rows, and with this share and rescore its top 10 at a million items are those of every list
# probed (chosen on the benchmark's questions at 1M: docs/scaling.md).
WORD_PROBE_SHARE = 0.05
WORD_RESCORE = 256
ANALYZE_BLOCK = 4096  # documents analysed before their rows are packed (Index.analyze_all)
KEPT_TERMS_OF = 4096  # up to this many slots, the last slots' terms read are kept (Index._terms_of)
WORD_LAYOUT: dict[str, Any] = {"quantize_above": LISTS_ABOVE, "lists_above": LISTS_ABOVE,
                               "probe_share": WORD_PROBE_SHARE, "rescore": WORD_RESCORE}


@dataclass(frozen=True)
class ItemColumns:
    """What the index keeps of stored items, as columns (:meth:`Index.add`): taken from a block
    of a source as it is stored, so that the block's items need not be held until the commit."""

    ids: np.ndarray
    source_ids: np.ndarray
    positions: np.ndarray
    times: np.ndarray  # epoch seconds (nan: none)

    @classmethod
    def of(cls, items: Sequence[Item]) -> "ItemColumns":
        n = len(items)
        return cls(np.fromiter((i.id for i in items), dtype=np.int64, count=n),
                   np.fromiter((i.source_id for i in items), dtype=np.int64, count=n),
                   np.fromiter((i.position for i in items), dtype=np.int64, count=n),
                   np.fromiter((_epoch(i.timestamp) for i in items), dtype=np.float64, count=n))


def _epoch(ts: str | None) -> float:
    if not ts:
        return np.nan
    try:
        return datetime.fromisoformat(ts).timestamp()
    except ValueError:
        return np.nan


class Index:
    """Slots, vocabulary and the lexical and dense indexes over them."""

    def __init__(self, bm25: BM25Params, lsa_dim: int = 128, hash_dim: int = 256, char_ngrams: bool = False,
                 related_words: bool = True) -> None:
        self.bm25 = BM25Index(bm25)
        self.char_ngrams = char_ngrams  # one setting for documents and queries alike
        self.related_words = related_words  # queries bring in related words from the bundled lexicon
        self.lsa_dim = lsa_dim
        self.hash = HashEmbedder(hash_dim)
        self.vocab: dict[str, int] = {}
        self._item_ids = Column(np.int64)
        self._source_ids = Column(np.int64)
        self._positions = Column(np.int64)
        self._times = Column(np.float64)
        self._pending = Column(bool)  # stored and indexed, not yet read by the deferred areas
        self.slot_of = SlotMap()  # live items only
        self.lsa: LatentSemanticModel | None = None
        self._lsa_vectors = VectorIndex(exact=self._latent_rows, lists_above=LISTS_ABOVE)
        self._unprojected: list[np.ndarray] = []  # slots whose LSA vectors are not computed yet
        self._projecting = threading.Lock()
        self.lsa_fitted_on = 0
        self.vectors: dict[str, VectorIndex] = {}  # stored vectors by embedder signature
        self._words: WordSpace | None = None  # the model placing items in the bundled word vectors' space
        # the index state a model was fitted for here, when the store holds none (None: the store's model)
        self._words_fitted_for: tuple[int, int, int] | None = None
        self._word_vectors = self._new_word_vectors()
        self._words_unplaced: list[np.ndarray] = []  # slots not yet placed in the word space
        # the store's float32 rows of stored vectors, (signature, item ids) → rows, for exact re-scoring
        self.stored_rows: Callable[[str, np.ndarray], np.ndarray] | None = None
        # the last slots whose terms were read (see _terms_of): (rows read, the slots' bytes, their terms)
        self._last_terms: tuple[object, bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None

    # -- per-slot columns (views: valid until the next add) -------------------------------------

    @property
    def item_ids(self) -> np.ndarray:
        return self._item_ids.view

    @property
    def alive(self) -> np.ndarray:
        return self.bm25.alive

    @property
    def source_ids(self) -> np.ndarray:
        return self._source_ids.view

    @property
    def positions(self) -> np.ndarray:
        return self._positions.view

    @property
    def times(self) -> np.ndarray:
        return self._times.view

    @property
    def pending(self) -> np.ndarray:
        """Slots the deferred areas (knowledge, topics) have not read yet (see ``Area.deferred``)."""
        return self._pending.view

    @property
    def ready(self) -> np.ndarray:
        """Live slots the deferred areas have read: what they may hold state for."""
        return self.alive & ~self.pending

    # -- size ---------------------------------------------------------------------------------

    @property
    def n_slots(self) -> int:
        return len(self._item_ids)

    @property
    def n_items(self) -> int:
        return self.bm25.n_docs

    def slots(self, item_ids: Iterable[int]) -> np.ndarray:
        """The slots of the live items among ``item_ids``, in the given order."""
        found = self.slot_of.slots_of(item_ids)
        return found[found >= 0]

    # -- vocabulary ---------------------------------------------------------------------------

    def analyze(self, text: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(term ids, counts, new terms) of a document; new terms are given ids at once."""
        counts = Counter(lexical_tokens(text, self.char_ngrams))
        new_terms = []
        ids = np.empty(len(counts), dtype=np.int64)
        for n, term in enumerate(counts):
            tid = self.vocab.get(term)
            if tid is None:
                tid = self.vocab[term] = len(self.vocab)
                new_terms.append(term)
            ids[n] = tid
        return ids, np.fromiter(counts.values(), dtype=np.float32, count=len(counts)), new_terms

    def analyze_all(self, texts: Iterable[str]) -> tuple[Rows, list[str]]:
        """Each document's (term ids, counts) as :meth:`analyze` gives them, one row per text, and
        the new terms (given ids at once). The rows are packed together a block at a time: a long
        source then holds 8 bytes per term until it is indexed, not two small numpy arrays per
        document, whose headers outweigh their terms many times."""
        rows, new_terms, block = Rows(np.int32, np.float32), [], []
        for text in texts:
            term_ids, counts, fresh = self.analyze(text)
            block.append((term_ids, counts))
            new_terms.extend(fresh)
            if len(block) == ANALYZE_BLOCK:
                rows.extend(block)
                block = []
        rows.extend(block)
        return rows, new_terms

    def plan(self, text: str, related: bool = True) -> QueryPlan:
        """A query's plan over this vocabulary (engine/query.py: framing words weigh little; with
        ``related``, related words the store holds join at a fraction of their word's weight)."""
        lexicon = english_lexicon() if related and self.related_words else None
        return query_plan(text, self.vocab, lexicon, self.char_ngrams)

    def query_terms(self, text: str, related: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, weights) of a query's known terms (:meth:`plan`)."""
        return self.terms_of(self.plan(text, related))

    def terms_of(self, planned: QueryPlan) -> tuple[np.ndarray, np.ndarray]:
        """(term ids, weights) of a plan's terms, which are all in this vocabulary."""
        terms = planned.terms
        ids = np.fromiter((self.vocab[t] for t in terms), dtype=np.int64, count=len(terms))
        weights = np.fromiter(terms.values(), dtype=np.float64, count=len(terms))
        return ids, weights

    def merge_vocab(self, terms: dict[str, int]) -> None:
        """Adopt terms another process added to the store's vocabulary."""
        for term, tid in terms.items():
            self.vocab.setdefault(term, tid)

    # -- writes -------------------------------------------------------------------------------

    def add(self, items: ItemColumns, term_rows: Rows, pending: bool = False) -> np.ndarray:
        """Give each stored item a slot and index its terms, the i-th row of ``term_rows``
        (:meth:`analyze_all`; ``pending``: the deferred areas read them later); returns the new
        slots."""
        slots = self.add_rows(items.ids, items.source_ids, items.positions, items.times, term_rows.lengths,
                              term_rows.indices.view, term_rows.values.view)
        self.pending[slots] = pending
        return slots

    def add_rows(self, item_ids: Sequence[int] | np.ndarray, source_ids: Sequence[int] | np.ndarray,
                 positions: Sequence[int] | np.ndarray, timestamps: Sequence[str | None] | np.ndarray,
                 lengths: np.ndarray, terms: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """:meth:`add` from columns (``timestamps`` as ISO strings or epoch floats) and the term
        rows concatenated (``lengths[i]`` terms of the i-th item), so that loading a large store
        builds no Python object per item."""
        n, first = len(item_ids), self.n_slots
        slots = np.arange(first, first + n, dtype=np.int64)
        ids = np.asarray(item_ids, dtype=np.int64).reshape(n)
        self._item_ids.extend(ids)
        self._source_ids.extend(np.asarray(source_ids, dtype=np.int64).reshape(n))
        self._positions.extend(np.asarray(positions, dtype=np.int64).reshape(n))
        times = timestamps if isinstance(timestamps, np.ndarray) and timestamps.dtype.kind == "f" else \
            np.fromiter(map(_epoch, timestamps), dtype=np.float64, count=n)
        self._times.extend(times)
        self._pending.resize(first + n)
        self.slot_of.assign(ids, slots)
        self.bm25.add_flat(slots, lengths, terms, counts)
        with self._projecting:  # a query thread may be projecting or placing the earlier ones
            if self.lsa is not None:
                self._unprojected.append(slots)
            if self._words is not None:
                self._words_unplaced.append(slots)
        return slots

    def set_pending(self, item_ids: Iterable[int], pending: bool) -> None:
        """Mark items as waiting for the deferred areas, or as read by them."""
        self.pending[self.slots(item_ids)] = pending

    def set_vectors(self, signature: str, item_ids: Sequence[int], vectors: np.ndarray) -> None:
        index = self.vectors.get(signature)
        if index is None:
            index = self.vectors[signature] = VectorIndex(exact=self._stored(signature), lists_above=LISTS_ABOVE)
        index.set(self.slots(item_ids), vectors)

    def _stored(self, signature: str) -> Callable[[np.ndarray], np.ndarray] | None:
        if self.stored_rows is None:
            return None
        read = self.stored_rows
        return lambda slots: read(signature, self.item_ids[slots])

    def remove(self, item_ids: Iterable[int]) -> None:
        slots = self.slots(item_ids)
        if not len(slots):
            return
        self.bm25.remove(slots)
        self._lsa_vectors.remove(slots)  # slots still unprojected are skipped as dead
        self._word_vectors.remove(slots)
        for index in self.vectors.values():
            index.remove(slots)
        self.slot_of.drop(self.item_ids[slots])

    # -- saved beside the store (engine/index_file.py) -----------------------------------------

    def arrays(self) -> tuple[dict[str, np.ndarray], dict[str, object]]:
        """Every array this index derives from the store, and the counters that go with them:
        what :meth:`restore` takes back instead of reading every row again. Items not yet
        projected into the latent space are projected first, and inverted lists made where
        due (:meth:`make_lists`): the first dense query after an open would pay for them
        otherwise (the vectors are tied to the model's signature)."""
        self.make_lists()
        out = {"items.ids": self.item_ids, "items.sources": self.source_ids, "items.positions": self.positions,
               "items.times": self.times, "items.pending": self.pending}
        bm25, counters = self.bm25.arrays()
        out.update({f"bm25.{name}": a for name, a in bm25.items()})
        signatures = list(self.vectors)
        for n, signature in enumerate(signatures):
            out.update({f"vectors.{n}.{name}": a for name, a in self.vectors[signature].arrays().items()})
        lsa = self.lsa.signature if self.lsa is not None else ""
        if lsa:
            out.update({f"lsa.{name}": a for name, a in self.lsa_vectors.arrays().items()})
        words = self._words.model.signature if self._words is not None and self._words_fitted_for is None else ""
        if words:  # (a model fitted here for one state is not the store's: nothing to save)
            out.update({f"words.{name}": a for name, a in self.word_vectors.arrays().items()})
        return out, {"bm25": counters, "terms": len(self.vocab), "vectors": signatures, "lsa": lsa, "words": words}

    def restore(self, arrays: dict[str, np.ndarray], meta: dict[str, object], lsa_blob: bytes | None,
                words_blob: bytes | None) -> None:
        """Take back what :meth:`arrays` gave (the vocabulary already read from the store; the
        arrays adopted, not copied) and the store's latent and word models. Raises ValueError or
        KeyError when the arrays do not fit together or with the vocabulary."""
        ids = arrays["items.ids"]
        columns = (arrays["items.sources"], arrays["items.positions"], arrays["items.times"], arrays["items.pending"])
        if any(len(c) != len(ids) for c in columns) or int(meta["terms"]) > len(self.vocab):
            raise ValueError("saved columns do not fit together or with the vocabulary")
        self._item_ids = Column(np.int64, values=ids)
        self._source_ids, self._positions = Column(np.int64, values=columns[0]), Column(np.int64, values=columns[1])
        self._times, self._pending = Column(np.float64, values=columns[2]), Column(bool, values=columns[3])
        self.bm25.restore({name[5:]: a for name, a in arrays.items() if name.startswith("bm25.")}, meta["bm25"])
        if self.bm25.n_slots != len(ids) or len(self.bm25.docs) != len(ids):
            raise ValueError("saved postings do not fit the columns")
        self.slot_of = SlotMap()
        alive = np.flatnonzero(self.alive)
        self.slot_of.assign(ids[alive], alive)
        for n, signature in enumerate(meta["vectors"]):
            part = {name.split(".", 2)[2]: a for name, a in arrays.items() if name.startswith(f"vectors.{n}.")}
            self.vectors[signature] = VectorIndex.restore(part, exact=self._stored(signature), lists_above=LISTS_ABOVE)
        if lsa_blob:
            self.load_lsa(lsa_blob)
            if meta["lsa"] and meta["lsa"] == self.lsa.signature:
                part = {name[4:]: a for name, a in arrays.items() if name.startswith("lsa.")}
                with self._projecting:
                    self._lsa_vectors = VectorIndex.restore(part, exact=self._latent_rows, lists_above=LISTS_ABOVE)
                    self._unprojected = []
        self.load_words(words_blob)
        if words_blob and meta.get("words") == self._words.model.signature:
            part = {name[6:]: a for name, a in arrays.items() if name.startswith("words.")}
            with self._projecting:
                self._word_vectors = VectorIndex.restore(part, exact=self._word_rows, **WORD_LAYOUT)
                self._words_unplaced = []

    def make_lists(self, stop: Callable[[], bool] = lambda: False) -> bool:
        """Group each vector space holding more than ``LISTS_ABOVE`` rows into inverted lists where
        it has none yet (engine/vectors.py), the items not yet projected into the latent space or
        placed in the store's word space placed first, as :meth:`arrays` places them. For an
        ingest's end, a save or a thread of its own: a recall or a warm-up never makes them (a
        recall scans every row until they are made). ``stop``: see :meth:`VectorIndex.make_lists`.
        Returns whether any lists were made."""
        if self.n_slots <= LISTS_ABOVE or stop():
            return False
        spaces = list(self.vectors.values())
        if self.lsa is not None:
            spaces.append(self.lsa_vectors)
        if self._words is not None and self._words_fitted_for is None:
            spaces.append(self.word_vectors)
        return any([space.make_lists(stop) for space in spaces])

    def lists_due(self) -> bool:
        """Whether a vector space holds more rows than its lists' threshold and no lists yet
        (cheap: nothing is projected). Asked without the memory's write lock (after a recall, in
        a warm-up) while an ingest or a refresh, holding it, may add a space to ``vectors``
        (:meth:`set_vectors` with a signature new to the index). It iterates a copy of the
        spaces, never the dict: unpacking the dict's values into the tuple is one step in C,
        under the GIL, that no other thread's write interleaves with, so the dict growing
        meanwhile cannot fail it ("dictionary changed size during iteration"), as a generator
        over ``vectors.values()`` would fail."""
        return any(space.lists_due for space in (*self.vectors.values(), self._lsa_vectors, self._word_vectors))

    # -- latent semantic model -----------------------------------------------------------------

    def counts_matrix(self, slots: np.ndarray | None = None) -> sp.csr_matrix:
        """Documents × terms count matrix of the given slots (default: every slot)."""
        slots = np.arange(self.n_slots) if slots is None else np.asarray(slots, dtype=np.int64)
        lengths, indices, data = self._terms_of(slots)
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        return sp.csr_matrix((data, indices, indptr), shape=(len(slots), max(len(self.vocab), 1)))

    def needs_lsa_fit(self, growth: float = 1.5) -> bool:
        """Refit when the corpus has grown by ``growth`` since the last fit (or was never fitted)."""
        n = self.n_items
        return n >= 16 and (self.lsa is None or n >= growth * self.lsa_fitted_on)

    def fit_lsa(self) -> bytes | None:
        """Fit the latent model on the live items (an even sample of at most ``LSA_FIT_ITEMS``);
        returns its bytes for the store."""
        live = np.flatnonzero(self.alive)
        sample = live[np.linspace(0, len(live) - 1, LSA_FIT_ITEMS).astype(np.int64)] if len(live) > LSA_FIT_ITEMS else live
        model = LatentSemanticModel.fit(self.counts_matrix(sample), self.lsa_dim)
        if model is None:
            return None
        self.use_lsa(model, fitted_on=len(live))
        return model.to_bytes() + b"|n=" + str(len(live)).encode()

    def use_lsa(self, model: LatentSemanticModel, fitted_on: int) -> None:
        with self._projecting:
            self.lsa, self.lsa_fitted_on = model, fitted_on
            self._lsa_vectors = VectorIndex(exact=self._latent_rows, lists_above=LISTS_ABOVE)
            self._unprojected = [np.flatnonzero(self.alive)]

    @property
    def lsa_vectors(self) -> VectorIndex:
        """Every live item in the latent space. Items are projected when first needed, not when a
        store opens: the projection wants scipy.sparse, which a store's opening does not."""
        if self._unprojected:
            with self._projecting:
                if self._unprojected:
                    slots = np.concatenate(self._unprojected)
                    slots = slots[self.alive[slots]]
                    for lo in range(0, len(slots), PROJECT_BLOCK):  # in blocks: a million at once wants gigabytes
                        block = slots[lo:lo + PROJECT_BLOCK]
                        self._lsa_vectors.set(block, self.lsa.transform(self.counts_matrix(block)))
                    self._unprojected = []
        return self._lsa_vectors

    def _latent_rows(self, slots: np.ndarray) -> np.ndarray:
        """Items' latent vectors computed again from their terms (exact float32)."""
        return self.lsa.transform_rows(*self._terms_of(np.asarray(slots, dtype=np.int64)))

    def _terms_of(self, slots: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The slots' (lengths, term ids, counts), the last slots' kept: hybrid reads its
        candidates' exact latent rows and then their exact word rows, and at a million items
        those rows lie scattered over the store (a cache miss each). A slot's terms never change
        while the same rows hold them (a slot is never reused; a load makes new rows)."""
        docs = self.bm25.docs
        if len(slots) > KEPT_TERMS_OF:  # a fit or a placement in blocks: read once, not kept
            return docs.gather(slots)
        key, kept = slots.tobytes(), self._last_terms
        if kept is not None and kept[0] is docs and kept[1] == key:
            return kept[2]
        terms = docs.gather(slots)
        self._last_terms = (docs, key, terms)
        return terms

    def load_lsa(self, blob: bytes) -> None:
        body, _, n = blob.rpartition(b"|n=")
        self.use_lsa(LatentSemanticModel.from_bytes(body), int(n))

    # -- bundled word vectors (engine/wordvec.py) ------------------------------------------------

    def fit_words(self) -> bytes:
        """Fit the word model on the live items and place every item with it; returns its bytes
        for the store (kept beside the latent model's, so every process places items alike)."""
        with self._projecting:
            space, rows = self._fit_words()
            self._use_words(space, rows)
            self._words_fitted_for = None
        return space.model.to_bytes()

    def load_words(self, blob: bytes | None) -> None:
        """Use the store's word model (None: the store has none yet, so one is fitted here for
        each state of the index, as a small store's first ingest leaves it)."""
        with self._projecting:
            if blob is None:
                self._words, self._words_fitted_for, self._words_unplaced = None, None, []
                self._word_vectors = self._new_word_vectors()
                return
            self._use_words(WordSpace(WordModel.from_bytes(blob)), None)
            self._words_fitted_for = None

    @property
    def word_vectors(self) -> VectorIndex:
        """Every live item in the word space, placed when first needed (a new item's row is
        appended, never the whole space made again, unless no model is stored)."""
        return self._placed_words()[1]

    def _placed_words(self) -> tuple[WordModel, VectorIndex]:
        """The word model and every live item placed by it, read together under the lock (a
        refit in another thread between the two would pair one model's rows with another's
        query vector)."""
        with self._projecting:
            space = self._current_words()
            if self._words_unplaced:
                slots = np.concatenate(self._words_unplaced)
                slots = slots[self.alive[slots]]
                for lo in range(0, len(slots), PROJECT_BLOCK):
                    block = slots[lo:lo + PROJECT_BLOCK]
                    self._word_vectors.set(block, self._word_rows(block))
                self._words_unplaced = []
            return space.model, self._word_vectors

    def _current_words(self) -> WordSpace:
        """The word space for the index as it is (called with the lock held): the store's model,
        or one fitted here for this state of the index when the store holds none."""
        state = self._word_state()
        if self._words is None or (self._words_fitted_for is not None and self._words_fitted_for != state):
            self._use_words(*self._fit_words())
            self._words_fitted_for = state
        return self._words

    def word_query(self, text: str) -> tuple[np.ndarray | None, VectorIndex]:
        """The query's word vector (None when none of its words has one) and the items' rows."""
        model, vectors = self._placed_words()
        return model.query(text, self.vocab, english_vectors()), vectors

    def word_text(self, text: str) -> tuple[np.ndarray | None, WordModel]:
        """A text's word vector as :meth:`word_query` makes it, with the model that made it (a
        refit is another model: vectors of two models are not compared). No item is placed:
        comparing two questions costs their own words, whatever the store's size."""
        with self._projecting:
            model = self._current_words().model
        return model.query(text, self.vocab, english_vectors()), model

    def _word_state(self) -> tuple[int, int, int]:
        return self.n_slots, self.n_items, len(self.vocab)

    def _fit_words(self) -> tuple[WordSpace, np.ndarray]:
        df = self.bm25.document_frequencies(len(self.vocab))
        with one_blas_thread():
            return fit_words(self.counts_matrix, self.n_slots, df, self.alive, self.vocab, english_vectors())

    def _use_words(self, space: WordSpace, rows: np.ndarray | None) -> None:
        """Place items with ``space`` (called with the lock held): ``rows`` of every slot, or
        none yet (every live slot waits to be placed)."""
        self._words = space
        self._word_vectors = self._new_word_vectors()
        if rows is None:
            self._words_unplaced = [np.flatnonzero(self.alive)]
            return
        fitted = len(rows)  # slots added while the space was fitted wait to be placed with it
        live = np.flatnonzero(self.alive[:fitted])
        newer = fitted + np.flatnonzero(self.alive[fitted:])
        self._words_unplaced = [newer] if len(newer) else []
        with one_blas_thread():
            self._word_vectors.set(live, rows if len(live) == fitted else rows[live])  # (no copy of a million rows when none is dead)

    def _new_word_vectors(self) -> VectorIndex:
        return VectorIndex(exact=self._word_rows, **WORD_LAYOUT)

    def _word_rows(self, slots: np.ndarray) -> np.ndarray:
        """Items' word-space rows made again from their terms (exact float32)."""
        with one_blas_thread():
            return self._words.place(self.counts_matrix(slots), self.vocab)

    def lsa_query(self, term_ids: np.ndarray, weights: np.ndarray) -> np.ndarray | None:
        if self.lsa is None or not len(term_ids):
            return None
        return self.lsa.query_vector(term_ids, np.ones(len(term_ids), dtype=np.float32))
