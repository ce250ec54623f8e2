"""The areas that plug into ``Memory`` (each an :class:`engine.area.Area`), in load order.

Order matters: the ranker reads the signals of the areas before it and fuses them as features in
this order (topics' ``walk``, then knowledge's ``ppr``, then images' ``image``), so its stored
model stays valid only while the order does.

A memory holds each area as its :class:`AreaPlug` until the area is first used, and only then
imports its module: the areas' modules (the topic tree, the rule extractor, the ranker) are most
of the engine's import, which opening a store and showing its counts do not need (the app's cold
start at a million items).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from .area import Area, Engine
from .records import AreaFigures, ImageCounts, KnowledgeCounts, RankerCounts, TopicCounts


@dataclass(frozen=True)
class AreaPlug:
    """An area before its first use: its name, where its class lives, its counts read from the
    store alone (what its :meth:`Area.counts` reads) and the names of the strategies it offers
    (those of its :meth:`Area.strategies`)."""

    name: str
    module: str  # relative to this package
    class_name: str
    counts: Callable[[Engine], AreaFigures | None]
    offers: Callable[[Engine], tuple[str, ...]]

    def area_class(self) -> type[Area]:
        """The area's class (its module imported now, once)."""
        return getattr(importlib.import_module(self.module, __package__), self.class_name)


AREAS = (
    AreaPlug("topics", ".topics", "TopicsArea", lambda mem: TopicCounts.read(mem.store), lambda mem: ("walk", "hybrid_walk")),
    AreaPlug("knowledge", ".knowledge.service", "KnowledgeArea", lambda mem: KnowledgeCounts.read(mem.store),
             lambda mem: ("ppr",)),
    AreaPlug("ranker", ".rank", "RankerArea", lambda mem: RankerCounts.read(mem.store), lambda mem: ("fused",)),
    AreaPlug("images", ".images", "ImagesArea", lambda mem: ImageCounts.read(mem.store, mem.settings.image_embed_model),
             lambda mem: ("image",) if mem.settings.image_embed_model else ()),
)
