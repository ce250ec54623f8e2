"""Knowledge: episodes, facts, entities and the typed graph (SEEM's part).

``extract`` reads items by rule (``temporal`` resolves their times, ``entities`` links names),
``episodes`` groups items into episodic memories, ``graph`` keeps typed edges and computes
Personalized PageRank, ``llm`` is the optional LLM extractor, ``portable`` the export format.
``service`` is the ``mem.knowledge`` area the app, the CLI and recall use, built up from
``building`` (ingest-time knowledge; ``dedup`` its fact dedup), ``reading`` (browse), ``curation``, ``transfer`` (export and
import) and ``queue`` (the LLM extraction queue).
"""

from ..errors import KnowledgeError
from .records import Entity, Episode, Event, Fact
from .service import GraphResult, KnowledgeArea

__all__ = ["Entity", "Episode", "Event", "Fact", "GraphResult", "KnowledgeError", "KnowledgeArea"]
