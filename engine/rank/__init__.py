"""Ranking: features per candidate, the heuristic floor, the gated learned model, feedback.

``RankerExtension`` (``mem.ranker``) is the entry point; see :mod:`engine.rank.service`.
"""

from .service import FeedbackError, FeedbackResult, RankerExtension, RankerStatus

__all__ = ["FeedbackError", "FeedbackResult", "RankerExtension", "RankerStatus"]
