"""BM25 over a sparse term-major matrix, with incremental add and delete.

Postings live in a term × document CSR matrix of raw term frequencies, so a query reads only the
rows of its own terms and scores every document with one ``np.bincount``. New documents go to a
small delta segment that is folded into the main matrix once it grows past a fraction of it;
deleted documents are masked at once and dropped at the next fold. The documents' own term counts
are kept once, document-major, in compact growable arrays (:class:`engine.arrays.Rows`): they
rebuild the postings at a fold and give the latent models their count rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import Column, Rows, ranges
from .lazy import sparse as sp

# A term with at least this many main postings keeps its postings coded (_coded_postings): a
# shorter one's arithmetic is cheap, and a store's many rare terms would each keep arrays.
LONG_POSTINGS = 1024
# The delta segment is folded into the main postings once it holds this fraction of them: a fold
# rebuilds the main matrix (O(postings)), so folds must grow geometrically, and a query scans both.
FOLD_FRACTION = 0.2


@dataclass
class BM25Params:
    k1: float = 1.2
    b: float = 0.75
    # "lucene": ln(1 + (N - df + .5) / (df + .5)), never negative.
    # "okapi": ln((N - df + .5) / (df + .5)) with negative values floored at epsilon × mean idf,
    #          exactly as rank_bm25.BM25Okapi does (kept to check our numbers against it).
    idf: str = "lucene"
    epsilon: float = 0.25


class BM25Index:
    """Documents are addressed by *slot*: a row number the caller allocates in increasing order
    (never reused; a skipped slot is an empty document)."""

    def __init__(self, params: BM25Params | None = None) -> None:
        self.params = params or BM25Params()
        self.docs = Rows(np.int32, np.float32)  # document-major term counts, one row per slot
        self._alive = Column(bool)
        self._lengths = Column(np.float64)
        self._df = Column(np.float64)
        self._n_docs = 0
        self._total_length = 0.0  # of live documents (integer counts: exact in float64)
        self._main: sp.csr_matrix | None = None  # term-major postings of slots [0, _folded)
        self._folded = 0
        self._delta: sp.csr_matrix | None = None  # term-major postings of slots [_folded, n_slots)
        self._delta_dirty = True
        self._dead_in_main = 0
        # main postings restored from a saved file, made a matrix at the first query (see restore)
        self._saved_main: tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]] | None = None
        # (norms, length_of) for the documents as counted in _norms_key (see _length_norms): one
        # attribute, so that a reader in another thread never pairs one state's norms with another's
        self._norms: tuple[np.ndarray, np.ndarray | None] = (np.zeros(0), None)
        self._norms_key: tuple[int, int, float] | None = None
        # (main postings, dtype of the lengths, term → its CodedPostings): see _coded_postings
        self._main_codes: tuple[sp.csr_matrix, np.dtype, dict[int, CodedPostings]] | None = None

    # -- size ---------------------------------------------------------------------------------

    @property
    def n_docs(self) -> int:
        return self._n_docs

    @property
    def n_slots(self) -> int:
        return len(self._alive)

    @property
    def alive(self) -> np.ndarray:
        """Whether each slot holds a live document (a view: valid until the next add)."""
        return self._alive.view

    # -- writes -------------------------------------------------------------------------------

    def add(self, slots: np.ndarray | list[int], term_ids: list[np.ndarray], counts: list[np.ndarray]) -> None:
        """Index documents; ``term_ids[i]`` are unique term ids of slot ``slots[i]``."""
        if not len(slots):
            return
        lengths = np.fromiter((len(t) for t in term_ids), dtype=np.int64, count=len(term_ids))
        empty_i, empty_c = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        self.add_flat(slots, lengths, np.concatenate([np.asarray(t, dtype=np.int64) for t in term_ids] or [empty_i]),
                      np.concatenate([np.asarray(c, dtype=np.float32) for c in counts] or [empty_c]))

    def add_flat(self, slots: np.ndarray | list[int], lengths: np.ndarray, term_ids: np.ndarray, counts: np.ndarray) -> None:
        """:meth:`add` with the rows concatenated: ``lengths[i]`` terms of slot ``slots[i]``."""
        slots = np.asarray(slots, dtype=np.int64)
        if not len(slots):
            return
        first = self.n_slots
        if slots.min() < first or len(np.unique(slots)) < len(slots):
            raise ValueError("a slot is already used; slots are never reused")
        if np.any(np.diff(slots) < 0):  # rows go in slot order
            order = np.argsort(slots, kind="stable")
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            positions = ranges(starts[order], lengths[order])
            slots, lengths, term_ids, counts = slots[order], lengths[order], term_ids[positions], counts[positions]
        n_slots = int(slots[-1]) + 1
        row_lengths = np.zeros(n_slots - first, dtype=np.int64)
        row_lengths[slots - first] = lengths
        self.docs.extend_flat(row_lengths, term_ids, counts)
        self._alive.resize(n_slots)
        self._lengths.resize(n_slots)
        self._alive.view[slots] = True
        doc_of_entry = np.repeat(np.arange(len(slots)), lengths)
        doc_lengths = np.bincount(doc_of_entry, weights=counts, minlength=len(slots))
        self._lengths.view[slots] = doc_lengths
        self._n_docs += len(slots)
        self._total_length += float(doc_lengths.sum())
        if len(term_ids):
            self._df.resize(int(term_ids.max()) + 1)
            self._df.view[:] += np.bincount(term_ids, minlength=len(self._df))
        self._delta_dirty = True

    def remove(self, slots: np.ndarray | list[int]) -> None:
        slots = np.unique(np.asarray(slots, dtype=np.int64))
        slots = slots[(slots >= 0) & (slots < self.n_slots)]
        slots = slots[self._alive.view[slots]]
        if not len(slots):
            return
        self._alive.view[slots] = False
        _, terms, _ = self.docs.gather(slots)
        self._df.view[:] -= np.bincount(terms, minlength=len(self._df))
        self._n_docs -= len(slots)
        self._total_length -= float(self._lengths.view[slots].sum())
        in_main = int(np.count_nonzero(slots < self._folded))
        self._dead_in_main += in_main
        if in_main < len(slots):
            self._delta_dirty = True

    def lengths_at(self, slots: np.ndarray) -> np.ndarray:
        """Each slot's indexed length: the count of its terms (stop words dropped; a turn's speaker
        name is one of them)."""
        return self._lengths.view[slots]

    def prepare(self) -> None:
        """Build the matrices now (after a load every document is pending) rather than in the
        first query."""
        self._refresh()

    # -- saved beside the store (engine/index_file.py) -----------------------------------------

    def arrays(self) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """The arrays and counters that :meth:`restore` takes back. Pending documents are folded
        into the main postings first, so that a restored index answers its first query at once."""
        self._take_saved_main()
        if self._delta_dirty or self._delta is not None or self._needs_compaction():
            self._fold()
        out = {f"docs.{k}": v for k, v in self.docs.arrays().items()}
        out.update({"alive": self._alive.view, "lengths": self._lengths.view, "df": self._df.view})
        if self._main is not None:
            out.update({"main.indptr": self._main.indptr, "main.indices": self._main.indices, "main.data": self._main.data})
        counters = {"n_docs": self._n_docs, "total_length": self._total_length, "folded": self._folded,
                    "dead_in_main": self._dead_in_main, "main_terms": self._main.shape[0] if self._main is not None else 0}
        return out, counters

    def restore(self, arrays: dict[str, np.ndarray], counters: dict[str, float]) -> None:
        """Take back what :meth:`arrays` gave (arrays adopted, not copied). The main postings
        become a sparse matrix at the first query: scipy is not imported while a store opens."""
        self.docs = Rows.adopt(arrays["docs.indptr"], arrays["docs.indices"], arrays["docs.values"])
        self._alive = Column(bool, values=arrays["alive"])
        self._lengths = Column(np.float64, values=arrays["lengths"])
        self._df = Column(np.float64, values=arrays["df"])
        self._n_docs, self._total_length = int(counters["n_docs"]), float(counters["total_length"])
        self._dead_in_main, self._folded = int(counters["dead_in_main"]), int(counters["folded"])
        self._main, self._delta = None, None
        self._saved_main = None
        self._norms_key = None
        if "main.indptr" in arrays:
            self._saved_main = (arrays["main.data"], arrays["main.indices"], arrays["main.indptr"],
                                (int(counters["main_terms"]), self._folded))
        self._delta_dirty = self._folded < self.n_slots

    def _refresh(self) -> None:
        """Rebuild the delta segment, folding it into the main matrix when it has grown."""
        self._take_saved_main()
        if not self._delta_dirty and not self._needs_compaction():
            return
        ptr = self.docs.indptr.view
        pending = int(ptr[-1] - ptr[self._folded])
        main_nnz = self._main.nnz if self._main is not None else 0
        if self._main is None or pending > FOLD_FRACTION * max(main_nnz, 20_000) or self._needs_compaction():
            self._fold()
        else:
            self._delta = self._postings(self._folded, self.n_slots)
            self._delta_dirty = False

    def _take_saved_main(self) -> None:
        if self._saved_main is not None:
            data, indices, indptr, shape = self._saved_main
            self._main, self._saved_main = sp.csr_matrix((data, indices, indptr), shape=shape), None

    def _fold(self) -> None:
        """Every live document into the main postings (O(postings))."""
        self._main, self._folded, self._dead_in_main = self._postings(0, self.n_slots), self.n_slots, 0
        self._delta, self._delta_dirty = None, False

    def _postings(self, lo: int, hi: int) -> sp.csr_matrix:
        """Term-major postings (terms × slots ``lo``…``hi``) of the live documents in that range."""
        ptr = self.docs.indptr.view
        lengths = np.diff(ptr[lo : hi + 1]) * self._alive.view[lo:hi]
        keep = np.repeat(self._alive.view[lo:hi], np.diff(ptr[lo : hi + 1]))
        a, b = ptr[lo], ptr[hi]
        rows = sp.csr_matrix((self.docs.values.view[a:b][keep], self.docs.indices.view[a:b][keep],
                              np.concatenate([[0], np.cumsum(lengths)])), shape=(hi - lo, max(len(self._df), 1)))
        return rows.T.tocsr()

    def _needs_compaction(self) -> bool:
        return self._dead_in_main > 0.2 * max(1, self.n_docs)

    # -- reads --------------------------------------------------------------------------------

    def document_frequencies(self, n_terms: int) -> np.ndarray:
        """How many live documents hold each of the first ``n_terms`` terms."""
        out = np.zeros(n_terms, dtype=np.float64)
        df = self._df.view[:n_terms]
        out[: len(df)] = df
        return out

    def document_frequency(self, term_id: int) -> float:
        """How many live documents hold the term."""
        return float(self._df.view[term_id]) if 0 <= term_id < len(self._df) else 0.0

    def idf(self, term_ids: np.ndarray) -> np.ndarray:
        n = float(self.n_docs)
        df_all = self._df.view
        df = df_all[term_ids]
        if self.params.idf == "okapi":
            raw = np.log(n - df + 0.5) - np.log(df + 0.5)
            present = df_all > 0
            all_idf = np.log(n - df_all[present] + 0.5) - np.log(df_all[present] + 0.5)
            floor = self.params.epsilon * (all_idf.mean() if len(all_idf) else 0.0)
            return np.where(raw < 0, floor, raw)
        return np.log1p((n - df + 0.5) / (df + 0.5))

    def scores(self, term_ids: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """BM25 of every slot for a query of term ids (unknown terms already dropped)."""
        n_slots = self.n_slots
        term_ids = np.asarray(term_ids, dtype=np.int64)
        weights = np.ones(len(term_ids)) if weights is None else np.asarray(weights, dtype=np.float64)[: len(term_ids)]
        known = term_ids < len(self._df)
        term_ids, weights = term_ids[known], weights[known]
        if not len(term_ids) or not self.n_docs:
            return np.zeros(n_slots)
        self._refresh()
        k1 = self.params.k1
        norms, length_of = self._length_norms()
        term_weight = self.idf(term_ids) * weights
        # a segment's sums are the scores so far (0 + x is x): no array of zeros is made to add them
        # to (a million slots' 8 MB set to zero at every query, for nothing)
        out: np.ndarray | None = None
        for matrix, offset in ((self._main, 0), (self._delta, self._folded)):
            if matrix is None or matrix.nnz == 0:
                continue
            inside = term_ids < matrix.shape[0]  # terms new since this segment was built have no row
            rows, tw = term_ids[inside], term_weight[inside]
            starts, stops = matrix.indptr[rows], matrix.indptr[rows + 1]
            lengths = stops - starts
            if not lengths.sum():
                continue
            # each term's postings are one slice: copied whole, not gathered entry by entry
            runs = list(zip(starts.tolist(), stops.tolist()))
            docs = np.concatenate([matrix.indices[a:b] for a, b in runs])
            if offset:
                docs += offset
            _check_slots(docs, n_slots)  # so that the unchecked gathers below never clip a wrong slot to the last
            weighted = np.empty(len(docs))
            coded = [self._coded_postings(matrix, length_of, row, a, b) for row, (a, b) in zip(rows.tolist(), runs)]
            if not any(coded):  # one pass over every posting
                counts = np.concatenate([matrix.data[a:b] for a, b in runs], dtype=np.float64)
                lengths_at = docs if length_of is None else np.take(length_of, docs, mode="clip")
                _term_frequency_part(weighted, np.repeat(tw, lengths), counts, norms, lengths_at, k1)
            else:
                self._coded_parts(weighted, matrix, docs, coded, tw, runs, norms, length_of)
            part = np.bincount(docs, weights=weighted, minlength=n_slots)
            if out is None:
                out = part
            else:
                out += part
        if out is None:
            return np.zeros(n_slots)
        if self._dead_in_main:
            out[~self._alive.view] = 0.0
        return out

    def _length_norms(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(norms, length_of): k1 · (1 − b + b · length / average length), kept until the
        documents change: a query gathers it for its postings instead of computing it per
        posting (a million-slot query reads hundreds of thousands). When every length is a whole
        number below 65,536 (a count of tokens), ``norms`` is per length and ``length_of`` each
        slot's length in one or two bytes: the postings' gather reads a column of 1–2 MB at a
        million slots instead of 8 MB of per-slot norms, scattered over the whole store (most of
        BM25's time there), and gives the same numbers, each computed by the same operations.
        Otherwise ``norms`` is per slot and ``length_of`` None."""
        key = (self.n_slots, self._n_docs, self._total_length)
        if self._norms_key != key:
            k1, b = self.params.k1, self.params.b
            average = self._total_length / self.n_docs
            lengths = self._lengths.view
            longest = float(lengths.max(initial=0.0))
            length_of = lengths.astype(np.uint8 if longest < 256 else np.uint16) if longest < 65_536 else None
            if length_of is not None and np.array_equal(length_of, lengths):
                self._norms = (k1 * (1.0 - b + b * np.arange(int(longest) + 1, dtype=np.float64) / average), length_of)
            else:
                self._norms = (k1 * (1.0 - b + b * lengths / average), None)
            self._norms_key = key
        return self._norms

    def _coded_parts(self, weighted: np.ndarray, matrix: sp.csr_matrix, docs: np.ndarray, coded: list[CodedPostings | None],
                     term_weight: np.ndarray, runs: list[tuple[int, int]], norms: np.ndarray, length_of: np.ndarray | None) -> None:
        """Each term's BM25 parts into its place in ``weighted``: a coded term's formula once
        per distinct (count, length) and gathered by code, another's per posting."""
        k1, at = self.params.k1, 0
        for codes, weight, (a, b) in zip(coded, term_weight.tolist(), runs):
            part = weighted[at:at + b - a]
            if codes is None:
                slots = docs[at:at + b - a]
                lengths_at = slots if length_of is None else np.take(length_of, slots, mode="clip")
                _term_frequency_part(part, weight, matrix.data[a:b].astype(np.float64), norms, lengths_at, k1)
            else:
                table = np.empty(len(codes.counts))
                _term_frequency_part(table, weight, codes.counts.copy(), norms, codes.lengths, k1)
                np.take(table, codes.codes, out=part)
            at += b - a

    def _coded_postings(self, matrix: sp.csr_matrix, length_of: np.ndarray | None, row: int, a: int,
                        b: int) -> CodedPostings | None:
        """The postings ``a``…``b`` of term ``row`` coded by (count, document length), kept while
        the main matrix stays (None for the delta segment, a term with few postings, or lengths
        that are not whole numbers). A posting's BM25 part depends only on its count, its
        document's length and the query's weight of the term, and a common term's postings
        hold few distinct (count, length) pairs (counts are small, lengths few): a query
        computes the formula once per pair and gathers it by code, instead of reading each
        posting's count and its slot's length and computing per posting. The same numbers: the
        same operations on the same values, and a slot's length never changes."""
        if matrix is not self._main or length_of is None or b - a < LONG_POSTINGS:
            return None
        kept = self._main_codes
        if kept is None or kept[0] is not matrix or kept[1] != length_of.dtype:
            kept = self._main_codes = (matrix, length_of.dtype, {})
        coded = kept[2].get(row)
        if coded is None:
            coded = kept[2][row] = CodedPostings.of(matrix.data[a:b], np.take(length_of, matrix.indices[a:b]))
        return coded

    def top(self, term_ids: np.ndarray, weights: np.ndarray | None, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(slots, scores) of the ``k`` best documents with a positive score, best first."""
        s = self.scores(term_ids, weights)
        return top_k(s, k)


def _check_slots(docs: np.ndarray, n_slots: int) -> None:
    """Raise when postings name a slot past the index: the gathers of BM25's hot path do not
    check each index (a bounds check per posting cost more than this one pass)."""
    if len(docs) and (docs.max() >= n_slots or docs.min() < 0):
        raise IndexError(f"BM25 postings name slot {int(docs.max())}, past the index's {n_slots:,} slots")


def _term_frequency_part(out: np.ndarray, weight: float, counts: np.ndarray, norms: np.ndarray,
                         lengths_at: np.ndarray, k1: float) -> None:
    """``out`` = weight · count · (k1 + 1) / (count + norm of the length), in place: ``counts``
    (float64, a scratch copy: changed) and ``lengths_at`` (indices into ``norms``) per posting.
    Every path of :meth:`BM25Index.scores` computes it with these operations in this order, so a
    coded term and a gathered one give the same bits."""
    out[:] = weight
    out *= counts
    out *= k1 + 1.0
    counts += np.take(norms, lengths_at, mode="clip")
    out /= counts


@dataclass
class CodedPostings:
    """One term's postings as codes into its distinct (count, document length) pairs."""

    counts: np.ndarray  # float64: each pair's term count
    lengths: np.ndarray  # each pair's document length (an index into the length norms)
    codes: np.ndarray  # per posting, in posting order: its pair

    @classmethod
    def of(cls, counts: np.ndarray, lengths: np.ndarray) -> CodedPostings:
        """Code postings by their ``counts`` (float32) and document ``lengths`` (whole numbers
        below 65,536). Whole counts and lengths of few pairs' worth are keyed into a table of
        every possible pair (a pass, no sort: a term's codes are made at a query); otherwise a
        count's bits and a length make one key per pair, sorted."""
        lengths = lengths.astype(np.intp)
        width = int(lengths.max(initial=0)) + 1
        whole = counts.astype(np.intp)
        if np.array_equal(whole, counts) and whole.min(initial=0) >= 0 and (int(whole.max(initial=0)) + 1) * width <= DENSE_PAIRS:
            keys = whole * width + lengths
            seen = np.zeros((int(whole.max(initial=0)) + 1) * width, dtype=bool)
            seen[keys] = True
            pairs = np.flatnonzero(seen)
            code_of = np.zeros(len(seen), dtype=np.intp)
            code_of[pairs] = np.arange(len(pairs))
            return cls((pairs // width).astype(np.float64), pairs % width, _narrow(code_of[keys], len(pairs)))
        bits = counts.astype(np.float32).view(np.uint32).astype(np.uint64)
        pairs, codes = np.unique((bits << np.uint64(16)) | lengths.astype(np.uint64), return_inverse=True)
        counts_of = (pairs >> np.uint64(16)).astype(np.uint32).view(np.float32).astype(np.float64)
        return cls(counts_of, (pairs & np.uint64(0xFFFF)).astype(np.intp), _narrow(codes, len(pairs)))


DENSE_PAIRS = 65_536  # possible (count, length) pairs up to which a term's codes are made without a sort


def _narrow(codes: np.ndarray, n: int) -> np.ndarray:
    """``codes`` (0…n−1) in the fewest bytes that hold them."""
    return codes.astype(np.uint8 if n <= 256 else np.uint16 if n <= 65_536 else np.uint32)


def top_k(scores: np.ndarray, k: int, among: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the ``k`` largest positive scores, best first, ties by index.
    ``among``: ascending, distinct indices outside which no score is positive (a signal's
    support): the same answer, without a pass over every score."""
    if among is None and _many(len(scores), k) and _many(int(np.count_nonzero(scores > 0)), k):
        # the answer _best_k gives of the positive scores, read above a floor of every score:
        # no index of the positive ones (~400k of a million BM25 scores) is made
        found = _above_floor(scores, k)
        if found is not None:
            return _ordered(scores, found)
    positive = np.flatnonzero(scores > 0) if among is None else among[scores[among] > 0].astype(np.intp, copy=False)
    if not len(positive):
        return positive, scores[positive]
    if len(positive) > k:
        positive = positive[_best_k(scores[positive], k)]
    return _ordered(scores, positive)


def _ordered(scores: np.ndarray, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``chosen`` best first, ties by index, and their scores."""
    chosen = chosen[np.lexsort((chosen, -scores[chosen]))]
    return chosen, scores[chosen]


FLOOR_SAMPLE = 4096  # values sampled for a floor under the k-th best before partitioning many
# Past this many values the k best are read above a sampled floor, ties at the k-th by position.
# Of fewer, one partition costs about a millisecond, and its pick among values tied at the k-th
# place is kept: a store of up to this many items ranks as it always has.
MANY_VALUES = 131_072


def _many(n: int, k: int) -> bool:
    """Whether the k best of n values are read above a sampled floor (:func:`_best_k`)."""
    return n > MANY_VALUES and k < FLOOR_SAMPLE // 8


def _best_k(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` largest ``values`` (all positive; in no order). Of many values, only
    those above a floor read from an even sample are partitioned: when they are more than k, they
    hold the k-th largest and every value equal to it, so those above it and the first of those
    equal to it are the answer; with a floor too high, every value is. Of many values, ties at the
    k-th place go by position, the order the caller's lists state. (A million slots' BM25 scores:
    ~400k positive values, and near-duplicate items often tie at the k-th place, where a partition
    of every value, whose pick among the tied is arbitrary, took most of a recall's ranking time.)
    Of few values, one partition of them all, its pick among the tied as it always was."""
    if not _many(len(values), k):
        return np.argpartition(-values, k - 1)[:k]
    found = _above_floor(values, k)
    return _first_k(values, k) if found is None else found


def _above_floor(values: np.ndarray, k: int) -> np.ndarray | None:
    """Positions of the ``k`` largest positive ``values``, ties at the k-th by position, read
    among those at or above a positive floor sampled to hold a few times k of them; None when
    that floor is not positive or holds k or fewer."""
    sample = values[:: len(values) // FLOOR_SAMPLE]
    rank = len(sample) - min(len(sample), 4 * (k * len(sample) // len(values) + 1))
    floor = np.partition(sample, rank)[rank]
    if not floor > 0:
        return None
    near = np.flatnonzero(values >= floor)
    return near[_first_k(values[near], k)] if len(near) > k else None


def _first_k(values: np.ndarray, k: int) -> np.ndarray:
    """Positions (ascending) of the ``k`` largest ``values``, ties at the k-th by position."""
    kth = np.partition(values, len(values) - k)[len(values) - k]
    above, tied = np.flatnonzero(values > kth), np.flatnonzero(values == kth)
    return np.concatenate([above, tied[: k - len(above)]])
