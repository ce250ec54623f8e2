"""The areas that plug into ``Memory`` (see :class:`engine.memory.Extension`), in load order.

Order matters: later areas may read what earlier ones built (the ranker uses graph and topic
features), so knowledge comes before topics, and both before the ranker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from .memory import Extension, Memory


def extension_factories() -> list[Callable[["Memory"], "Extension"]]:
    from .images import ImagesExtension
    from .knowledge.service import KnowledgeExtension
    from .rank import RankerExtension
    from .topics import TopicsExtension

    return [KnowledgeExtension, TopicsExtension, RankerExtension, ImagesExtension]
