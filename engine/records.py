"""The records the engine stores and reports, as plain dataclasses shared by every module."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Source:
    """A document or a conversation, identified by its name (usually a path)."""

    name: str
    kind: str  # document | conversation | note
    content_hash: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    id: int | None = None


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


@dataclass
class ParsedSource:
    """What a reader makes of a file: the source record and its items, not yet stored."""

    source: Source
    items: list[Item]


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
