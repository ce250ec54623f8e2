"""Topics: the hierarchical topic tree, intents and the intent-steered walk (BetterMem's part).

``tree`` fits and labels the tree, ``graph`` relates its topics, ``markov`` learns topic
transitions, ``intents`` infers what the user wants, ``navigate`` walks and scores, ``service``
is the ``mem.topics`` area the app, the CLI and recall use.
"""

from .intents import INTENTS, UnknownIntent, check_intent
from .service import BuildReport, RebuildCancelled, TopicInfo, TopicsArea

__all__ = ["INTENTS", "UnknownIntent", "check_intent", "BuildReport", "RebuildCancelled", "TopicInfo", "TopicsArea"]
