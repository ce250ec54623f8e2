"""What an area of the engine is: the :class:`Area` base class, and :class:`Engine`, what an area
may use of the memory it plugs into.

The core (store, index, recall pipeline) knows areas only through this module. Knowledge, topics,
the ranker and images each subclass :class:`Area`, override the hooks they need, and reach the
core through ``self.mem`` (an :class:`Engine`), never through ``engine.memory``: dependencies
point one way, core ← areas ← the ``Memory`` facade ← the app.

Hooks, in the order a memory calls them:

* ``load`` builds in-memory state from the store (at first use, and after a reindex or import);
  ``saved`` and ``restore`` keep that state beside a large store, so that the next process to
  open it maps the state instead of reading every row (:meth:`engine.memory.Memory._area`);
* ingest: ``prepare`` (before the transaction: network work, returns what to report), ``on_ingest``
  (inside it: derive and store this area's rows), ``on_indexed`` (after the commit: update memory);
  a deferred area reads a long source in pieces (a :class:`Piece` each, one transaction each), and
  ``cut`` says where a piece may end;
* ``on_delete`` cascades inside the delete transaction (or a dry run) and reports what changes;
  ``on_changed_elsewhere`` follows what another process added or deleted (:mod:`engine.activity`);
* export and import: ``export_records``, ``importing`` (checks this area's records first and
  frames the import), ``import_records`` (after the sources are in);
* recall: ``signals`` and ``strategies`` this area contributes (``unavailable`` names those it
  offers only when configured), ``rerank`` (moves a strategy's ranking), ``check_query`` (the query options
  it reads), ``dense_space`` (an area may replace the core's latent dense space) and ``complete``
  (adds to the finished recall: facts, the walk's trace, a feedback token);
* ``counts`` (read from the store alone, before ``load``) and ``stats``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Protocol

import numpy as np

if TYPE_CHECKING:
    from .activity import Activity
    from .array_file import ArrayFile
    from .config import Settings
    from .dense import OpenAIEmbedder
    from .vectors import VectorIndex
    from .index import Index
    from .pipeline import Hit, Query, Ranking, Recall, Signal, Strategy
    from .records import AreaFigures, Item, ParsedSource, Prepared, Source
    from .store import Store


@dataclass(frozen=True, slots=True)
class Piece:
    """Where the items a deferred area reads lie in their source. A catch-up reads a long source
    in pieces, one transaction each, so that its memory and what a crash loses are bounded by the
    piece; an area keeps across the cut what continues there (a conversation's speakers, the
    link from one turn to the next) and does what needs the whole source at its last piece."""

    before: Item | None = None  # the source's item just before the piece (read already); None at its start
    last: bool = True  # whether the source ends with this piece

    @property
    def first(self) -> bool:
        return self.before is None


WHOLE = Piece()  # a whole source at once (every ingest that is not deferred)


class Engine(Protocol):
    """The part of a memory an area may use: its settings, store, index and activity log, and a few reads."""

    settings: Settings
    store: Store
    index: Index
    path: Path
    activity: Activity

    def items(self, ids: Iterable[int]) -> dict[int, Item]: ...

    def refresh(self) -> bool: ...

    def signals(self) -> dict[str, Signal]: ...

    def dense_query(self, q: Query) -> tuple[np.ndarray | None, VectorIndex | None]: ...

    @property
    def external_embedder(self) -> OpenAIEmbedder | None: ...

    def dense_weight(self) -> float: ...


class Area:
    """An area of the engine beside the core; every hook is a no-op until a subclass overrides it."""

    name: ClassVar[str]
    # Whether this area's ingest work (``on_ingest``/``on_indexed``) may run after the core's: a
    # large ingest stores and indexes the items first and queues them (durably) for the deferred
    # areas, which read them later, a source at a time (:meth:`engine.memory.Memory.catch_up`).
    deferred: ClassVar[bool] = False
    # The layout of what :meth:`saved` gives: raised when it changes, so that a state saved in the
    # older layout is read from the store again, not misread. Vector arrays in it (a VectorIndex's)
    # have their own layout, engine.vectors.LAYOUT, which the file's stamp holds too: a change of
    # those raises that number, not this one (engine/index_file.py says how to raise each). The
    # saved state is kept across migrations of other parts of the store than the items' and this
    # area's own (the store's part named as the area: engine/index_file.py).
    saved_format: ClassVar[int] = 1

    def __init__(self, mem: Engine) -> None:
        self.mem = mem

    @property
    def settings(self) -> Settings:
        return self.mem.settings

    # -- lifecycle ----------------------------------------------------------------------------

    def load(self) -> None:
        """Build in-memory state from the store (at first use, and after a reindex or import)."""

    def saved(self) -> ArrayFile | None:
        """This area's state as numeric arrays and JSON-able metadata, for :meth:`restore` in
        another process (None: nothing worth saving: :meth:`load` is cheap)."""
        return None

    def restore(self, saved: ArrayFile) -> None:
        """The state :meth:`saved` gave, as of one line of the store's activity log (the memory
        then tells the area what came after, as it tells a follower). Raises ValueError (or
        KeyError, TypeError) when the arrays do not fit; the memory then calls :meth:`load`."""
        raise ValueError(f"the {self.name} area keeps no saved state")

    def warm_up(self) -> None:
        """Build now what the next recall would otherwise build first (matrices derived from the
        state, dropped when it changes): after a load, and after following another process."""

    def counts(self) -> AreaFigures | None:
        """A few figures read from the store alone: callable before :meth:`load` (None: none)."""
        return None

    def stats(self) -> AreaFigures | None:
        """Every figure this area shows (drift, λ, …); by default its counts."""
        return self.counts()

    # -- ingest and delete --------------------------------------------------------------------

    def prepare(self, parsed: ParsedSource) -> Prepared | None:
        """Before the ingest transaction (no write lock held): slow or network work; its warnings
        and what it did not fetch (None: nothing to say)."""
        return None

    def on_ingest(self, source: Source, items: list[Item], piece: Piece = WHOLE) -> None:
        """Inside the ingest transaction: derive and store this area's rows for new items (in
        position order; a deferred area may be given a source in pieces: ``piece``)."""

    def cut(self, items: list[Item]) -> int:
        """How many of these items (the start of a piece of a longer source, in position order)
        this area can read now, the rest waiting for the next piece, as one read of the whole
        source would have read them (0: none: a larger piece is wanted). By default all."""
        return len(items)

    def on_indexed(self, items: list[Item]) -> None:
        """After the commit: update in-memory state (slots are assigned by now)."""

    def on_delete(self, item_ids: list[int], dry_run: bool) -> dict[str, int]:
        """Inside the delete transaction (or a dry run): cascade, and report what changes."""
        return {}

    def on_changed_elsewhere(self, added: list[Item], removed: list[int]) -> None:
        """Another process added or deleted these items (the activity log told): follow them.
        By default the area loads again from the store."""
        self.load()

    # -- export and import --------------------------------------------------------------------

    def export_records(self) -> list[dict[str, Any]]:
        """This area's records for an export (JSON-ready, keyed by exported ids)."""
        return []

    def reads(self, record_type: str) -> bool:
        """Whether this area imports an export's records of ``record_type`` (an import says which
        records no area reads, rather than leaving them out unsaid)."""
        return False

    def importing(self, path: Path, records: list[tuple[int, dict[str, Any]]],
                  exported: dict[str, tuple[int, list[int]]]) -> AbstractContextManager[None]:
        """Frame an import: check this area's ``(line, record)`` pairs before anything is written
        (a bad one raises :class:`engine.errors.IngestError` naming its line)."""
        return nullcontext()

    def import_records(self, records: list[dict[str, Any]], id_map: dict[int, int]) -> None:
        """After the import's sources are stored (same transaction): lay this area's records over
        them; ``id_map`` maps exported to stored item ids."""

    def import_notes(self) -> list[str]:
        """While :meth:`importing`: what the import's report says of this area's records (made to
        keep today's rules, say), in one line each."""
        return []

    # -- recall -------------------------------------------------------------------------------

    def signals(self) -> dict[str, Signal]:
        """The scorers this area adds to recall, by name (they may be fused by the ranker)."""
        return {}

    def strategies(self) -> dict[str, Strategy]:
        """The recall strategies this area adds, by name."""
        return {}

    def unavailable(self) -> dict[str, str]:
        """Strategies this area offers only when configured, by name: what each needs (one line)."""
        return {}

    def rerank(self, q: Query, ranking: Ranking) -> Ranking:
        """Move the strategy's ranking before hits are made of it (by default it stays as it is)."""
        return ranking

    def check_query(self, q: Query) -> None:
        """Refuse (:class:`engine.errors.RecallError`) or normalise the query options this area reads."""

    def dense_space(self, q: Query) -> tuple[np.ndarray | None, VectorIndex | None] | None:
        """The query vector and item matrix to use in place of the core's latent space, or None."""
        return None

    def complete(self, q: Query, ranking: Ranking, hits: list[Hit], result: Recall) -> None:
        """Add what this area knows to a finished recall (``hits`` as ranked, before any area
        changed ``result.hits``)."""
