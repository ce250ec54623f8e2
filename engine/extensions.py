"""The areas that plug into ``Memory`` (each an :class:`engine.area.Area`), in load order.

Order matters: the ranker reads the signals of the areas before it and fuses them as features in
this order (topics' ``walk``, then knowledge's ``ppr``, then images' ``image``), so its stored
model stays valid only while the order does.
"""

from __future__ import annotations

from typing import Callable

from .area import Area, Engine
from .images import ImagesArea
from .knowledge.service import KnowledgeArea
from .rank import RankerArea
from .topics import TopicsArea


def area_factories() -> list[Callable[[Engine], Area]]:
    return [TopicsArea, KnowledgeArea, RankerArea, ImagesArea]
