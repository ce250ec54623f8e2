"""The records the engine stores and reports, as plain dataclasses shared by every module."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Protocol, Sequence

from .hosts import not_fetched_line

if TYPE_CHECKING:
    from .store import Store

# The longest speaker, title or photo caption an item may have: a text split at
# engine.ingest.MAX_CHUNK_CHARS repeats the first two in every piece, each chunk of a section its
# heading, and the indexes read a caption with the text. Longer, the file (the note, the agent's
# message) is refused.
MAX_LABEL_CHARS = 2_000
# A control character (Unicode's Cc: C0, DEL, C1), which a speaker or a title may not hold.
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# An invisible character that reorders or hides the text around it, or shows as nothing, which a
# label may not hold either: the bidi embeddings, overrides and isolates ("report\u202efdp.exe"
# shows as "reportexe.pdf"), the line and paragraph separators, the zero-width space, the word and
# grapheme joiners, the invisible operators, the byte order mark, the soft hyphen, the Mongolian
# vowel separator, the blank braille pattern and the Hangul fillers (they show as blanks), and the
# tag characters (text no one sees, but in a subdivision flag: _FLAG). The zero-width joiner and
# non-joiner, which scripts and emoji need, the variation selectors, and the left-to-right and
# right-to-left marks, which mixed-direction names need, are not among them.
INVISIBLE = re.compile("[\u00ad\u034f\u115f\u1160\u180e\u200b\u2028-\u202e\u2060-\u2064\u2066-\u2069\u2800\u3164"
                       "\ufeff\uffa0\U000e0000-\U000e007f]")
# A subdivision flag: the black flag, a region code of 3 to 6 tag letters (a-z) and digits, a cancel
# tag (Scotland's gbsct, Wales's gbwls): no other text hides in the tags.
_BLACK_FLAG = "\U0001f3f4"
_FLAG = re.compile(f"{_BLACK_FLAG}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{{3,6}}\U000e007f")
# One class, so that a label is scanned once (the black flag: where a flag may begin).
_SUSPECT = re.compile(f"[{CONTROL.pattern[1:-1]}{INVISIBLE.pattern[1:-1]}{_BLACK_FLAG}]")
# The source meta key naming the MCP client that stored a source (``mcp:CLIENT``), written by the
# MCP server alone: the only sources an agent may replace or delete. An import drops it
# (engine/transfer.py): what a file says never decides what an agent may do.
WRITTEN_BY = "written_by"
IMAGE_SIGNATURE_PREFIX = "image:"  # item_vectors rows of image models (a reindex keeps them: they need no text)


def label_problem(value: str, limit: int = MAX_LABEL_CHARS, *, shown_alone: bool = True) -> str | None:
    """Why ``value`` cannot be a label, or None: the one rule for every edge that makes one (a
    file's reader, a note, an MCP agent's names; an import makes an export's labels fit instead,
    :func:`engine.ingest.fit_labels`). A label is at most ``limit`` characters (it is repeated with every piece
    of a split text); one ``shown_alone`` (a speaker, a title, a source's name: not a photo's
    caption, which is read with the text) holds no control character, since an escape sequence
    would drive the terminal of whoever lists it and a line break splits its line, and no
    :data:`INVISIBLE` character, since a label that shows one text and holds another misleads
    whoever reads it."""
    if len(value) > limit:
        return f"is {len(value):,} characters long; at most {limit:,}"
    bad = _not_shown(value) if shown_alone else None
    if bad is None:
        return None
    what = "a control character" if CONTROL.match(value[bad]) else "an invisible character"
    return f"holds {what} (U+{ord(value[bad]):04X} at {bad})"


def _not_shown(value: str, at: int = 0) -> int | None:
    """Where ``value``'s first control or :data:`INVISIBLE` character from ``at`` is (a flag's
    tags passed over), or None."""
    while (suspect := _SUSPECT.search(value, at)) is not None:
        if suspect.group() != _BLACK_FLAG:
            return suspect.start()
        flag = _FLAG.match(value, suspect.start())
        at = flag.end() if flag else suspect.end()
    return None


def shown_label(value: str) -> str:
    """``value`` made to keep :func:`label_problem`'s rule on characters: each control character a
    space, each :data:`INVISIBLE` one dropped (it takes no room), a flag kept."""
    out, at = [], 0
    while (bad := _not_shown(value, at)) is not None:
        out += [value[at:bad], " " if CONTROL.match(value[bad]) else ""]
        at = bad + 1
    return "".join(out) + value[at:]


@dataclass
class Source:
    """A document or a conversation, identified by its name (usually a path)."""

    name: str
    kind: str  # document | conversation | note
    content_hash: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    id: int | None = None

    @property
    def by_agent(self) -> bool:
        """Whether an agent stored it through MCP (its meta's :data:`WRITTEN_BY`); a source the
        person stored (ingested, imported, noted, in the app) is not, whatever its name."""
        return self.agent is not None

    @property
    def agent(self) -> str | None:
        """The name of the MCP client that stored it, as it introduced itself, or None when the
        person stored it (see :attr:`by_agent`)."""
        writer = str(self.meta.get(WRITTEN_BY, ""))
        return writer.removeprefix("mcp:") if writer.startswith("mcp:") else None


@dataclass
class Item:
    """One unit of recall: a document chunk, a conversation turn or a note.

    ``key`` is the item's id within its source (a LoCoMo ``dia_id`` such as ``D3:12``, or the
    chunk number); ``id`` is the store-wide integer id.
    """

    text: str
    kind: str = "chunk"  # chunk | turn | note
    key: str = ""
    position: int = 0
    speaker: str | None = None
    timestamp: str | None = None  # ISO 8601
    title: str = ""
    tags: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
    source_id: int | None = None

    def search_text(self) -> str:
        """What the indexes see: title, speaker, text and any image caption."""
        parts = [self.title] if self.title else []
        parts.append(f"{self.speaker}: {self.text}" if self.speaker else self.text)
        caption = self.meta.get("image_caption")
        if caption:
            parts.append(f"[image: {caption}]")
        return "\n".join(parts)


class WalkedItems(Protocol):
    """Items counted and walked, never indexed: a long chat file's turns, read from the file
    again at each walk (engine/ingest.py's ``ReadAgain``), where the n-th would be found by
    reading the file from its start."""

    def __len__(self) -> int: ...

    def __iter__(self) -> Iterator[Item]: ...


@dataclass
class ParsedSource:
    """What a reader makes of a file: the source record and its items, not yet stored (a list,
    or a long chat file's turns read again from it as they are walked)."""

    source: Source
    items: Sequence[Item] | WalkedItems


@dataclass
class SourceReport:
    name: str
    status: str  # added | replaced | unchanged
    items: int
    source_id: int
    warnings: list[str] = field(default_factory=list)  # stored, but something derived is missing (e.g. an image vector)
    not_fetched: list[str] = field(default_factory=list)  # the host of each URL it named that was not fetched


@dataclass
class Prepared:
    """What an area's work before the ingest transaction (:meth:`Area.prepare`) has to say."""

    warnings: list[str] = field(default_factory=list)
    not_fetched: list[str] = field(default_factory=list)  # hosts of URLs kept as references, not in image_allow_hosts


@dataclass
class IngestReport:
    sources: list[SourceReport] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    links: list[str] = field(default_factory=list)  # symbolic links in a folder, not followed

    @property
    def items(self) -> int:
        return sum(s.items for s in self.sources if s.status != "unchanged")

    @property
    def warnings(self) -> list[str]:
        return [w for s in self.sources for w in s.warnings]

    @property
    def not_fetched(self) -> list[str]:
        return [h for s in self.sources for h in s.not_fetched]

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
        if self.not_fetched:  # said once, here, so that every front end (CLI, app) shows it
            text += "; " + not_fetched_line(self.not_fetched)
        if self.links:
            text += f"; {len(self.links)} link(s) in a folder not followed"
        return text


@dataclass
class Calibration:
    """The dense weight an external embedder earned on this store (:mod:`engine.calibration`
    measures it; kept in the store and shown by ``stats``)."""

    signature: str  # the embedder it was measured for
    weight: float
    items: int  # live items when measured
    questions: int
    mrr: dict[str, float] = field(default_factory=dict)  # weight → mean reciprocal rank

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str | bytes) -> "Calibration":
        return cls(**json.loads(text))


# -- what a store holds: Memory.counts() and Memory.stats() -------------------------------------


def _figures(record: AreaFigures) -> dict[str, object]:
    """An area's figures by name, in order (a record inside it as a dict); a figure that does not
    apply to this store (None) is left out."""
    return {k: v for k, v in asdict(record).items() if v is not None}


@dataclass(frozen=True)
class TopicCounts:
    """The topics area's figures read from the store alone."""

    topics: int

    @classmethod
    def read(cls, store: Store) -> TopicCounts:
        return cls(store.count_topics())


@dataclass(frozen=True)
class TopicStats(TopicCounts):
    """The topic tree as loaded; the tree's shape is None when there is no tree."""

    topic_leaves: int | None = None
    topic_depth: int | None = None
    topic_semantic_edges: int | None = None
    topic_drift: float | None = None  # (items added + removed since the build) / items at the build
    topic_built_at: str | None = None  # local time, YYYY-MM-DD HH:MM:SS


@dataclass(frozen=True)
class KnowledgeCounts:
    """The knowledge area's figures (all read from the store: the same before and after it loads)."""

    entities: int
    facts: int  # live facts (not retired), superseded ones included
    superseded: int
    retired: int
    conflicts: int  # open ones
    episodes: int  # not merged into another
    events: int
    extraction_queue: dict[str, int] | None = None  # items by status, when any wait for the LLM extractor

    @classmethod
    def read(cls, store: Store) -> KnowledgeCounts:
        return cls(**store.knowledge_counts(), extraction_queue=store.queue_counts() or None)


@dataclass(frozen=True)
class RankerCounts:
    feedback_events: int

    @classmethod
    def read(cls, store: Store) -> RankerCounts:
        return cls(store.count_feedback())


@dataclass(frozen=True)
class RankerStats(RankerCounts):
    ranker_lambda: float  # the learned model's share of the fused score


@dataclass(frozen=True)
class ImageCounts:
    """Photos among the items, and how many have an image vector (only with an image model)."""

    images: int
    images_embedded: int

    @classmethod
    def read(cls, store: Store, model: str) -> ImageCounts | None:
        """None without an image model (``model`` empty)."""
        return cls(*store.count_items_with_image(IMAGE_SIGNATURE_PREFIX + model)) if model else None


AreaFigures = TopicCounts | KnowledgeCounts | RankerCounts | ImageCounts


@dataclass(frozen=True)
class Counts:
    """How much the store holds, read without loading any area (``Memory.counts``); an area this
    memory does not have is None."""

    sources: int
    items: int
    topics: TopicCounts | None = None
    knowledge: KnowledgeCounts | None = None
    ranker: RankerCounts | None = None
    images: ImageCounts | None = None

    def areas(self) -> list[AreaFigures]:
        return [a for a in (self.topics, self.knowledge, self.ranker, self.images) if a is not None]

    def totals(self) -> dict[str, int]:
        """Every count by its name (sources, items, facts, topics, …), for a header or a before/after."""
        return {k: v for k, v in self.to_dict().items() if isinstance(v, int) and not isinstance(v, bool)}

    def to_dict(self) -> dict[str, object]:
        """One flat record, as ``mnemoscope stats --json`` and the MCP server print it."""
        out: dict[str, object] = {"sources": self.sources, "items": self.items}
        for area in self.areas():
            out.update(_figures(area))
        return out


@dataclass(frozen=True)
class Stats(Counts):
    """Every figure of the store (``Memory.stats``: loads the areas): the counts, the index and
    each area's own (the tree's drift, the ranker's λ, …)."""

    store: str = ""
    terms: int = 0
    schema_version: int = 0
    embedder: str = ""
    lsa_dim: int = 0
    dense_weight: float = 0.0
    dense_calibration: Calibration | None = None
    topics: TopicStats | None = None
    ranker: RankerStats | None = None

    def to_dict(self) -> dict[str, object]:
        core = {"store": self.store, "sources": self.sources, "items": self.items, "terms": self.terms,
                "schema_version": self.schema_version, "embedder": self.embedder, "lsa_dim": self.lsa_dim,
                "dense_weight": self.dense_weight,
                "dense_calibration": asdict(self.dense_calibration) if self.dense_calibration else None}
        for area in self.areas():
            core.update(_figures(area))
        return core
