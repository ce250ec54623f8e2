"""Knowledge: episodes, facts, entities and the typed graph (SEEM's part).

``extract`` reads items by rule (``temporal`` resolves their times, ``entities`` links names),
``episodes`` groups items into episodic memories, ``graph`` keeps typed edges and computes
Personalized PageRank, ``llm`` is the optional LLM extractor and episode judge behind a durable
queue, ``retrieval`` is strategy ``ppr`` and the assembly by mode, and ``service`` is the
``mem.knowledge`` extension the app, the CLI and recall use.
"""

from .records import Entity, Episode, Event, Fact
from .service import GraphResult, KnowledgeError, KnowledgeArea

__all__ = ["Entity", "Episode", "Event", "Fact", "GraphResult", "KnowledgeError", "KnowledgeArea"]
